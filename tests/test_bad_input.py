"""Bad input: a ValueError/TypeError naming the argument, and nothing written."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

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
from graphmem.errors import DatabaseFileError, InvalidArgumentError, InvalidArgumentTypeError
from graphmem.items import MAX_QUERY_CHARS
from graphmem.store.engine import SQLITE_MODULE as sqlite3  # the SQLite graphmem runs on


class Opaque:
    pass


BAD_CONTENT: list[tuple[Any, type[Exception]]] = [
    ("", ValueError),
    ("   \n\t", ValueError),
    (None, TypeError),
    (42, TypeError),
    (b"bytes", TypeError),
    (["list"], TypeError),
]
BAD_IMPORTANCE: list[tuple[Any, type[Exception]]] = [
    (-0.01, ValueError),
    (1.01, ValueError),
    (math.nan, ValueError),
    (math.inf, ValueError),
    (True, TypeError),
    ("0.9", TypeError),
    (None, TypeError),
]
BAD_METADATA: list[tuple[Any, type[Exception]]] = [
    ({"s": {1, 2}}, TypeError),
    ({"o": Opaque()}, TypeError),
    ({"n": math.nan}, ValueError),
    ({"t": (1, 2)}, TypeError),
    ({1: "non-str key"}, TypeError),
    (["not", "a", "dict"], TypeError),
    ("text", TypeError),
]
BAD_IDS: list[Any] = [1, 2.5, b"id", ["u"], Opaque()]

TIERS: dict[str, Callable[[SQLiteStorage], Any]] = {
    "short_term": lambda s: ShortTermMemory(storage=s),
    "long_term": lambda s: LongTermMemory(storage=s),
    "entity": lambda s: EntityMemory(storage=s),
    "contextual": lambda s: ContextualMemory(long_term_storage=s),
}


def _rows(path: str) -> int:
    con = sqlite3.connect(path)
    try:
        return int(con.execute("SELECT count(*) FROM memories").fetchone()[0])
    finally:
        con.close()


@pytest.fixture(params=sorted(TIERS))
def tier(request: pytest.FixtureRequest, db_file: str) -> Any:
    storage = SQLiteStorage(db_file)
    yield TIERS[request.param](storage)
    storage.close()


def _nothing_written(memory: Any, db_file: str) -> None:
    assert len(memory) == 0
    assert _rows(db_file) == 0


class TestTierSave:
    @pytest.mark.parametrize(("content", "error"), BAD_CONTENT)
    def test_content(self, tier: Any, db_file: str, content: Any, error: type[Exception]) -> None:
        with pytest.raises(error, match="content"):
            tier.save(content)
        _nothing_written(tier, db_file)

    @pytest.mark.parametrize(("metadata", "error"), BAD_METADATA)
    def test_metadata(self, tier: Any, db_file: str, metadata: Any, error: type[Exception]) -> None:
        with pytest.raises(error, match="metadata"):
            tier.save("valid text", metadata=metadata)
        _nothing_written(tier, db_file)

    @pytest.mark.parametrize("bad", BAD_IDS)
    @pytest.mark.parametrize("name", ["agent_id", "user_id", "conversation_id"])
    def test_ids(self, tier: Any, db_file: str, name: str, bad: Any) -> None:
        with pytest.raises(TypeError, match=name):
            tier.save("valid text", **{name: bad})
        _nothing_written(tier, db_file)


@pytest.mark.parametrize(("importance", "error"), BAD_IMPORTANCE)
@pytest.mark.parametrize("kind", ["long_term", "contextual"])
def test_importance(kind: str, importance: Any, error: type[Exception], db_file: str) -> None:
    storage = SQLiteStorage(db_file)
    memory = TIERS[kind](storage)
    with pytest.raises(error, match="importance"):
        memory.save("valid text", importance=importance)
    _nothing_written(memory, db_file)
    storage.close()


def test_update_with_bad_values_changes_nothing(db_file: str) -> None:
    storage = SQLiteStorage(db_file)
    memory = LongTermMemory(storage=storage)
    item = memory.save("original", metadata={"a": 1})
    for updates, error in [
        ({"content": ""}, ValueError),
        ({"metadata": {"s": {1}}}, TypeError),
        ({"agent_id": 5}, TypeError),
        ({"no_such_field": 1}, ValueError),
        ({"memory_id": "other"}, ValueError),
    ]:
        with pytest.raises(error):
            memory.update(item.memory_id, updates)
    stored = memory.retrieve(item.memory_id)
    assert stored is not None
    assert (stored.content, stored.metadata) == ("original", {"a": 1, "importance": 0.5})  # type: ignore[union-attr]
    storage.close()


class TestCortex:
    @pytest.fixture
    def cortex(self, write_memory_on: None, db_file: str) -> Any:
        memory = CortexMemory(enable_user=True, persistence_path=db_file)
        yield memory
        memory.storage.close()

    @pytest.mark.parametrize(
        ("call", "name", "error"),
        [
            (lambda m: m.save_task_result("", "r", "PM"), "task_description", ValueError),
            (lambda m: m.save_task_result("t", None, "PM"), "result", TypeError),
            (lambda m: m.save_task_result("t", "r", 7), "agent_role", TypeError),
            (lambda m: m.save_task_result("t", "r", "PM", importance=2), "importance", ValueError),
            (
                lambda m: m.save_task_result("t", "r", "PM", importance=math.nan),
                "importance",
                ValueError,
            ),
            (
                lambda m: m.save_task_result("t", "r", "PM", importance=True),
                "importance",
                TypeError,
            ),
            (
                lambda m: m.save_task_result("t", "r", "PM", task_metadata={"s": {1}}),
                "task_metadata",
                TypeError,
            ),
            (
                lambda m: m.save_task_result("t", "r", "PM", task_metadata=[1]),
                "task_metadata",
                TypeError,
            ),
            (lambda m: m.save_agent_interaction("PM", "act", " "), "content", ValueError),
            (lambda m: m.save_agent_interaction("PM", 3, "c"), "action", TypeError),
            (
                lambda m: m.save_agent_interaction("PM", "act", "c", importance=-1),
                "importance",
                ValueError,
            ),
            (
                lambda m: m.save_agent_interaction("PM", "act", "c", importance="high"),
                "importance",
                TypeError,
            ),
            (lambda m: m.save_cortex_decision("", "ctx"), "decision", ValueError),
            (lambda m: m.save_cortex_decision("d", "ctx", outcome=5), "outcome", TypeError),
            (
                lambda m: m.save_cortex_decision("d", "ctx", importance=1.5),
                "importance",
                ValueError,
            ),
            (lambda m: m.user_memory.save_memory("u1", ""), "content", ValueError),
            (lambda m: m.user_memory.save_memory(5, "text"), "user_id", TypeError),
            (
                lambda m: m.user_memory.save_memory("u1", "text", metadata={"x": {1}}),
                "metadata",
                TypeError,
            ),
            (
                lambda m: m.user_memory.update_user_preferences("u1", {"x": {1}}),
                "preferences",
                TypeError,
            ),
        ],
    )
    def test_rejected_and_nothing_written(
        self, cortex: Any, db_file: str, call: Any, name: str, error: type[Exception]
    ) -> None:
        with pytest.raises(error, match=name):
            call(cortex)
        for tier in (cortex.short_term, cortex.long_term, cortex.entity_memory, cortex.contextual):
            assert len(tier) == 0
        assert _rows(db_file) == 0
        assert cortex.user_memory.user_ids() == []

    def test_get_agent_history_bad_role(self, cortex: Any) -> None:
        with pytest.raises(TypeError, match="agent_role"):
            cortex.get_agent_history(None)

    def test_build_context_bad_task(self, cortex: Any) -> None:
        with pytest.raises(TypeError, match="task_description"):
            cortex.build_context_for_task(123)


class TestReadArguments:
    @pytest.mark.parametrize(
        ("call", "name", "error"),
        [
            (lambda m: m.search(5), "query", TypeError),
            (lambda m: m.search("x", limit="3"), "limit", TypeError),
            (lambda m: m.search("x", limit=-1), "limit", ValueError),
            (lambda m: m.search("x", filters=[("a", 1)]), "filters", TypeError),
            (lambda m: m.retrieve(memory_id=5), "memory_id", TypeError),
            (lambda m: m.delete(memory_id=5), "memory_id", TypeError),
            (lambda m: m.update(5, {}), "memory_id", TypeError),
            (lambda m: m.update("x", [1]), "updates", TypeError),
            (lambda m: m.get_context(format_type="xml"), "format_type", ValueError),
        ],
    )
    def test_named_errors(self, call: Any, name: str, error: type[Exception]) -> None:
        memory = LongTermMemory()
        memory.save("kept")
        with pytest.raises(error, match=name):
            call(memory)
        assert [i.content for i in memory._all_items()] == ["kept"]

    def test_user_memory_bad_user_ids(self) -> None:
        users = UserMemory()
        with pytest.raises(TypeError, match="user_id"):
            users.search_user_memory(None, "x")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="user_id"):
            users.get_user_preferences("")


# --------------------------------------------------- issue 19, item 7: every argument checked
class TestUpdateValues:
    """``update`` checks each field's value as it enters, with an error naming the field,
    and writes nothing when one is wrong."""

    @pytest.mark.parametrize(
        ("updates", "error", "name"),
        [
            ({"access_count": "x"}, InvalidArgumentTypeError, "access_count"),
            ({"access_count": 2**70}, InvalidArgumentError, "access_count"),
            ({"access_count": -5}, InvalidArgumentError, "access_count"),
            ({"access_count": True}, InvalidArgumentTypeError, "access_count"),
            ({"relevance_score": math.nan}, InvalidArgumentError, "relevance_score"),
            ({"relevance_score": math.inf}, InvalidArgumentError, "relevance_score"),
            ({"relevance_score": "high"}, InvalidArgumentTypeError, "relevance_score"),
            ({"last_accessed": "yesterday"}, InvalidArgumentError, "last_accessed"),
            ({"last_accessed": 17}, InvalidArgumentTypeError, "last_accessed"),
            ({"timestamp": None}, InvalidArgumentTypeError, "timestamp"),
            ({"memory_type": None}, InvalidArgumentTypeError, "memory_type"),
            ({"memory_type": 5}, InvalidArgumentTypeError, "memory_type"),
            ({"memory_type": " "}, InvalidArgumentError, "memory_type"),
            ({"embedding": "notalist"}, InvalidArgumentTypeError, "embedding"),
            ({"embedding": [1.0, math.nan]}, InvalidArgumentError, r"embedding\[1\]"),
            ({"embedding": [10**400]}, InvalidArgumentError, r"embedding\[0\]"),
            ({1: "x"}, InvalidArgumentError, "unknown"),
        ],
    )
    def test_refused_naming_the_field(
        self, db_file: str, updates: dict[Any, Any], error: type[Exception], name: str
    ) -> None:
        storage = SQLiteStorage(db_file)
        memory = LongTermMemory(storage=storage)
        item = memory.save("original")
        before = _dump(db_file)
        with pytest.raises(error, match=name):
            memory.update(item.memory_id, updates)
        assert _dump(db_file) == before
        storage.close()

    def test_good_values_are_stored_normalised(self, db_file: str) -> None:
        storage = SQLiteStorage(db_file)
        memory = LongTermMemory(storage=storage)
        item = memory.save("original")
        assert memory.update(
            item.memory_id,
            {"access_count": 3, "last_accessed": "2026-01-01T00:00:00+00:00", "embedding": [1, 2]},
        )
        [stored] = memory._all_items()  # (retrieve would count an access)
        assert isinstance(stored, MemoryItem)
        assert stored.last_accessed == datetime(2026, 1, 1, tzinfo=UTC)
        assert stored.embedding == [1.0, 2.0] and stored.access_count == 3
        storage.close()


def _dump(path: str) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(path)
    try:
        return [tuple(r) for r in con.execute("SELECT * FROM memories ORDER BY seq")]
    finally:
        con.close()


class TestQueryLength:
    """A query (or task) longer than MAX_QUERY_CHARS is refused clearly, not cut."""

    TOO_LONG = "word " * (MAX_QUERY_CHARS // 5 + 1)

    @pytest.mark.parametrize(
        ("call", "name"),
        [
            (lambda m, q: m.search(q), "query"),
            (lambda m, q: m.long_term.search(q), "query"),
            (lambda m, q: m.contextual.search(q), "query"),
            (lambda m, q: m.entity_memory.search(q), "query"),
            (lambda m, q: m.build_context_for_task(q), "task_description"),
            (lambda m, q: m.build_context_report(q), "task_description"),
        ],
    )
    def test_refused(self, call: Any, name: str) -> None:
        memory = CortexMemory()
        with pytest.raises(InvalidArgumentError, match=f"{name} is .* the limit is 100,000"):
            call(memory, self.TOO_LONG)

    def test_at_the_limit_it_runs(self) -> None:
        memory = CortexMemory()
        memory.save_task_result("Audit", "Acme passed the audit", "QA", importance=0.9)
        query = ("Acme audit " * MAX_QUERY_CHARS)[:MAX_QUERY_CHARS]
        assert memory.long_term is not None
        found = memory.long_term.search(query)
        assert len(found) == 1 and "Acme passed the audit" in found[0].content


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"short_term_capacity": 10**30}, "short_term_capacity"),
        ({"long_term_capacity": 2**63}, "long_term_capacity"),
        ({"short_term_capacity": 0}, "short_term_capacity"),
        ({"long_term_capacity": 1.5}, "long_term_capacity"),
    ],
)
def test_cortex_capacities_are_checked(kwargs: dict[str, Any], name: str) -> None:
    with pytest.raises((InvalidArgumentError, InvalidArgumentTypeError), match=name):
        CortexMemory(**kwargs)


def test_tier_capacities_fit_a_stored_count() -> None:
    with pytest.raises(InvalidArgumentError, match="capacity"):
        ShortTermMemory(capacity=10**30)
    with pytest.raises(InvalidArgumentError, match="max_items"):
        LongTermMemory(max_items=2**64)
    assert ShortTermMemory(capacity=2**63 - 1).capacity == 2**63 - 1


@pytest.mark.parametrize("version", ["x", "2.0", "", " ", "-1", "0", "9" * 40])
def test_a_malformed_schema_version_is_a_database_file_error(tmp_path: Any, version: str) -> None:
    path = tmp_path / "m.db"
    SQLiteStorage(str(path)).close()
    con = sqlite3.connect(path)
    con.execute("UPDATE graphmem_meta SET value = ? WHERE key = 'schema_version'", (version,))
    con.commit()
    con.close()
    before = path.read_bytes()
    with pytest.raises(DatabaseFileError, match="schema_version .* is not a version"):
        SQLiteStorage(str(path))
    assert path.read_bytes() == before
