"""Support counting: deleting memories removes their evidence and mentions; a relation or
entity left with no support disappears, in the graph view and in the tables. The facade's
``delete``, ``update`` and ``forget`` take the ids its saves return, across every tier."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from graphmem import CortexMemory
from graphmem.compat.storage import SQLiteStorage
from graphmem.errors import InvalidArgumentError, InvalidArgumentTypeError, MemoryNotFound
from graphmem.memories.entity import EntityMemory
from graphmem.store import memory_rows, schema


def _count(storage: SQLiteStorage, table: schema.Table) -> int:
    with storage.database.read() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def _works_at(memory: EntityMemory) -> list[tuple[str, str, int]]:
    return [(e.subject, e.object, e.support) for e in memory.find(predicate="works_at")]


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[EntityMemory]:
    storage = SQLiteStorage(tmp_path / "forget.db")
    yield EntityMemory(storage=storage)
    storage.close()


def test_relation_lives_while_one_memory_supports_it(memory: EntityMemory) -> None:
    first = memory.save("Dana Scott works at Northwind.")
    second = memory.save("Dana Scott works at Northwind, as she told us.")
    assert _works_at(memory) == [("Dana Scott", "Northwind", 2)]

    assert memory.delete(first.memory_id) == 1
    assert _works_at(memory) == [("Dana Scott", "Northwind", 1)]
    [edge] = memory.find(predicate="works_at")
    assert [ev.memory_id for ev in edge.evidence] == [second.memory_id]
    assert memory.get_entity("Dana Scott").mentions == 1  # type: ignore[union-attr]

    assert memory.delete(second.memory_id) == 1
    assert _works_at(memory) == []
    assert memory.get_entity("Dana Scott") is None
    assert memory.get_entity("Northwind") is None
    assert len(memory.graph) == 0
    for table in (schema.entities, schema.aliases, schema.mentions, schema.relations):
        assert _count(memory.space, table) == 0, table.name
    assert _count(memory.space, schema.relation_evidence) == 0


def test_entity_mentioned_only_in_a_deleted_memory_disappears(memory: EntityMemory) -> None:
    memory.save("Dana Scott works at Northwind.")
    trip = memory.save("Dana Scott visited Erik Lund in Oslo.")
    assert memory.get_entity("Oslo") is not None
    memory.delete(trip.memory_id)
    assert memory.get_entity("Oslo") is None
    assert memory.get_entity("Erik Lund") is None
    assert "Oslo" not in memory.entities
    # Dana is still supported by the first memory, with only that memory's relations.
    assert memory.neighbors("Dana Scott") == {"Northwind": 1}
    assert memory.get_related_entities("Dana Scott") == {"Northwind"}


def test_hand_added_relation_survives_deletions(memory: EntityMemory) -> None:
    item = memory.save("Dana Scott works at Northwind.")
    memory.add_relation("Dana Scott", "mentors", "Priya Patel")
    memory.delete(item.memory_id)
    assert memory.get_entity("Northwind") is None
    [edge] = memory.find(predicate="mentors")
    assert (edge.subject, edge.object, edge.support) == ("Dana Scott", "Priya Patel", 1)
    assert [(ev.memory_id, ev.rule) for ev in edge.evidence] == [(None, "manual")]
    assert memory.get_entity("Dana Scott") is not None
    assert memory.get_entity("Priya Patel") is not None
    # Even when the hand-named entity's every memory goes.
    memory.save("Priya Patel joined Northwind.")
    memory.delete(filters={"memory_type": "entity"})
    assert len(memory) == 0
    assert [(e.subject, e.predicate) for e in memory.find(object="Priya Patel")] == [
        ("Dana Scott", "mentors")
    ]
    assert memory.get_entity("Northwind") is None


def test_delete_by_filter_forgets_all_rows(memory: EntityMemory) -> None:
    memory.save("Dana Scott works at Northwind.", agent_id="a")
    memory.save("Bob Stone lives in Paris.", agent_id="b")
    assert memory.delete(filters={"agent_id": "a"}) == 1
    assert memory.get_entity("Northwind") is None
    assert [e.object for e in memory.find(predicate="lives_in")] == ["Paris"]


def test_update_reindexes(memory: EntityMemory) -> None:
    item = memory.save("Dana Scott works at Northwind.")
    assert memory.update(item.memory_id, {"content": "Dana Scott works at Harbor Bank."})
    assert memory.get_entity("Northwind") is None
    assert _works_at(memory) == [("Dana Scott", "Harbor Bank", 1)]
    [edge] = memory.find(predicate="works_at")
    assert [ev.sentence for ev in edge.evidence] == ["Dana Scott works at Harbor Bank."]


def test_forgetting_persists(tmp_path: Path) -> None:
    path = tmp_path / "persist.db"
    storage = SQLiteStorage(path)
    memory = EntityMemory(storage=storage)
    keep = memory.save("Dana Scott works at Northwind.")
    gone = memory.save("Bob Stone lives in Paris.")
    memory.delete(gone.memory_id)
    storage.close()
    storage = SQLiteStorage(path)
    reopened = EntityMemory(storage=storage)
    assert reopened.get_entity("Paris") is None
    assert reopened.find(predicate="lives_in") == []
    [edge] = reopened.find(predicate="works_at")
    assert [ev.memory_id for ev in edge.evidence] == [keep.memory_id]
    storage.close()


# ---------------------------------------------------------------------- the facade
def _tier_contents(memory: CortexMemory) -> dict[str, list[str]]:
    return {
        name: sorted(i.content for i in tier._all_items()) for name, tier in memory._tiers().items()
    }


def _result_ids(memory: CortexMemory) -> dict[str, str]:
    """Memory id -> result id of every stored item."""
    with memory._space.database.read() as conn:
        rows = conn.exec_driver_sql("SELECT memory_id, result_id FROM memories").all()
    return {str(m): str(r) for m, r in rows}


@pytest.fixture
def cortex() -> CortexMemory:
    return CortexMemory(enable_user=True)


class TestFacadeIds:
    def test_each_save_returns_one_id_naming_all_it_wrote(self, cortex: CortexMemory) -> None:
        task = cortex.save_task_result(
            "Record the new hire", "Maya Lindqvist joined Lumen Robotics.", "HR", importance=0.9
        )
        interaction = cortex.save_agent_interaction("Sales", "called", "Acme", importance=0.8)
        decision = cortex.save_cortex_decision("Assign Atlas", "Maya knows Atlas")
        ids = _result_ids(cortex)
        by_result: dict[str, int] = {}
        for result in ids.values():
            by_result[result] = by_result.get(result, 0) + 1
        # short-term, long-term, entity, contextual; short- and long-term; long-term, contextual
        assert by_result == {task: 4, interaction: 2, decision: 2}
        assert len({task, interaction, decision}) == 3

    def test_batch_returns_ids_in_order(self, cortex: CortexMemory) -> None:
        ids = cortex.save_task_results(
            [
                {"task_description": "Audit", "result": f"Step {n} passed", "agent_role": "QA"}
                for n in range(3)
            ],
            batch_size=2,
        )
        assert len(set(ids)) == 3
        for n, result in enumerate(ids):
            with cortex._space.database.read() as conn:
                rows = memory_rows.result_rows(conn, [result])
            assert {item.content for _, item in rows} >= {f"Step {n} passed"}


class TestFacadeDelete:
    def test_delete_removes_the_result_from_every_tier_and_the_graph(
        self, cortex: CortexMemory
    ) -> None:
        keep = cortex.save_task_result("Note", "Dana Scott lives in Oslo.", "HR", importance=0.9)
        gone = cortex.save_task_result(
            "Record the new hire", "Dana Scott joined Northwind in Paris.", "HR", importance=0.9
        )
        before = _tier_contents(cortex)
        assert all(len(v) == 2 for v in before.values() if v), before
        entities = cortex.entity_memory
        assert entities is not None
        assert entities.get_entity("Dana Scott").mentions == 2  # type: ignore[union-attr]

        assert cortex.delete(gone) is True
        after = _tier_contents(cortex)
        for name, contents in after.items():
            assert not any("Northwind" in c for c in contents), name
            assert len(contents) == (1 if before[name] else 0), name
        assert set(_result_ids(cortex).values()) == {keep}
        # Evidence and entities only the deleted result supported are gone; Dana stays,
        # supported by the other result only.
        assert entities.get_entity("Northwind") is None
        assert entities.get_entity("Paris") is None
        assert entities.find(predicate="works_at") == []
        assert entities.get_entity("Dana Scott").mentions == 1  # type: ignore[union-attr]
        [lives] = entities.find(predicate="lives_in")
        assert (lives.subject, lives.object, lives.support) == ("Dana Scott", "Oslo", 1)
        assert "Northwind" not in cortex.build_context_for_task("Where does Dana work?")
        assert cortex.delete(gone) is False

    def test_delete_takes_the_promoted_copy_too(self) -> None:
        memory = CortexMemory(enable_short_term=False)
        rid = memory.save_task_result("Audit", "Acme passed the audit", "QA", importance=0.5)
        for _ in range(4):  # promoted to contextual long-term after 3 accesses
            memory.search("Acme audit")
        assert len(memory.contextual.long_term) == 1
        assert memory.delete(rid)
        assert len(memory.contextual.long_term) == len(memory.contextual.short_term) == 0

    def test_delete_of_a_tier_save_by_its_memory_id(self, cortex: CortexMemory) -> None:
        assert cortex.long_term is not None
        item = cortex.long_term.save("Bob Stone lives in Paris.")
        assert cortex.delete(item.memory_id) is True
        assert len(cortex.long_term) == 0

    @pytest.mark.parametrize("bad", [None, 3, "", "   "])
    def test_bad_ids_are_named_errors(self, cortex: CortexMemory, bad: object) -> None:
        with pytest.raises((InvalidArgumentError, InvalidArgumentTypeError)):
            cortex.delete(bad)  # type: ignore[arg-type]

    def test_deletion_persists(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("WRITE_MEMORY", "1")
        path = str(tmp_path / "facade.db")
        memory = CortexMemory(persistence_path=path)
        gone = memory.save_task_result("Hire", "Erik Lund joined Initech.", "HR", importance=0.9)
        memory.save_task_result("Trip", "Dana Scott visited Oslo.", "HR", importance=0.9)
        assert memory.delete(gone)
        memory.storage.close()  # type: ignore[union-attr]
        reopened = CortexMemory(persistence_path=path)
        try:
            assert reopened.entity_memory.get_entity("Initech") is None  # type: ignore[union-attr]
            assert [i.content for i in reopened.long_term.search("")] == [  # type: ignore[union-attr]
                "Dana Scott visited Oslo."
            ]
        finally:
            reopened.storage.close()  # type: ignore[union-attr]


class TestFacadeUpdate:
    def test_update_replaces_the_evidence_and_keeps_the_ids(self, cortex: CortexMemory) -> None:
        cortex.save_task_result("Note", "Dana Scott lives in Oslo.", "HR")
        rid = cortex.save_task_result(
            "Record the new hire",
            "Dana Scott joined Northwind.",
            "HR",
            importance=0.9,
            task_metadata={"conversation_id": "c1", "ticket": 7},
            timestamp="2025-03-03T09:00:00+00:00",
        )
        ids = {m for m, r in _result_ids(cortex).items() if r == rid}
        assert cortex.update(rid, result="Dana Scott joined Harbor Bank.") == rid
        assert {m for m, r in _result_ids(cortex).items() if r == rid} == ids
        entities = cortex.entity_memory
        assert entities is not None
        assert entities.get_entity("Northwind") is None
        [edge] = entities.find(predicate="works_at")
        assert (edge.subject, edge.object, edge.support) == ("Dana Scott", "Harbor Bank", 1)
        assert [ev.sentence for ev in edge.evidence] == ["Dana Scott joined Harbor Bank."]
        assert edge.valid_from == "2025-03-03T09:00:00+00:00"  # the result's time is kept
        assert entities.get_entity("Dana Scott").mentions == 2  # type: ignore[union-attr]
        [item] = [i for i in cortex.long_term.search("") if "Harbor" in i.content]  # type: ignore[union-attr]
        assert item.metadata["ticket"] == 7 and item.conversation_id == "c1"
        assert item.metadata["task"] == "Record the new hire"

    def test_importance_moves_the_result_between_tiers(self, cortex: CortexMemory) -> None:
        assert cortex.long_term is not None
        rid = cortex.save_task_result("Audit", "Acme passed the audit", "QA", importance=0.3)
        assert len(cortex.long_term) == 0
        cortex.update(rid, importance=0.9)
        assert [i.content for i in cortex.long_term.search("")] == ["Acme passed the audit"]
        assert len(cortex.contextual.long_term) == 1 and len(cortex.contextual.short_term) == 0
        cortex.update(rid, task_description="Audit Acme", importance=0.2)
        assert len(cortex.long_term) == 0
        [entity_item] = cortex.entity_memory.search("")  # type: ignore[union-attr]
        assert entity_item.content == "Audit Acme Acme passed the audit"

    def test_update_errors(self, cortex: CortexMemory) -> None:
        with pytest.raises(MemoryNotFound, match="no result 'nope'"):
            cortex.update("nope", result="x")
        interaction = cortex.save_agent_interaction("Sales", "called", "Acme", importance=0.8)
        with pytest.raises(InvalidArgumentError, match="not a task result"):
            cortex.update(interaction, result="x")
        rid = cortex.save_task_result("Audit", "Acme passed", "QA")
        before = _tier_contents(cortex)
        with pytest.raises(InvalidArgumentError, match="importance"):
            cortex.update(rid, importance=3)
        assert _tier_contents(cortex) == before  # nothing written on error


class TestFacadeForget:
    def test_forget_by_each_filter(self, cortex: CortexMemory) -> None:
        for n, agent in enumerate(["QA", "QA", "Sales"]):
            cortex.save_task_result(
                "Audit",
                f"Acme audit step {n} passed",
                agent,
                task_metadata={"conversation_id": f"c{n % 2}", "task_id": f"t{n}"},
                timestamp=f"2025-03-0{n + 1}T09:00:00",
            )
        assert cortex.forget(task_id="t2") == 1
        assert cortex.forget(conversation_id="c1") == 1
        assert cortex.forget(agent_role="Sales") == 0
        left = _tier_contents(cortex)
        assert left["entity"] == ["Audit Acme audit step 0 passed"]
        assert cortex.forget(before="2025-03-01T10:00:00") == 1
        assert all(v == [] for v in _tier_contents(cortex).values())
        assert len(cortex.entity_memory.graph) == 0  # type: ignore[union-attr]

    def test_forget_a_user(self, cortex: CortexMemory) -> None:
        assert cortex.user_memory is not None
        cortex.user_memory.save_memory("alice", "Alice Johnson likes Kubernetes.")
        cortex.user_memory.save_memory("bob", "Bob Stone likes Rust.")
        cortex.save_task_result("Audit", "Acme passed", "QA")
        assert cortex.forget(user_id="alice") == 2  # her contextual and entity saves
        assert cortex.user_memory.search_user_memory("alice", "Kubernetes") == []
        assert [i.content for i in cortex.user_memory.search_user_memory("bob", "Rust")] == [
            "Bob Stone likes Rust."
        ]
        assert len(cortex.contextual) == 1

    def test_forget_needs_a_filter(self, cortex: CortexMemory) -> None:
        cortex.save_task_result("Audit", "Acme passed", "QA")
        with pytest.raises(InvalidArgumentError, match="at least one filter"):
            cortex.forget()
        with pytest.raises(InvalidArgumentError, match="ISO 8601"):
            cortex.forget(before="last week")
        assert len(cortex.contextual) == 1


# ---------------------------------------------------------------------- both backends
def test_ids_keys_and_forgetting_on_each_backend(
    storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WRITE_MEMORY", "1")
    memory = CortexMemory(persistence_path=storage_url)
    try:
        keep = memory.save_task_result("Note", "Dana Scott lives in Oslo.", "HR", importance=0.9)
        gone = memory.save_task_result(
            "Hire", "Dana Scott joined Northwind.", "HR", importance=0.9, dedupe_key="hire-1"
        )
        assert memory.save_task_result("Hire", "x", "HR", dedupe_key="hire-1") == gone
        assert memory.delete(gone) is True
        entities = memory.entity_memory
        assert entities is not None and entities.get_entity("Northwind") is None
        assert entities.get_entity("Dana Scott").mentions == 1  # type: ignore[union-attr]
        assert memory.update(keep, result="Dana Scott lives in Paris.") == keep
        assert [e.object for e in entities.find(predicate="lives_in")] == ["Paris"]
        assert memory.forget(agent_role="HR") == 1
        assert len(entities.graph) == 0 and len(memory.contextual) == 0
    finally:
        memory.storage.close()  # type: ignore[union-attr]


def test_schema_2_database_upgrades_on_each_backend(storage_url: str) -> None:
    """A schema-2 database (made here: the current schema without the two columns of schema 3)
    opens as the current schema;
    each item's result id is the first item of its text, and it has no key."""
    storage = SQLiteStorage(storage_url)
    entity = EntityMemory(storage=storage)
    first = entity.save("Dana Scott works at Northwind.")
    second = entity.save("Bob Stone lives in Paris.")
    with storage.database.write() as conn:
        for sql in (
            "DROP INDEX ix_memories_result",
            "DROP INDEX ix_memories_dedupe",
            "ALTER TABLE memories DROP COLUMN result_id",
            "ALTER TABLE memories DROP COLUMN dedupe_key",
            "UPDATE graphmem_meta SET value = '2' WHERE key = 'schema_version'",
        ):
            conn.exec_driver_sql(sql)
    storage.close()
    storage = SQLiteStorage(storage_url)
    try:
        with storage.database.read() as conn:
            rows = conn.exec_driver_sql(
                "SELECT memory_id, result_id, dedupe_key FROM memories ORDER BY seq"
            ).all()
            version = conn.exec_driver_sql(
                "SELECT value FROM graphmem_meta WHERE key = 'schema_version'"
            ).scalar()
        assert [tuple(r) for r in rows] == [
            (first.memory_id, first.memory_id, None),
            (second.memory_id, second.memory_id, None),
        ]
        assert version == str(schema.SCHEMA_VERSION)
    finally:
        storage.close()
