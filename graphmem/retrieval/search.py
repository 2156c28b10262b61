"""Graph-expanded search: lexical hits from the full-text index fused with graph hits.

1. Lexical candidates: the database's full-text index (SQLite FTS5, BM25, porter stemming).
2. Graph candidates: the entities the query names (NER, plus names the memory already knows)
   and their neighbourhood up to two hops (weight decays per hop and grows with the relation's
   support); memories mentioning those entities score by the entities' rarity.
3. Semantic candidates (on by default; ``GRAPHMEM_SEMANTIC=off`` turns them off): the
   query's meaning (its words without the names it holds) compared with the stored vectors of
   the newest ``semantic_scope`` memories of the searched scope, whatever the query names;
   the most similar join the candidates, scored between the pool's median (0) and best (1).
   The memories of the entities the query names, or that they said, are scored on their own
   scale too (a boost). Every other candidate is scored by similarity as well, so meaning
   is a boost, never a filter. Meaning weighs less on an item the stronger its words and
   graph score (``semantic_gate``), and, when the query names an entity the graph found,
   not at all beyond that entity's reach (``semantic_outside``: what the graph, the
   entity's own words and their neighbours found).
4. A weighted sum of the normalised scores, with importance and recency as minor terms (every
   weight in one :class:`~graphmem.retrieval.weights.RankingWeights`, passed per call). Only
   items with a lexical, graph or semantic score are returned; a memory of fewer than
   ``semantic_min_pool`` memories has no semantic candidates, so there a question no word
   matches finds nothing.

Example:
    >>> from graphmem import LongTermMemory
    >>> memory = LongTermMemory()
    >>> _ = memory.save("Alice Johnson joined Acme Corp as CTO.")
    >>> _ = memory.save("Lunch was good.")
    >>> [hit.explanation.matched_terms for hit in memory.search_hits("Where does Alice work?")]
    [['alice']]
"""

from __future__ import annotations

import heapq
import unicodedata
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..extract.embeddings import get_embedder
from ..extract.query import named_keys
from ..items import MemoryItem, StoredMemory, stored_time, utc_now
from ..store import memory_rows, ranking_rows, text_rows
from ..store.query_text import query_terms
from ..store.vector_windows import semantic_pools
from ..store.vectors import row_dot, vector_matrix
from .answer_types import expected_answer_labels
from .graph_scores import expand, graph_scores, path_to
from .weights import DEFAULT_WEIGHTS, RankingWeights, resolved

if TYPE_CHECKING:
    import numpy as np

    from ..graph.knowledge_graph import KnowledgeGraph
    from ..space import MemorySpace, Work

__all__ = [
    "DEFAULT_WEIGHTS",
    "FUSION_WEIGHTS",
    "Explanation",
    "Hit",
    "QueryAnalysis",
    "Ranking",
    "RankingWeights",
    "analyse_query",
    "rank",
]

#: The fused score's weights by term name, read-only: those of :data:`DEFAULT_WEIGHTS` (a
#: ranking's weights are a :class:`~graphmem.retrieval.weights.RankingWeights` passed per call).
FUSION_WEIGHTS: Mapping[str, float] = MappingProxyType(DEFAULT_WEIGHTS.fusion())
#: Words of a memory that an explanation names as "similar to" the query (per-word models).
SIMILAR_WORDS = 3
#: The best lexical hits whose share of the query's words tells how well words answer it.
EVIDENCE_HITS = 3


@dataclass
class Explanation:
    """Why an item was returned."""

    matched_terms: list[str] = field(default_factory=list)
    entity_path: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    lexical: float = 0.0
    graph: float = 0.0
    adjacency: float = 0.0
    semantic: float = 0.0
    #: The memory's words nearest in meaning to the query (when the semantic term counted).
    similar_to: list[str] = field(default_factory=list)


@dataclass
class Hit:
    """One search result: the item, its score and the explanation (and where it is stored:
    its tier's namespace and its text)."""

    seq: int
    item: MemoryItem
    score: float
    explanation: Explanation = field(default_factory=Explanation)
    namespace: str = ""
    text_id: int = 0
    view: str = "full"
    #: The save that wrote it (``CortexMemory.delete`` and ``update`` take it).
    result_id: str = ""

    @classmethod
    def listed(cls, row: StoredMemory, item: MemoryItem) -> Hit:
        """An item listed without a query (score 1)."""
        return cls(
            row.seq,
            item,
            1.0,
            namespace=row.namespace,
            text_id=row.text_id,
            view=row.view,
            result_id=row.result_id or item.memory_id,
        )


