"""Long-term memory: important knowledge kept across sessions, with value-based eviction.

Example:
    >>> memory = LongTermMemory()
    >>> _ = memory.save("Acme renewed the support contract", agent_id="sales", importance=0.9)
    >>> memory.search("contract renewal")[0].metadata["importance"]
    0.9
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..compat.storage import SQLiteStorage
from ..errors import InvalidArgumentError
from ..items import MemoryItem, check_importance, stored_time, time_text, utc_now
from ._tier import Tier

if TYPE_CHECKING:
    from ..items import StoredMemory
    from ..space import Work

__all__ = ["EVICTION_SLACK", "LongTermMemory"]

#: When full, this share of ``max_items`` is evicted at once (so eviction is not paid per save).
EVICTION_SLACK = 0.05


class LongTermMemory(Tier):
    """Persistent knowledge with importance, searched lexically and through the graph.

    Args:
        storage: a :class:`~graphmem.compat.storage.SQLiteStorage`; default: ``db_path`` or memory.
        enable_embeddings: accepted for Calute compatibility; unused.
        db_path: a SQLite file to persist in when no storage is given.
        max_items: capacity; beyond it the least valuable items are evicted (old,
            unimportant, rarely accessed; those older than ``retention_days`` first).
        retention_days: age after which items are the first to go when space is needed.
    """

    memory_type = "long_term"
    default_namespace = "long_term"

    def __init__(
        self,
        storage: Any | None = None,
        enable_embeddings: bool = True,
        db_path: str | os.PathLike[str] | None = None,
        max_items: int | None = 10000,
        retention_days: int = 365,
        *,
        namespace: str | None = None,
        tenant: str | None = None,
    ) -> None:
        if storage is None and db_path is not None:
            storage = SQLiteStorage(db_path)
        if (
            isinstance(retention_days, bool)
            or not isinstance(retention_days, int)
            or retention_days < 1
        ):
            raise InvalidArgumentError(
                f"retention_days must be a positive int, got {retention_days!r}"
            )
        super().__init__(
            storage=storage,
            max_items=max_items,
            enable_embeddings=enable_embeddings,
            namespace=namespace,
            tenant=tenant,
        )
        self.retention_days = retention_days

    def prepare(
        self,
        content: str,
        metadata: dict[str, Any] | None = None,
        agent_id: str | None = None,
        user_id: str | None = None,
        conversation_id: str | None = None,
        importance: float = 0.5,
        *,
        timestamp: datetime | str | None = None,
        **kwargs: Any,
    ) -> MemoryItem:
        """The item :meth:`save` stores; ``importance`` (0-1) is kept in
        ``metadata["importance"]``; ``timestamp``: when it happened (a datetime or an ISO
        8601 string; default now)."""
        task_id = kwargs.pop("task_id", None)
        extra = {**kwargs, "importance": check_importance(importance)}
        return self._make_item(
            content,
            metadata,
            extra,
            agent_id=agent_id,
            user_id=user_id,
            conversation_id=conversation_id,
            task_id=task_id,
            timestamp=timestamp,
        )

    def evict(self, tx: Work) -> None:
        if self.max_items is None:
            return
        for tenant, count in self._tenant_counts(tx).items():
            if count > self.max_items:
                self._evict_tenant(tx, tenant, count)

    def _evict_tenant(self, tx: Work, tenant: str, count: int) -> None:
        """Evict the least valuable items of ``tenant`` down to the eviction target."""
        assert self.max_items is not None
        target = self.max_items - int(self.max_items * EVICTION_SLACK)
        now = utc_now()
        cutoff = time_text(now - timedelta(days=self.retention_days))

        def value(candidate: tuple[StoredMemory, float, int, str]) -> tuple[int, float, int]:
            row, importance, accesses, created = candidate
            age_days = max(0.0, (now - stored_time(created)).days)
            freshness = max(0.0, 1 - age_days / self.retention_days)
            score = importance * 0.3 + min(accesses, 100) / 100 * 0.3 + freshness * 0.4
            return (0 if created < cutoff else 1, score, row.seq)

        candidates = sorted(tx.eviction_candidates(self.namespace, tenant), key=value)
        self._evict_rows(tx, [c[0] for c in candidates[: count - target]])

    def consolidate(self) -> str:
        """A summary grouped by conversation or agent, most important first.

        Example:
            >>> LongTermMemory().consolidate()
            'No long-term memories available.'
        """
        items = self.all_items()
        if not items:
            return "No long-term memories available."
        grouped: dict[str, list[MemoryItem]] = {}
        for item in items:
            grouped.setdefault(item.conversation_id or item.agent_id or "general", []).append(item)
        lines = ["Long-term memory summary:"]
        for key, members in grouped.items():
            members.sort(
                key=lambda i: (float(i.metadata.get("importance", 0.5)), i.timestamp), reverse=True
            )
            lines.append(f"\n{key.title()}:")
            lines.extend(f"  • {item.content[:150]}" for item in members[:5])
        return "\n".join(lines)
