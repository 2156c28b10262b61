"""An indexing batch written with one statement per kind, and the stored counts it moves.

The entity index collects the rows a batch of texts makes and writes them with
:func:`write_batch`; each kind of row has a ``TypedDict`` below, so a misspelt key is a type
error. :func:`recount` and :func:`subtract_counts` keep the stored mention counts and
support in step when rows move or go.

Example:
    >>> from graphmem.store.database import Database
    >>> db = Database()
    >>> with db.write() as conn:
    ...     write_batch(conn, entity_labels=[])  # nothing to write
    ...     next_relation_id(conn)
    1
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypedDict, TypeVar

from sqlalchemy import Connection, bindparam, func, insert, select, update

from .dialects import dialect_of
from .memory_rows import chunks
from .schema import entities, mentions, relation_evidence, relations, texts

__all__ = [
    "EntityLabel",
    "EntityTouch",
    "EvidenceInsert",
    "MentionInsert",
    "RelationInsert",
    "RelationUpdate",
    "Rows",
    "TextLabels",
    "next_relation_id",
    "recount",
    "subtract_counts",
    "write_batch",
]


_Row = TypeVar("_Row")


class MentionInsert(TypedDict, total=False):
    """A new ``mentions`` row: an entity named at ``start:end`` of a text."""

    entity_id: int
    text_id: int
    start: int
    end: int
    surface: str
    label: str
    label_source: str | None
    #: 1 when the mention is in the text's head (a "body" item does not show it).
    in_head: int


class RelationState(TypedDict):
    """What a relation's view says about it, written as is."""

    confidence: float
    first_seen: str
    last_seen: str
    valid_from: str | None
    valid_to: str | None
    support: int


class RelationInsert(RelationState):
    """A new ``relations`` row under the id :func:`next_relation_id` gave it."""

    id: int
    tenant: str
    subject_id: int
    predicate: str
    object_id: int


class RelationUpdate(RelationState):
    """A stored relation's new values (``rid``: its id)."""

    rid: int


class EvidenceInsert(TypedDict):
    """A new ``relation_evidence`` row: the sentence ``sent_start:sent_end`` of a text."""

    relation_id: int
    text_id: int | None
    sent_start: int
    sent_end: int
    rule: str


class EntityTouch(TypedDict):
    """An entity's new mention count and first/last seen (``eid``: its id)."""

    eid: int
    first_seen: str
    last_seen: str
    mentions: int


class EntityLabel(TypedDict):
    """An entity's new label (``eid``: its id)."""

    eid: int
    label: str


class TextLabels(TypedDict):
    """A text's new ``entity_labels`` column (``tid``: its id)."""

    tid: int
    labels: str


#: The rows of one kind for :func:`write_batch`: the TypedDict, or (the entity index's pending
#: rows, built as plain dicts today) any mapping with its keys.
Rows = Sequence[_Row] | Sequence[Mapping[str, Any]]

# Statements run once per row while indexing are built once: building and hashing a fresh
# statement costs several times more than executing it.
_INSERT_MENTIONS = insert(mentions)
_INSERT_RELATION = insert(relations)
_INSERT_EVIDENCE = insert(relation_evidence)
_SET_LABEL = (
    update(entities).where(entities.c.id == bindparam("eid")).values(label=bindparam("new_label"))
)
_UPDATE_RELATIONS = (
    update(relations)
    .where(relations.c.id == bindparam("rid"))
    .values(
        confidence=bindparam("new_confidence"),
        first_seen=bindparam("new_first_seen"),
        last_seen=bindparam("new_last_seen"),
        valid_from=bindparam("new_valid_from"),
        valid_to=bindparam("new_valid_to"),
        support=bindparam("new_support"),
    )
)
_TOUCH_ENTITIES = (
    update(entities)
    .where(entities.c.id == bindparam("eid"))
    .values(
        first_seen=bindparam("new_first_seen"),
        last_seen=bindparam("new_last_seen"),
        mentions=bindparam("new_mentions"),
    )
)
_LESS_MENTIONS = (
    update(entities)
    .where(entities.c.id == bindparam("eid"))
    .values(mentions=entities.c.mentions - bindparam("n"))
)
_LESS_SUPPORT = (
    update(relations)
    .where(relations.c.id == bindparam("rid"))
    .values(support=relations.c.support - bindparam("n"))
)
_SET_TEXT_LABELS = (
    update(texts).where(texts.c.id == bindparam("tid")).values(entity_labels=bindparam("labels"))
)


