"""Memory rows: what the ``memories`` table holds, and its statements.

The row types (:class:`NewItemRow`, :class:`TextAnalysis`), the conversions between rows and
:class:`~graphmem.items.MemoryItem` (beside its :class:`~graphmem.items.StoredMemory`), the
conditions that filter rows, and every statement on tier items as a function of the caller's
connection: inserting, finding, listing, counting, updating (the statements that touch the
full-text index of ``texts`` are :class:`~graphmem.store.Database`'s, which repairs it).

Example:
    >>> shown_content("Audit Acme", "Acme passed", "body")
    'Acme passed'
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import (
    Connection,
    Integer,
    Select,
    String,
    and_,
    bindparam,
    cast,
    delete,
    exists,
    func,
    insert,
    or_,
    select,
    update,
)

from ..errors import InvalidArgumentError
from ..items import (
    MemoryItem,
    StoredMemory,
    decode_metadata,
    encode_metadata,
    stored_time,
    time_text,
)
from . import schema
from .dialects import dialect_of
from .vectors import decode_embedding, encode_embedding

__all__ = [
    "MEMORIES_GENERATION",
    "MEMORIES_REWRITES",
    "MemoriesStamp",
    "OrphanText",
    "count_change",
    "delete_items",
    "delete_items_of_texts",
    "insert_items",
    "items_of_texts",
    "update_metadata_many",
    "find",
    "results_with_keys",
    "result_rows",
    "matching_results",
    "result_id_of",
    "text_parts",
    "fetch_rows",
    "list_items",
    "count",
    "counts_by_tenant",
    "rows_beyond_newest",
    "eviction_candidates",
    "shows_text",
    "text_is_shared",
    "update_row",
    "move_item",
    "update_metadata",
    "touch",
    "memories_stamp",
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
_T = schema.texts
_V = TypeVar("_V")
# Statements run once per row, built once (building one costs ~200 us, more than running it).
_INSERT_ITEMS = insert(_M).returning(_M.c.seq, sort_by_parameter_order=True)
_ITEMS = select(_M, _T.c.head, _T.c.body).join(_T, _T.c.id == _M.c.text_id)
_ITEMS_BY_SEQ = _ITEMS.where(_M.c.seq.in_(bindparam("seqs", expanding=True)))
_TOUCH = (
    update(_M)
    .where(_M.c.seq.in_(bindparam("seqs", expanding=True)))
    .values(access_count=_M.c.access_count + 1, last_accessed=bindparam("when"))
)
#: ``graphmem_meta`` keys: how often the memory rows changed (written, deleted, moved, given a
#: vector; counting an access is no change), and how often by other than new rows. What is
#: kept of them between reads (a search's vectors) holds while the first stays, whichever
#: process wrote, and is brought up to date by reading the new rows while the second stays.
MEMORIES_GENERATION, MEMORIES_REWRITES = "memories_generation", "memories_rewrites"
_META = schema.meta
_COUNT_CHANGE = (
    update(_META)
    .where(_META.c.key.in_(bindparam("keys", expanding=True)))
    .values(value=cast(cast(_META.c.value, Integer) + 1, String))
)
_LOCK_GRAPH_GENERATION = (
    select(_META.c.key).where(_META.c.key == "graph_generation").with_for_update()
)
_STAMP = select(
    select(_META.c.value).where(_META.c.key == MEMORIES_GENERATION).scalar_subquery(),
    select(_META.c.value).where(_META.c.key == MEMORIES_REWRITES).scalar_subquery(),
    select(func.max(_M.c.seq)).scalar_subquery(),
)
_ITEMS_OF_TEXT = select(func.count()).select_from(_M).where(_M.c.text_id == bindparam("text_id"))
_UNSHOWN_TEXTS = select(_T.c.id, _T.c.tenant, _T.c.analysis != schema.NOT_ANALYSED).where(
    _T.c.id.in_(bindparam("ids", expanding=True)),
    ~exists().where(_M.c.text_id == _T.c.id),
)
_DELETE_ROWS = (
    delete(_M).where(_M.c.seq.in_(bindparam("seqs", expanding=True))).returning(_M.c.text_id)
)
_UPDATE_METADATA = update(_M).where(_M.c.seq == bindparam("row_seq"))
_IN_NAMESPACES = _M.c.namespace.in_(bindparam("namespaces", expanding=True))
_OF_TENANT = _M.c.tenant == bindparam("tenant")
_COUNT = select(func.count()).select_from(_M).where(_IN_NAMESPACES)
_COUNT_OF_TENANT = _COUNT.where(_OF_TENANT)
_ROWS_NEWEST_FIRST = (
    select(_M.c.seq, _M.c.namespace, _M.c.tenant, _M.c.text_id)
    .where(_IN_NAMESPACES)
    .order_by(_M.c.created_at.desc(), _M.c.seq.desc())
    .offset(bindparam("skip"))
)
_ROWS_OF_TENANT_NEWEST_FIRST = _ROWS_NEWEST_FIRST.where(_OF_TENANT)


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


def insert_items(conn: Connection, rows: Sequence[NewItemRow]) -> list[StoredMemory]:
    """Insert tier items of stored texts (one statement); returns their rows in order."""
    if not rows:
        return []
    values = [
        {
            **item_columns(r.item, r.namespace, r.importance, r.author_key),
            "text_id": r.text_id,
            "view": r.view,
            "result_id": r.result_id or r.item.memory_id,
            "dedupe_key": r.dedupe_key,
        }
        for r in rows
    ]
    seqs = [int(s) for s in conn.execute(_INSERT_ITEMS, values).scalars()]
    count_change(conn, new_rows=True)
    return [
        StoredMemory(
            seq, r.namespace, r.item.user_id or "", r.text_id, r.view,
            r.result_id or r.item.memory_id,
        )
        for seq, r in zip(seqs, rows, strict=True)
    ]  # fmt: skip


def items_of_texts(
    conn: Connection, text_ids: Sequence[int]
) -> list[tuple[StoredMemory, MemoryItem]]:
    """Every item showing one of ``text_ids``, in insertion order."""
    out: list[tuple[StoredMemory, MemoryItem]] = []
    for chunk in chunks(list(text_ids), 500):
        stmt = _ITEMS.where(_M.c.text_id.in_(chunk)).order_by(_M.c.seq)
        out.extend((memory_row_of(r), item_of_row(r)) for r in conn.execute(stmt))
    out.sort(key=lambda pair: pair[0].seq)
    return out


def update_metadata_many(conn: Connection, rows: Sequence[tuple[int, Mapping[str, Any]]]) -> None:
    """Rewrite the metadata of several rows ``(seq, metadata)`` (one statement)."""
    if rows:
        conn.execute(
            _UPDATE_METADATA,
            [{"row_seq": seq, "metadata": encode_metadata(dict(m))} for seq, m in rows],
        )


def find(
    conn: Connection, memory_id: str, namespaces: Sequence[str]
) -> tuple[StoredMemory, MemoryItem] | None:
    """The row and item with ``memory_id`` in one of ``namespaces``, or None."""
    row = conn.execute(
        _ITEMS.where(_M.c.memory_id == memory_id, _M.c.namespace.in_(namespaces))
    ).first()
    if row is None:
        return None
    return memory_row_of(row), item_of_row(row)


def results_with_keys(
    conn: Connection, tenant: str, keys: Sequence[str], *, writing: bool = False
) -> dict[str, str]:
    """The stored result id of each of ``keys`` (``dedupe_key`` values) that ``tenant``
    already has (keys no item carries are left out). ``writing``: the caller stores the
    missing ones in this transaction (other writers of keys wait until it ends).

    Example:
        >>> from graphmem.store.database import Database
        >>> from graphmem.store.text_rows import insert_texts
        >>> db = Database()
        >>> with db.write() as conn:
        ...     [text] = insert_texts(conn, [("", "", "Alice met Bob")])
        ...     _ = insert_items(conn, [NewItemRow(MemoryItem("Alice met Bob"), "notes",
        ...                                           None, text, result_id="r1", dedupe_key="k1")])
        ...     results_with_keys(conn, "", ["k1", "k2"])
        {'k1': 'r1'}
    """
    if writing and keys:
        dialect_of(conn).lock_dedupe_keys(conn)
    found: dict[str, str] = {}
    for chunk in chunks(list(keys), 500):
        stmt = select(_M.c.dedupe_key, _M.c.result_id).where(
            _M.c.tenant == tenant, _M.c.dedupe_key.in_(chunk)
        )
        for key, result in conn.execute(stmt):
            found.setdefault(str(key), str(result))
    return found


def result_rows(
    conn: Connection,
    result_ids: Sequence[str],
    namespaces: Sequence[str] | None = None,
    tenant: str | None = None,
) -> list[tuple[StoredMemory, MemoryItem]]:
    """Every item of the results ``result_ids`` (in ``namespaces``, of ``tenant``, when
    given), in insertion order."""
    out: list[tuple[StoredMemory, MemoryItem]] = []
    for chunk in chunks(list(result_ids), 500):
        stmt = _ITEMS.where(_M.c.result_id.in_(chunk), *row_conditions(tenant, None))
        if namespaces is not None:
            stmt = stmt.where(_M.c.namespace.in_(list(namespaces)))
        out.extend(
            (memory_row_of(r), item_of_row(r)) for r in conn.execute(stmt.order_by(_M.c.seq))
        )
    return out


def matching_results(
    conn: Connection,
    namespaces: Sequence[str],
    *,
    tenant: str | None = None,
    sql_filters: Mapping[str, Any] | None = None,
    before: datetime | None = None,
) -> list[str]:
    """The ids of the results with an item in ``namespaces`` that matches: of ``tenant``,
    with column filters, saved (event time) before ``before``; oldest first."""
    stmt = select(_M.c.result_id).where(
        _M.c.namespace.in_(list(namespaces)), *row_conditions(tenant, sql_filters)
    )
    if before is not None:
        stmt = stmt.where(_M.c.created_at < time_text(before))  # the stored form
    ids = conn.execute(stmt.order_by(_M.c.seq)).scalars()
    return list(dict.fromkeys(str(i) for i in ids if i is not None))


def result_id_of(conn: Connection, seq: int) -> str | None:
    """The result id of the item ``seq`` (None when it is gone)."""
    return conn.execute(select(_M.c.result_id).where(_M.c.seq == seq)).scalar()


def text_parts(conn: Connection, text_id: int) -> tuple[str, str] | None:
    """A stored text's ``(head, body)`` (None when it is gone)."""
    row = conn.execute(select(_T.c.head, _T.c.body).where(_T.c.id == text_id)).first()
    return (str(row[0]), str(row[1])) if row is not None else None


