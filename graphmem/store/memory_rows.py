"""Memory rows: what the ``memories`` and ``texts`` tables hold, and their prebuilt statements.

The row types (:class:`StoredMemory`, :class:`NewItemRow`, :class:`TextAnalysis`), the
conversions between rows and :class:`~graphmem.items.MemoryItem`, and the conditions that
filter rows; :class:`~graphmem.store.Database` runs them.

Example:
    >>> shown_content("Audit Acme", "Acme passed", "body")
    'Acme passed'
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import and_, or_

from ..items import (
    MemoryItem,
    StoredMemory,
    decode_metadata,
    encode_metadata,
    stored_time,
    time_text,
)
from . import schema
from .vectors import decode_embedding, encode_embedding

__all__ = [
    "NewItemRow",
    "SQL_FILTER_COLUMNS",
    "TextAnalysis",
    "chunks",
    "item_columns",
    "item_of_row",
    "memory_row_of",
    "row_conditions",
    "shown_content",
    "shows_mention",
]

#: MemoryItem attributes that filters may push down into SQL when compared to a plain value.
SQL_FILTER_COLUMNS = (
    "memory_id",
    "memory_type",
    "agent_id",
    "task_id",
    "conversation_id",
    "user_id",
)

_M = schema.memories
_V = TypeVar("_V")


@dataclass(frozen=True)
class NewItemRow:
    """A tier item to insert, showing the stored text ``text_id`` (all of it, or with
    ``view="body"`` its body), with the canonical key of who said or did it."""

    item: MemoryItem
    namespace: str
    importance: float | None
    text_id: int
    view: str = "full"
    author_key: str | None = None
    #: The save that wrote it (None: the item's own memory id) and its idempotency key.
    result_id: str | None = None
    dedupe_key: str | None = None


@dataclass(frozen=True)
class TextAnalysis:
    """How a text is indexed (its ``texts`` columns), so ``reanalyse`` can index it again
    the same way: with typed relations or not, the names given in place of extraction
    (Calute's ``entities=``), the tiers whose items list its entities."""

    relations: bool = False
    given_entities: Sequence[str] | None = None
    listed_in: Sequence[str] = ()

    @staticmethod
    def columns_of(analysis: TextAnalysis | None) -> dict[str, Any]:
        """The ``texts`` columns of a text indexed as ``analysis`` (None: not indexed)."""
        if analysis is None:
            return {"analysis": schema.NOT_ANALYSED, "given_entities": None, "listed_in": None}
        return analysis.columns()

    def columns(self) -> dict[str, Any]:
        """The ``texts`` columns of an indexed text."""
        return {
            "analysis": schema.WITH_RELATIONS if self.relations else schema.ENTITIES_ONLY,
            "given_entities": None
            if self.given_entities is None
            else json.dumps(list(self.given_entities), ensure_ascii=False),
            "listed_in": json.dumps(list(self.listed_in)) if self.listed_in else None,
        }


def row_conditions(tenant: str | None, sql_filters: Mapping[str, Any] | None) -> list[Any]:
    """SQL conditions on ``memories`` rows: of ``tenant`` (when given), with column filters."""
    conds: list[Any] = []
    if tenant is not None:
        conds.append(_M.c.tenant == tenant)
    for key, value in (sql_filters or {}).items():
        column = _M.c[key]
        conds.append(column.is_(None) if value is None else column == value)
    return [and_(*conds)] if conds else []


def item_columns(
    item: MemoryItem, namespace: str | None, importance: float | None, author_key: str | None
) -> dict[str, Any]:
    """The ``memories`` columns of ``item`` (a tier item of ``namespace``), text aside."""
    return {
        "memory_id": item.memory_id,
        "namespace": namespace,
        "tenant": item.user_id or "",
        "memory_type": item.memory_type,
        "metadata": encode_metadata(item.metadata),
        "agent_id": item.agent_id,
        "task_id": item.task_id,
        "conversation_id": item.conversation_id,
        "user_id": item.user_id,
        "importance": importance,
        "relevance_score": float(item.relevance_score),
        "access_count": int(item.access_count),
        "created_at": time_text(item.timestamp),
        "last_accessed": time_text(item.last_accessed) if item.last_accessed else None,
        "embedding": encode_embedding(item.embedding) if item.embedding is not None else None,
        "author_key": author_key,
    }


def memory_row_of(row: Any) -> StoredMemory:
    """The :class:`StoredMemory` of a ``memories`` result row."""
    return StoredMemory(
        seq=int(row.seq),
        namespace=row.namespace,
        tenant=row.tenant,
        text_id=int(row.text_id),
        view=getattr(row, "view", "full"),
        result_id=getattr(row, "result_id", None),
        dedupe_key=getattr(row, "dedupe_key", None),
    )


def shown_content(head: str, body: str, view: str) -> str:
    """The content a tier item shows of its text: the body, or head and body ("task result").

    Example:
        >>> shown_content("Audit Acme", "Acme passed", "full"), shown_content("Audit Acme", "Acme passed", "body")
        ('Audit Acme Acme passed', 'Acme passed')
    """
    return f"{head} {body}" if head and view != "body" else body


def shows_mention(items: Any, mentions: Any) -> Any:
    """SQL condition: the item (a ``memories`` row) shows the mention (a ``mentions`` row of
    its text): a "body" item does not show its text's head."""
    return or_(mentions.c.in_head == 0, items.c.view == "full")


def item_of_row(row: Any) -> MemoryItem:
    """The item a ``memories`` row joined with its text's ``head`` and ``body`` shows."""
    return MemoryItem(
        content=shown_content(row.head, row.body, row.view),
        memory_type=row.memory_type,
        timestamp=stored_time(row.created_at),
        metadata=decode_metadata(row.metadata),
        agent_id=row.agent_id,
        task_id=row.task_id,
        conversation_id=row.conversation_id,
        user_id=row.user_id,
        relevance_score=float(row.relevance_score),
        access_count=int(row.access_count),
        last_accessed=stored_time(row.last_accessed) if row.last_accessed else None,
        embedding=decode_embedding(row.embedding) if row.embedding is not None else None,
        memory_id=row.memory_id,
    )


def chunks(values: list[_V], size: int) -> Iterator[list[_V]]:
    """``values`` in consecutive pieces of at most ``size`` (for bounded ``IN`` lists)."""
    for start in range(0, len(values), size):
        yield values[start : start + size]
