"""graphmem: knowledge-graph entity memory for LLM agents.

A drop-in replacement for the memory system of the Calute agent framework: replace
``from calute.memory import ...`` and ``from calute.cortex.memory_integration import
CortexMemory`` with ``from graphmem import ...``.

Example:
    >>> from graphmem import CortexMemory
    >>> memory = CortexMemory()
    >>> memory.save_agent_interaction("Researcher", "found", "Acme hired Alice Johnson", importance=0.7)
    >>> memory.get_agent_history("Researcher")
    ['[Researcher] found: Acme hired Alice Johnson', '[Researcher] found: Acme hired Alice Johnson']
"""

from .base import Memory
from .compat.storage import MemoryStorage, RAGStorage, SimpleStorage, SQLiteStorage, SQLStorage
from .cortex import CortexMemory, PersistenceDisabledWarning
from .errors import (
    DatabaseFileError,
    EntityNotFound,
    GraphmemError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    SchemaVersionError,
)
from .extract.entity_patterns import EntityPatternsError
from .extract.extractor import ExtractedEntity, ExtractedRelation, Extraction, Extractor
from .extract.pipeline import PipelineNotInstalledError
from .graph import KnowledgeGraph
from .items import MemoryEntry, MemoryItem
from .memories import ContextualMemory, EntityMemory, LongTermMemory, ShortTermMemory, UserMemory

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
    "MemoryStorage",
    "PersistenceDisabledWarning",
    "PipelineNotInstalledError",
    "RAGStorage",
    "SQLiteStorage",
    "SQLStorage",
    "SchemaVersionError",
    "ShortTermMemory",
    "SimpleStorage",
    "UserMemory",
]
