"""Several processes write one SQLite file at once: nobody sees "database is locked", no row is lost.

Four independent Python processes (``subprocess``; each loads spaCy, then waits for a start
file so that they really write at the same time) save single memories, ``save_many`` batches
and entity memories into one file. Each prints the id of every memory after ``save()``
returned. Afterwards every acknowledged id is in the file exactly once, the processes exited
cleanly with nothing on stderr about locks, and the graph a fresh process builds equals the
tables.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _workers import check_database

from graphmem import EntityMemory, SQLiteStorage
from graphmem.store.engine import SQLITE_MODULE as sqlite3  # the SQLite graphmem runs on

WORKERS = Path(__file__).with_name("_workers.py")
PROCESSES = 4
PER_PROCESS = 40


@pytest.mark.slow
def test_four_processes_write_one_file_at_once(tmp_path):
    path = tmp_path / "shared.db"
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKERS), "write", str(path), f"p{i}", str(PER_PROCESS), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for i in range(PROCESSES)
    ]
    time.sleep(1.0)
    go.touch()
    outputs = [proc.communicate(timeout=600) for proc in procs]

    acknowledged: list[str] = []
    for proc, (out, err) in zip(procs, outputs, strict=True):
        text = err.decode(errors="replace")
        assert "database is locked" not in text
        assert proc.returncode == 0, text[-3000:]
        ids = [line.split()[1] for line in out.decode().splitlines() if line.startswith("S ")]
        assert len(ids) == PER_PROCESS
        acknowledged.extend(ids)

    conn = sqlite3.connect(path)
    try:
        stored = [mid for (mid,) in conn.execute("SELECT memory_id FROM memories")]
    finally:
        conn.close()
    assert sorted(stored) == sorted(acknowledged)  # every row present, none twice
    assert len(set(acknowledged)) == PROCESSES * PER_PROCESS
    sizes = check_database(path)
    assert sizes[""][0] >= 10  # the people, organisations and places were linked

    # Every process's entity memories are visible, with their entities, to a new reader.
    storage = SQLiteStorage(path)
    try:
        entity = EntityMemory(storage=storage)
        assert len(entity) == PROCESSES * (PER_PROCESS // 5)
        assert entity.get_entity_info("Alice Johnson")["frequency"] > 0
    finally:
        storage.close()
