"""The graph's part of a ranking: the entities a query reaches (:func:`expand`) and what they
score the items that show them (:func:`graph_scores`), bounded at any store size.

Example:
    >>> from graphmem.graph.knowledge_graph import KnowledgeGraph
    >>> kg = KnowledgeGraph()
    >>> kg.add_entity("ann", name="Ann", label="PERSON")
    >>> kg.texts = 10
    >>> round(rarity(kg, ["ann"])["ann"], 2)
    1.0
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..store import ranking_rows
from .weights import RankingWeights

if TYPE_CHECKING:
    from ..graph.knowledge_graph import KnowledgeGraph
    from .search import QueryAnalysis

__all__ = ["EntityScoring", "expand", "graph_scores", "path_to", "rarity"]


def expand(
    kg: KnowledgeGraph, starts: Sequence[str], w: RankingWeights
) -> tuple[dict[str, float], dict[str, str | None]]:
    """The ``w.graph_entities`` strongest entity keys reached from ``starts`` (the keys a
    query names) -> weight, and the entity each was reached from (None for the named ones;
    fewer, stronger entities ranked better than 50 per hop on both benchmarks:
    docs/benchmarks.md)."""
    weights: dict[str, float] = {}
    parent: dict[str, str | None] = {}
    for start in starts:
        weights[start] = w.hop_decay[0]
        parent[start] = None
    frontier = list(starts)
    for hop in (1, 2):
        room = w.graph_entities - len(weights)
        if room <= 0:
            break  # a further hop weighs less than every entity kept so far: none would be used
        # The frontier's strongest neighbours (ties by name), only as many as there is room
        # for, even around a hub.
        candidates: dict[str, tuple[int, str]] = {}
        for node in frontier:
            # Enough of each node's strongest neighbours to fill the room past those known.
            for support, nbr in kg.strongest_neighbours(node, room + len(weights)):
                best = candidates.get(nbr)
                if nbr not in weights and (best is None or (-support, node) < (-best[0], best[1])):
                    candidates[nbr] = (support, node)
        reached = heapq.nsmallest(room, candidates, key=lambda n: (-candidates[n][0], n))
        for nbr in reached:
            support, via = candidates[nbr]
            weights[nbr] = w.hop_decay[hop] * min(1.0, w.support_base + w.support_step * support)
            parent[nbr] = via
        frontier = reached[: w.hop2_frontier]
    strongest = sorted(weights, key=lambda key: (-weights[key], key))[: w.graph_entities]
    return {key: weights[key] for key in strongest}, {key: parent[key] for key in strongest}


def path_to(kg: KnowledgeGraph, parent: Mapping[str, str | None], key: str) -> list[str]:
    names: list[str] = []
    node: str | None = key
    while node is not None and len(names) < 4:
        names.append(kg.name_of(node))
        node = parent.get(node)
    return names[::-1]


def graph_scores(
    conn: Any,
    kg: KnowledgeGraph,
    scope: ranking_rows.Scope,
    query: QueryAnalysis,
    lexical_items: Mapping[int, tuple[int, str]],
    w: RankingWeights,
) -> dict[int, tuple[float, str]]:
    """seq -> (graph score, the entity key that contributed most), for the
    ``w.graph_candidates`` best items only the graph brings in and every lexical candidate
    that has one.

    Every lexical candidate is checked against the query's entities; new candidates are, of
    each entity, the items showing its ``w.graph_window`` newest texts: bounded work at any
    store size.

    In a memory that also names the entity it was reached from, an entity counts only as much
    as that one's mention there tells (its rarity): their co-occurrence is what linked them.
    Beside a speaker named in most memories it adds almost nothing, so words the small model
    calls names beside a speaker ("Glad", "Kinda") no longer lift the speaker's own turns;
    beside a rare name it adds nearly its full weight (docs/benchmarks.md).
    """
    lexical = {seq: text_id for seq, (text_id, _) in lexical_items.items()}
    nodes = kg.nodes
    by_id = {nodes[key]["entity_id"]: key for key in query.weights if key in nodes}
    by_id.pop(None, None)
    if not by_id:
        return {}
    scoring = EntityScoring(by_id, query.weights, query.parents, rarity(kg, by_id.values()))
    # Each entity's window in proportion to what its texts can score: a rare entity the query
    # names brings all of its newest texts, a hub reached on the way a few. A window holds the
    # newest texts an item of the search shows the entity in, looked for among the entity's
    # newest graph_scan-times-its-size mentions.
    size = {
        entity_id: max(
            w.graph_min_window,
            round(w.graph_window * query.weights[key] * scoring.rarity[key]),
        )
        for entity_id, key in by_id.items()
    }
    windows: set[tuple[int, int]] = set()
    text_of: dict[int, int] = {}
    views: dict[int, str] = {}
    for entity_id, seq, text_id, view in ranking_rows.graph_windows(
        conn, size, w.graph_scan, scope
    ):
        windows.add((seq, entity_id))
        text_of[seq] = text_id
        views[seq] = view
    # The strongest items the windows bring in, by what the windows show of them; then every
    # query entity each of those and each lexical candidate shows, for their final score.
    first = scoring.scores(windows)
    # The strongest texts only the graph brings in (a text's items score alike).
    best_of: dict[int, tuple[float, int]] = {}
    for seq, (score, _) in first.items():
        if seq not in lexical:
            text_id = text_of[seq]
            best_of[text_id] = max(best_of.get(text_id, (0.0, 0)), (score, seq))
    strongest = set(heapq.nlargest(w.graph_candidates, best_of, key=lambda t: best_of[t]))
    kept = [seq for seq in first if seq not in lexical and text_of[seq] in strongest]
    # A lexical candidate's own view counts over any window's.
    views.update((seq, view) for seq, (_, view) in lexical_items.items())
    by_text: dict[int, list[int]] = {}
    for seq, text_id in {**{seq: text_of[seq] for seq in kept}, **lexical}.items():
        by_text.setdefault(text_id, []).append(seq)
    pairs = {
        (seq, entity_id)
        for text_id, entity_id, flag in ranking_rows.entities_of_texts(conn, by_text, list(by_id))
        for seq in by_text[text_id]
        if not flag or views.get(seq) == "full"
    }
    return scoring.scores(pairs)


def rarity(kg: KnowledgeGraph, keys: Iterable[str]) -> dict[str, float]:
    """Entity key -> its rarity on an absolute scale (1.0 for an entity mentioned once, near 0
    for one in every text of the tenant), so that a name the whole memory mentions cannot
    outweigh the words of the query. Both counts are kept in the graph view."""
    total = max(1, kg.texts)
    scale = math.log(1 + total)
    nodes = kg.nodes
    return {
        key: math.log(1 + total / max(1, int(nodes[key].get("mentions", 1)))) / scale
        for key in keys
    }


@dataclass
class EntityScoring:
    """How the query's entities score the items that show them."""

    by_id: Mapping[int, str]
    weights: Mapping[str, float]
    parents: Mapping[str, str | None]
    rarity: Mapping[str, float]

    def strength(self, key: str) -> float:
        """What a text showing only the entity ``key`` scores."""
        return self.weights[key] * self.rarity[key]

    def scores(self, pairs: Iterable[tuple[int, int]]) -> dict[int, tuple[float, str]]:
        """seq -> (score, the strongest entity) of the items of ``(seq, entity id)`` pairs."""
        named_in: dict[int, set[str]] = {}
        for seq, entity_id in pairs:
            named_in.setdefault(seq, set()).add(self.by_id[entity_id])
        out: dict[int, tuple[float, str]] = {}
        for seq, keys in named_in.items():
            best, score = (0.0, ""), 0.0
            for key in keys:
                via = self.parents.get(key)
                share = self.rarity[via] if via is not None and via in keys else 1.0
                contribution = self.strength(key) * share
                score += contribution
                best = max(best, (contribution, key))
            out[seq] = (min(1.0, score), best[1])
        return out
