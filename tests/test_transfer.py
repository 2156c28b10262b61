"""Lossless export and import (graphmem.transfer) on real SQLite files with real spaCy."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from graphmem import EntityMemory, InvalidArgumentError, LongTermMemory, SQLiteStorage
from graphmem.errors import SchemaVersionError
from graphmem.store.schema import SCHEMA_VERSION
from graphmem.transfer import ImportFileError, export_jsonl, import_jsonl


def _graph_state(storage: SQLiteStorage) -> tuple[list[object], list[object]]:
    kg = EntityMemory(storage=storage).graph
    entities = sorted(
        (d["name"], d["label"], d["mentions"], tuple(d["aliases"]), d["first_seen"])
        for _, d in kg.graph.nodes(data=True)
    )
    relations = sorted(
        (
            e.subject,
            e.predicate,
            e.object,
            e.support,
            e.first_seen,
            e.valid_to,
            tuple((ev.memory_id, ev.sentence, ev.rule) for ev in e.evidence),
        )
        for e in kg.find(evidence=True)
    )
    return entities, relations


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> SQLiteStorage:
    storage = SQLiteStorage(tmp_path_factory.mktemp("transfer") / "source.db")
    entity = EntityMemory(storage=storage)
    entity.save_many(
        [
            {"content": "Dana Whitfield works at Northwind Systems.",
             "timestamp": datetime(2026, 3, 1, 9, 0)},
            {"content": "Dana Whitfield joined Harbor Analytics as head of data.",
             "timestamp": datetime(2026, 5, 5, 9, 0)},
            {"content": "Grace Liu works at Harbor Analytics.", "user_id": "alice"},
        ]
    )  # fmt: skip
    entity.add_relation("Dana Whitfield", "mentors", "Grace Liu")
    merge_id = entity.merge_entities("Northwind Systems", "Harbor Analytics")
    entity.unmerge(merge_id)
    entity.merge_entities("Dana Whitfield", "Grace Liu")
    long_term = LongTermMemory(storage=storage, max_items=None)
    item = long_term.save(
        "Atlas launches on May 19.",
        metadata={"due": datetime(2026, 5, 19, 8, 30), "tags": ["atlas"]},
        agent_id="pm",
        importance=0.9,
    )
    long_term.update(item.memory_id, {"embedding": [0.25, -1.5, 3.0]})
    long_term.search("Atlas launch")  # access counts and last_accessed change
    storage.save("prefs", {"tone": "brief", "n": 2})
    return storage


def test_round_trip_is_identical_and_keeps_the_graph(source: SQLiteStorage, tmp_path: Path) -> None:
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    counts = export_jsonl(source.database, first)
    assert counts["merges"] == 2 and counts["kv"] == 1 and counts["memories"] == 4
    copy = SQLiteStorage(tmp_path / "copy.db")
    assert import_jsonl(copy.database, first)["relation_evidence"] == counts["relation_evidence"]
    export_jsonl(copy.database, second)
    assert first.read_bytes() == second.read_bytes()
    assert _graph_state(copy) == _graph_state(source)
    alice = EntityMemory(storage=copy, tenant="alice").graph
    assert alice.find(predicate="works_at")[0].object == "Harbor Analytics"
    restored = LongTermMemory(storage=copy).search("Atlas launch")[0]
    assert restored.metadata["due"] == datetime(2026, 5, 19, 8, 30)
    assert restored.embedding == [0.25, -1.5, 3.0] and restored.access_count >= 1
    assert copy.load("prefs") == {"tone": "brief", "n": 2}
    # New rows get fresh ids after the verbatim insert.
    LongTermMemory(storage=copy).save("One more memory about Atlas.")


def test_records_are_one_row_each_after_a_header(source: SQLiteStorage, tmp_path: Path) -> None:
    out = tmp_path / "dump.jsonl"
    export_jsonl(source.database, out)
    header, *records = [json.loads(line) for line in out.read_text().splitlines()]
    assert header["format"] == "graphmem-export" and header["schema_version"] == SCHEMA_VERSION
    assert {r["table"] for r in records} >= {"memories", "entities", "relations", "merges", "kv"}
    assert all(set(r) == {"table", "row"} for r in records)
    tables = [r["table"] for r in records]
    assert tables.index("relations") < tables.index("relation_evidence")


def test_import_refuses_a_non_empty_target(source: SQLiteStorage, tmp_path: Path) -> None:
    dump = tmp_path / "dump.jsonl"
    export_jsonl(source.database, dump)
    target = SQLiteStorage(tmp_path / "busy.db")
    target.save("something", 1)
    with pytest.raises(InvalidArgumentError, match="not empty"):
        import_jsonl(target.database, dump)
    assert target.list_keys() == ["something"]


@pytest.mark.parametrize(
    ("mutate", "error", "message"),
    [
        (lambda lines: lines[:-3], ImportFileError, "truncated or edited"),
        (lambda lines: [lines[0], "{oops", *lines[1:]], ImportFileError, "line 2: not JSON"),
        (
            lambda lines: [lines[0], '{"table": "users", "row": {}}', *lines[1:]],
            ImportFileError,
            "line 2: expected",
        ),
        (
            lambda lines: (
                [lines[0].replace(f'"schema_version": {SCHEMA_VERSION}', '"schema_version": 99')]
                + lines[1:]
            ),
            SchemaVersionError,
            "Upgrade graphmem",
        ),
        (lambda lines: ['{"hello": 1}', *lines[1:]], ImportFileError, "not a graphmem export"),
    ],
)
def test_damaged_files_leave_the_target_empty(
    source: SQLiteStorage, tmp_path: Path, mutate, error, message
) -> None:  # type: ignore[no-untyped-def]
    dump = tmp_path / "dump.jsonl"
    export_jsonl(source.database, dump)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("\n".join(mutate(dump.read_text().splitlines())) + "\n")
    target = SQLiteStorage(tmp_path / "target.db")
    with pytest.raises(error, match=message):
        import_jsonl(target.database, damaged)
    assert len(LongTermMemory(storage=target)) == 0 and target.list_keys() == []
