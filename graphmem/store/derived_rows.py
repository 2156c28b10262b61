"""SQL that sets what the graph derives from its evidence, from the rows that remain.

After texts are forgotten (or re-analysed), an entity's mention count, first and last seen,
name, aliases and label, and a relation's support and first and last seen, are read again from
the mentions and evidence left, never adjusted by subtraction: what a forgotten text gave is
gone with it. The time of a text is the time of its items (``memories.created_at``, the time
its statements were made).

Example:
    >>> from graphmem.store import Database, derived_rows
    >>> db = Database("sqlite://")
    >>> with db.write() as conn:
    ...     derived_rows.recount_entities(
    ...         conn, "", [1], preferred=None, pinned={}, canonical=str.casefold
    ...     )
    {}
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, bindparam, case, delete, func, select, update

from .graph_rows import FORGOTTEN_MERGE, LabelWeight, add_alias, mention_label_counts, pick_label
from .schema import (
    TYPED_RELATION,
    aliases,
    entities,
    memories,
    mentions,
    merges,
    relation_evidence,
    relations,
)

__all__ = [
    "RelationTimes",
    "entity_names_of_text",
    "forget_merges",
    "recount_entities",
    "relation_ends",
    "recount_relations",
    "write_validity",
]


def _text_time(text_id: Any) -> Any:
    """The time of a text: the earliest of its items' times (one index probe)."""
    return (
        select(func.min(memories.c.created_at))
        .where(memories.c.text_id == text_id)
        .scalar_subquery()
    )


_MENTION_SEEN = _text_time(mentions.c.text_id)
_IN_ENTITIES = mentions.c.entity_id.in_(bindparam("ids", expanding=True))
#: Per entity: its mentions, and the first and last time one was made.
_MENTION_STATS = (
    select(mentions.c.entity_id, func.count(), func.min(_MENTION_SEEN), func.max(_MENTION_SEEN))
    .where(_IN_ENTITIES)
    .group_by(mentions.c.entity_id)
)
#: Per entity: each surface form its mentions use, with the id of its first mention.
_MENTION_SURFACES = (
    select(mentions.c.entity_id, mentions.c.surface, func.min(mentions.c.id))
    .where(_IN_ENTITIES)
    .group_by(mentions.c.entity_id, mentions.c.surface)
)
_EVIDENCE_SEEN = _text_time(relation_evidence.c.text_id)
_IN_RELATIONS = relation_evidence.c.relation_id.in_(bindparam("ids", expanding=True))
#: Per relation: its evidence rows, the first and last time one was made, and whether one was
#: added by hand.
_EVIDENCE_STATS = (
    select(
        relation_evidence.c.relation_id,
        func.count(),
        func.min(_EVIDENCE_SEEN),
        func.max(_EVIDENCE_SEEN),
        func.max(case((relation_evidence.c.rule == "manual", 1), else_=0)),
    )
    .where(_IN_RELATIONS)
    .group_by(relation_evidence.c.relation_id)
)
_EVIDENCE_TIMES = select(relation_evidence.c.relation_id, _EVIDENCE_SEEN).where(
    _IN_RELATIONS, relation_evidence.c.text_id.is_not(None)
)


def _chunks(values: Iterable[int], size: int = 500) -> Iterable[list[int]]:
    ordered = sorted(set(values))
    for start in range(0, len(ordered), size):
        yield ordered[start : start + size]