def fetch_rows(conn: Connection, seqs: Sequence[int]) -> dict[int, tuple[StoredMemory, MemoryItem]]:
    """Rows and items by ``seq`` (missing ones left out)."""
    out: dict[int, tuple[StoredMemory, MemoryItem]] = {}
    for chunk in chunks(list(seqs), 500):
        for row in conn.execute(_ITEMS_BY_SEQ, {"seqs": chunk}).all():
            out[row.seq] = (memory_row_of(row), item_of_row(row))
    return out


def list_items(
    conn: Connection,
    namespaces: Sequence[str],
    *,
    tenant: str | None = None,
    sql_filters: Mapping[str, Any] | None = None,
    newest_first: bool = False,
    limit: int | None = None,
    before_seq: int | None = None,
    by_time: bool = False,
) -> list[tuple[StoredMemory, MemoryItem]]:
    """Items of ``namespaces`` in insertion order (or newest first); ``by_time``: in the
    order of their event times (``created_at``, then insertion), without ``before_seq``."""
    stmt = _ITEMS.where(_M.c.namespace.in_(namespaces), *row_conditions(tenant, sql_filters))
    if before_seq is not None:
        if by_time:
            raise InvalidArgumentError("before_seq pages in insertion order, not by_time")
        stmt = stmt.where(_M.c.seq < before_seq if newest_first else _M.c.seq > before_seq)
    order = [_M.c.created_at, _M.c.seq] if by_time else [_M.c.seq]
    stmt = stmt.order_by(*(c.desc() if newest_first else c.asc() for c in order))
    if limit is not None:
        stmt = stmt.limit(limit)
    return [(memory_row_of(r), item_of_row(r)) for r in conn.execute(stmt)]


