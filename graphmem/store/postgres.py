"""The PostgreSQL dialect's old home: everything moved to :mod:`graphmem.store.dialects.postgresql`.

Example:
    >>> from graphmem.store.postgres import temporary_schema  # still importable here
"""

from .dialects.postgresql import (
    DEDUPE_LOCK_KEY,
    FTS_CONFIG,
    INIT_LOCK_KEY,
    create_extras,
    lock_dedupe_keys,
    lock_schema,
    search_statement,
    temporary_schema,
    tsquery_terms,
)

__all__ = [
    "FTS_CONFIG",
    "DEDUPE_LOCK_KEY",
    "INIT_LOCK_KEY",
    "create_extras",
    "lock_dedupe_keys",
    "lock_schema",
    "search_statement",
    "temporary_schema",
    "tsquery_terms",
]
