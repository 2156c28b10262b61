"""The whole graph survives closing and reopening its SQLite file, unchanged and unduplicated."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from graphmem.compat.storage import SQLiteStorage
from graphmem.graph.knowledge_graph import CO_OCCURS
from graphmem.memories.entity import EntityMemory
from graphmem.memories.long_term import LongTermMemory
from graphmem.store import schema

GRAPH_TABLES = (
    schema.entities,
    schema.aliases,
    schema.mentions,
    schema.relations,
    schema.relation_evidence,
    schema.merges,
)

TEXTS = (
    "Dana Scott works at Northwind.",
    "Northwind is based in Seattle.",
    "Alice Johnson met Dana Scott in Oslo.",
    "Alice joined Acme Corp.",
    "ACME hired Tom Baker.",
    "Dana Scott works at Harbor Bank.",
)


def dump_rows(storage: SQLiteStorage) -> dict[str, list[tuple[Any, ...]]]:
    with storage.database.read() as conn:
        return {
            table.name: sorted(tuple(row) for row in conn.execute(select(table)))
            for table in GRAPH_TABLES
        }


def dump_graph(memory: EntityMemory) -> dict[str, Any]:
    """Nodes (label, mentions, aliases, dates), edges (every attribute but the row id) and
    the evidence of every edge."""
    g = memory.graph.graph
    nodes = {key: {k: v for k, v in data.items()} for key, data in g.nodes(data=True)}
    edges = {
        (e.subject, e.predicate, e.object): (
            e.support,
            e.confidence,
            e.first_seen,
            e.last_seen,
            e.valid_from,
            e.valid_to,
            sorted((ev.memory_id, ev.sentence, ev.rule) for ev in e.evidence),
        )
        for e in memory.graph.find(evidence=True)
    }
    return {"nodes": nodes, "edges": edges}


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, dict[str, Any], dict[str, list[tuple[Any, ...]]]]:
    path = tmp_path / "graph.db"
    storage = SQLiteStorage(path)
    memory = EntityMemory(storage=storage)
    for text in TEXTS:
        time.sleep(0.002)  # distinct timestamps, so the works_at change has an order
        memory.save(text)
    memory.add_relation("Dana Scott", "mentors", "Tom Baker")
    graph = dump_graph(memory)
    rows = dump_rows(storage)
    storage.close()
    return path, graph, rows


def test_the_built_graph_is_what_the_text_says(
    built: tuple[Path, dict[str, Any], dict[str, list[tuple[Any, ...]]]],
) -> None:
    _, graph, _ = built
    nodes, edges = graph["nodes"], graph["edges"]
    assert set(nodes) == {
        "dana scott",
        "northwind",
        "seattle",
        "alice johnson",
        "oslo",
        "acme",
        "tom baker",
        "harbor bank",
    }
    assert nodes["dana scott"]["label"] == "PERSON"
    assert nodes["dana scott"]["mentions"] == 3
    assert nodes["acme"]["mentions"] == 2
    assert {"Alice Johnson", "Alice"} <= set(nodes["alice johnson"]["aliases"])
    typed = {k: v for k, v in edges.items() if k[1] != CO_OCCURS}
    assert set(typed) == {
        ("Dana Scott", "works_at", "Northwind"),
        ("Dana Scott", "works_at", "Harbor Bank"),
        ("Northwind", "located_in", "Seattle"),
        ("Alice Johnson", "met", "Dana Scott"),
        ("Alice Johnson", "works_at", "Acme Corp."),
        ("Acme Corp.", "hired", "Tom Baker"),
        ("Tom Baker", "works_at", "Acme Corp."),  # an organisation's hire works there
        ("Dana Scott", "mentors", "Tom Baker"),
    }
    northwind = typed[("Dana Scott", "works_at", "Northwind")]
    harbor = typed[("Dana Scott", "works_at", "Harbor Bank")]
    assert northwind[5] == harbor[4] is not None  # closed when the new employer arrived
    assert harbor[5] is None
    assert typed[("Dana Scott", "mentors", "Tom Baker")][6] == [(None, "", "manual")]


def test_reopen_gives_the_identical_graph(
    built: tuple[Path, dict[str, Any], dict[str, list[tuple[Any, ...]]]],
) -> None:
    path, graph, rows = built
    storage = SQLiteStorage(path)
    memory = EntityMemory(storage=storage)
    assert dump_graph(memory) == graph
    assert dump_rows(storage) == rows
    storage.close()


def test_reopening_many_times_duplicates_nothing(
    built: tuple[Path, dict[str, Any], dict[str, list[tuple[Any, ...]]]],
) -> None:
    path, graph, rows = built
    for _ in range(3):
        storage = SQLiteStorage(path)
        # Open every tier that indexes entities, read the graph, and close again.
        memory = EntityMemory(storage=storage)
        LongTermMemory(storage=storage)
        assert len(memory.graph) == len(graph["nodes"])
        storage.close()
    storage = SQLiteStorage(path)
    assert dump_rows(storage) == rows
    assert dump_graph(EntityMemory(storage=storage)) == graph
    storage.close()


def test_writing_after_reopen_extends_the_same_entities(
    built: tuple[Path, dict[str, Any], dict[str, list[tuple[Any, ...]]]],
) -> None:
    path, graph, rows = built
    storage = SQLiteStorage(path)
    memory = EntityMemory(storage=storage)
    memory.save("Dana Scott works at Harbor Bank.")
    assert memory.get_entity("Dana Scott").mentions == 4  # type: ignore[union-attr]
    [harbor] = memory.find(subject="Dana Scott", predicate="works_at", object="Harbor Bank")
    assert harbor.support == 2
    assert len(memory.graph) == len(graph["nodes"])
    after = dump_rows(storage)
    assert len(after["entities"]) == len(rows["entities"])
    assert len(after["relations"]) == len(rows["relations"])
    storage.close()


def test_two_handles_on_one_file_see_each_others_writes(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    first = SQLiteStorage(path)
    second = SQLiteStorage(path)
    writer, reader = EntityMemory(storage=first), EntityMemory(storage=second)
    assert reader.get_entity("Northwind") is None  # the reader's view exists before the write
    writer.save("Dana Scott works at Northwind.")
    assert [e.subject for e in reader.find(predicate="works_at", object="Northwind")] == [
        "Dana Scott"
    ]
    first.close()
    second.close()


def test_a_reopened_memory_answers_a_context_without_loading_the_edges(tmp_path: Path) -> None:
    """A context after reopening reads its entities' links from SQL (issue 36): "Known
    entities" of an entity with no typed relation ("mentioned with ...") loads no edge."""
    from graphmem import CortexMemory

    path = str(tmp_path / "g.db")
    storage = SQLiteStorage(path)
    memory = CortexMemory(storage=storage)
    memory.save_task_result("Notes", "Dana Scott and Tom Baker discussed Northwind.", "PM")
    storage.close()
    storage = SQLiteStorage(path)
    try:
        text = CortexMemory(storage=storage).build_context_for_task("Call Tom Baker", "PM")
        assert "Tom Baker (PERSON), mentioned with Dana Scott, Northwind" in text
        kg = storage.entity_index.graph("")
        assert kg._edge_loader is not None  # the edges were not loaded
        assert kg.strongest_co_occurring("tom baker", 5) == ["Dana Scott", "Northwind"]
    finally:
        storage.close()
