"""merge_entities / unmerge: explicit, logged, and exactly reversible (every row compared)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from graphmem.compat.storage import SQLiteStorage
from graphmem.errors import EntityNotFound, InvalidArgumentError
from graphmem.memories.entity import EntityMemory
from graphmem.store import schema

GRAPH_TABLES = (
    schema.entities,
    schema.aliases,
    schema.mentions,
    schema.relations,
    schema.relation_evidence,
)


def dump_rows(storage: SQLiteStorage) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the graph tables, sorted."""
    with storage.database.read() as conn:
        return {
            table.name: sorted(tuple(row) for row in conn.execute(select(table)))
            for table in GRAPH_TABLES
        }


def dump_view(memory: EntityMemory) -> tuple[list[Any], list[Any]]:
    """The graph view's nodes and edges with all their attributes."""
    g = memory.graph.graph
    nodes = sorted((key, sorted(data.items())) for key, data in g.nodes(data=True))
    edges = sorted(
        (u, v, k, sorted(data.items())) for u, v, k, data in g.edges(keys=True, data=True)
    )
    return nodes, edges


TEXTS = (
    "Robert Stone works at Initech.",
    "Bob Stone lives in Paris.",
    "Bob Stone met Carol King.",
    "Robert Stone met Carol King.",
    "Robert Stone met Bob Stone.",
)


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[EntityMemory]:
    storage = SQLiteStorage(tmp_path / "merge.db")
    memory = EntityMemory(storage=storage)
    for text in TEXTS:
        memory.save(text)
    memory.add_relation("Bob Stone", "mentors", "Dana Scott")
    yield memory
    storage.close()


def test_fixture_has_two_stones(memory: EntityMemory) -> None:
    robert, bob = memory.get_entity("Robert Stone"), memory.get_entity("Bob Stone")
    assert robert is not None and bob is not None and robert.key != bob.key
    assert memory.get_entity("Stone") is None  # two people share the family name
    met = memory.find(subject="Robert Stone", predicate="met")
    assert sorted(e.object for e in met) == ["Bob Stone", "Carol King"]


def test_merge_moves_everything_to_the_kept_entity(memory: EntityMemory) -> None:
    memory.merge_entities("Robert Stone", "Bob Stone")
    bob = memory.get_entity("Bob Stone")
    assert bob is not None and bob.name == "Robert Stone"
    assert "Bob Stone" in bob.aliases
    assert bob.mentions == 6  # 2 + 2 of Robert's memories, 2 of Bob's; "met Bob Stone" has both
    assert [e.object for e in memory.find(subject="Robert Stone", predicate="lives_in")] == [
        "Paris"
    ]
    assert [e.object for e in memory.find(subject="Robert Stone", predicate="mentors")] == [
        "Dana Scott"
    ]
    [met_carol] = memory.find(subject="Robert Stone", predicate="met", object="Carol King")
    assert met_carol.support == 2
    assert len(met_carol.evidence) == 2
    # "Robert Stone met Bob Stone" has nothing left to link.
    assert memory.find(subject="Robert Stone", object="Robert Stone") == []
    assert memory.get_entity("Stone") == bob


def test_unmerge_restores_every_row_and_the_view(memory: EntityMemory) -> None:
    rows_before, view_before = dump_rows(memory.space), dump_view(memory)
    merge_id = memory.merge_entities("Robert Stone", "Bob Stone")
    assert dump_rows(memory.space) != rows_before
    memory.unmerge(merge_id)
    assert dump_rows(memory.space) == rows_before
    assert dump_view(memory) == view_before
    assert memory.get_entity("Bob Stone").name == "Bob Stone"  # type: ignore[union-attr]


def test_double_unmerge_raises(memory: EntityMemory) -> None:
    merge_id = memory.merge_entities("Robert Stone", "Bob Stone")
    memory.unmerge(merge_id)
    rows = dump_rows(memory.space)
    with pytest.raises(InvalidArgumentError, match=f"merge {merge_id} was already undone"):
        memory.unmerge(merge_id)
    assert dump_rows(memory.space) == rows


def test_out_of_order_unmerge_raises(memory: EntityMemory) -> None:
    rows_before, view_before = dump_rows(memory.space), dump_view(memory)
    first = memory.merge_entities("Robert Stone", "Bob Stone")
    second = memory.merge_entities("Robert Stone", "Carol King")
    with pytest.raises(InvalidArgumentError, match=f"undo merge {second} before merge {first}"):
        memory.unmerge(first)
    memory.unmerge(second)
    memory.unmerge(first)
    assert dump_rows(memory.space) == rows_before
    assert dump_view(memory) == view_before


def test_unrelated_merges_undo_in_any_order(memory: EntityMemory) -> None:
    memory.save("Acme Corp bought Globex Corporation.")
    rows_before = dump_rows(memory.space)
    first = memory.merge_entities("Robert Stone", "Bob Stone")
    # shares no entity with the first (this merged Paris into Initech, but a place and an
    # organisation under two names are not one entity: issue 16)
    second = memory.merge_entities("Acme Corp", "Globex Corporation")
    memory.unmerge(first)
    memory.unmerge(second)
    assert dump_rows(memory.space) == rows_before


@pytest.mark.parametrize(
    ("keep", "merge", "error", "message"),
    [
        ("Robert Stone", "Nobody Known", EntityNotFound, "'Nobody Known' is not in the graph"),
        ("Nobody Known", "Bob Stone", EntityNotFound, "'Nobody Known' is not in the graph"),
        ("Robert Stone", "robert stone", InvalidArgumentError, "already the same entity"),
    ],
)
def test_bad_merges_raise_and_change_nothing(
    memory: EntityMemory, keep: str, merge: str, error: type[Exception], message: str
) -> None:
    rows = dump_rows(memory.space)
    with pytest.raises(error, match=message):
        memory.merge_entities(keep, merge)
    assert dump_rows(memory.space) == rows


def test_unknown_merge_id(memory: EntityMemory) -> None:
    with pytest.raises(InvalidArgumentError, match="no merge with id 999"):
        memory.unmerge(999)


def test_merge_is_undone_after_reopening(tmp_path: Path) -> None:
    path = tmp_path / "reopen.db"
    storage = SQLiteStorage(path)
    memory = EntityMemory(storage=storage)
    for text in TEXTS:
        memory.save(text)
    rows_before = dump_rows(storage)
    merge_id = memory.merge_entities("Robert Stone", "Bob Stone")
    storage.close()

    storage = SQLiteStorage(path)
    reopened = EntityMemory(storage=storage)
    assert reopened.get_entity("Bob Stone").name == "Robert Stone"  # type: ignore[union-attr]
    reopened.unmerge(merge_id)
    assert dump_rows(storage) == rows_before
    storage.close()


def test_merges_are_per_tenant(tmp_path: Path) -> None:
    storage = SQLiteStorage(tmp_path / "tenants.db")
    one = EntityMemory(storage=storage, tenant="u1")
    two = EntityMemory(storage=storage, tenant="u2")
    for memory in (one, two):
        memory.save("Robert Stone works at Initech.")
        memory.save("Bob Stone lives in Paris.")
    merge_id = one.merge_entities("Robert Stone", "Bob Stone")
    assert two.get_entity("Bob Stone").name == "Bob Stone"  # type: ignore[union-attr]
    with pytest.raises(InvalidArgumentError, match=f"no merge with id {merge_id}"):
        two.unmerge(merge_id)
    one.unmerge(merge_id)
    assert one.get_entity("Bob Stone").name == "Bob Stone"  # type: ignore[union-attr]
    storage.close()
