"""Query text to search terms: word tokens, stop words, and the FTS5 query they make.

Example:
    >>> query_terms("Who works at the Acme office?")
    ['works', 'acme', 'office']
"""

from __future__ import annotations

import re

__all__ = ["STOP_WORDS", "fts_query_from_text", "query_terms"]

_TOKEN = re.compile(r"\w+", re.UNICODE)
# Words too common to decide whether a memory matches a query. The same list serves the
# lexical ranking (retrieval) so that "matches" means the same everywhere.
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    """.split()
)


def query_terms(query: str) -> list[str]:
    """Lower-cased word tokens of a query, stop words dropped unless nothing else is left.

    Example:
        >>> query_terms("Who works at the Acme office?")
        ['works', 'acme', 'office']
    """
    tokens = [t for t in _TOKEN.findall(query.lower()) if t]
    kept = [t for t in tokens if t not in STOP_WORDS]
    return list(dict.fromkeys(kept or tokens))


def fts_query_from_text(query: str) -> str | None:
    """An FTS5 query that matches any of the query's terms (each quoted, so no syntax leaks).

    Example:
        >>> fts_query_from_text('Acme "CEO" OR x')
        '"acme" OR "ceo" OR "x"'
    """
    terms = query_terms(query)
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
