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
import random

import pytest
from _workers import Zygote, check_database

from graphmem import LongTermMemory, SQLiteStorage
from graphmem.store.engine import SQLITE_MODULE as sqlite3  # the SQLite graphmem runs on

TRIALS = 24


@pytest.fixture
def zygote():
    with Zygote.started() as zygote:
        yield zygote


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_no_acknowledged_save(tmp_path, zygote):
    path = tmp_path / "crash.db"
    rng = random.Random(20260601)
    acknowledged: set[str] = set()
    deleted: set[str] = set()
    killed_mid_run = 0
    for trial in range(TRIALS):
        # Kill early (often mid-transaction, during schema creation or the first saves) or late.
        delay = rng.choice([rng.uniform(0.0, 0.4), rng.uniform(0.4, 2.5)])
        run = zygote.trial("save", path, trial, 5000, delay)
        for line in run.lines:
            kind, memory_id = line.split() if " " in line else (line, "")
            if kind == "S":
                acknowledged.add(memory_id)
            elif kind == "d":  # a delete began; killed before it returned, either is right
                acknowledged.discard(memory_id)
            elif kind == "D":
                deleted.add(memory_id)
        killed_mid_run += run.killed

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
    print(f"save: {TRIALS} trials, {killed_mid_run} killed, {len(acknowledged)} acknowledged")

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