@dataclass
class QueryAnalysis:
    """A query analysed once: its words, the entities it names and those reached from them
    in the graph, and the entity labels an answer usually holds. Every ranking of the same
    query (all the tiers a context shows) reuses it.

    Example:
        >>> from graphmem import EntityMemory
        >>> memory = EntityMemory()
        >>> _ = memory.save("Alice Johnson joined Acme Corp in Berlin.")
        >>> query = analyse_query(memory.space, "", "Where does Alice work?")
        >>> query.terms, query.named
        (['alice', 'work'], ['alice johnson'])
    """

    text: str
    terms: list[str]
    #: Entity keys the query names, in text order.
    named: list[str]
    #: Entity key -> weight, for the named entities and those reached from them.
    weights: dict[str, float]
    #: Entity key -> the key it was reached from (None for named ones).
    parents: dict[str, str | None]
    expected_labels: frozenset[str]
    tenant: str
    #: The embedding of what the query asks (None: no model, or it only names entities).
    vector: np.ndarray | None = None


def analyse_query(
    space: MemorySpace, tenant: str, query: str, weights: RankingWeights | None = None
) -> QueryAnalysis:
    """Analyse ``query`` against ``tenant``'s graph (call inside a database read, so the view
    and its matcher are those of one snapshot); ``weights`` (None: :data:`DEFAULT_WEIGHTS`)
    decide how far the graph is expanded."""
    weights = resolved(weights)
    index = space.entity_index
    kg = index.graph(tenant)
    named: list[str] = []
    if len(kg) and query.strip():
        named = named_keys(kg, index.known_names(tenant), query)
    entity_weights, parents = expand(kg, named, weights)
    embedder = get_embedder() if weights.meaning() else None
    meaning = _without_names(kg, named, query) if embedder is not None else ""
    return QueryAnalysis(
        text=query,
        terms=query_terms(query),
        named=named,
        weights=entity_weights,
        parents=parents,
        expected_labels=expected_answer_labels(query),
        tenant=tenant,
        vector=embedder.embed_query(meaning) if embedder is not None and meaning else None,
    )


def _without_names(kg: KnowledgeGraph, named: Sequence[str], query: str) -> str:
    """The query's words without those of the entities it names: what it asks of them (the
    names are the scope already; left in, they make a memory that names them look similar).
    Without a name, the query's words (its small words left out: they rank the notes of
    tests/data/paraphrases.json lower, 28 of 36 at rank 5 instead of 31)."""
    names = {word for key in named for word in query_terms(f"{key} {kg.name_of(key)}")}
    return " ".join(word for word in query_terms(query) if word not in names)


def rank(
    space: MemorySpace,
    namespaces: Sequence[str],
    query: str | QueryAnalysis,
    *,
    tenant: str | None = None,
    sql_filters: Mapping[str, Any] | None = None,
    predicate: Callable[[MemoryItem], bool] | None = None,
    limit: int = 10,
    heads: bool = False,
    weights: RankingWeights | None = None,
) -> list[Hit]:
    """Rank the items of ``namespaces`` for ``query``; best first, at most ``limit``.
    ``heads``: the tiers show their texts whole (the entity tier); ``weights``: the ranking
    (None: :data:`DEFAULT_WEIGHTS`)."""
    if limit <= 0:
        return []
    weights = resolved(weights)
    with space.reading() as tx:
        ranking = Ranking.of(
            tx.connection,
            space,
            namespaces,
            query,
            tenant=tenant,
            sql_filters=sql_filters,
            pool=weights.filtered_pool if predicate is not None else weights.search_pool(limit),
            heads=heads,
            weights=weights,
        )
        return ranking.take(tx, limit, predicate=predicate)


