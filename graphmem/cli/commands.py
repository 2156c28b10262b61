"""The handlers of the ``graphmem`` subcommands: each reads its arguments, calls the library
and prints (see :mod:`graphmem.cli` for the parser)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DatabaseFileError, EntityNotFound, GraphmemError, InvalidArgumentError
from ..records import ingest_records, read_records
from .output import (
    check_output,
    counts_text,
    edge_dict,
    edge_line,
    heading,
    is_graph_page,
    print_json,
    replacing,
    wrap,
)

if TYPE_CHECKING:
    import networkx as nx

    from ..compat.storage import SQLiteStorage
    from ..cortex import CortexMemory
    from ..graph.knowledge_graph import Edge, Hop, KnowledgeGraph
    from ..memories import EntityMemory, LongTermMemory


class UsageError(GraphmemError):
    """A command-line mistake the user can fix (exit status 2)."""


def default_db_path() -> Path:
    """``$GRAPHMEM_DB``, else ``graphmem.db`` in the user's data directory.

    The data directory is ``$XDG_DATA_HOME/graphmem`` or ``~/.local/share/graphmem``.

    Example:
        >>> default_db_path().name
        'graphmem.db'
    """
    explicit = os.environ.get("GRAPHMEM_DB")
    if explicit:
        return Path(explicit).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home).expanduser() / "graphmem" / "graphmem.db"


def _db_path(args: argparse.Namespace) -> Path:
    given = getattr(args, "db", None)
    return Path(given).expanduser() if given else default_db_path()


def _open_existing(args: argparse.Namespace) -> SQLiteStorage:
    """The database of a reading command; it must exist (no empty file appears by mistake)."""
    path = _db_path(args)
    if not path.exists():
        raise DatabaseFileError(
            f"{path}: no such database (create one with `graphmem ingest FILE`, "
            "or pass --db PATH / set GRAPHMEM_DB)"
        )
    return _open(path)


def _open(path: Path) -> SQLiteStorage:
    from ..compat.storage import SQLiteStorage

    if path.is_dir():
        raise DatabaseFileError(f"{path}: is a directory, not a database file")
    return SQLiteStorage(path)


def _scope(args: argparse.Namespace) -> str:
    """The tenant a command reads: ``--user``, else the shared memories (``""``), so that
    every command sees the same memories and graph (docs/cli.md, "Tenant scope")."""
    return str(getattr(args, "user", None) or "")


def _entity_memory(storage: SQLiteStorage, user: str | None) -> EntityMemory:
    from ..memories import EntityMemory

    return EntityMemory(storage=storage, max_items=None, tenant=user)


def _long_term(storage: SQLiteStorage, user: str | None) -> LongTermMemory:
    from ..memories import LongTermMemory

    return LongTermMemory(storage=storage, max_items=None, tenant=user)


@contextmanager
def _persistent_cortex(path: Path, user_id: str | None = None) -> Iterator[CortexMemory]:
    """A ``CortexMemory`` over the file (it persists only when ``WRITE_MEMORY=1``), of
    ``user_id`` when given (``""``: the shared memories)."""
    from ..cortex import CortexMemory

    previous = os.environ.get("WRITE_MEMORY")
    os.environ["WRITE_MEMORY"] = "1"
    try:
        cortex = CortexMemory(persistence_path=str(path), long_term_capacity=10**9, user_id=user_id)
    finally:
        if previous is None:
            del os.environ["WRITE_MEMORY"]
        else:
            os.environ["WRITE_MEMORY"] = previous
    try:
        yield cortex
    finally:
        if cortex.storage is not None:
            cortex.storage.close()


def cmd_ingest(args: argparse.Namespace) -> int:
    started = time.monotonic()
    records = read_records(args.file, args.format, args.user, args.time_field)
    if not records:
        raise InvalidArgumentError(f"{args.file}: no memories to ingest (the input is empty)")
    path = _db_path(args)
    storage = _open(path)
    try:
        summary = ingest_records(
            storage,
            records,
            batch_size=args.batch_size,
            workers=args.workers,
            progress=sys.stderr.isatty() if args.progress is None else args.progress,
        )
        em = _entity_memory(storage, args.user)
        kg = em.graph
        typed = sum(1 for *_, k in kg.graph.edges(keys=True) if k != "co_occurs")
    finally:
        storage.close()
    print(
        f"Ingested {summary.saved} memories from {args.file} into {path} "
        f"(long_term and entity tiers) in {time.monotonic() - started:.1f} s."
    )
    if summary.skipped:
        print(
            f"Skipped {summary.skipped} already stored (the same record, by its content "
            "fingerprint: an earlier ingest, or a repeated line)."
        )
    print(
        f"Graph{' of user ' + args.user if args.user else ''}: {len(kg)} entities, "
        f"{kg.graph.number_of_edges()} relations ({typed} typed)."
    )
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    storage = _open_existing(args)
    try:
        hits = _long_term(storage, _scope(args)).search_hits(args.query, limit=args.limit)
    finally:
        storage.close()
    results: list[dict[str, Any]] = [
        {
            "rank": n,
            "score": round(h.score, 4),
            "memory_id": h.item.memory_id,
            "content": h.item.content,
            "timestamp": h.item.timestamp.isoformat(),
            "agent_id": h.item.agent_id,
            "user_id": h.item.user_id,
            "matched_terms": h.explanation.matched_terms,
            "entity_path": h.explanation.entity_path,
            "similar_to": h.explanation.similar_to,
            "sources": h.explanation.sources,
        }
        for n, h in enumerate(hits, start=1)
    ]
    if args.json:
        print_json(results)
        return 0
    if not results:
        print(f"No memories match {args.query!r}.")
        return 0
    for r in results:
        print(f"{r['rank']:>2}. [{r['score']:.2f}] {wrap(r['content'], 6)}")
        why = []
        if r["matched_terms"]:
            why.append("matched: " + ", ".join(r["matched_terms"]))
        if r["entity_path"]:
            why.append("via graph: " + " -> ".join(r["entity_path"]))
        if "semantic" in r["sources"]:
            why.append("similar to: " + (", ".join(r["similar_to"]) or "the question"))
        who = f"{r['timestamp'][:10]}" + (f", {r['agent_id']}" if r["agent_id"] else "")
        print(f"      {who}; {'; '.join(why) or 'recent'}")
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    path = _db_path(args)
    _open_existing(args).close()
    with _persistent_cortex(path, _scope(args)) as cortex:
        report = cortex.build_context_report(
            args.task, agent_role=args.agent, max_items=args.max_items
        )
    if args.explain:
        print_json(report.to_dict())
    else:
        print(report.text or f"(no memory is relevant to {args.task!r})")
    return 0


def cmd_entities(args: argparse.Namespace) -> int:
    storage = _open_existing(args)
    try:
        em = _entity_memory(storage, args.user)
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


def cmd_relations(args: argparse.Namespace) -> int:
    storage = _open_existing(args)
    try:
        em = _entity_memory(storage, args.user)
        info = _require_entity(em.graph, args.name)
        edges = em.relations(args.name, predicate=args.predicate)
    finally:
        storage.close()
    if not args.co_occurs and args.predicate is None:
        typed = [e for e in edges if e.predicate != "co_occurs"]
        hidden = len(edges) - len(typed)
        edges = typed
    else:
        hidden = 0
    edges.sort(key=lambda e: (e.predicate == "co_occurs", -e.support, e.first_seen))
    shown = edges[: args.limit] if args.limit else edges
    if args.json:
        print_json([edge_dict(e) for e in shown])
        return 0
    kind = (
        "typed relation"
        if hidden or (not args.co_occurs and args.predicate is None)
        else "relation"
    )
    print(f"{info.name} ({info.label}): {len(edges)} {kind}{'s' * (len(edges) != 1)}")
    for edge in shown:
        print(edge_line(edge))
        for sentence, stamp in edge.sentences()[: args.evidence]:
            print(f"      \u201c{wrap(sentence, 7)}\u201d ({stamp[:10]})")
    if hidden:
        print(f"(+ {hidden} co_occurs relations: pass --co-occurs to list them)")
    return 0


def cmd_declare(args: argparse.Namespace) -> int:
    path = _db_path(args)
    if args.file is None:
        storage = _open_existing(args)
        try:
            declared = _entity_memory(storage, None).declared_entities()
        finally:
            storage.close()
        if args.json:
            print_json(declared)
        elif not declared:
            print(f"No entity types are declared in {path}.")
        for pattern in declared if not args.json else ():
            print(f"{pattern['label']:<12} {json.dumps(pattern['pattern'], ensure_ascii=False)}")
        return 0
    source = Path(args.file)
    if not source.exists():
        raise InvalidArgumentError(f"{args.file}: no such file")
    storage = _open(path)
    try:
        added = _entity_memory(storage, None).declare_entities(source)
    finally:
        storage.close()
    print(f"Declared {added} new pattern{'s' * (added != 1)} in {path}.")
    if added:
        print(_REANALYSE_HINT)
    return 0


def cmd_undeclare(args: argparse.Namespace) -> int:
    pattern = None
    if args.pattern is not None:
        try:
            pattern = json.loads(args.pattern)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--pattern is not JSON ({exc.msg})") from None
        if not isinstance(pattern, str | list):
            raise UsageError("--pattern must be a JSON string (a phrase) or list (tokens)")
    storage = _open_existing(args)
    try:
        removed = _entity_memory(storage, None).undeclare_entities(args.label, pattern)
    finally:
        storage.close()
    print(f"Removed {removed} pattern{'s' * (removed != 1)} of {args.label}.")
    return 0


def cmd_relabel(args: argparse.Namespace) -> int:
    storage = _open_existing(args)
    try:
        em = _entity_memory(storage, args.user)
        name = _require_entity(em.graph, args.name).name
        previous = em.relabel(args.name, args.label)
    finally:
        storage.close()
    print(f"{name}: {previous} -> {args.label}")
    print(_REANALYSE_HINT)
    return 0


_REANALYSE_HINT = (
    "Texts saved from now on are read with it; `graphmem reanalyse` reads the stored ones "
    "again (the relations the new types let the rules find)."
)


def cmd_reanalyse(args: argparse.Namespace) -> int:
    from ..index.reanalysis import ReanalysisWarning

    started = time.monotonic()
    path = _db_path(args)
    with warnings.catch_warnings():  # opening says it is due: this command does it
        warnings.simplefilter("ignore", ReanalysisWarning)
        storage = _open_existing(args)
    try:
        done = _entity_memory(storage, None).reanalyse(
            user_id=args.user,
            batch_size=args.batch_size,
            progress=sys.stderr.isatty() if args.progress is None else args.progress,
        )
        kg = _entity_memory(storage, args.user or "").graph
        typed = sum(1 for *_, k in kg.graph.edges(keys=True) if k != "co_occurs")
    finally:
        storage.close()
    whose = (
        "of every user"
        if args.user is None
        else f"of user {args.user}"
        if args.user
        else "of the shared memories"
    )
    elapsed = time.monotonic() - started
    print(f"Reanalysed {done} texts ({whose}) in {path} in {elapsed:.1f} s.")
    print(
        f"Graph{' of user ' + args.user if args.user else ''}: {len(kg)} entities, "
        f"{kg.graph.number_of_edges()} relations ({typed} typed)."
    )
    return 0


def cmd_path(args: argparse.Namespace) -> int:
    storage = _open_existing(args)
    try:
        em = _entity_memory(storage, args.user)
        a = _require_entity(em.graph, args.a)
        b = _require_entity(em.graph, args.b)
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
            for sentence, stamp in hop.edge.sentences()[:1]:
                print(f"      \u201c{wrap(sentence, 7)}\u201d ({stamp[:10]})")
    return 0


def cmd_viz(args: argparse.Namespace) -> int:
    from .. import viz

    path = _db_path(args)
    out = Path(args.out)
    if out.suffix.lower() != ".html":
        raise UsageError(f"{out}: the page must be an .html file")
    check_output(out, path, force=args.force, replaceable=is_graph_page)
    if args.task:
        _open_existing(args).close()
        with _persistent_cortex(path, _scope(args)) as cortex, replacing(out) as partial:
            assert cortex.entity_memory is not None
            report = viz.render_context(
                cortex.build_context_report(args.task),
                cortex.entity_memory,
                partial,
                max_nodes=args.max_nodes,
            )
        return _wrote_page(args, out, report)
    storage = _open_existing(args)
    focus: list[str] = []
    ego: str | None = None
    try:
        em = _entity_memory(storage, args.user)
        kg = em.graph
        part: nx.MultiDiGraph | None = None
        if args.entity:
            info = _require_entity(kg, args.entity)
            # One hop more than drawn: the page holds it for expanding on a click.
            part = kg.subgraph([info.name], depth=args.depth + 1)
            ego = info.key
            title = f"{info.name}: {args.depth}-hop neighbourhood"
        elif args.path:
            a, b = (_require_entity(kg, name) for name in args.path)
            part = _empty_like(kg)
            for hops in kg.paths(a.name, b.name, max_hops=args.max_hops):
                keys = [a.key, *(_key(kg, h.target) for h in hops)]
                part = _compose(part, viz.path_subgraph(kg.graph, keys))
            if part.number_of_nodes() == 0:
                raise InvalidArgumentError(
                    f"no connection between {a.name} and {b.name} within {args.max_hops} hops"
                )
            focus = [a.key, b.key]
            title = f"How {a.name} is connected to {b.name}"
        else:
            title = "graphmem: the whole graph" + (f" of {args.user}" if args.user else "")
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


def _wrote_page(args: argparse.Namespace, out: Path, report: Any) -> int:
    omitted = f", {report.nodes_omitted} left out (--max-nodes)" if report.nodes_omitted else ""
    print(f"Wrote {out} ({report.nodes_drawn} entities, {report.edges_drawn} relations{omitted}).")
    if args.open:
        import webbrowser

        webbrowser.open(out.resolve().as_uri())
    return 0


def cmd_export_graph(args: argparse.Namespace) -> int:
    from ..viz import export_graph

    out = Path(args.out)
    check_output(out, _db_path(args), force=args.force, replaceable=None)
    fmt = args.format or {".graphml": "graphml", ".gexf": "gexf"}.get(out.suffix.lower())
    if fmt is None:
        raise UsageError(f"{out}: end the name in .graphml or .gexf, or pass --format")
    storage = _open_existing(args)
    try:
        em = _entity_memory(storage, args.user)
        entities = None
        if args.entity:
            entities = [_require_entity(em.graph, args.entity).name]
        with replacing(out) as partial:
            written = export_graph(em, partial, format=fmt, entities=entities, depth=args.depth)
    finally:
        storage.close()
    print(f"Wrote {out} ({fmt}: {written.nodes} entities, {written.edges} relations).")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from ..store import dump, schema

    path = _db_path(args)
    storage = _open_existing(args)
    try:
        with storage.database.read() as conn:
            tables = {**dump.table_counts(conn), **dump.tenant_counts(conn, _scope(args))}
            tiers = dump.namespace_counts(conn, _scope(args))
            users = dump.tenant_names(conn)
        if args.user:  # of the file's key-value rows, only the user's preferences are theirs
            from ..memories.user import preferences_key

            tables["kv"] = int(storage.load(preferences_key(args.user)) is not None)
        kg = _entity_memory(storage, args.user).graph
        labels: dict[str, int] = {}
        for _, data in kg.graph.nodes(data=True):
            labels[data["label"]] = labels.get(data["label"], 0) + 1
        predicates: dict[str, int] = {}
        for *_, key in kg.graph.edges(keys=True):
            predicates[key] = predicates.get(key, 0) + 1
    finally:
        storage.close()
    stats: dict[str, Any] = {
        "database": str(path),
        "size_bytes": path.stat().st_size,
        "schema_version": schema.SCHEMA_VERSION,
        "user": _scope(args),
        "users": [u for u in users if u],
        "memories_by_tier": tiers,
        "rows": {k: v for k, v in tables.items() if k != "graphmem_meta"},
        "graph": {
            "user": args.user or "",
            "entities": len(kg),
            "relations": kg.graph.number_of_edges(),
            "entities_by_label": dict(sorted(labels.items(), key=lambda kv: -kv[1])),
            "relations_by_predicate": dict(sorted(predicates.items(), key=lambda kv: -kv[1])),
        },
    }
    if args.json:
        print_json(stats)
        return 0
    print(f"Database   {stats['database']} ({stats['size_bytes'] / 1024:.0f} KiB)")
    print(
        f"Scope      {'user ' + repr(args.user) if args.user else 'shared (no --user)'}; "
        f"users in the file: {', '.join(stats['users']) or 'none'}"
    )
    print("Memories   " + (", ".join(f"{k}: {v}" for k, v in tiers.items()) or "none"))
    g = stats["graph"]
    print(f"Graph      {g['entities']} entities, {g['relations']} relations")
    print(
        "Labels     " + ", ".join(f"{k} {v}" for k, v in g["entities_by_label"].items())
        if labels
        else "Labels     none"
    )
    print(
        "Predicates " + ", ".join(f"{k} {v}" for k, v in g["relations_by_predicate"].items())
        if predicates
        else "Predicates none"
    )
    rows = stats["rows"]
    print(
        f"Rows       {rows['aliases']} aliases, {rows['mentions']} mentions, "
        f"{rows['relation_evidence']} evidence, {rows['merges']} merges, {rows['kv']} kv"
    )
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from ..transfer import export_jsonl

    if getattr(args, "format", "graphmem") == "mcp-memory":
        from .mcp_memory_command import cmd_export_mcp_memory

        return cmd_export_mcp_memory(args)
    if getattr(args, "user", None) is not None:
        raise UsageError("--user applies to --format mcp-memory (an export holds every user)")

    out = Path(args.out)
    if args.out != "-":
        check_output(out, _db_path(args), force=args.force, replaceable=None)
    storage = _open_existing(args)
    try:
        if args.out == "-":
            counts = export_jsonl(storage.database, sys.stdout)
        else:
            with replacing(out) as partial:
                counts = export_jsonl(storage.database, partial)
    finally:
        storage.close()
    if args.out != "-":
        print(f"Exported {counts_text(counts)} to {out}.")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from ..demo import remove_database_files
    from ..transfer import import_jsonl

    source = Path(args.file)
    if args.file != "-" and not source.is_file():
        raise InvalidArgumentError(f"{args.file}: no such file")
    path = _db_path(args)
    existed = path.exists()
    storage = _open(path)
    try:
        counts = import_jsonl(storage.database, sys.stdin if args.file == "-" else source)
    except GraphmemError:
        storage.close()
        if not existed:
            remove_database_files(path)  # leave no empty file behind a failed import
        raise
    storage.close()
    if counts.skipped:
        print(
            f"Skipped {args.file}: {path} holds its {counts.skipped} memories already "
            "(imported before); nothing imported."
        )
    else:
        print(f"Imported {counts_text(counts)} into {path}.")
    return 0


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
        em = _entity_memory(storage, None)
        kg = em.graph
        print(
            f"Ingested {count} memories in {time.monotonic() - started:.1f} s: {len(kg)} "
            f"entities, {kg.graph.number_of_edges()} relations."
        )
        storage.close()

        heading(f"1. Context for the task: {DEMO_TASK!r}")
        with _persistent_cortex(db) as cortex:
            report = cortex.build_context_report(DEMO_TASK)
        print(report.text)

        storage = _open(db)
        em = _entity_memory(storage, None)
        kg = em.graph
        heading("2. Who works at Harbor Analytics?")
        _demo_who_works_at(em, "Harbor Analytics")

        heading("3. How is Priya Nair connected to Aurex Logistics?")
        typed_paths = kg.typed().paths("Priya Nair", "Aurex Logistics")[:3]
        print("Through typed relations:" if typed_paths else "(no typed path was extracted)")
        _demo_paths(typed_paths)
        print("Mentioned together (co-occurrence):")
        _demo_paths(_mentioned_together(em, "Priya Nair", "Aurex Logistics")[:1])

        heading("4. What changed for Dana Whitfield?")
        _demo_changes(em, "Dana Whitfield")

        from ..viz import drawable_graph, render_graph

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
    print(f"\nDone in {time.monotonic() - started:.1f} s. Try next:")
    print(f"  graphmem --db {db} search 'Atlas launch date'")
    print(f"  graphmem --db {db} relations 'Harbor Analytics'")
    print(f"  graphmem --db {db} path 'Priya Nair' 'Harbor Analytics'")
    return 0


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
            for sentence, stamp in hop.edge.sentences()[: 4 if len(hops) == 1 else 1]:
                print(f"      \u201c{wrap(sentence, 7)}\u201d ({stamp[:10]})")


def _demo_who_works_at(em: EntityMemory, org: str) -> None:
    kg = em.graph
    org_name = _require_entity(kg, org).name

    def person(name: str) -> bool:
        info = kg.get_entity(name)
        return info is not None and info.label == "PERSON"

    def other_end(edge: Edge) -> str:
        return edge.object if edge.subject == org_name else edge.subject

    works_at = em.find(predicate="works_at", object=org_name)
    typed = [
        e
        for e in em.relations(org_name)
        if e.predicate not in ("co_occurs", "works_at") and person(other_end(e))
    ]
    print(f'find(predicate="works_at", object="{org_name}"), then other typed relations:')
    if not works_at and not typed:
        print("  (no typed relation was extracted)")
    for edge in [*works_at, *sorted(typed, key=lambda e: e.first_seen)]:
        print(edge_line(edge))
        for sentence, stamp in edge.sentences()[:1]:
            print(f"      \u201c{wrap(sentence, 7)}\u201d ({stamp[:10]})")
    named = {e.subject for e in works_at} | {other_end(e) for e in typed}
    mentioned: list[str] = []
    for edge in em.relations(org_name, predicate="co_occurs"):
        name = other_end(edge)
        if name not in named and name not in mentioned and person(name):
            mentioned.append(name)
    if mentioned:
        print("People most often mentioned with it (co-occurrence, no typed relation yet):")
        print("  " + ", ".join(mentioned[:8]))


def _demo_changes(em: EntityMemory, name: str) -> None:
    kg = em.graph
    person = _require_entity(kg, name).name
    edges = [e for e in em.relations(person) if e.predicate != "co_occurs"]
    print("Typed relations, oldest first (valid_to is set when a newer value replaced one):")
    if not edges:
        print("  (none extracted)")
    for edge in sorted(edges, key=lambda e: e.first_seen):
        print(edge_line(edge))
        for sentence, stamp in edge.sentences()[:1]:
            print(f"      \u201c{wrap(sentence, 7)}\u201d ({stamp[:10]})")
    print("Organisations and places mentioned with her, by first and last mention:")
    for edge in sorted(em.relations(person, predicate="co_occurs"), key=lambda e: e.first_seen):
        other = edge.object if edge.subject == person else edge.subject
        info = kg.get_entity(other)
        if info is None or info.label not in ("ORG", "GPE", "LOC", "FAC"):
            continue
        print(
            f"  {edge.first_seen[:10]} .. {edge.last_seen[:10]}  {other} "
            f"({info.label}, support {edge.support})"
        )
        newest = edge.sentences()[:1]
        for sentence, stamp in newest:
            print(f"      latest: \u201c{wrap(sentence, 15)}\u201d ({stamp[:10]})")


def _require_entity(kg: KnowledgeGraph, name: str) -> Any:
    info = kg.get_entity(name)
    if info is None:
        hint = _suggest(kg, name)
        raise EntityNotFound(
            f"unknown entity {name!r}" + (f" (did you mean {hint}?)" if hint else "")
        )
    return info


def _suggest(kg: KnowledgeGraph, name: str) -> str:
    from rapidfuzz import process

    names = [str(d["name"]) for _, d in kg.graph.nodes(data=True)]
    found = process.extract(name, names, limit=3, score_cutoff=70)
    return ", ".join(repr(m[0]) for m in found)


def _key(kg: KnowledgeGraph, name: str) -> str:
    key = kg.resolve(name)
    assert key is not None
    return key


def _empty_like(kg: KnowledgeGraph) -> nx.MultiDiGraph:
    return kg.graph.__class__()


def _compose(a: nx.MultiDiGraph, b: nx.MultiDiGraph) -> nx.MultiDiGraph:
    import networkx as nx

    composed: nx.MultiDiGraph = nx.compose(a, b)
    return composed
