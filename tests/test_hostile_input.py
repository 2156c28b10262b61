"""Hostile input: either a documented error naming the argument (nothing written) or an exact
round trip through the file.

Arbitrary Unicode (control characters, NUL, lone surrogates, bidi marks), SQL and HTML
fragments, deeply nested or non-JSON metadata, NaN/inf importance and wrong types go through
``save``; what was saved must come back identical from a freshly opened file, and what was
refused must raise ``InvalidArgumentError``/``InvalidArgumentTypeError`` naming the argument
with no row written. FTS5 query syntax in search queries never raises, and filters naming
unknown keys match nothing.
"""

from __future__ import annotations

import math
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem import ContextualMemory, EntityMemory, LongTermMemory, SQLiteStorage
from graphmem.errors import InvalidArgumentError, InvalidArgumentTypeError
from graphmem.filters import ITEM_ATTRIBUTES
from graphmem.items import MAX_CONTENT_CHARS
from graphmem.store.engine import SQLITE_MODULE as sqlite3  # the SQLite graphmem runs on

FRAGMENTS = [
    "'; DROP TABLE memories; --",
    '" OR 1=1 --',
    "<script>alert('x')</script>",
    "</textarea><img src=x onerror=alert(1)>",
    "\x00",
    "\ud800",
    "\udfff",
    "\u202e",
    "\ufeff",
    "\r\n\t\x0b\x0c\x1b",
    "Alice Johnson of Acme Corp",
    'NEAR("a" "b", 2)',
    "content:secret",
    "memories_fts:x",
    "^start",
    "pref*",
    "a AND b OR NOT c",
    "(((",
    '"unbalanced',
    "{}",
    "$datetime",
]
ANY_TEXT = st.lists(
    st.one_of(st.text(st.characters(exclude_categories=())), st.sampled_from(FRAGMENTS)),
    max_size=6,
).map("".join)
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),  # NaN and infinities included: they must be refused
    ANY_TEXT,
    st.datetimes(timezones=st.one_of(st.none(), st.just(timezone(timedelta(hours=5))))),
    st.dates(),
)
_NOT_JSON = st.sampled_from([{1, 2}, (1, 2), b"bytes", object(), 1 + 2j, frozenset()])
METADATA_VALUES = st.recursive(
    st.one_of(_SCALARS, _NOT_JSON),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(ANY_TEXT, st.integers(), st.none()), inner, max_size=3),
    ),
    max_leaves=8,
)
METADATA = st.one_of(
    st.none(),
    st.dictionaries(ANY_TEXT, METADATA_VALUES, max_size=4),
    st.sampled_from([[], "metadata", 3, ("a", 1)]),
)
IMPORTANCE = st.one_of(
    st.floats(),
    st.integers(-2, 2),
    st.sampled_from([math.nan, math.inf, -math.inf, True, None, "0.5", 0.0, 1.0]),
)
IDS = st.one_of(st.none(), ANY_TEXT, st.sampled_from([3, b"agent", ["a"]]))
CONTENT = st.one_of(ANY_TEXT, st.sampled_from([None, 3, b"bytes", ["a"], "   ", "\n\t"]))


