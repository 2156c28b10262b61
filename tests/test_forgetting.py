"""Support counting: deleting memories removes their evidence and mentions; a relation or
entity left with no support disappears, in the graph view and in the tables."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from graphmem.compat.storage import SQLiteStorage
from graphmem.memories.entity import EntityMemory
from graphmem.store import schema


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
