"""What a memory space reads in a text it does not store: the entities it names, and the
typed relations it states between given entities (the NLP the tiers ask for, kept in
:mod:`graphmem.extract`; the tiers only call these).

Example:
    >>> from graphmem.space import MemorySpace
    >>> space = MemorySpace()
    >>> names_in_text(space, "", "Alice Johnson joined Acme Corp in Berlin.")
    ['Alice Johnson', 'Acme Corp', 'Berlin']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..extract.entities import Mention, find_mentions, relation_spans
from ..extract.normalize import canonical_key
from ..extract.query import named_keys
from ..items import MemoryItem

if TYPE_CHECKING:
    from . import MemorySpace

__all__ = ["known_keys_in", "names_in_text", "relations_between"]


def names_in_text(space: MemorySpace, tenant: str, text: str) -> list[str]:
    """Entity names in ``text`` (known ones of ``tenant`` by their canonical name), in text
    order, each once."""
    index = space.entity_index
    doc = index.analyse([MemoryItem(text)], relations=False)[0]
    kg = index.graph(tenant)
    names: list[str] = []
    for mention in find_mentions(doc, index.matcher(tenant), declared=index.declared_names):
        key = kg.resolve(mention.surface)
        name = kg.name_of(key) if key is not None else mention.surface
        if name not in names:
            names.append(name)
    return names


def relations_between(
    space: MemorySpace, tenant: str, text: str, entities: Sequence[str]
) -> list[tuple[str, str, str]]:
    """Typed relations ``text`` states between ``entities`` (each end named as the caller
    names it; an entity is matched by its name or an alias ``tenant``'s graph resolves to
    it), in text order, each triple once; ``[]`` without a relation source."""
    index = space.entity_index
    source = index.relation_source
    if not text.strip() or not entities or source is None:
        return []
    kg = index.graph(tenant)
    wanted: dict[str, str] = {}  # resolved key (or canonical key) -> the caller's name
    for name in entities:
        wanted.setdefault(kg.resolve(name) or canonical_key(name), name)
    doc = index.analyse([MemoryItem(text)], relations=True)[0]
    labelled: list[tuple[Mention, str]] = []
    names: dict[tuple[int, int], str] = {}
    for mention in find_mentions(doc, index.matcher(tenant), declared=index.declared_names):
        key = kg.resolve(mention.surface) or mention.key
        if key in wanted:
            node = kg.graph.nodes.get(key)
            labelled.append((mention, node["label"] if node is not None else mention.label))
            names[(mention.span.start_char, mention.span.end_char)] = wanted[key]
    spans, _ = relation_spans(labelled)
    triples: list[tuple[str, str, str]] = []
    for cand in source.extract(doc, spans):
        subject = names.get((cand.subject.start_char, cand.subject.end_char))
        obj = names.get((cand.object.start_char, cand.object.end_char))
        triple = (subject, cand.predicate, obj)
        if subject and obj and subject != obj and triple not in triples:
            triples.append((subject, cand.predicate, obj))
    return triples


def known_keys_in(space: MemorySpace, tenant: str, text: str) -> list[str]:
    """The keys of ``tenant``'s known entities ``text`` names, in text order, found without a
    language model (:func:`~graphmem.extract.query.named_keys`). Call it in a read, so the
    graph view and its names are of one generation."""
    index = space.entity_index
    return named_keys(index.graph(tenant), index.known_names(tenant), text)
