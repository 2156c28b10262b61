"""Short-term memory: the most recent items, first in first out.

Example:
    >>> memory = ShortTermMemory(capacity=2)
    >>> for text in ("one", "two", "three"):
    ...     _ = memory.save(text)
    >>> [item.content for item in memory.get_recent()]
    ['two', 'three']
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..items import MemoryItem, check_capacity, check_limit
from ._tier import Tier

if TYPE_CHECKING:
    from ..space import Work

__all__ = ["ShortTermMemory"]


class ShortTermMemory(Tier):
    """Recent context with FIFO eviction to exactly ``capacity`` items.

    Args:
        capacity: how many items to keep; the oldest go first.
        storage: a :class:`~graphmem.compat.storage.SQLiteStorage` to persist in (else in memory).
        enable_embeddings: accepted for Calute compatibility; unused.
        index_entities: also extract entities into the knowledge graph (off by default:
            short-term items are transient).
    """

    memory_type = "short_term"
    default_namespace = "short_term"
    index_entities = False
    _retrieve_newest_first = True

    def __init__(
        self,
        capacity: int = 20,
        storage: Any | None = None,
        enable_embeddings: bool = False,
        *,
        namespace: str | None = None,
        tenant: str | None = None,
        index_entities: bool | None = None,
    ) -> None:
        check_capacity(capacity, "capacity")
        super().__init__(
            storage=storage,
            max_items=capacity,
            enable_embeddings=enable_embeddings,
            namespace=namespace,
            tenant=tenant,
        )
        self.capacity = capacity
        if index_entities is not None:
            self.index_entities = index_entities

    def prepare(
        self,
        content: str,
        metadata: dict[str, Any] | None = None,
        agent_id: str | None = None,
        user_id: str | None = None,
        conversation_id: str | None = None,
        *,
        timestamp: datetime | str | None = None,
        **kwargs: Any,
    ) -> MemoryItem:
        """The item :meth:`save` stores (the oldest items, by event time, are evicted beyond
        ``capacity``). ``timestamp``: when it happened (a datetime or an ISO 8601 string;
        default now). Extra keyword arguments are stored in the metadata (a ``task_id``
        keyword sets the field)."""
        task_id = kwargs.pop("task_id", None)
        return self._make_item(
            content,
            metadata,
            kwargs,
            agent_id=agent_id,
            user_id=user_id,
            conversation_id=conversation_id,
            task_id=task_id,
            timestamp=timestamp,
        )

    def evict(self, tx: Work) -> None:
        for tenant, count in self._tenant_counts(tx).items():
            if count > self.capacity:
                self._evict_rows(tx, tx.beyond_newest(self._namespaces(), tenant, self.capacity))

    def get_recent(self, n: int = 5) -> list[MemoryItem]:
        """The ``n`` most recent items, oldest first."""
        return self.recent_items(check_limit(n, "n"))

    def summarize(self) -> str:
        """A short summary: the last three items of each conversation.

        Example:
            >>> ShortTermMemory().summarize()
            'No recent memories.'
        """
        items = self.all_items()
        if not items:
            return "No recent memories."
        lines = ["Recent activity:"]
        conversations: dict[str, list[MemoryItem]] = {}
        for item in items:
            conversations.setdefault(item.conversation_id or "default", []).append(item)
        for conversation, members in conversations.items():
            if conversation != "default":
                lines.append(f"\nConversation {conversation}:")
            for item in members[-3:]:
                lines.append(f"  [{item.agent_id or 'System'}]: {item.content[:100]}")
        return "\n".join(lines)