def recount_entities(
    conn: Connection,
    tenant: str,
    entity_ids: Collection[int],
    *,
    preferred: Callable[[str], bool] | None,
    pinned: Mapping[str, str],
    canonical: Callable[[str], str],
    weight: LabelWeight | None = None,
) -> dict[int, str]:
    """Set each entity's mention count, first/last seen, label, name and aliases from its
    remaining mentions; returns ``entity id -> new key`` of the entities renamed.

    An entity whose own name no remaining mention says takes the name of its first remaining
    mention (a full name only a forgotten text gave goes with it); an alias no remaining
    mention says is dropped. An entity without mentions (kept by a hand-added relation) keeps
    its name, aliases and times. ``preferred``: labels that win the vote (declared types);
    ``pinned``: ``entity key -> label`` set by relabelling; ``canonical``: the alias key of
    a surface form; ``weight``: what one mention's label counts in the vote (one each by
    default; :func:`graphmem.store.graph_rows.mention_label_counts`).
    """
    renamed: dict[int, str] = {}
    for chunk in _chunks(entity_ids):
        stats = {int(e): (int(n), first, last) for e, n, first, last in conn.execute(
            _MENTION_STATS, {"ids": chunk}
        )}  # fmt: skip
        surfaces: dict[int, list[tuple[int, str]]] = {}
        for e, surface, first_id in conn.execute(_MENTION_SURFACES, {"ids": chunk}):
            surfaces.setdefault(int(e), []).append((int(first_id), surface))
        votes = (
            mention_label_counts(conn, chunk, weight)
            if weight is not None
            else mention_label_counts(conn, chunk)
        )
        current = {
            int(r.id): r
            for r in conn.execute(
                select(entities).where(entities.c.id.in_(chunk), entities.c.tenant == tenant)
            ).all()
        }
        for entity_id, entity in current.items():
            if entity_id not in stats:
                continue  # no mention left: kept by a hand-added relation, as it was
            count, first_seen, last_seen = stats[entity_id]
            forms = sorted(surfaces[entity_id])
            said = {canonical(surface): surface for _, surface in reversed(forms)}
            key, name = entity.key, entity.name
            if key not in said:
                new_key = canonical(forms[0][1])
                taken = conn.execute(
                    select(entities.c.id).where(
                        entities.c.tenant == tenant, entities.c.key == new_key
                    )
                ).first()
                if taken is None:
                    key, name = new_key, forms[0][1]
                    renamed[entity_id] = key
            label = pinned.get(entity.key) or pick_label(votes[entity_id], preferred)
            conn.execute(
                update(entities)
                .where(entities.c.id == entity_id)
                .values(
                    key=key,
                    name=name,
                    label=label,
                    mentions=count,
                    first_seen=first_seen or entity.first_seen,
                    last_seen=last_seen or entity.last_seen,
                )
            )
            conn.execute(
                delete(aliases).where(
                    aliases.c.entity_id == entity_id,
                    aliases.c.key.not_in([*said, key]),
                )
            )
            add_alias(conn, tenant, key, name, entity_id)
    return renamed


@dataclass
class RelationTimes:
    """A relation's stored row and the times of its remaining statements (oldest first)."""

    id: int
    subject_id: int
    predicate: str
    object_id: int
    first_seen: str
    last_seen: str
    valid_from: str | None
    valid_to: str | None
    support: int
    times: list[str]
    #: Whether a hand-added statement (rule ``manual``) supports it: its times are the caller's.
    manual: bool


def recount_relations(
    conn: Connection,
    tenant: str,
    relation_ids: Collection[int] = (),
    subject_ids: Collection[int] = (),
) -> list[RelationTimes]:
    """Set the support and first/last seen of these relations from their remaining evidence;
    returns them, and every typed relation of these subjects, with their statement times, for
    :func:`write_validity`. Relations without evidence are left to pruning."""
    typed: set[int] = set()
    for chunk in _chunks(subject_ids):
        typed.update(
            int(r)
            for r in conn.execute(
                select(relations.c.id).where(
                    relations.c.subject_id.in_(chunk),
                    relations.c.tenant == tenant,
                    TYPED_RELATION,
                )
            ).scalars()
        )
    lost = set(relation_ids)
    out: list[RelationTimes] = []
    for chunk in _chunks(lost | typed):
        rows = conn.execute(
            select(relations).where(relations.c.id.in_(chunk), relations.c.tenant == tenant)
        ).all()
        # An open relation that lost no statement keeps its row as it is (its times are its
        # statements'); only those that lost some, or had ended, are read from the evidence.
        read = [int(r.id) for r in rows if int(r.id) in lost or r.valid_to is not None]
        stats = {
            int(rid): (int(n), first, last, bool(manual))
            for rid, n, first, last, manual in conn.execute(_EVIDENCE_STATS, {"ids": read})
        }
        for r in rows:
            if int(r.id) not in read:
                stats[int(r.id)] = (int(r.support), r.first_seen, r.last_seen, False)
        times: dict[int, list[str]] = {}
        wanted = [r for r in read if r in typed]
        if wanted:
            for rid, seen in conn.execute(_EVIDENCE_TIMES, {"ids": wanted}):
                if seen is not None:
                    times.setdefault(int(rid), []).append(seen)
        for r in rows:
            rid = int(r.id)
            if rid not in stats:
                continue
            support, first, last, manual = stats[rid]
            if manual or first is None:  # a hand-added statement's times are the caller's
                first = min(r.first_seen, first) if first else r.first_seen
                last = max(r.last_seen, last) if last else r.last_seen
            if rid in lost:
                conn.execute(
                    update(relations)
                    .where(relations.c.id == rid)
                    .values(support=support, first_seen=first, last_seen=last)
                )
            stated = sorted(times.get(rid, [])) if rid in wanted else [first]
            out.append(
                RelationTimes(
                    rid,
                    int(r.subject_id),
                    r.predicate,
                    int(r.object_id),
                    first,
                    last,
                    r.valid_from,
                    r.valid_to,
                    support,
                    stated,
                    manual,
                )
            )
    return out


