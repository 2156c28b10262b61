"""Each tier's Calute-compatible behaviour (docs/contract.md §2), with assertions on the stored content."""

from __future__ import annotations

import inspect
from datetime import datetime, timedelta
from typing import Any

import pytest

from graphmem import (
    ContextualMemory,
    EntityMemory,
    LongTermMemory,
    MemoryItem,
    ShortTermMemory,
    UserMemory,
)


def _defaults(cls: type, *names: str) -> dict[str, Any]:
    params = inspect.signature(cls).parameters
    return {name: params[name].default for name in names}


def _contents(items: object) -> list[str]:
    assert isinstance(items, list)
    return [i.content for i in items]


# ---------------------------------------------------------------------------- short-term
class TestShortTerm:
    def test_constructor_defaults(self) -> None:
        assert _defaults(ShortTermMemory, "capacity", "storage") == {
            "capacity": 20,
            "storage": None,
        }
        assert ShortTermMemory().capacity == 20

    def test_fifo_to_exactly_capacity(self) -> None:
        memory = ShortTermMemory(capacity=3)
        saved = [memory.save(f"note {n}") for n in range(5)]
        assert len(memory) == 3
        assert _contents(memory.get_recent(10)) == ["note 2", "note 3", "note 4"]
        assert memory.retrieve(saved[0].memory_id) is None
        assert memory.retrieve(saved[1].memory_id) is None
        found = memory.retrieve(saved[4].memory_id)
        assert isinstance(found, MemoryItem) and found.content == "note 4"
        memory.save("note 5")
        assert len(memory) == 3
        assert _contents(memory.get_recent(10)) == ["note 3", "note 4", "note 5"]

    def test_get_recent_oldest_first(self) -> None:
        memory = ShortTermMemory()
        for n in range(8):
            memory.save(f"step {n}")
        assert _contents(memory.get_recent()) == [f"step {n}" for n in range(3, 8)]
        assert _contents(memory.get_recent(2)) == ["step 6", "step 7"]
        assert memory.get_recent(0) == []

    def test_save_sets_fields_and_type(self) -> None:
        memory = ShortTermMemory()
        item = memory.save(
            "Ran the tests", metadata={"k": 1}, agent_id="qa", user_id="u", conversation_id="c"
        )
        assert (item.agent_id, item.user_id, item.conversation_id) == ("qa", "u", "c")
        assert item.memory_type == "short_term"
        assert item.metadata == {"k": 1}
        stored = memory.retrieve(item.memory_id)
        assert isinstance(stored, MemoryItem)
        assert stored.content == "Ran the tests" and stored.metadata == {"k": 1}

    def test_summarize(self) -> None:
        memory = ShortTermMemory()
        assert memory.summarize() == "No recent memories."
        memory.save("one", agent_id="a")
        memory.save("two")
        for n in range(4):
            memory.save(f"chat {n}", agent_id="b", conversation_id="c9")
        memory.save("x" * 150, agent_id="a")
        assert memory.summarize() == "\n".join(
            [
                "Recent activity:",
                "  [a]: one",
                "  [System]: two",
                f"  [a]: {'x' * 100}",
                "\nConversation c9:",
                "  [b]: chat 1",
                "  [b]: chat 2",
                "  [b]: chat 3",
            ]
        )

    def test_search_returns_only_matches(self) -> None:
        memory = ShortTermMemory()
        memory.save("The deploy pipeline failed")
        memory.save("Lunch menu for Friday")
        assert _contents(memory.search("deploy failure")) == ["The deploy pipeline failed"]
        assert memory.search("quantum chromodynamics") == []

    def test_update_and_delete(self) -> None:
        memory = ShortTermMemory()
        item = memory.save("draft")
        assert memory.update(item.memory_id, {"content": "final", "metadata": {"v": 2}})
        stored = memory.retrieve(item.memory_id)
        assert isinstance(stored, MemoryItem)
        assert (stored.content, stored.metadata) == ("final", {"v": 2})
        assert not memory.update("no-such-id", {"content": "x"})
        assert memory.delete(item.memory_id) == 1
        assert memory.delete(item.memory_id) == 0
        assert len(memory) == 0

    def test_clear(self) -> None:
        memory = ShortTermMemory()
        memory.save("a")
        memory.save("b")
        memory.clear()
        assert len(memory) == 0 and memory.get_recent() == []


