"""Re-analysis: ``reanalyse`` after declarations equals declaring first and then saving.

"Ingest, declare, reanalyse" and "declare, ingest" give byte-identical exports once the ids of
derived rows (entities, aliases, mentions, relations, evidence) are renumbered in order; user
merges, hand-added relations and relabels survive; a re-analysis killed part way is completed
by the next one, to the same file; older files record how their texts were indexed.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem import CortexMemory, EntityMemory, ReanalysisWarning, SQLiteStorage
from graphmem.errors import InvalidArgumentError
from graphmem.extract.version import extraction_version
from graphmem.records import ingest_records
from graphmem.store import memory_rows, reanalysis_rows
from graphmem.store.engine import SQLITE_MODULE as sqlite3  # the SQLite graphmem runs on
from graphmem.transfer import export_jsonl

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"

#: A small corpus in the three ways texts are saved: ingested records, a facade's task
#: results (a head, several tiers, an unindexed short-term line), an entity memory with
#: given names. Full names come before short ones (no merge that indexing makes).
RECORDS = [
    {"content": "Priya Nair leads Atlas at Aurex Logistics.", "timestamp": "2026-03-02T09:00:00"},
    {
        "content": "Tom Becker joined Harbor Analytics in Berlin. He builds Orion there.",
        "timestamp": "2026-03-05T10:00:00",
    },
    {
        "content": "The Platform Team shipped Compass for Northwind Systems.",
        "timestamp": "2026-03-09T11:00:00",
        "metadata": {"speaker": "Dana Whitfield"},
    },
]
TASKS = [
    ("Review Atlas", "Dana Whitfield met Priya Nair in Oslo to review Atlas.", "2026-03-12"),
    ("Record the hire", "Kestrel Robotics hired Mira Solano as CTO of Orion.", "2026-03-15"),
]
GIVEN = ("Compass and Atlas share the Platform Team.", ["Compass", "Atlas", "Platform Team"])
NAMES = [
    "Atlas",
    "Orion",
    "Compass",
    "Platform Team",
    "Harbor Analytics",
    "Kestrel Robotics",
    "Aurex Logistics",
    "Northwind Systems",
    "Berlin",
    "Mira Solano",
]
LABELS = ["PROJECT", "PRODUCT", "TEAM", "ORG", "PERSON", "GPE"]

#: Derived tables: their ids are renumbered (in id order) before comparing exports.
_RENUMBERED = ("entities", "aliases", "mentions", "relations", "relation_evidence", "merges")
_REFERENCES = {
    "aliases": {"entity_id": "entities"},
    "mentions": {"entity_id": "entities"},
    "relations": {"subject_id": "entities", "object_id": "entities"},
    "relation_evidence": {"relation_id": "relations"},
}


def normalised_export(storage: SQLiteStorage) -> list[str]:
    """The export's lines with derived ids renumbered, merge snapshots and times of analysis
    (a merge's ``created_at``, ``undone_at``) left out."""
    out = io.StringIO()
    export_jsonl(storage.database, out)
    header, *records = [json.loads(line) for line in out.getvalue().splitlines()]
    by_table: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_table.setdefault(record["table"], []).append(record["row"])
    numbers: dict[str, dict[int, int]] = {}
    for table in _RENUMBERED:
        rows = sorted(by_table.get(table, []), key=lambda r: r["id"])
        numbers[table] = {row["id"]: n for n, row in enumerate(rows, start=1)}
    lines = [json.dumps(header, sort_keys=True)]
    for record in records:
        table, row = record["table"], dict(record["row"])
        if table in numbers:
            row["id"] = numbers[table][row["id"]]
        for column, target in _REFERENCES.get(table, {}).items():
            row[column] = numbers[target][row[column]]
        if table == "merges":
            for column in ("snapshot", "created_at", "undone_at"):
                row.pop(column)
        lines.append(json.dumps({"table": table, "row": row}, sort_keys=True))
    return sorted(lines)


def save_corpus(storage: SQLiteStorage) -> None:
    """Save the corpus the three ways (with :func:`_fixed_ids`, under the same ids)."""
    ingest_records(storage, RECORDS, batch_size=2)
    memory = CortexMemory(storage=storage)
    for task, result, when in TASKS:
        memory.save_task_result(task, result, "Analyst", importance=0.8, timestamp=when)
    EntityMemory(storage=storage).save(GIVEN[0], entities=GIVEN[1], timestamp="2026-03-20")


def _fixed_ids(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Make memory and result ids a counter (uuid4 otherwise), restarted by the returned
    function, so that two stores saving the same corpus hold the same ids."""
    import uuid

    counter = [0]

    def fake_uuid4() -> uuid.UUID:
        counter[0] += 1
        return uuid.UUID(int=counter[0])

    monkeypatch.setattr(uuid, "uuid4", fake_uuid4)
    monkeypatch.setattr("graphmem.items.uuid4", fake_uuid4)

    def restart() -> None:
        counter[0] = 0

    return restart


def patterns(declared: dict[str, str]) -> list[dict[str, str]]:
    return [{"label": label, "pattern": name} for name, label in sorted(declared.items())]


@pytest.mark.slow  # a long property run: 12 stores saved, declared and reanalysed (~20 s)
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(declared=st.dictionaries(st.sampled_from(NAMES), st.sampled_from(LABELS), max_size=5))
def test_reanalyse_after_declaring_equals_declaring_first(
    declared: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    restart = _fixed_ids(monkeypatch)
    later = SQLiteStorage()
    save_corpus(later)
    if declared:
        EntityMemory(storage=later).declare_entities(patterns(declared))
    reanalysed = EntityMemory(storage=later).reanalyse()
    restart()
    first = SQLiteStorage()
    if declared:
        EntityMemory(storage=first).declare_entities(patterns(declared))
    save_corpus(first)
    assert reanalysed == len(RECORDS) + len(TASKS) + 1  # the short-term lines are not indexed
    assert normalised_export(later) == normalised_export(first)


def test_the_comparison_sees_a_declaration(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``reanalyse`` the two stores differ (the comparison can fail)."""
    restart = _fixed_ids(monkeypatch)
    later = SQLiteStorage()
    save_corpus(later)
    EntityMemory(storage=later).declare_entities(patterns({"Orion": "PROJECT"}))
    restart()
    first = SQLiteStorage()
    EntityMemory(storage=first).declare_entities(patterns({"Orion": "PROJECT"}))
    save_corpus(first)
    assert normalised_export(later) != normalised_export(first)
    EntityMemory(storage=later).reanalyse()
    assert normalised_export(later) == normalised_export(first)


def _user_made(storage: SQLiteStorage) -> tuple[EntityMemory, int]:
    memory = EntityMemory(storage=storage)
    memory.save("Bob Stone works at Initech. Mira Solano joined Kestrel.", timestamp="2026-01-05")
    memory.save("Robert Stone signed the Initech renewal.", timestamp="2026-01-06")
    merge_id = memory.merge_entities("Bob Stone", "Robert Stone")
    memory.add_relation("Dana Scott", "mentors", "Bob Stone")
    memory.add_relation("Mira Solano", "advises", "Initech", object_label="ORG")
    memory.relabel("Kestrel", "ORG")
    return memory, merge_id


def test_merges_manual_relations_and_relabels_survive(tmp_path: Path) -> None:
    storage = SQLiteStorage(tmp_path / "m.db")
    memory, merge_id = _user_made(storage)
    ids = sorted(i.memory_id for i in memory.search(""))
    mentors_before = memory.find(predicate="mentors")[0]
    assert memory.reanalyse() == 2
    assert sorted(i.memory_id for i in memory.search("")) == ids
    assert memory.get_entity("Robert Stone").name == "Bob Stone"  # type: ignore[union-attr]
    [mentors] = memory.find(predicate="mentors")
    assert (mentors.subject, mentors.object, mentors.support) == ("Dana Scott", "Bob Stone", 1)
    assert mentors.first_seen == mentors_before.first_seen  # its time is kept
    assert [e.rule for e in mentors.evidence] == ["manual"]
    [advises] = memory.find(predicate="advises")
    assert (advises.subject, advises.object) == ("Mira Solano", "Initech")
    assert memory.get_entity("Kestrel").label == "ORG"  # type: ignore[union-attr]
    # The relabel applies while the texts are read: "joined" an ORG is a job.
    assert ("Mira Solano", "Kestrel") in [
        (e.subject, e.object) for e in memory.find(predicate="works_at")
    ]
    again = normalised_export(storage)
    assert memory.reanalyse() == 2
    assert normalised_export(storage) == again  # idempotent
    memory.unmerge(merge_id)  # the renewed snapshot restores both
    assert memory.get_entity("Robert Stone").name == "Robert Stone"  # type: ignore[union-attr]
    assert memory.get_entity("Bob Stone").name == "Bob Stone"  # type: ignore[union-attr]
    with pytest.raises(InvalidArgumentError, match="already undone"):
        memory.unmerge(merge_id)
    storage.close()


def test_a_merge_whose_end_is_gone_is_retired() -> None:
    storage = SQLiteStorage()
    memory = EntityMemory(storage=storage)
    memory.save("Bob Stone works at Initech.")
    memory.save("Robert Stone signed the Initech renewal.")
    merge_id = memory.merge_entities("Bob Stone", "Robert Stone")
    # Declared a place, "Robert Stone" may not be one entity with the person any more.
    memory.declare_entities([{"label": "GPE", "pattern": "Robert Stone"}])
    memory.reanalyse()
    assert memory.get_entity("Robert Stone").label == "GPE"  # type: ignore[union-attr]
    assert memory.get_entity("Bob Stone").label == "PERSON"  # type: ignore[union-attr]
    with pytest.raises(InvalidArgumentError, match="already undone"):
        memory.unmerge(merge_id)


def test_one_tenant_only_and_bad_arguments() -> None:
    storage = SQLiteStorage()
    alice = EntityMemory(storage=storage, tenant="alice")
    shared = EntityMemory(storage=storage)
    alice.save("Mira Solano joined Kestrel.")
    shared.save("Tom Becker joined Kestrel.")
    shared.save("Priya Nair joined Kestrel.")
    assert shared.reanalyse(user_id="alice") == 1
    assert alice.reanalyse() == 1
    assert shared.reanalyse(user_id="") == 2
    assert shared.reanalyse() == 3
    assert shared.reanalyse(user_id="nobody") == 0  # a user with nothing stored
    with storage.database.read() as conn:
        assert reanalysis_rows.read_plan(conn) is None
        assert "nobody" not in (reanalysis_rows.read_versions(conn) or {})["tenants"]
    with pytest.raises(InvalidArgumentError, match="does not match"):
        alice.reanalyse(user_id="bob")
    with pytest.raises(InvalidArgumentError, match="batch_size"):
        shared.reanalyse(batch_size=0)
    with pytest.raises(TypeError, match="batch_size"):
        shared.reanalyse(batch_size="2")  # type: ignore[arg-type]


def test_an_updated_text_is_analysed_as_updated() -> None:
    memory = EntityMemory()
    item = memory.save("Tom Becker joined Harbor Analytics.", entities=["Tom Becker"])
    memory.update(item.memory_id, {"content": "Tom Becker joined Kestrel Robotics."})
    memory.reanalyse()
    assert sorted(n for n in memory.entities) == ["Kestrel Robotics", "Tom Becker"]


# ---------------------------------------------------------------------- the version
def _versions(path: Path) -> Any:
    conn = sqlite3.connect(path)
    try:
        row = conn.execute(
            "SELECT value FROM graphmem_meta WHERE key = ?",
            (reanalysis_rows.EXTRACTION_VERSION_KEY,),
        ).fetchone()
    finally:
        conn.close()
    return json.loads(row[0]) if row else None


def _set_versions(path: Path, value: Any) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "UPDATE graphmem_meta SET value = ? WHERE key = ?",
            (json.dumps(value), reanalysis_rows.EXTRACTION_VERSION_KEY),
        )
    conn.close()


def test_opening_a_store_of_another_extraction_version_warns(tmp_path: Path) -> None:
    path = tmp_path / "v.db"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        storage = SQLiteStorage(path)  # a new store records the version, and says nothing
    EntityMemory(storage=storage, tenant="alice").save("Tom Becker joined Kestrel.")
    storage.close()
    assert _versions(path) == {"default": extraction_version(), "tenants": {}}
    _set_versions(path, {"default": "0.old", "tenants": {}})
    with pytest.warns(ReanalysisWarning, match=r"extraction version 0\.old.*graphmem reanalyse"):
        storage = SQLiteStorage(path)
    EntityMemory(storage=storage).reanalyse(user_id="alice")  # the only tenant: current now
    storage.close()
    assert _versions(path) == {"default": "0.old", "tenants": {"alice": extraction_version()}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        storage = SQLiteStorage(path)
    EntityMemory(storage=storage).reanalyse()
    storage.close()
    assert _versions(path) == {"default": extraction_version(), "tenants": {}}


# ---------------------------------------------------------------------- killed part way
_CHILD = """
import sys
sys.path.insert(0, {root!r})
from graphmem import EntityMemory, SQLiteStorage
storage = SQLiteStorage({path!r})
print("ready", flush=True)
EntityMemory(storage=storage).reanalyse(batch_size=1)
print("done", flush=True)
"""


def _plan_progress(path: Path) -> int | None:
    """How far the re-analysis plan of the file got (None: no plan)."""
    conn = sqlite3.connect(path, timeout=30)
    try:
        row = conn.execute(
            "SELECT value FROM graphmem_meta WHERE key = ?", (reanalysis_rows.REANALYSIS_KEY,)
        ).fetchone()
    finally:
        conn.close()
    if row is None:
        return None
    current = json.loads(row[0])["current"]
    return current["after"] if current else 0


@pytest.mark.parametrize("kill_after", [1, 4])
def test_a_killed_reanalysis_is_completed_by_the_next(tmp_path: Path, kill_after: int) -> None:
    path = tmp_path / "k.db"
    storage = SQLiteStorage(path)
    memory = EntityMemory(storage=storage)
    for n, (name, org) in enumerate(
        [("Tom Becker", "Kestrel"), ("Priya Nair", "Orion"), ("Dana Whitfield", "Harbor")] * 3
    ):
        memory.save(
            f"{name} joined {org} Robotics in Berlin. Item {n}.", timestamp=f"2026-02-{n + 1:02d}"
        )
    memory.merge_entities("Tom Becker", "Priya Nair")
    memory.add_relation("Dana Whitfield", "mentors", "Tom Becker")
    memory.declare_entities([{"label": "PROJECT", "pattern": "Orion Robotics"}])
    storage.close()
    clean = tmp_path / "clean.db"
    for suffix in ("", "-wal"):
        if Path(f"{path}{suffix}").exists():
            shutil.copy(f"{path}{suffix}", f"{clean}{suffix}")
    clean_storage = SQLiteStorage(clean)
    EntityMemory(storage=clean_storage).reanalyse()
    expected = normalised_export(clean_storage)
    clean_storage.close()

    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD.format(root=str(ROOT), path=str(path))],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 300
        while (_plan_progress(path) or 0) < kill_after and child.poll() is None:
            assert time.monotonic() < deadline, "the re-analysis made no progress"
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    assert child.returncode == -signal.SIGKILL
    done = _plan_progress(path)  # the child may finish a batch or two after the poll saw one
    assert done is not None and done >= kill_after  # cut short: the plan is still there
    with pytest.warns(ReanalysisWarning, match="interrupted"):
        storage = SQLiteStorage(path)
    memory = EntityMemory(storage=storage)
    assert len(memory.graph) > 0  # the half-done store opens and answers
    assert memory.reanalyse() >= 9 - done
    assert _plan_progress(path) is None
    assert normalised_export(storage) == expected
    storage.close()


# ---------------------------------------------------------------------- older files
@pytest.mark.parametrize("version", [1, 2, 4], ids=lambda v: f"schema_v{v}")
def test_older_files_record_how_their_texts_were_indexed(tmp_path: Path, version: int) -> None:
    path = tmp_path / "old.db"
    shutil.copy(DATA / f"schema_v{version}" / f"schema_v{version}.db", path)
    expected = json.loads(
        (DATA / f"schema_v{version}" / f"schema_v{version}_expected.json").read_text()
    )
    with pytest.warns(ReanalysisWarning, match="an older graphmem"):
        storage = SQLiteStorage(path)
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT m.namespace, t.analysis, t.listed_in FROM memories m JOIN texts t "
            "ON t.id = m.text_id ORDER BY m.seq"
        ).fetchall()
    finally:
        conn.close()
    by_namespace: dict[str, tuple[int, str | None]] = {}  # each tier's first item
    for namespace, analysis, listed in rows:
        by_namespace.setdefault(namespace, (analysis, listed))
    assert by_namespace["entity"] == (2, '["entity"]')
    assert by_namespace["user.entity"] == (2, '["user.entity"]')
    assert by_namespace["short_term"] == (0, None)  # Calute's short-term line
    assert by_namespace["user.short_term"] == (1, None)
    # Schema 1 gave each tier its own text; since, the task result is the entity tier's.
    assert by_namespace["contextual.long_term"] == (
        (1, None) if version == 1 else (2, '["entity"]')
    )
    memory = EntityMemory(storage=storage)
    items = sorted((ns, [i[0] for i in expected["items"][ns]]) for ns in expected["items"])
    assert memory.reanalyse() > 0
    assert memory.get_entity("Robert Stone").name == "Bob Stone"  # type: ignore[union-attr]
    assert [(e.subject, e.object) for e in memory.find(predicate="mentors")] == [
        ("Dana Scott", "Alice Johnson")
    ]
    with storage.database.read() as conn2:
        stored = {
            ns: [i.memory_id for _, i in memory_rows.list_items(conn2, [ns])] for ns, _ in items
        }
    assert sorted(stored.items()) == items
    memory.unmerge(expected["merge_id"])
    assert memory.get_entity("Robert Stone").name == "Robert Stone"  # type: ignore[union-attr]
    storage.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SQLiteStorage(path).close()