def next_relation_id(conn: Connection) -> int:
    """The id the database gives the next relation inserted (one past the largest ever given out:
    ids are never reused), so a batch can name its new relations before :func:`write_batch`
    inserts them."""
    return dialect_of(conn).next_relation_id(conn)


def write_batch(
    conn: Connection,
    *,
    new_mentions: Rows[MentionInsert] = (),
    new_relations: Rows[RelationInsert] = (),
    relation_updates: Rows[RelationUpdate] = (),
    evidence: Rows[EvidenceInsert] = (),
    entity_touches: Rows[EntityTouch] = (),
    entity_labels: Rows[EntityLabel] = (),
    text_labels: Rows[TextLabels] = (),
) -> None:
    """Apply an indexing batch with one statement per kind (``executemany``); each argument
    holds rows of its ``TypedDict`` above: new ``mentions``, ``relations`` (under the ids
    :func:`next_relation_id` gave them) and ``relation_evidence`` rows, and the new values of
    stored relations, entities (counts and times; labels) and texts (``entity_labels``).
    """
    if new_mentions:
        conn.execute(_INSERT_MENTIONS, list(new_mentions))
    if new_relations:
        conn.execute(_INSERT_RELATION, list(new_relations))
        dialect_of(conn).after_insert_relations(conn, max(int(r["id"]) for r in new_relations))
    if relation_updates:
        conn.execute(
            _UPDATE_RELATIONS,
            [
                {
                    "rid": r["rid"],
                    "new_confidence": r["confidence"],
                    "new_first_seen": r["first_seen"],
                    "new_last_seen": r["last_seen"],
                    "new_valid_from": r["valid_from"],
                    "new_valid_to": r["valid_to"],
                    "new_support": r["support"],
                }
                for r in relation_updates
            ],
        )
    if evidence:
        conn.execute(_INSERT_EVIDENCE, list(evidence))
    if entity_touches:
        conn.execute(
            _TOUCH_ENTITIES,
            [
                {
                    "eid": t["eid"],
                    "new_first_seen": t["first_seen"],
                    "new_last_seen": t["last_seen"],
                    "new_mentions": t["mentions"],
                }
                for t in entity_touches
            ],
        )
    if entity_labels:
        conn.execute(
            _SET_LABEL, [{"eid": e["eid"], "new_label": e["label"]} for e in entity_labels]
        )
    if text_labels:
        conn.execute(_SET_TEXT_LABELS, list(text_labels))


def recount(
    conn: Connection, entity_ids: Iterable[int] = (), relation_ids: Iterable[int] = ()
) -> None:
    """Set the stored mention count of entities and the support of relations from their rows
    (after rows moved between them: merges, unmerges)."""
    for chunk in chunks(sorted(set(entity_ids)), 500):
        conn.execute(
            update(entities)
            .where(entities.c.id.in_(chunk))
            .values(
                mentions=select(func.count())
                .where(mentions.c.entity_id == entities.c.id)
                .scalar_subquery()
            )
        )
    for chunk in chunks(sorted(set(relation_ids)), 500):
        conn.execute(
            update(relations)
            .where(relations.c.id.in_(chunk))
            .values(
                support=select(func.count())
                .where(relation_evidence.c.relation_id == relations.c.id)
                .scalar_subquery()
            )
        )


def subtract_counts(
    conn: Connection, entity_counts: Mapping[int, int], relation_counts: Mapping[int, int]
) -> None:
    """Take deleted mentions (entity id -> how many) and evidence (relation id -> how many)
    off the stored counts."""
    if entity_counts:
        conn.execute(_LESS_MENTIONS, [{"eid": e, "n": n} for e, n in sorted(entity_counts.items())])
    if relation_counts:
        conn.execute(
            _LESS_SUPPORT, [{"rid": r, "n": n} for r, n in sorted(relation_counts.items())]
        )
