"""What differs between database backends, behind one :class:`Dialect` protocol.

Every backend runs the same SQLAlchemy schema (:mod:`graphmem.store.schema`); a dialect holds
only what the backend does its own way: the start-up lock, the full-text index, id sequences,
durability, read isolation and scrubbing forgotten text. :class:`~graphmem.store.Database`
picks one when it opens (:func:`dialect_for`); functions that only have a connection look it
up with :func:`dialect_of`. Adding a backend is one module here, named as SQLAlchemy names
the dialect and holding its ``DIALECT``, plus its engine set-up in :mod:`graphmem.store.engine`.

Example:
    >>> from graphmem.store import Database
    >>> db = Database()
    >>> db.dialect.name
    'sqlite'
    >>> with db.read() as conn:
    ...     dialect_of(conn) is db.dialect
    True
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from functools import cache
from typing import Any, Protocol

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

__all__ = ["Dialect", "dialect_for", "dialect_of"]


class Dialect(Protocol):
    """The backend-specific part of graphmem's SQL (one stateless object per backend)."""

    #: SQLAlchemy's dialect name (``engine.dialect.name``).
    name: str
    #: Statements that drop schema 1's memory tables (and their full-text index).
    drop_v1_tables: Sequence[str]
    #: Whether tables made before schema 4 must be rebuilt so that ids are never reused
    #: (SQLite's ``AUTOINCREMENT``; a server's sequences never reuse ids).
    rebuilds_pre_v4_ids: bool
    #: The statement that makes the planner's statistics of the graphmem tables again after
    #: a bulk load (None: the backend keeps none).
    analyze_statement: str | None

    def lock_schema(self, conn: Connection) -> None:
        """Serialise creating or checking the schema between processes (until commit)."""

    def lock_dedupe_keys(self, conn: Connection) -> None:
        """Serialise the writers that check and store dedupe keys (until commit)."""

    def create_extras(self, conn: Connection, *, rebuild: bool) -> None:
        """Create what the shared schema lacks (the full-text index); ``rebuild``: the texts
        were copied in before the index existed (a schema upgrade)."""

    def search(
        self,
        conn: Connection,
        query: str,
        namespaces: Sequence[str],
        tenant: str | None,
        sql_filters: Mapping[str, Any] | None,
        limit: int,
        heads: bool,
    ) -> list[tuple[int, float]]:
        """Full-text hits ``(seq, score)``, best first (:func:`graphmem.store.text_rows.search_text`)."""
        ...

    def next_relation_id(self, conn: Connection) -> int:
        """One past the largest relation id ever given out (ids are never reused)."""
        ...

    def after_insert_relations(self, conn: Connection, largest_id: int) -> None:
        """Relations were inserted under ids of their own, up to ``largest_id``."""

    def reset_sequence(self, conn: Connection, table: str, column: str, largest: int) -> None:
        """Move the id sequence of ``table.column`` past ``largest`` (never back)."""

    def write_transaction(self, conn: Connection, *, durable: bool) -> AbstractContextManager[None]:
        """Begin, and on exit commit (or roll back), a write transaction on ``conn``;
        ``durable=False``: its commit may be lost to a power cut, never to a crash."""
        ...

    def read_isolation(self, conn: Connection) -> Connection:
        """``conn`` set up so that one read transaction sees one snapshot."""
        ...

    def scrub_before_commit(self, conn: Connection) -> None:
        """Texts were deleted or rewritten in this transaction: drop their words from the
        full-text index's storage before it commits."""

    def scrub_after_commit(self, engine: Engine) -> None:
        """After such a commit: drop older page images that still hold those words."""

    def is_damaged_index(self, exc: DBAPIError) -> bool:
        """Whether a statement failed because the full-text index is damaged."""
        ...

    def heal_index(self, conn: Connection, why: str) -> None:
        """Rebuild a damaged full-text index from the stored texts, with a warning."""


@cache
def dialect_for(name: str) -> Dialect:
    """The :class:`Dialect` of a SQLAlchemy dialect name: the ``DIALECT`` of this package's
    module of that name (imported on first use).

    Raises:
        NotImplementedError: graphmem has no dialect of that name.
    """
    module_name = f"{__name__}.{name}"
    try:
        module = importlib.import_module(module_name) if name.isidentifier() else None
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise  # the module exists but needs something missing
        module = None
    if module is None:
        raise NotImplementedError(f"graphmem does not support {name} databases")
    dialect: Dialect = module.DIALECT
    return dialect


def dialect_of(conn: Connection) -> Dialect:
    """The :class:`Dialect` of the database ``conn`` is connected to."""
    return dialect_for(conn.dialect.name)
