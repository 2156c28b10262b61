"""Calute's key-value storage API (docs/contract.md §2): SimpleStorage, SQLiteStorage, RAGStorage; JSON only."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from graphmem import MemoryStorage, RAGStorage, SimpleStorage, SQLiteStorage
from graphmem.store.engine import SQLITE_MODULE as sqlite3  # the SQLite graphmem runs on


@pytest.fixture(params=["simple", "sqlite_memory", "sqlite_file", "rag"])
def storage(request: pytest.FixtureRequest, db_file: str) -> Iterator[MemoryStorage]:
    if request.param == "simple":
        yield SimpleStorage()
    elif request.param == "sqlite_memory":
        yield SQLiteStorage()
    elif request.param == "sqlite_file":
        s = SQLiteStorage(db_file)
        yield s
        s.close()
    else:
        yield RAGStorage()


class TestKeyValue:
    def test_save_load_exists_delete(self, storage: MemoryStorage) -> None:
        value = {"tone": "brief", "n": [1, 2.5, None, True], "nested": {"k": "v"}}
        assert storage.save("prefs", value) is True
        assert storage.load("prefs") == value
        assert storage.exists("prefs") and not storage.exists("other")
        assert storage.load("other") is None
        assert storage.delete("prefs") is True
        assert storage.delete("prefs") is False
        assert storage.load("prefs") is None and not storage.exists("prefs")

    def test_values_are_copies(self, storage: MemoryStorage) -> None:
        value: dict[str, Any] = {"list": [1]}
        storage.save("k", value)
        value["list"].append(2)
        loaded = storage.load("k")
        assert loaded == {"list": [1]}
        loaded["list"].append(3)
        assert storage.load("k") == {"list": [1]}

    def test_overwrite(self, storage: MemoryStorage) -> None:
        storage.save("k", 1)
        storage.save("k", "two")
        assert storage.load("k") == "two"
        assert storage.list_keys() == ["k"]

    def test_list_keys_and_clear(self, storage: MemoryStorage) -> None:
        for key in ("user:b", "user:a", "task:1"):
            storage.save(key, key.upper())
        assert storage.list_keys() == ["task:1", "user:a", "user:b"]
        assert storage.list_keys("user:") == ["user:a", "user:b"]
        assert storage.list_keys("none") == []
        assert storage.clear() == 3
        assert storage.list_keys() == [] and storage.clear() == 0

    @pytest.mark.parametrize("data", [{1, 2}, object(), float("nan"), {"t": b"bytes"}])
    def test_non_json_rejected_and_nothing_stored(self, storage: MemoryStorage, data: Any) -> None:
        with pytest.raises(TypeError, match="data"):
            storage.save("bad", data)
        assert not storage.exists("bad") and storage.list_keys() == []

    @pytest.mark.parametrize(
        ("key", "error"), [(5, TypeError), (None, TypeError), ("", ValueError)]
    )
    def test_bad_keys(self, storage: MemoryStorage, key: Any, error: type[Exception]) -> None:
        with pytest.raises(error, match="key"):
            storage.save(key, 1)
        assert storage.list_keys() == []


def test_sqlite_kv_persists_as_json(db_file: str) -> None:
    storage = SQLiteStorage(db_file)
    storage.save("prefs", {"tone": "brief"})
    storage.close()
    con = sqlite3.connect(db_file)
    try:
        ((raw,),) = con.execute("SELECT value FROM kv WHERE key = 'prefs'").fetchall()
    finally:
        con.close()
    assert raw == '{"tone": "brief"}'
    again = SQLiteStorage(db_file)
    assert again.load("prefs") == {"tone": "brief"}
    again.close()


class TestRAG:
    def test_search_similar_only_matching_best_first(self) -> None:
        rag = RAGStorage()
        rag.save("a", {"text": "Alice joined Acme"})
        rag.save("b", {"text": "lunch menu"})
        rag.save("c", {"text": "Acme Acme Acme quarterly report"})
        found = rag.search_similar("Acme report")
        assert [key for key, _, _ in found] == ["c", "a"]
        assert found[0][1] > found[1][1] > 0
        assert found[0][2] == {"text": "Acme Acme Acme quarterly report"}
        assert rag.search_similar("kubernetes") == []
        assert [k for k, _, _ in rag.search_similar("Acme", limit=1)] == ["c"]

    def test_backend(self, db_file: str) -> None:
        backend = SQLiteStorage(db_file)
        rag = RAGStorage(backend)
        rag.save("doc", {"text": "Initech signed"})
        assert backend.load("doc") == {"text": "Initech signed"}
        assert [k for k, _, _ in rag.search_similar("Initech")] == ["doc"]
        backend.close()
