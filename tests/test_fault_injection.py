"""Fault injection: a full disk, and SIGKILL at random points of each kind of write.

Full disk: a small tmpfs is mounted (CI runs as root; elsewhere the tests skip, saying why);
saves into a database on it fail with :class:`~graphmem.errors.StorageFullError`, never a raw
driver error, keep every save acknowledged before, store nothing of the failed one, and
searches keep answering (their access counts are skipped). Once space is back, saves work.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from _workers import check_database

from graphmem import ContextualMemory, EntityMemory, LongTermMemory, SQLiteStorage
from graphmem.errors import StorageFullError
from graphmem.transfer import export_jsonl

DISK_BYTES = 2 * 1024 * 1024


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs mounted for this test."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({mounted.stderr.strip() or 'not root'})")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def _fill(disk: Path, leave: int) -> Path:
    """A file that takes all of the disk's free space but ``leave`` bytes."""
    filler = disk / "filler.bin"
    free = _free_bytes(disk)
    with filler.open("wb") as handle:
        handle.write(b"\0" * max(0, free - leave))
    return filler


def _free_bytes(disk: Path) -> int:
    stats = os.statvfs(disk)
    return stats.f_bavail * stats.f_frsize


def _contents(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [r[0] for r in conn.execute("SELECT body FROM texts ORDER BY id")]
    finally:
        conn.close()


@pytest.mark.parametrize("tier", ["long_term", "entity"])
def test_a_full_disk_fails_saves_by_name_and_keeps_what_was_acknowledged(
    small_disk: Path, tier: str
) -> None:
    path = small_disk / "full.db"
    storage = SQLiteStorage(path)
    memory = (
        LongTermMemory(storage=storage, max_items=None)
        if tier == "long_term"
        else EntityMemory(storage=storage, max_items=None)
    )
    memory.save("Alice Johnson of Acme Corp met Bob Stone in Paris.")
    filler = _fill(small_disk, leave=96 * 1024)
    acknowledged: list[str] = []
    failed_text = ""
    for n in range(2000):
        text = f"Alice Johnson met Bob Stone in Paris about order {n}. " + "Details. " * 60
        try:
            memory.save(text)
        except StorageFullError as exc:
            assert str(path) in str(exc) and "disk is full" in str(exc)
            failed_text = text
            break
        acknowledged.append(text)
    assert failed_text, "the disk never filled up"
    assert acknowledged, "no save fitted before the disk was full"
    # A search reads, and counts accesses only where there is room: it answers either way.
    assert memory.search("order", limit=3)
    storage.close()
    stored = _contents(path)
    assert all(text in stored for text in acknowledged)
    assert failed_text not in stored  # nothing half written
    filler.unlink()  # space is back: the same file takes saves again
    storage = SQLiteStorage(path)
    LongTermMemory(storage=storage, max_items=None).save("Carol Diaz freed some space.")
    storage.close()
    check_database(path)


def test_contextual_search_on_a_full_disk_still_answers(small_disk: Path) -> None:
    path = small_disk / "context.db"
    storage = SQLiteStorage(path)
    memory = ContextualMemory(long_term_storage=storage)
    for n in range(5):
        memory.save(f"Alice Johnson met Bob Stone in Paris about order {n}.")
    _fill(small_disk, leave=0)
    for _ in range(4):  # enough accesses to make items due for promotion
        assert memory.search("order Paris", limit=3)
    storage.close()


def test_a_killed_writers_partial_file_is_removed_by_the_next_export(tmp_path: Path) -> None:
    """A .partial file whose writer is gone (nothing holds its lock) goes on the next write of
    the same output; one whose writer is still at work (locked) stays."""
    out = tmp_path / "dump.jsonl"
    abandoned = tmp_path / ".dump.jsonl.k1ll3d.partial"
    abandoned.write_text('{"format": "graphmem-export"')  # half a header
    busy = tmp_path / ".dump.jsonl.busy01.partial"
    busy.write_text("")
    other = tmp_path / ".other.jsonl.k1ll3d.partial"  # another output's: not ours to remove
    other.write_text("")
    fd = os.open(busy, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        storage = SQLiteStorage(tmp_path / "src.db")
        LongTermMemory(storage=storage).save("Alice Johnson met Bob Stone in Paris.")
        export_jsonl(storage.database, out)
        storage.close()
        assert sorted(p.name for p in tmp_path.glob(".*.partial")) == [busy.name, other.name]
    finally:
        os.close(fd)
    assert out.read_text().count("\n") > 3  # the export itself is whole