# ---------------------------------------------------------------------- both backends
def test_reanalyse_on_both_backends(storage_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    declared = patterns({"Orion": "PROJECT", "Platform Team": "TEAM", "Berlin": "ORG"})
    restart = _fixed_ids(monkeypatch)
    later = SQLiteStorage(storage_url)
    save_corpus(later)
    EntityMemory(storage=later).declare_entities(declared)
    assert EntityMemory(storage=later).reanalyse(batch_size=2) == 6
    restart()
    first = SQLiteStorage()
    EntityMemory(storage=first).declare_entities(declared)
    save_corpus(first)
    assert normalised_export(later) == normalised_export(first)
    first.close()
    users = EntityMemory(storage=later, tenant="u")  # merges and hand-made rows, on this backend
    users.save("Bob Stone works at Initech.")
    users.save("Robert Stone signed the Initech renewal.")
    merge_id = users.merge_entities("Bob Stone", "Robert Stone")
    users.add_relation("Dana Scott", "mentors", "Bob Stone")
    assert users.reanalyse() == 2
    assert users.get_entity("Robert Stone").name == "Bob Stone"  # type: ignore[union-attr]
    assert [(e.subject, e.object) for e in users.find(predicate="mentors")] == [
        ("Dana Scott", "Bob Stone")
    ]
    users.unmerge(merge_id)
    assert users.get_entity("Robert Stone").name == "Robert Stone"  # type: ignore[union-attr]
    later.close()


# ---------------------------------------------------------------------- the command
def test_cli_declare_hints_and_reanalyse_applies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from graphmem.cli import main

    db = str(tmp_path / "c.db")
    notes = tmp_path / "notes.txt"
    notes.write_text("Mira Solano joined Kestrel in May.\n", encoding="utf-8")
    types = tmp_path / "types.jsonl"
    types.write_text('{"label": "ORG", "pattern": "Kestrel"}\n', encoding="utf-8")
    assert main(["--db", db, "ingest", str(notes), "--no-progress"]) == 0
    assert main(["--db", db, "declare", str(types)]) == 0
    assert "`graphmem reanalyse` reads the stored ones again" in capsys.readouterr().out
    assert main(["--db", db, "reanalyse", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "Reanalysed 1 texts (of every user)" in out and "(1 typed)" in out
    assert main(["--db", db, "relations", "Mira Solano"]) == 0
    assert "Mira Solano --works_at--> Kestrel" in capsys.readouterr().out
    _set_versions(Path(db), {"default": "0.old", "tenants": {}})
    with warnings.catch_warnings():  # whatever filters the run was given
        warnings.simplefilter("always", ReanalysisWarning)
        assert main(["--db", db, "entities"]) == 0
    warning = capsys.readouterr().err
    assert warning.startswith("graphmem: warning: ") and "graphmem reanalyse" in warning
    assert len(warning.strip().splitlines()) == 1
    assert main(["--db", db, "reanalyse", "--user", "", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "(of the shared memories)" in captured.out and captured.err == ""
