"""``graphmem demo``: ingest the bundled example corpus and show what graphmem answers."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import DatabaseFileError
from ..items import CO_OCCURS
from .command import Command
from .database import entity_memory, open_database, persistent_cortex, require_entity
from .output import edge_line, heading, print_evidence, relation_counts, wrap

if TYPE_CHECKING:
    from ..graph.knowledge_graph import Edge, Hop
    from ..memories import EntityMemory

__all__ = ["DEMO", "cmd_demo"]


def cmd_demo(args: argparse.Namespace) -> int:
    from ..demo import DEMO_TASK, build_demo_database

    started = time.monotonic()
    out_dir = Path(args.out)
    db = Path(args.demo_db) if args.demo_db else out_dir / "demo.db"
    heading("graphmem demo: the memories of a small consultancy (Mar-Jun 2026)")
    print(f"Database: {db}")
    if db.is_dir():
        raise DatabaseFileError(f"{db}: is a directory, not a database file")
    storage, count = build_demo_database(db, progress=sys.stderr.isatty())
    try:
        kg = entity_memory(storage, None).graph
        entities, typed, co_occurs = relation_counts(kg)
        print(
            f"Ingested {count} memories in {time.monotonic() - started:.1f} s: {entities} "
            f"entities, {typed + co_occurs} relations ({typed} typed, {co_occurs} "
            "co-occurrence links; the page draws each entity's strongest few of these)."
        )
        storage.close()

        heading(f"1. Context for the task: {DEMO_TASK!r}")
        from ..viz import drawable_graph, render_context, render_graph

        task_html = out_dir / "task.html"
        with persistent_cortex(db) as cortex:
            report = cortex.build_context_report(DEMO_TASK)
            assert cortex.entity_memory is not None
            task_page = render_context(report, cortex.entity_memory, task_html)
        print(report.text)

        storage = open_database(db)
        em = entity_memory(storage, None)
        _demo_answers(em)
        graph = drawable_graph(em)
    finally:
        storage.close()

    html = out_dir / "graph.html"
    viz = render_graph(graph, html, title="graphmem demo: Meridian Consulting", max_nodes=80)
    heading("5. Picture")
    print(
        f"Wrote {html} ({viz.nodes_drawn} of {viz.nodes_drawn + viz.nodes_omitted} entities). "
        f"Open it in a browser: {html.resolve().as_uri()}"
    )
    print(
        f"Wrote {task_html}: the context of step 1 beside the {task_page.nodes_drawn} entities "
        f"it used: {task_html.resolve().as_uri()}"
    )
    print(f"\nDone in {time.monotonic() - started:.1f} s. Try next:")
    print(f"  graphmem --db {db} search 'Atlas launch date'")
    print(f"  graphmem --db {db} relations 'Harbor Analytics'")
    print(f"  graphmem --db {db} path 'Priya Nair' 'Harbor Analytics'")
    return 0


def _demo_answers(em: EntityMemory) -> None:
    """Sections 2 to 4 of the demo: relationship questions about the corpus."""
    heading("2. Who works at Harbor Analytics?")
    _demo_who_works_at(em, "Harbor Analytics")

    heading("3. How is Priya Nair connected to Aurex Logistics?")
    typed_paths = em.graph.typed().paths("Priya Nair", "Aurex Logistics")[:3]
    print("Through typed relations:" if typed_paths else "(no typed path was extracted)")
    _demo_paths(typed_paths)
    print("Mentioned together (co-occurrence):")
    _demo_paths(_mentioned_together(em, "Priya Nair", "Aurex Logistics")[:1])

    heading("4. What changed for Dana Whitfield?")
    _demo_changes(em, "Dana Whitfield")


def _mentioned_together(em: EntityMemory, a: str, b: str) -> list[list[Hop]]:
    """The co-occurrence link of ``a`` and ``b`` as one-hop paths (either direction)."""
    from ..graph.knowledge_graph import CO_OCCURS, Hop

    forward = em.find(subject=a, predicate=CO_OCCURS, object=b)
    backward = em.find(subject=b, predicate=CO_OCCURS, object=a)
    return [[Hop(a, b, e, False)] for e in forward] + [[Hop(a, b, e, True)] for e in backward]


def _demo_paths(paths: Sequence[Sequence[Hop]]) -> None:
    for number, hops in enumerate(paths, start=1):
        print(f"Path {number}:")
        for hop in hops:
            print(f"  {edge_line(hop.edge).strip()}")
            # A direct link: show more of its evidence, it is the whole answer.
            print_evidence(hop.edge, 4 if len(hops) == 1 else 1)


def _demo_who_works_at(em: EntityMemory, org: str) -> None:
    kg = em.graph
    org_name = require_entity(kg, org).name

    def person(name: str) -> bool:
        info = kg.get_entity(name)
        return info is not None and info.label == "PERSON"

    def other_end(edge: Edge) -> str:
        return edge.object if edge.subject == org_name else edge.subject

    # A role answers works_at too (head_of_data_of: employed there), so find() lists it.
    works_at = em.find(predicate="works_at", object=org_name)
    listed = {(e.subject, e.predicate, e.object) for e in works_at}
    typed = [
        e
        for e in em.relations(org_name)
        if e.predicate != CO_OCCURS
        and (e.subject, e.predicate, e.object) not in listed
        and person(other_end(e))
    ]
    print(f'find(predicate="works_at", object="{org_name}"), then other typed relations:')
    if not works_at and not typed:
        print("  (no typed relation was extracted)")
    for edge in [*works_at, *sorted(typed, key=lambda e: e.first_seen)]:
        print(edge_line(edge))
        print_evidence(edge, 1)
    named = {e.subject for e in works_at} | {other_end(e) for e in typed}
    mentioned: list[str] = []
    for edge in em.relations(org_name, predicate=CO_OCCURS):
        name = other_end(edge)
        if name not in named and name not in mentioned and person(name):
            mentioned.append(name)
    if mentioned:
        print("People most often mentioned with it (co-occurrence, no typed relation yet):")
        print("  " + ", ".join(mentioned[:8]))


def _demo_changes(em: EntityMemory, name: str) -> None:
    kg = em.graph
    person = require_entity(kg, name).name
    edges = [e for e in em.relations(person) if e.is_typed]
    print("Typed relations, oldest first (valid_to is set when a newer value replaced one):")
    if not edges:
        print("  (none extracted)")
    for edge in sorted(edges, key=lambda e: e.first_seen):
        print(edge_line(edge))
        print_evidence(edge, 1)
    print("Organisations and places mentioned with her, by first and last mention:")
    for edge in sorted(em.relations(person, predicate=CO_OCCURS), key=lambda e: e.first_seen):
        other = edge.object if edge.subject == person else edge.subject
        info = kg.get_entity(other)
        if info is None or info.label not in ("ORG", "GPE", "LOC", "FAC"):
            continue
        print(
            f"  {edge.first_seen[:10]} .. {edge.last_seen[:10]}  {other} "
            f"({info.label}, support {edge.support})"
        )
        for sentence, stamp in edge.sentences()[:1]:
            print(f"      latest: \u201c{wrap(sentence, 15)}\u201d ({stamp[:10]})")


def _demo_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        dest="demo_db",
        metavar="PATH",
        help="demo database, recreated each run (default: OUT/demo.db)",
    )
    p.add_argument(
        "--out", metavar="DIR", default="graphmem-demo", help="output folder (./graphmem-demo)"
    )


DEMO = Command(
    "demo",
    cmd_demo,
    "ingest the bundled example corpus and show what graphmem answers",
    """examples:
  graphmem demo                           # writes ./graphmem-demo/demo.db, graph.html, task.html
  graphmem demo --out /tmp/gm-demo""",
    _demo_arguments,
    tenant_scoped=False,
    db_option=False,  # its own --db: the demo database, recreated
)
