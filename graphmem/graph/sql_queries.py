"""Relationship queries answered in SQL, for tenants whose graph is too large to hold.

The same questions as :class:`~graphmem.graph.knowledge_graph.KnowledgeGraph` asks of its
NetworkX view (``neighbors`` and ``paths``, edges followed in either direction), asked of the
tables with recursive common table expressions (``WITH RECURSIVE``). Portable SQL through
SQLAlchemy Core: it runs on SQLite and on PostgreSQL, and gives the same answers as the
NetworkX view on the same data.

Cost: a walk of ``depth`` hops reads each relation of each reached entity once per hop, so
``depth * edges(reached)`` rows; nothing is loaded that the answer does not touch.

Example:
    >>> from graphmem.store.database import Database
    >>> from graphmem.index.entity_index import EntityIndex
    >>> db = Database(); index = EntityIndex(db)
    >>> _ = index.add_relation("", "Alice Johnson", "works_at", "Acme")
    >>> _ = index.add_relation("", "Bob Stone", "works_at", "Acme")
    >>> SQLGraph(db, "").neighbors("Alice Johnson", depth=2)
    {'Acme': 1, 'Bob Stone': 2}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Integer, case, cast, func, literal, or_, select

from ..errors import EntityNotFound, InvalidArgumentError
from ..extract.normalize import canonical_key, may_shorten
from ..store import graph_rows, schema
from ..store.database import Database
from .knowledge_graph import CO_OCCURS, Edge, Hop

__all__ = ["SQLGraph", "distances", "shortest_paths"]

_R, _E, _A = schema.relations, schema.entities, schema.aliases
_EV = schema.relation_evidence


def distances(
    conn: Connection,
    tenant: str,
    start_id: int,
    depth: int,
    predicate: str | None = None,
) -> dict[int, int]:
    """Entity id -> hops from ``start_id`` (itself at 0), following relations either way.

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
    walk = seed.union(step)
    stmt = select(walk.c.node, func.min(walk.c.dist)).group_by(walk.c.node)
    return {int(node): int(dist) for node, dist in conn.execute(stmt)}


def shortest_paths(
    conn: Connection, tenant: str, source_id: int, target_id: int, max_hops: int, limit: int
) -> list[list[int]]:
    """Up to ``limit`` shortest paths (entity ids, ends included) of at most ``max_hops``.

    Distances from both ends (two recursive queries) pick the entities on a shortest path;
    the paths are enumerated over the relations among those entities only.
    """
    from_source = distances(conn, tenant, source_id, max_hops)
    if target_id not in from_source:
        return []
    length = from_source[target_id]
    from_target = distances(conn, tenant, target_id, length)
    on_path = {
        n for n, d in from_source.items() if n in from_target and d + from_target[n] == length
    }
    forward: dict[int, set[int]] = {}
    for subject, obj in _pairs_among(conn, tenant, on_path):
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


def _pairs_among(conn: Connection, tenant: str, ids: set[int]) -> list[tuple[int, int]]:
    """(subject, object) of the relations whose two ends are both in ``ids``."""
    pairs: set[tuple[int, int]] = set()
    ordered = sorted(ids)
    for start in range(0, len(ordered), 500):
        chunk = ordered[start : start + 500]
        rows = conn.execute(
            select(_R.c.subject_id, _R.c.object_id).where(
                _R.c.tenant == tenant, _R.c.subject_id.in_(chunk)
            )
        )
        pairs.update((int(s), int(o)) for s, o in rows if int(o) in ids)
    return sorted(pairs)


