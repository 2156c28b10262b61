"""EntityIndex.deferred_writes: the graph tables end up exactly as with one write per save,
ids included, while a full short-term tier evicts a memory on every save (the facade's
contextual tier) and so prunes what only the evicted memory supported, acronym definitions
merge entities and closing predicates end relations."""

from __future__ import annotations

import re
from contextlib import nullcontext

import pytest
from sqlalchemy import select

from graphmem.compat.storage import SQLiteStorage
from graphmem.memories.entity import EntityMemory
from graphmem.memories.short_term import ShortTermMemory
from graphmem.store import schema

# With capacity 2, saving the fourth text evicts the second while the fourth is pending: the
# names and links they share live on through the pending rows only (so does a name linked to
# nothing, in the eighth and tenth).
_TEXTS = [
    "Alice Johnson joined Acme Corp in Berlin.",
    "Bob Stone met Carol Diaz in Paris.",
    "Zed Park visited Oslo.",
    "Carol Diaz met Bob Stone in Paris.",
    "International Business Machines opened a lab in Zurich.",
    "IBM hired Dana Scott.",
    "International Business Machines (IBM) signed a deal with Acme Corp.",
    "Quentin Blake called.",
    "Carol Diaz works at Initech in Berlin.",
    "Quentin Blake called again.",
    "Thanks, that helps.",
    "Bob Stone left Acme Corp and joined Globex.",
    "Mina Cho met Zed Park in Oslo.",
    "Mina Cho and Zed Park flew to Lagos.",
    "Alice Johnson and Bob Stone flew to Tokyo with Dana Scott.",
    "Globex acquired Initech.",
    "Mina Cho left Lagos.",
]
_TABLES = (
    schema.entities,
    schema.aliases,
    schema.mentions,
    schema.relations,
    schema.relation_evidence,
    schema.merges,
)
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?")


def _tables(storage: SQLiteStorage) -> dict[str, list[tuple[object, ...]]]:
    """Every row of the graph tables, ids included; timestamps (which differ between two
    runs) replaced by a placeholder."""
    with storage.database.read() as conn:
        return {
            table.name: [
                tuple(_TIMESTAMP.sub("<t>", v) if isinstance(v, str) else v for v in row)
                for row in conn.execute(select(table).order_by(*table.primary_key.columns))
            ]
            for table in _TABLES
        }


def _save_all(capacity: int, deferred: bool) -> dict[str, list[tuple[object, ...]]]:
    storage = SQLiteStorage()
    entity = EntityMemory(storage=storage)
    recent = ShortTermMemory(capacity=capacity, storage=storage, index_entities=True)
    db, index = storage.database, storage.entity_index
    with db.write() as conn, index.deferred_writes(conn) if deferred else nullcontext():
        for position, text in enumerate(_TEXTS):
            if position % 4 == 0:  # the others live in the short-term tier only
                entity.save(text)
            recent.save(text)
    return _tables(storage)


@pytest.mark.parametrize("capacity", [1, 2, 3, 20])
def test_same_tables_as_one_write_per_save(capacity: int) -> None:
    expected = _save_all(capacity, deferred=False)
    assert expected["mentions"] and expected["relation_evidence"]
    assert _save_all(capacity, deferred=True) == expected


def test_rows_are_dropped_when_the_block_raises() -> None:
    storage = SQLiteStorage()
    entity = EntityMemory(storage=storage)
    db, index = storage.database, storage.entity_index
    with pytest.raises(RuntimeError, match="stop"):
        with db.write() as conn, index.deferred_writes(conn):
            entity.save("Alice Johnson joined Acme Corp in Berlin.")
            raise RuntimeError("stop")
    assert _tables(storage) == {table.name: [] for table in _TABLES}
    entity.save("Bob Stone met Carol Diaz.")
    assert sorted(entity.graph.graph.nodes) == ["bob stone", "carol diaz"]


@pytest.mark.slow
def test_votes_kept_across_saves_change_nothing(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The index keeps entities' label votes across saves (no recount of their mentions per
    save): the tables equal those of the same saves with the kept votes dropped before each
    one (every vote then counted from the rows), over results whose names change label."""
    import sqlite3
    import sys
    from pathlib import Path

    from graphmem import CortexMemory

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from speed import gen_tasks

    monkeypatch.setenv("WRITE_MEMORY", "1")
    tasks = gen_tasks(90, 3)
    for i, task in enumerate(tasks):
        task["timestamp"] = f"2025-01-01T00:{i // 60:02d}:{i % 60:02d}+00:00"
    for name, recount in (("kept.db", False), ("recounted.db", True)):
        memory = CortexMemory(persistence_path=str(tmp_path / name), long_term_capacity=60)
        for task in tasks:
            if recount:
                for state in memory._space.entity_index._tenants.values():
                    state.votes.clear()
            memory.save_task_result(**task)
        assert memory.storage is not None
        memory.storage.close()

    def rows(name: str) -> list[tuple[object, ...]]:
        conn = sqlite3.connect(tmp_path / name)
        found = conn.execute(
            "SELECT e.key, e.label, e.mentions, m.text_id, m.start, m.label FROM mentions m "
            "JOIN entities e ON e.id = m.entity_id ORDER BY m.id"
        ).fetchall()
        conn.close()
        return found

    kept = rows("kept.db")
    assert len(kept) > 500 and kept == rows("recounted.db")
