"""Graph-expanded search: lexical hits from the full-text index fused with graph hits.

1. Lexical candidates: the database's full-text index (SQLite FTS5, BM25, porter stemming).
2. Graph candidates: the entities the query names (NER, plus names the memory already knows)
   and their neighbourhood up to two hops (weight decays per hop and grows with the relation's
   support); memories mentioning those entities score by the entities' rarity.
3. A weighted sum of the normalised scores, with importance and recency as minor terms. Only
   items with a lexical or a graph score are returned: search never pads with non-matches.

Example:
    >>> from graphmem import LongTermMemory
    >>> memory = LongTermMemory()
    >>> _ = memory.save("Alice Johnson joined Acme Corp as CTO.")
    >>> _ = memory.save("Lunch was good.")
    >>> [hit.explanation.matched_terms for hit in memory.search_hits("Where does Alice work?")]
    [['alice']]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from ..extract.entities import find_mentions
from ..items import MemoryItem
from ..store import schema
from ..store.database import query_terms

if TYPE_CHECKING:
    from ..graph.knowledge_graph import KnowledgeGraph
    from ..storage import SQLiteStorage

__all__ = ["FUSION_WEIGHTS", "Explanation", "Hit", "rank"]

#: Weights of the fused score. One ranking serves every workload.
FUSION_WEIGHTS = {"lexical": 1.0, "graph": 0.6, "importance": 0.05, "recency": 0.05}
#: Weight of an entity reached after 0, 1 and 2 hops from an entity the query names.
HOP_DECAY = (1.0, 0.5, 0.2)
_MAX_EXPANSION = 50


@dataclass
class Explanation:
    """Why an item was returned."""

    matched_terms: list[str] = field(default_factory=list)
    entity_path: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    lexical: float = 0.0
    graph: float = 0.0


@dataclass
class Hit:
    """One search result: the item, its score and the explanation."""

    seq: int
    item: MemoryItem
    score: float
    explanation: Explanation = field(default_factory=Explanation)


def rank(
    space: SQLiteStorage,
    namespaces: Sequence[str],
    query: str,
    *,
    tenant: str | None = None,
    sql_filters: Mapping[str, Any] | None = None,
    predicate: Callable[[MemoryItem], bool] | None = None,
    limit: int = 10,
) -> list[Hit]:
    """Rank the items of ``namespaces`` for ``query``; best first, at most ``limit``."""
    db = space.database
    graph_tenant = tenant if tenant is not None else str((sql_filters or {}).get("user_id") or "")
    entity_weights, paths = _query_entities(space, graph_tenant, query)
    pool = max(limit * 10, 200)
    while True:
        with db.read() as conn:
            lexical = dict(
                db.search_text(
                    conn, query, namespaces, tenant=tenant, sql_filters=sql_filters, limit=pool
                )
            )
            graph = _graph_scores(
                conn, space, namespaces, tenant, sql_filters, entity_weights, paths
            )
            seqs = list(dict.fromkeys([*lexical, *graph]))
            items = db.fetch(conn, seqs)
        hits = _fuse(items, lexical, graph, paths, query)
        if predicate is not None:
            hits = [h for h in hits if predicate(h.item)]
        if len(hits) >= limit or len(lexical) < pool:
            break
        pool *= 4
    for hit in hits[:limit]:
        hit.item.relevance_score = hit.score
    return hits[:limit]


def _query_entities(
    space: SQLiteStorage, tenant: str, query: str
) -> tuple[dict[str, float], dict[str, list[str]]]:
    """Entity keys reached from the query -> weight, and the path that reached each."""
    index = space.entity_index
    kg: KnowledgeGraph = index.graph(tenant)
    if len(kg) == 0 or not query.strip():
        return {}, {}
    doc = index.analyzer.analyse([query])[0]
    state = index._tenants.get(tenant)
    matcher = state.matcher if state is not None else None
    starts: list[str] = []
    for mention in find_mentions(doc, matcher):
        key = kg.resolve(mention.surface)
        if key is not None and key not in starts:
            starts.append(key)
    weights: dict[str, float] = {}
    paths: dict[str, list[str]] = {}
    g = kg.graph
    for start in starts:
        weights[start] = max(weights.get(start, 0.0), HOP_DECAY[0])
        paths.setdefault(start, [kg.name_of(start)])
        frontier = [start]
        for hop in (1, 2):
            scored: dict[str, float] = {}
            for node in frontier:
                edges = [(v, d) for _, v, d in g.out_edges(node, data=True)]
                edges += [(u, d) for u, _, d in g.in_edges(node, data=True)]
                for nbr, data in edges:
                    if nbr == node:
                        continue
                    strength = HOP_DECAY[hop] * min(1.0, 0.5 + 0.1 * float(data.get("support", 1)))
                    if strength > scored.get(nbr, 0.0):
                        scored[nbr] = strength
                        if nbr not in paths:
                            paths[nbr] = [*paths[node], kg.name_of(nbr)]
            best = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))[:_MAX_EXPANSION]
            for nbr, strength in best:
                if strength > weights.get(nbr, 0.0):
                    weights[nbr] = strength
            frontier = [n for n, _ in best]
    return weights, paths


def _graph_scores(
    conn: Any,
    space: SQLiteStorage,
    namespaces: Sequence[str],
    tenant: str | None,
    sql_filters: Mapping[str, Any] | None,
    weights: Mapping[str, float],
    paths: dict[str, list[str]],
) -> dict[int, tuple[float, str]]:
    """seq -> (graph score, the entity key that contributed most)."""
    if not weights:
        return {}
    m, e, mem = schema.mentions, schema.entities, schema.memories
    total = max(1, space.database.count(conn, namespaces, tenant))
    stmt = (
        select(mem.c.seq, e.c.key)
        .join(m, m.c.memory_seq == mem.c.seq)
        .join(e, e.c.id == m.c.entity_id)
        .where(e.c.key.in_(list(weights)), mem.c.namespace.in_(list(namespaces)))
    )
    if tenant is not None:
        stmt = stmt.where(mem.c.tenant == tenant)
    for key, value in (sql_filters or {}).items():
        stmt = stmt.where(mem.c[key].is_(None) if value is None else mem.c[key] == value)
    rows = conn.execute(stmt).all()
    pairs = set(rows)
    df: dict[str, int] = {}
    for _, key in pairs:
        df[key] = df.get(key, 0) + 1
    contributions: dict[int, list[tuple[float, str]]] = {}
    for seq, key in pairs:
        contributions.setdefault(seq, []).append(
            (weights[key] * math.log(1 + total / df[key]), key)
        )
    return {seq: (sum(c for c, _ in cs), max(cs)[1]) for seq, cs in contributions.items()}


def _fuse(
    items: Mapping[int, MemoryItem],
    lexical: Mapping[int, float],
    graph: Mapping[int, tuple[float, str]],
    paths: Mapping[str, list[str]],
    query: str,
) -> list[Hit]:
    top_lex = max(lexical.values(), default=0.0) or 1.0
    top_graph = max((g for g, _ in graph.values()), default=0.0) or 1.0
    terms = query_terms(query)
    now = datetime.now()
    hits: list[Hit] = []
    for seq, item in items.items():
        lex = lexical.get(seq, 0.0) / top_lex
        g, key = graph.get(seq, (0.0, ""))
        g /= top_graph
        importance = item.metadata.get("importance", 0.5)
        importance = float(importance) if isinstance(importance, int | float) else 0.5
        age_days = max(0.0, (now - item.timestamp.replace(tzinfo=None)).total_seconds() / 86400)
        recency = 1.0 / (1.0 + age_days / 30.0)
        score = (
            FUSION_WEIGHTS["lexical"] * lex
            + FUSION_WEIGHTS["graph"] * g
            + FUSION_WEIGHTS["importance"] * importance
            + FUSION_WEIGHTS["recency"] * recency
        )
        sources = [s for s, v in (("lexical", lex), ("graph", g)) if v > 0]
        explanation = Explanation(
            matched_terms=_matched_terms(terms, item.content) if lex > 0 else [],
            entity_path=list(paths.get(key, [])) if g > 0 else [],
            sources=sources,
            lexical=lex,
            graph=g,
        )
        hits.append(Hit(seq, item, score, explanation))
    top = max((h.score for h in hits), default=1.0) or 1.0
    for hit in hits:
        hit.score = hit.score / top
    hits.sort(key=lambda h: (-h.score, -h.seq))
    return hits


def _matched_terms(terms: Sequence[str], content: str) -> list[str]:
    words = set(query_terms(content)) | {w[:5] for w in query_terms(content)}
    return [t for t in terms if t in words or t[:5] in words]
