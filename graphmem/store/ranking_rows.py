"""SQL for ranking: the rows a search reads to score its candidates.

Each statement is built once per shape of the search (how many tiers, whether it is one
tenant's, which column filters) and bound with parameters, so a query costs only its
execution. The searched items are a :class:`Scope`.

Example:
    >>> from graphmem.store.database import Database
    >>> from graphmem.store.text_rows import insert_memories
    >>> from graphmem.items import MemoryItem
    >>> db = Database()
    >>> with db.write() as conn:
    ...     _ = insert_memories(conn, [(MemoryItem("Acme renewed the contract"), "n", None)])
    >>> with db.read() as conn:
    ...     [(seq, round(score, 2)) for seq, score in lexical_hits(conn, '"acme"', Scope(("n",)), 10)]
    [(1, 0.0)]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    Connection,
    Integer,
    bindparam,
    exists,
    func,
    literal_column,
    or_,
    select,
    text,
    union_all,
)

from . import schema
from .memory_rows import count_change
from .vectors import VECTOR_PREFIXES

__all__ = [
    "CandidateFacts",
    "Scope",
    "candidate_facts",
    "conversation_members",
    "entities_of_texts",
    "graph_windows",
    "item_texts",
    "item_vectors",
    "lexical_hits",
    "missing_vectors",
    "recent_vectors",
    "store_vectors",
    "scoped_vectors",
]

_M, _T, _MENTIONS = schema.memories, schema.texts, schema.mentions


@dataclass(frozen=True)
class Scope:
    """The items a search may return: of these namespaces (tiers), of ``tenant`` when given,
    with column filters (``column -> value``; None matches NULL)."""

    namespaces: tuple[str, ...]
    tenant: str | None = None
    filters: tuple[tuple[str, str | None], ...] = ()
    #: Whether items of these tiers show their text's head (the entity tier's "task
    #: result"): texts are then ranked by their whole, else by their body.
    heads: bool = False

    @classmethod
    def of(
        cls,
        namespaces: Iterable[str],
        tenant: str | None = None,
        sql_filters: Mapping[str, Any] | None = None,
        heads: bool = False,
    ) -> Scope:
        return cls(tuple(namespaces), tenant, tuple(sorted((sql_filters or {}).items())), heads)

    @property
    def shape(self) -> tuple[bool, tuple[tuple[str, bool], ...]]:
        """What the statements depend on (not the values)."""
        return self.tenant is not None, tuple((key, value is None) for key, value in self.filters)

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"scope_namespaces": list(self.namespaces)}
        if self.tenant is not None:
            out["scope_tenant"] = self.tenant
        out.update({f"scope_{key}": value for key, value in self.filters if value is not None})
        return out


def _scope_conditions(
    shape: tuple[bool, tuple[tuple[str, bool], ...]], by_text: bool = False
) -> list[Any]:
    """The conditions of a scope's shape; ``by_text``: its tier and tenant compared as
    expressions, which no index serves, so that SQLite (which keeps no statistics) finds a
    statement's items through their texts (an index on ``text_id``) rather than by reading
    every item of the scope."""
    by_tenant, filters = shape
    namespace, tenant = (
        (_M.c.namespace + "", _M.c.tenant + "") if by_text else (_M.c.namespace, _M.c.tenant)
    )
    conditions: list[Any] = [namespace.in_(bindparam("scope_namespaces", expanding=True))]
    if by_tenant:
        conditions.append(tenant == bindparam("scope_tenant"))
    for key, is_none in filters:
        column = _M.c[key]
        conditions.append(column.is_(None) if is_none else column == bindparam(f"scope_{key}"))
    return conditions


# ---------------------------------------------------------------------------------- lexical
def lexical_hits(conn: Connection, fts: str, scope: Scope, limit: int) -> list[tuple[int, float]]:
    """``(seq, BM25 score)`` of the items of ``scope`` whose text matches the FTS5 query
    ``fts``, best texts first (one statement): the ``limit`` best texts an item of ``scope``
    shows, and their items. The score is FTS5's BM25 of the text's body (of its whole when the
    scope shows heads), negated so that larger is better.

    Every matching text is considered, as a bare FTS5 query would; whether an item of the
    scope shows it is read from an index, and only those are scored.
    """
    params = {
        **scope.params(),
        "fts": fts,
        "limit": limit,
        "head_weight": 1.0 if scope.heads else 0.0,
    }
    rows = conn.execute(_lexical_statement(scope.shape), params).all()
    # A text that matches in its head only scores 0 by its body: no match.
    return [(seq, -float(rank)) for seq, rank in rows if rank < 0]


@lru_cache(maxsize=64)
def _lexical_statement(shape: tuple[bool, tuple[tuple[str, bool], ...]]) -> Any:
    conditions = _scope_conditions(shape)
    rowid: Any = literal_column("texts_fts.rowid")
    ranked = (
        select(
            rowid.label("text_id"),
            func.bm25(literal_column("texts_fts"), bindparam("head_weight"), 1.0).label("rank"),
        )
        .select_from(text("texts_fts"))
        .where(text("texts_fts MATCH :fts"), exists().where(_M.c.text_id == rowid, *conditions))
        .order_by(text("rank"))
        .limit(bindparam("limit", type_=Integer))
        .subquery()
    )
    return (
        select(_M.c.seq, ranked.c.rank)
        .join(ranked, ranked.c.text_id == _M.c.text_id)
        .where(*conditions)
        .order_by(ranked.c.rank, _M.c.seq)
    )


# ---------------------------------------------------------------------------------- graph
def graph_windows(
    conn: Connection, sizes: Mapping[int, int], scan: int, scope: Scope
) -> list[tuple[int, int, int, str]]:
    """``(entity id, seq, text id, view)`` of each entity's window, in one statement: the
    items of ``scope`` showing the entity's ``sizes[entity]`` newest texts that an item of the
    scope shows it in, looked for among its newest ``scan`` times that many mentions. A text
    whose mentions of the entity all lie in its head shows it only to items of the
    ``"full"`` view.

    Each entity's newest mentions are read backwards from the index (entity_id, text_id,
    in_head) alone, so the work is bounded by the windows, not by the store.
    """
    if not sizes:
        return []
    ordered = sorted(sizes.items())
    params: dict[str, Any] = {**scope.params()}
    for i, (entity_id, size) in enumerate(ordered):
        params.update({f"entity_{i}": entity_id, f"size_{i}": size, f"scan_{i}": scan * size})
    stmt = _graph_windows_statement(len(ordered), scope.shape)
    return [tuple(row) for row in conn.execute(stmt, params).all()]


@lru_cache(maxsize=64)
def _graph_windows_statement(
    entities: int, shape: tuple[bool, tuple[tuple[str, bool], ...]]
) -> Any:
    newest = [
        select(
            _MENTIONS.c.entity_id,
            _MENTIONS.c.text_id,
            _MENTIONS.c.in_head,
            bindparam(f"size_{i}", type_=Integer).label("size"),
        )
        .where(_MENTIONS.c.entity_id == bindparam(f"entity_{i}"))
        .order_by(_MENTIONS.c.text_id.desc())
        .limit(bindparam(f"scan_{i}", type_=Integer))
        .subquery()
        .select()
        for i in range(entities)
    ]
    recent = union_all(*newest).subquery() if entities > 1 else newest[0].subquery()
    # An item shows the entity when one of its mentions there is in the body, or the item
    # shows the whole text (a text's several mentions give one rank: dense_rank).
    shown = (
        select(
            recent.c.entity_id,
            _M.c.seq,
            _M.c.text_id,
            _M.c.view,
            recent.c.size,
            func.dense_rank()
            .over(partition_by=recent.c.entity_id, order_by=_M.c.text_id.desc())
            .label("nth"),
        )
        .join(recent, recent.c.text_id == _M.c.text_id)
        .where(*_scope_conditions(shape), or_(recent.c.in_head == 0, _M.c.view == "full"))
        .subquery()
    )
    return (
        select(shown.c.entity_id, shown.c.seq, shown.c.text_id, shown.c.view)
        .where(shown.c.nth <= shown.c.size)
        .distinct()
    )


def item_texts(conn: Connection, seqs: Sequence[int]) -> dict[int, tuple[int, str]]:
    """seq -> ``(text id, view)`` of each item."""
    out: dict[int, tuple[int, str]] = {}
    ordered = sorted(set(seqs))
    for start in range(0, len(ordered), 500):
        for seq, text_id, view in conn.execute(_ITEM_TEXTS, {"seqs": ordered[start : start + 500]}):
            out[seq] = (text_id, view)
    return out


_ITEM_TEXTS = select(_M.c.seq, _M.c.text_id, _M.c.view).where(
    _M.c.seq.in_(bindparam("seqs", expanding=True))
)


def entities_of_texts(
    conn: Connection, text_ids: Iterable[int], entity_ids: Sequence[int]
) -> list[tuple[int, int, int]]:
    """``(text id, entity id, 1 if all its mentions there are in the head)`` for each of
    ``entity_ids`` that the texts mention."""
    out: list[tuple[int, int, int]] = []
    ordered = sorted(set(text_ids))
    for start in range(0, len(ordered), 500):
        params = {"texts": ordered[start : start + 500], "entities": list(entity_ids)}
        out.extend(tuple(row) for row in conn.execute(_ENTITIES_OF_TEXTS, params).all())
    return out


_ENTITIES_OF_TEXTS = (
    select(_MENTIONS.c.text_id, _MENTIONS.c.entity_id, func.min(_MENTIONS.c.in_head))
    .where(
        _MENTIONS.c.text_id.in_(bindparam("texts", expanding=True)),
        _MENTIONS.c.entity_id.in_(bindparam("entities", expanding=True)),
    )
    .group_by(_MENTIONS.c.text_id, _MENTIONS.c.entity_id)
)


# ---------------------------------------------------------------------------------- semantic
#: An item with a vector of graphmem's models (int8 or float32), not a caller's JSON list.
_HAS_VECTOR = or_(*(_M.c.embedding.like(f"{prefix}%") for prefix in VECTOR_PREFIXES))
#: Items numbered past ``after`` (0: all): those new since an earlier read.
_AFTER = _M.c.seq > bindparam("after", type_=Integer)


def scoped_vectors(
    conn: Connection,
    scope: Scope,
    entity_ids: Sequence[int],
    author_keys: Sequence[str],
    limit: int,
    after: int = 0,
) -> list[tuple[int, int, str]]:
    """``(seq, text id, stored embedding)`` of the newest ``limit`` items of ``scope`` (numbered
    past ``after``) that have a stored vector and either show a mention of one of
    ``entity_ids`` or were said or done by one of ``author_keys`` (read from the mention and
    author indexes)."""
    if not entity_ids and not author_keys:
        return []
    params = {
        **scope.params(),
        "entities": list(entity_ids) or [-1],
        "authors": list(author_keys) or [""],
        "limit": limit,
        "after": after,
    }
    statement = (
        _new_scoped_statement(scope.shape)
        if after
        else _scoped_statement(scope.shape, conn.dialect.name == "sqlite")
    )
    return [tuple(row) for row in conn.execute(statement, params)]


@lru_cache(maxsize=64)
def _scoped_statement(shape: tuple[bool, tuple[tuple[str, bool], ...]], by_text: bool) -> Any:
    conditions = [*_scope_conditions(shape), _HAS_VECTOR, _AFTER]
    limit = bindparam("limit", type_=Integer)
    authored = (
        select(_M.c.seq)
        .where(_M.c.author_key.in_(bindparam("authors", expanding=True)), *conditions)
        .order_by(_M.c.seq.desc())
        .limit(limit)
    )
    mentioned = (
        select(_M.c.seq)
        .join(_MENTIONS, _MENTIONS.c.text_id == _M.c.text_id)
        .where(
            _MENTIONS.c.entity_id.in_(bindparam("entities", expanding=True)),
            or_(_MENTIONS.c.in_head == 0, _M.c.view == "full"),
            # From the entities' mentions to their texts' items (SQLite read every item of
            # the scope first: 9 ms at 10k for an entity mentioned once, 0.1 ms this way).
            *_scope_conditions(shape, by_text),
            _HAS_VECTOR,
            _AFTER,
        )
        .order_by(_M.c.seq.desc())
        .limit(limit)
    )
    seqs = union_all(authored.subquery().select(), mentioned.subquery().select()).subquery()
    return (
        select(_M.c.seq, _M.c.text_id, _M.c.embedding)
        .where(_M.c.seq.in_(select(seqs.c.seq)))
        .order_by(_M.c.seq.desc())
        .limit(limit)
    )


@lru_cache(maxsize=64)
def _new_scoped_statement(shape: tuple[bool, tuple[tuple[str, bool], ...]]) -> Any:
    """:func:`_scoped_statement`'s rows for the few items new since a read: read from the
    newest items backwards (the row number's index), each checked for its mentions."""
    mentioned = exists().where(
        _MENTIONS.c.text_id == _M.c.text_id,
        _MENTIONS.c.entity_id.in_(bindparam("entities", expanding=True)),
        or_(_MENTIONS.c.in_head == 0, _M.c.view == "full"),
    )
    return (
        select(_M.c.seq, _M.c.text_id, _M.c.embedding)
        .where(
            *_scope_conditions(shape),
            _HAS_VECTOR,
            _AFTER,
            or_(_M.c.author_key.in_(bindparam("authors", expanding=True)), mentioned),
        )
        .order_by(_M.c.seq.desc())
        .limit(bindparam("limit", type_=Integer))
    )


def item_vectors(conn: Connection, seqs: Iterable[int]) -> list[tuple[int, int, str]]:
    """``(seq, text id, stored embedding)`` of the items of ``seqs`` that have a float32
    embedding."""
    ordered = sorted(set(seqs))
    out: list[tuple[int, int, str]] = []
    for start in range(0, len(ordered), 500):
        rows = conn.execute(_ITEM_VECTORS, {"seqs": ordered[start : start + 500]})
        out.extend(tuple(row) for row in rows)
    return out


_ITEM_VECTORS = select(_M.c.seq, _M.c.text_id, _M.c.embedding).where(
    _M.c.seq.in_(bindparam("seqs", expanding=True)), _HAS_VECTOR
)


def missing_vectors(
    conn: Connection, tenant: str | None, after: int, limit: int
) -> list[tuple[int, str]]:
    """``(seq, text body)`` of the first ``limit`` items after ``after`` (of ``tenant``; None:
    of every tenant) that have no embedding: a store saved with recall by meaning off."""
    statement = (
        select(_M.c.seq, _T.c.body)
        .join(_T, _T.c.id == _M.c.text_id)
        .where(_M.c.seq > after, _M.c.embedding.is_(None))
        .order_by(_M.c.seq)
        .limit(limit)
    )
    if tenant is not None:
        statement = statement.where(_M.c.tenant == tenant)
    return [(int(seq), str(body)) for seq, body in conn.execute(statement)]


def store_vectors(conn: Connection, vectors: Sequence[tuple[int, str]]) -> None:
    """Store each ``(seq, column text)`` in an item that still has no embedding."""
    if vectors:
        conn.execute(
            _M.update()
            .where(_M.c.seq == bindparam("b_seq"), _M.c.embedding.is_(None))
            .values(embedding=bindparam("b_embedding")),
            [{"b_seq": seq, "b_embedding": text} for seq, text in vectors],
        )
        count_change(conn)


def recent_vectors(
    conn: Connection, scope: Scope, limit: int, after: int = 0
) -> list[tuple[int, int, str]]:
    """``(seq, text id, stored embedding)`` of the newest ``limit`` items of ``scope``
    (numbered past ``after``) that have a stored vector: what a query's meaning is compared
    with, whatever it names."""
    params = {**scope.params(), "limit": limit, "after": after}
    return [tuple(row) for row in conn.execute(_recent_statement(scope.shape), params)]


@lru_cache(maxsize=64)
def _recent_statement(shape: tuple[bool, tuple[tuple[str, bool], ...]]) -> Any:
    return (
        select(_M.c.seq, _M.c.text_id, _M.c.embedding)
        .where(*_scope_conditions(shape), _HAS_VECTOR, _AFTER)
        .order_by(_M.c.seq.desc())
        .limit(bindparam("limit", type_=Integer))
    )


# ---------------------------------------------------------------------------------- facts
@dataclass(frozen=True)
class CandidateFacts:
    """What the fusion of scores reads of a candidate item."""

    seq: int
    namespace: str
    importance: float | None
    created_at: str
    author_key: str | None
    entity_labels: str | None
    conversation_id: str | None


def candidate_facts(conn: Connection, seqs: Iterable[int]) -> dict[int, CandidateFacts]:
    """The facts of each item of ``seqs`` (missing ones left out)."""
    ordered = sorted(set(seqs))
    out: dict[int, CandidateFacts] = {}
    for start in range(0, len(ordered), 500):
        for row in conn.execute(_FACTS, {"seqs": ordered[start : start + 500]}).all():
            out[row[0]] = CandidateFacts(*row)
    return out


_FACTS = (
    select(
        _M.c.seq,
        _M.c.namespace,
        _M.c.importance,
        _M.c.created_at,
        _M.c.author_key,
        _T.c.entity_labels,
        _M.c.conversation_id,
    )
    .join(_T, _T.c.id == _M.c.text_id)
    .where(_M.c.seq.in_(bindparam("seqs", expanding=True)))
)


def conversation_members(
    conn: Connection, conversations: Sequence[str], scope: Scope
) -> dict[str, list[tuple[int, int]]]:
    """The items of ``scope`` in each conversation, in order (``conversation -> [(seq, text
    id)]``)."""
    if not conversations:
        return {}
    params = {**scope.params(), "conversations": list(conversations)}
    members: dict[str, list[tuple[int, int]]] = {}
    for conversation, seq, text_id in conn.execute(_members_statement(scope.shape), params).all():
        members.setdefault(conversation, []).append((seq, text_id))
    return members


@lru_cache(maxsize=64)
def _members_statement(shape: tuple[bool, tuple[tuple[str, bool], ...]]) -> Any:
    return (
        select(_M.c.conversation_id, _M.c.seq, _M.c.text_id)
        .where(
            _M.c.conversation_id.in_(bindparam("conversations", expanding=True)),
            *_scope_conditions(shape),
        )
        .order_by(_M.c.seq)
    )


# ---------------------------------------------------------------------------------- documents
def rank_documents(docs: Mapping[str, str], query: str) -> list[tuple[str, float]]:
    """``(key, BM25 score)`` of the documents (key -> text) that share a stemmed word with
    ``query``, best first (ties by key), ranked by SQLite FTS5 as memories are.

    Example:
        >>> docs = {"a": "Alice joined Acme", "b": "lunch", "c": "Bob met Alice at Acme"}
        >>> [key for key, _ in rank_documents(docs, "Where did Alice join Acme?")]
        ['a', 'c']
    """
    from .engine import SQLITE_MODULE
    from .query_text import fts_query_from_text

    fts = fts_query_from_text(query)
    if fts is None or not docs:
        return []
    conn = SQLITE_MODULE.connect(":memory:")
    try:
        conn.execute(
            "CREATE VIRTUAL TABLE docs USING fts5(key UNINDEXED, body, "
            "tokenize='porter unicode61 remove_diacritics 2')"
        )
        conn.executemany("INSERT INTO docs (key, body) VALUES (?, ?)", docs.items())
        rows = conn.execute(
            "SELECT key, bm25(docs) FROM docs WHERE docs MATCH ? ORDER BY bm25(docs), key",
            (fts,),
        ).fetchall()
    finally:
        conn.close()
    return [(str(key), round(-float(rank), 6)) for key, rank in rows]
