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
show where they fit, the largest first. What is drawn first follows :mod:`._views`: an ego
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

import base64
import hashlib
import html
import json
import math
import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import networkx as nx
from pyvis.network import Network

from graphmem._assets import asset_path
from graphmem.extract.predicates import event_predicates
from graphmem.graph.knowledge_graph import CO_OCCURS, validity_text

from ._source import EntityTier, Source, drawable_graph, knowledge_graph_of
from ._subgraphs import count_value, focus_nodes
from ._views import (
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

#: vis-network build shipped inside pyvis 0.3.x.
_VIS_DIR = ("templates", "lib", "vis-9.1.2")

#: Colour-blind-friendly colours (Tableau 10) for the entity labels graphmem keeps.
_LABEL_COLOURS = {
    "PERSON": "#4e79a7",
    "ORG": "#f28e2b",
    "GPE": "#59a14f",
    "LOC": "#8cd17d",
    "PRODUCT": "#e15759",
    "EVENT": "#b07aa1",
    "WORK_OF_ART": "#ff9da7",
    "NORP": "#9c755f",
    "FAC": "#76b7b2",
    "LAW": "#edc948",
}
#: Other labels get one of these, chosen by a stable hash of the label.
_EXTRA_COLOURS = ("#17becf", "#bcbd22", "#aec7e8", "#ffbb78", "#c5b0d5", "#c49c94", "#dbdb8d")
_UNLABELLED = "UNLABELLED"
_UNLABELLED_COLOUR = "#bab0ac"

# Text budgets keep tooltips readable and the page small whatever a memory holds.
_NAME_LABEL_CHARS = 32
_HEADING_CHARS = 200
_PREDICATE_CHARS = 60
_ALIAS_COUNT, _ALIAS_CHARS = 12, 80
_EVIDENCE_COUNT, _EVIDENCE_CHARS = 3, 300
_PANEL_EVIDENCE_COUNT = 5
_ID_CHARS, _STAMP_CHARS = 80, 40
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

#: Characters that could end the JSON's ``<script>`` block or break it in older parsers.
_SCRIPT_JSON_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}
_PLACEHOLDER = re.compile(r"@@([A-Z_]+)@@")
#: Only these change how a browser reads a script block (``<script`` alone is harmless).
_SCRIPT_BREAKERS = re.compile(r"</script|<!--", re.IGNORECASE)


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


def node_size(mentions: int) -> float:
    """The radius (in pixels at 100% zoom) of a node with ``mentions`` mentions.

    Example:
        >>> node_size(1), node_size(10), node_size(100_000)
        (10.0, 28.3, 44.0)
    """
    return round(min(10 + 5.5 * math.log2(max(mentions, 1)), 44.0), 1)


def edge_width(support: int) -> float:
    """The width (in pixels at 100% zoom) of a relation with ``support`` pieces of evidence.

    Example:
        >>> edge_width(1), edge_width(4), edge_width(10_000)
        (1.5, 4.5, 9.0)
    """
    return round(min(1.5 + 1.5 * math.log2(max(support, 1)), 9.0), 2)


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
            "title": _text(section.title, _HEADING_CHARS),
            "entries": [
                {
                    "text": _text(entry.content[: entry.max_chars], 600),
                    "tier": entry.tier,
                    "score": None if entry.score is None else round(float(entry.score), 4),
                    "path": _texts(
                        entry.explanation.entity_path if entry.explanation else [], 8, 80
                    ),
                    "matched": _texts(
                        entry.explanation.matched_terms if entry.explanation else [], 12, 40
                    ),
                }
                for entry in section.visible
            ],
        }
        for section in report.sections
        if section.visible
    ]
    context = {"task": _text(report.task, 600), "sections": sections}
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
            {"label": label, "color": _label_colour(label), "count": count}
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
        "mentionsCounted": _text(counted, 120) if isinstance(counted, str) else None,
        "sizes": [{"mentions": n, "size": node_size(n)} for n in _SIZE_EXAMPLES],
        "widths": [{"support": n, "width": edge_width(n)} for n in _WIDTH_EXAMPLES],
        "context": context,
        "nodes": nodes,
        "edges": edges,
        "options": _vis_options(drawn, directed=graph.is_directed(), edge_count=len(edges)),
    }
    page = _page_html(_text(title, _HEADING_CHARS) or "graphmem", page_data)
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
                "label": _text(f"{first} +{len(members) - 1}", _NAME_LABEL_CHARS + 6),
                "names": [nodes[i]["name"] for i in members[:_COMMUNITY_NAMES]],
            }
        )
    return records


