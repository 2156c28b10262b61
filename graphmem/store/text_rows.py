"""Text rows: the stored texts (``texts``) and their full-text index, in the caller's
transaction.

A statement that reads or writes the full-text index runs through :func:`healing`: when the
index is damaged, it is rebuilt from the stored texts (an ``IndexRepairedWarning`` says so) and
the statement runs again. Deleting and rewriting texts, which also scrub their words from the
file, are :class:`~graphmem.store.database.Database`'s (they join its transaction's scrub).

Example:
    >>> from graphmem.items import MemoryItem
    >>> from graphmem.store.database import Database
    >>> db = Database()
    >>> with db.write() as conn:
    ...     _ = insert_memories(conn, [(MemoryItem("Acme renewed the contract"), "n", None)])
    ...     [seq for seq, _ in search_text(conn, "renewal", ["n"])]
    [1]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import Connection, insert, update
from sqlalchemy.exc import DBAPIError

from ..items import MemoryItem, StoredMemory
from . import schema
from .dialects import dialect_of
from .memory_rows import NewItemRow, TextAnalysis, insert_items

__all__ = [
    "healing",
    "insert_memories",
    "insert_memory",
    "insert_texts",
    "record_analysis",
    "search_text",
]

_T = schema.texts
# Run once per save, built once (building one costs ~200 us, more than running it).
_INSERT_TEXTS = insert(_T).returning(_T.c.id, sort_by_parameter_order=True)
_Result = TypeVar("_Result")


def insert_memory(
    conn: Connection,
    item: MemoryItem,
    *,
    namespace: str,
    importance: float | None = None,
) -> int:
    """Insert ``item`` (its own text) and return its row number (``seq``)."""
    return insert_memories(conn, [(item, namespace, importance)])[0].seq


def insert_memories(
    conn: Connection, rows: Sequence[tuple[MemoryItem, str, float | None]]
) -> list[StoredMemory]:
    """Insert items, each with a text of its own, in the caller's transaction; returns
    their rows in order."""
    text_ids = insert_texts(conn, [(item.user_id or "", "", item.content) for item, _, _ in rows])
    return insert_items(
        conn,
        [
            NewItemRow(item, namespace, importance, text_id)
            for (item, namespace, importance), text_id in zip(rows, text_ids, strict=True)
        ],
    )


def insert_texts(
    conn: Connection,
    texts: Sequence[tuple[str, str, str]],
    analyses: Sequence[TextAnalysis | None] | None = None,
) -> list[int]:
    """Insert ``(tenant, head, body)`` texts (one statement), indexed as ``analyses``
    say (None, or a None in it: not indexed); returns their ids in order."""
    if not texts:
        return []
    marks = analyses if analyses is not None else [None] * len(texts)
    rows = [
        {"tenant": tenant, "head": head, "body": body, **TextAnalysis.columns_of(analysis)}
        for (tenant, head, body), analysis in zip(texts, marks, strict=True)
    ]
    return healing(conn, lambda: [int(i) for i in conn.execute(_INSERT_TEXTS, rows).scalars()])


def healing(conn: Connection, run: Callable[[], _Result]) -> _Result:
    """``run()`` a statement that reads or writes the full-text index; when the index is
    damaged, rebuild it from the stored texts (a warning says so) and run it again."""
    try:
        return run()
    except DBAPIError as exc:
        if not dialect_of(conn).is_damaged_index(exc):
            raise
        dialect_of(conn).heal_index(conn, str(exc.orig))
        return run()


def record_analysis(conn: Connection, text_id: int, analysis: TextAnalysis | None) -> None:
    """Record how the text ``text_id`` is indexed (None: not), after its content changed."""
    columns = TextAnalysis.columns_of(analysis)
    conn.execute(update(_T).where(_T.c.id == text_id).values(**columns))


def search_text(
    conn: Connection,
    query: str,
    namespaces: Sequence[str],
    *,
    tenant: str | None = None,
    sql_filters: Mapping[str, Any] | None = None,
    limit: int = 100,
    heads: bool = False,
) -> list[tuple[int, float]]:
    """Full-text hits ``(seq, score)``, best first; only items whose text's body (whole
    text, with ``heads``: the searched tiers show texts whole) matches a query term.

    On SQLite the score is FTS5's BM25 (porter-stemmed), negated so larger is better,
    of every matching text an item of the search shows (:func:`ranking_rows.lexical_hits`); on
    PostgreSQL an IDF-weighted ``ts_rank`` over the english tsvector columns
    (:func:`graphmem.store.dialects.postgresql.search_statement`).
    """
    return healing(
        conn,
        lambda: dialect_of(conn).search(conn, query, namespaces, tenant, sql_filters, limit, heads),
    )
