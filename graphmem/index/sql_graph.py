"""Relationship queries answered in SQL, for tenants whose graph is too large to hold.

The same questions as :class:`~graphmem.graph.knowledge_graph.KnowledgeGraph` asks of its
NetworkX view (``neighbors`` and ``paths``, edges followed in either direction), asked of the
tables (:mod:`graphmem.store.graph_queries`): the same answers as the NetworkX view on the
same data.

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

from typing import Any

from ..errors import EntityNotFound, InvalidArgumentError
from ..extract.normalize import canonical_key, may_shorten
from ..graph.records import Edge, Hop, hop_rank
from ..store import Connection, graph_queries, graph_rows
from ..store.database import Database

__all__ = ["SQLGraph"]


class SQLGraph:
    """One tenant's relationship queries, answered in SQL without loading the graph.

    The methods mirror :class:`~graphmem.graph.knowledge_graph.KnowledgeGraph`: same
    arguments, same results, same errors (both are
    :class:`~graphmem.graph.records.RelationshipQueries`).
    """

    def __init__(self, db: Database, tenant: str) -> None:
        self.db = db
        self.tenant = tenant

    # ------------------------------------------------------------------ names
    def resolve_id(self, conn: Connection, name: str) -> int | None:
        """The entity id a name or alias resolves to (same rules as ``KnowledgeGraph.resolve``)."""
        key = canonical_key(name)
        found = graph_queries.alias_entity(conn, self.tenant, key)
        if found is not None:
            return found
        if not key or " " in key:
            return None
        # A lone word: the one entity it may be a short name of (KnowledgeGraph.of_short_name),
        # among the people whose key has it as a word and the organisations it opens.
        matches = {
            i
            for i, k, label in graph_queries.short_name_candidates(conn, self.tenant, key)
            if may_shorten(name, None, k, label)
        }
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
            return graph_queries.count_entities(conn, self.tenant)

    def counts(self) -> dict[str, Any]:
        """Entities and relations, in all and by label and predicate, as
        :meth:`KnowledgeGraph.counts <graphmem.graph.knowledge_graph.KnowledgeGraph.counts>`
        gives them, counted in SQL (no view is loaded).

        Example:
            >>> from graphmem.store.database import Database
            >>> db = Database()
            >>> SQLGraph(db, "").counts()["relations"]
            0
        """
        with self.db.read() as conn:
            labels, predicates = graph_queries.graph_counts(conn, self.tenant)
        return {
            "entities": sum(labels.values()),
            "relations": sum(predicates.values()),
            "entities_by_label": labels,
            "relations_by_predicate": predicates,
        }

    # ------------------------------------------------------------------ queries
    def neighbors(self, name: str, depth: int = 1, predicate: str | None = None) -> dict[str, int]:
        """Entities within ``depth`` hops (either direction) -> their distance, nearest first."""
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise InvalidArgumentError(f"depth must be a positive int, got {depth!r}")
        with self.db.read() as conn:
            start = self._require(conn, name)
            found = graph_queries.distances(conn, self.tenant, start, depth, predicate)
            del found[start]
            names = graph_queries.entity_names(conn, list(found))
        ordered = sorted(found.items(), key=lambda kv: (kv[1], names[kv[0]][0]))
        return {names[i][1]: d for i, d in ordered}

    def paths(
        self, a: str, b: str, max_hops: int = 3, limit: int = 10, *, typed_only: bool = False
    ) -> list[list[Hop]]:
        """Shortest connections between two entities (edges in either direction), with evidence.

        Each path is a list of hops; a hop holds the strongest edge between its two ends.
        Typed paths come first, as in :meth:`KnowledgeGraph.paths`.
        """
        if isinstance(max_hops, bool) or not isinstance(max_hops, int) or max_hops < 1:
            raise InvalidArgumentError(f"max_hops must be a positive int, got {max_hops!r}")
        with self.db.read() as conn:
            source, target = self._require(conn, a), self._require(conn, b)
            if source == target:
                return []
            id_paths = graph_queries.shortest_paths(
                conn, self.tenant, source, target, max_hops, limit, typed=True
            )
            if not id_paths and not typed_only:
                id_paths = graph_queries.shortest_paths(
                    conn, self.tenant, source, target, max_hops, limit
                )
            pairs = {(u, v) for p in id_paths for u, v in zip(p, p[1:], strict=False)}
            edges = graph_queries.edges_between(conn, self.tenant, pairs)
            names = graph_queries.entity_names(conn, sorted({n for p in id_paths for n in p}))
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


def _best_hop(
    u: int,
    v: int,
    edges: dict[tuple[int, int], list[Any]],
    names: dict[int, tuple[str, str]],
) -> Hop:
    """The strongest edge between two entities, by :func:`~graphmem.graph.records.hop_rank`."""
    options = [
        (row, is_reversed)
        for ends, is_reversed in (((u, v), False), ((v, u), True))
        for row in edges.get(ends, [])
    ]
    row, is_reversed = max(options, key=lambda o: hop_rank(o[0].predicate, int(o[0].support), o[1]))
    edge = Edge(
        subject=names[int(row.subject_id)][1],
        predicate=row.predicate,
        object=names[int(row.object_id)][1],
        support=int(row.support),
        confidence=float(row.confidence),
        first_seen=row.first_seen,
        last_seen=row.last_seen,
        valid_from=row.valid_from,
        valid_to=row.valid_to,
        relation_id=int(row.id),
    )
    return Hop(source=names[u][1], target=names[v][1], edge=edge, reversed=is_reversed)