# --- building the page data -------------------------------------------------------------


def _build_network(
    graph: nx.Graph, plan: PagePlan, focus: set[Hashable]
) -> tuple[Network, list[Link]]:
    """Return a pyvis network of the plan's nodes (drawn first, then held), numbered in
    order, with one edge per pair, direction and kind, and the plan's view of each edge."""
    network = Network(directed=graph.is_directed())
    kept = [*plan.drawn, *plan.held]
    held = set(plan.held)
    index = {node: number for number, node in enumerate(kept)}
    names = {node: _display_name(node, graph.nodes[node]) for node in kept}
    undirected = graph.to_undirected(as_view=True) if graph.is_directed() else graph
    for node in kept:
        network.add_node(
            index[node],
            **_node_record(graph.nodes[node], names[node], focus=node in focus),
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
            (_relation_record(key, attrs) for key, attrs in rows),
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


def _node_record(attrs: dict[str, Any], name: str, *, focus: bool) -> dict[str, Any]:
    """An entity's drawing options and the page's record of it."""
    label = _entity_label(attrs)
    colour = _label_colour(label)
    border = "#1f2933" if focus else _darken(colour)
    mentions = count_value(attrs.get("mentions"), default=-1)  # -1: missing or not a number
    subtitle = label
    if mentions >= 0:
        subtitle += f" · {_plural(mentions, 'mention')}"
    if focus:
        subtitle += " · focus"
    aliases = _unique(_texts(attrs.get("aliases"), _ALIAS_COUNT, _ALIAS_CHARS))
    return {
        "label": _text(name, _NAME_LABEL_CHARS) or "?",
        "color": {
            "background": colour,
            "border": border,
            "highlight": {"background": colour, "border": "#1f2933"},
            "hover": {"background": colour, "border": "#1f2933"},
        },
        "size": node_size(mentions),
        "borderWidth": 3.5 if focus else 1.5,
        "group_label": label,
        "name": _text(name, _HEADING_CHARS),
        "mentions": mentions if mentions >= 0 else None,
        "focus": focus,
        "aliases": aliases,
        "first_seen": _stamp(attrs.get("first_seen")),
        "last_seen": _stamp(attrs.get("last_seen")),
        "evidence": _evidence(attrs.get("evidence")),
        "tooltip": {
            "heading": _text(name, _HEADING_CHARS),
            "subtitle": subtitle,
            "sections": [
                {"heading": "Aliases", "items": aliases},
                {
                    "heading": "Recent evidence",
                    "items": _texts(attrs.get("evidence"), _EVIDENCE_COUNT, _EVIDENCE_CHARS),
                },
            ],
        },
    }


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
        typed = _predicate(key, attrs) != CO_OCCURS
        if not typed and index[source] > index[target]:
            source, target = target, source
        groups.setdefault((typed, source, target), []).append((key, attrs))
    return list(groups.items())


def _predicate(key: Any, attrs: dict[str, Any]) -> str:
    return _text(attrs.get("predicate") or (key if isinstance(key, str) else ""), _PREDICATE_CHARS)


def _relation_record(key: Any, attrs: dict[str, Any]) -> dict[str, Any]:
    """One relation of a drawn edge, as the panel lists it."""
    predicate = _predicate(key, attrs)
    typed = predicate != CO_OCCURS
    return {
        "predicate": predicate,
        "typed": typed,
        "ended": typed and bool(attrs.get("valid_to")),
        "support": count_value(attrs.get("support"), default=1),
        "confidence": _confidence(attrs.get("confidence")),
        "valid_from": _stamp(attrs.get("valid_from")),
        "valid_to": _stamp(attrs.get("valid_to")),
        "first_seen": _stamp(attrs.get("first_seen")),
        "last_seen": _stamp(attrs.get("last_seen")),
        "validity": _validity(predicate, attrs) if typed else "",
        "evidence": _evidence(attrs.get("evidence")),
    }


def _evidence(value: object) -> list[dict[str, Any]]:
    """The panel's evidence records (sentence, memory id, rule, date) from an attribute that
    holds records or plain sentences."""
    if value is None:
        return []
    items = [value] if isinstance(value, str | dict) or not isinstance(value, Iterable) else value
    records: list[dict[str, Any]] = []
    for item in items:
        if len(records) == _PANEL_EVIDENCE_COUNT:
            break
        record = item if isinstance(item, dict) else {"sentence": item}
        sentence = record.get("sentence")
        if sentence is None or not (text := _text(sentence, _EVIDENCE_CHARS)):
            continue
        records.append(
            {
                "sentence": text,
                "memory_id": _optional_text(record.get("memory_id"), _ID_CHARS),
                "rule": _optional_text(record.get("rule"), _ID_CHARS),
                "date": _stamp(record.get("date")),
            }
        )
    return records


def _stamp(value: object) -> str | None:
    """An ISO 8601 time as the page compares and shows it (None when missing)."""
    if value is None or not str(value).strip():
        return None
    return _text(value, _STAMP_CHARS)


def _optional_text(value: object, limit: int) -> str | None:
    return None if value is None else _text(value, limit) or None


def _confidence(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return round(float(value), 3) if math.isfinite(value) else None


def _validity(predicate: str, attrs: dict[str, Any]) -> str:
    """When a typed edge held ("since 2025-03-03", "2025-03-03 to 2025-04-21"), from its
    ``valid_from``, ``valid_to`` and ``first_seen`` attributes ("" when it has none)."""

    def stamp(key: str) -> str | None:
        value = attrs.get(key)
        return _text(value, 40) or None if isinstance(value, str) else None

    return validity_text(
        stamp("valid_from"),
        stamp("valid_to"),
        stamp("first_seen") or "",
        event=predicate in event_predicates(),
    )


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
        >>> report = VizReport(Path("g.html"), 150, 300, nodes_omitted=439, nodes_held=150)
        >>> print(_summary_text(report, 589, ego=False))  # doctest: +NORMALIZE_WHITESPACE
        Showing 150 of 589 entities (the most connected) and 300 relations among them;
        439 left out, 150 of them held on the page: double-click an entity to draw its
        neighbours. To draw more: a larger max_nodes (--max-nodes), or one entity's page
        (--entity).
    """
    relations = _plural(report.edges_drawn, "relation")
    if not report.nodes_omitted:
        return f"{_plural(report.nodes_drawn, 'entity', 'entities')}, {relations}."
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


# --- the page ---------------------------------------------------------------------------


def _page_html(title: str, page_data: dict[str, Any]) -> str:
    """Return the filled-in page: assets in-lined, data embedded, scripts pinned by hash."""
    vis_js, app_js = _vis_js(), _asset_text("viz", "graph.js")
    for script in (vis_js, app_js):
        if _SCRIPT_BREAKERS.search(script):
            raise RuntimeError("a script to in-line contains '</script' or '<!--'")
    style = _vis_css() + "\n" + _asset_text("viz", "style.css")
    if re.search(r"</style", style, re.IGNORECASE):
        raise RuntimeError("a stylesheet to in-line contains '</style'")
    csp = "; ".join(
        [
            "default-src 'none'",
            f"script-src {_csp_hash(vis_js)} {_csp_hash(app_js)}",
            "style-src 'unsafe-inline'",  # vis-network styles its elements from script
            "img-src data:",
            "font-src data:",
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )
    escaped_title = html.escape(title, quote=True)
    return _fill_template(
        _asset_text("viz", "graph.html"),
        {
            "CSP": csp,
            "TITLE": escaped_title,
            "STYLE": style,
            "VIS_JS": vis_js,
            "DATA": _script_safe_json(page_data),
            "APP_JS": app_js,
        },
    )


def _fill_template(template: str, values: dict[str, str]) -> str:
    """Replace every ``@@NAME@@`` in one pass, so no inserted text is searched again."""
    missing = set(_PLACEHOLDER.findall(template)) - values.keys()
    if missing:
        raise RuntimeError(f"no value for template placeholders {sorted(missing)}")
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], template)


def _script_safe_json(value: object) -> str:
    """Return JSON that cannot end or escape the ``<script>`` block holding it.

    Example:
        >>> _script_safe_json({"name": "</script><b>&"})
        '{"name":"\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026"}'
    """
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.translate(_SCRIPT_JSON_ESCAPES)


def _csp_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def _asset_text(*parts: str) -> str:
    return asset_path(*parts).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _vis_js() -> str:
    """Return pyvis's vis-network bundle, ready to in-line.

    The bundle holds a few URLs that are never fetched (licence headers, error messages, the
    SVG namespace). ``://`` becomes ``:\\/\\/``, which means the same inside JavaScript strings,
    regular expressions and comments, so the page holds no URL at all.
    """
    return _pyvis_vis_file("vis-network.min.js").replace("://", ":\\/\\/")


@lru_cache(maxsize=1)
def _vis_css() -> str:
    return _pyvis_vis_file("vis-network.css")


def _pyvis_vis_file(name: str) -> str:
    resource = resources.files("pyvis").joinpath(*_VIS_DIR, name)
    if not resource.is_file():
        raise FileNotFoundError(
            f"pyvis no longer ships {'/'.join((*_VIS_DIR, name))}; graphmem.viz needs pyvis 0.3.x"
        )
    return resource.read_text(encoding="utf-8")


# --- small value helpers ----------------------------------------------------------------


def _display_name(node: Hashable, attrs: dict[str, Any]) -> str:
    name = attrs.get("name")
    return _text(name if name is not None and str(name).strip() else node, 10_000)


def _entity_label(attrs: dict[str, Any]) -> str:
    label = attrs.get("label")
    return _text(label, 40) if label is not None and str(label).strip() else _UNLABELLED


def _label_colour(label: str) -> str:
    if label == _UNLABELLED:
        return _UNLABELLED_COLOUR
    fallback = _EXTRA_COLOURS[zlib.crc32(label.encode("utf-8")) % len(_EXTRA_COLOURS)]
    return _LABEL_COLOURS.get(label, fallback)


def _darken(colour: str, factor: float = 0.7) -> str:
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return "#" + "".join(f"{int(channel * factor):02x}" for channel in (red, green, blue))


def _text(value: object, limit: int) -> str:
    """Return ``value`` as one line of text of at most ``limit`` characters."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _texts(value: object, count: int, limit: int) -> list[str]:
    """Return up to ``count`` non-empty lines from a list attribute (a lone string is one)."""
    if value is None:
        return []
    items = [value] if isinstance(value, str) or not isinstance(value, Iterable) else value
    lines: list[str] = []
    for item in items:
        if len(lines) == count:
            break
        if isinstance(item, dict):
            item = item.get("sentence")
        if item is not None and (line := _text(item, limit)):
            lines.append(line)
    return lines


def _unique(items: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(items))


def _plural(count: int, singular: str, plural: str | None = None) -> str:
    return f"{count:,} {singular if count == 1 else plural or singular + 's'}"
