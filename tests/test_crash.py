"""Crash safety: a process killed with SIGKILL mid-ingest leaves a sound, complete file.

A child process (forked from a warm "zygote" so each trial is short; see ``_workers.py``)
ingests memories into one SQLite file and prints each memory id after ``save()`` returned.
The test kills it with SIGKILL at a random moment, then checks that the file reopens,
``PRAGMA integrity_check`` is ok, every acknowledged memory is present (and every
acknowledged delete is absent), each entity memory has exactly its entities' mentions, and the
graph rebuilt on open equals the tables (support counting holds). The same file is reused
across trials, so later trials also reopen whatever earlier kills left.
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _workers import check_database

from graphmem import LongTermMemory, SQLiteStorage

WORKERS = Path(__file__).with_name("_workers.py")
TRIALS = 24


def _read_line(proc: subprocess.Popen[bytes], timeout: float) -> str:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, f"no output from the worker in {timeout} s"
    line = proc.stdout.readline().decode()
    assert line, "the worker closed its output"
    return line.strip()


@pytest.fixture
def zygote():
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, str(WORKERS), "zygote"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    try:
        assert _read_line(proc, 120) == "ready"
        yield proc
    finally:
        if proc.poll() is None:
            assert proc.stdin is not None
            proc.stdin.write(b"quit\n")
            proc.stdin.flush()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_no_acknowledged_save(tmp_path, zygote):
    path = tmp_path / "crash.db"
    rng = random.Random(20260601)
    acknowledged: set[str] = set()
    deleted: set[str] = set()
    killed_mid_run = 0
    for trial in range(TRIALS):
        zygote.stdin.write(f"run {path} {trial} 5000\n".encode())
        zygote.stdin.flush()
        first = _read_line(zygote, 30)
        assert first.startswith("pid "), first
        pid = int(first.split()[1])
        # Kill early (often mid-transaction, during schema creation or the first saves) or late.
        time.sleep(rng.choice([rng.uniform(0.0, 0.4), rng.uniform(0.4, 2.5)]))
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # it finished (and was reaped) first: its exit status below says how
        while True:
            line = _read_line(zygote, 60)
            if line.startswith("exit "):
                status = int(line.split()[2])
                break
            kind, memory_id = line.split() if " " in line else (line, "")
            if kind == "S":
                acknowledged.add(memory_id)
            elif kind == "d":  # a delete began; killed before it returned, either is right
                acknowledged.discard(memory_id)
            elif kind == "D":
                deleted.add(memory_id)
        if os.WIFSIGNALED(status):
            assert os.WTERMSIG(status) == signal.SIGKILL
            killed_mid_run += 1
        else:
            assert os.WEXITSTATUS(status) == 0, f"trial {trial}: the writer failed on its own"

        sizes = check_database(path)  # reopens the file; integrity and graph == tables
        conn = sqlite3.connect(path)
        try:
            stored = {r[0]: r for r in conn.execute("SELECT memory_id, namespace FROM memories")}
            missing = acknowledged - set(stored)
            assert not missing, f"trial {trial}: {len(missing)} acknowledged saves lost"
            assert not deleted & set(stored), f"trial {trial}: an acknowledged delete came back"
            # Each entity memory is indexed in the same transaction as its row: its metadata
            # lists its four entities and it has a mention of each.
            for text_id, metadata in conn.execute(
                "SELECT text_id, metadata FROM memories WHERE namespace = 'entity'"
            ):
                names = json.loads(metadata)["entities"]
                assert len(names) == 4, names
                keys = {
                    k
                    for (k,) in conn.execute(
                        "SELECT DISTINCT e.key FROM mentions m JOIN entities e "
                        "ON e.id = m.entity_id WHERE m.text_id = ?",
                        (text_id,),
                    )
                }
                assert len(keys) == 4, (text_id, names, keys)
        finally:
            conn.close()
        if acknowledged:
            assert sizes[""][0] > 0, "acknowledged memories but an empty graph"
    assert len(acknowledged) >= 40, f"only {len(acknowledged)} saves acknowledged in all"
    assert killed_mid_run >= 20, f"only {killed_mid_run} of {TRIALS} trials were killed mid-run"

    # A writer that opens the file after all those kills can keep working.
    storage = SQLiteStorage(path)
    try:
        memory = LongTermMemory(storage=storage, max_items=None)
        item = memory.save("Alice Johnson reopened the file in Paris.")
        assert memory.retrieve(item.memory_id) is not None
    finally:
        storage.close()
    check_database(path)


def test_commits_are_fsynced_for_power_loss_durability(tmp_path):
    """WAL with synchronous=FULL: a returned save survives power loss, not only a crash."""
    storage = SQLiteStorage(tmp_path / "durable.db")
    try:
        with storage.database.read() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 60_000
    finally:
        storage.close()
