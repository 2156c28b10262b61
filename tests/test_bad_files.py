"""Opening a file graphmem must not use: a clear error naming the file, and the file untouched.

Random bytes, a truncated graphmem database, another application's SQLite database, a graphmem
database from a newer release and a directory are each refused with
:class:`~graphmem.errors.DatabaseFileError` whose message names the path and the reason;
the file's bytes and modification time are unchanged and no sidecar file is left behind.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from graphmem import CortexMemory, LongTermMemory, SQLiteStorage
from graphmem.errors import DatabaseFileError, SchemaVersionError
from graphmem.store.database import Database
from graphmem.store.engine import SQLITE_MODULE as sqlite3  # the SQLite graphmem runs on
from graphmem.store.schema import APPLICATION_ID, SCHEMA_VERSION


def _graphmem_file(path: Path, memories: int = 8) -> Path:
    storage = SQLiteStorage(path)
    memory = LongTermMemory(storage=storage, max_items=None)
    memory.save_many(
        [
            {"content": f"Alice Johnson met Bob Stone in Paris, note {i}. " * 5}
            for i in range(memories)
        ]
    )
    storage.close()
    assert not Path(f"{path}-wal").exists()  # closing checkpointed the WAL into the file
    return path


def random_bytes(tmp: Path) -> Path:
    path = tmp / "random.db"
    path.write_bytes(random.Random(1).randbytes(64 * 1024))
    return path


def truncated_graphmem(tmp: Path) -> Path:
    path = _graphmem_file(tmp / "truncated.db")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    return path


def header_only(tmp: Path) -> Path:
    path = _graphmem_file(tmp / "header.db")
    path.write_bytes(path.read_bytes()[:100])
    return path


def foreign_sqlite(tmp: Path) -> Path:
    path = tmp / "other-app.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.execute("INSERT INTO invoices (total) VALUES (9.5)")
    conn.commit()
    conn.close()
    return path


def foreign_with_our_table_names(tmp: Path) -> Path:
    """Another application that happens to have a ``memories`` table."""
    path = tmp / "lookalike.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE memories (id INTEGER PRIMARY KEY, text TEXT)")
    conn.execute("CREATE TABLE graphmem_meta (key TEXT, value TEXT)")
    conn.commit()
    conn.close()
    return path


def newer_schema(tmp: Path) -> Path:
    path = _graphmem_file(tmp / "newer.db", memories=3)
    conn = sqlite3.connect(path)
    conn.execute(
        "UPDATE graphmem_meta SET value = ? WHERE key = 'schema_version'",
        (str(SCHEMA_VERSION + 1),),
    )
    conn.commit()
    conn.execute("PRAGMA journal_mode = DELETE")  # no sidecar files for the snapshot below
    conn.close()
    return path


def cut_inside_last_page(tmp: Path) -> Path:
    path = _graphmem_file(tmp / "cut.db")
    path.write_bytes(path.read_bytes()[:-100])
    return path


def damaged_table_page(tmp: Path) -> Path:
    """A whole file whose ``texts`` table's first page is overwritten with noise."""
    path = _graphmem_file(tmp / "noise.db")
    conn = sqlite3.connect(path)
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'texts'").fetchone()
    (page_size,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    data = bytearray(path.read_bytes())
    start = (root - 1) * page_size
    data[start : start + page_size] = random.Random(2).randbytes(page_size)
    path.write_bytes(bytes(data))
    return path


def unreadable_schema_version(tmp: Path) -> Path:
    path = newer_schema(tmp)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE graphmem_meta SET value = '2.0' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    return path


BAD_FILES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "random bytes": (random_bytes, "not a SQLite database"),
    "truncated graphmem file": (truncated_graphmem, "damaged"),
    "header only": (header_only, "damaged"),
    "another application's database": (foreign_sqlite, "another application"),
    "look-alike tables": (foreign_with_our_table_names, "another application"),
    "newer schema version": (newer_schema, "newer graphmem"),
    "cut inside its last page": (cut_inside_last_page, "truncated"),
    "a table page overwritten": (damaged_table_page, "damaged"),
    "schema version '2.0'": (unreadable_schema_version, "schema_version '2.0'"),
}


def _snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in directory.iterdir() if p.is_file()
    }


#: Every way of naming a database file: each gets the same checks (issue 19.2).
OPENERS: dict[str, Callable[[Path], object]] = {
    "SQLiteStorage(Path)": SQLiteStorage,
    "SQLiteStorage(str)": lambda p: SQLiteStorage(str(p)),
    "SQLiteStorage(sqlite:/// URL)": lambda p: SQLiteStorage(f"sqlite:///{p}"),
    "SQLiteStorage(sqlite+pysqlite:/// URL)": lambda p: SQLiteStorage(f"sqlite+pysqlite:///{p}"),
    "Database(Path)": Database,
    "LongTermMemory(db_path=...)": lambda p: LongTermMemory(db_path=str(p)),
    "CortexMemory(persistence_path=...)": lambda p: CortexMemory(persistence_path=str(p)),
    "CortexMemory(persistence_path=URL)": lambda p: CortexMemory(persistence_path=f"sqlite:///{p}"),
}


