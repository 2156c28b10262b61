"""Retrieval: lexical search, graph expansion, score fusion, explanations."""

from .search import Explanation, Hit, rank

__all__ = ["Explanation", "Hit", "rank"]
