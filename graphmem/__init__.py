"""graphmem: knowledge-graph entity memory for LLM agents.

A drop-in replacement for the memory system of the Calute agent framework: replace
``from calute.memory import ...`` and ``from calute.cortex.memory_integration import
CortexMemory`` with ``from graphmem import ...``.

Example:
    >>> from graphmem import CortexMemory
    >>> memory = CortexMemory()
    >>> _ = memory.save_agent_interaction("Researcher", "found", "Acme hired Alice Johnson", importance=0.7)
    >>> memory.get_agent_history("Researcher")
    ['[Researcher] found: Acme hired Alice Johnson', '[Researcher] found: Acme hired Alice Johnson']
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Memory
    from .compat.storage import MemoryStorage, RAGStorage, SimpleStorage, SQLiteStorage, SQLStorage
    from .cortex import CortexMemory, PersistenceDisabledWarning
    from .errors import (
        DatabaseFileError,
        EntityNotFound,
        GraphmemError,
        InvalidArgumentError,
        InvalidArgumentTypeError,
        MemoryNotFound,
        SchemaVersionError,
        StorageFullError,
    )
    from .extract.entity_patterns import EntityPatternsError
    from .extract.extractor import ExtractedEntity, ExtractedRelation, Extraction, Extractor
    from .extract.pipeline import PipelineNotInstalledError
    from .graph import KnowledgeGraph
    from .index.reanalysis import ReanalysisWarning
    from .items import MemoryEntry, MemoryItem
    from .memories import (
        ContextualMemory,
        EntityMemory,
        LongTermMemory,
        ShortTermMemory,
        UserMemory,
    )

#: Where each public name lives: importing ``graphmem`` loads none of them (SQLAlchemy loads
#: with the first memory, spaCy with the first text analysed: ``tests/test_startup.py``).
_HOMES = {
    "Memory": "base",
    "MemoryStorage": "compat.storage",
    "RAGStorage": "compat.storage",
    "SimpleStorage": "compat.storage",
    "SQLiteStorage": "compat.storage",
    "SQLStorage": "compat.storage",
    "CortexMemory": "cortex",
    "PersistenceDisabledWarning": "cortex",
    "DatabaseFileError": "errors",
    "EntityNotFound": "errors",
    "GraphmemError": "errors",
    "InvalidArgumentError": "errors",
    "InvalidArgumentTypeError": "errors",
    "MemoryNotFound": "errors",
    "SchemaVersionError": "errors",
    "StorageFullError": "errors",
    "EntityPatternsError": "extract.entity_patterns",
    "ExtractedEntity": "extract.extractor",
    "ExtractedRelation": "extract.extractor",
    "Extraction": "extract.extractor",
    "Extractor": "extract.extractor",
    "PipelineNotInstalledError": "extract.pipeline",
    "KnowledgeGraph": "graph",
    "ReanalysisWarning": "index.reanalysis",
    "MemoryEntry": "items",
    "MemoryItem": "items",
    "ContextualMemory": "memories",
    "EntityMemory": "memories",
    "LongTermMemory": "memories",
    "ShortTermMemory": "memories",
    "UserMemory": "memories",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'graphmem' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


__version__ = "0.1.0"

__all__ = [
    "ContextualMemory",
    "CortexMemory",
    "DatabaseFileError",
    "EntityMemory",
    "EntityNotFound",
    "EntityPatternsError",
    "ExtractedEntity",
    "ExtractedRelation",
    "Extraction",
    "Extractor",
    "GraphmemError",
    "InvalidArgumentError",
    "InvalidArgumentTypeError",
    "KnowledgeGraph",
    "LongTermMemory",
    "Memory",
    "MemoryEntry",
    "MemoryItem",
    "MemoryNotFound",
    "MemoryStorage",
    "PersistenceDisabledWarning",
    "PipelineNotInstalledError",
    "RAGStorage",
    "ReanalysisWarning",
    "SQLiteStorage",
    "SQLStorage",
    "SchemaVersionError",
    "ShortTermMemory",
    "StorageFullError",
    "SimpleStorage",
    "UserMemory",
]


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
