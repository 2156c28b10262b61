"""A memory space: one database, its entity index and graph views, and the write path.

Every tier and the facade work on a :class:`MemorySpace`; Calute's storage classes
(:mod:`graphmem.compat.storage`) are thin over it (``SQLiteStorage`` is a memory space with
Calute's key-value methods).

Example:
    >>> space = MemorySpace()                # in memory
    >>> space.describe()
    'in-memory database'
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidArgumentTypeError
from ..index.entity_index import EntityIndex, GraphCache
from ..index.reanalysis import check_store
from ..index.writer import Writer
from ..store import DriverError as DriverError  # the driver's own errors, for callers
from ..store import dump, graph_rows, schema
from ..store.database import SQL_FILTER_COLUMNS, Database, TextAnalysis

if TYPE_CHECKING:
    from ..items import MemoryItem
    from ..store import Connection, MemoryRow
    from ..store.graph_rows import RelationRow

__all__ = ["GraphCache", "MemorySpace", "StoredCounts", "split_filters"]


@dataclass(frozen=True)
class StoredCounts:
    """Row counts of a database (see :meth:`MemorySpace.stored_counts`)."""

    #: table -> rows (the graph's and the merge log's of one tenant).
    tables: dict[str, int]
    #: namespace (tier) -> the tenant's memories.
    tiers: dict[str, int]
    #: the tenants that own memories (``""``, the shared one, included when it does).
    tenants: list[str]


def split_filters(filters: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split filters into those SQL can apply (column == plain value) and the rest.

    Example:
        >>> split_filters({"agent_id": "qa", "importance": lambda v: v > 0.5})[0]
        {'agent_id': 'qa'}
    """
    sql: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for key, value in (filters or {}).items():
        if key in SQL_FILTER_COLUMNS and (value is None or isinstance(value, str)):
            sql[key] = value
        else:
            rest[key] = value
    return sql, rest


class MemorySpace:
    """One database (a SQLite file, a SQLAlchemy URL such as
    ``postgresql+psycopg://user@host/db``, or ``None`` for memory), with its entity index and
    writer.

    Args:
        db_path: where the data lives.
        graph_cache: where relationship queries run: ``"memory"`` (the NetworkX view),
            ``"sql"`` (recursive SQL, nothing held) or ``"auto"`` (SQL for large tenants).
    """

    def __init__(
        self, db_path: str | os.PathLike[str] | None = None, *, graph_cache: GraphCache = "memory"
    ) -> None:
        if db_path is not None and not isinstance(db_path, str | os.PathLike):
            raise InvalidArgumentTypeError(
                f"db_path must be a str or path, got {type(db_path).__name__}"
            )
        self.db_path = os.fspath(db_path) if db_path is not None else None
        self.database = Database(db_path)
        self.entity_index = EntityIndex(self.database, graph_cache=graph_cache)
        self.writer = Writer(self.database, self.entity_index)
        # A store analysed by other rules (or whose re-analysis was cut short) says so.
        check_store(self.database)

    #: The schema version this library writes (``graphmem stats`` reports it).
    schema_version = schema.SCHEMA_VERSION

    def describe(self) -> str:
        """Where the data lives, for messages."""
        return self.database.describe()

    def close(self) -> None:
        """Release the database connections."""
        self.database.close()

    def stored_counts(self, tenant: str, kv_key: str | None = None) -> StoredCounts:
        """What the database holds, in one read: rows by table (of ``tenant`` for its graph
        and merge log; with ``kv_key``, the ``kv`` count is whether that key is stored),
        ``tenant``'s memories by tier, and every tenant that owns memories."""
        with self.database.read() as conn:
            tables = {**dump.table_counts(conn), **dump.tenant_counts(conn, tenant)}
            tiers = dump.namespace_counts(conn, tenant)
            tenants = dump.tenant_names(conn)
            if kv_key is not None:
                tables["kv"] = int(self.database.kv_get(conn, kv_key) is not None)
        return StoredCounts(tables, tiers, tenants)

    # ------------------------------------------------------------------ for the tiers
    # The statements the tiers and the facade need beyond the database and the index, so
    # that they import neither store/ nor extract/ (the contracts in pyproject.toml).
    def replace_text(
        self, conn: Connection, row: MemoryRow, item: MemoryItem, *, index: bool, relations: bool
    ) -> MemoryRow:
        """Give ``row``'s item the changed text of ``item``: stored and indexed again (with
        typed relations when ``relations``; not at all unless ``index``), its analysis
        recorded for ``reanalyse``; returns the item's new row."""
        new_row = self.entity_index.replace_text(conn, row, item, index=index, relations=relations)
        analysis = TextAnalysis(relations) if index else None
        self.database.record_analysis(conn, new_row.text_id, analysis)
        return new_row

    def forget_graph(self, conn: Connection, tenant: str) -> None:
        """Delete ``tenant``'s whole graph (hand-added relations and the merge log included)
        and its cached views."""
        graph_rows.delete_tenant_graph(conn, tenant)
        self.entity_index.forget(conn, {tenant})

    def tier_entity_mentions(
        self,
        conn: Connection,
        namespace: str,
        graph_tenant: str,
        tenant: str | None = None,
        key: str | None = None,
    ) -> list[tuple[str, str, str, str, int]]:
        """See :func:`graphmem.store.graph_rows.tier_entity_mentions`."""
        return graph_rows.tier_entity_mentions(conn, namespace, graph_tenant, tenant, key)

    def typed_relations_of(
        self, conn: Connection, entity_ids: Sequence[int], per_entity: int
    ) -> list[tuple[int, RelationRow]]:
        """See :func:`graphmem.store.graph_rows.typed_relations_of`."""
        return graph_rows.typed_relations_of(conn, entity_ids, per_entity)

    def delete_relations(
        self,
        conn: Connection,
        tenant: str,
        triples: Sequence[tuple[int, str, int]],
        *,
        by_hand_only: bool = False,
    ) -> int:
        """See :func:`graphmem.store.graph_rows.delete_relations`."""
        return graph_rows.delete_relations(conn, tenant, triples, by_hand_only=by_hand_only)