# ---------------------------------------------------------------------------- long-term
class TestLongTerm:
    def test_constructor_defaults(self) -> None:
        assert _defaults(
            LongTermMemory, "storage", "enable_embeddings", "db_path", "max_items", "retention_days"
        ) == {
            "storage": None,
            "enable_embeddings": True,
            "db_path": None,
            "max_items": 10000,
            "retention_days": 365,
        }

    def test_importance_kept_in_metadata(self) -> None:
        memory = LongTermMemory()
        default = memory.save("Acme renewed the contract")
        given = memory.save("Initech cancelled", metadata={"src": "crm"}, importance=0.9)
        assert default.metadata == {"importance": 0.5}
        assert given.metadata == {"src": "crm", "importance": 0.9}
        stored = memory.retrieve(given.memory_id)
        assert isinstance(stored, MemoryItem)
        assert stored.metadata == {"src": "crm", "importance": 0.9}
        assert stored.memory_type == "long_term"

    def test_over_capacity_evicts_the_least_important(self) -> None:
        memory = LongTermMemory(max_items=10)
        keep = [memory.save(f"important fact {n}", importance=0.9) for n in range(5)]
        weak = memory.save("trivial remark", importance=0.05)
        keep += [memory.save(f"important fact {n}", importance=0.9) for n in range(5, 9)]
        assert len(memory) == 10
        newest = memory.save("another important fact", importance=0.9)  # 11th: no error
        assert len(memory) == 10
        assert memory.retrieve(weak.memory_id) is None
        for item in [*keep, newest]:
            assert memory.retrieve(item.memory_id) is not None

    def test_items_past_retention_go_first(self) -> None:
        memory = LongTermMemory(max_items=3, retention_days=30)
        old = memory.save(
            "old but important", importance=1.0, timestamp=datetime.now() - timedelta(days=90)
        )
        rest = [memory.save(f"fresh note {n}", importance=0.1) for n in range(3)]
        assert len(memory) == 3
        assert memory.retrieve(old.memory_id) is None
        assert all(memory.retrieve(i.memory_id) is not None for i in rest)

    def test_frequently_accessed_items_survive(self) -> None:
        memory = LongTermMemory(max_items=3)
        items = [memory.save(f"fact {n}", importance=0.5) for n in range(3)]
        for _ in range(30):
            memory.retrieve(items[0].memory_id)
        memory.save("fact 3", importance=0.5)
        assert len(memory) == 3
        assert memory.retrieve(items[0].memory_id) is not None
        # Among the equally important, never-read items the oldest goes.
        assert memory.retrieve(items[1].memory_id) is None

    def test_consolidate(self) -> None:
        memory = LongTermMemory()
        assert memory.consolidate() == "No long-term memories available."
        memory.save("minor note", agent_id="writer", importance=0.2)
        memory.save("key insight", agent_id="writer", importance=0.9)
        memory.save("call summary", conversation_id="call-1", agent_id="writer", importance=0.5)
        memory.save("y" * 200)
        assert memory.consolidate() == "\n".join(
            [
                "Long-term memory summary:",
                "\nWriter:",
                "  • key insight",
                "  • minor note",
                "\nCall-1:",
                "  • call summary",
                "\nGeneral:",
                f"  • {'y' * 150}",
            ]
        )

    def test_db_path_persists(self, tmp_path: Any) -> None:
        path = tmp_path / "lt.db"
        memory = LongTermMemory(db_path=str(path))
        memory.save("Alice Johnson leads the Atlas project", importance=0.8)
        memory.space.close()
        assert path.exists()
        again = LongTermMemory(db_path=str(path))
        assert _contents(again.search("Atlas")) == ["Alice Johnson leads the Atlas project"]
        again.space.close()


