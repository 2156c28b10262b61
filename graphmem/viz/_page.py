"""Render an entity graph to one self-contained HTML page that works with no network.

The page is drawn by vis-network (in-lined from the installed pyvis package; no CDN, no
external URL) from the template in the project's ``viz/`` folder. pyvis builds the node and
edge records; its own page templates are not used because they load Bootstrap from CDNs.

Graph conventions (what the rest of graphmem passes in; missing attributes have defaults):

* The graph is a ``networkx.MultiDiGraph`` (any NetworkX graph works).
* Node id: any hashable, normally the entity's canonical key string.
* Node attributes: ``name`` (display name, ``str``; default ``str(node id)``), ``label``
  (spaCy label such as ``PERSON``, ``ORG``, ``GPE``, ``PRODUCT``; default ``UNLABELLED``),
  ``mentions`` (``int``), ``aliases`` (``list[str]``), ``evidence`` (``list[str]``, the most
  recent evidence sentences, newest first).
* Edge key: the predicate. Edge attributes: ``predicate`` (``str`` such as ``"works_at"`` or
  ``"co_occurs"``; default the key), ``support`` (``int``), ``evidence`` (``list[str]``),
  ``valid_from`` / ``valid_to`` / ``first_seen`` (ISO 8601 ``str`` or None: when it held).

On the page: node colour by label (legend in the corner), node size by mentions, edge label =
predicate, edge width = support, ``co_occurs`` edges dashed, relations that ended (a
``valid_to``) faded, dotted and labelled "(ended)", tooltips with a node's aliases and recent
evidence (an edge's evidence, and when a typed relation held: "since 2025-03-03",
"2025-03-03 to 2025-04-21"). Above ``max_nodes`` the focus nodes and then the most
connected nodes are kept, and the page says how many were left out.

Memory content is untrusted. It reaches the page only as JSON inside a non-executed
``<script type="application/json">`` block (``<``, ``>``, ``&``, U+2028 and U+2029 escaped, so
it cannot close the block) and reaches the DOM only through ``textContent``; tooltips are DOM
elements, never HTML strings. A Content-Security-Policy lets only the page's own two scripts
(pinned by SHA-256) run, and forbids every network request.

Example:
    >>> import tempfile
    >>> from pathlib import Path
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
from typing import Any

import networkx as nx
from pyvis.network import Network

from graphmem._assets import asset_path
from graphmem.extract.predicates import event_predicates
from graphmem.graph.knowledge_graph import validity_text

from ._source import Source, drawable_graph
from ._subgraphs import count_value, focus_nodes, select_visible_nodes

__all__ = ["VizReport", "render_graph"]

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
#: A relation that no longer holds (it has a ``valid_to``): faded and dotted, "(ended)".
_ENDED_COLOUR = {"color": "#cbd2d9", "highlight": "#7b8794", "hover": "#7b8794", "opacity": 0.85}
_ENDED_FONT = "#9aa5b1"
_ENDED_DASHES = [2, 6]

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


def render_graph(
    graph: Source,
    path: str | Path,
    *,
    title: str = "graphmem",
    max_nodes: int = 300,
    focus: Hashable | Iterable[Hashable] | None = None,
) -> VizReport:
    """Write ``graph`` as one self-contained, offline HTML page at ``path``.

    Parameters:
        graph: the entity graph (conventions in the module docstring), or a
            :class:`~graphmem.graph.KnowledgeGraph` (``memory.graph``): all of it, each node
            and edge with its evidence sentences (for a part of it with evidence, pass
            ``kg.with_evidence(kg.subgraph(names))``).
        path: the HTML file to write; missing parent folders are created.
        title: shown in the page header and the browser tab (escaped).
        max_nodes: the node budget; above it the least connected nodes are left out.
        focus: a node id, or several, always drawn (first) and outlined.

    Returns:
        A :class:`VizReport` with the counts drawn and omitted.

    Raises:
        EntityNotFound: a focus node is not in the graph.
        InvalidArgumentError: ``max_nodes`` is below 1.

    Example:
        >>> import tempfile
        >>> graph = nx.MultiDiGraph([("ada", "bob"), ("bob", "cy"), ("bob", "ada")])
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     report = render_graph(graph, Path(tmp) / "g.html", max_nodes=2)
        >>> (report.nodes_drawn, report.edges_drawn, report.nodes_omitted, report.edges_omitted)
        (2, 2, 1, 1)
    """
    graph = drawable_graph(graph)
    focused = focus_nodes(graph, focus)
    kept = select_visible_nodes(graph, max_nodes=max_nodes, focus=focused)
    network = _build_network(graph, kept, set(focused))
    nodes, edges, *_ = network.get_network_data()

    total_nodes, total_edges = graph.number_of_nodes(), graph.number_of_edges()
    report = VizReport(
        path=Path(path),
        nodes_drawn=len(nodes),
        edges_drawn=len(edges),
        nodes_omitted=total_nodes - len(nodes),
        edges_omitted=total_edges - len(edges),
    )
    legend_counts = Counter(node["group_label"] for node in nodes)
    page_data = {
        "summary": {
            "text": _summary_text(report, total_nodes, total_edges),
            "nodesTotal": total_nodes,
            "nodesOmitted": report.nodes_omitted,
            "edgesTotal": total_edges,
        },
        "legend": [
            {"label": label, "color": _label_colour(label), "count": count}
            for label, count in sorted(legend_counts.items(), key=lambda item: (-item[1], item[0]))
        ],
        "nodes": nodes,
        "edges": edges,
        "options": _vis_options(len(nodes), directed=graph.is_directed()),
    }
    page = _page_html(_text(title, _HEADING_CHARS) or "graphmem", page_data)
    report.path.parent.mkdir(parents=True, exist_ok=True)
    report.path.write_text(page, encoding="utf-8")
    return report


# --- building the page data -------------------------------------------------------------


def _build_network(graph: nx.Graph, kept: list[Hashable], focus: set[Hashable]) -> Network:
    """Return a pyvis network of the ``kept`` nodes, numbered in order, and their edges."""
    network = Network(directed=graph.is_directed())
    index = {node: number for number, node in enumerate(kept)}
    names = {node: _display_name(node, graph.nodes[node]) for node in kept}
    for node in kept:
        attrs = graph.nodes[node]
        label = _entity_label(attrs)
        colour = _label_colour(label)
        border = "#1f2933" if node in focus else _darken(colour)
        mentions = count_value(attrs.get("mentions"), default=-1)  # -1: missing or not a number
        subtitle = label
        if mentions >= 0:
            subtitle += f" · {_plural(mentions, 'mention')}"
        if node in focus:
            subtitle += " · focus"
        network.add_node(
            index[node],
            label=_text(names[node], _NAME_LABEL_CHARS) or "?",
            color={
                "background": colour,
                "border": border,
                "highlight": {"background": colour, "border": "#1f2933"},
                "hover": {"background": colour, "border": "#1f2933"},
            },
            size=round(min(10 + 5.5 * math.log2(max(mentions, 1)), 44), 1),
            borderWidth=3.5 if node in focus else 1.5,
            group_label=label,
            tooltip={
                "heading": _text(names[node], _HEADING_CHARS),
                "subtitle": subtitle,
                "sections": [
                    {
                        "heading": "Aliases",
                        "items": _unique(_texts(attrs.get("aliases"), _ALIAS_COUNT, _ALIAS_CHARS)),
                    },
                    {
                        "heading": "Recent evidence",
                        "items": _texts(attrs.get("evidence"), _EVIDENCE_COUNT, _EVIDENCE_CHARS),
                    },
                ],
            },
        )

    shown = graph.subgraph(kept)
    if graph.is_multigraph():
        edge_rows = shown.edges(keys=True, data=True)
    else:
        edge_rows = (
            (source, target, None, attrs) for source, target, attrs in shown.edges(data=True)
        )
    arrow = "→" if graph.is_directed() else "—"
    parallel: defaultdict[tuple[int, int], int] = defaultdict(int)
    for number, (source, target, key, attrs) in enumerate(edge_rows):
        predicate_value = attrs.get("predicate") or (key if isinstance(key, str) else "")
        predicate = _text(predicate_value, _PREDICATE_CHARS)
        support = count_value(attrs.get("support"), default=1)
        pair = (min(index[source], index[target]), max(index[source], index[target]))
        typed = predicate != "co_occurs"
        when = _validity(predicate, attrs) if typed else ""
        ended = typed and bool(attrs.get("valid_to"))
        network.add_edge(
            index[source],
            index[target],
            id=number,
            label=f"{predicate} (ended)" if ended else predicate,
            width=round(min(1 + 1.5 * math.log2(max(support, 1)), 8), 2),
            dashes=_ENDED_DASHES if ended else not typed,
            **({"color": _ENDED_COLOUR, "font": {"color": _ENDED_FONT}} if ended else {}),
            **_parallel_edge_shape(
                parallel[pair], reversed_=index[source] > index[target], loop=source == target
            ),
            tooltip={
                "heading": _text(
                    f"{names[source]} —{predicate}{arrow} {names[target]}", _HEADING_CHARS
                ),
                "subtitle": f"support {support}" + (f" · {when}" if when else ""),
                "sections": [
                    {
                        "heading": "Evidence",
                        "items": _texts(attrs.get("evidence"), _EVIDENCE_COUNT, _EVIDENCE_CHARS),
                    },
                ],
            },
        )
        parallel[pair] += 1
    return network


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


def _vis_options(node_count: int, *, directed: bool) -> dict[str, Any]:
    """Return vis-network options: a settled, readable layout that stops moving once drawn."""
    font = "system-ui, -apple-system, Segoe UI, Roboto, Helvetica Neue, Arial, sans-serif"
    return {
        "autoResize": True,
        # A fixed seed gives the same layout for the same graph; the improved (Kamada-Kawai)
        # initial layout is too slow past a couple of hundred nodes.
        "layout": {"randomSeed": 7, "improvedLayout": node_count <= 150},
        "nodes": {
            "shape": "dot",
            "font": {
                "size": 16,
                "face": font,
                "color": "#1f2933",
                "strokeWidth": 4,
                "strokeColor": "#ffffff",
            },
        },
        "edges": {
            "arrows": {"to": {"enabled": directed, "scaleFactor": 0.5}},
            "color": {"color": "#a3acb9", "highlight": "#3e4c59", "hover": "#52606d"},
            "font": {
                "size": 13,
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
            "solver": "barnesHut",
            "barnesHut": {
                "gravitationalConstant": -9000,
                "centralGravity": 0.3,
                "springLength": 150,
                "springConstant": 0.03,
                "damping": 0.2,
                "avoidOverlap": 0.4,
            },
            # Fewer iterations for big pages: a 300-node page settles in seconds, not tens.
            "stabilization": {
                "enabled": True,
                "iterations": max(200, min(1000, 60_000 // max(node_count, 1))),
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


def _summary_text(report: VizReport, total_nodes: int, total_edges: int) -> str:
    """Return the header line, e.g. ``Showing 300 of 1,240 entities; 940 omitted (...)``."""
    if report.nodes_omitted:
        return (
            f"Showing {report.nodes_drawn:,} of {total_nodes:,} entities; "
            f"{report.nodes_omitted:,} omitted (least connected). "
            f"Relations: {report.edges_drawn:,} of {total_edges:,} drawn."
        )
    entities = _plural(report.nodes_drawn, "entity", "entities")
    return f"{entities}, {_plural(report.edges_drawn, 'relation')}."


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
