"""Opening a database (or importing an export) of an older schema loses nothing.

The fixtures in tests/data/schema_v1, schema_v2 and schema_v4 were written by the last
release with that schema (see their READMEs), with what that release read back from them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from graphmem import CortexMemory, EntityMemory, LongTermMemory, SQLiteStorage
from graphmem.store import memory_rows
from graphmem.store.engine import SQLITE_MODULE as sqlite3  # the SQLite graphmem runs on
from graphmem.store.schema import SCHEMA_VERSION
from graphmem.transfer import import_jsonl

DATA = Path(__file__).parent / "data"
OLD_VERSIONS = [1, 2, 4]
#: Schemas before result ids (their items get the memory id of their text's first item).
BEFORE_RESULT_IDS = [1, 2]


def _fixture(version: int, suffix: str) -> Path:
    return DATA / f"schema_v{version}" / f"schema_v{version}{suffix}"


def _expected(version: int) -> dict[str, Any]:
    return json.loads(_fixture(version, "_expected.json").read_text())


EXPECTED = _expected(1)  # both fixtures hold the same content
NAMESPACES = sorted(EXPECTED["items"])


@pytest.fixture(params=OLD_VERSIONS, ids=lambda v: f"schema_v{v}")
def version(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.fixture
def old_file(tmp_path: Path, version: int) -> Path:
    path = tmp_path / "old.db"
    shutil.copy(_fixture(version, ".db"), path)
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
            ns: [
                [i.memory_id, i.content, i.metadata] for _, i in memory_rows.list_items(conn, [ns])
            ]
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


def test_fixtures_are_of_older_schemas() -> None:
    assert [_stored_version(_fixture(v, ".db")) for v in OLD_VERSIONS] == OLD_VERSIONS
    assert SCHEMA_VERSION == 5


def test_opening_migrates_and_loses_nothing(old_file: Path, version: int) -> None:
    storage = SQLiteStorage(old_file)
    try:
        found = _contents(storage)
        expected = _expected(version)
        assert found["items"] == expected["items"]
        assert found["edges"] == expected["edges"]
        assert found["entities"] == expected["entities"]
        assert found["typed_evidence"] == expected["typed_evidence"]
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


def test_migrated_file_reopens_and_keeps_working(old_file: Path, version: int) -> None:
    SQLiteStorage(old_file).close()
    storage = SQLiteStorage(old_file)
    try:
        expected = _expected(version)
        assert _contents(storage)["edges"] == expected["edges"]
        memory = EntityMemory(storage=storage)
        # The merge logged by the old schema is undone from its (converted) snapshot.
        assert memory.get_entity("Robert Stone").name == "Bob Stone"  # type: ignore[union-attr]
        memory.unmerge(expected["merge_id"])
        assert memory.get_entity("Robert Stone").name == "Robert Stone"  # type: ignore[union-attr]
        item = memory.save("Carol Diaz works at Initech.")
        # (schema 2's rules also read "Bob Stone from Initech" as works_at)
        assert ("Carol Diaz", "Initech") in [
            (e.subject, e.object) for e in memory.find(predicate="works_at", object="Initech")
        ]
        assert memory.delete(item.memory_id) == 1
        assert memory.get_entity("Carol Diaz") is None
    finally:
        storage.close()


def test_old_export_imports(tmp_path: Path, version: int) -> None:
    target = SQLiteStorage(tmp_path / "imported.db")
    try:
        counts = import_jsonl(target.database, _fixture(version, "_export.jsonl"))
        expected = _expected(version)
        assert counts["memories"] == sum(len(v) for v in expected["items"].values())
        found = _contents(target)
        assert found["items"] == expected["items"]
        assert found["edges"] == expected["edges"]
        assert found["entities"] == expected["entities"]
        assert found["typed_evidence"] == expected["typed_evidence"]
        if version in BEFORE_RESULT_IDS:
            assert _result_ids(target) == _result_ids_by_text(target)
    finally:
        target.close()


def _result_ids(storage: SQLiteStorage) -> dict[str, str]:
    """Each item's result id, by memory id."""
    with storage.database.read() as conn:
        rows = conn.exec_driver_sql("SELECT memory_id, result_id FROM memories").all()
    return {str(m): str(r) for m, r in rows}


