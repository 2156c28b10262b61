"""Which database a ``graphmem`` command opens, and the memories and graph it reads there.

Example:
    >>> default_db_path().name
    'graphmem.db'
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DatabaseFileError, EntityNotFound

if TYPE_CHECKING:
    from ..compat.storage import SQLiteStorage
    from ..cortex import CortexMemory
    from ..graph.knowledge_graph import KnowledgeGraph
    from ..memories import EntityMemory, LongTermMemory

__all__ = [
    "check_not_a_directory",
    "db_path",
    "default_db_path",
    "entity_memory",
    "long_term",
    "open_database",
    "open_existing",
    "persistent_cortex",
    "require_entity",
    "scope",
]


def default_db_path() -> Path:
    """``$GRAPHMEM_DB``, else ``graphmem.db`` in the user's data directory.

    The data directory is ``$XDG_DATA_HOME/graphmem`` or ``~/.local/share/graphmem``.

    Example:
        >>> default_db_path().name
        'graphmem.db'
    """
    explicit = os.environ.get("GRAPHMEM_DB")
    if explicit:
        return Path(explicit).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home).expanduser() / "graphmem" / "graphmem.db"


def db_path(args: argparse.Namespace) -> Path:
    """The database of a command: ``--db``, else :func:`default_db_path`."""
    given = getattr(args, "db", None)
    return Path(given).expanduser() if given else default_db_path()


def open_existing(args: argparse.Namespace) -> SQLiteStorage:
    """The database of a reading command; it must exist (no empty file appears by mistake)."""
    path = db_path(args)
    if not path.exists():
        raise DatabaseFileError(
            f"{path}: no such database (create one with `graphmem ingest FILE`, "
            "or pass --db PATH / set GRAPHMEM_DB)"
        )
    return open_database(path)


def open_database(path: Path) -> SQLiteStorage:
    """The database at ``path``, created when missing."""
    from ..compat.storage import SQLiteStorage

    check_not_a_directory(path)
    return SQLiteStorage(path)


def check_not_a_directory(path: Path) -> None:
    """Refuse a directory given as the database (before anything is loaded to open it)."""
    if path.is_dir():
        raise DatabaseFileError(f"{path}: is a directory, not a database file")


def scope(args: argparse.Namespace) -> str:
    """The tenant a command reads: ``--user``, else the shared memories (``""``), so that
    every command sees the same memories and graph (docs/cli.md, "Tenant scope")."""
    return str(getattr(args, "user", None) or "")


def entity_memory(storage: SQLiteStorage, user: str | None) -> EntityMemory:
    """The entity tier of ``user`` (None: the shared memories), without a capacity."""
    from ..memories import EntityMemory

    return EntityMemory(storage=storage, max_items=None, tenant=user)


def long_term(storage: SQLiteStorage, user: str | None) -> LongTermMemory:
    """The long-term tier of ``user`` (None: the shared memories), without a capacity."""
    from ..memories import LongTermMemory

    return LongTermMemory(storage=storage, max_items=None, tenant=user)


@contextmanager
def persistent_cortex(path: Path, user_id: str | None = None) -> Iterator[CortexMemory]:
    """A ``CortexMemory`` over the file (it persists only when ``WRITE_MEMORY=1``), of
    ``user_id`` when given (``""``: the shared memories)."""
    from ..cortex import CortexMemory

    previous = os.environ.get("WRITE_MEMORY")
    os.environ["WRITE_MEMORY"] = "1"
    try:
        cortex = CortexMemory(persistence_path=str(path), long_term_capacity=10**9, user_id=user_id)
    finally:
        if previous is None:
            del os.environ["WRITE_MEMORY"]
        else:
            os.environ["WRITE_MEMORY"] = previous
    try:
        yield cortex
    finally:
        if cortex.storage is not None:
            cortex.storage.close()


def require_entity(kg: KnowledgeGraph, name: str) -> Any:
    """The entity ``name`` resolves to; an unknown one is an error naming the likely ones."""
    info = kg.get_entity(name)
    if info is None:
        hint = _suggest(kg, name)
        raise EntityNotFound(
            f"unknown entity {name!r}" + (f" (did you mean {hint}?)" if hint else "")
        )
    return info


def _suggest(kg: KnowledgeGraph, name: str) -> str:
    from rapidfuzz import process

    names = [str(d["name"]) for _, d in kg.graph.nodes(data=True)]
    found = process.extract(name, names, limit=3, score_cutoff=70)
    return ", ".join(repr(m[0]) for m in found)
