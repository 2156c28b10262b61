"""Issue 25: deleting a memory leaves what never saving it would have left.

What a forgotten text gave is read again from the evidence left (validity intervals,
first/last seen, names, aliases, labels, support), and no byte of it stays in the SQLite file
or its WAL. Each test failed on d9cf6ae.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from graphmem import CortexMemory
from graphmem.compat.storage import SQLiteStorage
from graphmem.memories.entity import EntityMemory


def _at(day: int) -> datetime:
    return datetime(2025, 4, day, tzinfo=UTC)


def _stamp(day: int) -> str:
    return _at(day).isoformat()


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[EntityMemory]:
    storage = SQLiteStorage(tmp_path / "forget.db")
    yield EntityMemory(storage=storage)
    storage.close()


def _interval(memory: EntityMemory, predicate: str) -> list[tuple[str | None, str | None]]:
    return [(e.valid_from, e.valid_to) for e in memory.find(predicate=predicate)]


class TestTimesOnlyTheForgottenTextGave:
    def test_a_deleted_departure_no_longer_ends_the_job(self, memory: EntityMemory) -> None:
        memory.save("Erik Lund joined Lumen Robotics.", timestamp=_at(1))
        left = memory.save("Erik Lund left Lumen Robotics.", timestamp=_at(21))
        assert _interval(memory, "works_at") == [(_stamp(1), _stamp(21))]
        memory.delete(left.memory_id)
        assert _interval(memory, "works_at") == [(_stamp(1), None)]
        assert memory.find(predicate="left") == []
        # as_of after the deleted date: he still works there.
        assert [e.object for e in memory.as_of(_at(25)).find(predicate="works_at")] == [
            "Lumen Robotics"
        ]
        erik = memory.get_entity("Erik Lund")
        assert erik is not None and erik.last_seen == _stamp(1)
        [co] = memory.find(predicate="co_occurs")
        assert (co.first_seen, co.last_seen, co.support) == (_stamp(1), _stamp(1), 1)

    def test_the_context_no_longer_prints_the_deleted_date(self, tmp_path: Path) -> None:
        memory = EntityMemory(storage=SQLiteStorage(tmp_path / "c.db"))
        memory.save("Erik Lund joined Lumen Robotics.", timestamp=_at(1))
        left = memory.save("Erik Lund left Lumen Robotics.", timestamp=_at(21))
        memory.delete(left.memory_id)
        text = repr(memory.relations("Erik Lund"))
        assert "2025-04-21" not in text

    def test_an_update_that_turns_a_job_into_a_visit_reopens_the_older_job(
        self, memory: EntityMemory
    ) -> None:
        memory.save("Erik Lund works at Initech.", timestamp=_at(1))
        move = memory.save("Erik Lund joined Lumen Robotics.", timestamp=_at(10))
        before = {e.object: e.valid_to for e in memory.find(predicate="works_at")}
        assert before == {"Initech": _stamp(10), "Lumen Robotics": None}
        memory.update(move.memory_id, {"content": "Erik Lund visited Lumen Robotics."})
        after = {e.object: (e.valid_from, e.valid_to) for e in memory.find(predicate="works_at")}
        assert after == {"Initech": (_stamp(1), None)}


class TestNamesOnlyTheForgottenTextGave:
    def test_a_full_name_only_a_deleted_memory_said_goes(self, memory: EntityMemory) -> None:
        first = memory.save("Maya Lindqvist joined Lumen Robotics.", timestamp=_at(1))
        memory.save("Maya presented the roadmap.", timestamp=_at(2))
        memory.delete(first.memory_id)
        assert memory.get_entity("Maya Lindqvist") is None
        maya = memory.get_entity("Maya")
        assert maya is not None
        assert (maya.name, maya.aliases, maya.mentions) == ("Maya", ("Maya",), 1)
        assert (maya.first_seen, maya.last_seen) == (_stamp(2), _stamp(2))
        assert "Maya Lindqvist" not in memory.entities
        assert "Lindqvist" not in repr(list(memory.graph.graph.nodes(data=True)))

    def test_the_facade_context_no_longer_names_it(self) -> None:
        cortex = CortexMemory()
        first = cortex.save_task_result("Hire", "Maya Lindqvist joined Lumen Robotics.", "HR")
        cortex.save_task_result("Demo", "Maya presented the roadmap.", "HR")
        cortex.delete(first)
        context = cortex.build_context_for_task("What did Maya present?")
        assert "Maya" in context and "Lindqvist" not in context


WORDS = ("zorblaxian", "quuxified", "frobnitzer", "snorkelwick", "wendy", "quarzazate")


def _files_holding(path: Path, words: tuple[str, ...]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for file in sorted(path.parent.glob(path.name + "*")):
        data = file.read_bytes().lower()
        hits = [w for w in words if w.encode() in data]
        if hits:
            found[file.name] = hits
    return found


def test_no_byte_of_a_deleted_or_updated_text_stays_in_the_file_or_wal(tmp_path: Path) -> None:
    path = tmp_path / "bytes.db"
    storage = SQLiteStorage(path)
    memory = EntityMemory(storage=storage)
    memory.save("Dana Scott works at Northwind.")
    gone = memory.save("Zorblaxian quuxified the Frobnitzer at Snorkelwick.")
    changed = memory.save("Dana Scott met Wendy Plonk in Quarzazate.")
    assert set(_files_holding(path, WORDS).get("bytes.db-wal", [])) | set(
        _files_holding(path, WORDS).get("bytes.db", [])
    ) == set(WORDS)
    memory.delete(gone.memory_id)
    memory.update(changed.memory_id, {"content": "Dana Scott met nobody."})
    assert _files_holding(path, WORDS) == {}  # while open: the file and its WAL
    storage.close()
    assert _files_holding(path, WORDS) == {}
    reopened = EntityMemory(storage=SQLiteStorage(path))
    assert reopened.search("zorblaxian") == []
    assert reopened.search("wendy") == []
    assert len(reopened.search("Dana")) == 2


def test_unmerge_after_a_delete_that_pruned_an_entity(memory: EntityMemory) -> None:
    first = memory.save("Robert Stone joined Initech.", timestamp=_at(1))
    memory.save("Bob Stone met Dana Scott.", timestamp=_at(2))
    merge_id = memory.merge_entities("Bob Stone", "Robert Stone")
    memory.delete(first.memory_id)
    assert memory.get_entity("Initech") is None
    memory.unmerge(merge_id)  # raised IntegrityError: FOREIGN KEY constraint failed
    assert memory.get_entity("Robert Stone") is None  # only the forgotten text named him
    bob = memory.get_entity("Bob Stone")
    assert bob is not None and (bob.mentions, bob.aliases) == (1, ("Bob Stone",))
    assert memory.find(predicate="works_at") == []
    assert memory.neighbors("Bob Stone") == {"Dana Scott": 1}


def test_no_row_of_any_table_holds_a_forgotten_word(storage_url: str) -> None:
    """On each backend: after a delete and an update, no row (of any graphmem table, the
    merge log and settings included) holds a word only the forgotten texts had, and the
    full-text index finds none of them."""
    from graphmem.store import schema

    storage = SQLiteStorage(storage_url)
    memory = EntityMemory(storage=storage)
    memory.save("Dana Scott works at Northwind.")
    gone = memory.save("Zorblaxian quuxified the Frobnitzer at Snorkelwick.")
    changed = memory.save("Dana Scott met Wendy Plonk in Quarzazate.")
    memory.merge_entities("Dana Scott", "Wendy Plonk")
    memory.delete(gone.memory_id)
    memory.update(changed.memory_id, {"content": "Dana Scott met nobody."})
    with storage.database.read() as conn:
        for table in schema.metadata_obj.sorted_tables:
            for row in conn.execute(table.select()):
                text = repr(tuple(row)).lower()
                assert not [w for w in WORDS if w in text], (table.name, row)
    for word in WORDS:
        assert memory.search(word) == []
    storage.close()
