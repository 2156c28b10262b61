"""Promotion (issue 19, item 4): a short-term item accessed ``promotion_threshold`` times is
copied to long-term memory at most once, however many threads or processes search at once,
and a search shows its text once.

Real spaCy, real SQLite files, real threads and processes.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from graphmem import ContextualMemory, CortexMemory, SQLiteStorage
from graphmem.store.engine import SQLITE_MODULE as sqlite3  # the SQLite graphmem runs on

TEXT = "Zephyr rollout checklist for the Atlas launch"
QUERY = "Zephyr rollout"


def _long_term_copies(path: str) -> int:
    con = sqlite3.connect(path)
    try:
        return int(
            con.execute(
                "SELECT count(*) FROM memories WHERE namespace = 'contextual.long_term'"
            ).fetchone()[0]
        )
    finally:
        con.close()


def _distinct(contents: list[str]) -> bool:
    return len(contents) == len(set(contents))


def test_single_thread_promotes_once_and_shows_the_text_once() -> None:
    memory = ContextualMemory(promotion_threshold=3)
    memory.save(TEXT)
    seen = []
    for _ in range(6):
        seen.append([item.content for item in memory.search(QUERY)])
    assert all(found == [TEXT] for found in seen), seen
    assert [i.content for i in memory.long_term._all_items()] == [TEXT]
    assert [i.content for i in memory.search("")] == [TEXT]


def test_cortex_search_shows_a_promoted_text_once() -> None:
    memory = CortexMemory()
    memory.save_task_result("Plan", TEXT, "PM", importance=0.5)
    for _ in range(5):
        found = [item.content for item in memory.search(QUERY)]
        assert _distinct(found) and len(found) == 1, found


def test_four_threads_promote_once(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    storage = SQLiteStorage(path)
    memory = ContextualMemory(long_term_storage=storage, promotion_threshold=3)
    memory.save(TEXT)
    start = threading.Barrier(4)
    results: list[list[str]] = []
    errors: list[BaseException] = []

    def search() -> None:
        start.wait()
        try:
            for _ in range(6):
                results.append([item.content for item in memory.search(QUERY)])
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=search) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    storage.close()
    assert not errors
    assert results and all(found == [TEXT] for found in results), results
    assert _long_term_copies(path) == 1


_READER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from graphmem import ContextualMemory, SQLiteStorage
    path, go = sys.argv[1], Path(sys.argv[2])
    storage = SQLiteStorage(path)
    memory = ContextualMemory(long_term_storage=storage, promotion_threshold=3)
    memory.search("warm up the pipeline")
    while not go.exists():
        time.sleep(0.01)
    for _ in range(8):
        found = [item.content for item in memory.search(%r)]
        if len(found) != len(set(found)):
            print("DUPLICATE", found, flush=True)
    storage.close()
    print("done", flush=True)
    """
)


@pytest.mark.slow
def test_two_reading_processes_promote_once(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    storage = SQLiteStorage(path)
    ContextualMemory(long_term_storage=storage, promotion_threshold=3).save(TEXT)
    storage.close()
    go = tmp_path / "go"
    script = _READER % QUERY
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", script, path, str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    time.sleep(0.5)
    go.touch()
    outputs = [reader.communicate(timeout=180) for reader in readers]
    for reader, (out, err) in zip(readers, outputs, strict=True):
        assert reader.returncode == 0, err
        assert out.strip().endswith("done") and "DUPLICATE" not in out, out
    assert _long_term_copies(path) == 1
