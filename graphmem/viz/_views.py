"""What a page draws first, and what it holds for a click: the plan that keeps big graphs
readable.

* :func:`plan_nodes`: the entities drawn when the page opens (a node budget; on an ego page,
  the ego and its neighbourhood) and the entities *held*: on the page, hidden, drawn when a
  neighbour is expanded (the next most connected; on an ego page, the next hop).
* :func:`core_relations`: which relations are drawn by default. On an ego page, the ego's
  (and, further out, those from one hop to the next); relations among neighbours wait behind
  a toggle. On an overview of many relations, each entity's strongest few (a backbone); the
  rest wait behind the same toggle.
* :func:`communities`: groups of closely related entities (NetworkX's Louvain method), which
  the page can draw as one node each, expanded on click.

Example:
    >>> graph = nx.MultiDiGraph([("ada", "acme"), ("bob", "acme"), ("bob", "zed")])
    >>> plan = plan_nodes(graph, max_nodes=2, ego="ada", depth=1)
    >>> plan.drawn, plan.held, plan.hops
    (['ada', 'acme'], ['bob'], {'ada': 0, 'acme': 1, 'bob': 2})
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import networkx as nx

from graphmem.errors import InvalidArgumentError

from ._subgraphs import check_budget, most_connected, require_nodes, select_visible_nodes

__all__ = [
    "CO_OCCURS_PER_ENTITY",
    "STRONGEST_PER_ENTITY",
    "Link",
    "PagePlan",
    "communities",
    "core_relations",
    "links_on_page",
    "plan_nodes",
]

#: On an overview with many relations, each entity's strongest relations drawn by default.
STRONGEST_PER_ENTITY = 2
#: Co-occurrence links the page holds per entity (its strongest).
CO_OCCURS_PER_ENTITY = 3
#: A community is drawn as one node only when it has at least this many members.
MIN_COMMUNITY = 2


@dataclass(frozen=True, slots=True)
class PagePlan:
    """The entities a page draws (``drawn``, in order) and holds for expanding (``held``);
    ``hops`` from the ego on an ego page (None on an overview)."""

    drawn: list[Hashable]
    held: list[Hashable]
    hops: dict[Hashable, int] | None = None


@dataclass(frozen=True, slots=True)
class Link:
    """One drawn edge as the plan sees it: its ends, kind and total support."""

    source: Hashable
    target: Hashable
    typed: bool
    support: int


def plan_nodes(
    graph: nx.Graph,
    *,
    max_nodes: int,
    focus: Sequence[Hashable] = (),
    ego: Hashable | None = None,
    depth: int = 1,
) -> PagePlan:
    """Choose the drawn and held entities (see the module docstring): at most ``max_nodes``
    drawn and half as many held.

    Example:
        >>> graph = nx.MultiDiGraph([("hub", "a"), ("hub", "b"), ("hub", "c"), ("a", "b")])
        >>> plan_nodes(graph, max_nodes=2).drawn, plan_nodes(graph, max_nodes=2).held
        (['hub', 'a'], ['b'])
    """
    check_budget(max_nodes)
    held = held_budget(max_nodes)
    if ego is None:
        ranked = select_visible_nodes(graph, max_nodes=max_nodes + held, focus=focus)
        return PagePlan(ranked[:max_nodes], ranked[max_nodes:])
    require_nodes(graph, [ego])
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise InvalidArgumentError(f"depth must be an integer of at least 1, got {depth!r}")
    undirected = graph.to_undirected(as_view=True) if graph.is_directed() else graph
    hops: dict[Hashable, int] = nx.single_source_shortest_path_length(
        undirected, ego, cutoff=depth + 1
    )
    first = list(dict.fromkeys([ego, *focus]))[:max_nodes]
    near = [node for node, hop in hops.items() if hop <= depth and node not in first]
    drawn = first + _by_hop(graph, near, hops, max_nodes - len(first))
    outer = [node for node, hop in hops.items() if hop == depth + 1 and node not in first]
    return PagePlan(drawn, most_connected(graph, outer, held), hops)


def held_budget(max_nodes: int) -> int:
    """How many entities a page holds for expanding besides the ``max_nodes`` it draws: half
    as many (each costs the page's load time a little, drawn or not).

    Example:
        >>> held_budget(150), held_budget(1)
        (75, 1)
    """
    return max(max_nodes // 2, 1)


def _by_hop(
    graph: nx.Graph, nodes: list[Hashable], hops: dict[Hashable, int], limit: int
) -> list[Hashable]:
    """The nearest first, the most connected first within a hop."""
    by_hop: defaultdict[int, list[Hashable]] = defaultdict(list)
    for node in nodes:
        by_hop[hops[node]].append(node)
    chosen: list[Hashable] = []
    for hop in sorted(by_hop):
        chosen.extend(most_connected(graph, by_hop[hop], limit - len(chosen)))
    return chosen


def links_on_page(links: Sequence[Link], plan: PagePlan) -> list[int]:
    """Return the indexes of ``links`` the page holds: every typed link that touches a drawn
    entity, and each entity's :data:`CO_OCCURS_PER_ENTITY` strongest co-occurrence links
    (co-occurrence is most of a big graph and the faintest evidence of all), and on an ego
    page every co-occurrence link from one hop to the next (the ego's own).

    Example:
        >>> plan = PagePlan(["a", "b"], ["c", "d"])
        >>> links_on_page([Link("a", "c", True, 1), Link("c", "d", True, 1)], plan)
        [0]
    """
    held = set(plan.held)
    candidates = [
        i for i, link in enumerate(links) if link.source not in held or link.target not in held
    ]
    by_node: defaultdict[Hashable, list[int]] = defaultdict(list)
    for i in candidates:
        if not links[i].typed:
            by_node[links[i].source].append(i)
            by_node[links[i].target].append(i)
    strongest: set[int] = set()
    for ids in by_node.values():
        ids.sort(key=lambda i: (-links[i].support, i))
        strongest.update(ids[:CO_OCCURS_PER_ENTITY])
    hops, drawn = plan.hops, set(plan.drawn)

    def outward(link: Link) -> bool:
        return (
            hops is not None
            and link.source in drawn
            and link.target in drawn
            and hops[link.source] != hops[link.target]
        )

    return [i for i in candidates if links[i].typed or i in strongest or outward(links[i])]


def core_relations(links: Sequence[Link], plan: PagePlan) -> set[int]:
    """Return the indexes of ``links`` drawn by default (see the module docstring).

    Links touching a held entity are never core. On an overview, when the drawn entities
    have no more than :data:`STRONGEST_PER_ENTITY` relations each on average, all are core.

    Example:
        >>> plan = PagePlan(["a", "b", "c"], [], {"a": 0, "b": 1, "c": 1})
        >>> sorted(core_relations([Link("a", "b", True, 1), Link("b", "c", True, 5)], plan))
        [0]
    """
    held = set(plan.held)
    drawn = [
        i for i, link in enumerate(links) if link.source not in held and link.target not in held
    ]
    if plan.hops is not None:
        hops = plan.hops
        return {i for i in drawn if hops[links[i].source] != hops[links[i].target]}
    core: set[int] = set()
    for typed in (True, False):
        kind = [i for i in drawn if links[i].typed is typed]
        if len(kind) <= STRONGEST_PER_ENTITY * len(plan.drawn):
            core.update(kind)
            continue
        by_node: defaultdict[Hashable, list[int]] = defaultdict(list)
        for i in kind:
            by_node[links[i].source].append(i)
            by_node[links[i].target].append(i)
        for ids in by_node.values():
            ids.sort(key=lambda i: (-links[i].support, i))
            core.update(ids[:STRONGEST_PER_ENTITY])
    return core


def communities(nodes: Iterable[Hashable], links: Iterable[Link]) -> list[list[Hashable]]:
    """Groups of ``nodes`` that are more related to each other than to the rest (Louvain
    on the relations' support, fixed seed), largest first; entities alone are left out.

    Example:
        >>> links = [Link("a", "b", True, 3), Link("c", "d", True, 3), Link("b", "c", True, 1)]
        >>> communities("abcde", links)
        [['a', 'b'], ['c', 'd']]
    """
    weighted = nx.Graph()
    order = {node: i for i, node in enumerate(nodes)}
    weighted.add_nodes_from(order)
    for link in links:
        if link.source == link.target:
            continue
        if weighted.has_edge(link.source, link.target):
            weighted[link.source][link.target]["weight"] += link.support
        else:
            weighted.add_edge(link.source, link.target, weight=link.support)
    found = nx.community.louvain_communities(weighted, weight="weight", seed=7)
    groups = [
        sorted(group, key=order.__getitem__) for group in found if len(group) >= MIN_COMMUNITY
    ]
    return sorted(groups, key=lambda group: (-len(group), order[group[0]]))
