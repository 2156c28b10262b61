"""Storage backends with Calute's names: a key-value API over JSON, and graphmem's SQL space.

:class:`SQLiteStorage` is graphmem's database: pass it (or let ``CortexMemory`` create it) to
several memory tiers and they share one SQL database and one knowledge graph. Its key-value
methods (``save``/``load``/``delete``/``exists``/``list_keys``/``clear``) store JSON, never
pickle. ``SQLiteStorage()`` with no path is in memory: no file appears in the working directory.

Example:
    >>> storage = SQLiteStorage()            # in memory
    >>> storage.save("prefs", {"tone": "brief"})
    True
    >>> storage.load("prefs")
    {'tone': 'brief'}
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from typing import Any

from ..errors import InvalidArgumentError, InvalidArgumentTypeError
from ..space import MemorySpace
from ..store import kv_rows
from ..store.ranking_rows import rank_documents

__all__ = [
    "MemoryStorage",
    "RAGStorage",
    "SQLStorage",
    "SQLiteStorage",
    "SimpleStorage",
    "resolve_storage",
]


def _check_key(key: object) -> str:
    if not isinstance(key, str):
        raise InvalidArgumentTypeError(f"key must be a str, got {type(key).__name__}")
    if not key:
        raise InvalidArgumentError("key must not be empty")
    return key


def _json_copy(data: Any) -> Any:
    try:
        return json.loads(json.dumps(data, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentTypeError(f"data must be JSON-serialisable ({exc})") from None


class MemoryStorage(ABC):
    """Abstract key-value storage backend (Calute's interface)."""

    @abstractmethod
    def save(self, key: str, data: Any) -> bool:
        """Store ``data`` (JSON-serialisable) under ``key``."""

    @abstractmethod
    def load(self, key: str) -> Any | None:
        """The data stored under ``key``, or None."""

    @abstractmethod
    def delete(self, key: str) -> bool:
        """Remove ``key``; True when it existed."""

    @abstractmethod
    def exists(self, key: str) -> bool:
        """True when ``key`` is stored."""

    @abstractmethod
    def list_keys(self, pattern: str | None = None) -> list[str]:
        """Stored keys, those starting with ``pattern`` when given."""

    @abstractmethod
    def clear(self) -> int:
        """Remove every key; returns how many there were."""


class SimpleStorage(MemoryStorage):
    """In-process key-value storage (a dict of JSON copies).

    Example:
        >>> s = SimpleStorage(); s.save("a", [1]); s.list_keys()
        True
        ['a']
    """

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self._lock = threading.Lock()

    def save(self, key: str, data: Any) -> bool:
        value = _json_copy(data)
        with self._lock:
            self._data[_check_key(key)] = value
        return True

    def load(self, key: str) -> Any | None:
        with self._lock:
            return _json_copy(self._data.get(_check_key(key)))

    def delete(self, key: str) -> bool:
        with self._lock:
            return self._data.pop(_check_key(key), None) is not None

    def exists(self, key: str) -> bool:
        with self._lock:
            return _check_key(key) in self._data

    def list_keys(self, pattern: str | None = None) -> list[str]:
        with self._lock:
            return sorted(k for k in self._data if pattern is None or k.startswith(pattern))

    def clear(self) -> int:
        with self._lock:
            count = len(self._data)
            self._data.clear()
            return count


class SQLiteStorage(MemorySpace, MemoryStorage):
    """graphmem's SQL database (a :class:`~graphmem.space.MemorySpace`), with Calute's
    key-value methods.

    Args:
        db_path: a SQLite file (created if missing), a SQLAlchemy URL such as
            ``postgresql+psycopg://user@host/db``, or ``None`` for an in-memory database.
        graph_cache: where relationship queries run: ``"memory"`` (the NetworkX view),
            ``"sql"`` (recursive SQL, nothing held) or ``"auto"`` (SQL for large tenants).

    ``SQLStorage`` is the same class under a name that does not suggest SQLite only.
    """

    def __repr__(self) -> str:
        return f"SQLiteStorage({self.database.describe()!r})"

    def save(self, key: str, data: Any) -> bool:
        value = _json_copy(data)
        with self.database.write() as conn:
            kv_rows.kv_set(conn, _check_key(key), value)
        return True

    def load(self, key: str) -> Any | None:
        with self.database.read() as conn:
            return kv_rows.kv_get(conn, _check_key(key))

    def delete(self, key: str) -> bool:
        with self.database.write() as conn:
            return kv_rows.kv_delete(conn, _check_key(key))

    def exists(self, key: str) -> bool:
        return self.load(key) is not None

    def list_keys(self, pattern: str | None = None) -> list[str]:
        with self.database.read() as conn:
            return kv_rows.kv_keys(conn, pattern)

    def clear(self) -> int:
        with self.database.write() as conn:
            keys = kv_rows.kv_keys(conn)
            for key in keys:
                kv_rows.kv_delete(conn, key)
            return len(keys)


#: graphmem's SQL database under a backend-neutral name (SQLite file, server URL, or memory).
SQLStorage = SQLiteStorage


class RAGStorage(MemoryStorage):
    """Key-value storage with a ranked text search over the stored values.

    Calute ranked by cosine similarity of SHA-256 bytes (meaningless); this ranks by BM25
    over the words of each stored value (as memories are ranked) and returns only values
    sharing a (stemmed) word with the query.

    Example:
        >>> rag = RAGStorage()
        >>> _ = rag.save("a", {"text": "Alice joined Acme"}); _ = rag.save("b", {"text": "lunch"})
        >>> [key for key, _, _ in rag.search_similar("Where did Alice go?")]
        ['a']
    """

    def __init__(self, backend: MemoryStorage | None = None) -> None:
        self.backend = backend if backend is not None else SimpleStorage()

    def save(self, key: str, data: Any) -> bool:
        return self.backend.save(key, data)

    def load(self, key: str) -> Any | None:
        return self.backend.load(key)

    def delete(self, key: str) -> bool:
        return self.backend.delete(key)

    def exists(self, key: str) -> bool:
        return self.backend.exists(key)

    def list_keys(self, pattern: str | None = None) -> list[str]:
        return self.backend.list_keys(pattern)

    def clear(self) -> int:
        return self.backend.clear()

    def search_similar(
        self, query: str, limit: int = 10, threshold: float = 0.0
    ) -> list[tuple[str, float, Any]]:
        """``(key, score, data)`` of stored values sharing words with ``query``, best first
        (BM25 over each value's JSON text, as memories are ranked: SQLite FTS5, Porter
        stemming; scores above ``threshold`` only)."""
        docs = {key: self.backend.load(key) for key in self.backend.list_keys()}
        texts = {key: json.dumps(value, ensure_ascii=False) for key, value in docs.items()}
        ranked = rank_documents(texts, query)
        return [(key, score, docs[key]) for key, score in ranked if score > threshold][:limit]


def resolve_storage(storage: object) -> SQLiteStorage:
    """The SQL space a memory tier uses: the given :class:`SQLiteStorage`, else a new in-memory one.

    Any other storage (Calute's ``SimpleStorage``, a custom backend) keeps the tier ephemeral.
    """
    if isinstance(storage, SQLiteStorage):
        return storage
    if isinstance(storage, RAGStorage) and isinstance(storage.backend, SQLiteStorage):
        return storage.backend
    return SQLiteStorage()
