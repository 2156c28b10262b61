"""Linking: one more statement of a relation, co-occurrence links, typed relations and the
time each relation holds.

Every function works on one text's :class:`TextContext` (the write transaction, the tenant's
view, the pending batch, when the text was said): the view mirrors the tables inside the
transaction, so new values are computed here and written in one batch at the flush.

Example:
    >>> holds_at({"valid_from": "2025-01-01", "first_seen": "2025-01-01", "valid_to": None},
    ...          "2025-06-01")
    True
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..extract.entities import Mention, relation_spans
from ..extract.extractor import Extraction
from ..extract.normalize import canonical_key
from ..extract.predicates import PredicateCatalogue
from ..graph.records import RelationData
from ..items import CO_OCCURS
from ..store import Connection
from ._shared import (
    EXTRACTOR_RULE,
    MAX_MEMORY_LINKED_ENTITIES,
    SENTENCE_LINK_WINDOW,
    RelationSource,
    TenantState,
)
from .pending import DeferredWrites, PendingWrites

if TYPE_CHECKING:
    from ..extract.texts import Doc

__all__ = [
    "TextContext",
    "add_typed_relations",
    "ended_later",
    "holds_at",
    "link",
    "link_cooccurring",
    "link_extracted",
]

_CO_SENTENCE = ("co_sentence", 1.0)
_CO_MEMORY = ("co_memory", 0.5)


@dataclass
class TextContext:
    """What indexing one text (or adding one relation by hand) works in: the write
    transaction ``conn``, the ``tenant``'s view ``state``, the ``text_id`` evidence points at
    (None: a relation added by hand), ``seen`` (when the text was said, as stored), the
    index's ``writes`` (their :attr:`pending` batch) and ``span_keys`` (a mention's
    ``(start, end)`` -> the key of the entity it resolved to)."""

    conn: Connection
    state: TenantState
    tenant: str
    text_id: int | None
    seen: str
    writes: DeferredWrites
    span_keys: dict[tuple[int, int], str] = field(default_factory=dict)

    @property
    def pending(self) -> PendingWrites:
        """The batch being collected (a new one after a flush: reading the tables, such as
        loading the view's edges, writes the rows pending before)."""
        return self.writes.batch


def link(
    ctx: TextContext,
    subject: str,
    predicate: str,
    obj: str,
    confidence: float,
    evidence: tuple[int, int, str],
) -> tuple[RelationData, bool]:
    """Count one more statement of ``subject -predicate-> obj`` made at ``ctx.seen``,
    ``evidence`` being ``(sentence start, sentence end, rule)`` in ``ctx.text_id``; returns
    the relation's view data (its row's values, written at the flush) and whether it is new.
    """
    kg, pending, seen = ctx.state.graph, ctx.pending, ctx.seen
    data = kg.relation_data(subject, predicate, obj)
    created = data is None
    if data is None:
        kg.add_edge(
            subject,
            predicate,
            obj,
            support=1,
            confidence=confidence,
            first_seen=seen,
            last_seen=seen,
            valid_from=seen,
        )
        data = kg.relation_data(subject, predicate, obj)
        assert data is not None
        fixed = {
            "tenant": ctx.tenant,
            "subject_id": kg.entity_data(subject)["entity_id"],
            "predicate": predicate,
            "object_id": kg.entity_data(obj)["entity_id"],
        }
        data["relation_id"] = pending.add_relation(ctx.conn, fixed, data)
    else:
        kg.add_support(subject, predicate, obj, 1)
        data["confidence"] = max(data["confidence"], confidence)
        # A text saved later may be older (history recorded after the fact).
        data["first_seen"] = min(data["first_seen"], seen)
        data["last_seen"] = max(data["last_seen"], seen)
        if predicate == CO_OCCURS and data["valid_from"] and seen < data["valid_from"]:
            data["valid_from"] = seen
        pending.update_relation(data)
    relation_id = data["relation_id"]
    assert relation_id is not None  # given a row above, or loaded with its own
    sent_start, sent_end, rule = evidence
    pending.relations_with_evidence.add(relation_id)
    pending.evidence.append(
        {
            "relation_id": relation_id,
            "text_id": ctx.text_id,
            "sent_start": sent_start,
            "sent_end": sent_end,
            "rule": rule,
        }
    )
    return data, created


def link_cooccurring(ctx: TextContext, mentions: Sequence[Mention]) -> None:
    """Link entities of one sentence (``co_sentence``) and, more weakly, the memory's
    main entities that share no sentence (``co_memory``)."""
    first_sentence: dict[str, tuple[int, int]] = {}
    sentences: dict[tuple[int, int], list[str]] = {}
    for m in mentions:
        key = ctx.span_keys[(m.start, m.end)]
        first_sentence.setdefault(key, (m.sent_start, m.sent_end))
        in_sentence = sentences.setdefault((m.sent_start, m.sent_end), [])
        if key not in in_sentence:
            in_sentence.append(key)
    links: dict[tuple[str, str], tuple[tuple[str, float], int, int]] = {}
    for (start, end), keys in sorted(sentences.items()):
        for i, a in enumerate(keys):
            for b in keys[i + 1 : i + SENTENCE_LINK_WINDOW]:
                links.setdefault((min(a, b), max(a, b)), (_CO_SENTENCE, start, end))
    sentence_count = Counter(key for keys in sentences.values() for key in keys)
    order = {key: position for position, key in enumerate(first_sentence)}
    main = sorted(order, key=lambda k: (-sentence_count[k], order[k]))
    for a, b in itertools.combinations(sorted(main[:MAX_MEMORY_LINKED_ENTITIES]), 2):
        if (a, b) not in links:
            start = min(first_sentence[a][0], first_sentence[b][0])
            end = max(first_sentence[a][1], first_sentence[b][1])
            links[(a, b)] = (_CO_MEMORY, start, end)
    for (a, b), ((rule, confidence), start, end) in sorted(links.items()):
        link(ctx, a, CO_OCCURS, b, confidence, (start, end, rule))


def link_extracted(ctx: TextContext, extracted: Extraction, text_length: int) -> None:
    """Link the relations the user's extractor found between entities of the text (its
    evidence: the span it gives, else the whole text of ``text_length`` characters)."""
    for relation in extracted.relations:
        ends = [
            ctx.span_keys.get((entity.start, entity.end))
            for entity in (relation.subject, relation.object)
        ]
        if ends[0] is None or ends[1] is None or ends[0] == ends[1]:
            continue
        start, end = relation.evidence or (0, text_length)
        link(
            ctx,
            ends[0],
            relation.predicate,
            ends[1],
            relation.confidence,
            (start, end, EXTRACTOR_RULE),
        )


def add_typed_relations(
    ctx: TextContext,
    doc: Doc,
    mentions: Sequence[Mention],
    source: RelationSource,
    predicates: PredicateCatalogue,
    author: str | None,
) -> None:
    """Link the typed relations ``source`` finds in ``doc`` between the text's entities, and
    end or date the relations they end or that end them (``predicates`` says which)."""
    # Rules check labels: give each span its entity's voted label, not this sentence's
    # NER guess (the small model calls a lone "Alice" an ORG in "Alice joined Acme").
    nodes = ctx.state.graph.graph.nodes
    spans, speaker = relation_spans(
        ((m, nodes[ctx.span_keys[(m.start, m.end)]]["label"]) for m in mentions),
        speaker_key=canonical_key(author) if author else None,
    )
    g = ctx.state.graph.graph
    made_here: set[tuple[str, str, str]] = set()
    stated: list[tuple[str, str, str, RelationData, bool]] = []
    for cand in source.extract(doc, spans, speaker=speaker):
        subject = ctx.span_keys.get((cand.subject.start_char, cand.subject.end_char))
        obj = ctx.span_keys.get((cand.object.start_char, cand.object.end_char))
        if subject is None or obj is None or subject == obj:
            continue
        # What the statement ends (a departure: the job and its roles; "previously worked
        # at": itself) is the catalogue's call, among the relations that held when it was
        # made; relations this same text states end none another.
        held = [
            (key, other)
            for _, other, key, data in g.out_edges(subject, keys=True, data=True)
            if holds_at(data, ctx.seen) and (subject, key, other) not in made_here
        ]
        ended = predicates.ended_by(cand.predicate, obj, held, ends=cand.ends)
        if cand.predicate in predicates.functional and not cand.ends:
            _close_older_values(ctx, subject, cand.predicate, obj)
        sentence = (cand.sentence.start_char, cand.sentence.end_char, cand.rule)
        data, created = link(ctx, subject, cand.predicate, obj, float(cand.confidence), sentence)
        if created:
            made_here.add((subject, cand.predicate, obj))
        if not cand.ends:
            stated.append((subject, cand.predicate, obj, data, created))
        for key, other in ended:
            _close_value(ctx, subject, key, other)
    # Once all of the text's relations are in (what ends a job ends its roles too):
    for subject, predicate, obj, data, created in stated:
        date_backfilled(ctx, predicates, (subject, predicate, obj), data, created)


def date_backfilled(
    ctx: TextContext,
    predicates: PredicateCatalogue,
    triple: tuple[str, str, str],
    data: RelationData,
    created: bool,
) -> None:
    """Give a relation (``triple``, its view ``data``) stated at ``ctx.seen`` the interval
    the subject's later statements leave it, when they were saved first (history recorded
    out of order): a joining saved after the departure ends at the departure; a restatement
    older than the relation's start moves the start back, unless a statement in between
    ended it (one row keeps one interval: the latest)."""
    seen = ctx.seen
    if not created and not (data["valid_from"] and seen < data["valid_from"]):
        return
    ends_at = ended_later(ctx.state.graph.graph, predicates, *triple, seen)
    if created:
        if ends_at is None or (data["valid_to"] is not None and data["valid_to"] <= ends_at):
            return  # nothing later ends it, or this text itself already did
        data["valid_to"] = ends_at
    elif ends_at is None or ends_at >= (data["valid_from"] or ""):  # set: see above
        data["valid_from"] = seen
    else:
        return
    ctx.pending.update_relation(data)


def _close_value(ctx: TextContext, subject: str, predicate: str, obj: str) -> None:
    """End ``subject -predicate-> obj`` at ``ctx.seen`` if it held then ("Bob left Initech"
    ends his works_at), unless it was stated again since (ending it at ``seen`` when a
    later statement, saved first, ended it later)."""
    data = ctx.state.graph.relation_data(subject, predicate, obj)
    if data is not None and data["last_seen"] <= ctx.seen and holds_at(data, ctx.seen):
        data["valid_to"] = ctx.seen
        ctx.pending.update_relation(data)


def _close_older_values(ctx: TextContext, subject: str, predicate: str, obj: str) -> None:
    """A new value of a functional predicate: end the subject's other values of it, and
    make an older value stated again current again."""
    g = ctx.state.graph.graph
    for _, other, key in list(g.out_edges(subject, keys=True)):
        if key == predicate and other != obj:
            _close_value(ctx, subject, predicate, other)
    restated = ctx.state.graph.relation_data(subject, predicate, obj)
    if (
        restated is not None
        and restated["valid_to"] is not None
        and restated["valid_to"] <= ctx.seen
    ):
        # An older value stated again is current again, from now (one row per triple
        # cannot keep both spells; the earlier one stays in the evidence).
        restated["valid_from"], restated["valid_to"] = ctx.seen, None
        ctx.pending.update_relation(restated)


def holds_at(data: Mapping[str, Any], when: str) -> bool:
    """Whether a relation (its view data) held at ``when``: begun by then (at that very time
    included: a statement of the same time may end it) and not ended yet."""
    started = data["valid_from"] or data["first_seen"]
    return bool(started <= when and (data["valid_to"] is None or data["valid_to"] > when))


def ended_later(
    g: Any, predicates: PredicateCatalogue, subject: str, predicate: str, obj: str, after: str
) -> str | None:
    """The earliest time after ``after`` at which one of ``subject``'s stored statements
    ends ``subject -predicate-> obj`` (as :meth:`PredicateCatalogue.ended_by` says), or None.

    A stored relation's statements are known by their first and last times (and the time
    it began again, if it did); one recorded closed at the time it began stated its end
    ("previously worked at").
    """
    pairs = [(key, other) for _, other, key in g.out_edges(subject, keys=True) if key != CO_OCCURS]
    held = [*pairs, (predicate, obj)]
    best: str | None = None
    for _, other, key, data in g.out_edges(subject, keys=True, data=True):
        if key == CO_OCCURS or (key == predicate and other == obj):
            continue
        times = [t for t in (data["first_seen"], data["valid_from"], data["last_seen"]) if t]
        later = min((t for t in times if t > after), default=None)
        if later is None or (best is not None and later >= best):
            continue
        ends = data["valid_from"] is not None and data["valid_from"] == data["valid_to"]
        if (predicate, obj) in predicates.ended_by(key, other, held, ends=ends):
            best = later
    return best