def count(conn: Connection, namespaces: Sequence[str] | None, tenant: str | None = None) -> int:
    """Number of items in ``namespaces`` (all when None; of one tenant when given)."""
    if namespaces is not None:  # once per save (capacity checks): prebuilt statements
        if tenant is None:
            found = conn.execute(_COUNT, {"namespaces": list(namespaces)})
        else:
            found = conn.execute(
                _COUNT_OF_TENANT, {"namespaces": list(namespaces), "tenant": tenant}
            )
        return int(found.scalar() or 0)
    stmt = select(func.count()).select_from(_M)
    if tenant is not None:
        stmt = stmt.where(_M.c.tenant == tenant)
    return int(conn.execute(stmt).scalar() or 0)


def _counts_by_tenant() -> Select[Any]:
    """Each tenant's number of items of the ``namespaces`` parameter, from the index on
    ``(tenant, namespace)`` alone: the tenants by a skip over it (one probe per tenant), then
    each one's count (grouping the tier's rows read every row of it: 14 ms at 10k items)."""
    probe = _M.alias("probe")
    tenants = select(func.min(_M.c.tenant).label("tenant")).cte("tenants", recursive=True)
    tenants = tenants.union_all(
        select(
            select(func.min(probe.c.tenant))
            .where(probe.c.tenant > tenants.c.tenant)
            .scalar_subquery()
        ).where(tenants.c.tenant.is_not(None))
    )
    counted = _M.alias("counted")
    count = (
        select(func.count())
        .select_from(counted)
        .where(
            counted.c.tenant == tenants.c.tenant,
            counted.c.namespace.in_(bindparam("namespaces", expanding=True)),
        )
        .scalar_subquery()
    )
    return select(tenants.c.tenant, count).where(tenants.c.tenant.is_not(None))


