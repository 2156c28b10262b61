"""SQL for relationship queries answered without loading a graph view (large tenants).

Recursive common table expressions (``WITH RECURSIVE``) walk the relations table in either
direction; portable SQL through SQLAlchemy Core (SQLite and PostgreSQL).
:class:`graphmem.index.sql_graph.SQLGraph` answers the graph view's questions with these.

Cost: a walk of ``depth`` hops reads each relation of each reached entity once per hop, so
``depth * edges(reached)`` rows; nothing is loaded that the answer does not touch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Integer, case, cast, func, literal, or_, select

from . import schema

__all__ = [
    "alias_entity",
    "count_entities",
    "graph_counts",
    "distances",
    "edges_between",
    "entity_names",
    "shortest_paths",
    "short_name_candidates",
]

_R, _E, _A = schema.relations, schema.entities, schema.aliases


def distances(
    conn: Connection,
    tenant: str,
    start_id: int,
    depth: int,
    predicate: str | None = None,
    typed: bool = False,
) -> dict[int, int]:
    """Entity id -> hops from ``start_id`` (itself at 0), following relations either way
    (``typed``: typed relations only, no ``co_occurs``).

    One recursive query: the walk keeps ``(entity, hops)`` pairs without duplicates and
    stops at ``depth``; the distance is the smallest number of hops.
    """
    seed = select(
        cast(literal(start_id), Integer).label("node"),
        cast(literal(0), Integer).label("dist"),
    ).cte("gm_walk", recursive=True)
    other_end = case((_R.c.subject_id == seed.c.node, _R.c.object_id), else_=_R.c.subject_id)
    step = (
        select(other_end, seed.c.dist + 1)
        .select_from(
            seed.join(_R, or_(_R.c.subject_id == seed.c.node, _R.c.object_id == seed.c.node))
        )
        .where(seed.c.dist < depth, _R.c.tenant == tenant)
    )
    if predicate is not None:
        step = step.where(_R.c.predicate == predicate)
    if typed:
        step = step.where(schema.TYPED_RELATION)
    walk = seed.union(step)
    stmt = select(walk.c.node, func.min(walk.c.dist)).group_by(walk.c.node)
    return {int(node): int(dist) for node, dist in conn.execute(stmt)}


def shortest_paths(
    conn: Connection,
    tenant: str,
    source_id: int,
    target_id: int,
    max_hops: int,
    limit: int,
    typed: bool = False,
) -> list[list[int]]:
    """Up to ``limit`` shortest paths (entity ids, ends included) of at most ``max_hops``
    (``typed``: over typed relations only).

    Distances from both ends (two recursive queries) pick the entities on a shortest path;
    the paths are enumerated over the relations among those entities only.
    """
    from_source = distances(conn, tenant, source_id, max_hops, typed=typed)
    if target_id not in from_source:
        return []
    length = from_source[target_id]
    from_target = distances(conn, tenant, target_id, length, typed=typed)
    on_path = {
        n for n, d in from_source.items() if n in from_target and d + from_target[n] == length
    }
    forward: dict[int, set[int]] = {}
    for subject, obj in _pairs_among(conn, tenant, on_path, typed):
        for u, v in ((subject, obj), (obj, subject)):
            if from_source[v] == from_source[u] + 1:
                forward.setdefault(u, set()).add(v)
    found: list[list[int]] = []

    def extend(path: list[int]) -> None:
        if len(found) >= limit:
            return
        last = path[-1]
        if last == target_id:
            found.append(list(path))
            return
        for nxt in sorted(forward.get(last, ())):
            path.append(nxt)
            extend(path)
            path.pop()

    extend([source_id])
    return found


def _pairs_among(
    conn: Connection, tenant: str, ids: set[int], typed: bool = False
) -> list[tuple[int, int]]:
    """(subject, object) of the relations (typed ones, with ``typed``) whose two ends are
    both in ``ids``."""
    pairs: set[tuple[int, int]] = set()
    ordered = sorted(ids)
    for start in range(0, len(ordered), 500):
        chunk = ordered[start : start + 500]
        stmt = select(_R.c.subject_id, _R.c.object_id).where(
            _R.c.tenant == tenant, _R.c.subject_id.in_(chunk)
        )
        rows = conn.execute(stmt.where(schema.TYPED_RELATION) if typed else stmt)
        pairs.update((int(s), int(o)) for s, o in rows if int(o) in ids)
    return sorted(pairs)


def alias_entity(conn: Connection, tenant: str, key: str) -> int | None:
    """The entity id the alias ``key`` names in ``tenant``, or None."""
    found = conn.execute(
        select(_A.c.entity_id).where(_A.c.tenant == tenant, _A.c.key == key)
    ).scalar()
    return int(found) if found is not None else None


def short_name_candidates(conn: Connection, tenant: str, word: str) -> list[tuple[int, str, str]]:
    """``(id, key, label)`` of the people and organisations of ``tenant`` whose key has the
    lone word ``word`` (canonical) as one of its words."""
    pattern = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    rows = conn.execute(
        select(_E.c.id, _E.c.key, _E.c.label).where(
            _E.c.tenant == tenant,
            _E.c.label.in_(("PERSON", "ORG")),
            or_(
                _E.c.key.like(pattern + " %", escape="\\"),
                _E.c.key.like("% " + pattern, escape="\\"),
                _E.c.key.like("% " + pattern + " %", escape="\\"),
            ),
        )
    ).all()
    return [(int(i), str(k), str(label)) for i, k, label in rows]


def count_entities(conn: Connection, tenant: str) -> int:
    """How many entities ``tenant`` has."""
    stmt = select(func.count()).select_from(_E).where(_E.c.tenant == tenant)
    return int(conn.execute(stmt).scalar() or 0)


def graph_counts(conn: Connection, tenant: str) -> tuple[dict[str, int], dict[str, int]]:
    """``tenant``'s entities by label and relations by predicate (two grouped scans, no
    graph view); the most first, ties by name."""
    labels = conn.execute(
        select(_E.c.label, func.count()).where(_E.c.tenant == tenant).group_by(_E.c.label)
    ).all()
    predicates = conn.execute(
        select(_R.c.predicate, func.count()).where(_R.c.tenant == tenant).group_by(_R.c.predicate)
    ).all()
    return _most_first(labels), _most_first(predicates)


def _most_first(rows: Sequence[Any]) -> dict[str, int]:
    return {str(k): int(n) for k, n in sorted(rows, key=lambda r: (-int(r[1]), str(r[0])))}


def entity_names(conn: Connection, ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    """Entity id -> (key, display name)."""
    out: dict[int, tuple[str, str]] = {}
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        for i, key, name in conn.execute(
            select(_E.c.id, _E.c.key, _E.c.name).where(_E.c.id.in_(chunk))
        ):
            out[int(i)] = (str(key), str(name))
    return out


def edges_between(
    conn: Connection, tenant: str, pairs: set[tuple[int, int]]
) -> dict[tuple[int, int], list[Any]]:
    """(subject, object) -> relation rows (with their stored support), for both directions of
    each pair."""
    wanted = pairs | {(v, u) for u, v in pairs}
    if not wanted:
        return {}
    subjects = sorted({u for u, _ in wanted})
    stmt = select(_R).where(_R.c.tenant == tenant, _R.c.subject_id.in_(subjects))
    out: dict[tuple[int, int], list[Any]] = {}
    for row in conn.execute(stmt):
        pair = (int(row.subject_id), int(row.object_id))
        if pair in wanted:
            out.setdefault(pair, []).append(row)
    return out
