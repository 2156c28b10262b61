"""The Memory ABC (signatures of the seed), its concrete helpers, and filters (docs/contract.md §1, §2)."""

from __future__ import annotations

import inspect
import json
import typing
from datetime import datetime
from typing import Any

import pytest

from graphmem import LongTermMemory, Memory, MemoryItem, ShortTermMemory
from graphmem.filters import item_matches

EMPTY = inspect.Parameter.empty
POS = inspect.Parameter.POSITIONAL_OR_KEYWORD
VAR_KW = inspect.Parameter.VAR_KEYWORD

# method -> ([(name, kind, default, type)], return type), as in memory_base.txt.
SEED_SIGNATURES: dict[str, tuple[list[tuple[str, Any, Any, Any]], Any]] = {
    "__init__": (
        [
            ("storage", POS, None, Any | None),
            ("max_items", POS, None, int | None),
            ("enable_embeddings", POS, False, bool),
        ],
        None,
    ),
    "save": (
        [
            ("content", POS, EMPTY, str),
            ("metadata", POS, None, dict[str, Any] | None),
            ("kwargs", VAR_KW, EMPTY, None),
        ],
        MemoryItem,
    ),
    "search": (
        [
            ("query", POS, EMPTY, str),
            ("limit", POS, 10, int),
            ("filters", POS, None, dict[str, Any] | None),
            ("kwargs", VAR_KW, EMPTY, None),
        ],
        list[MemoryItem],
    ),
    "retrieve": (
        [
            ("memory_id", POS, None, str | None),
            ("filters", POS, None, dict[str, Any] | None),
            ("limit", POS, 10, int),
        ],
        MemoryItem | list[MemoryItem] | None,
    ),
    "update": (
        [("memory_id", POS, EMPTY, str), ("updates", POS, EMPTY, dict[str, Any])],
        bool,
    ),
    "delete": (
        [
            ("memory_id", POS, None, str | None),
            ("filters", POS, None, dict[str, Any] | None),
        ],
        int,
    ),
    "clear": ([], None),
    "get_context": (
        [("limit", POS, 10, int), ("format_type", POS, "text", str)],
        str,
    ),
    "get_statistics": ([], dict[str, Any]),
}


class TestMemoryABC:
    def test_abstract_methods_are_the_seeds(self) -> None:
        assert Memory.__abstractmethods__ == {
            "save",
            "search",
            "retrieve",
            "update",
            "delete",
            "clear",
        }
        with pytest.raises(TypeError):
            Memory()  # type: ignore[abstract]

    @pytest.mark.parametrize("method", sorted(SEED_SIGNATURES))
    def test_signature(self, method: str) -> None:
        expected_params, expected_return = SEED_SIGNATURES[method]
        func = getattr(Memory, method)
        params = list(inspect.signature(func).parameters.values())
        assert params[0].name == "self"
        assert [(p.name, p.kind, p.default) for p in params[1:]] == [
            (n, k, d) for n, k, d, _ in expected_params
        ]
        hints = typing.get_type_hints(func)
        for name, _, _, annotation in expected_params:
            if annotation is not None:
                assert hints[name] == annotation, name
        assert hints["return"] == (type(None) if expected_return is None else expected_return)

    @pytest.mark.parametrize("method", ["get_context", "get_statistics"])
    def test_concrete_helpers(self, method: str) -> None:
        assert method not in Memory.__abstractmethods__