_COUNTS_BY_TENANT = _counts_by_tenant()


def counts_by_tenant(conn: Connection, namespaces: Sequence[str]) -> dict[str, int]:
    """Number of items in ``namespaces`` of each tenant that has some (capacity is per
    tenant: one user's saves never evict another's)."""
    rows = conn.execute(_COUNTS_BY_TENANT, {"namespaces": list(namespaces)})
    return {str(tenant): int(n) for tenant, n in rows if n}


def rows_beyond_newest(
    conn: Connection, namespaces: Sequence[str], tenant: str | None, keep: int
) -> list[StoredMemory]:
    """The rows of ``namespaces`` (of ``tenant`` when given) other than the newest
    ``keep`` by event time (``created_at``, then insertion), oldest first: what a
    first-in-first-out capacity of ``keep`` evicts. An item saved with an old event time
    (history recorded after the fact) goes before fresher ones, never instead of them."""
    params: dict[str, Any] = {"namespaces": list(namespaces), "skip": keep}
    stmt = _ROWS_NEWEST_FIRST
    if tenant is not None:
        stmt, params["tenant"] = _ROWS_OF_TENANT_NEWEST_FIRST, tenant
    return [memory_row_of(r) for r in reversed(conn.execute(stmt, params).all())]


def eviction_candidates(
    conn: Connection, namespace: str, tenant: str | None = None
) -> list[tuple[StoredMemory, float, int, str]]:
    """``(row, importance, access_count, created_at)`` of every row, for eviction policies."""
    stmt = select(
        _M.c.seq, _M.c.tenant, _M.c.importance, _M.c.access_count, _M.c.created_at, _M.c.text_id
    ).where(_M.c.namespace == namespace)
    if tenant is not None:
        stmt = stmt.where(_M.c.tenant == tenant)
    return [
        (
            StoredMemory(int(r[0]), namespace, r[1], int(r[5])),
            float(r[2] if r[2] is not None else 0.5),
            int(r[3]),
            r[4],
        )
        for r in conn.execute(stmt)
    ]


def shows_text(conn: Connection, text_id: int, namespace: str) -> bool:
    """Whether an item of ``namespace`` already shows the text ``text_id`` (a promotion's
    idempotency key: read inside the write transaction that would add one)."""
    found = conn.execute(
        select(_M.c.seq).where(_M.c.text_id == text_id, _M.c.namespace == namespace).limit(1)
    ).first()
    return found is not None


