"""Render an entity graph to one self-contained HTML page that works with no network.

The page is drawn by vis-network (in-lined from the installed pyvis package; no CDN, no
external URL) from the template, script and styles in the project's ``viz/`` folder. pyvis
builds the node and edge records; its own page templates are not used because they load
Bootstrap from CDNs.

Graph conventions (what the rest of graphmem passes in; missing attributes have defaults):

* The graph is a ``networkx.MultiDiGraph`` (any NetworkX graph works), or a source that
  :func:`~graphmem.viz.drawable_graph` turns into one (an entity memory, a knowledge graph).
* Node id: any hashable, normally the entity's canonical key string.
* Node attributes: ``name`` (display name; default ``str(node id)``), ``label`` (spaCy label
  such as ``PERSON``; default ``UNLABELLED``), ``mentions`` (``int``), ``aliases``
  (``list[str]``), ``first_seen`` / ``last_seen`` (ISO 8601), ``evidence`` (newest first:
  sentences, or records ``{"sentence", "memory_id", "rule", "date"}``).
* Edge key: the predicate. Edge attributes: ``predicate`` (default the key), ``support``,
  ``confidence``, ``evidence``, ``valid_from`` / ``valid_to`` / ``first_seen`` /
  ``last_seen`` (ISO 8601 ``str`` or None: when it held).

On the page: one edge per pair of entities, direction and kind (typed, or ``co_occurs``
behind a toggle, faint), holding every relation between them: labelled with its predicates
(or how many) on hover or when few edges are drawn, width by total support, faded and dotted
when all its relations ended (a ``valid_to``). Node colour by label, node size by mentions,
each as the legend shows it at the current zoom; node labels keep one size on screen and
show where they fit (under or over the dot), the focus, most connected and most mentioned
first, and the first view fits them. What is drawn first follows :mod:`._views`: an ego
page the ego's relations, an overview each entity's strongest, with the rest behind a
toggle; communities can be drawn as one node each; held entities are drawn when a neighbour
is double-clicked. Controls filter by entity type, predicate, least support and number of
neighbours, show current or ended relations, show the graph as of a day (a slider over
``first_seen`` / ``valid_from`` / ``valid_to``), and find a node by name; clicking a node or
an edge opens a side panel with its evidence sentences (each relation's, for an edge), each
with its source memory, rule and date, and the relations' confidence and dates. The layout
settles once (stabilisation), fits the window, and then stays put (physics off).

Memory content is untrusted. It reaches the page only as JSON inside a non-executed
``<script type="application/json">`` block (``<``, ``>``, ``&``, U+2028 and U+2029 escaped, so
it cannot close the block) and reaches the DOM only through ``textContent``; tooltips and the
panel are DOM elements, never HTML strings. A Content-Security-Policy lets only the page's
own two scripts (pinned by SHA-256) run, and forbids every network request.

Example:
    >>> import tempfile
    >>> graph = nx.MultiDiGraph()
    >>> graph.add_node("ada lovelace", name="Ada Lovelace", label="PERSON", mentions=3)
    >>> graph.add_node("analytical engine", name="Analytical Engine", label="PRODUCT")
    >>> _ = graph.add_edge("ada lovelace", "analytical engine", key="works_on",
    ...                    predicate="works_on", support=2)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     report = render_graph(graph, Path(tmp) / "graph.html", title="Ada")
    >>> (report.nodes_drawn, report.edges_drawn, report.nodes_omitted)
    (2, 1, 0)
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import networkx as nx
from pyvis.network import Network

from graphmem.graph.knowledge_graph import CO_OCCURS

from ._html import page_html
from ._records import (
    HEADING_CHARS,
    NAME_LABEL_CHARS,
    display_name,
    edge_width,
    label_colour,
    node_record,
    node_size,
    plural,
    predicate_of,
    relation_record,
    short_text,
    short_texts,
)
from ._source import EntityTier, Source, drawable_graph, knowledge_graph_of
from ._subgraphs import count_value, focus_nodes
from ._views import (
    CO_OCCURS_PER_ENTITY,
    STRONGEST_PER_ENTITY,
    Link,
    PagePlan,
    communities,
    core_relations,
    links_on_page,
    plan_nodes,
)

if TYPE_CHECKING:
    from graphmem.retrieval.context import ContextReport

__all__ = ["VizReport", "node_size", "render_context", "render_graph", "edge_width"]

#: A relation that no longer holds (it has a ``valid_to``): faded and dotted, "(ended)".
_ENDED_COLOUR = {"color": "#cbd2d9", "highlight": "#7b8794", "hover": "#7b8794", "opacity": 0.85}
_ENDED_FONT = "#9aa5b1"
_ENDED_DASHES = [2, 6]
#: A current typed relation (vis-network's default, given so the page can restore it).
_NORMAL_COLOUR = {"color": "#a3acb9", "highlight": "#3e4c59", "hover": "#52606d"}
#: Labels keep this size on screen (in pixels) at every zoom; the page shows the labels that
#: fit without overlapping, the largest entities first. Edge labels show on hover, and
#: always when at most ``_EDGE_LABELS_MAX`` edges are drawn.
_NODE_LABEL_PX, _EDGE_LABEL_PX, _EDGE_LABELS_MAX = 14, 12, 15
#: Names listed in a community's tooltip.
_COMMUNITY_NAMES = 8
#: Co-occurrence, when shown: faint, dashed and unlabelled (the legend says what it is).
_CO_OCCURS_COLOUR = {
    "color": "#c3c9d0",
    "highlight": "#7b8794",
    "hover": "#7b8794",
    "opacity": 0.45,
}
#: Mentions and supports the legend draws as examples of node size and edge width.
_SIZE_EXAMPLES = (1, 10, 100)
_WIDTH_EXAMPLES = (1, 4, 16)


@dataclass(frozen=True, slots=True)
class VizReport:
    """What :func:`render_graph` wrote.

    Example:
        >>> report = VizReport(Path("g.html"), nodes_drawn=2, edges_drawn=1, nodes_omitted=0)
        >>> report.nodes_drawn + report.nodes_omitted
        2
    """

    path: Path
    nodes_drawn: int
    edges_drawn: int
    nodes_omitted: int
    edges_omitted: int = 0
    nodes_held: int = 0


def render_graph(
    graph: Source,
    path: str | Path,
    *,
    title: str = "graphmem",
    max_nodes: int = 300,
    focus: Hashable | Iterable[Hashable] | None = None,
    ego: Hashable | None = None,
    depth: int = 1,
) -> VizReport:
    """Write ``graph`` as one self-contained, offline HTML page at ``path``.

    Parameters:
        graph: an entity memory (``memory.entity_memory``: each node sized by the memories
            of the entity tier that name it, the count its context shows), a
            :class:`~graphmem.graph.KnowledgeGraph`, or a NetworkX graph (conventions in
            the module docstring; for a part of a memory's graph with its evidence, pass
            ``drawable_graph(memory, memory.graph.subgraph(names))``).
        path: the HTML file to write; missing parent folders are created.
        title: shown in the page header and the browser tab (escaped).
        max_nodes: the node budget; above it the least connected nodes are left out (up to
            half as many again are held on the page, drawn when a neighbour is expanded).
        focus: a node id, or several, always drawn (first) and outlined.
        ego: draw this entity's page: the entities within ``depth`` hops of it (the next
            hop held for expanding) and, by default, only the ego's relations (further out:
            those from one hop to the next); relations among the others behind a toggle.
        depth: hops drawn around ``ego``.

    Returns:
        A :class:`VizReport` with the counts drawn, held and omitted.

    Raises:
        EntityNotFound: a focus node or the ego is not in the graph.
        InvalidArgumentError: ``max_nodes`` or ``depth`` is below 1.

    Example:
        >>> import tempfile
        >>> graph = nx.MultiDiGraph([("ada", "bob"), ("bob", "cy"), ("bob", "ada")])
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     report = render_graph(graph, Path(tmp) / "g.html", max_nodes=2)
        >>> (report.nodes_drawn, report.edges_drawn, report.nodes_omitted, report.edges_omitted)
        (2, 2, 1, 1)
    """
    drawn = drawable_graph(graph)
    return _render(drawn, Path(path), title, max_nodes, focus, context=None, ego=ego, depth=depth)


def render_context(
    report: ContextReport,
    memory: EntityTier,
    path: str | Path,
    *,
    title: str | None = None,
    max_nodes: int = 150,
) -> VizReport:
    """Draw the subgraph a context build used: the entities the task names (outlined) and
    their neighbours, beside the context's sections (each entry with its tier, score and the
    entity path that brought it in), so a person sees why an agent was given what it was.

    Parameters:
        report: from ``CortexMemory.build_context_report(task)``.
        memory: the entity memory the report was built from (``cortex.entity_memory``):
            its evidence and its mention counts (the ones the context text shows).
        path, max_nodes: as for :func:`render_graph`.
        title: default ``"Context for: <task>"``.

    Example:
        >>> import tempfile
        >>> from graphmem import CortexMemory
        >>> cortex = CortexMemory()
        >>> _ = cortex.save_task_result("Audit", "Ada Lovelace audited Acme Corp.", "QA", importance=0.9)
        >>> report = cortex.build_context_report("Acme Corp audit")
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     drawn = render_context(report, cortex.entity_memory, Path(tmp) / "c.html")
        >>> drawn.nodes_drawn
        2
    """
    kg = knowledge_graph_of(memory)
    subgraph = report.subgraph
    graph = drawable_graph(memory, subgraph) if kg is not None else subgraph
    keys = [key for name in report.entities if (key := _resolve(kg, name)) in graph]
    sections = [
        {
            "title": short_text(section.title, HEADING_CHARS),
            "entries": [
                {
                    "text": short_text(entry.content[: entry.max_chars], 600),
                    "tier": entry.tier,
                    "score": None if entry.score is None else round(float(entry.score), 4),
                    "path": short_texts(
                        entry.explanation.entity_path if entry.explanation else [], 8, 80
                    ),
                    "matched": short_texts(
                        entry.explanation.matched_terms if entry.explanation else [], 12, 40
                    ),
                }
                for entry in section.visible
            ],
        }
        for section in report.sections
        if section.visible
    ]
    context = {"task": short_text(report.task, 600), "sections": sections}
    heading = title if title is not None else f"Context for: {report.task}"
    return _render(graph, Path(path), heading, max_nodes, keys, context=context)


def _resolve(kg: Any, name: str) -> Hashable | None:
    return kg.resolve(name) if kg is not None else name


def _render(
    graph: nx.Graph,
    path: Path,
    title: str,
    max_nodes: int,
    focus: Hashable | Iterable[Hashable] | None,
    *,
    context: dict[str, Any] | None,
    ego: Hashable | None = None,
    depth: int = 1,
) -> VizReport:
    focused = focus_nodes(graph, focus)
    if ego is not None:
        focused = [ego, *(node for node in focused if node != ego)]
    plan = plan_nodes(graph, max_nodes=max_nodes, focus=focused, ego=ego, depth=depth)
    network, links = _build_network(graph, plan, set(focused))
    nodes, edges, *_ = network.get_network_data()
    core = core_relations(links, plan)
    for number, edge in enumerate(edges):
        edge["core"] = number in core
        edge["physics"] = number in core  # the layout follows what is drawn by default

    drawn = len(plan.drawn)
    on_page = {number for number, link in enumerate(links) if not edges[number]["held"]}
    relations_drawn = sum(len(edges[number]["relations"]) for number in on_page)
    total_nodes, total_edges = graph.number_of_nodes(), graph.number_of_edges()
    report = VizReport(
        path=path,
        nodes_drawn=drawn,
        edges_drawn=relations_drawn,
        nodes_omitted=total_nodes - drawn,
        edges_omitted=total_edges - relations_drawn,
        nodes_held=len(plan.held),
    )
    shown = nodes[:drawn]
    legend_counts = Counter(node["group_label"] for node in nodes)
    predicate_counts = Counter(
        relation["predicate"] for edge in edges if edge["typed"] for relation in edge["relations"]
    )
    counted = graph.graph.get("mentions_counted")
    page_data = {
        "mode": "ego" if ego is not None else "overview",
        "summary": {
            "text": _summary_text(report, total_nodes, ego=ego is not None),
            "nodesTotal": total_nodes,
            "nodesOmitted": report.nodes_omitted,
            "nodesHeld": report.nodes_held,
            "edgesTotal": total_edges,
        },
        "legend": [
            {"label": label, "color": label_colour(label), "count": count}
            for label, count in sorted(legend_counts.items(), key=lambda item: (-item[1], item[0]))
        ],
        "predicates": [
            {"predicate": predicate, "count": count}
            for predicate, count in sorted(predicate_counts.items(), key=lambda i: (-i[1], i[0]))
        ],
        "coOccurs": sum(1 for edge in edges if not edge["typed"] and not edge["held"]),
        "strongestPerEntity": STRONGEST_PER_ENTITY,
        "communities": _community_records(shown, links, plan),
        "labels": {
            "nodePx": _NODE_LABEL_PX,
            "edgePx": _EDGE_LABEL_PX,
            "edgesMax": _EDGE_LABELS_MAX,
        },
        "looks": {"normal": _NORMAL_COLOUR, "ended": _ENDED_COLOUR},
        "mentionsCounted": short_text(counted, 120) if isinstance(counted, str) else None,
        "sizes": [{"mentions": n, "size": node_size(n)} for n in _SIZE_EXAMPLES],
        "widths": [{"support": n, "width": edge_width(n)} for n in _WIDTH_EXAMPLES],
        "context": context,
        "nodes": nodes,
        "edges": edges,
        "options": _vis_options(drawn, directed=graph.is_directed(), edge_count=len(edges)),
    }
    page = page_html(short_text(title, HEADING_CHARS) or "graphmem", page_data)
    report.path.parent.mkdir(parents=True, exist_ok=True)
    report.path.write_text(page, encoding="utf-8")
    return report


def _community_records(
    nodes: list[dict[str, Any]], links: list[Link], plan: PagePlan
) -> list[dict[str, Any]]:
    """The drawn entities' communities: ids, member ids (largest first) and a name made of
    the largest members' names."""
    index = {node: number for number, node in enumerate(plan.drawn)}
    drawn_links = [link for link in links if link.source in index and link.target in index]
    records = []
    for number, group in enumerate(communities(plan.drawn, drawn_links)):
        members = sorted((index[node] for node in group), key=lambda i: (-nodes[i]["size"], i))
        first = nodes[members[0]]["label"]
        records.append(
            {
                "id": f"community-{number}",
                "members": members,
                "label": short_text(f"{first} +{len(members) - 1}", NAME_LABEL_CHARS + 6),
                "names": [nodes[i]["name"] for i in members[:_COMMUNITY_NAMES]],
            }
        )
    return records


