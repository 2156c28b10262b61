"""Indexing one text: its mentions, the entities they resolve to, their counts and label
votes, and the links and relations it states.

The decisions are :mod:`graphmem.extract.resolution`'s (which entity a mention is) and
:mod:`graphmem.index.linking`'s (what a statement links, ends or dates); this module applies
them to the tenant's view and the pending batch of one :class:`~graphmem.index.linking.TextContext`.

Example (the index calls it for each text it is given):
    >>> from graphmem.store.database import Database
    >>> from graphmem.store.text_rows import insert_memories
    >>> from graphmem.index.entity_index import EntityIndex
    >>> db = Database(); index = EntityIndex(db)
    >>> item = MemoryItem("Ravi Mehta met Dana Lee. Ravi thanked her.")
    >>> with db.write() as conn:
    ...     [row] = insert_memories(conn, [(item, "n", None)])
    ...     [found] = index.index(conn, [(row.text_id, item)])
    >>> found.entity_names
    ['Ravi Mehta', 'Dana Lee']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..extract.entities import (
    Mention,
    acronym_definitions,
    extracted_mentions,
    extraction_of,
    find_mentions,
)
from ..extract.entity_patterns import DeclaredNames
from ..extract.predicates import PredicateCatalogue
from ..extract.resolution import (
    author_mention,
    given_mentions,
    ner_labels,
    resolve_mention,
    short_names_of,
    subject_mention,
    task_names_kept,
)
from ..graph.knowledge_graph import KnowledgeGraph
from ..items import MemoryItem
from ..store import graph_rows
from ._shared import IndexedMemory, RelationSource, TenantState
from .linking import TextContext, add_typed_relations, link_cooccurring, link_extracted

if TYPE_CHECKING:
    from ..extract.texts import Doc

__all__ = ["IndexingWay", "index_text"]


@dataclass(frozen=True)
class IndexingWay:
    """How a text is indexed: with typed ``relations`` or not; the names the user
    ``declared``; the labels set by hand (``pinned``: entity key -> label, of the text's
    tenant); ``typed()``: the relation source and its predicate catalogue (None: no parser),
    asked for only when a text's typed relations are read."""

    relations: bool
    declared: DeclaredNames | None
    pinned: Mapping[str, str]
    typed: Callable[[], tuple[RelationSource, PredicateCatalogue] | None]


def index_text(
    ctx: TextContext,
    item: MemoryItem,
    doc: Doc,
    way: IndexingWay,
    given: Sequence[str] | None = None,
    head_chars: int = 0,
) -> IndexedMemory:
    """Index one stored text (``ctx.text_id``) that ``item`` shows and ``doc`` analysed, as
    ``way`` says; ``given``: entity names given instead of extraction; ``head_chars``: the
    length of the text's head (a task's wording)."""
    text_id = ctx.text_id
    assert text_id is not None  # a text, not a relation added by hand
    extracted = extraction_of(doc)
    mentions = _mentions(ctx.state, item, doc, given, head_chars, way.declared)
    labels = ner_labels(doc)
    if labels:
        ctx.pending.text_labels[text_id] = ",".join(labels)
    rows, keys_in_order = _mention_rows(ctx, mentions, item.conversation_id, head_chars)
    _count_mentions(ctx, rows, keys_in_order, way.pinned)
    link_cooccurring(ctx, mentions)
    if way.relations and extracted is not None and given is None:
        link_extracted(ctx, extracted, len(doc.text))
    typed = way.typed() if way.relations and extracted is None else None
    if typed is not None and doc.has_annotation("DEP"):
        add_typed_relations(ctx, doc, mentions, *typed, _author(item))
    body_keys = list(
        dict.fromkeys(ctx.span_keys[(m["start"], m["end"])] for m in rows if not m["in_head"])
    )
    names = [ctx.state.graph.name_of(k) for k in keys_in_order]
    return IndexedMemory(text_id, names, keys_in_order, body_keys)


def _mentions(
    state: TenantState,
    item: MemoryItem,
    doc: Doc,
    given: Sequence[str] | None,
    head_chars: int,
    declared: DeclaredNames | None,
) -> list[Mention]:
    """The text's mentions: the names given, else the user's extraction, else found in
    it; less a task's words that are no names; with its author and subject."""
    extracted = extraction_of(doc)
    if given is not None:
        mentions = given_mentions(doc, given, state.graph)
    elif extracted is not None:
        mentions = extracted_mentions(doc, extracted)
    else:
        mentions = find_mentions(doc, state.matcher, declared=declared)
    if head_chars:
        mentions = task_names_kept(mentions, head_chars, state.graph.alias_keys)
    mentions = author_mention(_author(item), doc, mentions)
    return subject_mention(item.metadata, state.graph, doc, mentions)


