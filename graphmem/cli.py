"""The ``graphmem`` command: ingest memories, search them, ask the graph, draw it, move it.

Every subcommand has ``--help`` with examples; ``docs/cli.md`` is the manual. Mistakes (a
missing file, a bad argument, an unknown entity, a file that is not a graphmem database) print
one line, ``graphmem: error: ...``, to stderr and exit with status 1 (2 for bad usage).

Layout written by ``graphmem ingest`` (the one ``CortexMemory`` itself writes for an important
task result): each record is saved to the ``long_term`` tier (no eviction) and to the
``entity`` tier (typed relations extracted) of one database, so ``graphmem context`` and a
``CortexMemory(persistence_path=...)`` opened on the file find the knowledge, and the
relationship commands find the typed, evidenced graph.

Example:
    >>> parser = build_parser()
    >>> parser.parse_args(["--db", "x.db", "search", "Atlas launch", "--limit", "3"]).limit
    3
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import sys
import textwrap
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from .errors import DatabaseFileError, EntityNotFound, GraphmemError, InvalidArgumentError

if TYPE_CHECKING:
    import networkx as nx

    from .compat.storage import SQLiteStorage
    from .cortex import CortexMemory
    from .graph.knowledge_graph import Edge, Hop, KnowledgeGraph
    from .memories import EntityMemory, LongTermMemory

__all__ = ["COMMANDS", "build_parser", "default_db_path", "main", "read_records"]

PROG = "graphmem"
#: Fields an input record may carry besides ``content``.
RECORD_FIELDS = (
    "agent_id",
    "user_id",
    "conversation_id",
    "task_id",
    "importance",
    "metadata",
    "timestamp",
    "memory_type",
)
_DEMO_MARKER = "graphmem.demo"
_DEMO_TASK = "Prepare the Atlas status update for Aurex Logistics."


class UsageError(GraphmemError):
    """A command-line mistake the user can fix (exit status 2)."""


# ---------------------------------------------------------------------- database location
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
    from .compat.storage import SQLiteStorage

    if path.is_dir():
        raise DatabaseFileError(f"{path}: is a directory, not a database file")
    return SQLiteStorage(path)


def _entity_memory(storage: SQLiteStorage, user: str | None) -> EntityMemory:
    from .memories import EntityMemory

    return EntityMemory(storage=storage, max_items=None, tenant=user)


def _long_term(storage: SQLiteStorage, user: str | None) -> LongTermMemory:
    from .memories import LongTermMemory

    return LongTermMemory(storage=storage, max_items=None, tenant=user)


@contextmanager
def _persistent_cortex(path: Path) -> Iterator[CortexMemory]:
    """A ``CortexMemory`` over the file (it persists only when ``WRITE_MEMORY=1``)."""
    from .cortex import CortexMemory

    previous = os.environ.get("WRITE_MEMORY")
    os.environ["WRITE_MEMORY"] = "1"
    try:
        cortex = CortexMemory(persistence_path=str(path), long_term_capacity=10**9)
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


# ---------------------------------------------------------------------- reading input
def read_records(source: str, fmt: str = "auto", user: str | None = None) -> list[dict[str, Any]]:
    """Parse an input file (or ``-`` for stdin) into ``save`` records.

    ``fmt`` is ``text`` (one memory per non-blank line), ``jsonl`` (objects with ``content``
    and optional ``agent_id``, ``user_id``, ``conversation_id``, ``task_id``, ``importance``,
    ``metadata``, ``timestamp``, ``memory_type``), ``csv`` (a ``content`` column and the same
    optional columns; ``metadata`` holds JSON), or ``auto`` (by file suffix; stdin is text).

    Example:
        >>> import tempfile
        >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        ...     _ = f.write("Alice met Bob\\n\\nBob joined Acme\\n")
        >>> [r["content"] for r in read_records(f.name)]
        ['Alice met Bob', 'Bob joined Acme']
    """
    if fmt == "auto":
        suffix = Path(source).suffix.lower() if source != "-" else ""
        fmt = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}.get(suffix, "text")
    if source == "-":
        text = sys.stdin.read()
        where = "<stdin>"
    else:
        path = Path(source)
        if not path.exists():
            raise InvalidArgumentError(f"{source}: no such file")
        if path.is_dir():
            raise InvalidArgumentError(f"{source}: is a directory, not an input file")
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InvalidArgumentError(f"{source}: not UTF-8 text ({exc.reason})") from None
        where = source
    if fmt == "text":
        raw = [
            (number, {"content": line.strip()})
            for number, line in enumerate(text.splitlines(), start=1)
            if line.strip()
        ]
    elif fmt == "jsonl":
        from .transfer import jsonl_objects

        raw = list(jsonl_objects(text.splitlines(), where, InvalidArgumentError))
    elif fmt == "csv":
        raw = list(_csv_rows(text, where))
    else:
        raise UsageError(f"unknown format {fmt!r} (choose text, jsonl or csv)")
    return [_record(row, f"{where}, line {number}", user) for number, row in raw]


def _csv_rows(text: str, where: str) -> Iterator[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or "content" not in reader.fieldnames:
        raise InvalidArgumentError(f"{where}: the CSV header has no 'content' column")
    for row in reader:
        number = reader.line_num
        if None in row:
            raise InvalidArgumentError(f"{where}, line {number}: more cells than header columns")
        values: dict[str, Any] = {k: (v if v != "" else None) for k, v in row.items()}
        if values.get("importance") is not None:
            try:
                values["importance"] = float(values["importance"])
            except ValueError:
                raise InvalidArgumentError(
                    f"{where}, line {number}: importance {values['importance']!r} is not a number"
                ) from None
        if values.get("metadata") is not None:
            try:
                values["metadata"] = json.loads(values["metadata"])
            except json.JSONDecodeError:
                raise InvalidArgumentError(
                    f"{where}, line {number}: the metadata cell is not JSON"
                ) from None
        if values.get("content") is None:
            continue  # a blank line inside a CSV file
        yield number, values


def _record(row: dict[str, Any], where: str, user: str | None) -> dict[str, Any]:
    from .items import check_content, check_importance, check_optional_id, encode_metadata

    unknown = sorted(set(row) - {"content", *RECORD_FIELDS})
    if unknown:
        raise InvalidArgumentError(
            f"{where}: unknown field(s) {', '.join(unknown)} "
            f"(known: content, {', '.join(RECORD_FIELDS)})"
        )
    try:
        content = check_content(row.get("content"), "content")
        metadata = row.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise InvalidArgumentError("metadata must be a JSON object")
        metadata = dict(metadata)
        encode_metadata(metadata)
        if row.get("memory_type") is not None:
            metadata.setdefault("memory_type", check_optional_id(row["memory_type"], "memory_type"))
        record: dict[str, Any] = {"content": content, "metadata": metadata}
        for name in ("agent_id", "user_id", "conversation_id", "task_id"):
            value = check_optional_id(row.get(name), name)
            if value is not None:
                record[name] = value
        if user is not None:
            record.setdefault("user_id", user)
        importance = row.get("importance")
        record["importance"] = check_importance(0.5 if importance is None else importance)
        stamp = row.get("timestamp")
        if stamp is not None:
            if not isinstance(stamp, str):
                raise InvalidArgumentError("timestamp must be an ISO 8601 string")
            try:
                record["timestamp"] = datetime.fromisoformat(stamp)
            except ValueError:
                raise InvalidArgumentError(
                    f"timestamp {stamp!r} is not ISO 8601 (e.g. 2026-05-05T09:30:00+00:00)"
                ) from None
    except (GraphmemError, TypeError, ValueError) as exc:
        raise InvalidArgumentError(f"{where}: {exc}") from None
    return record


# ---------------------------------------------------------------------- commands
def cmd_ingest(args: argparse.Namespace) -> int:
    started = time.monotonic()
    records = read_records(args.file, args.format, args.user)
    if not records:
        raise InvalidArgumentError(f"{args.file}: no memories to ingest (the input is empty)")
    path = _db_path(args)
    storage = _open(path)
    try:
        summary = ingest_records(
            storage,
            records,
            batch_size=args.batch_size,
            progress=sys.stderr.isatty() if args.progress is None else args.progress,
        )
        em = _entity_memory(storage, args.user)
        kg = em.graph
        typed = sum(1 for *_, k in kg.graph.edges(keys=True) if k != "co_occurs")
    finally:
        storage.close()
    print(
        f"Ingested {summary} memories from {args.file} into {path} "
        f"(long_term and entity tiers) in {time.monotonic() - started:.1f} s."
    )
    print(
        f"Graph{' of user ' + args.user if args.user else ''}: {len(kg)} entities, "
        f"{kg.graph.number_of_edges()} relations ({typed} typed)."
    )
    return 0


def ingest_records(
    storage: SQLiteStorage,
    records: Sequence[dict[str, Any]],
    *,
    batch_size: int = 256,
    progress: bool = False,
) -> int:
    """Save each record to the long-term tier and the entity tier of ``storage``."""
    from .memories import EntityMemory, LongTermMemory

    long_term = LongTermMemory(storage=storage, max_items=None)
    entity = EntityMemory(storage=storage, max_items=None)
    long_term.save_many(records, batch_size=batch_size, progress=progress)
    entity.save_many(records, batch_size=batch_size, progress=progress)
    return len(records)


def cmd_search(args: argparse.Namespace) -> int:
    storage = _open_existing(args)
    try:
        hits = _long_term(storage, args.user).search_hits(args.query, limit=args.limit)
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
            "sources": h.explanation.sources,
        }
        for n, h in enumerate(hits, start=1)
    ]
    if args.json:
        _print_json(results)
        return 0
    if not results:
        print(f"No memories match {args.query!r}.")
        return 0
    for r in results:
        print(f"{r['rank']:>2}. [{r['score']:.2f}] {_wrap(r['content'], 6)}")
        why = []
        if r["matched_terms"]:
            why.append("matched: " + ", ".join(r["matched_terms"]))
        if r["entity_path"]:
            why.append("via graph: " + " -> ".join(r["entity_path"]))
        who = f"{r['timestamp'][:10]}" + (f", {r['agent_id']}" if r["agent_id"] else "")
        print(f"      {who}; {'; '.join(why) or 'recent'}")
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    path = _db_path(args)
    _open_existing(args).close()
    with _persistent_cortex(path) as cortex:
        report = cortex.build_context_report(
            args.task, agent_role=args.agent, max_items=args.max_items
        )
    if args.explain:
        _print_json(report.to_dict())
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
        _print_json(rows)
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
        _print_json([_edge_dict(e) for e in shown])
        return 0
    kind = (
        "typed relation"
        if hidden or (not args.co_occurs and args.predicate is None)
        else "relation"
    )
    print(f"{info.name} ({info.label}): {len(edges)} {kind}{'s' * (len(edges) != 1)}")
    for edge in shown:
        print(_edge_line(edge))
        for sentence, stamp in _evidence(edge)[: args.evidence]:
            print(f"      \u201c{_wrap(sentence, 7)}\u201d ({stamp[:10]})")
    if hidden:
        print(f"(+ {hidden} co_occurs relations: pass --co-occurs to list them)")
    return 0


def cmd_path(args: argparse.Namespace) -> int:
    storage = _open_existing(args)
    try:
        em = _entity_memory(storage, args.user)
        a = _require_entity(em.graph, args.a)
        b = _require_entity(em.graph, args.b)
        paths = em.paths(args.a, args.b, max_hops=args.max_hops)[: args.limit]
    finally:
        storage.close()
    if args.json:
        _print_json(
            [
                [
                    {"from": h.source, "to": h.target, "reversed": h.reversed, **_edge_dict(h.edge)}
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
            print(f"  {_edge_line(hop.edge).strip()}")
            for sentence, stamp in _evidence(hop.edge)[:1]:
                print(f"      \u201c{_wrap(sentence, 7)}\u201d ({stamp[:10]})")
    return 0


def cmd_viz(args: argparse.Namespace) -> int:
    from .viz import path_subgraph, render_graph

    path = _db_path(args)
    out = Path(args.out)
    if out.suffix.lower() != ".html":
        raise UsageError(f"{out}: the page must be an .html file")
    _check_output(out, path, force=args.force, replaceable=_is_graph_page)
    storage = _open_existing(args)
    focus: list[str] = []
    try:
        em = _entity_memory(storage, args.user)
        kg = em.graph
        if args.entity:
            info = _require_entity(kg, args.entity)
            graph = kg.subgraph([info.name], depth=args.depth)
            focus = [info.key]
            title = f"{info.name}: {args.depth}-hop neighbourhood"
        elif args.path:
            a, b = (_require_entity(kg, name) for name in args.path)
            graph = _empty_like(kg)
            for hops in kg.paths(a.name, b.name, max_hops=args.max_hops):
                keys = [a.key, *(_key(kg, h.target) for h in hops)]
                graph = _compose(graph, path_subgraph(kg.graph, keys))
            if graph.number_of_nodes() == 0:
                raise InvalidArgumentError(
                    f"no connection between {a.name} and {b.name} within {args.max_hops} hops"
                )
            focus = [a.key, b.key]
            title = f"How {a.name} is connected to {b.name}"
        elif args.task:
            storage.close()
            with _persistent_cortex(path) as cortex:
                graph = cortex.build_context_report(args.task).subgraph
            storage = _open(path)
            kg = _entity_memory(storage, None).graph
            title = f"Entities in the context of: {args.task}"
        else:
            graph = kg.graph.copy()
            title = "graphmem: the whole graph" + (f" of {args.user}" if args.user else "")
        _attach_evidence(kg, graph)
    finally:
        storage.close()
    with _replacing(out) as partial:
        report = render_graph(graph, partial, title=title, max_nodes=args.max_nodes, focus=focus)
    omitted = f", {report.nodes_omitted} left out (--max-nodes)" if report.nodes_omitted else ""
    print(f"Wrote {out} ({report.nodes_drawn} entities, {report.edges_drawn} relations{omitted}).")
    if args.open:
        import webbrowser

        webbrowser.open(out.resolve().as_uri())
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from .store import dump, schema

    path = _db_path(args)
    storage = _open_existing(args)
    try:
        with storage.database.read() as conn:
            tables = dump.table_counts(conn)
            tiers = dump.namespace_counts(conn)
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
        _print_json(stats)
        return 0
    print(f"Database   {stats['database']} ({stats['size_bytes'] / 1024:.0f} KiB)")
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
    from .transfer import export_jsonl

    out = Path(args.out)
    if args.out != "-":
        _check_output(out, _db_path(args), force=args.force, replaceable=None)
    storage = _open_existing(args)
    try:
        if args.out == "-":
            counts = export_jsonl(storage.database, sys.stdout)
        else:
            with _replacing(out) as partial:
                counts = export_jsonl(storage.database, partial)
    finally:
        storage.close()
    if args.out != "-":
        print(f"Exported {_counts_text(counts)} to {out}.")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from .transfer import import_jsonl

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
            _remove_database(path)  # leave no empty file behind a failed import
        raise
    storage.close()
    print(f"Imported {_counts_text(counts)} into {path}.")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from importlib.resources import files

    started = time.monotonic()
    out_dir = Path(args.out)
    db = Path(args.demo_db) if args.demo_db else out_dir / "demo.db"
    _replace_demo_database(db)
    corpus = files("graphmem.demo_data").joinpath("team_memories.jsonl")
    with _temporary_text(corpus.read_text(encoding="utf-8"), ".jsonl") as corpus_file:
        records = read_records(str(corpus_file), "jsonl")
    _heading(f"graphmem demo: {len(records)} memories of a small consultancy (Mar-Jun 2026)")
    print(f"Database: {db}")
    storage = _open(db)
    try:
        storage.save(_DEMO_MARKER, {"created_by": "graphmem demo"})
        ingest_records(storage, records, progress=sys.stderr.isatty())
        em = _entity_memory(storage, None)
        kg = em.graph
        print(
            f"Ingested in {time.monotonic() - started:.1f} s: {len(kg)} entities, "
            f"{kg.graph.number_of_edges()} relations."
        )
        storage.close()

        _heading(f"1. Context for the task: {_DEMO_TASK!r}")
        with _persistent_cortex(db) as cortex:
            report = cortex.build_context_report(_DEMO_TASK)
        print(report.text)

        storage = _open(db)
        em = _entity_memory(storage, None)
        kg = em.graph
        _heading("2. Who works at Harbor Analytics?")
        _demo_who_works_at(em, "Harbor Analytics")

        _heading("3. How is Priya Nair connected to Aurex Logistics?")
        typed_paths = kg.typed().paths("Priya Nair", "Aurex Logistics")[:3]
        print("Through typed relations:" if typed_paths else "(no typed path was extracted)")
        _demo_paths(typed_paths)
        print("Mentioned together (co-occurrence):")
        _demo_paths([p for p in em.paths("Priya Nair", "Aurex Logistics") if len(p) == 1][:1])

        _heading("4. What changed for Dana Whitfield?")
        _demo_changes(em, "Dana Whitfield")

        graph = kg.graph.copy()
        _attach_evidence(kg, graph)
    finally:
        storage.close()
    from .viz import render_graph

    html = out_dir / "graph.html"
    viz = render_graph(graph, html, title="graphmem demo: Meridian Consulting", max_nodes=80)
    _heading("5. Picture")
    print(
        f"Wrote {html} ({viz.nodes_drawn} of {viz.nodes_drawn + viz.nodes_omitted} entities). "
        f"Open it in a browser: {html.resolve().as_uri()}"
    )
    print(f"\nDone in {time.monotonic() - started:.1f} s. Try next:")
    print(f"  graphmem --db {db} search 'Atlas launch date'")
    print(f"  graphmem --db {db} relations 'Harbor Analytics'")
    print(f"  graphmem --db {db} path 'Priya Nair' 'Harbor Analytics'")
    return 0


def _demo_paths(paths: Sequence[Sequence[Hop]]) -> None:
    for number, hops in enumerate(paths, start=1):
        print(f"Path {number}:")
        for hop in hops:
            print(f"  {_edge_line(hop.edge).strip()}")
            # A direct link: show more of its evidence, it is the whole answer.
            for sentence, stamp in _evidence(hop.edge)[: 4 if len(hops) == 1 else 1]:
                print(f"      \u201c{_wrap(sentence, 7)}\u201d ({stamp[:10]})")


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
        print(_edge_line(edge))
        for sentence, stamp in _evidence(edge)[:1]:
            print(f"      \u201c{_wrap(sentence, 7)}\u201d ({stamp[:10]})")
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
        print(_edge_line(edge))
        for sentence, stamp in _evidence(edge)[:1]:
            print(f"      \u201c{_wrap(sentence, 7)}\u201d ({stamp[:10]})")
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
        newest = _evidence(edge)[:1]
        for sentence, stamp in newest:
            print(f"      latest: \u201c{_wrap(sentence, 15)}\u201d ({stamp[:10]})")


def _replace_demo_database(db: Path) -> None:
    if db.exists():
        from .compat.storage import SQLiteStorage

        try:
            storage = SQLiteStorage(db)
        except DatabaseFileError as exc:
            raise DatabaseFileError(f"refusing to replace it: {exc}") from None
        try:
            marked = storage.load(_DEMO_MARKER) is not None
        finally:
            storage.close()
        if not marked:
            raise DatabaseFileError(
                f"{db}: refusing to replace a database that `graphmem demo` did not create"
            )
        _remove_database(db)


def _remove_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


@contextmanager
def _temporary_text(text: str, suffix: str) -> Iterator[Path]:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="graphmem-") as tmp:
        path = Path(tmp) / f"input{suffix}"
        path.write_text(text, encoding="utf-8")
        yield path


# ---------------------------------------------------------------------- output files
#: Opening words of every page ``graphmem viz`` writes (the comment of viz/graph.html).
_GRAPH_PAGE_MARK = b"graphmem graph page"


def _check_output(
    out: Path, db: Path, *, force: bool, replaceable: Callable[[Path], bool] | None
) -> None:
    """Refuse an output path that would destroy something: the database itself (or its
    journal files), a directory, an existing file unless ``replaceable`` says it is an
    earlier output of the command or ``--force`` was given, or a file in a missing folder."""
    if not out.parent.is_dir():
        raise InvalidArgumentError(f"{out.parent}: no such folder (create it first)")
    database_files = [Path(f"{db}{suffix}") for suffix in ("", "-wal", "-shm", "-journal")]
    if any(_same_file(out, f) for f in database_files):
        raise InvalidArgumentError(f"{out}: refusing to overwrite the database being read")
    if out.is_dir():
        raise InvalidArgumentError(f"{out}: is a directory")
    if out.exists() and not force and not (replaceable is not None and replaceable(out)):
        raise InvalidArgumentError(f"{out}: already exists (pass --force to replace it)")


def _same_file(a: Path, b: Path) -> bool:
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.absolute() == b.absolute()


def _is_graph_page(path: Path) -> bool:
    """Whether ``path`` is a page ``graphmem viz`` wrote (so writing it again loses nothing)."""
    with path.open("rb") as handle:
        return _GRAPH_PAGE_MARK in handle.read(256)


@contextmanager
def _replacing(out: Path) -> Iterator[Path]:
    """A new temporary file beside ``out`` that replaces ``out`` when the block succeeds.

    On any error, Ctrl-C included, it is removed and ``out`` is left as it was: no half
    written output and no ``.partial`` file remain.
    """
    import tempfile

    fd, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent)
    os.close(fd)
    partial = Path(name)
    try:
        yield partial
        umask = os.umask(0)
        os.umask(umask)
        partial.chmod(0o666 & ~umask)  # the mode a plain new file gets, not mkstemp's 0600
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)


# ---------------------------------------------------------------------- graph helpers
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


def _evidence(edge: Edge) -> list[tuple[str, str]]:
    """Distinct evidence sentences of a relation, newest first, with their dates."""
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for ev in edge.evidence:
        sentence = " ".join(str(ev.sentence).split())
        if sentence and sentence not in seen:
            seen.add(sentence)
            out.append((sentence, str(ev.created_at or "")))
    return out


def _attach_evidence(kg: KnowledgeGraph, graph: nx.MultiDiGraph) -> None:
    """Fill the ``evidence`` attributes the visualisation shows in its tooltips."""
    by_relation = {e.relation_id: e for e in kg.find(evidence=True)}
    node_evidence: dict[Any, list[tuple[str, str]]] = {n: [] for n in graph.nodes}
    for u, v, _, data in graph.edges(keys=True, data=True):
        edge = by_relation.get(data.get("relation_id"))
        found = _evidence(edge) if edge is not None else []
        data["evidence"] = [sentence for sentence, _ in found[:3]]
        node_evidence[u].extend(found)
        node_evidence[v].extend(found)
    for node, found in node_evidence.items():
        newest = sorted(set(found), key=lambda pair: pair[1], reverse=True)
        graph.nodes[node]["evidence"] = list(dict.fromkeys(s for s, _ in newest))[:3]


def _edge_dict(edge: Edge) -> dict[str, Any]:
    return {
        "subject": edge.subject,
        "predicate": edge.predicate,
        "object": edge.object,
        "support": edge.support,
        "confidence": edge.confidence,
        "first_seen": edge.first_seen,
        "last_seen": edge.last_seen,
        "valid_to": edge.valid_to,
        "evidence": [
            {"sentence": s, "date": d, "memory_id": ev.memory_id, "rule": ev.rule}
            for (s, d), ev in zip(_evidence(edge), edge.evidence, strict=False)
        ],
    }


def _edge_line(edge: Edge) -> str:
    when = f"since {edge.first_seen[:10]}"
    if edge.valid_to:
        when = f"{edge.first_seen[:10]} to {edge.valid_to[:10]}"
    return f"  {edge.subject} --{edge.predicate}--> {edge.object}  [support {edge.support}, {when}]"


# ---------------------------------------------------------------------- output helpers
def _print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def _wrap(text: str, indent: int) -> str:
    width = max(60, min(shutil.get_terminal_size((100, 24)).columns, 120))
    lines = textwrap.wrap(" ".join(text.split()), width=width - indent) or [""]
    return ("\n" + " " * indent).join(lines)


def _heading(text: str) -> None:
    print(f"\n== {text}")


def _counts_text(counts: dict[str, int]) -> str:
    return (
        f"{counts.get('memories', 0)} memories, {counts.get('entities', 0)} entities, "
        f"{counts.get('relations', 0)} relations, {counts.get('relation_evidence', 0)} "
        f"evidence rows, {counts.get('kv', 0)} kv rows"
    )


# ---------------------------------------------------------------------- the parser
class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr (status 2), never a usage dump."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{PROG}: error: {message} (see `{self.prog} --help`)\n")
        raise SystemExit(2)


class _Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32)


@dataclass(frozen=True)
class Command:
    """One subcommand: its handler, one-line help, and a help epilog with examples."""

    name: str
    handler: Callable[[argparse.Namespace], int]
    summary: str
    examples: str


COMMANDS: tuple[Command, ...] = (
    Command(
        "ingest",
        cmd_ingest,
        "add memories from a text, JSONL or CSV file (or stdin)",
        """examples:
  graphmem ingest notes.txt                 # one memory per non-blank line
  graphmem ingest memories.jsonl --user alice
  graphmem ingest export.csv --no-progress
  cat log.txt | graphmem ingest - --format text""",
    ),
    Command(
        "search",
        cmd_search,
        "search memories (words and the entity graph), with explanations",
        """examples:
  graphmem search "Atlas launch date"
  graphmem search "Who is Dana?" --limit 5 --json""",
    ),
    Command(
        "context",
        cmd_context,
        "the context CortexMemory builds for a task",
        """examples:
  graphmem context "Prepare the Atlas status update for Aurex Logistics."
  graphmem context "Plan the Compass kickoff" --agent "Project Manager" --explain""",
    ),
    Command(
        "entities",
        cmd_entities,
        "list known entities, most mentioned first",
        """examples:
  graphmem entities --limit 20
  graphmem entities --label PERSON --json""",
    ),
    Command(
        "relations",
        cmd_relations,
        "an entity's relations, each with its evidence sentences",
        """examples:
  graphmem relations "Dana Whitfield"
  graphmem relations "Harbor Analytics" --predicate works_at
  graphmem relations Priya --co-occurs --limit 10""",
    ),
    Command(
        "path",
        cmd_path,
        "how two entities are connected, each hop with its evidence",
        """examples:
  graphmem path "Priya Nair" "Aurex Logistics"
  graphmem path "Jake Morrison" "Dublin" --max-hops 4 --json""",
    ),
    Command(
        "viz",
        cmd_viz,
        "draw the graph (or a part of it) as one offline HTML page",
        """examples:
  graphmem viz graph.html                                   # the whole graph
  graphmem viz dana.html --entity "Dana Whitfield" --depth 2 --open
  graphmem viz path.html --path "Priya Nair" "Harbor Analytics"
  graphmem viz task.html --task "Prepare the Atlas status update" """,
    ),
    Command(
        "stats",
        cmd_stats,
        "counts of memories per tier, entities, relations and rows",
        """examples:
  graphmem stats
  graphmem --db other.db stats --json""",
    ),
    Command(
        "export",
        cmd_export,
        "write the whole database to a JSONL file (lossless)",
        """examples:
  graphmem export backup.jsonl
  graphmem export - | gzip > backup.jsonl.gz""",
    ),
    Command(
        "import",
        cmd_import,
        "load a JSONL export into a new (empty) database",
        """examples:
  graphmem --db restored.db import backup.jsonl
  gunzip -c backup.jsonl.gz | graphmem --db restored.db import -""",
    ),
    Command(
        "demo",
        cmd_demo,
        "ingest the bundled example corpus and show what graphmem answers",
        """examples:
  graphmem demo                           # writes ./graphmem-demo/demo.db and graph.html
  graphmem demo --out /tmp/gm-demo""",
    ),
)

_DESCRIPTION = """\
graphmem: knowledge-graph entity memory for LLM agents.