@dataclass
class Ranking:
    """Every candidate of one query over some tiers, best first: built once, then split into
    as many result lists as needed (:meth:`take`), e.g. the sections of a context."""

    space: MemorySpace
    query: QueryAnalysis
    order: list[int]
    scores: dict[int, _Score]
    weights: RankingWeights = DEFAULT_WEIGHTS

    @classmethod
    def of(
        cls,
        conn: Any,
        space: MemorySpace,
        namespaces: Sequence[str],
        query: str | QueryAnalysis,
        *,
        tenant: str | None = None,
        sql_filters: Mapping[str, Any] | None = None,
        pool: int | None = None,
        heads: bool = False,
        weights: RankingWeights | None = None,
    ) -> Ranking:
        """Gather and score the candidates: the ``pool`` best lexical hits (None:
        ``weights.pool_min``; the whole lexical window when a caller filters further) and the
        graph's candidates, by ``weights`` (None: :data:`DEFAULT_WEIGHTS`)."""
        weights = resolved(weights)
        pool = weights.pool_min if pool is None else pool
        graph_tenant = (
            tenant if tenant is not None else str((sql_filters or {}).get("user_id") or "")
        )
        if isinstance(query, str):
            query = analyse_query(space, graph_tenant, query, weights)
        kg = space.entity_index.graph(graph_tenant)
        scope = ranking_rows.Scope.of(namespaces, tenant, sql_filters, heads)
        lexical = dict(
            text_rows.search_text(
                conn,
                query.text,
                namespaces,
                tenant=tenant,
                sql_filters=sql_filters,
                limit=pool,
                heads=heads,
            )
        )
        graph = graph_scores(
            conn,
            kg,
            scope,
            query,
            ranking_rows.item_texts(conn, list(lexical)) if query.weights else {},
            weights,
        )
        semantic = _semantic_scores(conn, space, kg, scope, query, [*lexical, *graph], weights)
        if semantic:
            weights = weights.for_word_evidence(_word_evidence(conn, space, query, lexical))
        scores = _fuse(conn, scope, query, lexical, graph, semantic, weights)
        if semantic:
            _add_strengths(scores, weights)
        # A candidate no term counts for (meaning found it beyond the reach of the entity the
        # query names) is no answer: its priors alone would rank it.
        answers = [seq for seq in scores if scores[seq].counts(weights)]
        order = sorted(answers, key=lambda seq: (-scores[seq].total(weights), -seq))
        return cls(space, query, order, scores, weights)

    def take(
        self,
        tx: Work,
        limit: int,
        *,
        namespaces: Set[str] | None = None,
        predicate: Callable[[MemoryItem], bool] | None = None,
        explain: bool = True,
    ) -> list[Hit]:
        """The best ``limit`` hits (of ``namespaces`` when given, passing ``predicate``),
        with scores relative to the first and (unless ``explain`` is False: a caller that
        shows only the texts) explanations; read in ``tx``."""
        hits: list[Hit] = []
        order = (
            self.order
            if namespaces is None
            else [seq for seq in self.order if self.scores[seq].namespace in namespaces]
        )
        chunk = max(limit, 1)
        for start in range(0, len(order), chunk):
            if len(hits) >= limit:
                break
            batch = order[start : start + chunk]
            rows = memory_rows.fetch_rows(tx.connection, batch)
            for seq in batch:
                found = rows.get(seq)
                if found is None or (predicate is not None and not predicate(found[1])):
                    continue
                hit = Hit.listed(*found)
                hit.score = self.scores[seq].total(self.weights)
                hits.append(hit)
                if len(hits) >= limit:
                    break
        self._explain(hits, explain)
        return hits

    def _explain(self, hits: list[Hit], explain: bool) -> None:
        """Scores relative to the first hit; with ``explain``, why each hit was returned."""
        top = hits[0].score if hits and hits[0].score > 0 else 1.0
        for hit in hits:
            hit.score /= top
            hit.item.relevance_score = hit.score
        if not explain:
            return
        kg = self.space.entity_index.graph(self.query.tenant)
        w = self.weights
        similar = _similar_words(
            self.query,
            [hit.item.content for hit in hits if self.scores[hit.seq].counted_semantic(w) > 0],
        )
        for hit in hits:
            part = self.scores[hit.seq]
            semantic = part.counted_semantic(w)
            matched = _matched_terms(self.query.terms, hit.item.content) if part.lexical > 0 else []
            hit.explanation = Explanation(
                matched_terms=matched,
                entity_path=path_to(kg, self.query.parents, part.entity) if part.graph > 0 else [],
                sources=part.sources(w),
                lexical=part.lexical,
                graph=part.graph,
                adjacency=part.adjacency,
                semantic=semantic,
                similar_to=similar.get(hit.item.content, []) if semantic > 0 else [],
            )


