"""Typed relations end to end: EntityMemory.save -> SQL -> graph -> find() with evidence.

The rules themselves are unit-tested in test_relations.py; here each rule family is shown
firing through the whole stack (real en_core_web_sm, a real SQLite file), and its near-misses
are shown leaving the entities linked only by ``co_occurs``. The Calute views derived from the
graph are checked at the end.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphmem.compat.storage import SQLiteStorage
from graphmem.graph.knowledge_graph import CO_OCCURS
from graphmem.items import MemoryItem
from graphmem.memories.entity import EntityMemory

# A neutral first sentence, so the evidence must be the relation's own sentence, not the memory.
PREFACE = "It was a busy week. "

# (text saved, subject, predicate, object, rule id). Each example uses its own names, so the
# examples share one memory without touching each other.
FIRING = [
    ("Dana Scott works at Northwind.", "Dana Scott", "works_at", "Northwind", "works_at/work_at"),
    ("Bob Stone lives in Paris.", "Bob Stone", "lives_in", "Paris", "lives_in/live_in"),
    ("Sarah Connor met John Smith in Chicago.", "Sarah Connor", "met", "John Smith", "met/met"),
    ("Google hired Tom Baker.", "Google", "hired", "Tom Baker", "hired/hired"),
    ("Priya Patel was hired by Microsoft.", "Microsoft", "hired", "Priya Patel", "hired/hired_by"),
    (
        "Frank Moore founded Umbrella Labs.",
        "Frank Moore",
        "founded",
        "Umbrella Labs",
        "founded/founded",
    ),
    (
        "Grace Hopper, the CTO of Initech, gave a talk.",
        "Grace Hopper",
        "cto_of",
        "Initech",
        "role/appos",
    ),
    (
        "Acme's CEO Alice Johnson spoke at the event.",
        "Alice Johnson",
        "ceo_of",
        "Acme",
        "role/possessive",
    ),
]

# (text saved, subject, predicate that must not appear, the other entity or None).
NEAR_MISSES = [
    ("Oscar Reyes does not work at Amazon.", "Oscar Reyes", "works_at", "Amazon"),
    ("Nina Brooks never worked at Oracle.", "Nina Brooks", "works_at", "Oracle"),
    ("Ivan Petrov met the deadline.", "Ivan Petrov", "met", None),
    ("Does Laura Chen work at Netflix?", "Laura Chen", "works_at", "Netflix"),
]


@pytest.fixture(scope="module")
def saved(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[EntityMemory, dict[str, MemoryItem]]]:
    storage = SQLiteStorage(tmp_path_factory.mktemp("relations") / "graph.db")
    memory = EntityMemory(storage=storage)
    items: dict[str, MemoryItem] = {}
    for text, *_ in FIRING:
        items[text] = memory.save(PREFACE + text)
    for text, *_ in NEAR_MISSES:
        items[text] = memory.save(text)
    yield memory, items
    storage.close()


class TestRuleFamiliesFire:
    @pytest.mark.parametrize(
        ("text", "subject", "predicate", "obj", "rule"),
        FIRING,
        ids=[rule for *_, rule in FIRING],
    )
    def test_find_returns_the_subject_with_evidence(
        self,
        saved: tuple[EntityMemory, dict[str, MemoryItem]],
        text: str,
        subject: str,
        predicate: str,
        obj: str,
        rule: str,
    ) -> None:
        memory, items = saved
        edges = memory.find(predicate=predicate, object=obj)
        assert [e.subject for e in edges] == [subject]
        edge = edges[0]
        assert memory.graph.resolve(edge.object) == memory.graph.resolve(obj)
        assert edge.support == 1
        assert edge.current
        [evidence] = edge.evidence
        assert evidence.memory_id == items[text].memory_id
        assert evidence.sentence == text  # the sentence, without the preface
        assert evidence.rule == rule

    def test_subject_side_query_agrees(
        self, saved: tuple[EntityMemory, dict[str, MemoryItem]]
    ) -> None:
        memory, _ = saved
        assert [e.object for e in memory.find(subject="Bob Stone", predicate="lives_in")] == [
            "Paris"
        ]
        assert memory.find(subject="Paris", predicate="lives_in") == []

    def test_typed_relation_sits_beside_the_co_occurrence_edge(
        self, saved: tuple[EntityMemory, dict[str, MemoryItem]]
    ) -> None:
        memory, items = saved
        predicates = {e.predicate for e in memory.relations("Frank Moore")}
        assert predicates == {"founded", CO_OCCURS}
        [co] = memory.find(subject="Frank Moore", predicate=CO_OCCURS, object="Umbrella Labs")
        assert [(ev.rule, ev.memory_id) for ev in co.evidence] == [
            ("co_sentence", items["Frank Moore founded Umbrella Labs."].memory_id)
        ]

    def test_role_titles_are_not_entities(
        self, saved: tuple[EntityMemory, dict[str, MemoryItem]]
    ) -> None:
        memory, items = saved
        assert memory.get_entity("CTO") is None
        assert memory.get_entity("CEO") is None
        assert items["Grace Hopper, the CTO of Initech, gave a talk."].metadata["entities"] == [
            "Grace Hopper",
            "Initech",
        ]


class TestNearMisses:
    @pytest.mark.parametrize(
        ("text", "subject", "predicate", "other"), NEAR_MISSES, ids=[t for t, *_ in NEAR_MISSES]
    )
    def test_no_typed_relation(
        self,
        saved: tuple[EntityMemory, dict[str, MemoryItem]],
        text: str,
        subject: str,
        predicate: str,
        other: str | None,
    ) -> None:
        memory, items = saved
        # The entities were found (so the rule had its chance) ...
        assert subject in items[text].metadata["entities"]
        if other is not None:
            assert other in items[text].metadata["entities"]
            assert memory.find(subject=subject, predicate=CO_OCCURS, object=other) or memory.find(
                subject=other, predicate=CO_OCCURS, object=subject
            )
        # ... and no typed relation came out of the sentence.
        assert memory.find(subject=subject, predicate=predicate) == []
        assert {e.predicate for e in memory.relations(subject)} <= {CO_OCCURS}

    def test_a_deadline_is_not_an_entity(
        self, saved: tuple[EntityMemory, dict[str, MemoryItem]]
    ) -> None:
        memory, items = saved
        assert items["Ivan Petrov met the deadline."].metadata["entities"] == ["Ivan Petrov"]
        assert memory.get_entity("the deadline") is None
        assert memory.relations("Ivan Petrov") == []


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EntityMemory]:
    storage = SQLiteStorage(tmp_path_factory.mktemp("views") / "views.db")
    memory = EntityMemory(storage=storage)
    memory.save("Dana Scott works at Northwind.")
    memory.save("Northwind is based in Seattle.")
    memory.save("Dana Scott met Erik Lund in Oslo.")
    yield memory
    storage.close()


class TestCaluteViews:
    """entities / relationships / entity_mentions / get_entity_info / get_related_entities."""

    def test_entities_count_memories(self, team: EntityMemory) -> None:
        entities = team.entities
        assert set(entities) == {"Dana Scott", "Northwind", "Seattle", "Erik Lund", "Oslo"}
        assert entities["Dana Scott"]["frequency"] == 2
        assert entities["Northwind"]["frequency"] == 2
        assert entities["Seattle"]["frequency"] == 1
        assert entities["Seattle"]["contexts"] == ["Northwind is based in Seattle."]
        assert entities["Dana Scott"]["first_seen"] <= entities["Dana Scott"]["last_seen"]

    def test_entity_mentions_are_memory_ids(self, team: EntityMemory) -> None:
        ids = {item.content: item.memory_id for item in team.retrieve(limit=10)}  # type: ignore[union-attr]
        mentions = team.entity_mentions
        assert mentions["Northwind"] == [
            ids["Dana Scott works at Northwind."],
            ids["Northwind is based in Seattle."],
        ]
        assert mentions["Oslo"] == [ids["Dana Scott met Erik Lund in Oslo."]]

    def test_relationships_by_predicate(self, team: EntityMemory) -> None:
        rels = team.relationships
        assert rels["works_at"] == [("Dana Scott", "Northwind")]
        assert rels["located_in"] == [("Northwind", "Seattle")]
        assert rels["met"] == [("Dana Scott", "Erik Lund")]
        assert ("Dana Scott", "Oslo") in rels[CO_OCCURS] or ("Oslo", "Dana Scott") in rels[
            CO_OCCURS
        ]
        for pairs in rels.values():
            assert len(pairs) == len(set(pairs))

    def test_get_entity_info(self, team: EntityMemory) -> None:
        info = team.get_entity_info("Northwind")
        assert info["frequency"] == 2
        assert info["label"] == "ORG"
        assert {"relation": "located_in", "target": "Seattle"} in info["relationships"]
        assert {"relation": "inverse_works_at", "target": "Dana Scott"} in info["relationships"]
        assert len(info["mentions"]) == 2
        assert team.get_entity_info("Nobody Known") == {"mentions": [], "relationships": []}

    def test_get_entity_info_by_alias(self, team: EntityMemory) -> None:
        assert team.get_entity_info("dana scott")["frequency"] == 2

    def test_related_entities_depth(self, team: EntityMemory) -> None:
        assert team.get_related_entities("Seattle", max_depth=1) == {"Northwind"}
        assert team.get_related_entities("Seattle", max_depth=2) == {"Northwind", "Dana Scott"}
        assert team.get_related_entities("Seattle", max_depth=3) == {
            "Northwind",
            "Dana Scott",
            "Erik Lund",
            "Oslo",
        }
        assert "Seattle" not in team.get_related_entities("Seattle", max_depth=5)
        assert team.get_related_entities("Seattle", max_depth=0) == set()
        assert team.get_related_entities("Nobody Known") == set()

    def test_extract_entities_uses_canonical_names(self, team: EntityMemory) -> None:
        assert team.extract_entities("Did dana scott call Northwind?") == [
            "Dana Scott",
            "Northwind",
        ]


def test_storage_path_is_a_real_file(saved: tuple[EntityMemory, dict[str, MemoryItem]]) -> None:
    memory, _ = saved
    assert memory.space.db_path is not None
    assert Path(memory.space.db_path).stat().st_size > 0
