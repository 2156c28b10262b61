"""Contextual memory: short- and long-term memory searched as one, with a context stack.

Items are saved to its short-term part, or to its long-term part when important (or asked);
a short-term item accessed ``promotion_threshold`` times is copied to long-term once. Search
ranks both parts together, through words and the knowledge graph.

Example:
    >>> memory = ContextualMemory()
    >>> _ = memory.save("Alice Johnson approved the Atlas budget", importance=0.9)
    >>> _ = memory.save("Bob Stone fixed the login bug")
    >>> [item.content for item in memory.search("Atlas budget")]
    ['Alice Johnson approved the Atlas budget']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..base import Memory
from ..compat.storage import resolve_storage
from ..errors import InvalidArgumentError, InvalidArgumentTypeError, StorageFullError
from ..filters import check_filters, item_matches
from ..items import (
    MemoryItem,
    check_importance,
    check_limit,
    check_memory_id,
    check_query,
    utc_now,
)
from ..retrieval.rerank import rerank_by_context
from ..retrieval.search import Hit, rank
from ..space import split_filters
from ._tier import Tier
from .long_term import LongTermMemory
from .short_term import ShortTermMemory

if TYPE_CHECKING:
    from ..space import Work

__all__ = ["ContextualMemory", "one_per_text"]


def one_per_text(hits: Sequence[Hit], limit: int) -> list[Hit]:
    """The first ``limit`` hits showing distinct texts: a short-term item promoted to
    long-term memory shows its text from both parts, and a search returns it once.

    Example:
        >>> from graphmem.items import MemoryItem
        >>> a, b = Hit(1, MemoryItem("x"), 1.0, text_id=7), Hit(2, MemoryItem("x"), 0.9, text_id=7)
        >>> [h.seq for h in one_per_text([a, b], 10)]
        [1]
    """
    seen: set[tuple[int, str]] = set()
    kept: list[Hit] = []
    for hit in hits:
        key = (hit.text_id, hit.view)
        if key in seen:
            continue
        seen.add(key)
        kept.append(hit)
        if len(kept) >= limit:
            break
    return kept


class ContextualMemory(Memory):
    """Hybrid short/long-term memory with context-aware retrieval and promotion.

    Args:
        short_term_capacity: capacity of the short-term part.
        long_term_storage: a :class:`~graphmem.compat.storage.SQLiteStorage` both parts live in
            (else an in-memory database).
        promotion_threshold: accesses after which a short-term item is copied to long-term.
        importance_threshold: importance from which ``save`` goes straight to long-term.
    """

    def __init__(
        self,
        short_term_capacity: int = 20,
        long_term_storage: Any | None = None,
        promotion_threshold: int = 3,
        importance_threshold: float = 0.7,
        *,
        namespace: str = "contextual",
        tenant: str | None = None,
        long_term_capacity: int | None = 10000,
    ) -> None:
        if (
            isinstance(promotion_threshold, bool)
            or not isinstance(promotion_threshold, int)
            or promotion_threshold < 1
        ):
            raise InvalidArgumentError(
                f"promotion_threshold must be a positive int, got {promotion_threshold!r}"
            )
        space = resolve_storage(long_term_storage)
        super().__init__(storage=space)
        self.short_term = ShortTermMemory(
            capacity=short_term_capacity,
            storage=space,
            namespace=f"{namespace}.short_term",
            tenant=tenant,
            index_entities=True,
        )
        self.long_term = LongTermMemory(
            storage=space,
            max_items=long_term_capacity,
            namespace=f"{namespace}.long_term",
            tenant=tenant,
        )
        self.promotion_threshold = promotion_threshold
        self.importance_threshold = check_importance(importance_threshold, "importance_threshold")
        self.context_stack: list[dict[str, Any]] = []
        self._space = space
        self._tenant = tenant

    # ------------------------------------------------------------------ context stack
    def push_context(self, context_type: str, context_data: dict[str, Any]) -> None:
        """Enter a context (a task, a conversation...); saved items record it."""
        if not isinstance(context_type, str):
            raise InvalidArgumentTypeError(
                f"context_type must be a str, got {type(context_type).__name__}"
            )
        self.context_stack.append(
            {"type": context_type, "data": context_data, "timestamp": utc_now()}
        )

    def pop_context(self) -> dict[str, Any] | None:
        """Leave the current context; None when there is none."""
        return self.context_stack.pop() if self.context_stack else None

    def get_current_context(self) -> dict[str, Any] | None:
        """The current context without leaving it."""
        return self.context_stack[-1] if self.context_stack else None

    # ------------------------------------------------------------------ Memory API
    def save(
        self,
        content: str,
        metadata: dict[str, Any] | None = None,
        importance: float = 0.5,
        to_long_term: bool = False,
        *,
        timestamp: datetime | str | None = None,
        **kwargs: Any,
    ) -> MemoryItem:
        """Save to short-term, or long-term when ``importance >= importance_threshold`` or
        asked; ``timestamp``: when it happened (a datetime or an ISO 8601 string; default now)."""
        part, item = self.routed_item(
            {
                **kwargs,
                "content": content,
                "metadata": metadata,
                "importance": importance,
                "timestamp": timestamp,
            },
            to_long_term=to_long_term,
        )
        part.write_items([item])
        return item

    def routed_item(
        self, record: Mapping[str, Any], *, to_long_term: bool = False
    ) -> tuple[Tier, MemoryItem]:
        """The part a save goes to and the item it stores there (validated, nothing written):
        the long-term part when ``importance >= importance_threshold`` or ``to_long_term``.

        ``record``: :meth:`save` keyword arguments. Saved items record the current context
        (``metadata["context"]``) and their importance (``metadata["importance"]``).
        """
        fields = dict(record)
        importance = check_importance(fields.pop("importance", 0.5))
        metadata = fields.pop("metadata", None)
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidArgumentTypeError(
                f"metadata must be a dict or None, got {type(metadata).__name__}"
            )
        metadata = dict(metadata or {})
        if self.context_stack:
            metadata["context"] = self.get_current_context()
        if to_long_term or importance >= self.importance_threshold:
            return self.long_term, self.long_term.prepare(
                metadata=metadata, importance=importance, **fields
            )
        return self.short_term, self.short_term.prepare(
            metadata={**metadata, "importance": importance}, **fields
        )

    def save_many(
        self, records: Iterable[Mapping[str, Any]], *, batch_size: int = 256, progress: bool = False
    ) -> list[MemoryItem]:
        """Batch :meth:`save`: records are dicts of its keyword arguments (returned in order)."""
        batch_size = check_limit(batch_size, "batch_size") or 1
        routed: list[tuple[Tier, MemoryItem]] = []
        for position, record in enumerate(records):
            if not isinstance(record, Mapping):
                raise InvalidArgumentTypeError(
                    f"records[{position}] must be a dict, got {type(record).__name__}"
                )
            fields = dict(record)
            to_long_term = bool(fields.pop("to_long_term", False))
            routed.append(self.routed_item(fields, to_long_term=to_long_term))
        for part in (self.long_term, self.short_term):
            items = [item for owner, item in routed if owner is part]
            part.write_in_batches(items, [None] * len(items), batch_size, progress)
        return [item for _, item in routed]

    def search(
        self,
        query: str,
        limit: int = 10,
        filters: dict[str, Any] | None = None,
        search_long_term: bool = True,
        **kwargs: Any,
    ) -> list[MemoryItem]:
        """Both parts ranked together; each item's ``metadata["source"]`` says which part."""
        return [hit.item for hit in self.search_hits(query, limit, filters, search_long_term)]

    def search_hits(
        self,
        query: str,
        limit: int = 10,
        filters: dict[str, Any] | None = None,
        search_long_term: bool = True,
    ) -> list[Hit]:
        """Like :meth:`search`, with scores and explanations."""
        check_query(query)
        limit = check_limit(limit)
        filters = check_filters(filters)
        parts = [self.short_term] + ([self.long_term] if search_long_term else [])
        if limit == 0:
            return []
        if not query.strip():
            with self._space.reading() as tx:
                hits = [
                    Hit.listed(row, item)
                    for part in parts
                    for row, item in part.select(tx, filters, limit, newest_first=True)
                ]
            hits.sort(key=lambda h: h.item.timestamp, reverse=True)
            hits = one_per_text(hits, limit)
        else:
            sql, rest = split_filters(filters)
            hits = rank(
                self._space,
                [p.namespace for p in parts],
                query,
                tenant=self._tenant,
                sql_filters=sql,
                predicate=lambda item: item_matches(item, rest),
                limit=limit * 2,  # a promoted text has an item in each part
            )
            hits = one_per_text(hits, limit)
        return self.shown(hits)

    def shown(self, hits: list[Hit], others: Sequence[Hit] = ()) -> list[Hit]:
        """Hits of this memory as its search returns them: each item's ``metadata["source"]``
        says which part holds it, the context stack reorders them, and the access is
        recorded (:meth:`record_access`, with ``others``: items of other tiers read in the
        same step)."""
        sources = {self.short_term.namespace: "short_term", self.long_term.namespace: "long_term"}
        for hit in hits:
            # Another tier's hit (an MCP observation) is named by its tier.
            hit.item.metadata["source"] = sources.get(hit.namespace, hit.namespace)
        if self.context_stack:
            hits = rerank_by_context(hits, self.get_current_context() or {})
        self.record_access(hits, others)
        return hits

    def record_access(self, hits: Sequence[Hit], others: Sequence[Hit] = ()) -> None:
        """Count one access of each hit (and of ``others``, items of other tiers read in the
        same step) in one batched update, and promote, in the same transaction, the
        short-term items accessed ``promotion_threshold`` times."""
        every = [*hits, *others]
        if not every:
            return
        now = utc_now()
        for hit in every:
            hit.item.access_count += 1
            hit.item.last_accessed = now
        due = [
            h
            for h in hits
            if h.namespace == self.short_term.namespace
            and h.item.access_count >= self.promotion_threshold
            and not h.item.metadata.get("promoted")
        ]
        # Access counts are bookkeeping (no disk flush); a promotion is data. Whether the
        # text is promoted already is read in the same write transaction (one writer at a
        # time, across threads and processes), so it is copied at most once.
        try:
            with self._space.transaction(durable=bool(due)) as tx:
                tx.touch([h.seq for h in every], now)
                promoted = 0
                for hit in due:
                    if not tx.shows_text(hit.text_id, self.long_term.namespace):
                        self._promote(tx, hit)
                        promoted += 1
                    hit.item.metadata["promoted"] = True
                if promoted:
                    self.long_term.evict(tx)
        except StorageFullError:
            pass  # the disk is full: the search still answers (promotions wait for space)

    def _promote(self, tx: Work, hit: Hit) -> None:
        """Give a short-term item's text a long-term item too (once): the text is not
        stored or analysed again."""
        item = hit.item
        metadata = {
            k: v for k, v in item.metadata.items() if k not in ("source", "importance", "promoted")
        }
        importance = item.metadata.get("importance", 0.6)
        promoted = self.long_term.prepare(
            item.content,
            metadata=metadata,
            agent_id=item.agent_id,
            user_id=item.user_id,
            conversation_id=item.conversation_id,
            importance=importance if isinstance(importance, int | float) else 0.6,
        )
        tx.add_items(
            hit.text_id,
            [self.long_term.as_new_item(promoted, hit.view)],
            # The copy belongs to the save that wrote the item: deleting that removes both.
            result_id=tx.result_id_of(hit.seq),
        )
        stored = {k: v for k, v in item.metadata.items() if k != "source"}
        tx.update_metadata(hit.seq, {**stored, "promoted": True})

    def retrieve(
        self,
        memory_id: str | None = None,
        filters: dict[str, Any] | None = None,
        limit: int = 10,
    ) -> MemoryItem | list[MemoryItem] | None:
        """By id from either part (promoting when due), or by filters: short-term first."""
        if memory_id is not None:
            check_memory_id(memory_id)
            with self._space.reading() as tx:
                found = self.short_term.find_row(tx, memory_id)
            if found is not None:
                [hit] = self.shown([Hit.listed(*found)])
                hit.item.metadata.pop("source", None)
                return hit.item
            return self.long_term.retrieve(memory_id)
        limit = check_limit(limit)
        short = self.short_term.retrieve(filters=filters, limit=limit)
        results = list(short) if isinstance(short, list) else []
        if len(results) < limit:
            long = self.long_term.retrieve(filters=filters, limit=limit - len(results))
            results.extend(long if isinstance(long, list) else [])
        return results[:limit]

    def update(self, memory_id: str, updates: dict[str, Any]) -> bool:
        """Update the item in whichever part holds it."""
        return self.short_term.update(memory_id, updates) or self.long_term.update(
            memory_id, updates
        )

    def delete(self, memory_id: str | None = None, filters: dict[str, Any] | None = None) -> int:
        """Delete from both parts."""
        return self.short_term.delete(memory_id, filters) + self.long_term.delete(
            memory_id, filters
        )

    def clear(self) -> None:
        """Clear both parts and the context stack."""
        self.short_term.clear()
        self.long_term.clear()
        self.context_stack.clear()

    def get_context_summary(self) -> str:
        """Current context, recent activity and important memories, as text.

        Example:
            >>> ContextualMemory().get_context_summary()
            'No context available.'
        """
        lines: list[str] = []
        if self.context_stack:
            lines.append("Current context:")
            lines.extend(
                f"  - {c['type']}: {str(c['data'])[:100]}" for c in self.context_stack[-3:]
            )
        recent = self.short_term.get_recent(5)
        if recent:
            lines.append("\nRecent activity:")
            lines.extend(f"  - {item.content[:100]}" for item in recent)
        important = self.long_term.retrieve(
            filters={"importance": lambda v: isinstance(v, int | float) and v >= 0.8}, limit=3
        )
        if isinstance(important, list) and important:
            lines.append("\nImportant memories:")
            lines.extend(f"  - {item.content[:100]}" for item in important)
        return "\n".join(lines) if lines else "No context available."

    def _recent_items(self, limit: int) -> list[MemoryItem]:
        items = [*self.long_term.recent_items(limit), *self.short_term.recent_items(limit)]
        items.sort(key=lambda i: i.timestamp)
        return items[-limit:] if limit > 0 else []

    def _all_items(self) -> list[MemoryItem]:
        return [*self.short_term.all_items(), *self.long_term.all_items()]

    def __len__(self) -> int:
        return len(self.short_term) + len(self.long_term)

    def __bool__(self) -> bool:
        return True
