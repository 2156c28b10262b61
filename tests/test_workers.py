"""Ingest on every core: worker processes analyse, one writer stores, and the store is the
same as with one process (same ids, same graph, same export)."""

from __future__ import annotations

import io
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from graphmem import CortexMemory, SQLiteStorage
from graphmem.cli import main
from graphmem.errors import InvalidArgumentError, InvalidArgumentTypeError
from graphmem.extract.pipeline import get_analyzer
from graphmem.extract.texts import analyse_texts
from graphmem.extract.workers import AnalysisPool
from graphmem.transfer import export_jsonl

PEOPLE = ["Dana Scott", "Bob Stone", "Priya Patel", "Erik Lund", "Maya Lindqvist", "Omar Haddad"]
ORGS = ["Northwind", "Initech", "Harbor Bank", "Lumen Robotics", "Kestrel Automation"]
PLACES = ["Oslo", "Paris", "Berlin", "Lisbon"]
#: Random per save (uuid4), so they differ between any two stores: masked before comparing.
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


def _results(n: int, seed: int = 5) -> list[dict[str, Any]]:
    """``n`` dated task results; names recur, so later results find earlier entities."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        person, other = rng.sample(PEOPLE, 2)
        org, place = rng.choice(ORGS), rng.choice(PLACES)
        out.append(
            {
                "task_description": f"Brief the {place} team on {org}",
                "result": rng.choice(
                    [
                        f"{person} joined {org} in {place}.",
                        f"{person} met {other} of {org}; they agreed on the {place} plan.",
                        f"{person} works at {org}. {other} moved to {place}.",
                    ]
                ),
                "agent_role": rng.choice(["Sales Agent", "HR Agent"]),
                "importance": round(rng.uniform(0.3, 1.0), 2),
                "timestamp": f"2026-02-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00+00:00",
            }
        )
    return out


def _export(path: Path) -> str:
    storage = SQLiteStorage(path)
    try:
        out = io.StringIO()
        export_jsonl(storage.database, out)
    finally:
        storage.close()
    text = _UUID.sub("<uuid>", out.getvalue())
    # Times a save stamps itself (last access) are not of the results: drop them.
    return re.sub(r'"last_accessed": "[^"]*"', '"last_accessed": ""', text)


@pytest.fixture
def submitted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many texts each :meth:`AnalysisPool.submit` call handed to the workers."""
    calls: list[int] = []
    real = AnalysisPool.submit

    def counting(self: AnalysisPool, texts: Any, relations: bool = False) -> Any:
        calls.append(len(texts))
        return real(self, texts, relations)

    monkeypatch.setattr(AnalysisPool, "submit", counting)
    return calls


def test_pooled_docs_are_the_docs_made_here() -> None:
    analyzer = get_analyzer()
    texts = [(r["task_description"], r["result"]) for r in _results(12)]
    here = analyse_texts(analyzer, texts, relations=True)
    with AnalysisPool(analyzer, workers=2) as pool:
        there = pool.submit(texts, relations=True)()
    assert [d.to_bytes() for d in there] == [d.to_bytes() for d in here]
    assert [e.text for e in there[0].ents] == [e.text for e in here[0].ents]
    assert [t.dep_ for t in there[1]] == [t.dep_ for t in here[1]]


def test_save_task_results_with_two_workers_stores_what_one_stores(
    tmp_path: Path, submitted: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WRITE_MEMORY", "1")
    results = _results(160)
    ids = {}
    for workers in (1, 2):
        memory = CortexMemory(persistence_path=str(tmp_path / f"w{workers}.db"))
        ids[workers] = memory.save_task_results(results, batch_size=40, workers=workers)
        assert memory.storage is not None
        memory.storage.close()
    # The two-worker run sent every text of every batch to the workers; the other none.
    assert len(submitted) == 4 and sum(submitted) == 160
    assert len(ids[1]) == len(ids[2]) == 160
    one, two = _export(tmp_path / "w1.db"), _export(tmp_path / "w2.db")
    assert one == two
    tables = json.loads(one.splitlines()[0])["tables"]
    assert tables["texts"] >= 160 and tables["relations"] > 50  # (short-term lines evicted)


def test_ingest_with_workers_stores_what_one_worker_stores(
    tmp_path: Path, submitted: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    records = [
        {"content": r["result"], "agent_id": r["agent_role"], "timestamp": r["timestamp"]}
        for r in _results(130, seed=9)
    ]
    source = tmp_path / "memories.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    for workers in ("1", "2"):
        db = tmp_path / f"ingest{workers}.db"
        argv = ["--db", str(db), "ingest", str(source), "--batch-size", "50"]
        assert main([*argv, "--workers", workers, "--no-progress"]) == 0
        assert "Ingested 130 memories" in capsys.readouterr().out
    assert sum(submitted) == 130
    assert _export(tmp_path / "ingest1.db") == _export(tmp_path / "ingest2.db")


@pytest.mark.parametrize(
    ("workers", "error", "message"),
    [
        (0, InvalidArgumentError, r"workers must be in \[1, 256\], got 0"),
        (1000, InvalidArgumentError, r"workers must be in \[1, 256\], got 1000"),
        ("2", InvalidArgumentTypeError, "workers must be an int, got str"),
        (True, InvalidArgumentTypeError, "workers must be an int, got bool"),
    ],
)
def test_a_bad_worker_count_is_refused_before_anything_is_written(
    workers: Any, error: type[Exception], message: str
) -> None:
    memory = CortexMemory()
    with pytest.raises(error, match=message):
        memory.save_task_results(_results(3), workers=workers)
    assert len(memory.contextual) == 0