def text_is_shared(conn: Connection, text_id: int) -> bool:
    """Whether more than one tier item shows the text."""
    return int(conn.execute(_ITEMS_OF_TEXT, {"text_id": text_id}).scalar() or 0) > 1


def update_row(
    conn: Connection,
    seq: int,
    item: MemoryItem,
    importance: float | None,
    author_key: str | None = None,
) -> None:
    """Rewrite a row's fields from ``item`` (same seq, namespace and text)."""
    values = item_columns(item, None, importance, author_key)
    values.pop("namespace")
    conn.execute(update(_M).where(_M.c.seq == seq).values(**values))
    count_change(conn)


def move_item(conn: Connection, seq: int, text_id: int) -> None:
    """Make the item ``seq`` show all of the text ``text_id``."""
    conn.execute(update(_M).where(_M.c.seq == seq).values(text_id=text_id, view="full"))
    count_change(conn)


def update_metadata(conn: Connection, seq: int, metadata: Mapping[str, Any]) -> None:
    """Rewrite a row's metadata."""
    conn.execute(_UPDATE_METADATA, {"row_seq": seq, "metadata": encode_metadata(dict(metadata))})


def touch(conn: Connection, seqs: Sequence[int], when: datetime) -> None:
    """Count one access of each row."""
    for chunk in chunks(list(seqs), 500):
        conn.execute(_TOUCH, {"seqs": chunk, "when": time_text(when)})


def delete_items(conn: Connection, seqs: Sequence[int]) -> tuple[int, list[int]]:
    """Delete tier items; returns how many, and the ids of the texts that no item shows
    any more (still stored: :meth:`Database.delete_texts <graphmem.store.database.Database.delete_texts>` deletes them)."""
    deleted, orphans = delete_items_of_texts(conn, seqs)
    return deleted, [orphan.text_id for orphan in orphans]


@dataclass(frozen=True)
class OrphanText:
    """A text no item shows any more: its id, tenant, and whether it was indexed (one that
    was not has no mentions or evidence to take away)."""

    text_id: int
    tenant: str
    indexed: bool


def delete_items_of_texts(conn: Connection, seqs: Sequence[int]) -> tuple[int, list[OrphanText]]:
    """:func:`delete_items`, each text left unshown described (:class:`OrphanText`): a
    ``DELETE ... RETURNING`` and a read of the texts for up to 500 items."""
    deleted = 0
    texts: set[int] = set()
    for chunk in chunks(list(seqs), 500):
        gone = conn.execute(_DELETE_ROWS, {"seqs": chunk}).scalars().all()
        deleted += len(gone)
        texts.update(gone)
    if deleted:
        count_change(conn)
    orphans: list[OrphanText] = []
    for chunk in chunks(sorted(texts), 500):
        for text_id, tenant, indexed in conn.execute(_UNSHOWN_TEXTS, {"ids": chunk}):
            orphans.append(OrphanText(int(text_id), str(tenant), bool(indexed)))
    return deleted, orphans


def count_change(conn: Connection, *, new_rows: bool = False) -> None:
    """Count a change of memory rows (``new_rows``: rows inserted, nothing else), in the
    caller's transaction (:data:`MEMORIES_GENERATION`)."""
    if conn.dialect.name != "sqlite":
        # On a server the graph generation's row is locked first, as a graph write does:
        # two writers never hold these rows in opposite orders (SQLite has one writer).
        conn.execute(_LOCK_GRAPH_GENERATION)
    keys = [MEMORIES_GENERATION] if new_rows else [MEMORIES_GENERATION, MEMORIES_REWRITES]
    conn.execute(_COUNT_CHANGE, {"keys": keys})


@dataclass(frozen=True)
class MemoriesStamp:
    """The memory rows as one read sees them: how often they changed, how often by other
    than new rows, and the largest row number (``seq``; 0: none)."""

    generation: int
    rewrites: int
    newest: int


def memories_stamp(conn: Connection) -> MemoriesStamp | None:
    """The :class:`MemoriesStamp` of ``conn``'s read (None: a store that counts no changes)."""
    generation, rewrites, newest = conn.execute(_STAMP).one()
    if generation is None or rewrites is None:
        return None
    return MemoriesStamp(int(generation), int(rewrites), int(newest or 0))
