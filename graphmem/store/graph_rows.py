"""SQL for the knowledge graph: entities, aliases, mentions, relations and their evidence.

Functions take the caller's connection so that a memory, its mentions and its relations are
written in one transaction. Support counting: a relation lives while it has evidence, an
entity while it has mentions or hand-added relations (:func:`prune_unsupported`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Connection,
    bindparam,
    case,
    delete,
    exists,
    func,
    insert,
    select,
    union_all,
    update,
)
from sqlalchemy import text as sql_text

from ..errors import InvalidArgumentError
from ..items import time_text, utc_now
from .database import shown_content, shows_mention
from .schema import (
    TYPED_RELATION,
    aliases,
    entities,
    memories,
    mentions,
    merges,
    meta,
    relation_evidence,
    relations,
    texts,
)

__all__ = [
    "EntityRow",
    "IndexRows",
    "EvidenceRow",
    "RelationRow",
    "add_alias",
    "conversation_contains",
    "delete_index_rows",
    "delete_tenant_graph",
    "mention_label_counts",
    "pick_label",
    "evidence_for",
    "insert_entity",
    "index_rows_of",
    "newest_ids",
    "next_relation_id",
    "prune_candidates",
    "write_batch",
    "load_entities",
    "load_relations",
    "strongest_links",
    "log_merge",
    "take_merge",
    "merge_entity_rows",
    "unmerge_entity_rows",
    "prune_unsupported",
    "count_texts",
    "texts_by_tenant",
    "recount",
    "subtract_counts",
    "tier_entity_mentions",
    "tier_mention_counts",
    "typed_relations_of",
    "vote_labels",
    "DECLARED_PATTERNS_KEY",
    "FORGOTTEN_MERGE",
    "RELABELLED_KEY",
    "read_setting",
    "write_setting",
    "set_entity_label",
    "alias_labels",
    "entity_ids_named",
]

# Statements run once per row while indexing are built once: building and hashing a fresh
# statement costs several times more than executing it.
_INSERT_ENTITY = insert(entities)
_INSERT_ALIAS = insert(aliases)
_INSERT_MENTIONS = insert(mentions)
_INSERT_RELATION = insert(relations)
_INSERT_EVIDENCE = insert(relation_evidence)
_ALIAS_EXISTS = select(aliases.c.id).where(
    aliases.c.tenant == bindparam("tenant"), aliases.c.key == bindparam("key")
)
_CONVERSATION_CONTAINS = (
    select(memories.c.seq)
    .join(texts, texts.c.id == memories.c.text_id)
    .where(
        memories.c.tenant == bindparam("tenant"),
        memories.c.conversation_id == bindparam("conversation_id"),
        texts.c.body.like(bindparam("pattern"), escape="\\")
        | texts.c.head.like(bindparam("pattern"), escape="\\"),
    )
    .limit(1)
)
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
# Run once per indexing batch: built once.
_MENTION_LABELS = (
    select(
        mentions.c.entity_id,
        mentions.c.label,
        mentions.c.label_source,
        func.count(),
        func.min(mentions.c.id),
    )
    .where(mentions.c.entity_id.in_(bindparam("ids", expanding=True)))
    .group_by(mentions.c.entity_id, mentions.c.label, mentions.c.label_source)
)
# Past the largest id ever given out (AUTOINCREMENT's sqlite_sequence, PostgreSQL's serial
# sequence), not only the largest in use: ids are never reused.
_NEXT_RELATION_ID = {
    "sqlite": sql_text(
        "SELECT max(coalesce((SELECT max(id) FROM relations), 0), "
        "coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'relations'), 0)) + 1"
    ),
    "postgresql": sql_text(
        "SELECT GREATEST(COALESCE((SELECT max(id) FROM relations), 0), COALESCE("
        "pg_sequence_last_value(pg_get_serial_sequence('relations', 'id')::regclass), 0)) + 1"
    ),
}
# Relations inserted under ids of their own (write_batch) do not move PostgreSQL's sequence:
# moved here, so that a relation inserted without an id (a merge's) does not collide.
_PAST_PG_RELATION_IDS = sql_text(
    "SELECT setval(pg_get_serial_sequence('relations', 'id'), GREATEST(:largest, COALESCE("
    "pg_sequence_last_value(pg_get_serial_sequence('relations', 'id')::regclass), 0)))"
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


@dataclass
class EntityRow:
    """An entity as stored, with its mention count and aliases."""

    id: int
    tenant: str
    key: str
    name: str
    label: str
    first_seen: str
    last_seen: str
    mentions: int
    aliases: list[str]


@dataclass
class RelationRow:
    """A relation as stored, with its support (number of evidence rows)."""

    id: int
    subject_key: str
    predicate: str
    object_key: str
    confidence: float
    first_seen: str
    last_seen: str
    valid_from: str | None
    valid_to: str | None
    support: int


@dataclass
class EvidenceRow:
    """One piece of evidence: the sentence of a memory that states a relation."""

    relation_id: int
    memory_id: str | None
    sentence: str
    rule: str
    created_at: str | None


def load_entities(conn: Connection, tenant: str) -> list[EntityRow]:
    """Every entity of one tenant with its aliases, to build its graph view (two scans: the
    mention counts are stored)."""
    alias_map: dict[int, list[str]] = {}
    for entity_id, surface in conn.execute(
        select(aliases.c.entity_id, aliases.c.surface)
        .where(aliases.c.tenant == tenant)
        .order_by(aliases.c.id)
    ).all():
        alias_map.setdefault(int(entity_id), []).append(surface)
    return [
        EntityRow(
            id=int(r.id),
            tenant=r.tenant,
            key=r.key,
            name=r.name,
            label=r.label,
            first_seen=r.first_seen,
            last_seen=r.last_seen,
            mentions=int(r.mentions),
            aliases=alias_map.get(int(r.id), []),
        )
        for r in conn.execute(
            select(entities).where(entities.c.tenant == tenant).order_by(entities.c.id)
        ).all()
    ]


def load_relations(
    conn: Connection, tenant: str, key_of: Mapping[int, str]
) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """Every relation of one tenant as ``(subject key, predicate, object key, attributes)``
    (one scan: the support is stored); ``key_of``: entity id -> key (relations of other
    entities are left out)."""
    rows = conn.execute(_TENANT_RELATIONS, {"tenant": tenant}).all()
    for rid, subject, predicate, obj, confidence, first, last, valid_from, valid_to, n in rows:
        if subject in key_of and obj in key_of:
            yield (
                key_of[subject],
                predicate,
                key_of[obj],
                {
                    "support": n,
                    "confidence": float(confidence),
                    "first_seen": first,
                    "last_seen": last,
                    "valid_from": valid_from,
                    "valid_to": valid_to,
                    "relation_id": rid,
                },
            )


_TENANT_RELATIONS = (
    select(
        relations.c.id,
        relations.c.subject_id,
        relations.c.predicate,
        relations.c.object_id,
        relations.c.confidence,
        relations.c.first_seen,
        relations.c.last_seen,
        relations.c.valid_from,
        relations.c.valid_to,
        relations.c.support,
    )
    .where(relations.c.tenant == bindparam("tenant"))
    .order_by(relations.c.id)
)


def strongest_links(conn: Connection, entity_id: int, n: int) -> list[tuple[int, str]]:
    """The ``n`` entities linked to ``entity_id`` by the strongest relations (either
    direction), as ``(support of the strongest, entity key)``, strongest first (ties by key,
    as :meth:`KnowledgeGraph.strongest_neighbours` orders them)."""
    rows = conn.execute(_STRONGEST_LINKS, {"eid": entity_id, "n": n}).all()
    return [(int(support), str(key)) for key, support in rows]


_LINKS = union_all(
    select(relations.c.object_id.label("other"), relations.c.support).where(
        relations.c.subject_id == bindparam("eid")
    ),
    select(relations.c.subject_id.label("other"), relations.c.support).where(
        relations.c.object_id == bindparam("eid")
    ),
).subquery()
_STRONGEST_LINKS = (
    select(entities.c.key, func.max(_LINKS.c.support).label("strength"))
    .join(entities, entities.c.id == _LINKS.c.other)
    .where(_LINKS.c.other != bindparam("eid"))
    .group_by(entities.c.key)
    .order_by(func.max(_LINKS.c.support).desc(), entities.c.key)
    .limit(bindparam("n"))
)


def count_texts(conn: Connection, tenant: str) -> int:
    """How many texts ``tenant`` has (the scale of an entity's rarity)."""
    return int(conn.execute(_COUNT_TENANT_TEXTS, {"tenant": tenant}).scalar() or 0)


_COUNT_TENANT_TEXTS = (
    select(func.count()).select_from(texts).where(texts.c.tenant == bindparam("tenant"))
)


def texts_by_tenant(conn: Connection, text_ids: Sequence[int]) -> dict[str, int]:
    """How many of ``text_ids`` each tenant has."""
    out: dict[str, int] = {}
    for chunk in _chunks(sorted(set(text_ids))):
        for tenant, n in conn.execute(
            select(texts.c.tenant, func.count())
            .where(texts.c.id.in_(chunk))
            .group_by(texts.c.tenant)
        ):
            out[str(tenant)] = int(n)
    return out


def tier_mention_counts(
    conn: Connection, tenant: str, namespace: str, keys: Sequence[str]
) -> dict[str, int]:
    """Entity key -> how many items of ``namespace`` (of ``tenant``) mention it: keys with
    none are left out; a "body" item counts the mentions of its text's body only."""
    stmt = (
        select(entities.c.key, func.count(func.distinct(memories.c.seq)))
        .select_from(mentions)
        .join(entities, entities.c.id == mentions.c.entity_id)
        .join(memories, memories.c.text_id == mentions.c.text_id)
        .where(
            entities.c.tenant == tenant,
            entities.c.key.in_(list(keys)),
            # Compared as expressions, not columns: the items are then reached from the
            # entities' mentions (index on text_id), never by scanning the whole tier, which
            # SQLite's planner chose for up to three keys when the file has no statistics.
            memories.c.namespace.concat("") == namespace,
            memories.c.tenant.concat("") == tenant,
            shows_mention(memories, mentions),
        )
        .group_by(entities.c.key)
    )
    return {str(key): int(count) for key, count in conn.execute(stmt)}


def tier_entity_mentions(
    conn: Connection,
    namespace: str,
    graph_tenant: str,
    tenant: str | None = None,
    key: str | None = None,
) -> list[tuple[str, str, str, str, int]]:
    """``(entity name, memory_id, shown content, created_at, seq)`` for each mention an item of
    ``namespace`` shows, oldest item first (of one entity when ``key`` is given, of one tenant's
    items when ``tenant`` is given); a "body" item shows the mentions of its text's body only.
    """
    stmt = (
        select(
            entities.c.name,
            memories.c.memory_id,
            texts.c.head,
            texts.c.body,
            memories.c.view,
            memories.c.created_at,
            memories.c.seq,
        )
        .join(mentions, mentions.c.entity_id == entities.c.id)
        .join(memories, memories.c.text_id == mentions.c.text_id)
        .join(texts, texts.c.id == memories.c.text_id)
        .where(
            memories.c.namespace == namespace,
            entities.c.tenant == graph_tenant,
            shows_mention(memories, mentions),
        )
        .order_by(memories.c.seq)
    )
    if key is not None:
        stmt = stmt.where(entities.c.key == key)
    if tenant is not None:
        stmt = stmt.where(memories.c.tenant == tenant)
    return [
        (name, memory_id, shown_content(head, body, view), created, seq)
        for name, memory_id, head, body, view, created, seq in conn.execute(stmt)
    ]


def recount(
    conn: Connection, entity_ids: Iterable[int] = (), relation_ids: Iterable[int] = ()
) -> None:
    """Set the stored mention count of entities and the support of relations from their rows
    (after rows moved between them: merges, unmerges)."""
    for chunk in _chunks(sorted(set(entity_ids))):
        conn.execute(
            update(entities)
            .where(entities.c.id.in_(chunk))
            .values(
                mentions=select(func.count())
                .where(mentions.c.entity_id == entities.c.id)
                .scalar_subquery()
            )
        )
    for chunk in _chunks(sorted(set(relation_ids))):
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


def _chunks(values: list[int], size: int = 500) -> Iterable[list[int]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def insert_entity(conn: Connection, tenant: str, key: str, name: str, label: str, seen: str) -> int:
    """Create an entity and its first alias; returns its id."""
    result = conn.execute(
        _INSERT_ENTITY,
        {
            "tenant": tenant,
            "key": key,
            "name": name,
            "label": label,
            "first_seen": seen,
            "last_seen": seen,
        },
    )
    pk = result.inserted_primary_key
    assert pk is not None
    entity_id = int(pk[0])
    add_alias(conn, tenant, key, name, entity_id)
    return entity_id


def add_alias(conn: Connection, tenant: str, key: str, surface: str, entity_id: int) -> None:
    """Record that ``key`` (from ``surface``) names ``entity_id`` in ``tenant``."""
    if conn.execute(_ALIAS_EXISTS, {"tenant": tenant, "key": key}).first() is None:
        conn.execute(
            _INSERT_ALIAS,
            {"tenant": tenant, "key": key, "surface": surface, "entity_id": entity_id},
        )


def conversation_contains(conn: Connection, tenant: str, conversation_id: str, text: str) -> bool:
    """Whether a memory of ``conversation_id`` in ``tenant`` has ``text`` in its content
    (``%`` and ``_`` are no wildcards; SQLite's LIKE folds ASCII case, PostgreSQL's does not)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    params = {"tenant": tenant, "conversation_id": conversation_id, "pattern": f"%{escaped}%"}
    return conn.execute(_CONVERSATION_CONTAINS, params).first() is not None


#: The weight of one mention's label in its entity's vote, from the label and what gave it
#: (:func:`graphmem.extract.entity_types.label_weight`; the store does not decide it).
LabelWeight = Callable[[str, str | None], float]


def _one_each(label: str, source: str | None) -> float:
    return 1.0


def mention_label_counts(
    conn: Connection, entity_ids: Sequence[int], weight: LabelWeight = _one_each
) -> dict[int, dict[str, tuple[float, int]]]:
    """For each entity, its mention labels: ``label -> (votes, id of the first)``, each
    mention counting ``weight(label, label_source)`` (one by default)."""
    out: dict[int, dict[str, tuple[float, int]]] = {}
    for entity_id, label, source, n, first_id in conn.execute(
        _MENTION_LABELS, {"ids": sorted(set(entity_ids))}
    ):
        votes = out.setdefault(int(entity_id), {})
        total, first = votes.get(label, (0.0, int(first_id)))
        votes[label] = (total + int(n) * weight(label, source), min(first, int(first_id)))
    return out


def pick_label(
    votes: Mapping[str, tuple[float, Any]], preferred: Callable[[str], bool] | None = None
) -> str:
    """The label voted for an entity from ``label -> (mentions, first)``: the most frequent,
    a tie going to the label seen first so one odd mention does not flip an entity's label.
    Labels ``preferred`` accepts (the user's declared types) win over all others.

    Examples:
        >>> pick_label({"PERSON": (5, 1), "PROJECT": (1, 9)})
        'PERSON'
        >>> pick_label({"PERSON": (5, 1), "PROJECT": (1, 9)}, preferred=lambda x: x == "PROJECT")
        'PROJECT'
    """
    if preferred is not None and any(preferred(label) for label in votes):
        votes = {label: n for label, n in votes.items() if preferred(label)}
    return min(votes, key=lambda label: (-votes[label][0], votes[label][1], label))


def vote_labels(
    conn: Connection,
    entity_ids: Iterable[int],
    preferred: Callable[[str], bool] | None = None,
    weight: LabelWeight = _one_each,
) -> dict[int, str]:
    """Set each entity's label to the vote of its stored mentions (each counting
    ``weight``); returns the new labels."""
    counts = mention_label_counts(conn, list(entity_ids), weight)
    out = {e: pick_label(v, preferred) for e, v in counts.items()}
    write_batch(conn, entity_labels=[{"eid": e, "label": label} for e, label in out.items()])
    return out


def evidence_for(
    conn: Connection, relation_ids: Sequence[int], limit_each: int = 5
) -> dict[int, list[EvidenceRow]]:
    """The most recent evidence of each relation, newest first."""
    out: dict[int, list[EvidenceRow]] = {}
    if not relation_ids:
        return out

    # The item the evidence is shown as: the text's whole view if a tier shows it so (the
    # entity tier's "task result"), else its first item.
    def shown_as(column: Any) -> Any:
        return (
            select(column)
            .where(memories.c.text_id == relation_evidence.c.text_id)
            .order_by(memories.c.view != "full", memories.c.seq)
            .limit(1)
            .scalar_subquery()
        )

    stmt = (
        select(
            relation_evidence.c.relation_id,
            relation_evidence.c.rule,
            relation_evidence.c.sent_start,
            relation_evidence.c.sent_end,
            texts.c.head,
            texts.c.body,
            shown_as(memories.c.memory_id).label("memory_id"),
            shown_as(memories.c.created_at).label("created_at"),
        )
        .select_from(relation_evidence)
        .join(texts, texts.c.id == relation_evidence.c.text_id, isouter=True)
        .where(relation_evidence.c.relation_id.in_(list(relation_ids)))
        .order_by(relation_evidence.c.id.desc())
    )
    for r in conn.execute(stmt):
        bucket = out.setdefault(int(r.relation_id), [])
        if len(bucket) >= limit_each:
            continue
        content = shown_content(r.head, r.body, "full") if r.body is not None else None
        sentence = content[r.sent_start : r.sent_end] if content is not None else ""
        bucket.append(EvidenceRow(int(r.relation_id), r.memory_id, sentence, r.rule, r.created_at))
    return out


def prune_unsupported(conn: Connection, tenant: str) -> None:
    """Delete relations without evidence, then entities without mentions or relations."""
    has_evidence = select(relation_evidence.c.relation_id)
    conn.execute(
        delete(relations).where(relations.c.tenant == tenant, relations.c.id.not_in(has_evidence))
    )
    mentioned = select(mentions.c.entity_id)
    in_subject = select(relations.c.subject_id)
    in_object = select(relations.c.object_id)
    conn.execute(
        delete(entities).where(
            entities.c.tenant == tenant,
            entities.c.id.not_in(mentioned),
            entities.c.id.not_in(in_subject),
            entities.c.id.not_in(in_object),
        )
    )


def delete_relation(
    conn: Connection, tenant: str, subject_id: int, predicate: str, object_id: int
) -> int:
    """Delete one relation and its evidence, then what lost its support; returns the count."""
    removed = conn.execute(
        delete(relations).where(
            relations.c.tenant == tenant,
            relations.c.subject_id == subject_id,
            relations.c.predicate == predicate,
            relations.c.object_id == object_id,
        )
    ).rowcount
    if removed:
        prune_unsupported(conn, tenant)
    return int(removed or 0)


def delete_tenant_graph(conn: Connection, tenant: str) -> None:
    """Delete a tenant's whole graph: entities (cascading to aliases, mentions, relations and
    evidence, hand-added ones included), its merge log and the labels set by relabelling its
    entities. Declared entity patterns are settings of the database, and stay."""
    conn.execute(delete(entities).where(entities.c.tenant == tenant))
    conn.execute(delete(merges).where(merges.c.tenant == tenant))
    relabelled = read_setting(conn, RELABELLED_KEY) or {}
    if relabelled.pop(tenant, None) is not None:
        write_setting(conn, RELABELLED_KEY, relabelled)


def delete_index_rows(conn: Connection, text_id: int) -> None:
    """Remove a text's mentions and relation evidence (before re-indexing it), and take them
    off the stored counts."""
    lost = index_rows_of(conn, [text_id])
    subtract_counts(
        conn,
        {e: n for e, (_, _, n) in lost.mentions.items()},
        {r: row[4] for r, row in lost.evidence.items()},
    )
    conn.execute(delete(mentions).where(mentions.c.text_id == text_id))
    conn.execute(delete(relation_evidence).where(relation_evidence.c.text_id == text_id))


def merge_entity_rows(
    conn: Connection,
    tenant: str,
    keep_id: int,
    merge_id: int,
    preferred: Callable[[str], bool] | None = None,
    weight: LabelWeight = _one_each,
) -> dict[str, Any]:
    """Fold entity ``merge_id`` into ``keep_id``; returns a JSON-able snapshot for undo.
    The kept entity's label is voted again (``preferred``, ``weight``: as
    :func:`vote_labels`)."""
    e, r, ev = entities, relations, relation_evidence
    involved = conn.execute(
        select(r).where(
            r.c.tenant == tenant, (r.c.subject_id == merge_id) | (r.c.object_id == merge_id)
        )
    ).all()
    involved_ids = [row.id for row in involved]
    evidence = (
        conn.execute(select(ev).where(ev.c.relation_id.in_(involved_ids))).all()
        if involved_ids
        else []
    )
    snapshot: dict[str, Any] = {
        "kept_entity": dict(conn.execute(select(e).where(e.c.id == keep_id)).one()._mapping),
        "merged_entity": dict(conn.execute(select(e).where(e.c.id == merge_id)).one()._mapping),
        "aliases": [
            int(i)
            for i in conn.execute(
                select(aliases.c.id).where(aliases.c.entity_id == merge_id)
            ).scalars()
        ],
        "mentions": [
            int(i)
            for i in conn.execute(
                select(mentions.c.id).where(mentions.c.entity_id == merge_id)
            ).scalars()
        ],
        "relations": [dict(row._mapping) for row in involved],
        "evidence": [dict(row._mapping) for row in evidence],
        "kept_relations_before": [],
        "created_relations": [],
    }
    for rel in involved:
        subject = keep_id if rel.subject_id == merge_id else rel.subject_id
        obj = keep_id if rel.object_id == merge_id else rel.object_id
        if subject == obj:
            continue  # a relation between the two merged entities has nothing left to link
        existing = conn.execute(
            select(r).where(
                r.c.tenant == tenant,
                r.c.subject_id == subject,
                r.c.predicate == rel.predicate,
                r.c.object_id == obj,
            )
        ).first()
        if existing is None:
            created = conn.execute(
                insert(r).values(
                    tenant=tenant,
                    subject_id=subject,
                    predicate=rel.predicate,
                    object_id=obj,
                    confidence=float(rel.confidence),
                    first_seen=rel.first_seen,
                    last_seen=rel.last_seen,
                    valid_from=rel.valid_from,
                    valid_to=rel.valid_to,
                )
            )
            target = int(created.inserted_primary_key[0])  # type: ignore[index]
            snapshot["created_relations"].append(target)
        else:
            target = int(existing.id)
            if all(k["id"] != target for k in snapshot["kept_relations_before"]):
                snapshot["kept_relations_before"].append(dict(existing._mapping))
            conn.execute(
                update(r)
                .where(r.c.id == target)
                .values(
                    confidence=max(float(existing.confidence), float(rel.confidence)),
                    first_seen=min(existing.first_seen, rel.first_seen),
                    last_seen=max(existing.last_seen, rel.last_seen),
                )
            )
        conn.execute(update(ev).where(ev.c.relation_id == rel.id).values(relation_id=target))
    if involved_ids:
        conn.execute(delete(r).where(r.c.id.in_(involved_ids)))
    conn.execute(update(aliases).where(aliases.c.entity_id == merge_id).values(entity_id=keep_id))
    conn.execute(update(mentions).where(mentions.c.entity_id == merge_id).values(entity_id=keep_id))
    kept, merged = snapshot["kept_entity"], snapshot["merged_entity"]
    conn.execute(delete(e).where(e.c.id == merge_id))
    conn.execute(
        update(e)
        .where(e.c.id == keep_id)
        .values(
            first_seen=min(kept["first_seen"], merged["first_seen"]),
            last_seen=max(kept["last_seen"], merged["last_seen"]),
        )
    )
    vote_labels(conn, [keep_id], preferred, weight)
    recount(conn, [keep_id], _relations_of(conn, [keep_id]))
    return snapshot


#: The snapshot a merge keeps once everything it moved was forgotten (its names go too).
FORGOTTEN_MERGE = "forgotten"


def unmerge_entity_rows(conn: Connection, snapshot: dict[str, Any]) -> bool:
    """Undo :func:`merge_entity_rows` from its snapshot. Rows forgotten since the merge
    (texts deleted, entities pruned) are not put back: a relation stays away when one of its
    ends is gone, evidence when its text or relation is. Returns whether some were left out
    (the caller then reads the two entities' derived fields again from their rows)."""
    if snapshot.get(FORGOTTEN_MERGE):
        return False
    e, r, ev = entities, relations, relation_evidence
    merged_id = snapshot["merged_entity"]["id"]
    alive = {merged_id} | set(
        conn.execute(select(e.c.id).where(e.c.id.in_(sorted(_snapshot_entities(snapshot)))))
        .scalars()
        .all()
    )
    text_ids = sorted({row["text_id"] for row in snapshot["evidence"] if row["text_id"]})
    texts_alive = set(conn.execute(select(texts.c.id).where(texts.c.id.in_(text_ids))).scalars())
    partial = snapshot["kept_entity"]["id"] not in alive
    conn.execute(insert(e).values(**snapshot["merged_entity"]))
    restored: set[int] = set()
    for row in snapshot["relations"]:
        if row["subject_id"] in alive and row["object_id"] in alive:
            conn.execute(insert(r).values(**row))
            restored.add(row["id"])
        else:
            partial = True
    for row in snapshot["evidence"]:
        if row["relation_id"] not in restored or (
            row["text_id"] is not None and row["text_id"] not in texts_alive
        ):
            partial = True
            continue
        moved = conn.execute(
            update(ev).where(ev.c.id == row["id"]).values(relation_id=row["relation_id"])
        )
        if not moved.rowcount:
            conn.execute(insert(ev).values(**row))
    for row in snapshot["kept_relations_before"]:
        conn.execute(update(r).where(r.c.id == row["id"]).values(**row))
    if snapshot["created_relations"]:
        conn.execute(delete(r).where(r.c.id.in_(snapshot["created_relations"])))
    if snapshot["aliases"]:
        conn.execute(
            update(aliases).where(aliases.c.id.in_(snapshot["aliases"])).values(entity_id=merged_id)
        )
    if snapshot["mentions"]:
        conn.execute(
            update(mentions)
            .where(mentions.c.id.in_(snapshot["mentions"]))
            .values(entity_id=merged_id)
        )
    kept = snapshot["kept_entity"]
    conn.execute(update(e).where(e.c.id == kept["id"]).values(**kept))
    both = [kept["id"], merged_id]
    recount(conn, both, _relations_of(conn, both))
    return partial


def _relations_of(conn: Connection, entity_ids: Sequence[int]) -> list[int]:
    """Ids of the relations with one of ``entity_ids`` as subject or object."""
    return [
        int(r)
        for r in conn.execute(
            select(relations.c.id).where(
                relations.c.subject_id.in_(list(entity_ids))
                | relations.c.object_id.in_(list(entity_ids))
            )
        ).scalars()
    ]


def log_merge(
    conn: Connection,
    tenant: str,
    kept_key: str,
    merged_key: str,
    snapshot: dict[str, Any],
    by_hand: bool = False,
) -> int:
    """Record a merge and its undo snapshot (``by_hand``: the user asked for it, not
    indexing); returns the merge id."""
    result = conn.execute(
        insert(merges).values(
            tenant=tenant,
            kept_key=kept_key,
            merged_key=merged_key,
            snapshot=json.dumps(snapshot),
            created_at=time_text(utc_now()),
            by_hand=int(by_hand),
        )
    )
    pk = result.inserted_primary_key
    assert pk is not None
    return int(pk[0])


def take_merge(conn: Connection, tenant: str, merge_id: int) -> dict[str, Any]:
    """The snapshot of a merge that can be undone now; marks it undone.

    Raises:
        InvalidArgumentError: unknown id, already undone, or a later merge of the same
            entities is still in place.
    """
    row = conn.execute(
        select(merges).where(merges.c.id == merge_id, merges.c.tenant == tenant)
    ).first()
    if row is None:
        raise InvalidArgumentError(f"no merge with id {merge_id}")
    if row.undone_at is not None:
        raise InvalidArgumentError(f"merge {merge_id} was already undone")
    snapshot: dict[str, Any] = json.loads(row.snapshot)
    if snapshot.get(FORGOTTEN_MERGE):  # everything it moved was forgotten: nothing to undo
        conn.execute(
            update(merges).where(merges.c.id == merge_id).values(undone_at=time_text(utc_now()))
        )
        return snapshot
    later = conn.execute(
        select(merges.c.id).where(
            merges.c.tenant == tenant,
            merges.c.id > merge_id,
            merges.c.undone_at.is_(None),
            merges.c.kept_key.in_([row.kept_key, row.merged_key])
            | merges.c.merged_key.in_([row.kept_key, row.merged_key]),
        )
    ).first()
    if later is not None:
        raise InvalidArgumentError(f"undo merge {later.id} before merge {merge_id}")
    # A later merge that folded away an entity this one's relations link to (Bob Stone <-
    # Robert Stone, then Dana Scott <- Carol King, Robert and Carol having met) holds rows
    # this undo would restore: those relations would point at an entity that is gone.
    touched = _snapshot_entities(snapshot)
    for later_id, later_snapshot in conn.execute(
        select(merges.c.id, merges.c.snapshot)
        .where(merges.c.tenant == tenant, merges.c.id > merge_id, merges.c.undone_at.is_(None))
        .order_by(merges.c.id.desc())
    ):
        folded = json.loads(later_snapshot)
        if folded.get(FORGOTTEN_MERGE):
            continue
        if {folded["kept_entity"]["id"], folded["merged_entity"]["id"]} & touched:
            raise InvalidArgumentError(
                f"undo merge {later_id} ({folded['merged_entity']['name']!r} into "
                f"{folded['kept_entity']['name']!r}) before merge {merge_id}: it changed "
                "relations this merge moved"
            )
    conn.execute(
        update(merges).where(merges.c.id == merge_id).values(undone_at=time_text(utc_now()))
    )
    return snapshot


def _snapshot_entities(snapshot: Mapping[str, Any]) -> set[int]:
    """The entities a merge's snapshot refers to: the two merged and every end of the
    relations it moved."""
    out = {int(snapshot["kept_entity"]["id"]), int(snapshot["merged_entity"]["id"])}
    for row in [*snapshot.get("relations", ()), *snapshot.get("kept_relations_before", ())]:
        out.update((int(row["subject_id"]), int(row["object_id"])))
    return out


def next_relation_id(conn: Connection) -> int:
    """The id SQLite gives the next relation inserted (one past the largest ever given out:
    ids are never reused), so a batch can name its new relations before :func:`write_batch`
    inserts them."""
    return int(conn.execute(_NEXT_RELATION_ID[conn.dialect.name]).scalar_one())


def write_batch(
    conn: Connection,
    *,
    new_mentions: Sequence[dict[str, Any]] = (),
    new_relations: Sequence[dict[str, Any]] = (),
    relation_updates: Sequence[dict[str, Any]] = (),
    evidence: Sequence[dict[str, Any]] = (),
    entity_touches: Sequence[dict[str, Any]] = (),
    entity_labels: Sequence[dict[str, Any]] = (),
    text_labels: Sequence[dict[str, Any]] = (),
) -> None:
    """Apply an indexing batch with one statement per kind (``executemany``).

    ``new_mentions``, ``new_relations`` (with their ``id`` and ``support``) and ``evidence``:
    rows of ``mentions``, ``relations`` and ``relation_evidence``; ``relation_updates``:
    ``{"rid", "confidence", "first_seen", "last_seen", "valid_from", "valid_to", "support"}``;
    ``entity_touches``: ``{"eid", "first_seen", "last_seen", "mentions"}``; ``entity_labels``: ``{"eid",
    "label"}``; ``text_labels``: ``{"tid", "labels"}``.
    """
    if new_mentions:
        conn.execute(_INSERT_MENTIONS, list(new_mentions))
    if new_relations:
        conn.execute(_INSERT_RELATION, list(new_relations))
        if conn.dialect.name == "postgresql":
            largest = max(int(r["id"]) for r in new_relations)
            conn.execute(_PAST_PG_RELATION_IDS, {"largest": largest})
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


_SUBJECT = entities.alias("subj")
_OBJECT = entities.alias("obj")
# Run on every eviction (one row at a time when a short-term tier is full): built once.
_MENTIONS_OF_TEXTS = (
    select(
        mentions.c.entity_id,
        entities.c.tenant,
        entities.c.key,
        func.count(),
        func.max(mentions.c.id),
    )
    .join(entities, entities.c.id == mentions.c.entity_id)
    .where(mentions.c.text_id.in_(bindparam("ids", expanding=True)))
    .group_by(mentions.c.entity_id, entities.c.tenant, entities.c.key)
)
_EVIDENCE_OF_TEXTS = (
    select(
        relation_evidence.c.relation_id,
        relations.c.tenant,
        _SUBJECT.c.key,
        relations.c.predicate,
        _OBJECT.c.key,
        func.count(),
        func.max(relation_evidence.c.id),
    )
    .join(relations, relations.c.id == relation_evidence.c.relation_id)
    .join(_SUBJECT, _SUBJECT.c.id == relations.c.subject_id)
    .join(_OBJECT, _OBJECT.c.id == relations.c.object_id)
    .where(relation_evidence.c.text_id.in_(bindparam("ids", expanding=True)))
    .group_by(
        relation_evidence.c.relation_id,
        relations.c.tenant,
        _SUBJECT.c.key,
        relations.c.predicate,
        _OBJECT.c.key,
    )
)


def typed_relations_of(
    conn: Connection, entity_ids: Sequence[int], per_entity: int
) -> list[tuple[int, RelationRow]]:
    """Each entity's ``per_entity`` strongest typed relations (no ``co_occurs``), with it at
    either end, as ``(entity id, relation)``: current ones before ended ones, weak ones
    (confidence under :data:`WEAK_CONFIDENCE`) after the others, then by support, then the
    newest first. What a context says about the entities its task names,
    read without loading the tenant's graph (a relation between two of them comes once
    for each)."""
    ids = sorted(set(entity_ids))
    if not ids or per_entity <= 0:
        return []
    rows = conn.execute(_TYPED_RELATIONS_OF, {"ids": ids, "n": per_entity}).all()
    return [
        (
            int(r.end_id),
            RelationRow(
                int(r.id),
                r.subject_key,
                r.predicate,
                r.object_key,
                float(r.confidence),
                r.first_seen,
                r.last_seen,
                r.valid_from,
                r.valid_to,
                int(r.support),
            ),
        )
        for r in rows
    ]


#: Below this confidence a relation is weak: listed after the others of its entity.
WEAK_CONFIDENCE = 0.5

_STRONGEST_FIRST = (
    case((relations.c.valid_to.is_(None), 0), else_=1),
    case((relations.c.confidence < WEAK_CONFIDENCE, 1), else_=0),
    relations.c.support.desc(),
    func.coalesce(relations.c.valid_from, "").desc(),
    relations.c.id.desc(),
)


def _ranked_at(end: Any) -> Any:
    """The typed relations with one of the ``ids`` at ``end``, ranked per entity."""
    return select(
        relations.c.id.label("rid"),
        end.label("end_id"),
        func.row_number().over(partition_by=end, order_by=_STRONGEST_FIRST).label("rank"),
    ).where(end.in_(bindparam("ids", expanding=True)), TYPED_RELATION)  # its partial indexes


_RANKED = union_all(
    _ranked_at(relations.c.subject_id), _ranked_at(relations.c.object_id)
).subquery()
_TYPED_RELATIONS_OF = (
    select(
        _RANKED.c.end_id,
        relations.c.id,
        _SUBJECT.c.key.label("subject_key"),
        relations.c.predicate,
        _OBJECT.c.key.label("object_key"),
        relations.c.confidence,
        relations.c.first_seen,
        relations.c.last_seen,
        relations.c.valid_from,
        relations.c.valid_to,
        relations.c.support,
    )
    .join(relations, relations.c.id == _RANKED.c.rid)
    .join(_SUBJECT, _SUBJECT.c.id == relations.c.subject_id)
    .join(_OBJECT, _OBJECT.c.id == relations.c.object_id)
    .where(_RANKED.c.rank <= bindparam("n"))
    .order_by(_RANKED.c.end_id, _RANKED.c.rank)
)


# EXISTS stops at the first row: an entity of a thousand mentions costs one probe.
_WITH_EVIDENCE = select(relations.c.id).where(
    relations.c.id.in_(bindparam("ids", expanding=True)),
    exists().where(relation_evidence.c.relation_id == relations.c.id),
)
_IN_USE = select(entities.c.id).where(
    entities.c.id.in_(bindparam("ids", expanding=True)),
    exists().where(mentions.c.entity_id == entities.c.id)
    | exists().where(relations.c.subject_id == entities.c.id)
    | exists().where(relations.c.object_id == entities.c.id),
)


@dataclass
class IndexRows:
    """What deleting some texts takes away from the graph (:func:`index_rows_of`)."""

    #: ``entity_id -> (tenant, key, mentions in them)``
    mentions: dict[int, tuple[str, str, int]]
    #: ``relation_id -> (tenant, subject key, predicate, object key, evidence rows in them)``
    evidence: dict[int, tuple[str, str, str, str, int]]
    #: The largest id of their mention rows and of their evidence rows (None: they have none).
    newest_mention: int | None = None
    newest_evidence: int | None = None


def index_rows_of(conn: Connection, text_ids: Sequence[int]) -> IndexRows:
    """What deleting these texts takes away from the graph."""
    found = IndexRows({}, {})
    ents, rels = found.mentions, found.evidence
    for start in range(0, len(text_ids), 500):
        chunk = {"ids": list(text_ids[start : start + 500])}
        for entity_id, tenant, key, n, last in conn.execute(_MENTIONS_OF_TEXTS, chunk):
            previous = ents.get(int(entity_id), (tenant, key, 0))[2]
            ents[int(entity_id)] = (tenant, key, previous + int(n))
            found.newest_mention = max(int(last), found.newest_mention or 0)
        for rid, tenant, s_key, predicate, o_key, n, last in conn.execute(
            _EVIDENCE_OF_TEXTS, chunk
        ):
            previous_n = rels.get(int(rid), (tenant, s_key, predicate, o_key, 0))[4]
            rels[int(rid)] = (tenant, s_key, predicate, o_key, previous_n + int(n))
            found.newest_evidence = max(int(last), found.newest_evidence or 0)
    return found


_NEWEST_IDS = select(
    select(func.max(mentions.c.id)).scalar_subquery(),
    select(func.max(relation_evidence.c.id)).scalar_subquery(),
)


def newest_ids(conn: Connection) -> tuple[int | None, int | None]:
    """The largest id of ``mentions`` and of ``relation_evidence`` (None when empty)."""
    mention, evidence = conn.execute(_NEWEST_IDS).one()
    return mention, evidence


def prune_candidates(
    conn: Connection,
    relation_ids: Iterable[int],
    entity_ids: Iterable[int],
    *,
    supported: Set[int] = frozenset(),
    in_use: Set[int] = frozenset(),
) -> tuple[set[int], set[int]]:
    """Delete these relations if left without evidence, then these entities (and the ends of
    the deleted relations) if left without mentions and relations. Returns the deleted ids.

    ``supported`` (relations) and ``in_use`` (entities): ids kept alive by rows not written
    yet (the entity index's pending batch).
    """
    rel_candidates = sorted(set(relation_ids))
    gone_relations: set[int] = set()
    ends: set[int] = set()
    for start in range(0, len(rel_candidates), 500):
        chunk = rel_candidates[start : start + 500]
        kept = set(conn.execute(_WITH_EVIDENCE, {"ids": chunk}).scalars())
        kept |= supported & set(chunk)
        unsupported = [r for r in chunk if r not in kept]
        if unsupported:
            for s_id, o_id in conn.execute(
                select(relations.c.subject_id, relations.c.object_id).where(
                    relations.c.id.in_(unsupported)
                )
            ):
                ends.update((int(s_id), int(o_id)))
            conn.execute(delete(relations).where(relations.c.id.in_(unsupported)))
            gone_relations.update(unsupported)
    ent_candidates = sorted(set(entity_ids) | ends)
    gone_entities: set[int] = set()
    for start in range(0, len(ent_candidates), 500):
        chunk = ent_candidates[start : start + 500]
        busy = set(conn.execute(_IN_USE, {"ids": chunk}).scalars())
        busy |= in_use & set(chunk)
        idle = [e for e in chunk if e not in busy]
        if idle:
            conn.execute(delete(entities).where(entities.c.id.in_(idle)))
            gone_entities.update(idle)
    return gone_relations, gone_entities


# ---------------------------------------------------------------------- declared types
#: ``graphmem_meta`` keys of what the user declared: entity-ruler patterns (every tenant's),
#: and the labels set by relabelling (``tenant -> entity key -> label``).
DECLARED_PATTERNS_KEY = "entity_patterns"
RELABELLED_KEY = "entity_labels"


def read_setting(conn: Connection, key: str) -> Any:
    """The JSON value stored under ``key`` in ``graphmem_meta`` (None when absent)."""
    value = conn.execute(select(meta.c.value).where(meta.c.key == key)).scalar()
    return None if value is None else json.loads(value)


def write_setting(conn: Connection, key: str, value: Any) -> None:
    """Store ``value`` (JSON) under ``key`` in ``graphmem_meta``."""
    text = json.dumps(value, sort_keys=True)
    if conn.execute(update(meta).where(meta.c.key == key).values(value=text)).rowcount == 0:
        conn.execute(insert(meta).values(key=key, value=text))


def set_entity_label(conn: Connection, entity_id: int, label: str) -> None:
    """Give an entity and every mention of it ``label`` (so later votes keep it)."""
    conn.execute(update(entities).where(entities.c.id == entity_id).values(label=label))
    conn.execute(update(mentions).where(mentions.c.entity_id == entity_id).values(label=label))


def alias_labels(conn: Connection, entity_id: int) -> dict[str, str]:
    """The surfaces an entity's mentions were written as -> the label most of them carry."""
    counts: dict[str, dict[str, int]] = {}
    rows = conn.execute(
        select(mentions.c.surface, mentions.c.label, func.count())
        .where(mentions.c.entity_id == entity_id)
        .group_by(mentions.c.surface, mentions.c.label)
    )
    for surface, label, n in rows:
        counts.setdefault(surface, {})[label] = int(n)
    return {s: max(v, key=lambda label: (v[label], label)) for s, v in counts.items()}


def entity_ids_named(conn: Connection, keys: Sequence[str]) -> list[tuple[str, str, int]]:
    """``(tenant, alias key, entity id)`` of every entity, of any tenant, one of whose
    aliases has a key of ``keys``."""
    if not keys:
        return []
    rows = conn.execute(
        select(aliases.c.tenant, aliases.c.key, aliases.c.entity_id)
        .where(aliases.c.key.in_(sorted(set(keys))))
        .order_by(aliases.c.id)
    )
    return [(str(t), str(k), int(e)) for t, k, e in rows]