def _build_network(
    graph: nx.Graph, plan: PagePlan, focus: set[Hashable]
) -> tuple[Network, list[Link]]:
    """Return a pyvis network of the plan's nodes (drawn first, then held), numbered in
    order, with one edge per pair, direction and kind, and the plan's view of each edge."""
    network = Network(directed=graph.is_directed())
    kept = [*plan.drawn, *plan.held]
    held = set(plan.held)
    index = {node: number for number, node in enumerate(kept)}
    names = {node: display_name(node, graph.nodes[node]) for node in kept}
    undirected = graph.to_undirected(as_view=True) if graph.is_directed() else graph
    for node in kept:
        network.add_node(
            index[node],
            **node_record(graph.nodes[node], names[node], focus=node in focus),
            held=node in held,
            hidden=node in held,
            physics=node not in held,
            hop=None if plan.hops is None else plan.hops.get(node),
            degree=sum(1 for other in undirected[node] if other != node),
        )
    groups = _relation_groups(graph, kept, index)
    candidates = [
        Link(source, target, typed, sum(count_value(a.get("support"), default=1) for _, a in rows))
        for (typed, source, target), rows in groups
    ]
    links: list[Link] = []
    parallel: defaultdict[tuple[int, int], int] = defaultdict(int)
    for number, position in enumerate(links_on_page(candidates, plan)):
        (typed, source, target), rows = groups[position]
        relations = sorted(
            (relation_record(key, attrs) for key, attrs in rows),
            key=lambda r: (-r["support"], r["predicate"]),
        )
        support = sum(relation["support"] for relation in relations)
        ended = typed and all(relation["ended"] for relation in relations)
        if ended:
            look: dict[str, Any] = {"color": _ENDED_COLOUR, "font": {"color": _ENDED_FONT}}
        elif not typed:
            look = {"color": _CO_OCCURS_COLOUR}
        else:
            look = {"color": _NORMAL_COLOUR}
        pair = (min(index[source], index[target]), max(index[source], index[target]))
        network.add_edge(
            index[source],
            index[target],
            id=number,
            label="",
            width=edge_width(support),
            dashes=_ENDED_DASHES if ended else not typed,
            **look,
            **_parallel_edge_shape(
                parallel[pair], reversed_=index[source] > index[target], loop=source == target
            ),
            typed=typed,
            ended=ended,
            support=support,
            held=source in held or target in held,
            hidden=True,
            relations=relations,
        )
        parallel[pair] += 1
        links.append(candidates[position])
    return network, links