The database is --db PATH, else $GRAPHMEM_DB, else graphmem.db in the user's data
directory ($XDG_DATA_HOME/graphmem/ or ~/.local/share/graphmem/)."""


def build_parser() -> argparse.ArgumentParser:
    """The ``graphmem`` argument parser (one subparser per :data:`COMMANDS` entry)."""
    db_help = "database file (default: $GRAPHMEM_DB, else graphmem.db in the user data dir)"
    common = _Parser(add_help=False)
    common.add_argument("--db", metavar="PATH", default=argparse.SUPPRESS, help=db_help)
    user = _Parser(add_help=False)
    user.add_argument(
        "--user",
        metavar="USER_ID",
        default=None,
        help="the user (tenant) whose memories and graph to use",
    )
    parser = _Parser(
        prog=PROG,
        description=_DESCRIPTION,
        epilog="Run `graphmem COMMAND --help` for a command's options and examples.\n"
        "Start with: graphmem demo",
        formatter_class=_Formatter,
    )
    parser.add_argument("--db", metavar="PATH", default=None, help=db_help)
    from . import __version__

    parser.add_argument("--version", action="version", version=f"graphmem {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    parsers: dict[str, argparse.ArgumentParser] = {}
    p: argparse.ArgumentParser
    for command in COMMANDS:
        parents = [] if command.name == "demo" else [common]
        if command.name in {"ingest", "search", "entities", "relations", "path", "viz", "stats"}:
            parents.append(user)
        p = sub.add_parser(
            command.name,
            parents=parents,
            help=command.summary,
            description=command.summary[0].upper() + command.summary[1:] + ".",
            epilog=command.examples,
            formatter_class=_Formatter,
        )
        p.set_defaults(handler=command.handler)
        parsers[command.name] = p

    p = parsers["ingest"]
    p.add_argument("file", metavar="FILE", help="input file, or - for stdin")
    p.add_argument(
        "--format",
        choices=("auto", "text", "jsonl", "csv"),
        default="auto",
        help="input format (default: from the suffix: .jsonl, .csv, else text)",
    )
    p.add_argument("--batch-size", type=_positive, default=256, metavar="N", help="default 256")
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar (default: when stderr is a terminal)",
    )

    p = parsers["search"]
    p.add_argument("query", metavar="QUERY", type=_non_blank)
    p.add_argument("--limit", type=_positive, default=10, metavar="N", help="default 10")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = parsers["context"]
    p.add_argument("task", metavar="TASK", type=_non_blank, help="the task description")
    p.add_argument("--agent", metavar="ROLE", help="only memories of this agent (agent_id)")
    p.add_argument(
        "--max-items", type=_positive, default=10, metavar="N", help="related memories pool"
    )
    p.add_argument("--explain", action="store_true", help="print the context report as JSON")

    p = parsers["entities"]
    p.add_argument("--limit", type=_non_negative, default=50, metavar="N", help="0: all")
    p.add_argument("--label", metavar="L", help="only this label (PERSON, ORG, GPE...)")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = parsers["relations"]
    p.add_argument("name", metavar="NAME", type=_non_blank, help="an entity name or alias")
    p.add_argument("--predicate", metavar="P", help="only this predicate (works_at, met...)")
    p.add_argument("--co-occurs", action="store_true", help="also list untyped co_occurs relations")
    p.add_argument("--limit", type=_non_negative, default=30, metavar="N", help="0: all")
    p.add_argument(
        "--evidence", type=_non_negative, default=2, metavar="N", help="sentences per relation"
    )
    p.add_argument("--json", action="store_true", help="print JSON")

    p = parsers["path"]
    p.add_argument("a", metavar="A", type=_non_blank)
    p.add_argument("b", metavar="B", type=_non_blank)
    p.add_argument("--max-hops", type=_positive, default=3, metavar="N", help="default 3")
    p.add_argument("--limit", type=_positive, default=3, metavar="N", help="paths shown")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = parsers["viz"]
    p.add_argument("out", metavar="OUT.html")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--entity", metavar="NAME", type=_non_blank, help="an entity's neighbourhood")
    what.add_argument(
        "--path", nargs=2, metavar=("A", "B"), type=_non_blank, help="the paths from A to B"
    )
    what.add_argument(
        "--task", metavar="TEXT", type=_non_blank, help="the entities a task's context uses"
    )
    p.add_argument("--depth", type=_positive, default=1, metavar="N", help="with --entity")
    p.add_argument("--max-hops", type=_positive, default=3, metavar="N", help="with --path")
    p.add_argument("--max-nodes", type=_positive, default=150, metavar="N", help="default 150")
    p.add_argument("--open", action="store_true", help="open the page in a browser")
    p.add_argument(
        "--force", action="store_true", help="replace an existing file that is not a page"
    )

    parsers["stats"].add_argument("--json", action="store_true", help="print JSON")
    parsers["export"].add_argument("out", metavar="OUT.jsonl", help="output file, or -")
    parsers["export"].add_argument("--force", action="store_true", help="replace an existing file")
    parsers["import"].add_argument("file", metavar="IN.jsonl", help="an export, or -")

    p = parsers["demo"]
    p.add_argument(
        "--db",
        dest="demo_db",
        metavar="PATH",
        help="demo database, recreated each run (default: OUT/demo.db)",
    )
    p.add_argument(
        "--out", metavar="DIR", default="graphmem-demo", help="output folder (./graphmem-demo)"
    )
    return parser


def _non_blank(text: str) -> str:
    """A query, task or name: an empty or blank one would match everything or nothing."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty or blank")
    return text


def _positive(text: str) -> int:
    value = _non_negative(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 error, 2 usage)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.handler(args)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # The reader went away (`graphmem ... | head -1`): stop quietly. Python's advice
        # (signal module docs): point stdout at devnull so the flush at exit fails no more.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except UsageError as exc:
        _fail(str(exc))
        return 2
    except (GraphmemError, OSError) as exc:
        _fail(_message(exc))
        return 1
    except KeyboardInterrupt:
        return 130


def _message(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: {exc.strerror or exc}"
    return str(exc) or type(exc).__name__


def _fail(message: str) -> None:
    sys.stderr.write(f"{PROG}: error: {message}\n")


if __name__ == "__main__":
    raise SystemExit(main())
