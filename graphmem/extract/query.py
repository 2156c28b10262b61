"""What a query names: the known entities it mentions, found without a language model.

A query can only reach the graph through entities the graph already holds, so the query path
runs no spaCy pipeline at all (loading one costs more than a context build, running NER on
every query 12-20 ms). It finds names in two ways, over :func:`name_tokens`' words:

1. the tenant's known names (every name and alias the memory has seen,
   :class:`~graphmem.extract.known_names.KnownNames`), longest first;
2. runs of capitalised words, resolved through the graph (a lone first or last name reaches
   the one person it belongs to, a lone "Northwind" the one organisation it opens, as
   :meth:`KnowledgeGraph.resolve` defines).

Every candidate must resolve to a node of the graph; a word that names nothing known is dropped.

Example:
    >>> from graphmem import EntityMemory
    >>> memory = EntityMemory()
    >>> _ = memory.save("Alice Johnson joined Acme Corp in Berlin.")
    >>> index = memory.space.entity_index
    >>> named_keys(index.graph(""), index.known_names(""), "Did Alice visit ACME?")
    ['alice johnson', 'acme']
"""

from __future__ import annotations

from typing import Protocol

from .known_names import KnownNames, name_tokens
from .normalize import is_acronym

__all__ = ["Resolver", "named_keys"]

#: Longest run of capitalised words tried as one name.
_MAX_RUN = 6


class Resolver(Protocol):
    """What the query path needs of a graph: its size, and a name's entity key."""

    def resolve(self, name: str) -> str | None: ...

    def __len__(self) -> int: ...


def named_keys(graph: Resolver, known: KnownNames | None, query: str) -> list[str]:
    """Keys of the graph's entities that ``query`` names, in text order, each once."""
    if len(graph) == 0 or not query.strip():
        return []
    tokens = name_tokens(query)
    starts = {start: i for i, (start, _) in enumerate(tokens)}
    ends = {end: i for i, (_, end) in enumerate(tokens)}
    found: list[tuple[int, str]] = []
    covered: set[int] = set()
    # Known names, longest first, none overlapping another already taken.
    matches = known.find(query) if known is not None else []
    for start, end, _ in sorted(matches, key=lambda m: (m[0] - m[1], m[0])):
        first, last = starts[start], ends[end]
        span = range(first, last + 1)
        if covered.intersection(span):
            continue
        key = graph.resolve(query[start:end])
        if key is not None:
            found.append((first, key))
            covered.update(span)
    for first, end in _capitalised_runs(query, tokens, covered):
        found.extend(_resolve_run(query, tokens, first, end, graph))
    keys: list[str] = []
    for _, key in sorted(found, key=lambda pair: pair[0]):
        if key not in keys:
            keys.append(key)
    return keys


def _capitalised_runs(
    query: str, tokens: list[tuple[int, int]], covered: set[int]
) -> list[tuple[int, int]]:
    """``(first, end)`` token ranges of consecutive capitalised words outside ``covered``
    (acronyms with dots such as "U.S." count as words)."""
    runs: list[tuple[int, int]] = []
    first: int | None = None
    for i, (s, e) in enumerate(tokens):
        word = query[s:e]
        capital = i not in covered and word[:1].isupper() and (word.isalpha() or is_acronym(word))
        if capital and first is None:
            first = i
        elif not capital and first is not None:
            runs.append((first, i))
            first = None
    if first is not None:
        runs.append((first, len(tokens)))
    return runs


def _resolve_run(
    query: str, tokens: list[tuple[int, int]], first: int, end: int, graph: Resolver
) -> list[tuple[int, str]]:
    """Known names inside one run of capitalised words, longest first, not overlapping."""
    out: list[tuple[int, str]] = []
    taken: set[int] = set()
    for length in range(min(end - first, _MAX_RUN), 0, -1):
        for i in range(first, end - length + 1):
            span = range(i, i + length)
            if taken.intersection(span):
                continue
            key = graph.resolve(query[tokens[i][0] : tokens[i + length - 1][1]])
            if key is not None:
                out.append((i, key))
                taken.update(span)
    return out
