"""The rows of a re-analysis (:mod:`graphmem.index.reanalysis`): which texts to index again
and how, dropping a tenant's derived graph rows, keeping its hand-added relations, renewing
the merges the user asked for, and the meta keys that record the extraction version and a
re-analysis in progress.

Example:
    >>> from graphmem.store.database import Database
    >>> db = Database()
    >>> with db.read() as conn:
    ...     analysed_tenants(conn), read_plan(conn)
    ([], None)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, exists, func, insert, select, union, update

from ..items import time_text, utc_now
from . import graph_rows
from .dialects import dialect_of
from .label_rows import REANALYSIS_KEY
from .schema import (
    NOT_ANALYSED,
    WITH_RELATIONS,
    aliases,
    entities,
    mentions,
    merges,
    meta,
    relation_evidence,
    relations,
    texts,
)

__all__ = [
    "EXTRACTION_VERSION_KEY",
    "REANALYSIS_KEY",
    "StoredText",
    "analysed_tenants",
    "drop_derived_rows",
    "manual_relations",
    "merges_by_hand",
    "read_plan",
    "restore_manual_relation",
    "texts_to_index",
]

#: ``graphmem_meta`` key: the extraction version that analysed the store,
#: ``{"default": version, "tenants": {tenant: version}}`` (a tenant re-analysed alone).
EXTRACTION_VERSION_KEY = "extraction_version"
_MANUAL_RULE = "manual"


@dataclass(frozen=True)
class StoredText:
    """A stored text to index again, and how it was indexed first."""

    id: int
    tenant: str
    head: str
    body: str
    relations: bool
    given_entities: list[str] | None
    listed_in: list[str]


def read_plan(conn: Connection) -> dict[str, Any] | None:
    """The plan of the re-analysis under way, or None.

    Raises:
        DatabaseFileError: the stored plan is damaged (not JSON, or not a plan).
    """
    plan: dict[str, Any] | None = graph_rows.read_setting(conn, REANALYSIS_KEY)
    if plan is not None and not (
        isinstance(plan, dict)
        and isinstance(plan.get("tenants"), list)
        and isinstance(plan.get("current", {}), dict | None)
        and "scope" in plan
    ):
        raise graph_rows.damaged_setting(conn, REANALYSIS_KEY)
    return plan


def write_plan(conn: Connection, plan: dict[str, Any] | None) -> None:
    """Record the re-analysis plan (None: none is under way)."""
    if plan is None:
        conn.execute(delete(meta).where(meta.c.key == REANALYSIS_KEY))
    else:
        graph_rows.write_setting(conn, REANALYSIS_KEY, plan)


def read_versions(conn: Connection) -> dict[str, Any] | None:
    """The recorded extraction versions (see :data:`EXTRACTION_VERSION_KEY`), or None."""
    versions: dict[str, Any] | None = graph_rows.read_setting(conn, EXTRACTION_VERSION_KEY)
    return versions


def write_versions(conn: Connection, versions: dict[str, Any] | None) -> None:
    """Record the extraction versions (None: unknown, as in a store of an older release)."""
    if versions is None:
        key = meta.c.key
        conn.execute(delete(meta).where(key == EXTRACTION_VERSION_KEY))
    else:
        graph_rows.write_setting(conn, EXTRACTION_VERSION_KEY, versions)


def record_first_version(conn: Connection, versions: dict[str, Any]) -> None:
    """Record ``versions`` in a store that holds no analysis and no version yet (the first
    of several processes opening a new store does; the others find it recorded)."""
    dialect_of(conn).lock_schema(conn)  # SQLite's write transactions are serialised already
    if read_versions(conn) is None and not has_graph_rows(conn):
        write_versions(conn, versions)


def analysed_tenants(conn: Connection) -> list[str]:
    """The tenants with an indexed text or an entity (hand-added relations), sorted."""
    found = union(
        select(texts.c.tenant).where(texts.c.analysis != NOT_ANALYSED),
        select(entities.c.tenant),
    )
    return sorted({str(t) for t in conn.execute(found).scalars()})


def has_graph_rows(conn: Connection) -> bool:
    """Whether any text is indexed or any entity stored (something was analysed)."""
    indexed = exists().where(texts.c.analysis != NOT_ANALYSED)
    return bool(conn.execute(select(indexed | exists().select_from(entities))).scalar())


def last_text_id(conn: Connection, tenant: str) -> int:
    """The largest id of the tenant's texts (0: none)."""
    return int(
        conn.execute(select(func.max(texts.c.id)).where(texts.c.tenant == tenant)).scalar() or 0
    )