def _relation_groups(
    graph: nx.Graph, kept: list[Hashable], index: dict[Hashable, int]
) -> list[tuple[tuple[bool, Hashable, Hashable], list[tuple[Any, dict[str, Any]]]]]:
    """The relations among ``kept``, grouped into one drawn edge each: typed relations by
    pair and direction, co-occurrence by pair (either direction), in first-seen order."""
    shown = graph.subgraph(kept)
    if graph.is_multigraph():
        rows = shown.edges(keys=True, data=True)
    else:
        rows = ((source, target, None, attrs) for source, target, attrs in shown.edges(data=True))
    groups: dict[tuple[bool, Hashable, Hashable], list[tuple[Any, dict[str, Any]]]] = {}
    for source, target, key, attrs in rows:
        typed = predicate_of(key, attrs) != CO_OCCURS
        if not typed and index[source] > index[target]:
            source, target = target, source
        groups.setdefault((typed, source, target), []).append((key, attrs))
    return list(groups.items())


def _parallel_edge_shape(position: int, *, reversed_: bool, loop: bool) -> dict[str, Any]:
    """Return vis edge options that fan out the ``position``-th edge between the same nodes.

    The first edge is straight; later ones curve alternately to either side, further each
    time. Sides are fixed relative to the pair, so ``a->b`` and ``b->a`` do not overlap.
    """
    if position == 0:
        return {}
    if loop:
        return {"selfReference": {"size": 20 + 10 * position, "angle": 0.6 * position}}
    clockwise = position % 2 == 1
    if reversed_:
        clockwise = not clockwise
    return {
        "smooth": {
            "enabled": True,
            "type": "curvedCW" if clockwise else "curvedCCW",
            "roundness": 0.25 * ((position + 1) // 2),
        }
    }


def _stabilisation_iterations(node_count: int) -> int:
    """How many layout steps the page runs before it freezes: enough for a small graph to
    settle fully, and a budget of about 30,000 node-steps for big ones (a 300-node page
    settles in about 2 s in headless Chromium on a busy 2-core machine: bench/viz_load.py).

    Example:
        >>> _stabilisation_iterations(50), _stabilisation_iterations(300), _stabilisation_iterations(5000)
        (600, 100, 60)
    """
    return max(60, min(600, 30_000 // max(node_count, 1)))


def _vis_options(node_count: int, *, directed: bool, edge_count: int = 0) -> dict[str, Any]:
    """Return vis-network options: a settled, readable layout that stops moving once drawn."""
    improved = node_count <= 150 and edge_count <= 600
    font = "system-ui, -apple-system, Segoe UI, Roboto, Helvetica Neue, Arial, sans-serif"
    return {
        "autoResize": True,
        # A fixed seed gives the same layout for the same graph; the improved (Kamada-Kawai)
        # initial layout is too slow past a couple of hundred nodes or many edges.
        "layout": {"randomSeed": 7, "improvedLayout": improved},
        "nodes": {
            "shape": "dot",
            "font": {
                "size": _NODE_LABEL_PX,  # kept on screen at every zoom by the page
                "face": font,
                "color": "#1f2933",
                "strokeWidth": 4,
                "strokeColor": "#ffffff",
            },
        },
        "edges": {
            "arrows": {"to": {"enabled": directed, "scaleFactor": 0.5}},
            "color": _NORMAL_COLOUR,
            "font": {
                "size": _EDGE_LABEL_PX,
                "face": font,
                "color": "#52606d",
                "strokeWidth": 3,
                "strokeColor": "#ffffff",
                "align": "horizontal",
            },
            "smooth": {"enabled": False},
            "selectionWidth": 1.5,
        },
        "physics": {
            "enabled": True,
            # ForceAtlas2's gravity grows with a node's mass, so loosely connected entities
            # stay near the rest instead of drifting off (Barnes-Hut left a long tail).
            "solver": "forceAtlas2Based",
            "forceAtlas2Based": {
                "gravitationalConstant": -60,
                "centralGravity": 0.012,
                # Longer springs for small pages: they fill the window at full size
                # (vis-network never zooms in past 100% to fit) and their labels stay apart.
                "springLength": 240 if node_count <= 30 else 160 if node_count <= 100 else 110,
                "springConstant": 0.06,
                "damping": 0.5,
                "avoidOverlap": 0.6,
            },
            # Fewer iterations for big pages: stabilisation is the page's whole load time.
            "stabilization": {
                "enabled": True,
                "iterations": _stabilisation_iterations(node_count),
                "updateInterval": 50,
            },
            "minVelocity": 0.75,
        },
        "interaction": {
            "hover": True,
            "tooltipDelay": 120,
            "hideEdgesOnDrag": node_count > 150,
            "navigationButtons": False,
            "keyboard": False,
        },
    }


def _summary_text(report: VizReport, total_nodes: int, *, ego: bool) -> str:
    """Return the header line: what is drawn, what was left out and how to see it.

    Example:
        >>> report = VizReport(Path("g.html"), 57, 173, nodes_omitted=0, edges_omitted=158)
        >>> print(_summary_text(report, 57, ego=False))  # doctest: +NORMALIZE_WHITESPACE
        57 entities; 173 of their 331 relations on the page: every typed relation and each
        entity's 3 strongest co-occurrence links.
        >>> report = VizReport(Path("g.html"), 150, 300, nodes_omitted=439, nodes_held=150)
        >>> print(_summary_text(report, 589, ego=False))  # doctest: +NORMALIZE_WHITESPACE
        Showing 150 of 589 entities (the most connected) and 300 relations among them;
        439 left out, 150 of them held on the page: double-click an entity to draw its
        neighbours. To draw more: a larger max_nodes (--max-nodes), or one entity's page
        (--entity).
    """
    relations = plural(report.edges_drawn, "relation")
    if not report.nodes_omitted:
        entities = plural(report.nodes_drawn, "entity", "entities")
        if not report.edges_omitted:
            return f"{entities}, {relations}."
        # The rest are co-occurrence links, most of a graph (links_on_page).
        text = (
            f"{entities}; {report.edges_drawn:,} of their "
            f"{report.edges_drawn + report.edges_omitted:,} relations on the page"
        )
        if ego:
            return text + "."
        return (
            f"{text}: every typed relation and each entity's {CO_OCCURS_PER_ENTITY} strongest "
            "co-occurrence links."
        )
    text = (
        f"Showing {report.nodes_drawn:,} of {total_nodes:,} entities "
        f"({'the neighbourhood' if ego else 'the most connected'}) and {relations} among them; "
        f"{report.nodes_omitted:,} left out"
    )
    if report.nodes_held:
        text += (
            f", {report.nodes_held:,} of them held on the page: double-click an entity to draw "
            "its neighbours"
        )
    return (
        text + ". To draw more: a larger max_nodes (--max-nodes), or one entity's page (--entity)."
    )