class SQLGraph:
    """One tenant's relationship queries, answered in SQL without loading the graph.

    The methods mirror :class:`~graphmem.graph.knowledge_graph.KnowledgeGraph`: same
    arguments, same results, same errors.
    """

    def __init__(self, db: Database, tenant: str) -> None:
        self.db = db
        self.tenant = tenant

    # ------------------------------------------------------------------ names
    def resolve_id(self, conn: Connection, name: str) -> int | None:
        """The entity id a name or alias resolves to (same rules as ``KnowledgeGraph.resolve``)."""
        key = canonical_key(name)
        found = conn.execute(
            select(_A.c.entity_id).where(_A.c.tenant == self.tenant, _A.c.key == key)
        ).scalar()
        if found is not None:
            return int(found)
        if not key or " " in key:
            return None
        # A lone word: the one entity it may be a short name of (KnowledgeGraph.of_short_name),
        # among the people whose key has it as a word and the organisations it opens.
        pattern = key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = conn.execute(
            select(_E.c.id, _E.c.key, _E.c.label).where(
                _E.c.tenant == self.tenant,
                _E.c.label.in_(("PERSON", "ORG")),
                or_(
                    _E.c.key.like(f"{pattern} %", escape="\\"),
                    _E.c.key.like(f"% {pattern}", escape="\\"),
                    _E.c.key.like(f"% {pattern} %", escape="\\"),
                ),
            )
        ).all()
        matches = {int(i) for i, k, label in rows if may_shorten(name, None, str(k), str(label))}
        return matches.pop() if len(matches) == 1 else None

    def _require(self, conn: Connection, name: str) -> int:
        entity_id = self.resolve_id(conn, name)
        if entity_id is None:
            raise EntityNotFound(f"entity {name!r} is not in the graph")
        return entity_id

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        with self.db.read() as conn:
            return self.resolve_id(conn, name) is not None

    def __len__(self) -> int:
        with self.db.read() as conn:
            stmt = select(func.count()).select_from(_E).where(_E.c.tenant == self.tenant)
            return int(conn.execute(stmt).scalar() or 0)

    # ------------------------------------------------------------------ queries
    def neighbors(self, name: str, depth: int = 1, predicate: str | None = None) -> dict[str, int]:
        """Entities within ``depth`` hops (either direction) -> their distance, nearest first."""
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise InvalidArgumentError(f"depth must be a positive int, got {depth!r}")
        with self.db.read() as conn:
            start = self._require(conn, name)
            found = distances(conn, self.tenant, start, depth, predicate)
            del found[start]
            names = _names(conn, list(found))
        ordered = sorted(found.items(), key=lambda kv: (kv[1], names[kv[0]][0]))
        return {names[i][1]: d for i, d in ordered}

    def paths(self, a: str, b: str, max_hops: int = 3, limit: int = 10) -> list[list[Hop]]:
        """Shortest connections between two entities (edges in either direction), with evidence.

        Each path is a list of hops; a hop holds the strongest edge between its two ends.
        """
        if isinstance(max_hops, bool) or not isinstance(max_hops, int) or max_hops < 1:
            raise InvalidArgumentError(f"max_hops must be a positive int, got {max_hops!r}")
        with self.db.read() as conn:
            source, target = self._require(conn, a), self._require(conn, b)
            if source == target:
                return []
            id_paths = shortest_paths(conn, self.tenant, source, target, max_hops, limit)
            pairs = {(u, v) for p in id_paths for u, v in zip(p, p[1:], strict=False)}
            edges = _edges_between(conn, self.tenant, pairs)
            names = _names(conn, sorted({n for p in id_paths for n in p}))
            result = [
                [_best_hop(u, v, edges, names) for u, v in zip(p, p[1:], strict=False)]
                for p in id_paths
            ]
            ids = [hop.edge.relation_id for hops in result for hop in hops]
            evidence = graph_rows.evidence_for(conn, [i for i in ids if i is not None])
        for hops in result:
            for hop in hops:
                if hop.edge.relation_id is not None:
                    hop.edge.evidence = list(evidence.get(hop.edge.relation_id, []))
        return result


def _names(conn: Connection, ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    """Entity id -> (key, display name)."""
    out: dict[int, tuple[str, str]] = {}
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        for i, key, name in conn.execute(
            select(_E.c.id, _E.c.key, _E.c.name).where(_E.c.id.in_(chunk))
        ):
            out[int(i)] = (str(key), str(name))
    return out


def _edges_between(
    conn: Connection, tenant: str, pairs: set[tuple[int, int]]
) -> dict[tuple[int, int], list[Any]]:
    """(subject, object) -> relation rows with their support, for both directions of each pair."""
    wanted = pairs | {(v, u) for u, v in pairs}
    if not wanted:
        return {}
    support = (
        select(_EV.c.relation_id, func.count().label("n")).group_by(_EV.c.relation_id).subquery()
    )
    subjects = sorted({u for u, _ in wanted})
    stmt = (
        select(_R, support.c.n)
        .join(support, support.c.relation_id == _R.c.id, isouter=True)
        .where(_R.c.tenant == tenant, _R.c.subject_id.in_(subjects))
    )
    out: dict[tuple[int, int], list[Any]] = {}
    for row in conn.execute(stmt):
        pair = (int(row.subject_id), int(row.object_id))
        if pair in wanted:
            out.setdefault(pair, []).append(row)
    return out


def _best_hop(
    u: int,
    v: int,
    edges: dict[tuple[int, int], list[Any]],
    names: dict[int, tuple[str, str]],
) -> Hop:
    """The strongest edge between two entities: typed before co-occurrence, then support."""
    options = [
        (int(row.n or 0) + (1000 if row.predicate != CO_OCCURS else 0), False, row.predicate, row)
        for row in edges.get((u, v), [])
    ] + [
        (int(row.n or 0) + (1000 if row.predicate != CO_OCCURS else 0), True, row.predicate, row)
        for row in edges.get((v, u), [])
    ]
    _, is_reversed, _, row = max(options, key=lambda o: (o[0], not o[1], o[2]))
    edge = Edge(
        subject=names[int(row.subject_id)][1],
        predicate=row.predicate,
        object=names[int(row.object_id)][1],
        support=int(row.n or 0),
        confidence=float(row.confidence),
        first_seen=row.first_seen,
        last_seen=row.last_seen,
        valid_from=row.valid_from,
        valid_to=row.valid_to,
        relation_id=int(row.id),
    )
    return Hop(source=names[u][1], target=names[v][1], edge=edge, reversed=is_reversed)
