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

from .errors import InvalidArgumentTypeError
from .index.entity_index import EntityIndex, GraphCache
from .index.reanalysis import check_store
from .index.writer import Writer
from .store import DriverError as DriverError  # the driver's own errors, for callers
from .store.database import Database

__all__ = ["GraphCache", "MemorySpace"]


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

    def describe(self) -> str:
        """Where the data lives, for messages."""
        return self.database.describe()

    def close(self) -> None:
        """Release the database connections."""
        self.database.close()