def count_texts_to_index(conn: Connection, tenant: str, after: int, through: int) -> int:
    """How many of the tenant's indexed texts have an id in ``(after, through]``."""
    return int(
        conn.execute(
            select(func.count()).where(*_indexed(tenant, after, through)).select_from(texts)
        ).scalar_one()
    )


def texts_to_index(
    conn: Connection, tenant: str, after: int, through: int, limit: int
) -> list[StoredText]:
    """The tenant's next ``limit`` indexed texts with an id in ``(after, through]``, in id
    order (the order they were first indexed in)."""
    t = texts
    stmt = (
        select(t.c.id, t.c.head, t.c.body, t.c.analysis, t.c.given_entities, t.c.listed_in)
        .where(*_indexed(tenant, after, through))
        .order_by(t.c.id)
        .limit(limit)
    )
    return [
        StoredText(
            int(row.id),
            tenant,
            row.head,
            row.body,
            row.analysis == WITH_RELATIONS,
            json.loads(row.given_entities) if row.given_entities is not None else None,
            json.loads(row.listed_in) if row.listed_in is not None else [],
        )
        for row in conn.execute(stmt)
    ]


def _indexed(tenant: str, after: int, through: int) -> list[Any]:
    return [
        texts.c.tenant == tenant,
        texts.c.analysis != NOT_ANALYSED,
        texts.c.id > after,
        texts.c.id <= through,
    ]


def unchanged_texts(conn: Connection, batch: Sequence[StoredText]) -> set[int]:
    """The ids of ``batch`` still stored as read (not deleted, not rewritten since)."""
    read = {text.id: (text.head, text.body) for text in batch}
    stmt = select(texts.c.id, texts.c.head, texts.c.body).where(texts.c.id.in_(list(read)))
    return {int(r.id) for r in conn.execute(stmt) if read[int(r.id)] == (r.head, r.body)}


def texts_with_index_rows(conn: Connection, text_ids: Sequence[int]) -> set[int]:
    """Those of ``text_ids`` that a mention or evidence row points at."""
    ids = list(text_ids)
    found = union(
        select(mentions.c.text_id).where(mentions.c.text_id.in_(ids)),
        select(relation_evidence.c.text_id).where(relation_evidence.c.text_id.in_(ids)),
    )
    return {int(t) for t in conn.execute(found).scalars()}


def manual_relations(conn: Connection, tenant: str) -> list[dict[str, Any]]:
    """The tenant's relations added by hand (rule ``manual``), JSON-able: each end's entity
    (id, key, name, label, first and last seen), the relation's columns and how many times
    it was added by hand."""
    ev, r = relation_evidence, relations
    manual = (
        select(ev.c.relation_id, func.count().label("times"))
        .where(ev.c.rule == _MANUAL_RULE, ev.c.text_id.is_(None))
        .group_by(ev.c.relation_id)
        .subquery()
    )
    stmt = (
        select(r, manual.c.times)
        .join(manual, manual.c.relation_id == r.c.id)
        .where(r.c.tenant == tenant)
        .order_by(r.c.id)
    )
    rows = conn.execute(stmt).all()
    ends = {
        int(e.id): {
            "id": int(e.id),
            "key": e.key,
            "name": e.name,
            "label": e.label,
            "first_seen": e.first_seen,
            "last_seen": e.last_seen,
        }
        for e in conn.execute(
            select(entities).where(
                entities.c.id.in_([x for row in rows for x in (row.subject_id, row.object_id)])
            )
        )
    }
    return [
        {
            "relation": {
                k: row._mapping[k]
                for k in (
                    "id",
                    "predicate",
                    "confidence",
                    "first_seen",
                    "last_seen",
                    "valid_from",
                    "valid_to",
                )
            },
            "subject": ends[int(row.subject_id)],
            "object": ends[int(row.object_id)],
            "times": int(row.times),
        }
        for row in rows
    ]


def merges_by_hand(conn: Connection, tenant: str) -> list[int]:
    """The ids of the tenant's merges in place that the user asked for (or that were logged
    before schema 5 recorded who did), oldest first."""
    stmt = (
        select(merges.c.id)
        .where(
            merges.c.tenant == tenant,
            merges.c.undone_at.is_(None),
            merges.c.by_hand.is_(None) | (merges.c.by_hand != 0),
        )
        .order_by(merges.c.id)
    )
    return [int(i) for i in conn.execute(stmt).scalars()]