@dataclass
class _Score:
    lexical: float = 0.0
    graph: float = 0.0
    adjacency: float = 0.0
    semantic: float = 0.0
    entity: str = ""
    prior: float = 0.0
    authored: bool = False
    typed: bool = False
    namespace: str = ""
    #: The score without meaning relative to the ranking's best (0 to 1).
    strength: float = 0.0
    #: Lent adjacency by a memory the graph found (a sentence of the entity's document).
    linked: bool = False
    #: The query names an entity the graph found, and this item is beyond its reach (neither
    #: found by the graph, nor said by the entity, nor next to a memory the graph found).
    outside: bool = False

    def total(self, w: RankingWeights) -> float:
        """The fused score by the weights ``w``."""
        return self.without_meaning(w) + self._boosted(self.meaning_weight(w) * self.semantic, w)

    def found(self) -> bool:
        """Whether words, the graph or adjacency found it (not meaning alone)."""
        return self.lexical > 0 or self.graph > 0 or self.adjacency > 0

    def counts(self, w: RankingWeights) -> bool:
        """Whether any term counts in its score by the weights ``w`` (else it is no answer)."""
        return self.found() or self.counted_semantic(w) > 0

    def meaning_weight(self, w: RankingWeights) -> float:
        """The weight of this item's similarity in its score (0: meaning adds nothing)."""
        weight = (w.semantic if self.found() else w.semantic_alone) * (
            1.0 - w.semantic_gate * self.strength
        )
        return weight * w.semantic_outside if self.outside else weight

    def counted_semantic(self, w: RankingWeights) -> float:
        """Its similarity where meaning counts in its score, else 0 (what explanations show)."""
        return self.semantic if self.meaning_weight(w) > 0 else 0.0

    def lending(self, w: RankingWeights) -> float:
        """How strong a lender of adjacency it is: its score, meaning counted by
        ``w.lend_by_meaning``."""
        plain = self.without_meaning(w)
        return plain + w.lend_by_meaning * (self.total(w) - plain)

    def without_meaning(self, w: RankingWeights) -> float:
        """The score from every term but the semantic one."""
        return (
            self._boosted(
                w.lexical * self.lexical + w.graph * self.graph + w.adjacency * self.adjacency,
                w,
            )
            + self.prior
        )

    def _boosted(self, relevance: float, w: RankingWeights) -> float:
        if self.authored:
            relevance *= 1.0 + w.author
        if self.typed:
            relevance *= 1.0 + w.answer_type
        return relevance

    def sources(self, w: RankingWeights) -> list[str]:
        """The terms that count in its score by the weights ``w``."""
        values = (self.lexical, self.graph, self.counted_semantic(w), self.adjacency)
        return [
            name
            for name, value in zip(
                ("lexical", "graph", "semantic", "adjacency"), values, strict=True
            )
            if value > 0
        ]


def _semantic_scores(
    conn: Any,
    space: MemorySpace,
    kg: KnowledgeGraph,
    scope: ranking_rows.Scope,
    query: QueryAnalysis,
    others: Sequence[int],
    w: RankingWeights,
) -> dict[int, float]:
    """seq -> semantic score in [0, 1]: where an item's similarity to the query lies between
    the median (0) and the best (1) of the newest ``w.semantic_scope`` memories of the scope.
    The ``w.semantic_candidates`` most similar of them are candidates, and so are those of the
    memories of the entities the query names (mentioning them, or said by them), each scored
    against their own median and best: the entity scope is a boost. Every other candidate
    (``others``) is scored too, so meaning is a boost, never a filter."""
    if query.vector is None:
        return {}
    import numpy as np  # only with embeddings: a start that searches by words loads none

    nodes = kg.nodes
    entity_ids = [
        int(nodes[key]["entity_id"])
        for key in query.named
        if key in nodes and nodes[key].get("entity_id") is not None
    ]
    pools = semantic_pools(
        space.database, conn, scope, entity_ids, query.named, w.semantic_scope, len(query.vector)
    )
    # A text's similarity is that of its last row read (a text's items hold one vector).
    texts: dict[int, float] = {}
    for pool in pools:
        texts.update(zip(pool.text_ids, row_dot(pool.matrix, query.vector).tolist(), strict=True))
    out: dict[int, float] = {}
    scale: tuple[float, float] | None = None
    for pool in pools:
        values = np.array([texts[text_id] for text_id in pool.text_ids], dtype=np.float64)
        if len(values) < w.semantic_min_pool:
            continue  # too few memories to tell what stands out from the rest
        best, floor = float(values.max()), float(np.median(values))
        if best <= floor:
            continue
        scale = scale or (floor, best)
        # The most similar items, newest first among equals (a text's items score alike).
        for i in np.argsort(-values, kind="stable")[: w.semantic_candidates].tolist():
            if values[i] > floor:
                value = (float(values[i]) - floor) / (best - floor)
                out[pool.seqs[i]] = max(out.get(pool.seqs[i], 0.0), value)
    if scale is None:
        return out
    floor, best = scale
    text_of = {seq: t for pool in pools for seq, t in zip(pool.seqs, pool.text_ids, strict=True)}
    wanted = set(others)
    rest = ranking_rows.item_vectors(conn, wanted - text_of.keys())
    similar = {**texts, **_similarities(rest, query.vector)}
    text_of.update((seq, text_id) for seq, text_id, _ in rest)
    for seq, text_id in text_of.items():
        if seq in wanted and seq not in out and similar[text_id] > floor:
            out[seq] = min(1.0, (similar[text_id] - floor) / (best - floor))
    return out


