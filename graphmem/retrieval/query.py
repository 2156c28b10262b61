"""What a query names: the known entities it mentions, found without the statistical model.

A query can only reach the graph through entities the graph already holds, so the query path
does not run spaCy's NER (12-20 ms per query on a 2-core machine, more than a whole context
build may take). It finds names with the tokenizer and three cheap sources:

1. the entity ruler (``models/entity_patterns.jsonl``), as at ingestion;
2. the tenant's known-name phrase matcher (every name and alias the memory has seen);
3. runs of capitalised words, resolved through the graph (a lone first or last name reaches
   the one person it belongs to, a lone "Northwind" the one organisation it opens, as
   :meth:`KnowledgeGraph.resolve` defines).

Every candidate must resolve to a node of the graph; a word that names nothing known is dropped.

Example:
    >>> from graphmem import EntityMemory
    >>> memory = EntityMemory()
    >>> _ = memory.save("Alice Johnson joined Acme Corp in Berlin.")
    >>> index = memory.space.entity_index
    >>> named_keys(index, index.graph(""), index.matcher(""), "Did Alice visit ACME?")
    ['alice johnson', 'acme']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spacy.tokens import Doc

from ..extract.entities import AliasMatcher, find_mentions
from ..extract.normalize import is_acronym

if TYPE_CHECKING:
    from ..graph.knowledge_graph import KnowledgeGraph
    from ..index.entity_index import EntityIndex

__all__ = ["named_keys"]

#: Longest run of capitalised words tried as one name.
_MAX_RUN = 6


def named_keys(
    index: EntityIndex, kg: KnowledgeGraph, matcher: AliasMatcher | None, query: str
) -> list[str]:
    """Keys of the graph's entities that ``query`` names, in text order, each once."""
    if len(kg) == 0 or not query.strip():
        return []
    doc = _tokens_and_rules(index, query)
    found: list[tuple[int, str]] = []
    covered: set[int] = set()
    for mention in find_mentions(doc, matcher):
        key = kg.resolve(mention.surface)
        if key is not None:
            found.append((mention.span.start, key))
            covered.update(range(mention.span.start, mention.span.end))
    for start, end in _capitalised_runs(doc, covered):
        found.extend(_resolve_run(doc, start, end, kg))
    keys: list[str] = []
    for _, key in sorted(found, key=lambda pair: pair[0]):
        if key not in keys:
            keys.append(key)
    return keys


def _tokens_and_rules(index: EntityIndex, query: str) -> Doc:
    """The query tokenised, with the entity ruler's spans as its entities."""
    nlp = index.analyzer.nlp
    doc = nlp.make_doc(query)
    if "entity_ruler" in nlp.pipe_names:
        doc = nlp.get_pipe("entity_ruler")(doc)
    return doc


def _capitalised_runs(doc: Doc, covered: set[int]) -> list[tuple[int, int]]:
    """``(start, end)`` token ranges of consecutive capitalised words outside ``covered``
    (acronyms with dots such as "U.S." count as words)."""
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for token in doc:
        capital = (
            token.i not in covered
            and token.text[:1].isupper()
            and (token.is_alpha or is_acronym(token.text))
        )
        if capital and start is None:
            start = token.i
        elif not capital and start is not None:
            runs.append((start, token.i))
            start = None
    if start is not None:
        runs.append((start, len(doc)))
    return runs


def _resolve_run(doc: Doc, start: int, end: int, kg: KnowledgeGraph) -> list[tuple[int, str]]:
    """Known names inside one run of capitalised words, longest first, not overlapping."""
    out: list[tuple[int, str]] = []
    taken: set[int] = set()
    for length in range(min(end - start, _MAX_RUN), 0, -1):
        for first in range(start, end - length + 1):
            span = range(first, first + length)
            if taken.intersection(span):
                continue
            text = doc[first : first + length].text
            key = kg.resolve(text)
            if key is not None:
                out.append((first, key))
                taken.update(span)
    return out
