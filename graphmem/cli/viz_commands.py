"""``graphmem viz`` and ``export-graph``: the graph (or a part of it) as a page or a file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidArgumentError
from .command import Command, UsageError, non_blank, non_negative, positive
from .database import (
    db_path,
    entity_memory,
    open_existing,
    persistent_cortex,
    require_entity,
    scope,
)
from .output import check_output, is_graph_page, replacing

if TYPE_CHECKING:
    import networkx as nx

    from ..graph.knowledge_graph import KnowledgeGraph

__all__ = ["EXPORT_GRAPH", "VIZ", "cmd_export_graph", "cmd_viz"]


def cmd_viz(args: argparse.Namespace) -> int:
    from .. import viz

    path = db_path(args)
    out = Path(args.out)
    if out.suffix.lower() != ".html":
        raise UsageError(f"{out}: the page must be an .html file")
    check_output(out, path, force=args.force, replaceable=is_graph_page)
    if args.task:
        open_existing(args).close()
        with persistent_cortex(path, scope(args)) as cortex, replacing(out) as partial:
            assert cortex.entity_memory is not None
            report = viz.render_context(
                cortex.build_context_report(args.task),
                cortex.entity_memory,
                partial,
                max_nodes=args.max_nodes,
            )
        return _wrote_page(args, out, report)
    storage = open_existing(args)
    try:
        em = entity_memory(storage, args.user)
        part, title, focus, ego = _part_to_draw(args, em.graph)
        graph = viz.drawable_graph(em, part)
    finally:
        storage.close()
    with replacing(out) as partial:
        report = viz.render_graph(
            graph,
            partial,
            title=title,
            max_nodes=args.max_nodes,
            focus=focus,
            ego=ego,
            depth=args.depth,
        )
    return _wrote_page(args, out, report)


def _part_to_draw(
    args: argparse.Namespace, kg: KnowledgeGraph
) -> tuple[nx.MultiDiGraph | None, str, list[str], str | None]:
    """What ``graphmem viz`` draws: the subgraph (None: all), the title, the entities in
    focus and the ego (of ``--entity``)."""
    from .. import viz

    if args.entity:
        info = require_entity(kg, args.entity)
        # One hop more than drawn: the page holds it for expanding on a click.
        part = kg.subgraph([info.name], depth=args.depth + 1)
        return part, f"{info.name}: {args.depth}-hop neighbourhood", [], info.key
    if args.path:
        import networkx as nx

        a, b = (require_entity(kg, name) for name in args.path)
        part = kg.graph.__class__()
        for hops in kg.paths(a.name, b.name, max_hops=args.max_hops):
            keys = [a.key, *(_key(kg, h.target) for h in hops)]
            part = nx.compose(part, viz.path_subgraph(kg.graph, keys))
        if part.number_of_nodes() == 0:
            raise InvalidArgumentError(
                f"no connection between {a.name} and {b.name} within {args.max_hops} hops"
            )
        return part, f"How {a.name} is connected to {b.name}", [a.key, b.key], None
    title = "graphmem: the whole graph" + (f" of {args.user}" if args.user else "")
    return None, title, [], None


def _key(kg: KnowledgeGraph, name: str) -> str:
    key = kg.resolve(name)
    assert key is not None
    return key


def _wrote_page(args: argparse.Namespace, out: Path, report: Any) -> int:
    omitted = f", {report.nodes_omitted} left out (--max-nodes)" if report.nodes_omitted else ""
    print(f"Wrote {out} ({report.nodes_drawn} entities, {report.edges_drawn} relations{omitted}).")
    if args.open:
        import webbrowser

        webbrowser.open(out.resolve().as_uri())
    return 0


def _viz_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", metavar="OUT.html")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--entity", metavar="NAME", type=non_blank, help="an entity's neighbourhood")
    what.add_argument(
        "--path", nargs=2, metavar=("A", "B"), type=non_blank, help="the paths from A to B"
    )
    what.add_argument(
        "--task", metavar="TEXT", type=non_blank, help="the entities a task's context uses"
    )
    p.add_argument("--depth", type=positive, default=1, metavar="N", help="with --entity")
    p.add_argument("--max-hops", type=positive, default=3, metavar="N", help="with --path")
    p.add_argument("--max-nodes", type=positive, default=150, metavar="N", help="default 150")
    p.add_argument("--open", action="store_true", help="open the page in a browser")
    p.add_argument(
        "--force", action="store_true", help="replace an existing file that is not a page"
    )


VIZ = Command(
    "viz",
    cmd_viz,
    "draw the graph (or a part of it) as one offline HTML page",
    """examples:
  graphmem viz graph.html                                   # the whole graph
  graphmem viz dana.html --entity "Dana Whitfield" --depth 2 --open
  graphmem viz path.html --path "Priya Nair" "Harbor Analytics"
  graphmem viz task.html --task "Prepare the Atlas status update" """,
    _viz_arguments,
)


def cmd_export_graph(args: argparse.Namespace) -> int:
    from ..viz import export_graph

    out = Path(args.out)
    check_output(out, db_path(args), force=args.force, replaceable=None)
    fmt = args.format or {".graphml": "graphml", ".gexf": "gexf"}.get(out.suffix.lower())
    if fmt is None:
        raise UsageError(f"{out}: end the name in .graphml or .gexf, or pass --format")
    storage = open_existing(args)
    try:
        em = entity_memory(storage, args.user)
        entities = None
        if args.entity:
            entities = [require_entity(em.graph, args.entity).name]
        with replacing(out) as partial:
            written = export_graph(em, partial, format=fmt, entities=entities, depth=args.depth)
    finally:
        storage.close()
    print(f"Wrote {out} ({fmt}: {written.nodes} entities, {written.edges} relations).")
    return 0


def _export_graph_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", metavar="OUT", help="a .graphml or .gexf file")
    p.add_argument("--format", choices=("graphml", "gexf"), help="default: from the suffix of OUT")
    p.add_argument("--entity", metavar="NAME", type=non_blank, help="an entity's neighbourhood")
    p.add_argument("--depth", type=non_negative, default=1, metavar="N", help="with --entity")
    p.add_argument("--force", action="store_true", help="replace an existing file")


EXPORT_GRAPH = Command(
    "export-graph",
    cmd_export_graph,
    "write the graph (or a part of it) as GraphML or GEXF, for Gephi, yEd or Cytoscape",
    """examples:
  graphmem export-graph knowledge.graphml                   # the whole graph
  graphmem export-graph dana.gexf --entity "Dana Whitfield" --depth 2
  graphmem export-graph out.xml --format graphml --user alice""",
    _export_graph_arguments,
)