# ---------------------------------------------------------------------- an independent oracle
def _text_ok(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_ok(value: Any, depth: int) -> bool:
    if depth > 64:
        return False
    if value is None or isinstance(value, bool | int | datetime | date):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, str):
        return _text_ok(value)
    if isinstance(value, list):
        return all(_json_ok(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(
            isinstance(k, str) and _text_ok(k) and k not in ("$datetime", "$date") for k in value
        ) and all(_json_ok(v, depth + 1) for v in value.values())
    return False


def _problems(content: Any, metadata: Any, importance: Any, agent_id: Any) -> set[str]:
    """Names of the arguments graphmem must refuse."""
    bad = set()
    if not (
        isinstance(content, str)
        and content.strip()
        and _text_ok(content)
        and len(content) <= MAX_CONTENT_CHARS
    ):
        bad.add("content")
    if metadata is not None and not (isinstance(metadata, dict) and _json_ok(metadata, 0)):
        bad.add("metadata")
    if (
        isinstance(importance, bool)
        or not isinstance(importance, int | float)
        or not 0.0 <= importance <= 1.0  # NaN fails this too
    ):
        bad.add("importance")
    if agent_id is not None and not (isinstance(agent_id, str) and _text_ok(agent_id)):
        bad.add("agent_id")
    return bad


def _row_counts(path: Path) -> tuple[int, ...]:
    conn = sqlite3.connect(path)
    try:
        return tuple(
            conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # noqa: S608 - fixed names
            for table in ("memories", "entities", "mentions", "relations", "relation_evidence")
        )
    finally:
        conn.close()


@pytest.fixture(scope="module")
def db_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("hostile") / "hostile.db"
    SQLiteStorage(path).close()
    return path


@pytest.fixture(scope="module")
def memory(db_path):
    storage = SQLiteStorage(db_path)
    yield LongTermMemory(storage=storage, max_items=None)
    storage.close()


@SETTINGS
@given(content=CONTENT, metadata=METADATA, importance=IMPORTANCE, agent_id=IDS)
def test_save_is_refused_by_name_or_round_trips_exactly(
    db_path, memory, content, metadata, importance, agent_id
):
    problems = _problems(content, metadata, importance, agent_id)
    before = _row_counts(db_path)
    original_metadata = repr(metadata)
    try:
        item = memory.save(content, metadata=metadata, agent_id=agent_id, importance=importance)
    except (InvalidArgumentError, InvalidArgumentTypeError) as exc:
        assert problems, f"valid input refused: {exc}"
        assert any(name in str(exc) for name in problems), (problems, str(exc))
        assert _row_counts(db_path) == before
        return
    assert not problems, f"accepted input that must be refused: {problems}"
    assert repr(metadata) == original_metadata  # the caller's dict was not changed
    reopened = SQLiteStorage(db_path)
    try:
        got = LongTermMemory(storage=reopened, max_items=None).retrieve(item.memory_id)
    finally:
        reopened.close()
    assert got is not None
    assert got.content == content
    assert got.agent_id == agent_id
    assert got.metadata == {**(metadata or {}), "importance": float(importance)}
    assert got.timestamp == item.timestamp


@SETTINGS
@given(query=ANY_TEXT, limit=st.integers(0, 20))
def test_search_never_raises_on_query_syntax(memory, query, limit):
    if not memory.search("Alice", limit=1):
        memory.save("Alice Johnson of Acme Corp met Bob Stone in Paris.")
    if not _text_ok(query):  # a lone surrogate: a named error, not a crash in the tokenizer
        with pytest.raises(InvalidArgumentError, match="query is not valid Unicode"):
            memory.search(query, limit=limit)
        return
    found = memory.search(query, limit=limit)
    assert isinstance(found, list) and len(found) <= limit


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '""',
        "NEAR(",
        'NEAR("Alice" "Bob", 1)',
        "Ali*",
        "*",
        "^Alice",
        "content:Alice",
        "memories_fts:Alice",
        "Alice AND",
        "OR OR OR",
        "NOT",
        "-Alice",
        "+",
        "(Alice",
        "Alice)",
        "{content}: Alice",
        "\x00Alice",
        "'; DROP TABLE memories; --",
    ],
)
def test_fts5_syntax_is_plain_text_in_every_search_entry_point(tmp_path, query):
    storage = SQLiteStorage(tmp_path / "fts.db")
    long_term = LongTermMemory(storage=storage, max_items=None)
    contextual = ContextualMemory(long_term_storage=storage)
    entity = EntityMemory(storage=storage)
    long_term.save("Alice Johnson of Acme Corp met Bob Stone in Paris.")
    contextual.save("Alice Johnson reviewed the Paris budget.")
    entity.save("Alice Johnson works at Acme Corp.")
    for search in (long_term.search, contextual.search, entity.search):
        results = search(query)
        assert isinstance(results, list)
        for item in results:  # whatever matched shares a word with the query
            assert "alice" in query.lower() or "drop" in query.lower() or "memories" in query
            assert "Alice" in item.content
    assert _row_counts(tmp_path / "fts.db")[0] == 3  # nothing was dropped
    storage.close()