# ---------------------------------------------------------------------------- entity
@pytest.fixture(scope="module")
def people() -> tuple[EntityMemory, list[MemoryItem]]:
    memory = EntityMemory()
    items = [
        memory.save("Alice Johnson joined Acme Corp in Berlin."),
        memory.save("Bob Stone met Alice Johnson at the Initech office."),
        memory.save("The weather was pleasant."),
    ]
    return memory, items


class TestEntity:
    def test_save_records_entities(self, people: tuple[EntityMemory, list[MemoryItem]]) -> None:
        memory, items = people
        assert items[0].metadata["entities"] == ["Alice Johnson", "Acme Corp", "Berlin"]
        assert items[1].metadata["entities"] == ["Bob Stone", "Alice Johnson", "Initech"]
        assert items[2].metadata["entities"] == []
        stored = memory.retrieve(items[0].memory_id)
        assert isinstance(stored, MemoryItem)
        assert stored.metadata["entities"] == ["Alice Johnson", "Acme Corp", "Berlin"]

    def test_save_with_given_entities(self) -> None:
        memory = EntityMemory()
        item = memory.save("the quarterly review", entities=["Carol Diaz", "Globex"])
        assert item.metadata["entities"] == ["Carol Diaz", "Globex"]
        assert memory.get_related_entities("Carol Diaz") == {"Globex"}
        assert memory.entity_mentions["Globex"] == [item.memory_id]

    def test_entity_info_known(self, people: tuple[EntityMemory, list[MemoryItem]]) -> None:
        memory, items = people
        info = memory.get_entity_info("Alice Johnson")
        assert info["mentions"] == [items[0].memory_id, items[1].memory_id]
        assert info["frequency"] == 2
        assert info["contexts"] == [items[0].content, items[1].content]
        assert isinstance(info["first_seen"], datetime)
        assert info["first_seen"] <= info["last_seen"]
        targets = {r["target"] for r in info["relationships"]}
        assert {"Acme Corp", "Berlin", "Bob Stone", "Initech"} <= targets
        assert all(set(r) == {"relation", "target"} for r in info["relationships"])

    def test_entity_info_unknown(self, people: tuple[EntityMemory, list[MemoryItem]]) -> None:
        memory, _ = people
        assert memory.get_entity_info("Zebulon Quux") == {"mentions": [], "relationships": []}

    def test_related_entities(self, people: tuple[EntityMemory, list[MemoryItem]]) -> None:
        memory, _ = people
        related = memory.get_related_entities("Alice Johnson")
        assert related == {"Acme Corp", "Berlin", "Bob Stone", "Initech"}
        assert "Alice Johnson" not in related
        assert memory.get_related_entities("Berlin", max_depth=1) == {"Alice Johnson", "Acme Corp"}
        assert "Bob Stone" in memory.get_related_entities("Berlin", max_depth=2)
        assert "Berlin" not in memory.get_related_entities("Berlin", max_depth=2)
        assert memory.get_related_entities("Zebulon Quux") == set()

    def test_views(self, people: tuple[EntityMemory, list[MemoryItem]]) -> None:
        memory, items = people
        entities = memory.entities
        assert set(entities) == {"Alice Johnson", "Acme Corp", "Berlin", "Bob Stone", "Initech"}
        assert set(entities["Berlin"]) == {"first_seen", "last_seen", "frequency", "contexts"}
        assert entities["Berlin"]["frequency"] == 1
        assert entities["Berlin"]["contexts"] == [items[0].content]
        assert memory.entity_mentions["Alice Johnson"] == [items[0].memory_id, items[1].memory_id]
        pairs = memory.relationships["co_occurs"]
        assert len(pairs) == len(set(pairs))
        assert {frozenset(p) for p in pairs} >= {
            frozenset({"Alice Johnson", "Acme Corp"}),
            frozenset({"Bob Stone", "Initech"}),
        }

    def test_views_are_read_only_snapshots(
        self, people: tuple[EntityMemory, list[MemoryItem]]
    ) -> None:
        memory, _ = people
        memory.entities["Berlin"]["frequency"] = 99
        memory.entities.pop("Berlin")
        memory.entity_mentions["Berlin"].append("forged")
        assert memory.entities["Berlin"]["frequency"] == 1
        assert "forged" not in memory.entity_mentions["Berlin"]
        # ``relationships`` is not a snapshot: changes are written to the graph, as Calute
        # code expects (tests/test_calute_views.py).

    def test_search_finds_by_word_and_entity(
        self, people: tuple[EntityMemory, list[MemoryItem]]
    ) -> None:
        memory, items = people
        assert _contents(memory.search("weather")) == ["The weather was pleasant."]
        found = _contents(memory.search("Bob Stone"))
        assert found[0] == items[1].content
        assert "The weather was pleasant." not in found


