"""``graphmem entities``, ``relations``, ``path`` and ``relabel``: the entity graph."""

from __future__ import annotations

import argparse

from .command import Command, a_time, add_json_option, non_blank, non_negative, positive
from .database import entity_memory, open_existing, require_entity
from .output import REANALYSE_HINT, edge_dict, edge_line, print_evidence, print_json

__all__ = [
    "ENTITIES",
    "PATH",
    "RELABEL",
    "RELATIONS",
    "cmd_entities",
    "cmd_path",
    "cmd_relabel",
    "cmd_relations",
]


def cmd_entities(args: argparse.Namespace) -> int:
    storage = open_existing(args)
    try:
        em = entity_memory(storage, args.user)
        kg = em.graph
        frequency = {name: info["frequency"] for name, info in em.entities.items()}
    finally:
        storage.close()
    label = args.label.upper() if args.label else None
    rows = []
    for key, data in kg.graph.nodes(data=True):
        if label is not None and data["label"] != label:
            continue
        rows.append(
            {
                "name": data["name"],
                "label": data["label"],
                "memories": frequency.get(data["name"], 0),
                "relations": kg.graph.degree(key),
                "aliases": [a for a in data["aliases"] if a != data["name"]],
                "first_seen": data["first_seen"],
            }
        )
    rows.sort(key=lambda r: (-r["memories"], -r["relations"], r["name"].lower()))
    rows = rows[: args.limit] if args.limit else rows
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print("No entities" + (f" labelled {label}." if label else "."))
        return 0
    width = min(40, max(len(r["name"]) for r in rows))
    print(f"{'ENTITY':<{width}}  {'LABEL':<11} {'MEMORIES':>8} {'RELATIONS':>9}  ALIASES")
    for r in rows:
        print(
            f"{r['name'][:width]:<{width}}  {r['label']:<11} {r['memories']:>8} "
            f"{r['relations']:>9}  {', '.join(r['aliases'])}"
        )
    return 0


def _entities_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--limit", type=non_negative, default=50, metavar="N", help="0: all")
    p.add_argument("--label", metavar="L", help="only this label (PERSON, ORG, GPE...)")
    add_json_option(p)


ENTITIES = Command(
    "entities",
    cmd_entities,
    "list known entities, most mentioned first",
    """examples:
  graphmem entities --limit 20
  graphmem entities --label PERSON --json""",
    _entities_arguments,
)


def cmd_relations(args: argparse.Namespace) -> int:
    storage = open_existing(args)
    try:
        em = entity_memory(storage, args.user)
        info = require_entity(em.graph, args.name)
        if args.as_of is None:
            edges = em.relations(args.name, predicate=args.predicate)
        else:  # the graph as it stood then: the relations valid at that time
            then = em.as_of(args.as_of)
            edges = then.relations(info.name, predicate=args.predicate) if info.name in then else []
    finally:
        storage.close()
    if not args.co_occurs and args.predicate is None:
        typed = [e for e in edges if e.is_typed]
        hidden = len(edges) - len(typed)
        edges = typed
    else:
        hidden = 0
    edges.sort(key=lambda e: (not e.is_typed, -e.support, e.first_seen))
    shown = edges[: args.limit] if args.limit else edges
    if args.json:
        print_json([edge_dict(e) for e in shown])
        return 0
    kind = (
        "typed relation"
        if hidden or (not args.co_occurs and args.predicate is None)
        else "relation"
    )
    when = f" as of {args.as_of}" if args.as_of is not None else ""
    print(f"{info.name} ({info.label}): {len(edges)} {kind}{'s' * (len(edges) != 1)}{when}")
    for edge in shown:
        print(edge_line(edge))
        print_evidence(edge, args.evidence)
    if hidden:
        print(f"(+ {hidden} co_occurs relations: pass --co-occurs to list them)")
    return 0


def _relations_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", metavar="NAME", type=non_blank, help="an entity name or alias")
    p.add_argument("--predicate", metavar="P", help="only this predicate (works_at, met...)")
    p.add_argument("--co-occurs", action="store_true", help="also list untyped co_occurs relations")
    p.add_argument(
        "--as-of",
        type=a_time,
        metavar="DATE",
        help="the relations valid at that time (ISO 8601: 2026-04-01, 2026-04-01T12:00Z)",
    )
    p.add_argument("--limit", type=non_negative, default=30, metavar="N", help="0: all")
    p.add_argument(
        "--evidence", type=non_negative, default=2, metavar="N", help="sentences per relation"
    )
    add_json_option(p)


RELATIONS = Command(
    "relations",
    cmd_relations,
    "an entity's relations, each with its evidence sentences",
    """examples:
  graphmem relations "Dana Whitfield"
  graphmem relations "Harbor Analytics" --predicate works_at
  graphmem relations Priya --co-occurs --limit 10
  graphmem relations "Dana Whitfield" --as-of 2026-04-01""",
    _relations_arguments,
)


def cmd_relabel(args: argparse.Namespace) -> int:
    storage = open_existing(args)
    try:
        em = entity_memory(storage, args.user)
        name = require_entity(em.graph, args.name).name
        previous = em.relabel(args.name, args.label)
    finally:
        storage.close()
    print(f"{name}: {previous} -> {args.label}")
    print(REANALYSE_HINT)
    return 0


def _relabel_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", metavar="NAME", type=non_blank, help="an entity name or alias")
    p.add_argument("label", metavar="LABEL", type=non_blank, help="PERSON, ORG, PROJECT ...")


RELABEL = Command(
    "relabel",
    cmd_relabel,
    "give an entity another label, for good",
    """examples:
  graphmem relabel Atlas PROJECT
  graphmem relabel "Aisha" PERSON --user alice""",
    _relabel_arguments,
)


def cmd_path(args: argparse.Namespace) -> int:
    storage = open_existing(args)
    try:
        em = entity_memory(storage, args.user)
        a = require_entity(em.graph, args.a)
        b = require_entity(em.graph, args.b)
        paths = em.paths(args.a, args.b, max_hops=args.max_hops, typed_only=args.typed_only)
        paths = paths[: args.limit]
    finally:
        storage.close()
    if args.json:
        print_json(
            [
                [
                    {"from": h.source, "to": h.target, "reversed": h.reversed, **edge_dict(h.edge)}
                    for h in hops
                ]
                for hops in paths
            ]
        )
        return 0
    if not paths:
        print(f"No connection between {a.name} and {b.name} within {args.max_hops} hops.")
        return 0
    for number, hops in enumerate(paths, start=1):
        print(f"Path {number} ({len(hops)} hop{'s' * (len(hops) != 1)}):")
        for hop in hops:
            print(f"  {edge_line(hop.edge).strip()}")
            print_evidence(hop.edge, 1)
    return 0


def _path_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", metavar="A", type=non_blank)
    p.add_argument("b", metavar="B", type=non_blank)
    p.add_argument("--max-hops", type=positive, default=3, metavar="N", help="default 3")
    p.add_argument("--limit", type=positive, default=3, metavar="N", help="paths shown")
    p.add_argument(
        "--typed-only",
        action="store_true",
        help="only paths over typed relations (default: co-occurrence links when no typed "
        "path is within --max-hops)",
    )
    add_json_option(p)


PATH = Command(
    "path",
    cmd_path,
    "how two entities are connected, each hop with its evidence",
    """examples:
  graphmem path "Priya Nair" "Aurex Logistics"
  graphmem path "Jake Morrison" "Dublin" --max-hops 4 --json""",
    _path_arguments,
)
