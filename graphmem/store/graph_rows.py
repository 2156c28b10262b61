"""SQL for the knowledge graph: entities, aliases, mentions, relations and their evidence.

Functions take the caller's connection so that a memory, its mentions and its relations are
written in one transaction. Support counting: a relation lives while it has evidence, an
entity while it has mentions or hand-added relations (:func:`prune_unsupported`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Connection,
    Select,
    bindparam,
    case,
    delete,
    exists,
    func,
    insert,
    select,
    union_all,
)

from .batch_rows import (
    EntityLabel,
    EntityTouch,
    EvidenceInsert,
    MentionInsert,
    RelationInsert,
    RelationUpdate,
    TextLabels,
    next_relation_id,
    recount,
    subtract_counts,
    write_batch,
)
from .label_rows import (
    DECLARED_PATTERNS_KEY,
    RELABELLED_KEY,
    LabelWeight,
    alias_labels,
    damaged_setting,
    drop_gone_relabels,
    mention_label_counts,
    pick_label,
    read_setting,
    set_entity_label,
    vote_labels,
    write_setting,
)
from .memory_rows import shown_content, shows_mention
from .merge_rows import (
    FORGOTTEN_MERGE,
    log_merge,
    merge_entity_rows,
    take_merge,
    unmerge_entity_rows,
)
from .schema import (
    TYPED_RELATION,
    aliases,
    entities,
    memories,
    mentions,
    merges,
    relation_evidence,
    relations,
    texts,
)

__all__ = [
    "EntityLabel",
    "EntityTouch",
    "EvidenceInsert",
    "LabelWeight",
    "MentionInsert",
    "RelationInsert",
    "RelationUpdate",
    "TextLabels",
    "delete_relations",
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
    "recount",
    "subtract_counts",
    "tier_entity_mentions",
    "tier_mention_counts",
    "typed_relations_of",
    "vote_labels",
    "DECLARED_PATTERNS_KEY",
    "FORGOTTEN_MERGE",
    "RELABELLED_KEY",
    "damaged_setting",
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


def strongest_links(
    conn: Connection, entity_id: int, n: int | None, predicate: str | None = None
) -> list[tuple[int, str]]:
    """The ``n`` entities (None: all) linked to ``entity_id`` by the strongest relations
    (either direction; of ``predicate`` only when given), as ``(support of the strongest,
    entity key)``, strongest first (ties by key, as
    :meth:`KnowledgeGraph.strongest_neighbours` orders them)."""
    if predicate is None and n is not None:  # a context's expansion: prebuilt
        rows = conn.execute(_STRONGEST_LINKS, {"eid": entity_id, "n": n}).all()
    else:
        stmt = _strongest_links(predicate is not None)
        stmt = stmt.limit(n) if n is not None else stmt
        rows = conn.execute(stmt, {"eid": entity_id, "predicate": predicate}).all()
    return [(int(support), str(key)) for key, support in rows]


def _strongest_links(of_predicate: bool) -> Select[Any]:
    ends = [("object_id", "subject_id"), ("subject_id", "object_id")]
    links = union_all(
        *(
            select(relations.c[other].label("other"), relations.c.support).where(
                relations.c[end] == bindparam("eid"),
                *([relations.c.predicate == bindparam("predicate")] if of_predicate else []),
            )
            for other, end in ends
        )
    ).subquery()
    return (
        select(entities.c.key, func.max(links.c.support).label("strength"))
        .join(entities, entities.c.id == links.c.other)
        .where(links.c.other != bindparam("eid"))
        .group_by(entities.c.key)
        .order_by(func.max(links.c.support).desc(), entities.c.key)
    )


_STRONGEST_LINKS = _strongest_links(False).limit(bindparam("n"))


def count_texts(conn: Connection, tenant: str) -> int:
    """How many texts ``tenant`` has (the scale of an entity's rarity)."""
    return int(conn.execute(_COUNT_TENANT_TEXTS, {"tenant": tenant}).scalar() or 0)


_COUNT_TENANT_TEXTS = (
    select(func.count()).select_from(texts).where(texts.c.tenant == bindparam("tenant"))
)


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
    gone = conn.execute(
        delete(entities).where(
            entities.c.tenant == tenant,
            entities.c.id.not_in(mentioned),
            entities.c.id.not_in(in_subject),
            entities.c.id.not_in(in_object),
        )
    ).rowcount
    if gone:
        drop_gone_relabels(conn)


def delete_relations(
    conn: Connection,
    tenant: str,
    triples: Sequence[tuple[int, str, int]],
    *,
    by_hand_only: bool = False,
) -> int:
    """Delete relations ``(subject id, predicate, object id)`` and their evidence, or with
    ``by_hand_only`` only their evidence added by hand (rule ``manual``: what texts gave
    stays), then what lost its support; returns how many relations were touched."""
    touched = 0
    ev = relation_evidence
    for subject_id, predicate, object_id in triples:
        relation_id = conn.execute(
            select(relations.c.id).where(
                relations.c.tenant == tenant,
                relations.c.subject_id == subject_id,
                relations.c.predicate == predicate,
                relations.c.object_id == object_id,
            )
        ).scalar()
        if relation_id is None:
            continue
        if not by_hand_only:
            conn.execute(delete(relations).where(relations.c.id == relation_id))
            touched += 1
            continue
        gone = conn.execute(
            delete(ev).where(
                ev.c.relation_id == relation_id, ev.c.rule == "manual", ev.c.text_id.is_(None)
            )
        ).rowcount
        if gone:
            subtract_counts(conn, {}, {int(relation_id): int(gone)})
            touched += 1
    if touched:
        prune_unsupported(conn, tenant)
    return touched


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
    """The typed relations with one of the ``ids`` at ``end``, ranked per entity (each row
    whole, so that no second read of ``relations`` joins them back by id)."""
    return select(
        end.label("end_id"),
        *relations.c,
        func.row_number().over(partition_by=end, order_by=_STRONGEST_FIRST).label("rank"),
    ).where(end.in_(bindparam("ids", expanding=True)), TYPED_RELATION)  # its partial indexes


_RANKED = union_all(
    _ranked_at(relations.c.subject_id), _ranked_at(relations.c.object_id)
).subquery()
_TYPED_RELATIONS_OF = (
    select(
        _RANKED.c.end_id,
        _RANKED.c.id,
        _SUBJECT.c.key.label("subject_key"),
        _RANKED.c.predicate,
        _OBJECT.c.key.label("object_key"),
        _RANKED.c.confidence,
        _RANKED.c.first_seen,
        _RANKED.c.last_seen,
        _RANKED.c.valid_from,
        _RANKED.c.valid_to,
        _RANKED.c.support,
    )
    .select_from(_RANKED)
    .join(_SUBJECT, _SUBJECT.c.id == _RANKED.c.subject_id)
    .join(_OBJECT, _OBJECT.c.id == _RANKED.c.object_id)
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
    if gone_entities:
        drop_gone_relabels(conn)
    return gone_relations, gone_entities


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
