"""Fault injection: a full disk, and SIGKILL at random points of each kind of write.

SIGKILL of saves is tests/test_crash.py; here, of ingest, merge/unmerge, import and export
(20 trials each).

Full disk: a small tmpfs is mounted (CI runs as root; elsewhere the tests skip, saying why);
saves into a database on it fail with :class:`~graphmem.errors.StorageFullError`, never a raw
driver error, keep every save acknowledged before, store nothing of the failed one, and
searches keep answering (their access counts are skipped). Once space is back, saves work.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _workers import Zygote, check_database, pending_merges

from graphmem import ContextualMemory, EntityMemory, LongTermMemory, SQLiteStorage
from graphmem.errors import StorageFullError
from graphmem.store import dump
from graphmem.store.engine import SQLITE_MODULE as sqlite3  # the SQLite graphmem runs on
from graphmem.transfer import export_jsonl

DISK_BYTES = 4 * 1024 * 1024


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs mounted for this test."""
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
    filler = _fill(small_disk, leave=384 * 1024)
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


# ---------------------------------------------------------------------- SIGKILL
# Each trial forks a child from a warm zygote (tests/_workers.py), kills it with SIGKILL at a
# random moment, then checks the files it was writing: integrity, support counting and graph
# == tables (check_database), every acknowledged write there, no half record, and no
# temporary file left once the next writer ran.
TRIALS = 20


@pytest.fixture(scope="module")
def zygote() -> Iterator[Zygote]:
    with Zygote.started() as zygote:
        yield zygote


