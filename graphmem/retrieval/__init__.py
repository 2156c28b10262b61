"""Retrieval: lexical search, graph expansion, score fusion, explanations, context assembly.
The ranking's numbers are one object, :class:`RankingWeights` (``retrieval/weights.py``)."""

from .search import Explanation, Hit, rank
from .weights import DEFAULT_WEIGHTS, RankingWeights

__all__ = ["DEFAULT_WEIGHTS", "Explanation", "Hit", "RankingWeights", "rank"]