def merge_keys(conn: Connection, merge_id: int) -> tuple[str, str] | None:
    """The kept and merged keys of a merge still in place (None: gone or undone)."""
    row = conn.execute(
        select(merges.c.kept_key, merges.c.merged_key).where(
            merges.c.id == merge_id, merges.c.undone_at.is_(None)
        )
    ).first()
    return (str(row.kept_key), str(row.merged_key)) if row is not None else None


def drop_derived_rows(conn: Connection, tenant: str) -> None:
    """Delete what indexing derived for ``tenant``: its entities (with their aliases,
    mentions, relations and evidence, hand-added relations too: :func:`manual_relations`
    keeps them first), the merges indexing made, and its texts' entity labels. The merges the
    user asked for stay logged (their snapshots are renewed once they are applied again)."""
    conn.execute(delete(entities).where(entities.c.tenant == tenant))
    conn.execute(delete(merges).where(merges.c.tenant == tenant, merges.c.by_hand == 0))
    conn.execute(update(texts).where(texts.c.tenant == tenant).values(entity_labels=None))


def renew_merge(conn: Connection, merge_id: int, again_id: int) -> None:
    """Give the merge ``merge_id`` the keys and undo snapshot of ``again_id`` (the same merge
    made again over the rebuilt rows), whose log row goes."""
    again = conn.execute(select(merges).where(merges.c.id == again_id)).one()
    conn.execute(
        update(merges)
        .where(merges.c.id == merge_id)
        .values(kept_key=again.kept_key, merged_key=again.merged_key, snapshot=again.snapshot)
    )
    conn.execute(delete(merges).where(merges.c.id == again_id))


def retire_merge(conn: Connection, merge_id: int) -> None:
    """Mark a merge that cannot be made again (an end is gone, or the label rule now refuses
    it) undone: its snapshot describes rows that no longer exist."""
    conn.execute(
        update(merges).where(merges.c.id == merge_id).values(undone_at=time_text(utc_now()))
    )


def entity_of_key(conn: Connection, tenant: str, key: str) -> int | None:
    """The id of the tenant's entity with the name (alias) key ``key``, or None."""
    found = conn.execute(
        select(aliases.c.entity_id).where(aliases.c.tenant == tenant, aliases.c.key == key)
    ).scalar()
    return int(found) if found is not None else None


def restore_manual_relation(conn: Connection, tenant: str, saved: dict[str, Any]) -> None:
    """Put back a relation :func:`manual_relations` kept: on the entities its ends' names
    stand for now (made again, under their old ids, when the rebuild has none), with its
    hand-added evidence; merged into the extracted relation of the same triple if there is
    one, else under its old id with its old columns."""
    ends = []
    for end in (saved["subject"], saved["object"]):
        entity_id = entity_of_key(conn, tenant, end["key"])
        if entity_id is None:
            free = conn.execute(select(entities.c.id).where(entities.c.id == end["id"])).first()
            created = conn.execute(
                insert(entities).values(
                    **({"id": end["id"]} if free is None else {}),
                    tenant=tenant,
                    key=end["key"],
                    name=end["name"],
                    label=end["label"],
                    first_seen=end["first_seen"],
                    last_seen=end["last_seen"],
                )
            )
            entity_id = int(created.inserted_primary_key[0])  # type: ignore[index]
            graph_rows.add_alias(conn, tenant, end["key"], end["name"], entity_id)
        ends.append(entity_id)
    rel, times = saved["relation"], saved["times"]
    r = relations
    existing = conn.execute(
        select(r).where(
            r.c.tenant == tenant,
            r.c.subject_id == ends[0],
            r.c.predicate == rel["predicate"],
            r.c.object_id == ends[1],
        )
    ).first()
    if existing is None:
        taken = conn.execute(select(r.c.id).where(r.c.id == rel["id"])).first() is not None
        values = {k: v for k, v in rel.items() if k != "id" or not taken}
        created = conn.execute(
            insert(r).values(
                **values, tenant=tenant, subject_id=ends[0], object_id=ends[1], support=times
            )
        )
        relation_id = int(created.inserted_primary_key[0])  # type: ignore[index]
    else:
        relation_id = int(existing.id)
        conn.execute(
            update(r)
            .where(r.c.id == relation_id)
            .values(
                support=existing.support + times,
                confidence=max(float(existing.confidence), float(rel["confidence"])),
                first_seen=min(existing.first_seen, rel["first_seen"]),
                last_seen=max(existing.last_seen, rel["last_seen"]),
            )
        )
    conn.execute(
        insert(relation_evidence),
        [
            {
                "relation_id": relation_id,
                "text_id": None,
                "sent_start": 0,
                "sent_end": 0,
                "rule": _MANUAL_RULE,
            }
        ]
        * times,
    )
