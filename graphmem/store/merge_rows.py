"""Merging two entities' rows, logged with a snapshot that undoes it.

Example:
    >>> from graphmem.store.database import Database
    >>> from graphmem.store.graph_rows import insert_entity
    >>> db = Database()
    >>> with db.write() as conn:
    ...     a = insert_entity(conn, "", "ibm", "IBM", "ORG", "2024-01-01")
    ...     b = insert_entity(conn, "", "international business machines",
    ...                       "International Business Machines", "ORG", "2024-01-02")
    ...     snapshot = merge_entity_rows(conn, "", a, b)
    ...     sorted(snapshot)[:3]
    ['aliases', 'created_relations', 'evidence']
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update

from ..errors import InvalidArgumentError
from ..items import time_text, utc_now
from .batch_rows import recount
from .label_rows import LabelWeight, one_each, vote_labels
from .schema import aliases, entities, mentions, merges, relation_evidence, relations, texts

__all__ = [
    "FORGOTTEN_MERGE",
    "log_merge",
    "merge_entity_rows",
    "take_merge",
    "unmerge_entity_rows",
]


def merge_entity_rows(
    conn: Connection,
    tenant: str,
    keep_id: int,
    merge_id: int,
    preferred: Callable[[str], bool] | None = None,
    weight: LabelWeight = one_each,
) -> dict[str, Any]:
    """Fold entity ``merge_id`` into ``keep_id``; returns a JSON-able snapshot for undo.
    The kept entity's label is voted again (``preferred``, ``weight``: as
    :func:`vote_labels`)."""
    e, r = entities, relations
    involved = conn.execute(
        select(r).where(
            r.c.tenant == tenant, (r.c.subject_id == merge_id) | (r.c.object_id == merge_id)
        )
    ).all()
    snapshot = _merge_snapshot(conn, keep_id, merge_id, involved)
    for rel in involved:
        _move_relation(conn, tenant, rel, keep_id, merge_id, snapshot)
    if involved:
        conn.execute(delete(r).where(r.c.id.in_([row.id for row in involved])))
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


def _merge_snapshot(
    conn: Connection, keep_id: int, merge_id: int, involved: Sequence[Any]
) -> dict[str, Any]:
    """What undoing the merge of ``merge_id`` into ``keep_id`` needs: both entities, the
    merged one's aliases and mentions, the ``involved`` relations (with ``merge_id`` at an
    end) and their evidence; :func:`_move_relation` adds the relations it changes."""
    e, ev = entities, relation_evidence
    involved_ids = [row.id for row in involved]
    evidence = (
        conn.execute(select(ev).where(ev.c.relation_id.in_(involved_ids))).all()
        if involved_ids
        else []
    )
    return {
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


def _move_relation(
    conn: Connection,
    tenant: str,
    rel: Any,
    keep_id: int,
    merge_id: int,
    snapshot: dict[str, Any],
) -> None:
    """Give the relation ``rel`` (a ``relations`` row with ``merge_id`` at an end) ``keep_id``
    in its place: into the kept entity's same relation if it has one (its values widened),
    else into a new one; its evidence moves along. Records what changed in ``snapshot``."""
    r, ev = relations, relation_evidence
    subject = keep_id if rel.subject_id == merge_id else rel.subject_id
    obj = keep_id if rel.object_id == merge_id else rel.object_id
    if subject == obj:
        return  # a relation between the two merged entities has nothing left to link
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
