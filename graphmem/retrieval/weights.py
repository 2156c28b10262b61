"""Every number of the ranking formula, in one frozen object passed per call.

A search, a context and the context stack's re-rank all read their weights, candidate pools
and decays from a :class:`RankingWeights`; :data:`DEFAULT_WEIGHTS` is graphmem's ranking
(one ranking serves every workload: docs/benchmarks.md). To try another ranking, pass a
changed copy; nothing global changes.

Example:
    >>> from dataclasses import replace
    >>> lexical_only = replace(DEFAULT_WEIGHTS, graph=0.0, adjacency=0.0, author=0.0)
    >>> lexical_only.lexical, lexical_only.graph, DEFAULT_WEIGHTS.graph
    (1.0, 0.0, 0.6)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = ["DEFAULT_WEIGHTS", "RankingWeights", "resolved"]


@dataclass(frozen=True)
class RankingWeights:
    """The weights of the fused score and the sizes that bound its candidates.

    Example:
        >>> DEFAULT_WEIGHTS.fusion()["answer_type"]
        0.15
    """

    # -- the fused score: relevance terms (lexical, graph, adjacency, semantic), each
    # boosted by author links and answer types, plus importance and recency as minor priors.
    lexical: float = 1.0
    graph: float = 0.6
    adjacency: float = 0.7
    author: float = 0.5
    #: Meaning's weight for a candidate that words or the graph found too, and for one that
    #: only meaning found: these when one of the query's best lexical hits holds all of its
    #: words, moving to the ``_weak`` ones as that share falls to none (the less the words
    #: answer, the more meaning may: :meth:`for_word_evidence`).
    #: Chosen on the dev data (bench/semantic_sweep.py, issue 38) with ``semantic_gate`` and
    #: ``semantic_outside``: 0.5 throughout, shielded by half an item's strength and kept to
    #: the named entities' reach, ranked LoCoMo no lower than off in every category and
    #: Re-DocRED within noise of it (0.3 unshielded and everywhere: Re-DocRED R@10 -2.1).
    semantic: float = 0.5
    semantic_alone: float = 0.5
    semantic_weak: float = 0.5
    semantic_alone_weak: float = 0.5
    #: How much an item's own evidence shields it from meaning: meaning's weight on an item is
    #: times ``1 - semantic_gate * strength``, its strength being its score without meaning
    #: relative to the ranking's best such score (0: meaning weighs alike on every item; the
    #: strongest hits of words and the graph move least).
    semantic_gate: float = 0.5
    #: Meaning's weight, times this, on an item beyond the reach of the entities a query
    #: names (when the graph found any of them): neither found by the graph, nor said by one
    #: of them, nor next to a memory the graph found. 0: meaning reorders only what is about
    #: them (elsewhere it lifted other documents' sentences about "a country" over the named
    #: one's pronoun sentences: Re-DocRED).
    semantic_outside: float = 0.0
    answer_type: float = 0.15
    importance: float = 0.05
    recency: float = 0.05
    #: The importance of an item that has none.
    default_importance: float = 0.5
    #: Recency halves after this many days (``1 / (1 + age / recency_days)``).
    recency_days: float = 30.0

    # -- graph candidates
    #: Weight of an entity reached after 0, 1 and 2 hops from an entity the query names...
    hop_decay: tuple[float, float, float] = (1.0, 0.5, 0.2)
    #: ... times ``min(1, support_base + support_step * support)`` of the relation reaching it.
    support_base: float = 0.5
    support_step: float = 0.1
    #: The query's strongest entities kept (named ones first); fewer, stronger entities ranked
    #: better than 50 per hop on both benchmarks.
    graph_entities: int = 10
    #: Second-hop expansion starts from this many of the strongest first-hop entities.
    hop2_frontier: int = 10
    #: Of each entity, its newest ``graph_window`` times its weight and rarity texts (at least
    #: ``graph_min_window``) besides the lexical candidates, so that a query's cost does not
    #: grow with the store...
    graph_window: int = 300
    graph_min_window: int = 10
    #: ... looked for in its newest ``graph_scan`` times that many mentions (so a search of one
    #: agent's memories costs no more than one of all of them).
    graph_scan: int = 4
    #: Items that only the graph brings in are scored further (priors, adjacency) for this many
    #: of the strongest (the lexical candidates always): the rest cannot reach a context.
    graph_candidates: int = 100

    # -- conversational adjacency
    #: How many of the strongest hits lend score to their conversational neighbours, and how
    #: much a neighbour at distance 1, 2... receives (times the lender's score).
    adjacency_sources: int = 20
    #: The lenders are the strongest by every term, meaning counted this much (0: not at
    #: all; with meaning for every query, lenders chosen without it kept LoCoMo single-hop at
    #: off's level, 1.0 lower with it: docs/benchmarks.md, issue 38).
    lend_by_meaning: float = 0.0
    adjacency_decay: tuple[float, ...] = (1.0, 0.7)
    #: A hit linked to a query entity lends this share to every memory of its conversation,
    #: when the conversation is document-sized (at most ``conversation_share_max`` texts; in a
    #: long one it would be a uniform shift).
    conversation_share: float = 0.7
    conversation_share_max: int = 64

    # -- semantic candidates: of the newest ``semantic_scope`` memories of the searched scope,
    # and of those that mention or were said by an entity the query names, the
    # ``semantic_candidates`` most similar to the query.
    semantic_scope: int = 2000
    semantic_candidates: int = 50
    #: A pool of fewer memories brings no candidates: a memory is scored between the pool's
    #: median and best similarity, which a handful of memories does not tell (WordLlama finds
    #: a "best" memory for any question, one memory holds the answer to or not).
    semantic_min_pool: int = 20

    # -- lexical candidate pools
    #: A search of ``limit`` hits takes ``max(limit * pool_per_hit, pool_min)`` lexical hits...
    pool_per_hit: int = 10
    pool_min: int = 100
    #: ... a context showing ``n`` items ``max(n * context_pool_per_item, pool_min)``...
    context_pool_per_item: int = 5
    #: ... and a search whose caller filters its hits further (a callable filter) this many:
    #: enough for the filter to leave ``limit`` hits in all but pathological cases.
    filtered_pool: int = 5000

    # -- the context stack's re-rank (a contextual memory with a current context): a hit
    # keeps ``1 - context_share`` of its score and gains ``context_share`` times its match:
    # ``context_type`` when its context has the current one's type, plus ``context_words``
    # times the share of their words in common.
    context_share: float = 0.3
    context_type: float = 0.5
    context_words: float = 0.5

    def fusion(self) -> dict[str, float]:
        """The weights of the fused score by term name (as ``FUSION_WEIGHTS`` lists them)."""
        return {
            "lexical": self.lexical,
            "graph": self.graph,
            "adjacency": self.adjacency,
            "author": self.author,
            "semantic": self.semantic,
            "answer_type": self.answer_type,
            "importance": self.importance,
            "recency": self.recency,
        }

    def meaning(self) -> bool:
        """Whether meaning counts at all (a ranking without it embeds no query)."""
        return (
            max(self.semantic, self.semantic_alone, self.semantic_weak, self.semantic_alone_weak)
            > 0
        )

    def for_word_evidence(self, share: float) -> RankingWeights:
        """These weights for a query whose best lexical hit holds ``share`` of its words.

        Example:
            >>> w = replace(DEFAULT_WEIGHTS, semantic=0.2, semantic_weak=0.6)
            >>> round(w.for_word_evidence(0.5).semantic, 2), w.for_word_evidence(1.0).semantic
            (0.4, 0.2)
        """
        weak = 1.0 - min(1.0, max(0.0, share))
        return replace(
            self,
            semantic=self.semantic + (self.semantic_weak - self.semantic) * weak,
            semantic_alone=self.semantic_alone
            + (self.semantic_alone_weak - self.semantic_alone) * weak,
        )

    def search_pool(self, limit: int) -> int:
        """Lexical candidates a search of ``limit`` hits takes.

        Example:
            >>> DEFAULT_WEIGHTS.search_pool(5), DEFAULT_WEIGHTS.search_pool(30)
            (100, 300)
        """
        return max(limit * self.pool_per_hit, self.pool_min)

    def context_pool(self, shown: int) -> int:
        """Lexical candidates a ranking for a context showing ``shown`` items takes."""
        return max(shown * self.context_pool_per_item, self.pool_min)


#: graphmem's ranking.
DEFAULT_WEIGHTS = RankingWeights()


def resolved(weights: RankingWeights | None) -> RankingWeights:
    """``weights``, or :data:`DEFAULT_WEIGHTS` when None (read at call time: a test may swap
    the defaults with ``monkeypatch``).

    Example:
        >>> resolved(None) is DEFAULT_WEIGHTS
        True
    """
    return DEFAULT_WEIGHTS if weights is None else weights
