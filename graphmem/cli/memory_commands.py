"""``graphmem ingest``, ``search`` and ``context``: memories in, memories out."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from ..errors import InvalidArgumentError
from ..records import ingest_records, read_records
from .command import Command, add_json_option, add_progress_option, non_blank, positive
from .database import (
    db_path,
    entity_memory,
    long_term,
    open_database,
    open_existing,
    persistent_cortex,
    scope,
)
from .output import graph_summary, print_json, wrap

__all__ = ["CONTEXT", "INGEST", "SEARCH", "cmd_context", "cmd_ingest", "cmd_search"]


def cmd_ingest(args: argparse.Namespace) -> int:
    started = time.monotonic()
    records = read_records(args.file, args.format, args.user, args.time_field)
    if not records:
        raise InvalidArgumentError(f"{args.file}: no memories to ingest (the input is empty)")
    path = db_path(args)
    storage = open_database(path)
    try:
        summary = ingest_records(
            storage,
            records,
            batch_size=args.batch_size,
            workers=args.workers,
            progress=sys.stderr.isatty() if args.progress is None else args.progress,
        )
        graph = graph_summary(entity_memory(storage, args.user).graph, args.user)
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
    print(graph)
    return 0


def _ingest_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="input file, or - for stdin")
    p.add_argument(
        "--format",
        choices=("auto", "text", "jsonl", "csv"),
        default="auto",
        help="input format (default: from the suffix: .jsonl, .csv, else text)",
    )
    p.add_argument("--batch-size", type=positive, default=256, metavar="N", help="default 256")
    p.add_argument(
        "--workers",
        type=positive,
        default=None,
        metavar="N",
        help="processes analysing the text, the next batch while one is written (default: "
        "the machine's cores); the same rows are stored with any number",
    )
    p.add_argument(
        "--time-field",
        default="timestamp",
        metavar="NAME",
        help="the JSONL field or CSV column holding each memory's event time, ISO 8601 "
        "(default: timestamp); it dates the memory and what it states (first_seen, "
        "valid_from, valid_to), so history can be loaded after the fact",
    )
    add_progress_option(p)


INGEST = Command(
    "ingest",
    cmd_ingest,
    "add memories from a text, JSONL or CSV file (or stdin)",
    """examples:
  graphmem ingest notes.txt                 # one memory per non-blank line
  graphmem ingest memories.jsonl --user alice
  graphmem ingest export.csv --no-progress
  graphmem ingest history.csv --time-field date   # dated by its "date" column
  cat log.txt | graphmem ingest - --format text""",
    _ingest_arguments,
)


def cmd_search(args: argparse.Namespace) -> int:
    storage = open_existing(args)
    try:
        hits = long_term(storage, scope(args)).search_hits(args.query, limit=args.limit)
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
    for r in results:
        print(f"{r['rank']:>2}. [{r['score']:.2f}] {wrap(r['content'], 6)}")
        print(f"      {_why(r)}")
    return 0


def _why(result: dict[str, Any]) -> str:
    """When a search hit is from, who saved it, and why it matched."""
    why = []
    if result["matched_terms"]:
        why.append("matched: " + ", ".join(result["matched_terms"]))
    if result["entity_path"]:
        why.append("via graph: " + " -> ".join(result["entity_path"]))
    if "semantic" in result["sources"]:
        why.append("similar to: " + (", ".join(result["similar_to"]) or "the question"))
    who = f"{result['timestamp'][:10]}" + (f", {result['agent_id']}" if result["agent_id"] else "")
    return f"{who}; {'; '.join(why) or 'recent'}"


def _search_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", metavar="QUERY", type=non_blank)
    p.add_argument("--limit", type=positive, default=10, metavar="N", help="default 10")
    add_json_option(p)


SEARCH = Command(
    "search",
    cmd_search,
    "search memories (words and the entity graph), with explanations",
    """examples:
  graphmem search "Atlas launch date"
  graphmem search "Who is Dana?" --limit 5 --json""",
    _search_arguments,
)


def cmd_context(args: argparse.Namespace) -> int:
    path = db_path(args)
    open_existing(args).close()
    with persistent_cortex(path, scope(args)) as cortex:
        report = cortex.build_context_report(
            args.task,
            agent_role=args.agent,
            max_items=args.max_items,
            knowledge_scope="team" if args.team else None,
        )
    if args.explain:
        print_json(report.to_dict())
    else:
        print(report.text or f"(no memory is relevant to {args.task!r})")
    return 0


def _context_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("task", metavar="TASK", type=non_blank, help="the task description")
    p.add_argument("--agent", metavar="ROLE", help="only memories of this agent (agent_id)")
    p.add_argument(
        "--team",
        action="store_true",
        help="with --agent: knowledge from every agent's memories, not only the agent's own "
        "(knowledge_scope='team'); the recent context stays the agent's",
    )
    p.add_argument(
        "--max-items", type=positive, default=10, metavar="N", help="related memories pool"
    )
    p.add_argument("--explain", action="store_true", help="print the context report as JSON")


CONTEXT = Command(
    "context",
    cmd_context,
    "the context CortexMemory builds for a task",
    """examples:
  graphmem context "Prepare the Atlas status update for Aurex Logistics."
  graphmem context "Plan the Compass kickoff" --agent "Project Manager" --explain
  graphmem context "Plan the Compass kickoff" --agent "Project Manager" --team""",
    _context_arguments,
)