def _mention_rows(
    ctx: TextContext,
    mentions: Sequence[Mention],
    conversation_id: str | None,
    head_chars: int,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Resolve each mention to its entity (filling ``ctx.span_keys``) and queue its row;
    returns the rows and the entity keys in text order."""
    rows: list[dict[str, Any]] = []
    keys: list[str] = []
    defined = acronym_definitions(mentions)
    for position, mention in enumerate(mentions):
        name = defined.get(position)
        same_as = (
            ctx.span_keys[(mentions[name].start, mentions[name].end)] if name is not None else None
        )
        key, label = _resolve(ctx, mention, same_as, conversation_id)
        if same_as is not None and key != same_as:  # both were known apart
            ctx.pending.merges.append((ctx.tenant, same_as, key))
        ctx.span_keys[(mention.start, mention.end)] = key
        rows.append(
            {
                "entity_id": _row_id(ctx.state.graph, key),
                "text_id": ctx.text_id,
                "start": mention.start,
                "end": mention.end,
                "surface": mention.surface,
                "label": label,
                "label_source": mention.source if label == mention.label else "frame",
                "in_head": int(mention.end <= head_chars and mention.end > 0),
            }
        )
        if key not in keys:
            keys.append(key)
    ctx.pending.add_mentions(rows, ctx.tenant)
    return rows, keys


def _count_mentions(
    ctx: TextContext,
    rows: Sequence[dict[str, Any]],
    keys: Sequence[str],
    pinned: Mapping[str, str],
) -> None:
    """Count the text's mentions in its entities: their label vote, mention counts and
    first/last seen."""
    kg = ctx.state.graph
    entity_ids = {key: _row_id(kg, key) for key in keys}
    # A mention with the entity's current label cannot change the vote: only count
    # votes when some mention disagrees, or the label was set by hand (an entity made
    # anew under a relabelled name, as re-analysis does, takes it at once).
    disputed = {
        key: entity_ids[key]
        for key in keys
        if key in pinned
        or any(
            m["label"] != kg.entity_data(key)["label"]
            for m in rows
            if m["entity_id"] == entity_ids[key]
        )
    }
    for key, label in ctx.writes.vote(ctx.conn, ctx.tenant, disputed, pinned).items():
        kg.entity_data(key)["label"] = label
    for key in keys:
        node = kg.entity_data(key)
        node["mentions"] += sum(1 for m in rows if m["entity_id"] == entity_ids[key])
        # A text saved later may be older (history recorded after the fact).
        node["first_seen"] = min(node["first_seen"], ctx.seen)
        node["last_seen"] = max(node["last_seen"], ctx.seen)
        ctx.pending.entity_touches[entity_ids[key]] = node


def _resolve(
    ctx: TextContext,
    mention: Mention,
    same_as: str | None,
    conversation_id: str | None,
) -> tuple[str, str]:
    """The entity key of ``mention`` and the label its mention row gets
    (:func:`~graphmem.extract.resolution.resolve_mention` decides): a new name of a
    known entity becomes its alias, a new entity is made, and the lone-word entities it
    turns out to be the full name of are merged into it once the batch is written."""
    kg = ctx.state.graph
    known = kg.alias_keys.get(mention.key)
    if known is not None and known not in kg.graph:  # the entity was forgotten
        del kg.alias_keys[mention.key]
        known = None

    def named_in_conversation(name: str) -> bool:
        return conversation_id is not None and graph_rows.conversation_contains(
            ctx.conn, ctx.tenant, conversation_id, name
        )

    found = resolve_mention(mention, known, kg, same_as, named_in_conversation)
    key = found.key
    if key is not None:
        if found.alias and mention.key not in kg.alias_keys:
            node = kg.entity_data(key)
            graph_rows.add_alias(
                ctx.conn, ctx.tenant, mention.key, mention.surface, _row_id(kg, key)
            )
            kg.alias_keys[mention.key] = key
            node["aliases"].append(mention.surface)
            ctx.state.matcher.add(mention.surface, node["label"])
        return key, found.label
    entity_id = graph_rows.insert_entity(
        ctx.conn, ctx.tenant, mention.key, mention.surface, mention.label, ctx.seen
    )
    kg.add_entity(
        mention.key,
        name=mention.surface,
        label=mention.label,
        mentions=0,
        first_seen=ctx.seen,
        last_seen=ctx.seen,
        entity_id=entity_id,
    )
    ctx.state.matcher.add(mention.surface, mention.label)
    for short in short_names_of(kg, mention.key, mention.label):
        ctx.pending.merges.append((ctx.tenant, mention.key, short))
    return mention.key, mention.label


def _row_id(kg: KnowledgeGraph, key: str) -> int:
    """The entity id of node ``key`` (every entity of the index's views has a row)."""
    entity_id = kg.entity_data(key)["entity_id"]
    assert entity_id is not None
    return entity_id


def _author(item: MemoryItem) -> str | None:
    """Who said or wrote ``item``: its ``speaker`` (else ``author``) metadata, if any."""
    return next(
        (
            item.metadata[k].strip()
            for k in ("speaker", "author")
            if isinstance(item.metadata.get(k), str) and item.metadata[k].strip()
        ),
        None,
    )
