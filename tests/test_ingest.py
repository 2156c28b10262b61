"""``graphmem ingest`` is atomic per record and safe to run again.

Each record is one text shown by the ``long_term`` and the ``entity`` tier (analysed once, its
statements counted once), written in one transaction per batch of whole records, with its
content fingerprint: running the ingest again, after it finished or after a SIGKILL halfway,
stores each record exactly once (the store equals one clean ingest; an export of it is
byte-identical).
"""

from __future__ import annotations

import io
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _workers import children_of, processes_ending

from graphmem import SQLiteStorage
from graphmem.cli import main
from graphmem.records import ingest_records
from graphmem.store.engine import SQLITE_MODULE as sqlite3  # the SQLite graphmem runs on
from graphmem.transfer import export_jsonl

SCRIPT = Path(sys.executable).parent / "graphmem"
PEOPLE = ["Dana Scott", "Bob Stone", "Priya Patel", "Erik Lund", "Maya Lindqvist", "Omar Haddad"]
ORGS = ["Northwind", "Initech", "Harbor Bank", "Lumen Robotics", "Kestrel Automation"]
PLACES = ["Oslo", "Paris", "Berlin", "Lisbon"]


def _records(n: int, seed: int = 7) -> list[dict[str, Any]]:
    """``n`` dated records about people, companies and places; some sentences recur (so
    relations have support above 1) and a few records are exact repeats."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for i in range(n):
        person, org, place = rng.choice(PEOPLE), rng.choice(ORGS), rng.choice(PLACES)
        content = rng.choice(
            [
                f"{person} works at {org}.",
                f"{person} visited {place} with the {org} team.",
                f"{person} lives in {place}.",
                f"{person} met {rng.choice(PEOPLE)} at {org} in {place}.",
            ]
        )
        out.append(
            {
                "content": content,
                "agent_id": rng.choice(["Sales Agent", "HR Agent"]),
                "timestamp": f"2026-01-{1 + i % 28:02d}T{i % 24:02d}:00:00",
                "importance": round(rng.random(), 2),
            }
        )
    out.extend(dict(out[i]) for i in range(0, n, max(1, n // 5)))  # exact repeats
    return out


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _state(path: Path) -> dict[str, Any]:
    """What the store holds, without ids (texts, tier items, entities, relations, counts)."""
    conn = sqlite3.connect(path)
    try:
        q = conn.execute
        items = q(
            "SELECT m.namespace, t.head, t.body, m.metadata, m.agent_id, m.created_at, "
            "m.importance, m.view FROM memories m JOIN texts t ON t.id = m.text_id"
        ).fetchall()
        entities = q(
            "SELECT tenant, key, name, label, first_seen, last_seen, mentions FROM entities"
        ).fetchall()
        relations = q(
            "SELECT s.key, r.predicate, o.key, r.support, r.first_seen, r.last_seen, "
            "r.valid_from, r.valid_to FROM relations r JOIN entities s ON s.id = r.subject_id "
            "JOIN entities o ON o.id = r.object_id"
        ).fetchall()
        evidence = q(
            "SELECT s.key, r.predicate, o.key, t.body, e.sent_start, e.sent_end, e.rule "
            "FROM relation_evidence e JOIN relations r ON r.id = e.relation_id "
            "JOIN entities s ON s.id = r.subject_id JOIN entities o ON o.id = r.object_id "
            "JOIN texts t ON t.id = e.text_id"
        ).fetchall()
        counts = {
            table: q(f"SELECT count(*) FROM {table}").fetchone()[0]  # noqa: S608 (fixed names)
            for table in ("texts", "memories", "mentions", "aliases")
        }
        # Every text is one record shown by both tiers, each with the record's fingerprint.
        per_text = q(
            "SELECT count(*), count(DISTINCT m.namespace), count(DISTINCT m.result_id), "
            "count(DISTINCT m.dedupe_key) FROM memories m GROUP BY m.text_id"
        ).fetchall()
        return {
            "items": sorted(items),
            "entities": sorted(entities),
            "relations": sorted(relations),
            "evidence": sorted(evidence),
            "counts": counts,
            "per_text": sorted(set(per_text)),
            "integrity": q("PRAGMA integrity_check").fetchall(),
        }
    finally:
        conn.close()


def _export(path: Path) -> str:
    storage = SQLiteStorage(path)
    try:
        out = io.StringIO()
        export_jsonl(storage.database, out)
        return out.getvalue()
    finally:
        storage.close()


def test_each_record_is_one_text_in_both_tiers(tmp_path: Path) -> None:
    storage = SQLiteStorage(tmp_path / "one.db")
    try:
        summary = ingest_records(
            storage,
            [
                {"content": "Dana Scott works at Northwind."},
                {"content": "Bob Stone met Dana Scott."},
            ],
        )
    finally:
        storage.close()
    assert (summary.saved, summary.skipped) == (2, 0)
    state = _state(tmp_path / "one.db")
    assert state["counts"]["texts"] == 2 and state["counts"]["memories"] == 4
    assert state["per_text"] == [(2, 2, 1, 1)]  # two tiers, one result, one fingerprint
    # Each statement is counted once, though two tiers show it.
    mentions = {key: n for _, key, _, _, _, _, n in state["entities"]}
    assert mentions == {"dana scott": 2, "northwind": 1, "bob stone": 1}
    [(subject, _, obj, support, *_)] = [r for r in state["relations"] if r[1] == "works_at"]
    assert (subject, obj, support) == ("dana scott", "northwind", 1)


def test_ingesting_a_file_twice_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = _records(40)
    source = _write_jsonl(tmp_path / "memories.jsonl", records)
    db = tmp_path / "twice.db"
    assert main(["--db", str(db), "ingest", str(source), "--no-progress"]) == 0
    first = capsys.readouterr().out
    unique = len({json.dumps(r, sort_keys=True) for r in records})
    assert f"Ingested {unique} memories" in first
    assert f"Skipped {len(records) - unique} already stored" in first
    exported = _export(db)
    assert main(["--db", str(db), "ingest", str(source), "--no-progress"]) == 0
    second = capsys.readouterr().out
    assert "Ingested 0 memories" in second and f"Skipped {len(records)} already" in second
    assert _export(db) == exported
    # A changed record is a new one; the rest are still skipped.
    records[3]["importance"] = 0.99 if records[3]["importance"] != 0.99 else 0.98
    assert main(["--db", str(db), "ingest", str(_write_jsonl(source, records))]) == 0
    assert "Ingested 1 memories" in capsys.readouterr().out


def test_fingerprints_are_per_user(tmp_path: Path) -> None:
    storage = SQLiteStorage(tmp_path / "users.db")
    try:
        record = {"content": "Dana Scott works at Northwind."}
        assert ingest_records(storage, [{**record, "user_id": "alice"}]).saved == 1
        assert ingest_records(storage, [{**record, "user_id": "bob"}]).saved == 1
        assert ingest_records(storage, [{**record, "user_id": "alice"}]).saved == 0
    finally:
        storage.close()


def _texts_stored(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            return int(conn.execute("SELECT count(*) FROM texts").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:  # the schema is being created
        return 0


@pytest.mark.slow
def test_sigkill_mid_ingest_then_rerun_equals_one_clean_ingest(tmp_path: Path) -> None:
    records = _records(200, seed=11)
    source = _write_jsonl(tmp_path / "big.jsonl", records)
    clean = tmp_path / "clean.db"
    assert main(["--db", str(clean), "ingest", str(source), "--no-progress"]) == 0
    expected = _state(clean)
    unique = expected["counts"]["texts"]
    assert expected["per_text"] == [(2, 2, 1, 1)] and unique < len(records)

    rng = random.Random(20261202)
    killed_mid_run = watched = 0
    for trial in range(3):
        db = tmp_path / f"killed{trial}.db"
        proc = subprocess.Popen(
            [str(SCRIPT), "--db", str(db), "ingest", str(source), "--batch-size", "2"]
            + ["--workers", "2"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={k: v for k, v in os.environ.items() if k != "GRAPHMEM_DB"},
        )
        threshold = rng.randrange(2, unique - 20)
        deadline = time.monotonic() + 240
        with processes_ending(proc) as workers:  # its analysis workers die with it
            while proc.poll() is None and _texts_stored(db) < threshold:
                assert time.monotonic() < deadline, "the ingest made no progress"
                time.sleep(0.02)
            if proc.poll() is None:
                workers.update(children_of(proc.pid))
                watched += len(workers)
                os.kill(proc.pid, signal.SIGKILL)
                killed_mid_run += 1
            proc.wait(30)
        landed = _texts_stored(db)
        if landed:  # whole records only: each text with both items, nothing half-written
            partial = _state(db)
            assert partial["per_text"] == [(2, 2, 1, 1)] and partial["integrity"] == [("ok",)]
        assert main(["--db", str(db), "ingest", str(source), "--no-progress"]) == 0
        assert _state(db) == expected, f"trial {trial}: killed after {landed} texts"
    assert killed_mid_run >= 2, "the ingests finished before they could be killed"
    assert watched or not sys.platform.startswith("linux"), "no analysis workers were seen"


def test_a_record_with_a_dedupe_key_is_known_by_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "keys.db"
    first = [
        {"content": "Dana Scott works at Northwind.", "dedupe_key": "crm-17"},
        {"content": "Bob Stone lives in Paris.", "dedupe_key": "crm-18"},
    ]
    assert main(["--db", str(db), "ingest", str(_write_jsonl(tmp_path / "a.jsonl", first))]) == 0
    # The same ids with corrected text: the caller's key decides, so nothing is stored again.
    second = [{**first[0], "content": "Dana Scott works at Initech."}, first[1]]
    assert main(["--db", str(db), "ingest", str(_write_jsonl(tmp_path / "b.jsonl", second))]) == 0
    assert "Skipped 2 already stored" in capsys.readouterr().out
    state = _state(db)
    assert state["counts"]["texts"] == 2
    assert not any("Initech" in body for _, _, body, *_ in state["items"])
    bad = _write_jsonl(tmp_path / "bad.jsonl", [{"content": "x", "dedupe_key": ""}])
    assert main(["--db", str(db), "ingest", str(bad)]) != 0
    assert "dedupe_key must not be empty" in capsys.readouterr().err


def test_an_ingest_stopped_by_a_write_error_finishes_on_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch that fails to commit (here the third: the disk filled up) leaves the batches
    before it; running the ingest again stores the rest, each record and statement once."""
    from sqlalchemy.exc import OperationalError

    from graphmem.index.writer import Writer

    records = _records(30, seed=3)
    source = _write_jsonl(tmp_path / "full.jsonl", records)
    clean = tmp_path / "clean.db"
    assert main(["--db", str(clean), "ingest", str(source), "--batch-size", "4"]) == 0

    db = tmp_path / "stopped.db"
    real_write = Writer.write
    calls = {"n": 0}

    def failing_write(self: Writer, conn: Any, texts: Any, docs: Any = None) -> Any:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OperationalError(
                "INSERT", {}, sqlite3.OperationalError("database or disk is full")
            )
        return real_write(self, conn, texts, docs)

    monkeypatch.setattr(Writer, "write", failing_write)
    storage = SQLiteStorage(db)
    try:  # (whichever error graphmem makes of it, the message says why)
        with pytest.raises(Exception, match="disk is full"):
            ingest_records(storage, records, batch_size=4)
    finally:
        storage.close()
    monkeypatch.setattr(Writer, "write", real_write)
    stopped = _state(db)
    assert stopped["counts"]["texts"] == 8  # the two batches before the failing one
    assert main(["--db", str(db), "ingest", str(source), "--batch-size", "4"]) == 0
    assert _state(db) == _state(clean)
