"""The context stack's re-rank: the last ranking stage of a contextual memory with a current
context. A hit saved in a context like the current one (same type, shared words) moves up.

Example:
    >>> from graphmem.items import MemoryItem
    >>> from graphmem.retrieval.search import Hit
    >>> def hit(seq, score, kind):
    ...     item = MemoryItem(f"note {seq}", metadata={"context": {"type": kind, "data": ""}})
    ...     return Hit(seq, item, score)
    >>> hits = [hit(1, 1.0, "chat"), hit(2, 0.9, "plan")]
    >>> [(h.seq, round(h.score, 2)) for h in rerank_by_context(hits, {"type": "plan"})]
    [(2, 0.78), (1, 0.7)]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .search import Hit
from .weights import RankingWeights, resolved

__all__ = ["rerank_by_context"]


def rerank_by_context(
    hits: list[Hit], current: Mapping[str, Any], weights: RankingWeights | None = None
) -> list[Hit]:
    """``hits`` re-scored by how well their saved context matches ``current`` (the top of the
    context stack), best first: each keeps ``1 - weights.context_share`` of its score and
    gains ``weights.context_share`` times :func:`_context_match` (``relevance_score`` too)."""
    w = resolved(weights)
    current_words = _words(current.get("data", ""))
    for hit in hits:
        match = _context_match(hit.item.metadata.get("context") or {}, current, current_words, w)
        hit.score = hit.score * (1.0 - w.context_share) + match * w.context_share
        hit.item.relevance_score = hit.score
    return sorted(hits, key=lambda h: -h.score)


def _context_match(
    context: object,
    current: Mapping[str, Any],
    current_words: set[str],
    w: RankingWeights,
) -> float:
    """How well a hit's saved ``context`` matches ``current`` (0 to 1): ``w.context_type``
    for the same type, plus ``w.context_words`` times the share of their words in common."""
    if not isinstance(context, dict):
        return 0.0
    score = w.context_type if context.get("type") == current.get("type") else 0.0
    words = _words(context.get("data", ""))
    if words and current_words:
        score += w.context_words * len(words & current_words) / max(len(words), len(current_words))
    return score


def _words(data: object) -> set[str]:
    return set(str(data).lower().split())
