"""Opening a database (or importing an export) of an older schema loses nothing.

The fixtures in tests/data/schema_v1 were written by the last release with schema 1 (see its
README), with what that release read back from them.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from graphmem import EntityMemory, LongTermMemory, SQLiteStorage
from graphmem.store.schema import SCHEMA_VERSION
from graphmem.transfer import import_jsonl

DATA = Path(__file__).parent / "data" / "schema_v1"
EXPECTED: dict[str, Any] = json.loads((DATA / "schema_v1_expected.json").read_text())
NAMESPACES = sorted(EXPECTED["items"])


@pytest.fixture
def old_file(tmp_path: Path) -> Path:
    path = tmp_path / "old.db"
    shutil.copy(DATA / "schema_v1.db", path)
    return path


def _stored_version(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(
            conn.execute("SELECT value FROM graphmem_meta WHERE key = 'schema_version'").fetchone()[
                0
            ]
        )
    finally:
        conn.close()


def _contents(storage: SQLiteStorage) -> dict[str, Any]:
    """What the fixture's expectations list, read through the current code."""
    db = storage.database
    with db.read() as conn:
        items = {
            ns: [[i.memory_id, i.content, i.metadata] for _, i in db.list_items(conn, [ns])]
            for ns in NAMESPACES
        }
    kg = storage.entity_index.graph("")
    edges = sorted(
        [kg.name_of(u), k, kg.name_of(v), d["support"]]
        for u, v, k, d in kg.graph.edges(keys=True, data=True)
    )
    entities = sorted([d["name"], d["label"], d["mentions"]] for _, d in kg.graph.nodes(data=True))
    evidence = {
        f"{e.subject} {e.predicate} {e.object}": [
            [x.memory_id, x.sentence, x.rule] for x in e.evidence
        ]
        for e in kg.find(evidence=True)
        if e.predicate != "co_occurs"
    }
    return {"items": items, "edges": edges, "entities": entities, "typed_evidence": evidence}


def test_fixture_is_schema_1() -> None:
    assert _stored_version(DATA / "schema_v1.db") == 1
    assert SCHEMA_VERSION == 3


def test_opening_migrates_and_loses_nothing(old_file: Path) -> None:
    storage = SQLiteStorage(old_file)
    try:
        found = _contents(storage)
        assert found["items"] == EXPECTED["items"]
        assert found["edges"] == EXPECTED["edges"]
        assert found["entities"] == EXPECTED["entities"]
        assert found["typed_evidence"] == EXPECTED["typed_evidence"]
        assert storage.load("note") == {"k": [1, 2]}
        # The full-text index was rebuilt over the migrated texts.
        hits = LongTermMemory(storage=storage).search_hits("Acme Berlin")
        lexical = [
            (h.item.content, h.explanation.matched_terms) for h in hits if h.explanation.lexical
        ]
        assert lexical == [
            ("Alice Johnson joined Acme Corp in Berlin as CTO.", ["acme", "berlin"]),
            (
                "Decision: Assign Atlas to Alice\nContext: Alice Johnson knows Berlin\nOutcome: Accepted",
                ["berlin"],
            ),
        ]
    finally:
        storage.close()
    assert _stored_version(old_file) == SCHEMA_VERSION
    conn = sqlite3.connect(old_file)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert "memories_fts" not in tables and "texts_fts" in tables
    finally:
        conn.close()


def test_migrated_file_reopens_and_keeps_working(old_file: Path) -> None:
    SQLiteStorage(old_file).close()
    storage = SQLiteStorage(old_file)
    try:
        assert _contents(storage)["edges"] == EXPECTED["edges"]
        memory = EntityMemory(storage=storage)
        # The merge logged by schema 1 is undone from its converted snapshot.
        assert memory.get_entity("Robert Stone").name == "Bob Stone"  # type: ignore[union-attr]
        memory.unmerge(EXPECTED["merge_id"])
        assert memory.get_entity("Robert Stone").name == "Robert Stone"  # type: ignore[union-attr]
        item = memory.save("Carol Diaz works at Initech.")
        assert [
            (e.subject, e.object) for e in memory.find(predicate="works_at", object="Initech")
        ] == [("Carol Diaz", "Initech")]
        assert memory.delete(item.memory_id) == 1
        assert memory.get_entity("Carol Diaz") is None
    finally:
        storage.close()


def test_schema_1_export_imports(tmp_path: Path) -> None:
    target = SQLiteStorage(tmp_path / "imported.db")
    try:
        counts = import_jsonl(target.database, DATA / "schema_v1_export.jsonl")
        assert counts["memories"] == sum(len(v) for v in EXPECTED["items"].values())
        found = _contents(target)
        assert found["items"] == EXPECTED["items"]
        assert found["edges"] == EXPECTED["edges"]
        assert found["entities"] == EXPECTED["entities"]
        assert found["typed_evidence"] == EXPECTED["typed_evidence"]
    finally:
        target.close()