# ---------------------------------------------------------------------------- contextual
class TestContextual:
    def test_constructor_defaults(self) -> None:
        assert _defaults(
            ContextualMemory,
            "short_term_capacity",
            "long_term_storage",
            "promotion_threshold",
            "importance_threshold",
        ) == {
            "short_term_capacity": 20,
            "long_term_storage": None,
            "promotion_threshold": 3,
            "importance_threshold": 0.7,
        }

    def test_context_stack(self) -> None:
        memory = ContextualMemory()
        assert memory.get_current_context() is None and memory.pop_context() is None
        memory.push_context("task", {"name": "release"})
        memory.push_context("conversation", {"id": "c1"})
        current = memory.get_current_context()
        assert current is not None
        assert (current["type"], current["data"]) == ("conversation", {"id": "c1"})
        assert isinstance(current["timestamp"], datetime)
        item = memory.save("discussed the rollout")
        assert item.metadata["context"]["type"] == "conversation"
        popped = memory.pop_context()
        assert popped is not None and popped["type"] == "conversation"
        current = memory.get_current_context()
        assert current is not None and current["type"] == "task"

    def test_save_thresholds(self) -> None:
        memory = ContextualMemory()
        below = memory.save("just below the bar", importance=0.69)
        at = memory.save("exactly at the bar", importance=0.7)
        asked = memory.save("asked for long term", importance=0.1, to_long_term=True)
        assert _contents(memory.short_term.get_recent(10)) == ["just below the bar"]
        assert sorted(i.content for i in memory.long_term._all_items()) == [
            "asked for long term",
            "exactly at the bar",
        ]
        assert below.metadata["importance"] == 0.69
        assert at.metadata["importance"] == 0.7 and asked.metadata["importance"] == 0.1
        assert len(memory) == 3

    def test_search_across_both_with_source(self) -> None:
        memory = ContextualMemory()
        memory.save("Atlas budget draft", importance=0.3)
        memory.save("Atlas budget approved", importance=0.9)
        memory.save("Lunch order")
        found = memory.search("Atlas budget")
        sources = {i.content: i.metadata["source"] for i in found}
        assert sources == {
            "Atlas budget draft": "short_term",
            "Atlas budget approved": "long_term",
        }
        only_short = memory.search("Atlas budget", search_long_term=False)
        assert _contents(only_short) == ["Atlas budget draft"]

    def test_promotion_after_threshold_exactly_once(self) -> None:
        memory = ContextualMemory(promotion_threshold=3)
        item = memory.save("Zephyr rollout checklist", importance=0.4)
        for _ in range(2):
            memory.search("Zephyr checklist")
        assert len(memory.long_term) == 0
        memory.search("Zephyr checklist")
        promoted = memory.long_term._all_items()
        assert [i.content for i in promoted] == ["Zephyr rollout checklist"]
        assert promoted[0].metadata["importance"] == 0.4
        assert "source" not in promoted[0].metadata
        for _ in range(5):
            memory.search("Zephyr checklist")
        memory.retrieve(item.memory_id)
        assert len(memory.long_term) == 1
        stored = memory.short_term.retrieve(item.memory_id)
        assert isinstance(stored, MemoryItem) and stored.metadata["promoted"] is True

    def test_promotion_by_retrieve(self) -> None:
        memory = ContextualMemory(promotion_threshold=2)
        item = memory.save("Orion ticket triage")
        memory.retrieve(item.memory_id)
        assert len(memory.long_term) == 0
        memory.retrieve(item.memory_id)
        assert _contents(memory.long_term.retrieve(filters={})) == ["Orion ticket triage"]

    def test_context_summary(self) -> None:
        memory = ContextualMemory()
        assert memory.get_context_summary() == "No context available."
        memory.push_context("task", "ship v2")
        memory.save("wrote changelog")
        memory.save("board approved budget", importance=0.9)
        memory.save("routine sync", importance=0.75)
        assert memory.get_context_summary() == "\n".join(
            [
                "Current context:",
                "  - task: ship v2",
                "\nRecent activity:",
                "  - wrote changelog",
                "\nImportant memories:",
                "  - board approved budget",
            ]
        )


