"""The bundled demo: a small consultancy's memories (``graphmem.demo_data``) in a database.

``graphmem demo`` builds it with :func:`build_demo_database` and prints what graphmem answers
about it; a program can build the same database to try the API on.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     storage, count = build_demo_database(Path(tmp) / "demo.db")
    ...     storage.close()
    >>> count > 50
    True
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import DatabaseFileError

if TYPE_CHECKING:
    from .compat.storage import SQLiteStorage

__all__ = [
    "DEMO_MARKER",
    "DEMO_TASK",
    "build_demo_database",
    "demo_records",
    "remove_database_files",
]

#: The key-value entry that marks a database as the demo's (so only it is ever replaced).
DEMO_MARKER = "graphmem.demo"
#: The task whose context the demo shows.
DEMO_TASK = "Prepare the Atlas status update for Aurex Logistics."


def demo_records() -> list[dict[str, Any]]:
    """The demo corpus as ``save`` records (see :func:`graphmem.records.read_records`)."""
    from .records import records_from_text

    corpus = files("graphmem.demo_data").joinpath("team_memories.jsonl")
    return records_from_text(corpus.read_text(encoding="utf-8"), "jsonl", "team_memories.jsonl")


def build_demo_database(db: Path, *, progress: bool = False) -> tuple[SQLiteStorage, int]:
    """Create the demo database at ``db`` (replacing an earlier demo database there, never
    another file) and ingest the demo corpus into it; returns the open storage and how many
    memories it holds."""
    from .compat.storage import SQLiteStorage
    from .records import ingest_records

    replace_demo_database(db)
    records = demo_records()
    storage = SQLiteStorage(db)
    try:
        storage.save(DEMO_MARKER, {"created_by": "graphmem demo"})
        ingest_records(storage, records, progress=progress)
    except BaseException:
        storage.close()
        raise
    return storage, len(records)


def replace_demo_database(db: Path) -> None:
    """Remove the database at ``db`` if the demo made it; refuse any other file."""
    if not db.exists():
        return
    from .compat.storage import SQLiteStorage

    try:
        storage = SQLiteStorage(db)
    except DatabaseFileError as exc:
        raise DatabaseFileError(f"refusing to replace it: {exc}") from None
    try:
        marked = storage.load(DEMO_MARKER) is not None
    finally:
        storage.close()
    if not marked:
        raise DatabaseFileError(
            f"{db}: refusing to replace a database that `graphmem demo` did not create"
        )
    remove_database_files(db)


def remove_database_files(path: Path) -> None:
    """Delete an SQLite database file and its journal files."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
