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
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import InvalidArgumentTypeError
from ..index._shared import GraphCache, check_graph_cache
from ..index.reanalysis import check_store
from ..store import DriverError as DriverError  # the driver's own errors, for callers
from ..store import dump, kv_rows, schema
from ..store.database import Database
from ..store.memory_rows import SQL_FILTER_COLUMNS
from .work import Work

if TYPE_CHECKING:
    from ..index.entity_index import EntityIndex
    from ..index.writer import Writer

__all__ = ["GraphCache", "MemorySpace", "StoredCounts", "Work", "split_filters"]


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
        self._graph_cache = check_graph_cache(graph_cache)
        self.db_path = os.fspath(db_path) if db_path is not None else None
        self.database = Database(db_path)
        self._entity_index: EntityIndex | None = None
        self._writer: Writer | None = None
        self._building = threading.Lock()
        # A store analysed by other rules (or whose re-analysis was cut short) says so.
        check_store(self.database)

    @property
    def entity_index(self) -> EntityIndex:
        """The entity index, made on first use: a memory that saves, asks the graph or
        searches by entity loads the extraction code then, one that only opens, counts or
        reads rows never (``tests/test_startup.py``)."""
        index = self._entity_index
        if index is None:
            with self._building:
                if self._entity_index is None:
                    from ..index.entity_index import EntityIndex

                    self._entity_index = EntityIndex(self.database, graph_cache=self._graph_cache)
                index = self._entity_index
        return index

    @property
    def writer(self) -> Writer:
        """The write path of every save (made on first use, with the entity index)."""
        writer = self._writer
        if writer is None:
            index = self.entity_index
            with self._building:
                if self._writer is None:
                    from ..index.writer import Writer

                    self._writer = Writer(self.database, index)
                writer = self._writer
        return writer

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
                tables["kv"] = int(kv_rows.kv_get(conn, kv_key) is not None)
        return StoredCounts(tables, tiers, tenants)

    def graph_counts(self, tenant: str) -> dict[str, Any]:
        """``tenant``'s entities and relations counted in SQL (no graph view is loaded):
        :meth:`graphmem.index.sql_graph.SQLGraph.counts`."""
        from ..index.sql_graph import SQLGraph

        return SQLGraph(self.database, tenant).counts()

    # ------------------------------------------------------------------ units of work
    @contextmanager
    def transaction(self, durable: bool = True) -> Iterator[Work]:
        """One write transaction (nested blocks join the outer one), as a unit of work: the
        operations the tiers and the facade need (:class:`~graphmem.space.work.Work`).
        ``durable=False``: bookkeeping that need not reach the disk at once (access counts).
        """
        with self.database.write(durable=durable) as conn:
            yield Work(self, conn)

    @contextmanager
    def reading(self) -> Iterator[Work]:
        """One read transaction (one snapshot; writers of this process wait for it to end
        before changing the graph views), as a unit of work."""
        with self.database.read() as conn:
            yield Work(self, conn)

    def record_access(self, seqs: Sequence[int], when: datetime) -> bool:
        """Count an access of the items ``seqs`` in a transaction of its own; False when the
        disk is full (the access goes uncounted)."""
        return self.database.record_access(seqs, when)