# ---------------------------------------------------------------------------- user
class TestUser:
    def test_memory_and_isolation(self) -> None:
        users = UserMemory()
        contextual = users.get_or_create_user_memory("alice")
        assert isinstance(contextual, ContextualMemory)
        assert users.get_or_create_user_memory("alice") is contextual
        item = users.save_memory("alice", "Prefers Kubernetes answers", metadata={"src": "chat"})
        assert item.user_id == "alice"
        assert item.metadata["src"] == "chat"
        users.save_memory("bob", "Prefers Kubernetes tutorials with diagrams")
        assert _contents(users.search_user_memory("alice", "Kubernetes")) == [
            "Prefers Kubernetes answers"
        ]
        assert _contents(users.search_user_memory("bob", "Kubernetes")) == [
            "Prefers Kubernetes tutorials with diagrams"
        ]
        assert users.search_user_memory("carol", "Kubernetes") == []

    def test_preferences(self) -> None:
        users = UserMemory()
        assert users.get_user_preferences("alice") == {
            "response_style": "balanced",
            "verbosity": "normal",
            "technical_level": "intermediate",
            "language": "en",
            "timezone": "UTC",
            "memory_enabled": True,
            "max_context_items": 10,
        }
        users.update_user_preferences("alice", {"verbosity": "terse", "theme": "dark"})
        users.update_user_preferences("alice", {"language": "fr"})
        prefs = users.get_user_preferences("alice")
        assert (prefs["verbosity"], prefs["theme"], prefs["language"]) == ("terse", "dark", "fr")
        assert prefs["timezone"] == "UTC"
        assert users.get_user_preferences("bob")["verbosity"] == "normal"

    def test_context_and_statistics(self) -> None:
        users = UserMemory()
        users.save_memory("alice", "Alice Johnson works with Bob Stone at Acme Corp")
        users.save_memory("bob", "Initech hired Carol Diaz")
        context = users.get_user_context("alice")
        assert context.startswith("User preferences: {")
        assert "Alice Johnson works with Bob Stone at Acme Corp" in context
        assert "Known entities: " in context and "Acme Corp" in context
        assert "Initech" not in context and "Carol" not in context
        stats = users.get_user_statistics("alice")
        assert {"user_id", "total_memories", "entities_known", "preferences"} <= set(stats)
        assert stats["user_id"] == "alice"
        assert stats["total_memories"] == 1
        assert stats["entities_known"] == 3
        assert stats["preferences"] == users.get_user_preferences("alice")

    def test_clear_one_user_only(self) -> None:
        users = UserMemory()
        users.save_memory("alice", "Alice likes Rust")
        users.update_user_preferences("alice", {"verbosity": "terse"})
        users.save_memory("bob", "Bob likes Rust too")
        users.clear_user_memory("alice")
        assert users.search_user_memory("alice", "Rust") == []
        assert users.get_user_preferences("alice")["verbosity"] == "normal"
        assert users.get_user_statistics("alice")["total_memories"] == 0
        assert users.get_user_statistics("alice")["entities_known"] == 0
        assert _contents(users.search_user_memory("bob", "Rust")) == ["Bob likes Rust too"]
        assert users.get_user_statistics("bob")["total_memories"] == 1
