"""Which part of a graph to draw or export: a node budget, a neighbourhood, a path.

Example:
    >>> graph = nx.MultiDiGraph([("ada", "acme"), ("bob", "acme"), ("bob", "zed")])
    >>> sorted(neighbourhood_subgraph(graph, "ada", depth=1))
    ['acme', 'ada']
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, TypeVar, cast

import networkx as nx

from graphmem.errors import EntityNotFound, InvalidArgumentError

__all__ = [
    "check_budget",
    "focus_nodes",
    "most_connected",
    "neighbourhood_subgraph",
    "path_subgraph",
    "require_nodes",
    "select_visible_nodes",
]

GraphT = TypeVar("GraphT", bound=nx.Graph)


def select_visible_nodes(
    graph: nx.Graph,
    max_nodes: int = 300,
    focus: Hashable | Iterable[Hashable] | None = None,
) -> list[Hashable]:
    """Return the nodes to draw under a budget: focus nodes first, then the most connected.

    Ranking after the focus nodes: degree (relations in and out, parallel relations counted),
    then ``mentions``, then the node id as text, so the choice is deterministic.

    Example:
        >>> graph = nx.MultiDiGraph([("hub", "a"), ("hub", "b"), ("hub", "c"), ("a", "b")])
        >>> select_visible_nodes(graph, max_nodes=3)
        ['hub', 'a', 'b']
        >>> select_visible_nodes(graph, max_nodes=2, focus="c")
        ['c', 'hub']
    """
    check_budget(max_nodes)
    chosen = focus_nodes(graph, focus)[:max_nodes]
    already = set(chosen)
    rest = [node for node in graph if node not in already]
    chosen.extend(most_connected(graph, rest, max_nodes - len(chosen)))
    return chosen


def check_budget(max_nodes: object) -> None:
    """Raise :class:`~graphmem.errors.InvalidArgumentError` unless ``max_nodes`` is an
    integer of at least 1."""
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
        raise InvalidArgumentError(f"max_nodes must be an integer of at least 1, got {max_nodes!r}")


def most_connected(graph: nx.Graph, nodes: Iterable[Hashable], limit: int) -> list[Hashable]:
    """Return up to ``limit`` of ``nodes``, most connected first (the ranking of
    :func:`select_visible_nodes`).

    Example:
        >>> most_connected(nx.MultiDiGraph([("hub", "a"), ("hub", "b")]), ["a", "hub"], 1)
        ['hub']
    """
    return heapq.nsmallest(
        max(limit, 0),
        nodes,
        key=lambda node: (
            -graph.degree(node),
            -count_value(graph.nodes[node].get("mentions"), default=0),
            str(node),
        ),
    )


def neighbourhood_subgraph(graph: GraphT, node: Hashable, depth: int = 1) -> GraphT:
    """Return a copy of the part of ``graph`` within ``depth`` hops of ``node``.

    Hops follow relations in either direction; every relation among the nodes reached is kept.

    Example:
        >>> graph = nx.MultiDiGraph([("ada", "acme"), ("bob", "acme"), ("bob", "zed")])
        >>> sorted(neighbourhood_subgraph(graph, "ada", depth=2))
        ['acme', 'ada', 'bob']
    """
    require_nodes(graph, [node])
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
        raise InvalidArgumentError(f"depth must be a non-negative integer, got {depth!r}")
    undirected = graph.to_undirected(as_view=True) if graph.is_directed() else graph
    reached = nx.ego_graph(undirected, node, radius=depth).nodes
    subgraph: GraphT = graph.subgraph(reached).copy()
    return subgraph


def path_subgraph(graph: GraphT, path: Sequence[Hashable]) -> GraphT:
    """Return a copy of ``graph`` with the nodes of ``path`` and the relations along it.

    Every relation between two consecutive nodes of the path is kept, in either direction;
    relations between non-consecutive path nodes are not.

    Example:
        >>> graph = nx.MultiDiGraph([("ada", "acme"), ("acme", "bob"), ("ada", "bob")])
        >>> sorted(path_subgraph(graph, ["ada", "acme", "bob"]).edges())
        [('acme', 'bob'), ('ada', 'acme')]
    """
    require_nodes(graph, path)
    steps = {frozenset(pair) for pair in zip(path, path[1:], strict=False)}
    subgraph: GraphT = graph.subgraph(path).copy()
    edges = subgraph.edges(keys=True) if subgraph.is_multigraph() else subgraph.edges()
    subgraph.remove_edges_from([edge for edge in list(edges) if frozenset(edge[:2]) not in steps])
    return subgraph


def focus_nodes(graph: nx.Graph, focus: Hashable | Iterable[Hashable] | None) -> list[Hashable]:
    """Return the focus nodes in order, without repeats; a lone string is one node id.

    Example:
        >>> focus_nodes(nx.Graph([("a", "b")]), ["b", "a", "b"])
        ['b', 'a']
    """
    if focus is None:
        return []
    if isinstance(focus, str | bytes) or focus in graph or not isinstance(focus, Iterable):
        items: list[Hashable] = [cast(Hashable, focus)]
    else:
        items = list(focus)
    require_nodes(graph, items, what="Focus entity")
    return list(dict.fromkeys(items))


def require_nodes(graph: nx.Graph, nodes: Iterable[Hashable], what: str = "Entity") -> None:
    """Raise :class:`~graphmem.errors.EntityNotFound` for the first node not in ``graph``."""
    for node in nodes:
        if node not in graph:
            raise EntityNotFound(f"{what} {node!r} is not in the graph")


def count_value(value: object, *, default: int) -> int:
    """Return a non-negative count from an attribute that should be an int.

    Example:
        >>> count_value("7", default=0), count_value(None, default=-1), count_value(-3, default=0)
        (7, -1, 0)
    """
    if isinstance(value, bool) or value is None:
        return default
    try:
        number = int(cast(Any, value))
    except (TypeError, ValueError, OverflowError):
        return default
    return max(number, 0)
