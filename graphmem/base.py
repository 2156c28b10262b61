"""The :class:`Memory` abstract base class, with Calute's signatures and documented behaviour.

Subclasses implement ``save``, ``search``, ``retrieve``, ``update``, ``delete`` and ``clear``.
The base class keeps Calute's shared infrastructure (an ordered ``_items`` list and an
``_index`` by id) for custom subclasses, and provides ``get_context``, ``get_statistics``,
``len()`` and ``repr``. graphmem's own tiers keep their items in SQL and override the
``_recent_items`` / ``_all_items`` hooks instead of filling ``_items``.

Example:
    >>> from graphmem import ShortTermMemory
    >>> memory = ShortTermMemory(capacity=5)
    >>> _ = memory.save("Deployed v2 to staging", agent_id="ops")
    >>> memory.get_context()
    '[ops]: Deployed v2 to staging'
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable
from typing import Any

from .errors import InvalidArgumentError, InvalidArgumentTypeError
from .items import MemoryItem, check_capacity

__all__ = ["CONTEXT_FORMATS", "Memory"]

CONTEXT_FORMATS = ("text", "json", "markdown")


class Memory(ABC):
    """Abstract base class for every memory tier.

    Args:
        storage: storage backend for persistence (see :mod:`graphmem.compat.storage`).
        max_items: maximum number of items to keep, ``None`` for no limit.
        enable_embeddings: kept for Calute compatibility; graphmem ranks lexically and
            through the knowledge graph, so no embedding model is needed.
    """

    def __init__(
        self,
        storage: Any | None = None,
        max_items: int | None = None,
        enable_embeddings: bool = False,
    ) -> None:
        if max_items is not None:
            check_capacity(max_items, "max_items")
        self.storage = storage
        self.max_items = max_items
        self.enable_embeddings = enable_embeddings
        self._items: list[MemoryItem] = []
        self._index: dict[str, MemoryItem] = {}

    @abstractmethod
    def save(
        self, content: str, metadata: dict[str, Any] | None = None, **kwargs: Any
    ) -> MemoryItem:
        """Save a memory item and return it."""

    @abstractmethod
    def search(
        self, query: str, limit: int = 10, filters: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[MemoryItem]:
        """Return the items matching ``query``, best first."""

    @abstractmethod
    def retrieve(
        self,
        memory_id: str | None = None,
        filters: dict[str, Any] | None = None,
        limit: int = 10,
    ) -> MemoryItem | list[MemoryItem] | None:
        """Return one item by id, or a list of items matching ``filters``."""

    @abstractmethod
    def update(self, memory_id: str, updates: dict[str, Any]) -> bool:
        """Update fields of an item; ``False`` when it does not exist."""

    @abstractmethod
    def delete(self, memory_id: str | None = None, filters: dict[str, Any] | None = None) -> int:
        """Delete items by id or filters and return how many were deleted."""

    @abstractmethod
    def clear(self) -> None:
        """Remove every item of this memory."""

    # Hooks that SQL-backed tiers override; the defaults serve Calute-style subclasses.
    def _recent_items(self, limit: int) -> list[MemoryItem]:
        """The ``limit`` most recent items, oldest first."""
        items = list(self._items)
        return items[-limit:] if limit > 0 else []

    def _all_items(self) -> Iterable[MemoryItem]:
        return list(self._items)

    def get_context(self, limit: int = 10, format_type: str = "text") -> str:
        """Format the ``limit`` most recent items as ``text``, ``json`` or ``markdown``.

        Example:
            >>> from graphmem import ShortTermMemory
            >>> m = ShortTermMemory()
            >>> _ = m.save("hello")
            >>> m.get_context(format_type="markdown").endswith("**System**: hello")
            True
        """
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise InvalidArgumentTypeError(f"limit must be an int, got {type(limit).__name__}")
        if format_type not in CONTEXT_FORMATS:
            raise InvalidArgumentError(
                f"format_type must be one of {', '.join(CONTEXT_FORMATS)}, got {format_type!r}"
            )
        items = self._recent_items(limit)
        if format_type == "json":
            return json.dumps([item.to_dict() for item in items], indent=2, ensure_ascii=False)
        if format_type == "markdown":
            return "\n".join(
                f"- [{item.timestamp.strftime('%Y-%m-%d %H:%M:%S')}] "
                f"{f'**{item.agent_id}**' if item.agent_id else '**System**'}: {item.content}"
                for item in items
            )
        return "\n".join(
            f"[{item.agent_id}]: {item.content}" if item.agent_id else item.content
            for item in items
        )

    def get_statistics(self) -> dict[str, Any]:
        """Return ``total_items``, ``max_items``, ``memory_types`` and unique counts.

        Example:
            >>> from graphmem import ShortTermMemory
            >>> ShortTermMemory().get_statistics()["total_items"]
            0
        """
        types: Counter[str] = Counter()
        agents: set[str] = set()
        users: set[str] = set()
        conversations: set[str] = set()
        total = 0
        for item in self._all_items():
            total += 1
            types[item.memory_type] += 1
            if item.agent_id:
                agents.add(item.agent_id)
            if item.user_id:
                users.add(item.user_id)
            if item.conversation_id:
                conversations.add(item.conversation_id)
        return {
            "total_items": total,
            "max_items": self.max_items,
            "memory_types": dict(types),
            "unique_agents": len(agents),
            "unique_users": len(users),
            "unique_conversations": len(conversations),
        }

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(items={len(self)}, max={self.max_items})"
