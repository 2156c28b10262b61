"""A tenant's knowledge graph: a :class:`networkx.MultiDiGraph` view with relationship queries.

Nodes are entity keys (see :func:`graphmem.extract.normalize.canonical_key`) with attributes
``name``, ``label``, ``mentions``, ``aliases``, ``first_seen``, ``last_seen``; edges are keyed
by predicate with ``predicate``, ``support``, ``confidence``, ``first_seen``, ``last_seen``,
``valid_from``, ``valid_to`` and ``relation_id``. The SQL tables are the source of truth; this
view is rebuilt from them and updated as memories are written. Evidence is read from SQL on
demand through ``evidence_loader``.

Example:
    >>> kg = KnowledgeGraph()
    >>> kg.add_entity("alice johnson", name="Alice Johnson", label="PERSON")
    >>> kg.add_entity("acme", name="Acme", label="ORG")
    >>> kg.add_edge("alice johnson", "works_at", "acme", support=2)
    >>> [(e.subject, e.predicate, e.object) for e in kg.find(predicate="works_at", object="Acme")]
    [('Alice Johnson', 'works_at', 'Acme')]
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, cast

from ..errors import EntityNotFound, InvalidArgumentError, InvalidArgumentTypeError
from ..extract.normalize import canonical_key, may_shorten
from ..extract.predicates import answers, check_predicate
from ..items import CO_OCCURS, check_event_time, event_stamp, stored_time
from .records import (
    Edge,
    EntityData,
    EntityInfo,
    Hop,
    RelationData,
    RelationshipQueries,
    hop_rank,
    validity_text,
)

if TYPE_CHECKING:
    import networkx as nx

__all__ = [
    "CO_OCCURS",
    "Edge",
    "EntityData",
    "EntityInfo",
    "EvidenceLoader",
    "Hop",
    "KnowledgeGraph",
    "RelationData",
    "RelationshipQueries",
    "hop_rank",
    "validity_text",
]


EvidenceLoader = Callable[[Sequence[int]], dict[int, list[Any]]]
EdgeLoader = Callable[[], Iterable[tuple[str, str, str, dict[str, Any]]]]
#: ``(key, n, predicate)`` -> the ``n`` strongest links of entity ``key`` (None: all; of
#: ``predicate`` only when given), as :meth:`KnowledgeGraph.strongest_neighbours` gives them.
NeighbourLoader = Callable[[str, int | None, str | None], list[tuple[int, str]]]


@functools.lru_cache(maxsize=4096)
def _graph_time(text: str) -> str:
    """A stored time as :func:`~graphmem.items.event_stamp` writes it (UTC, fixed width): one
    written by an older version (naive, on the local clock, or with another offset) is
    converted, so that stored times compare as their times do."""
    if text.endswith("+00:00") and len(text) in (25, 32):
        return text
    try:
        return event_stamp(stored_time(text))
    except (ValueError, InvalidArgumentError):
        return text


def _strongest(link: tuple[str, int]) -> tuple[int, str]:
    return -link[1], link[0]


class KnowledgeGraph:
    """Relationship queries over one tenant's graph."""

    def __init__(self, evidence_loader: EvidenceLoader | None = None) -> None:
        import networkx as nx

        self._graph: nx.MultiDiGraph = nx.MultiDiGraph()
        #: Loads the edges when first needed (a view of a large memory opens with its entities
        #: only; a context needs only its named entities' strongest links): see
        #: :meth:`load_edges_with`.
        self._edge_loader: EdgeLoader | None = None
        self._neighbour_loader: NeighbourLoader | None = None
        #: key -> (how many were asked for, the strongest links found), while edges are not loaded.
        self._lazy_links: dict[str, tuple[int, list[tuple[int, str]]]] = {}
        #: key -> its co-occurrence links (all), likewise while edges are not loaded.
        self._lazy_co_occurring: dict[str, list[tuple[int, str]]] = {}
        self.alias_keys: dict[str, str] = {}
        #: Word -> the node keys added that have it (stale keys linger after removals):
        #: the candidates of :meth:`of_short_name`.
        self.name_words: dict[str, set[str]] = {}
        #: ``(namespace, key) -> items of that tier mentioning the entity``, filled on demand
        #: and kept up to date by the writer (Calute's "Known entities: Alice: 3 mentions").
        self.tier_counts: dict[tuple[str, str], int] = {}
        #: Texts of this tenant (the scale of an entity's rarity), kept by the index.
        self.texts = 0
        #: node -> neighbour -> the support of their strongest edge (either direction): what
        #: a query's expansion walks, kept up to date by the methods that change edges.
        self._links: dict[str, dict[str, int]] = {}
        self._evidence_loader = evidence_loader

    @property
    def graph(self) -> nx.MultiDiGraph:
        """The NetworkX graph, edges included (loaded now if they were not yet)."""
        if self._edge_loader is not None:
            loader, self._edge_loader, self._neighbour_loader = self._edge_loader, None, None
            self._lazy_links.clear()
            self._lazy_co_occurring.clear()
            known = self._graph
            self.add_edges(edge for edge in loader() if edge[0] in known and edge[2] in known)
        return self._graph

    @property
    def nodes(self) -> Any:
        """The entities (NetworkX's node view), without loading the edges."""
        return self._graph.nodes

    def load_edges_with(self, edges: EdgeLoader, neighbours: NeighbourLoader) -> None:
        """Load the edges only when something needs them: ``edges()`` gives them all
        (``(subject, predicate, object, attributes)``), ``neighbours(key, n, predicate)`` an
        entity's ``n`` strongest links meanwhile (:data:`NeighbourLoader`)."""
        self._edge_loader = edges
        self._neighbour_loader = neighbours

    # ------------------------------------------------------------------ building
    def add_entity(
        self,
        key: str,
        *,
        name: str,
        label: str,
        mentions: int = 0,
        aliases: Iterable[str] = (),
        first_seen: str = "",
        last_seen: str = "",
        entity_id: int | None = None,
    ) -> None:
        """Add or replace a node."""
        alias_list = list(dict.fromkeys([name, *aliases]))
        self._graph.add_node(
            key,
            name=name,
            label=label,
            mentions=mentions,
            aliases=alias_list,
            first_seen=first_seen,
            last_seen=last_seen,
            entity_id=entity_id,
        )
        for alias in alias_list:
            self.alias_keys.setdefault(canonical_key(alias), key)
        self.alias_keys.setdefault(key, key)
        for word in key.split():
            self.name_words.setdefault(word, set()).add(key)

    def add_edge(
        self,
        subject: str,
        predicate: str,
        obj: str,
        *,
        support: int = 1,
        confidence: float = 1.0,
        first_seen: str = "",
        last_seen: str = "",
        valid_from: str | None = None,
        valid_to: str | None = None,
        relation_id: int | None = None,
    ) -> None:
        """Add or replace the edge ``subject -predicate-> obj``."""
        self.graph.add_edge(
            subject,
            obj,
            key=predicate,
            predicate=predicate,
            support=support,
            confidence=confidence,
            first_seen=first_seen,
            last_seen=last_seen,
            valid_from=valid_from,
            valid_to=valid_to,
            relation_id=relation_id,
        )
        self._relink(subject, obj)

    def add_edges(self, edges: Iterable[tuple[str, str, str, dict[str, Any]]]) -> None:
        """Add many edges ``(subject, predicate, object, attributes)`` at once (loading a
        view): the attributes are those of :meth:`add_edge`."""
        rows = [(u, v, k, {"predicate": k, **data}) for u, k, v, data in edges]
        self.graph.add_edges_from(rows)
        strongest: dict[tuple[str, str], int] = {}
        for u, v, _, data in rows:
            if u != v:
                pair = (u, v) if u < v else (v, u)
                strongest[pair] = max(strongest.get(pair, 0), int(data.get("support", 1)))
        for (a, b), strength in strongest.items():
            self._links.setdefault(a, {})[b] = strength
            self._links.setdefault(b, {})[a] = strength

    def add_support(self, subject: str, predicate: str, obj: str, delta: int) -> None:
        """Change the support of an edge by ``delta``."""
        self.graph.edges[subject, obj, predicate]["support"] += delta
        self._relink(subject, obj)

    def remove_edge(self, subject: str, predicate: str, obj: str) -> None:
        """Remove an edge."""
        self.graph.remove_edge(subject, obj, key=predicate)
        self._relink(subject, obj)

    def remove_entity(self, key: str) -> None:
        """Remove a node and its edges (its aliases linger: :meth:`resolve` skips them)."""
        for other in self._links.pop(key, {}):
            self._links.get(other, {}).pop(key, None)
        self._graph.remove_node(key)

    def strongest_neighbours(self, key: str, n: int) -> list[tuple[int, str]]:
        """The ``n`` neighbours of ``key`` (either direction) with the strongest edges, as
        ``(support, neighbour)``, strongest first (ties by name).

        Example:
            >>> kg = KnowledgeGraph()
            >>> for name in ("a", "b", "c"):
            ...     kg.add_entity(name, name=name, label="ORG")
            >>> kg.add_edge("a", "co_occurs", "b", support=1)
            >>> kg.add_edge("c", "works_at", "a", support=3)
            >>> kg.strongest_neighbours("a", 5)
            [(3, 'c'), (1, 'b')]
        """
        if self._neighbour_loader is not None:
            # The edges are not loaded: each entity's links load the first time they are
            # asked for (enough of them), as part of the view.
            known = self._lazy_links.get(key)
            if known is None or (len(known[1]) < n and known[0] < n):
                found = [
                    (s, nbr)
                    for s, nbr in self._neighbour_loader(key, n, None)
                    if nbr in self._graph
                ]
                known = self._lazy_links[key] = (n, found)
            return known[1][:n]
        links = self._links.get(key, {})
        return [
            (support, nbr) for nbr, support in heapq.nsmallest(n, links.items(), key=_strongest)
        ]

    def _relink(self, a: str, b: str) -> None:
        """Recompute the strength of the link between ``a`` and ``b``."""
        if a == b:
            return
        keyed = [
            *(self.graph.get_edge_data(a, b) or {}).values(),
            *(self.graph.get_edge_data(b, a) or {}).values(),
        ]
        if keyed:
            strength = max(int(d.get("support", 1)) for d in keyed)
            self._links.setdefault(a, {})[b] = strength
            self._links.setdefault(b, {})[a] = strength
        else:
            self._links.get(a, {}).pop(b, None)
            self._links.get(b, {}).pop(a, None)

    # ------------------------------------------------------------------ lookups
    def resolve(self, name: str) -> str | None:
        """The node key for a name or alias, or None.

        A lone word resolves to the one entity it may be a short name of
        (:meth:`of_short_name`): a first or last name to a PERSON, the first word of an
        organisation's name ("Northwind") to the ORG (Northwind Systems).
        """
        if not isinstance(name, str):  # every query by name comes through here
            raise InvalidArgumentTypeError(f"entity name must be a str, got {type(name).__name__}")
        key = canonical_key(name)
        target = self.alias_keys.get(key)
        if target is not None and target in self._graph:  # aliases of forgotten entities linger
            return target
        return self.of_short_name(name)

    def of_short_name(self, name: str, label: str | None = None) -> str | None:
        """The unique entity the lone word ``name`` may be a short name of, or None.

        The candidates are the people whose full name has the word and the organisations
        whose name begins with it (:func:`~graphmem.extract.normalize.may_shorten`); with
        ``label`` (what NER called the lone name), only those it may name count: the city
        "Berlin" is not the person Leslie Berlin, nor the firm Berlin Partners. Two
        candidates (Alice Johnson and Alice Wong, or Bob Stone and Stone Labs): None.
        """
        key = canonical_key(name)
        if not key or " " in key:
            return None
        nodes = self._graph.nodes
        matches = {
            node
            for node in self.name_words.get(key, ())
            if node in nodes and may_shorten(name, label, node, nodes[node]["label"])
        }
        return matches.pop() if len(matches) == 1 else None

    def _require(self, name: str) -> str:
        key = self.resolve(name)
        if key is None:
            raise EntityNotFound(f"entity {name!r} is not in the graph")
        return key

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.resolve(name) is not None

    def __len__(self) -> int:
        return int(self._graph.number_of_nodes())

    def get_entity(self, name: str) -> EntityInfo | None:
        """The entity a name resolves to, or None.

        Example:
            >>> kg = KnowledgeGraph(); kg.add_entity("acme", name="Acme Corp", label="ORG")
            >>> kg.get_entity("acme corp.").name
            'Acme Corp'
        """
        key = self.resolve(name)
        if key is None:
            return None
        data = self._graph.nodes[key]
        return EntityInfo(
            key=key,
            name=data["name"],
            label=data["label"],
            mentions=int(data["mentions"]),
            aliases=tuple(data["aliases"]),
            first_seen=data["first_seen"],
            last_seen=data["last_seen"],
        )

    def name_of(self, key: str) -> str:
        """Display name of a node key."""
        return str(self._graph.nodes[key]["name"])

    def entity_data(self, key: str) -> EntityData:
        """The view's data of node ``key`` (the dict itself: writes change it in place)."""
        return cast(EntityData, self.graph.nodes[key])

    def relation_data(self, subject: str, predicate: str, obj: str) -> RelationData | None:
        """The view's data of the edge ``subject -predicate-> obj`` (the dict itself), or None."""
        return cast("RelationData | None", self.graph.get_edge_data(subject, obj, key=predicate))

    def label_of(self, key: str) -> str | None:
        """The label of a node key (None: no such entity)."""
        data = self.graph.nodes.get(key)
        return None if data is None else str(data["label"])

    def keys_with_word(self, word: str) -> set[str]:
        """The node keys added that have ``word`` (removed ones may linger: check them)."""
        return self.name_words.get(word, set())

    def _edge(self, u: str, v: str, data: dict[str, Any]) -> Edge:
        return Edge(
            subject=self.name_of(u),
            predicate=data["predicate"],
            object=self.name_of(v),
            support=int(data["support"]),
            confidence=float(data["confidence"]),
            first_seen=data["first_seen"],
            last_seen=data["last_seen"],
            valid_from=data["valid_from"],
            valid_to=data["valid_to"],
            relation_id=data["relation_id"],
        )

    def _with_evidence(self, edges: list[Edge]) -> list[Edge]:
        if self._evidence_loader is None:
            return edges
        ids = [e.relation_id for e in edges if e.relation_id is not None]
        loaded = self._evidence_loader(ids)
        for edge in edges:
            if edge.relation_id is not None:
                edge.evidence = loaded.get(edge.relation_id, [])
        return edges

    # ------------------------------------------------------------------ queries
    def relations(
        self, name: str, *, predicate: str | None = None, evidence: bool = True
    ) -> list[Edge]:
        """Every relation with ``name`` as subject or object, strongest first."""
        if predicate is not None and not isinstance(predicate, str):
            raise InvalidArgumentTypeError(
                f"predicate must be a str or None, got {type(predicate).__name__}"
            )
        key = self._require(name)
        edges = [
            self._edge(u, v, d)
            for u, v, d in [
                *self.graph.out_edges(key, data=True),
                *self.graph.in_edges(key, data=True),
            ]
            if predicate is None or answers(d["predicate"], predicate)
        ]
        edges.sort(key=lambda e: (-e.support, e.predicate, e.subject, e.object))
        return self._with_evidence(edges) if evidence else edges

    def with_evidence(
        self, graph: nx.MultiDiGraph | None = None, per_item: int = 3
    ) -> nx.MultiDiGraph:
        """A copy of ``graph`` (a view drawn from this graph: :meth:`subgraph`, a path; the
        whole graph by default) whose edges and nodes carry ``evidence``: up to ``per_item``
        distinct sentences, newest first, as the graph page shows them in its tooltips.

        Example:
            >>> from graphmem import EntityMemory
            >>> memory = EntityMemory()
            >>> _ = memory.save("Alice Johnson joined Acme Corp in 2021.")
            >>> drawn = memory.graph.with_evidence()
            >>> drawn.nodes["alice johnson"]["evidence"]
            ['Alice Johnson joined Acme Corp in 2021.']
        """
        drawn = (self.graph if graph is None else graph).copy()
        by_relation = {e.relation_id: e for e in self.find(evidence=True)}
        node_evidence: dict[Any, list[tuple[str, str]]] = {n: [] for n in drawn.nodes}
        for u, v, data in drawn.edges(data=True):
            edge = by_relation.get(data.get("relation_id"))
            found = edge.sentences() if edge is not None else []
            data["evidence"] = [sentence for sentence, _ in found[:per_item]]
            node_evidence[u].extend(found)
            node_evidence[v].extend(found)
        for node, found in node_evidence.items():
            newest = sorted(set(found), key=lambda pair: pair[1], reverse=True)
            drawn.nodes[node]["evidence"] = list(dict.fromkeys(s for s, _ in newest))[:per_item]
        return drawn

    def find(
        self,
        *,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,  # noqa: A002 - the natural name in "subject predicate object"
        current_only: bool = False,
        evidence: bool = False,
    ) -> list[Edge]:
        """Relations matching a pattern: ``find(predicate="works_at", object="Acme")``.

        A predicate matches the relations that state it or imply it (Acme's CTO works at
        Acme: :func:`graphmem.extract.predicates.answers`). An unknown subject or object name
        gives an empty list; an unknown predicate is an error naming those accepted
        (:func:`~graphmem.extract.predicates.check_predicate`).
        """
        if predicate is not None and not isinstance(predicate, str):
            raise InvalidArgumentTypeError(
                f"predicate must be a str or None, got {type(predicate).__name__}"
            )
        if predicate is not None:
            check_predicate(predicate, self.predicates(), CO_OCCURS)
        s_key = self.resolve(subject) if subject is not None else None
        o_key = self.resolve(object) if object is not None else None
        if (subject is not None and s_key is None) or (object is not None and o_key is None):
            return []
        if s_key is not None:
            candidates = self.graph.out_edges(s_key, data=True)
        elif o_key is not None:
            candidates = self.graph.in_edges(o_key, data=True)
        else:
            candidates = self.graph.edges(data=True)
        edges = [
            self._edge(u, v, d)
            for u, v, d in candidates
            if (s_key is None or u == s_key)
            and (o_key is None or v == o_key)
            and (predicate is None or answers(d["predicate"], predicate))
            and (not current_only or d["valid_to"] is None)
        ]
        edges.sort(key=lambda e: (-e.support, e.subject, e.predicate, e.object))
        return self._with_evidence(edges) if evidence else edges

    def strongest_co_occurring(self, key: str, n: int) -> list[str]:
        """Names of the ``n`` entities most often mentioned with entity ``key`` (by support,
        then name), without loading the edges when they are not loaded yet."""
        found: dict[str, int] = {}
        if self._neighbour_loader is not None:
            links = self._lazy_co_occurring.get(key)
            if links is None:
                links = self._lazy_co_occurring[key] = self._neighbour_loader(key, None, CO_OCCURS)
            found = {other: support for support, other in links if other in self._graph}
        else:
            for u, v, k, data in [
                *self.graph.out_edges(key, keys=True, data=True),
                *self.graph.in_edges(key, keys=True, data=True),
            ]:
                if k == CO_OCCURS:
                    other = v if u == key else u
                    found[other] = max(found.get(other, 0), int(data["support"]))
        ranked = sorted(found, key=lambda o: (-found[o], self.name_of(o)))
        return [self.name_of(o) for o in ranked[:n]]

    def predicates(self) -> set[str]:
        """The predicates of the relations this graph holds."""
        return {k for _, _, k in self.graph.edges(keys=True)}

    def neighbors(self, name: str, depth: int = 1, predicate: str | None = None) -> dict[str, int]:
        """Entities within ``depth`` hops (either direction) -> their distance, nearest first."""
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise InvalidArgumentError(f"depth must be a positive int, got {depth!r}")
        start = self._require(name)
        distances = {start: 0}
        frontier = [start]
        for hop in range(1, depth + 1):
            nxt: list[str] = []
            for node in frontier:
                for other in self._adjacent(node, predicate):
                    if other not in distances:
                        distances[other] = hop
                        nxt.append(other)
            frontier = nxt
        del distances[start]
        return {
            self.name_of(k): d for k, d in sorted(distances.items(), key=lambda kv: (kv[1], kv[0]))
        }

    def _adjacent(self, node: str, predicate: str | None) -> list[str]:
        out = [
            v
            for _, v, k in self.graph.out_edges(node, keys=True)
            if predicate is None or k == predicate
        ]
        inc = [
            u
            for u, _, k in self.graph.in_edges(node, keys=True)
            if predicate is None or k == predicate
        ]
        return sorted(set(out) | set(inc))

    def paths(
        self, a: str, b: str, max_hops: int = 3, limit: int = 10, *, typed_only: bool = False
    ) -> list[list[Hop]]:
        """Shortest connections between two entities (edges in either direction), with evidence.

        Each path is a list of hops; a hop holds the strongest edge between its two ends.
        Paths over typed relations come first: co-occurrence links are used only when no
        typed path is within ``max_hops`` (never with ``typed_only``).
        """
        import networkx as nx

        if isinstance(max_hops, bool) or not isinstance(max_hops, int) or max_hops < 1:
            raise InvalidArgumentError(f"max_hops must be a positive int, got {max_hops!r}")
        source, target = self._require(a), self._require(b)
        if source == target:
            return []
        typed = nx.Graph((u, v) for u, v, k in self.graph.edges(keys=True) if k != CO_OCCURS)
        found = _shortest(typed, source, target, max_hops, limit)
        if not found and not typed_only:
            found = _shortest(nx.Graph(self.graph), source, target, max_hops, limit)
        result: list[list[Hop]] = []
        for nodes in found:
            hops: list[Hop] = []
            for u, v in zip(nodes, nodes[1:], strict=False):
                hops.append(self._best_hop(u, v))
            result.append(hops)
        self._with_evidence([hop.edge for hops in result for hop in hops])
        return result

    def _best_hop(self, u: str, v: str) -> Hop:
        options = [
            (key, data, is_reversed)
            for ends, is_reversed in (((u, v), False), ((v, u), True))
            for key, data in (self.graph.get_edge_data(*ends) or {}).items()
        ]
        _, data, is_reversed = max(
            options, key=lambda o: hop_rank(o[0], int(o[1]["support"]), o[2])
        )
        edge = self._edge(v, u, data) if is_reversed else self._edge(u, v, data)
        return Hop(source=self.name_of(u), target=self.name_of(v), edge=edge, reversed=is_reversed)

    def subgraph(self, names: Iterable[str], depth: int = 1) -> nx.MultiDiGraph:
        """The entities named (unknown names ignored) and everything within ``depth`` hops."""
        import networkx as nx

        keep: set[str] = set()
        for name in names:
            key = self.resolve(name)
            if key is None:
                continue
            keep.add(key)
            if depth > 0:
                keep.update(
                    nx.single_source_shortest_path_length(
                        self.graph.to_undirected(as_view=True), key, cutoff=depth
                    )
                )
        return self.graph.subgraph(keep).copy()

    def as_of(self, when: datetime | date | str) -> KnowledgeGraph:
        """The graph as it stood at ``when`` (a datetime, a date: its midnight, or an ISO 8601
        string): the entities first mentioned by then, and the relations valid then,
        ``valid_from <= when < valid_to`` (no ``valid_to``: still open; no ``valid_from``:
        from its first evidence), as they were known then: an end after ``when`` is not
        shown, nor evidence dated after it.

        Example:
            >>> kg = KnowledgeGraph()
            >>> for key in ("samir", "kestrel"):
            ...     kg.add_entity(key, name=key.title(), label="X", first_seen="2025-03-03T09:00:00")
            >>> kg.add_edge("samir", "works_at", "kestrel", first_seen="2025-03-03T09:00:00",
            ...             valid_from="2025-03-03T09:00:00", valid_to="2025-04-21T10:00:00")
            >>> [len(kg.as_of(t).find()) for t in ("2025-03-03T09:00", "2025-04-01", "2025-04-21T10:00")]
            [1, 1, 0]
        """
        checked = check_event_time(when, "when")
        if checked is None:
            raise InvalidArgumentTypeError("when must be a datetime, a date or an ISO 8601 string")
        stamp = event_stamp(checked)

        def begun(data: dict[str, Any]) -> bool:
            return not data["first_seen"] or _graph_time(data["first_seen"]) <= stamp

        def valid(data: dict[str, Any]) -> bool:
            started = data["valid_from"] or data["first_seen"]
            if started and _graph_time(started) > stamp:
                return False
            return not data["valid_to"] or stamp < _graph_time(data["valid_to"])

        def as_it_stood(data: dict[str, Any]) -> dict[str, Any]:
            # An end or a sighting after ``when`` was not known then.
            then = dict(data)
            if then["valid_to"]:
                then["valid_to"] = None  # valid(): it ends after ``when``
            if then["last_seen"] and _graph_time(then["last_seen"]) > stamp:
                then["last_seen"] = stamp
            return then

        def evidence_by_then(relation_ids: Sequence[int]) -> dict[int, list[Any]]:
            loaded = self._evidence_loader(relation_ids) if self._evidence_loader else {}
            return {
                rid: [
                    ev
                    for ev in rows
                    if not ev.created_at or _graph_time(str(ev.created_at)) <= stamp
                ]
                for rid, rows in loaded.items()
            }

        view = self._view(begun, lambda _predicate, data: valid(data), as_it_stood)
        view._evidence_loader = evidence_by_then
        return view

    def typed(self) -> KnowledgeGraph:
        """The graph with typed relations only (no ``co_occurs`` links): its paths say how
        two entities are related, not only that they were mentioned together."""
        return self._view(lambda _data: True, lambda predicate, _data: predicate != CO_OCCURS)

    def _view(
        self,
        keep_entity: Callable[[dict[str, Any]], bool],
        keep_edge: Callable[[str, dict[str, Any]], bool],
        edge_data: Callable[[dict[str, Any]], dict[str, Any]] = dict,
    ) -> KnowledgeGraph:
        view = KnowledgeGraph(self._evidence_loader)
        for key, data in self.graph.nodes(data=True):
            if keep_entity(data):
                view.graph.add_node(key, **data)
        for u, v, k, data in self.graph.edges(keys=True, data=True):
            if u in view.graph and v in view.graph and keep_edge(k, data):
                view.graph.add_edge(u, v, key=k, **edge_data(data))
        for u, v in {(min(u, v), max(u, v)) for u, v in view.graph.edges()}:
            view._relink(u, v)
        view.alias_keys = {a: k for a, k in self.alias_keys.items() if k in view.graph}
        view.name_words = {word: set(keys) for word, keys in self.name_words.items()}
        return view

    def counts(self) -> dict[str, Any]:
        """Entities and relations, in all and by label and predicate (the most first, ties
        by name; :meth:`~graphmem.index.sql_graph.SQLGraph.counts` reads the same from SQL).

        Example:
            >>> kg = KnowledgeGraph()
            >>> kg.add_entity("acme", name="Acme", label="ORG")
            >>> kg.counts()["entities_by_label"]
            {'ORG': 1}
        """
        labels: dict[str, int] = {}
        for _, data in self.graph.nodes(data=True):
            labels[data["label"]] = labels.get(data["label"], 0) + 1
        predicates: dict[str, int] = {}
        for *_, key in self.graph.edges(keys=True):
            predicates[key] = predicates.get(key, 0) + 1
        return {
            "entities": len(self),
            "relations": self.graph.number_of_edges(),
            "entities_by_label": dict(sorted(labels.items(), key=_most_first)),
            "relations_by_predicate": dict(sorted(predicates.items(), key=_most_first)),
        }


def _most_first(counted: tuple[str, int]) -> tuple[int, str]:
    return -counted[1], counted[0]


def _shortest(
    undirected: nx.Graph, source: str, target: str, max_hops: int, limit: int
) -> list[list[str]]:
    """Up to ``limit`` shortest node paths of at most ``max_hops`` hops ([] when none)."""
    import networkx as nx

    if source not in undirected or target not in undirected:
        return []
    found: list[list[str]] = []
    try:
        for nodes in nx.all_shortest_paths(undirected, source, target):
            if len(nodes) - 1 > max_hops:
                break
            found.append(nodes)
            if len(found) >= limit:
                break
    except nx.NetworkXNoPath:
        return []
    return found