def _word_evidence(
    conn: Any, space: MemorySpace, query: QueryAnalysis, lexical: Mapping[int, float]
) -> float:
    """How well words alone answer the query: the largest share of its terms that one of its
    :data:`EVIDENCE_HITS` best lexical hits holds (0 to 1). The better words answer, the less
    a memory only meaning finds may rise above what they found."""
    if not query.terms or not lexical:
        return 0.0
    best = heapq.nlargest(EVIDENCE_HITS, lexical, key=lambda seq: lexical[seq])
    rows = memory_rows.fetch_rows(conn, best)
    return (
        max(
            (len(_matched_terms(query.terms, item.content)) / len(query.terms))
            for _, item in rows.values()
        )
        if rows
        else 0.0
    )


def _similarities(rows: Sequence[tuple[int, int, str]], vector: np.ndarray) -> dict[int, float]:
    """Text id -> the similarity of its stored vector to ``vector`` (each text read once)."""
    stored = {text_id: value for _, text_id, value in rows}
    if not stored:
        return {}
    similarity = row_dot(vector_matrix(list(stored.values()), len(vector)), vector)
    return dict(zip(stored, similarity.tolist(), strict=True))


def _similar_words(query: QueryAnalysis, contents: Sequence[str]) -> dict[str, list[str]]:
    """Content -> its :data:`SIMILAR_WORDS` words (none of the query's own) nearest in meaning
    to the query, by a per-word model, in one batch (none from a contextual model: it would
    run once for every word of every hit)."""
    embedder = get_embedder()
    if embedder is None or query.vector is None or not embedder.per_word or not contents:
        return {}
    asked = {_stem(term) for term in query.terms}
    words_of = {
        content: [w for w in dict.fromkeys(query_terms(content)) if _stem(w) not in asked]
        for content in contents
    }
    vocabulary = sorted({w for words in words_of.values() for w in words})
    if not vocabulary:
        return {}
    similarity = dict(zip(vocabulary, embedder.embed(vocabulary) @ query.vector, strict=True))
    return {
        content: [w for w in sorted(words, key=lambda w: -similarity[w])[:SIMILAR_WORDS]]
        for content, words in words_of.items()
    }


def _fuse(
    conn: Any,
    scope: ranking_rows.Scope,
    query: QueryAnalysis,
    lexical: Mapping[int, float],
    graph: Mapping[int, tuple[float, str]],
    semantic: Mapping[int, float],
    w: RankingWeights,
) -> dict[int, _Score]:
    """Lexical scores relative to the best hit, graph scores by entity rarity (absolute),
    semantic similarity, conversational adjacency, and the minor priors."""
    top_lex = max(lexical.values(), default=0.0) or 1.0
    scores: dict[int, _Score] = {}
    for seq, value in lexical.items():
        scores[seq] = _Score(lexical=value / top_lex)
    for seq, (value, key) in graph.items():
        entry = scores.setdefault(seq, _Score())
        entry.graph = value
        entry.entity = key
    for seq, value in semantic.items():
        scores.setdefault(seq, _Score()).semantic = value
    facts = ranking_rows.candidate_facts(conn, scores)
    _add_adjacency(conn, scope, scores, facts, w)
    facts.update(ranking_rows.candidate_facts(conn, [s for s in scores if s not in facts]))
    named = {key for key, via in query.parents.items() if via is None}
    _add_priors(scores, facts, named, query.expected_labels, w)
    return scores


def _add_strengths(scores: Mapping[int, _Score], w: RankingWeights) -> None:
    """Each candidate's score without meaning relative to the best (its shield against
    meaning), and whether it lies beyond the reach of the entities the query names."""
    plain = {seq: score.without_meaning(w) for seq, score in scores.items()}
    top = max(plain.values(), default=0.0) or 1.0
    anchored = any(score.graph > 0 for score in scores.values())
    for seq, score in scores.items():
        score.strength = min(1.0, max(0.0, plain[seq] / top))
        score.outside = anchored and not (score.graph > 0 or score.authored or score.linked)


