"""Saving, ingesting and importing again change nothing when asked to.

``save_task_result(..., dedupe_key=K)``: a second save with a key the memory holds returns
the stored result's id and writes nothing; ``graphmem import`` of a file into the database it
was imported into already writes nothing and says so (``graphmem ingest``'s fingerprints are
tested in test_ingest.py). Plain saves keep Calute's behaviour: two saves store two.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphmem import CortexMemory, SQLiteStorage
from graphmem.cli import main
from graphmem.errors import InvalidArgumentError
from graphmem.store.engine import SQLITE_MODULE as sqlite3  # the SQLite graphmem runs on
from graphmem.transfer import export_jsonl, import_jsonl


def _export(storage: SQLiteStorage) -> str:
    out = io.StringIO()
    export_jsonl(storage.database, out)
    return out.getvalue()


def _save(memory: CortexMemory, result: str = "Acme renewed its contract.", **kw: object) -> str:
    return memory.save_task_result("Sync the CRM", result, "Sales", importance=0.9, **kw)  # type: ignore[arg-type]


class TestDedupeKey:
    def test_saving_again_with_the_key_changes_nothing(self) -> None:
        memory = CortexMemory()
        first = _save(memory, dedupe_key="crm-1")
        snapshot = _export(memory._space)
        assert _save(memory, dedupe_key="crm-1") == first
        # The key decides, not the content: a retried save with other text is the same save.
        assert _save(memory, "Acme cancelled.", dedupe_key="crm-1") == first
        assert _export(memory._space) == snapshot
        assert len(memory.contextual) == 1

    def test_without_a_key_two_saves_store_two(self) -> None:
        memory = CortexMemory()
        assert _save(memory) != _save(memory)
        assert len(memory.contextual) == 2 and len(memory.long_term) == 2  # type: ignore[arg-type]

    def test_other_keys_and_a_deleted_key(self) -> None:
        memory = CortexMemory()
        one = _save(memory, dedupe_key="crm-1")
        two = _save(memory, dedupe_key="crm-2")
        assert one != two and len(memory.contextual) == 2
        assert memory.delete(one)
        again = _save(memory, dedupe_key="crm-1")  # forgotten: saving it stores it anew
        assert again != one and len(memory.contextual) == 2

    def test_batch_with_repeated_and_stored_keys(self) -> None:
        memory = CortexMemory()
        stored = _save(memory, dedupe_key="k0")
        records = [
            {"task_description": "Sync", "result": f"Result {n}", "agent_role": "Sales"}
            for n in range(4)
        ]
        for record, key in zip(records, ["k0", "k1", "k1", None], strict=True):
            record["dedupe_key"] = key
        ids = memory.save_task_results(records, batch_size=2)
        assert ids[0] == stored and ids[1] == ids[2] and len(set(ids)) == 3
        contents = sorted(i.content for i in memory.contextual.search(""))
        assert contents == ["Acme renewed its contract.", "Result 1", "Result 3"]

    def test_the_key_survives_a_reopen(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("WRITE_MEMORY", "1")
        path = str(tmp_path / "keys.db")
        memory = CortexMemory(persistence_path=path)
        first = _save(memory, dedupe_key="crm-1")
        memory.storage.close()  # type: ignore[union-attr]
        reopened = CortexMemory(persistence_path=path)
        try:
            assert _save(reopened, dedupe_key="crm-1") == first
            assert len(reopened.contextual) == 1
        finally:
            reopened.storage.close()  # type: ignore[union-attr]

    def test_update_keeps_the_key(self) -> None:
        memory = CortexMemory()
        rid = _save(memory, dedupe_key="crm-1")
        memory.update(rid, result="Acme renewed for two years.")
        assert _save(memory, dedupe_key="crm-1") == rid
        assert [i.content for i in memory.contextual.search("")] == ["Acme renewed for two years."]

    @pytest.mark.parametrize("bad", ["", "   ", "k" * 513, 7])
    def test_bad_keys_are_named_errors(self, bad: object) -> None:
        memory = CortexMemory()
        with pytest.raises((InvalidArgumentError, TypeError)):
            _save(memory, dedupe_key=bad)
        assert len(memory.contextual) == 0


class TestImportTwice:
    @pytest.fixture
    def export_file(self, tmp_path: Path) -> Path:
        os.environ["WRITE_MEMORY"] = "1"
        try:
            memory = CortexMemory(persistence_path=str(tmp_path / "source.db"))
        finally:
            del os.environ["WRITE_MEMORY"]
        _save(memory, "Dana Scott works at Northwind.")
        memory.save_agent_interaction("Sales", "called", "Bob Stone of Initech", importance=0.8)
        assert memory.storage is not None
        memory.storage.save("prefs", {"tone": "brief"})
        path = tmp_path / "backup.jsonl"
        export_jsonl(memory.storage.database, path)
        memory.storage.close()
        return path

    def test_importing_twice_changes_nothing(self, tmp_path: Path, export_file: Path) -> None:
        target = SQLiteStorage(tmp_path / "target.db")
        try:
            first = import_jsonl(target.database, export_file)
            assert first["memories"] == 6 and first.skipped == 0
            snapshot = _export(target)
            again = import_jsonl(target.database, export_file)
            assert again.skipped == 6 and again["memories"] == 0
            assert _export(target) == snapshot
        finally:
            target.close()

    def test_cli_says_it_skipped(
        self, tmp_path: Path, export_file: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        db = tmp_path / "cli.db"
        assert main(["--db", str(db), "import", str(export_file)]) == 0
        assert "Imported 6 memories" in capsys.readouterr().out
        exported = tmp_path / "after.jsonl"
        assert main(["--db", str(db), "export", str(exported)]) == 0
        capsys.readouterr()
        assert main(["--db", str(db), "import", str(export_file)]) == 0
        out = capsys.readouterr().out
        assert "Skipped" in out and "holds its 6 memories already" in out
        assert main(["--db", str(db), "export", str(tmp_path / "again.jsonl"), "--force"]) == 0
        assert (tmp_path / "again.jsonl").read_bytes() == exported.read_bytes()

    def test_a_database_with_other_data_is_still_refused(
        self, tmp_path: Path, export_file: Path
    ) -> None:
        target = SQLiteStorage(tmp_path / "other.db")
        try:
            target.save("unrelated", {"x": 1})
            with pytest.raises(InvalidArgumentError, match="holds 0 of the file's 6 memories"):
                import_jsonl(target.database, export_file)
            assert target.load("prefs") is None
        finally:
            target.close()


_KEYED_WRITER = """
import os, sys, time
from pathlib import Path
from graphmem import CortexMemory
os.environ["WRITE_MEMORY"] = "1"
memory = CortexMemory(persistence_path=sys.argv[1])
memory.save_task_result("Warm", "Warm up the pipeline.", "Warmer")  # no key: one each
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.01)
for n in range(int(sys.argv[3])):
    rid = memory.save_task_result("Sync", f"Acme order {n} shipped.", "Sales", dedupe_key=f"k{n}")
    print(n, rid, flush=True)
memory.storage.close()
"""


@pytest.mark.slow
def test_processes_saving_the_same_keys_at_once_store_each_once(tmp_path: Path) -> None:
    path, go, keys = tmp_path / "keys.db", tmp_path / "go", 25
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _KEYED_WRITER, str(path), str(go), str(keys)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    deadline = time.monotonic() + 300
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)
    go.touch()
    outputs = [proc.communicate(timeout=600) for proc in procs]
    answers: dict[int, set[str]] = {}
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err[-3000:]
        for line in out.splitlines():
            n, rid = line.split()
            answers.setdefault(int(n), set()).add(rid)
    # Every process got the one stored result of each key, and each key was stored once.
    assert sorted(answers) == list(range(keys))
    assert all(len(ids) == 1 for ids in answers.values())
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT dedupe_key, count(DISTINCT result_id) FROM memories "
            "WHERE dedupe_key IS NOT NULL GROUP BY dedupe_key"
        ).fetchall()
        stored = conn.execute("SELECT count(*) FROM memories WHERE namespace = 'entity'").fetchone()
    finally:
        conn.close()
    assert sorted(rows) == sorted((f"k{n}", 1) for n in range(keys))
    assert stored[0] == keys + 3  # the keyed results once, and each process's warm-up
