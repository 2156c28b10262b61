"""Calute's storage surface: key-value storages, thin over graphmem's engine
(:mod:`graphmem.space`). The mutable dict views of its tiers are :mod:`graphmem.memories.views`."""

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