def relation_ends(conn: Connection, relation_ids: Collection[int]) -> set[int]:
    """The entity ids at either end of these relations."""
    out: set[int] = set()
    for chunk in _chunks(relation_ids):
        for subject, obj in conn.execute(
            select(relations.c.subject_id, relations.c.object_id).where(relations.c.id.in_(chunk))
        ):
            out.update((int(subject), int(obj)))
    return out


def entity_names_of_text(conn: Connection, text_id: int) -> list[str]:
    """The names of the entities a text mentions, in the order it first mentions them."""
    rows = conn.execute(
        select(entities.c.name, func.min(mentions.c.start).label("first"))
        .join(entities, entities.c.id == mentions.c.entity_id)
        .where(mentions.c.text_id == text_id)
        .group_by(entities.c.id, entities.c.name)
        .order_by("first", entities.c.id)
    ).all()
    return [str(name) for name, _ in rows]


def forget_merges(conn: Connection, tenant: str) -> int:
    """Scrub the merge-log rows of ``tenant`` that only keep what was forgotten (their
    snapshots hold names and times of the texts they touched): an undone merge is deleted
    (its snapshot is history nothing reads); a pending one none of whose moved mentions and
    evidence rows is left keeps its id, with no names and nothing to undo (``unmerge`` then
    only marks it undone). Returns how many rows changed."""
    gone: list[int] = []
    emptied: list[int] = []
    for merge_id, snapshot, undone_at in conn.execute(
        select(merges.c.id, merges.c.snapshot, merges.c.undone_at).where(merges.c.tenant == tenant)
    ):
        if undone_at is not None:
            gone.append(int(merge_id))
            continue
        moved = json.loads(snapshot)
        if moved.get(FORGOTTEN_MERGE):
            continue
        mention_ids = [int(i) for i in moved.get("mentions", ())]
        evidence_ids = [int(e["id"]) for e in moved.get("evidence", ())]
        left = (
            mention_ids
            and conn.execute(select(mentions.c.id).where(mentions.c.id.in_(mention_ids))).first()
        ) or (
            evidence_ids
            and conn.execute(
                select(relation_evidence.c.id).where(relation_evidence.c.id.in_(evidence_ids))
            ).first()
        )
        if not left:
            emptied.append(int(merge_id))
    if gone:
        conn.execute(delete(merges).where(merges.c.id.in_(gone)))
    if emptied:
        conn.execute(
            update(merges)
            .where(merges.c.id.in_(emptied))
            .values(snapshot=json.dumps({FORGOTTEN_MERGE: True}), kept_key="", merged_key="")
        )
    return len(gone) + len(emptied)


def write_validity(
    conn: Connection, intervals: Mapping[int, tuple[str | None, str | None]]
) -> None:
    """Store ``relation id -> (valid_from, valid_to)``."""
    for rid, (valid_from, valid_to) in sorted(intervals.items()):
        conn.execute(
            update(relations)
            .where(relations.c.id == rid)
            .values(valid_from=valid_from, valid_to=valid_to)
        )