def _add_adjacency(
    conn: Any,
    scope: ranking_rows.Scope,
    scores: dict[int, _Score],
    facts: Mapping[int, ranking_rows.CandidateFacts],
    w: RankingWeights,
) -> None:
    """A strong hit lends score to its neighbours in the same conversation (the reply, the
    sentence before): answers often sit next to the words that match. The lenders are the
    strongest by their score, meaning counted ``w.lend_by_meaning`` (none by default: with
    meaning asked of every query, lenders it chose cost LoCoMo single-hop 1 point), and lend
    only their lexical and graph score."""
    strongest = sorted(scores, key=lambda s: -scores[s].lending(w))[: w.adjacency_sources]
    owner = {seq: facts[seq].conversation_id for seq in strongest if seq in facts}
    conversations = sorted({c for c in owner.values() if c is not None})
    members = ranking_rows.conversation_members(conn, conversations, scope)
    # A conversation is a line of texts (a turn kept by two tiers is one place in it); what a
    # text is lent goes to each of its items.
    lines: dict[str, list[int]] = {}
    items_of: dict[int, list[int]] = {}
    text_of: dict[int, int] = {}
    for conversation, rows in members.items():
        line = lines.setdefault(conversation, [])
        for seq, text_id in rows:
            text_of[seq] = text_id
            if text_id not in items_of:
                line.append(text_id)
            items_of.setdefault(text_id, []).append(seq)
    lent: dict[int, float] = {}
    linked: set[int] = set()

    def lend(text_id: int, value: float, by_graph: bool) -> None:
        for item in items_of[text_id]:
            lent[item] = max(lent.get(item, 0.0), value)
            if by_graph:
                linked.add(item)

    places = {c: {t: i for i, t in enumerate(line)} for c, line in lines.items()}
    for seq in strongest:
        owned = owner.get(seq)
        if owned is None or owned not in lines or seq not in text_of:
            continue
        line = lines[owned]
        position = places[owned][text_of[seq]]
        base = scores[seq].lexical * w.lexical + scores[seq].graph * w.graph
        by_graph = scores[seq].graph > 0
        if by_graph and len(line) <= w.conversation_share_max:
            # A memory naming the query's entity vouches for its whole (document-sized)
            # conversation: the pronoun sentences of a document are about the same entity.
            for neighbour in line:
                lend(neighbour, base * w.conversation_share, by_graph)
        for distance, decay in enumerate(w.adjacency_decay, start=1):
            for neighbour_at in (position - distance, position + distance):
                if 0 <= neighbour_at < len(line):
                    lend(line[neighbour_at], base * decay, by_graph)
    for seq, value in lent.items():
        scores.setdefault(seq, _Score()).adjacency = value
    for seq in linked:
        scores[seq].linked = True


def _add_priors(
    scores: dict[int, _Score],
    facts: Mapping[int, ranking_rows.CandidateFacts],
    named: set[str],
    expected: frozenset[str],
    w: RankingWeights,
) -> None:
    """Author links (the query names who said it), then importance and recency as minor terms."""
    now = utc_now()
    for seq, score in scores.items():
        fact = facts.get(seq)
        if fact is None:
            continue
        score.namespace = fact.namespace
        score.authored = fact.author_key is not None and fact.author_key in named
        labels = fact.entity_labels
        score.typed = bool(expected and labels and expected & set(labels.split(",")))
        when = stored_time(fact.created_at)
        age_days = max(0.0, (now - when).total_seconds() / 86400)
        recency = 1.0 / (1.0 + age_days / w.recency_days)
        value = w.default_importance if fact.importance is None else float(fact.importance)
        score.prior = w.importance * value + w.recency * recency


def _matched_terms(terms: Sequence[str], content: str) -> list[str]:
    """The query terms whose Porter stem occurs in ``content`` (as FTS5's porter tokenizer
    matched them)."""
    stems = {_stem(word) for word in query_terms(content)}
    return [t for t in terms if _stem(t) in stems]


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """Porter stem of ``word`` with diacritics removed, as the index folds them ("café" ->
    "cafe")."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
    return str(_stemmer().stemWord(folded))


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    """The Porter algorithm of SQLite's FTS5 "porter" tokenizer, so explanations match what
    matched (loaded by the first explanation: the package brings every language's)."""
    import snowballstemmer

    return snowballstemmer.stemmer("porter")