@SETTINGS
@given(
    key=ANY_TEXT.filter(lambda k: k not in ITEM_ATTRIBUTES), value=st.one_of(ANY_TEXT, st.none())
)
def test_filters_with_unknown_keys_match_nothing(db_path, memory, key, value):
    if not memory.search("Paris", limit=1):
        memory.save("Alice Johnson of Acme Corp met Bob Stone in Paris.")
    stored = {item.memory_id: item for item in memory._all_items()}
    assume_absent = all(key not in item.metadata for item in stored.values())
    if not assume_absent:
        return
    before = _row_counts(db_path)
    assert memory.search("Paris", filters={key: value}) == []
    assert memory.search("", filters={key: value}) == []
    assert memory.retrieve(filters={key: value}) == []
    assert memory.delete(filters={key: value}) == 0
    assert _row_counts(db_path) == before


@pytest.mark.parametrize(
    ("kwargs", "name", "error"),
    [
        ({"content": b"Alice"}, "content", InvalidArgumentTypeError),
        ({"content": None}, "content", InvalidArgumentTypeError),
        ({"content": " \n"}, "content", InvalidArgumentError),
        ({"content": "x\ud800y"}, "content", InvalidArgumentError),
        ({"importance": math.nan}, "importance", InvalidArgumentError),
        ({"importance": math.inf}, "importance", InvalidArgumentError),
        ({"importance": "high"}, "importance", InvalidArgumentTypeError),
        ({"importance": True}, "importance", InvalidArgumentTypeError),
        ({"metadata": {"x": math.nan}}, "metadata", InvalidArgumentError),
        ({"metadata": {"x": {1, 2}}}, "metadata", InvalidArgumentTypeError),
        ({"metadata": {1: "x"}}, "metadata", InvalidArgumentTypeError),
        ({"metadata": {"\udc80": 1}}, "metadata", InvalidArgumentError),
        ({"metadata": ["x"]}, "metadata", InvalidArgumentTypeError),
        ({"agent_id": 7}, "agent_id", InvalidArgumentTypeError),
        ({"user_id": ["u"]}, "user_id", InvalidArgumentTypeError),
    ],
)
def test_each_bad_argument_is_named(db_path, memory, kwargs, name, error):
    before = _row_counts(db_path)
    arguments = {"content": "Alice Johnson met Bob Stone.", **kwargs}
    with pytest.raises(error, match=name):
        memory.save(**arguments)
    assert _row_counts(db_path) == before


def test_metadata_nesting_limit(db_path, memory):
    def nested(depth: int) -> dict[str, Any]:
        value: Any = "leaf"
        for _ in range(depth):
            value = [value]
        return {"deep": value}

    ok = memory.save("nested metadata note", metadata=nested(63))
    reopened = SQLiteStorage(db_path)
    try:
        assert (
            LongTermMemory(storage=reopened).retrieve(ok.memory_id).metadata["deep"]
            == (nested(63)["deep"])
        )
    finally:
        reopened.close()
    before = _row_counts(db_path)
    for depth in (65, 10_000):  # 10,000 levels: no RecursionError, a named error
        with pytest.raises(InvalidArgumentError, match="metadata is nested deeper than 64"):
            memory.save("too deep", metadata=nested(depth))
    assert _row_counts(db_path) == before


@pytest.mark.slow
def test_five_megabyte_content_round_trips_and_is_searchable(tmp_path):
    path = tmp_path / "big.db"
    body = "".join(f"line {i}: the quarterly ledger balanced. " for i in range(130_000))
    content = "Alice Johnson of Acme Corp wrote this in Paris.\x00\n" + body + " zanzibarite"
    assert len(content) > 5_000_000
    storage = SQLiteStorage(path)
    item = LongTermMemory(storage=storage, max_items=None).save(content)
    storage.close()
    reopened = SQLiteStorage(path)
    try:
        memory = LongTermMemory(storage=reopened, max_items=None)
        assert memory.retrieve(item.memory_id).content == content
        assert [hit.memory_id for hit in memory.search("zanzibarite")] == [item.memory_id]
        assert "Alice Johnson" in memory.space.entity_index.graph("")
    finally:
        reopened.close()
    too_big = SQLiteStorage(path)
    try:
        with pytest.raises(InvalidArgumentError, match="content is 10,000,001 characters"):
            LongTermMemory(storage=too_big).save("x" * (MAX_CONTENT_CHARS + 1))
        assert _row_counts(path)[0] == 1
    finally:
        too_big.close()
