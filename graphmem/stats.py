"""What a graphmem database holds, of one user: memories per tier, the graph, row counts.

``graphmem stats`` prints it; anything else that reports on a database (an MCP tool, a
dashboard) calls the same :func:`stats`.

Example:
    >>> from graphmem import EntityMemory
    >>> memory = EntityMemory()
    >>> _ = memory.save("Ada Lovelace works at Analytical Engines Ltd in London.")
    >>> found = stats(memory.space)
    >>> found["memories_by_tier"], found["graph"]["entities"]
    ({'entity': 1}, 3)
"""

from __future__ import annotations

from typing import Any

from .space import MemorySpace

__all__ = ["stats"]


def stats(space: MemorySpace, user: str | None = None) -> dict[str, Any]:
    """The counts of ``user``'s memories (None or ``""``: the shared ones, saved without a
    user), and the users the database holds.

    Returns:
        ``schema_version``; ``user``; ``users`` (the named ones); ``memories_by_tier``;
        ``rows``: the user's rows by table (entities, aliases, mentions, relations,
        relation_evidence, merges; ``kv``: every key-value row, or with a user only the
        user's preferences); ``graph``: ``entities``, ``relations``, ``entities_by_label``
        and ``relations_by_predicate`` (the most first).
    """
    tenant = user or ""
    key = None
    if tenant:  # of the file's key-value rows, only the user's preferences are theirs
        from .memories.user import preferences_key  # the tiers are not loaded otherwise

        key = preferences_key(tenant)
    counts = space.stored_counts(tenant, key)
    return {
        "schema_version": space.schema_version,
        "user": tenant,
        "users": [u for u in counts.tenants if u],
        "memories_by_tier": counts.tiers,
        "rows": {k: v for k, v in counts.tables.items() if k != "graphmem_meta"},
        "graph": {"user": tenant, **space.graph_counts(tenant)},
    }