class ListMemory(Memory):
    """A Calute-style subclass keeping items in the base's ``_items`` / ``_index``."""

    def save(
        self, content: str, metadata: dict[str, Any] | None = None, **kwargs: Any
    ) -> MemoryItem:
        item = MemoryItem(content=content, metadata=dict(metadata or {}), **kwargs)
        self._items.append(item)
        self._index[item.memory_id] = item
        return item

    def search(
        self, query: str, limit: int = 10, filters: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[MemoryItem]:
        return [i for i in self._items if query in i.content][:limit]

    def retrieve(
        self, memory_id: str | None = None, filters: dict[str, Any] | None = None, limit: int = 10
    ) -> MemoryItem | list[MemoryItem] | None:
        return self._index.get(memory_id) if memory_id else list(self._items)[:limit]

    def update(self, memory_id: str, updates: dict[str, Any]) -> bool:
        return False

    def delete(self, memory_id: str | None = None, filters: dict[str, Any] | None = None) -> int:
        return 0

    def clear(self) -> None:
        self._items.clear()
        self._index.clear()


def _stamp(item: MemoryItem) -> str:
    return item.timestamp.strftime("%Y-%m-%d %H:%M:%S")


@pytest.fixture(params=["list", "short_term", "long_term"])
def memory(request: pytest.FixtureRequest) -> Memory:
    if request.param == "list":
        return ListMemory(max_items=100)
    if request.param == "short_term":
        return ShortTermMemory(capacity=100)
    return LongTermMemory(max_items=100)


class TestContextAndStatistics:
    def test_empty(self, memory: Memory) -> None:
        assert memory.get_context() == ""
        assert memory.get_context(format_type="markdown") == ""
        assert json.loads(memory.get_context(format_type="json")) == []
        assert len(memory) == 0
        stats = memory.get_statistics()
        assert stats == {
            "total_items": 0,
            "max_items": 100,
            "memory_types": {},
            "unique_agents": 0,
            "unique_users": 0,
            "unique_conversations": 0,
        }

    def test_three_formats(self, memory: Memory) -> None:
        a = memory.save("Deployed v2 to staging", agent_id="ops")
        b = memory.save("Tests are green")
        assert memory.get_context() == "[ops]: Deployed v2 to staging\nTests are green"
        assert memory.get_context(format_type="markdown") == (
            f"- [{_stamp(a)}] **ops**: Deployed v2 to staging\n"
            f"- [{_stamp(b)}] **System**: Tests are green"
        )
        exported = json.loads(memory.get_context(format_type="json"))
        assert [e["content"] for e in exported] == ["Deployed v2 to staging", "Tests are green"]
        assert [e["agent_id"] for e in exported] == ["ops", None]
        assert [e["memory_id"] for e in exported] == [a.memory_id, b.memory_id]

    def test_json_export_with_datetimes_in_metadata(self, memory: Memory) -> None:
        memory.save("Release planned", metadata={"due": datetime(2030, 5, 1, 9, 30)})
        text = memory.get_context(format_type="json")
        exported = json.loads(text)
        assert len(exported) == 1
        assert "2030-05-01T09:30:00" in text
        assert MemoryItem.from_dict(exported[0]).metadata["due"] == datetime(2030, 5, 1, 9, 30)

    def test_limit_keeps_the_most_recent_oldest_first(self, memory: Memory) -> None:
        for n in range(15):
            memory.save(f"event number {n}")
        lines = memory.get_context(limit=10).split("\n")
        assert lines == [f"event number {n}" for n in range(5, 15)]
        assert memory.get_context(limit=3, format_type="markdown").count("\n") == 2

    def test_unknown_format_is_an_error(self, memory: Memory) -> None:
        with pytest.raises(ValueError, match="format_type"):
            memory.get_context(format_type="html")

    def test_statistics_values(self, memory: Memory) -> None:
        memory.save("a", agent_id="x", user_id="u1", conversation_id="c1")
        memory.save("b", agent_id="y", user_id="u1", conversation_id="c2")
        memory.save("c", agent_id="x")
        stats = memory.get_statistics()
        expected_type = {
            ListMemory: "general",
            ShortTermMemory: "short_term",
            LongTermMemory: "long_term",
        }[type(memory)]
        assert stats == {
            "total_items": 3,
            "max_items": 100,
            "memory_types": {expected_type: 3},
            "unique_agents": 2,
            "unique_users": 1,
            "unique_conversations": 2,
        }
        assert len(memory) == 3

    def test_repr_names_the_class(self, memory: Memory) -> None:
        assert repr(memory).startswith(type(memory).__name__)


def test_get_context_on_short_term_over_limit_does_not_crash() -> None:
    # calute's ShortTermMemory kept a deque and sliced it: TypeError past ``limit`` items.
    memory = ShortTermMemory(capacity=20)
    for n in range(20):
        memory.save(f"step {n}", agent_id="bot")
    assert memory.get_context(limit=10) == "\n".join(f"[bot]: step {n}" for n in range(10, 20))


# ---------------------------------------------------------------------------- filters
def _item() -> MemoryItem:
    return MemoryItem(
        "x", agent_id="bot", metadata={"importance": 0.9, "agent_id": "impostor", "tag": "ops"}
    )


class TestItemMatches:
    def test_attribute(self) -> None:
        assert item_matches(_item(), {"agent_id": "bot"})
        assert not item_matches(_item(), {"agent_id": "other"})

    def test_attribute_before_metadata(self) -> None:
        assert not item_matches(_item(), {"agent_id": "impostor"})

    def test_metadata(self) -> None:
        assert item_matches(_item(), {"tag": "ops", "importance": 0.9})
        assert not item_matches(_item(), {"tag": "dev"})

    def test_callable(self) -> None:
        assert item_matches(_item(), {"importance": lambda v: v > 0.5})
        assert not item_matches(_item(), {"importance": lambda v: v > 0.95})
        # A predicate that cannot handle the value means no match, not a crash.
        assert not item_matches(_item(), {"agent_id": lambda v: v > 3})

    def test_unknown_key_is_no_match(self) -> None:
        assert not item_matches(_item(), {"colour": "red"})
        assert not item_matches(_item(), {"colour": None})

    def test_empty_filters_match(self) -> None:
        assert item_matches(_item(), {}) and item_matches(_item(), None)


@pytest.fixture(params=["short_term", "long_term"])
def tier(request: pytest.FixtureRequest) -> Memory:
    memory: Memory = ShortTermMemory() if request.param == "short_term" else LongTermMemory()
    memory.save("Alpha release notes", agent_id="writer", metadata={"tag": "docs", "pages": 3})
    memory.save("Alpha release build", agent_id="builder", metadata={"tag": "ci", "pages": 0})
    memory.save("Beta planning", agent_id="writer", metadata={"tag": "plan", "pages": 12})
    return memory


class TestFiltersInTiers:
    def test_search(self, tier: Memory) -> None:
        found = tier.search("alpha release", filters={"agent_id": "writer"})
        assert [i.content for i in found] == ["Alpha release notes"]
        found = tier.search("release", filters={"pages": lambda p: p < 1})
        assert [i.content for i in found] == ["Alpha release build"]
        assert tier.search("release", filters={"colour": "red"}) == []

    def test_retrieve(self, tier: Memory) -> None:
        found = tier.retrieve(filters={"tag": "plan"})
        assert isinstance(found, list)
        assert [i.content for i in found] == ["Beta planning"]
        found = tier.retrieve(filters={"agent_id": "writer", "pages": lambda p: p > 5})
        assert isinstance(found, list) and [i.content for i in found] == ["Beta planning"]
        assert tier.retrieve(filters={"no_such_key": 1}) == []

    def test_delete(self, tier: Memory) -> None:
        assert tier.delete(filters={"no_such_key": "docs"}) == 0
        assert len(tier) == 3
        assert tier.delete(filters={"agent_id": "writer", "tag": "docs"}) == 1
        assert sorted(i.content for i in tier.retrieve(filters={}, limit=10)) == [  # type: ignore[union-attr]
            "Alpha release build",
            "Beta planning",
        ]
        assert tier.delete(filters={"pages": lambda p: p >= 0}) == 2
        assert len(tier) == 0