@pytest.mark.parametrize("opener", list(OPENERS))
@pytest.mark.parametrize("case", list(BAD_FILES))
def test_bad_file_is_refused_and_left_unmodified(tmp_path, monkeypatch, case, opener):
    monkeypatch.setenv("WRITE_MEMORY", "1")
    make, reason = BAD_FILES[case]
    work = tmp_path / "files"
    work.mkdir()
    path = make(work)
    before = _snapshot(work)
    with pytest.raises(DatabaseFileError) as raised:
        OPENERS[opener](path)
    message = str(raised.value)
    assert str(path) in message
    assert reason in message
    assert _snapshot(work) == before  # same files, same bytes, same mtimes


def test_newer_schema_is_a_schema_version_error_naming_both_versions(tmp_path):
    path = newer_schema(tmp_path)
    with pytest.raises(SchemaVersionError, match=f"schema {SCHEMA_VERSION + 1}") as raised:
        SQLiteStorage(path)
    assert f"schema {SCHEMA_VERSION} and older" in str(raised.value)


def test_a_directory_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("WRITE_MEMORY", "1")
    folder = tmp_path / "not-a-file"
    folder.mkdir()
    (folder / "keep.txt").write_text("x")
    before = sorted(os.listdir(folder))
    for open_ in OPENERS.values():
        with pytest.raises(DatabaseFileError, match="is a directory") as raised:
            open_(folder)
        assert str(folder) in str(raised.value)
    assert sorted(os.listdir(folder)) == before


def test_an_empty_directory_is_refused(tmp_path):
    folder = tmp_path / "empty-dir"
    folder.mkdir()
    with pytest.raises(DatabaseFileError, match="is a directory"):
        SQLiteStorage(folder)
    assert list(folder.iterdir()) == []


def test_schema_version_and_application_id_are_recorded(tmp_path):
    path = tmp_path / "new.db"
    SQLiteStorage(path).close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        version = conn.execute(
            "SELECT value FROM graphmem_meta WHERE key = 'schema_version'"
        ).fetchone()
    finally:
        conn.close()
    assert version == (str(SCHEMA_VERSION),)


def test_empty_file_and_empty_sqlite_file_become_graphmem_databases(tmp_path):
    empty = tmp_path / "empty.db"
    empty.touch()
    blank = tmp_path / "blank.db"
    sqlite3.connect(blank).close()
    for path in (empty, blank):
        storage = SQLiteStorage(path)
        LongTermMemory(storage=storage).save("Alice Johnson met Bob Stone.")
        storage.close()
        assert len(LongTermMemory(db_path=str(path))) == 1


def test_a_good_file_still_opens_after_a_refusal(tmp_path):
    """Refusing a file must not leave the good one next to it, or graphmem, broken."""
    good = _graphmem_file(tmp_path / "good.db", memories=3)
    with pytest.raises(DatabaseFileError):
        SQLiteStorage(foreign_sqlite(tmp_path))
    assert len(LongTermMemory(db_path=str(good), max_items=None)) == 3


def test_a_file_cut_at_any_page_boundary_is_refused_and_never_written(tmp_path, monkeypatch):
    """Issue 19.3: every cut of a small store at a page boundary (1 .. n-1 pages kept)."""
    monkeypatch.setenv("WRITE_MEMORY", "1")
    whole = _graphmem_file(tmp_path / "whole.db", memories=12)
    data = whole.read_bytes()
    (page_size,) = sqlite3.connect(whole).execute("PRAGMA page_size").fetchone()
    pages = len(data) // page_size
    assert pages >= 10 and len(data) == pages * page_size
    work = tmp_path / "cuts"
    work.mkdir()
    for kept in range(1, pages):
        path = work / f"cut-{kept}.db"
        path.write_bytes(data[: kept * page_size])
        before = _snapshot(work)
        with pytest.raises(DatabaseFileError, match="damaged") as raised:
            CortexMemory(persistence_path=str(path))
        assert str(path) in str(raised.value)
        assert _snapshot(work) == before, f"cut at page {kept}: the file changed"
        path.unlink()


def test_a_sound_file_passes_the_open_checks_after_many_writes(tmp_path):
    """The checks refuse damage only: a store written, reopened and written again opens."""
    path = _graphmem_file(tmp_path / "sound.db", memories=30)
    for _ in range(3):
        storage = SQLiteStorage(path)
        LongTermMemory(storage=storage, max_items=None).save("Carol Diaz reopened it in Oslo.")
        storage.close()
    assert len(LongTermMemory(db_path=str(path), max_items=None)) == 33
