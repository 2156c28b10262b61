"""Persistence (docs/contract.md §1, §3): everything saved survives closing and reopening, exactly once;
nothing is written to disk unless asked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from graphmem import (
    ContextualMemory,
    CortexMemory,
    EntityMemory,
    LongTermMemory,
    MemoryItem,
    ShortTermMemory,
    SQLiteStorage,
    UserMemory,
)
from graphmem.store.engine import SQLITE_MODULE as sqlite3  # the SQLite graphmem runs on


def _contents(memory: object) -> list[str]:
    return [i.content for i in memory._all_items()]  # type: ignore[attr-defined]


def _table_counts(path: str) -> dict[str, int]:
    con = sqlite3.connect(path)
    try:
        tables = [
            "memories",
            "entities",
            "aliases",
            "mentions",
            "relations",
            "relation_evidence",
            "merges",
            "kv",
        ]
        # Table names come from the fixed list above.
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}  # noqa: S608
    finally:
        con.close()


def _fill(memory: CortexMemory) -> None:
    memory.save_task_result(
        "Meet Alice Johnson.", "Alice Johnson joined Acme Corp in Berlin.", "HR", importance=0.9
    )
    memory.save_task_result("Sync with Bob Stone.", "Bob Stone reviewed the budget.", "PM", 0.4)
    memory.save_agent_interaction("PM", "noted", "Budget review done", importance=0.8)
    memory.save_cortex_decision("Hire", "Team is short", outcome="Approved")
    assert memory.user_memory is not None
    memory.user_memory.save_memory("u1", "Carol Diaz prefers Rust", metadata={"k": 1})
    memory.user_memory.update_user_preferences("u1", {"verbosity": "terse"})


def _snapshot(memory: CortexMemory) -> dict[str, object]:
    assert memory.short_term is not None and memory.long_term is not None
    assert memory.entity_memory is not None and memory.user_memory is not None
    return {
        "short": _contents(memory.short_term),
        "short_meta": [i.metadata for i in memory.short_term._all_items()],
        "long": _contents(memory.long_term),
        "entity": _contents(memory.entity_memory),
        "ctx_short": _contents(memory.contextual.short_term),
        "ctx_long": _contents(memory.contextual.long_term),
        "entities": {k: v["frequency"] for k, v in memory.entity_memory.entities.items()},
        "relationships": memory.entity_memory.relationships,
        # (not through search: searching counts accesses and would promote the item)
        "user": _contents(memory.user_memory.get_or_create_user_memory("u1")),
        "user_meta": [
            i.metadata for i in memory.user_memory.get_or_create_user_memory("u1")._all_items()
        ],
        "user_stats": {
            k: v
            for k, v in memory.user_memory.get_user_statistics("u1").items()
            if k != "preferences"
        },
        "prefs": memory.user_memory.get_user_preferences("u1"),
    }


class TestCortexRoundTrip:
    def test_everything_survives_reopening_exactly_once(
        self, write_memory_on: None, db_file: str
    ) -> None:
        memory = CortexMemory(enable_user=True, persistence_path=db_file)
        _fill(memory)
        before = _snapshot(memory)
        counts = _table_counts(db_file)
        assert memory.storage is not None
        memory.storage.close()

        assert before["short"] == [
            "Task completed: Meet Alice Johnson. - Result: Alice Johnson joined Acme Corp in Berlin.",
            "Task completed: Sync with Bob Stone. - Result: Bob Stone reviewed the budget.",
            "[PM] noted: Budget review done",
        ]
        assert before["long"] == [
            "Alice Johnson joined Acme Corp in Berlin.",
            "[PM] noted: Budget review done",
            "Decision: Hire\nContext: Team is short\nOutcome: Approved",
        ]
        assert {"Alice Johnson", "Acme Corp", "Berlin", "Bob Stone"} <= set(
            before["entities"]  # type: ignore[arg-type]
        )
        assert before["relationships"]
        assert before["user"] == ["Carol Diaz prefers Rust"]
        assert before["prefs"]["verbosity"] == "terse"  # type: ignore[index]

        for _cycle in range(3):
            again = CortexMemory(enable_user=True, persistence_path=db_file)
            assert _snapshot(again) == before
            assert again.storage is not None
            again.storage.close()
            assert _table_counts(db_file) == counts

    def test_saving_after_reopening_adds_exactly_one(
        self, write_memory_on: None, db_file: str
    ) -> None:
        memory = CortexMemory(persistence_path=db_file)
        memory.save_task_result("Plan Atlas", "Atlas planned", "PM", importance=0.9)
        assert memory.storage is not None
        memory.storage.close()
        for n in range(3):
            again = CortexMemory(persistence_path=db_file)
            again.save_agent_interaction("PM", "step", f"note {n}", importance=0.9)
            assert again.storage is not None
            again.storage.close()
        final = CortexMemory(persistence_path=db_file)
        assert _contents(final.short_term) == [
            "Task completed: Plan Atlas - Result: Atlas planned",
            "[PM] step: note 0",
            "[PM] step: note 1",
            "[PM] step: note 2",
        ]
        assert _contents(final.long_term) == [
            "Atlas planned",
            "[PM] step: note 0",
            "[PM] step: note 1",
            "[PM] step: note 2",
        ]
        assert final.get_agent_history("PM", limit=2) == ["[PM] step: note 2", "[PM] step: note 1"]
        assert final.storage is not None
        final.storage.close()

    def test_reset_all_clears_the_file(self, write_memory_on: None, db_file: str) -> None:
        memory = CortexMemory(enable_user=True, persistence_path=db_file)
        _fill(memory)
        assert memory.entity_memory is not None
        memory.entity_memory.add_relation("Dan Evans", "mentors", "Erin Fox")
        assert memory.storage is not None
        memory.storage.close()
        # A new process knows nothing of user "u1" until it reads the file.
        reopened = CortexMemory(enable_user=True, persistence_path=db_file)
        reopened.reset_all()
        assert reopened.storage is not None
        reopened.storage.close()
        assert _table_counts(db_file) == {
            "memories": 0,
            "entities": 0,
            "aliases": 0,
            "mentions": 0,
            "relations": 0,
            "relation_evidence": 0,
            "merges": 0,
            "kv": 0,
        }
        con = sqlite3.connect(db_file)
        try:
            fts = con.execute("SELECT count(*) FROM texts_fts").fetchone()[0]
        finally:
            con.close()
        assert fts == 0
        last = CortexMemory(enable_user=True, persistence_path=db_file)
        assert last.build_context_for_task("Alice Johnson Acme Corp budget Rust") == ""
        assert last.user_memory is not None
        assert last.user_memory.search_user_memory("u1", "Rust") == []
        assert last.storage is not None
        last.storage.close()


class TestTiersRoundTrip:
    def test_each_tier_in_one_file(self, db_file: str) -> None:
        storage = SQLiteStorage(db_file)
        short = ShortTermMemory(capacity=2, storage=storage)
        long = LongTermMemory(storage=storage)
        entity = EntityMemory(storage=storage)
        contextual = ContextualMemory(long_term_storage=storage)
        users = UserMemory(storage=storage)
        for text in ("first note", "second note", "third note"):
            short.save(text, agent_id="a")
        kept = long.save("Acme Corp renewed", importance=0.9, metadata={"deal": 7})
        entity.save("Alice Johnson joined Acme Corp in Berlin.")
        contextual.save("ctx short", importance=0.2)
        contextual.save("ctx long", importance=0.9)
        users.save_memory("alice", "Alice likes tea")
        users.save_memory("bob", "Bob likes coffee")
        relationships = entity.relationships
        storage.close()

        for _ in range(2):
            storage = SQLiteStorage(db_file)
            short = ShortTermMemory(capacity=2, storage=storage)
            long = LongTermMemory(storage=storage)
            entity = EntityMemory(storage=storage)
            contextual = ContextualMemory(long_term_storage=storage)
            users = UserMemory(storage=storage)
            assert _contents(short) == ["second note", "third note"]
            found = long.retrieve(kept.memory_id)
            assert isinstance(found, MemoryItem)
            assert (found.content, found.metadata) == (
                "Acme Corp renewed",
                {"deal": 7, "importance": 0.9},
            )
            assert found.timestamp == kept.timestamp
            assert _contents(long) == ["Acme Corp renewed"]
            assert _contents(entity) == ["Alice Johnson joined Acme Corp in Berlin."]
            assert entity.relationships == relationships
            assert entity.get_related_entities("Alice Johnson") == {"Acme Corp", "Berlin"}
            assert _contents(contextual.short_term) == ["ctx short"]
            assert _contents(contextual.long_term) == ["ctx long"]
            assert [i.content for i in users.search_user_memory("alice", "likes")] == [
                "Alice likes tea"
            ]
            assert users.user_ids() == ["alice", "bob"]
            storage.close()

    def test_long_term_db_path(self, tmp_path: Path) -> None:
        path = str(tmp_path / "lt.db")
        memory = LongTermMemory(db_path=path)
        memory.save("Initech signed", importance=0.8)
        memory.space.close()
        for _ in range(3):
            again = LongTermMemory(db_path=path)
            assert _contents(again) == ["Initech signed"]
            again.space.close()


class TestNoStrayFiles:
    def test_nothing_written_to_the_working_directory(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("WRITE_MEMORY", "1")
        memory = CortexMemory(enable_user=True)
        _fill(memory)
        memory.build_context_for_task("Alice Johnson")
        ShortTermMemory().save("x")
        LongTermMemory().save("x")
        EntityMemory().save("Alice went to Paris")
        ContextualMemory().save("x", importance=0.9)
        UserMemory().save_memory("u", "x")
        SQLiteStorage().save("k", {"v": 1})
        assert os.listdir(tmp_path) == []


class TestBookkeepingDurability:
    """Access counts commit without a disk flush; memories keep the full flush."""

    def test_relaxed_write_is_scoped_to_its_transaction(self, tmp_path: Path) -> None:
        from graphmem.store.database import Database

        db = Database(tmp_path / "d.db")
        try:
            with db.write(durable=False) as conn:
                assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
            with db.write() as conn:
                assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
        finally:
            db.engine.dispose()

    def test_access_counts_survive_reopening(self, tmp_path: Path) -> None:
        path = tmp_path / "m.db"
        memory = LongTermMemory(storage=SQLiteStorage(path))
        saved = memory.save("Alice Johnson joined Acme Corp in Berlin.")
        assert memory.search("Acme")[0].memory_id == saved.memory_id
        memory.search("Berlin")
        reopened = LongTermMemory(storage=SQLiteStorage(path))
        assert reopened.retrieve(saved.memory_id).access_count == 3  # two searches + this retrieve
