"""Relationship queries over graphs built by EntityMemory.save: one-valued predicates over
time (valid_from / valid_to, current_only, as_of), paths with evidence, neighbours, subgraphs."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from graphmem.compat.storage import SQLiteStorage
from graphmem.errors import EntityNotFound, InvalidArgumentError
from graphmem.graph.knowledge_graph import CO_OCCURS
from graphmem.items import MemoryItem
from graphmem.memories.entity import EntityMemory


def _save_later(memory: EntityMemory, text: str) -> MemoryItem:
    """Save with a timestamp strictly after everything saved before."""
    time.sleep(0.002)
    return memory.save(text)


def _between() -> datetime:
    time.sleep(0.002)
    return datetime.now()


@pytest.fixture(scope="module")
def history(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[EntityMemory, MemoryItem, datetime, MemoryItem]]:
    storage = SQLiteStorage(tmp_path_factory.mktemp("functional") / "graph.db")
    memory = EntityMemory(storage=storage)
    first = memory.save("Dana Scott works at Northwind.")
    middle = _between()
    second = _save_later(memory, "Dana Scott works at Harbor Bank.")
    yield memory, first, middle, second
    storage.close()


class TestFunctionalPredicates:
    """ "Dana works at Northwind" then "Dana works at Harbor Bank": one current employer."""

    def test_older_value_is_closed_when_the_new_one_arrives(
        self, history: tuple[EntityMemory, MemoryItem, datetime, MemoryItem]
    ) -> None:
        memory, first, _, second = history
        edges = {e.object: e for e in memory.find(subject="Dana Scott", predicate="works_at")}
        assert set(edges) == {"Northwind", "Harbor Bank"}
        old, new = edges["Northwind"], edges["Harbor Bank"]
        assert old.valid_from == first.timestamp.isoformat()
        assert old.valid_to == second.timestamp.isoformat()
        assert not old.current
        assert new.valid_from == second.timestamp.isoformat()
        assert new.valid_to is None

    def test_current_only(
        self, history: tuple[EntityMemory, MemoryItem, datetime, MemoryItem]
    ) -> None:
        memory, *_ = history
        current = memory.find(subject="Dana Scott", predicate="works_at", current_only=True)
        assert [e.object for e in current] == ["Harbor Bank"]
        # Who works at Northwind now? Nobody; who ever did? Dana.
        assert memory.find(predicate="works_at", object="Northwind", current_only=True) == []
        assert [e.subject for e in memory.find(predicate="works_at", object="Northwind")] == [
            "Dana Scott"
        ]

    def test_as_of_before_and_after_the_change(
        self, history: tuple[EntityMemory, MemoryItem, datetime, MemoryItem]
    ) -> None:
        memory, _, middle, _ = history
        before = memory.as_of(middle).find(subject="Dana Scott", predicate="works_at")
        assert [e.object for e in before] == ["Northwind"]
        assert "Harbor Bank" not in memory.as_of(middle)
        after = memory.as_of(datetime.now()).find(subject="Dana Scott", predicate="works_at")
        assert [e.object for e in after] == ["Harbor Bank"]

    def test_as_of_before_anything(
        self, history: tuple[EntityMemory, MemoryItem, datetime, MemoryItem]
    ) -> None:
        memory, first, *_ = history
        empty = memory.as_of(datetime(2000, 1, 1))
        assert len(empty) == 0
        assert empty.find(predicate="works_at") == []

    def test_non_functional_predicates_accumulate(self, tmp_path: Path) -> None:
        storage = SQLiteStorage(tmp_path / "visits.db")
        memory = EntityMemory(storage=storage)
        memory.save("Frank Moore founded Umbrella Labs.")
        _save_later(memory, "Frank Moore founded Blue Harbor Capital.")
        founded = memory.find(subject="Frank Moore", predicate="founded", current_only=True)
        assert sorted(e.object for e in founded) == ["Blue Harbor Capital", "Umbrella Labs"]
        storage.close()


def test_restating_an_older_value_makes_it_current_again(tmp_path: Path) -> None:
    storage = SQLiteStorage(tmp_path / "back.db")
    memory = EntityMemory(storage=storage)
    memory.save("Dana Scott works at Northwind.")
    _save_later(memory, "Dana Scott works at Harbor Bank.")
    third = _save_later(memory, "Dana Scott works at Northwind.")
    current = memory.find(subject="Dana Scott", predicate="works_at", current_only=True)
    assert [(e.object, e.support) for e in current] == [("Northwind", 2)]
    [harbor] = memory.find(subject="Dana Scott", predicate="works_at", object="Harbor Bank")
    assert harbor.valid_to == third.timestamp.isoformat()
    # The same holds in a fresh view built from the tables.
    storage.close()
    storage = SQLiteStorage(tmp_path / "back.db")
    reopened = EntityMemory(storage=storage)
    current = reopened.find(subject="Dana Scott", predicate="works_at", current_only=True)
    assert [e.object for e in current] == ["Northwind"]
    storage.close()


@pytest.fixture(scope="module")
def company(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[EntityMemory, dict[str, MemoryItem]]]:
    storage = SQLiteStorage(tmp_path_factory.mktemp("paths") / "graph.db")
    memory = EntityMemory(storage=storage)
    texts = [
        "Priya Patel works at Northwind.",
        "The office moved last year. Northwind is based in Seattle.",
        "Erik Lund lives in Oslo.",
    ]
    items = {text: memory.save(text) for text in texts}
    yield memory, items
    storage.close()


class TestPaths:
    def test_two_hops_with_evidence(
        self, company: tuple[EntityMemory, dict[str, MemoryItem]]
    ) -> None:
        memory, items = company
        [path] = memory.paths("Priya Patel", "Seattle")
        assert [(h.source, h.target) for h in path] == [
            ("Priya Patel", "Northwind"),
            ("Northwind", "Seattle"),
        ]
        first, second = path
        assert (first.edge.subject, first.edge.predicate, first.edge.object) == (
            "Priya Patel",
            "works_at",
            "Northwind",
        )
        assert (second.edge.subject, second.edge.predicate, second.edge.object) == (
            "Northwind",
            "located_in",
            "Seattle",
        )
        assert [(ev.sentence, ev.memory_id, ev.rule) for ev in first.edge.evidence] == [
            (
                "Priya Patel works at Northwind.",
                items["Priya Patel works at Northwind."].memory_id,
                "works_at/work_at",
            )
        ]
        assert [(ev.sentence, ev.rule) for ev in second.edge.evidence] == [
            ("Northwind is based in Seattle.", "located_in/based_in")
        ]
        assert not first.reversed and not second.reversed

    def test_path_walked_backwards_marks_reversed_hops(
        self, company: tuple[EntityMemory, dict[str, MemoryItem]]
    ) -> None:
        memory, _ = company
        [path] = memory.paths("Seattle", "Priya Patel")
        assert [h.reversed for h in path] == [True, True]
        assert [h.edge.predicate for h in path] == ["located_in", "works_at"]

    def test_max_hops_limits(self, company: tuple[EntityMemory, dict[str, MemoryItem]]) -> None:
        memory, _ = company
        assert memory.paths("Priya Patel", "Seattle", max_hops=1) == []
        assert len(memory.paths("Priya Patel", "Northwind", max_hops=1)) == 1

    def test_unconnected_entities_have_no_path(
        self, company: tuple[EntityMemory, dict[str, MemoryItem]]
    ) -> None:
        memory, _ = company
        assert memory.paths("Priya Patel", "Oslo") == []

    def test_errors_name_the_entity(
        self, company: tuple[EntityMemory, dict[str, MemoryItem]]
    ) -> None:
        memory, _ = company
        with pytest.raises(EntityNotFound, match="'Nobody Known'"):
            memory.paths("Priya Patel", "Nobody Known")
        with pytest.raises(InvalidArgumentError, match="max_hops"):
            memory.paths("Priya Patel", "Seattle", max_hops=0)


class TestNeighbourhood:
    def test_neighbors_by_distance(
        self, company: tuple[EntityMemory, dict[str, MemoryItem]]
    ) -> None:
        memory, _ = company
        assert memory.neighbors("Seattle") == {"Northwind": 1}
        assert memory.neighbors("Seattle", depth=2) == {"Northwind": 1, "Priya Patel": 2}

    def test_neighbors_by_predicate(
        self, company: tuple[EntityMemory, dict[str, MemoryItem]]
    ) -> None:
        memory, _ = company
        assert memory.neighbors("Northwind", predicate="works_at") == {"Priya Patel": 1}
        assert memory.neighbors("Northwind", predicate="located_in") == {"Seattle": 1}
        assert memory.neighbors("Northwind", predicate="born_in") == {}

    def test_subgraph(self, company: tuple[EntityMemory, dict[str, MemoryItem]]) -> None:
        memory, _ = company
        sub = memory.subgraph(["Seattle"], depth=1)
        assert set(sub.nodes) == {"seattle", "northwind"}
        assert set(sub.edges(keys=True)) == {
            ("northwind", "seattle", "located_in"),
            ("northwind", "seattle", CO_OCCURS),
        }
        assert set(memory.subgraph(["Seattle", "Oslo", "Nobody"], depth=0).nodes) == {
            "seattle",
            "oslo",
        }

    def test_relations_list_both_directions(
        self, company: tuple[EntityMemory, dict[str, MemoryItem]]
    ) -> None:
        memory, _ = company
        typed = [
            (e.subject, e.predicate, e.object)
            for e in memory.relations("Northwind")
            if e.predicate != CO_OCCURS
        ]
        assert sorted(typed) == [
            ("Northwind", "located_in", "Seattle"),
            ("Priya Patel", "works_at", "Northwind"),
        ]
