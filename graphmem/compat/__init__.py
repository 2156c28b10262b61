"""Calute's storage surface: key-value storages, and the mutable dict views of its tiers,
thin over graphmem's engine (:mod:`graphmem.space`)."""

from .storage import (
    MemoryStorage,
    RAGStorage,
    SimpleStorage,
    SQLiteStorage,
    SQLStorage,
    resolve_storage,
)

__all__ = [
    "MemoryStorage",
    "RAGStorage",
    "SQLStorage",
    "SQLiteStorage",
    "SimpleStorage",
    "resolve_storage",
]