def _rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _leftovers(folder: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


@pytest.mark.slow
def test_sigkill_during_ingest_loses_no_acknowledged_record_and_halves_none(
    tmp_path: Path, zygote: Zygote
) -> None:
    path = tmp_path / "ingest.db"
    rng = random.Random(19)
    acknowledged: set[str] = set()
    killed = 0
    for trial in range(TRIALS):
        run = zygote.trial("ingest", path, trial, 400, rng.uniform(0.3, 1.5))
        acknowledged.update(run.said("S"))
        killed += run.killed
        check_database(path)
        shown = _rows(
            path,
            "SELECT t.body, group_concat(m.namespace) FROM texts t "
            "JOIN memories m ON m.text_id = t.id GROUP BY t.id",
        )
        tiers = {body: sorted(namespaces.split(",")) for body, namespaces in shown}
        assert acknowledged <= set(tiers), f"trial {trial}: acknowledged records lost"
        half = [b for b, t in tiers.items() if t != ["entity", "long_term"]]
        assert not half, f"trial {trial}: records in one tier only: {half[:3]}"
        assert len(tiers) == len(shown), f"trial {trial}: a record stored twice"
        assert _leftovers(tmp_path, {path.name}) == []
    assert killed >= TRIALS * 3 // 4, f"only {killed} of {TRIALS} ingests were killed mid-run"
    assert len(acknowledged) >= 40
    print(f"ingest: {TRIALS} trials, {killed} killed, {len(acknowledged)} records acknowledged")


@pytest.mark.slow
def test_sigkill_during_merges_and_unmerges_leaves_each_whole(
    tmp_path: Path, zygote: Zygote
) -> None:
    path = tmp_path / "merge.db"
    rng = random.Random(23)
    merged = undone = killed = 0
    for trial in range(TRIALS):
        run = zygote.trial("merge", path, trial, 100_000, rng.uniform(0.2, 1.2))
        killed += run.killed
        events = [line.split() for line in run.lines if line[:1] in ("m", "u", "U")]
        merged += sum(kind == "m" for kind, _ in events)
        undone += sum(kind == "U" for kind, _ in events)
        check_database(path)
        pending = pending_merges(path)
        assert len(pending) <= 1, f"trial {trial}: merges {pending} all in place"
        if events:
            kind, merge_id = events[-1][0], int(events[-1][1])
            if kind == "m":  # merged, no unmerge began
                assert pending == [merge_id], trial
            elif kind == "u":  # killed while undoing: either is right, but whole
                assert pending in ([merge_id], []), trial
            else:  # undone; a later merge may or may not have committed
                assert merge_id not in pending, trial
        robert = _rows(path, "SELECT count(*) FROM entities WHERE key = 'robert stone'")[0][0]
        assert robert == (0 if pending else 1), f"trial {trial}: merge {pending} half undone"
        assert _leftovers(tmp_path, {path.name}) == []
    assert killed >= TRIALS * 3 // 4
    assert merged >= 20 and undone >= 20, (merged, undone)
    print(f"merge: {TRIALS} trials, {killed} killed, {merged} merges, {undone} unmerges")


@pytest.fixture(scope="module")
def source_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A store of 200 memories in two tiers and its export."""
    folder = tmp_path_factory.mktemp("source")
    path = folder / "source.db"
    storage = SQLiteStorage(path)
    LongTermMemory(storage=storage, max_items=None).save_many(
        [{"content": f"Alice Johnson met Bob Stone in Paris about order {n}."} for n in range(100)]
    )
    EntityMemory(storage=storage, max_items=None).save_many(
        [{"content": f"Carol Diaz of Globex flew to Oslo for audit {n}."} for n in range(100)]
    )
    export_jsonl(storage.database, folder / "source.jsonl")
    storage.close()
    return path, folder / "source.jsonl"


def _table_counts(path: Path) -> dict[str, int]:
    storage = SQLiteStorage(path)
    try:
        with storage.database.read() as conn:
            counts = dump.table_counts(conn)
    finally:
        storage.close()
    del counts["graphmem_meta"]  # the file's own keys (graph generation), not content
    return counts


@pytest.mark.slow
def test_sigkill_during_import_leaves_nothing_or_everything(
    tmp_path: Path, zygote: Zygote, source_store: tuple[Path, Path]
) -> None:
    source_db, export = source_store
    whole = _table_counts(source_db)
    rng = random.Random(29)
    # Kills are drawn over twice an import's time on this machine (opening the new file
    # included), so that about as many land before its commit as after, however fast it is:
    # the time of a whole import by a child like the trials' own.
    timed = tmp_path / "timed" / "imported.db"
    timed.parent.mkdir()
    shutil.copy(export, f"{timed}.source.jsonl")
    window = 2 * zygote.whole_run_seconds("import", timed, 0, 1)
    outcomes = {"nothing": 0, "everything": 0}
    for trial in range(TRIALS):
        folder = tmp_path / f"trial-{trial}"
        folder.mkdir()
        target = folder / "imported.db"
        shutil.copy(export, f"{target}.source.jsonl")
        run = zygote.trial("import", target, trial, 1, rng.uniform(0.0, window))
        counts = _table_counts(target)  # opens whatever the kill left (or a new file)
        if any(counts[t] for t in ("memories", "entities")):
            assert counts == whole, f"trial {trial}: a partial import"
            outcomes["everything"] += 1
        else:
            assert not run.said("I"), f"trial {trial}: an acknowledged import lost"
            outcomes["nothing"] += 1
        check_database(target)
        assert _leftovers(folder, {target.name, f"{target.name}.source.jsonl"}) == []
    assert min(outcomes.values()) >= 3, outcomes  # kills landed before and after the commit
    print(f"import: {TRIALS} trials, {outcomes}")


@pytest.mark.slow
def test_sigkill_during_export_leaves_whole_files_and_no_partial(
    tmp_path: Path, zygote: Zygote, source_store: tuple[Path, Path]
) -> None:
    source_db, _ = source_store
    path = tmp_path / "store.db"
    shutil.copy(source_db, path)
    out = Path(f"{path}.jsonl")
    whole = _table_counts(path)
    rng = random.Random(31)
    killed = 0
    for trial in range(TRIALS):
        run = zygote.trial("export", path, trial, 1000, rng.uniform(0.05, 0.8))
        killed += run.killed
        if out.exists():  # an earlier, whole export: the header's counts are all there
            lines = out.read_text().splitlines()
            header = json.loads(lines[0])
            assert sum(header["tables"].values()) == len(lines) - 1, trial
            assert {k: v for k, v in header["tables"].items() if k in whole} == {
                k: v for k, v in whole.items() if k in header["tables"]
            }
        else:
            assert not run.said("E"), f"trial {trial}: an acknowledged export is gone"
        # The killed writer's own .partial at most (and the store's -wal and -shm, which the
        # next opener of the store folds back in).
        sidecars = {f"{path.name}-wal", f"{path.name}-shm"}
        partials = _leftovers(tmp_path, {path.name, out.name, *sidecars})
        assert len(partials) <= 1 and all(p.endswith(".partial") for p in partials), partials
    assert killed >= TRIALS * 3 // 4
    print(f"export: {TRIALS} trials, {killed} killed")
    storage = SQLiteStorage(path)
    export_jsonl(storage.database, out)  # the next export removes what the killed one left
    storage.close()
    assert _leftovers(tmp_path, {path.name, out.name}) == []