def _result_ids_by_text(storage: SQLiteStorage) -> dict[str, str]:
    """What an item saved before schema 3 gets as its result id: the memory id of the first
    item showing its text (the items of one text came from one save)."""
    with storage.database.read() as conn:
        rows = conn.exec_driver_sql("SELECT memory_id, text_id FROM memories ORDER BY seq").all()
    first: dict[int, str] = {}
    for memory_id, text_id in rows:
        first.setdefault(int(text_id), str(memory_id))
    return {str(m): first[int(t)] for m, t in rows}


@pytest.mark.parametrize("version", BEFORE_RESULT_IDS, ids=lambda v: f"schema_v{v}")
def test_migrated_items_get_result_ids_and_delete_as_one(old_file: Path, version: int) -> None:
    import os

    storage = SQLiteStorage(old_file)
    try:
        ids = _result_ids(storage)
        assert ids == _result_ids_by_text(storage)
        with storage.database.read() as conn:
            keys = conn.exec_driver_sql(
                "SELECT count(*) FROM memories WHERE dedupe_key IS NOT NULL"
            )
            assert keys.scalar() == 0
    finally:
        storage.close()
    # A schema-2 task result is one text in several tiers: one result, deleted as one.
    os.environ["WRITE_MEMORY"] = "1"
    try:
        memory = CortexMemory(enable_user=True, persistence_path=str(old_file))
    finally:
        del os.environ["WRITE_MEMORY"]
    try:
        [hire] = [i for i in memory.long_term.search("") if "CTO" in i.content]  # type: ignore[union-attr]
        result = ids[hire.memory_id]
        shared = sorted(m for m, r in ids.items() if r == result)
        assert len(shared) == (3 if version == 2 else 1)  # long-term, entity, contextual
        assert memory.delete(result)
        assert not set(shared) & set(_result_ids(memory.storage))  # type: ignore[arg-type]
    finally:
        memory.storage.close()  # type: ignore[union-attr]


def test_a_schema_4_file_gets_label_sources_and_its_old_mentions_still_vote(
    tmp_path: Path,
) -> None:
    """Schema 4 -> 5 adds ``mentions.label_source``: the old mentions keep their labels (they
    count as the model's votes) and new saves record what gave theirs."""
    path = tmp_path / "v4.db"
    shutil.copy(_fixture(4, ".db"), path)
    with sqlite3.connect(path) as raw:
        old_count = raw.execute("SELECT count(*) FROM mentions").fetchone()[0]
    storage = SQLiteStorage(path)
    reopened = EntityMemory(storage=storage)
    before = {d["name"]: d["label"] for _, d in reopened.graph.graph.nodes(data=True)}
    reopened.save("Vantor Dynamics hired Amara Okoye as its new CFO.")
    assert reopened.get_entity("Amara Okoye").label == "PERSON"
    after = {d["name"]: d["label"] for _, d in reopened.graph.graph.nodes(data=True)}
    assert {n: after[n] for n in before} == before  # old votes unchanged by the upgrade
    storage.close()
    with sqlite3.connect(path) as raw:
        version = raw.execute(
            "SELECT value FROM graphmem_meta WHERE key = 'schema_version'"
        ).fetchone()
        sources = raw.execute("SELECT surface, label_source FROM mentions ORDER BY id").fetchall()
    assert version == (str(SCHEMA_VERSION),)
    assert old_count > 0 and {s for _, s in sources[:old_count]} == {None}
    assert ("Amara Okoye", "shape") in sources[old_count:]
