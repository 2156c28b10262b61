"""``graphmem stats``, ``export`` and ``import``: what a database file holds, and moving it
to another file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import GraphmemError, InvalidArgumentError
from .command import Command, UsageError, add_json_option
from .database import db_path, open_database, open_existing, scope
from .output import check_output, counts_text, print_json, replacing

__all__ = ["EXPORT", "IMPORT", "STATS", "cmd_export", "cmd_import", "cmd_stats"]


def cmd_stats(args: argparse.Namespace) -> int:
    from ..stats import stats

    path = db_path(args)
    storage = open_existing(args)
    try:
        counts = stats(storage, scope(args))
    finally:
        storage.close()
    found: dict[str, Any] = {"database": str(path), "size_bytes": path.stat().st_size, **counts}
    if args.json:
        print_json(found)
        return 0
    print(f"Database   {found['database']} ({found['size_bytes'] / 1024:.0f} KiB)")
    print(
        f"Scope      {'user ' + repr(args.user) if args.user else 'shared (no --user)'}; "
        f"users in the file: {', '.join(found['users']) or 'none'}"
    )
    tiers = found["memories_by_tier"]
    print("Memories   " + (", ".join(f"{k}: {v}" for k, v in tiers.items()) or "none"))
    g = found["graph"]
    print(f"Graph      {g['entities']} entities, {g['relations']} relations")
    print("Labels     " + _counted(g["entities_by_label"]))
    print("Predicates " + _counted(g["relations_by_predicate"]))
    rows = found["rows"]
    print(
        f"Rows       {rows['aliases']} aliases, {rows['mentions']} mentions, "
        f"{rows['relation_evidence']} evidence, {rows['merges']} merges, {rows['kv']} kv"
    )
    return 0


def _counted(counts: dict[str, int]) -> str:
    """``PERSON 3, ORG 2`` (``none`` when empty)."""
    return ", ".join(f"{k} {v}" for k, v in counts.items()) if counts else "none"


def _stats_arguments(p: argparse.ArgumentParser) -> None:
    add_json_option(p)


STATS = Command(
    "stats",
    cmd_stats,
    "counts of memories per tier, entities, relations and rows",
    """examples:
  graphmem stats
  graphmem --db other.db stats --json""",
    _stats_arguments,
)


def cmd_export(args: argparse.Namespace) -> int:
    from ..transfer import export_jsonl

    if getattr(args, "format", "graphmem") == "mcp-memory":
        from .mcp_memory_command import cmd_export_mcp_memory

        return cmd_export_mcp_memory(args)
    if getattr(args, "user", None) is not None:
        raise UsageError("--user applies to --format mcp-memory (an export holds every user)")

    out = Path(args.out)
    if args.out != "-":
        check_output(out, db_path(args), force=args.force, replaceable=None)
    storage = open_existing(args)
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


def _export_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", metavar="OUT.jsonl", help="output file, or -")
    p.add_argument("--force", action="store_true", help="replace an existing file")
    p.add_argument(
        "--format",
        choices=("graphmem", "mcp-memory"),
        default="graphmem",
        help="graphmem: every row, lossless (default); mcp-memory: the graph of the MCP "
        "memory tools as the reference server's memory.jsonl",
    )
    p.add_argument(
        "--user",
        metavar="USER_ID",
        default=None,
        help="with --format mcp-memory: whose graph (default: the shared one)",
    )


EXPORT = Command(
    "export",
    cmd_export,
    "write the whole database to a JSONL file (lossless)",
    """examples:
  graphmem export backup.jsonl
  graphmem export - | gzip > backup.jsonl.gz
  graphmem export memory.jsonl --format mcp-memory    # the MCP memory server's file""",
    _export_arguments,
    tenant_scoped=False,  # every user's rows; its own --user is for --format mcp-memory
)


def cmd_import(args: argparse.Namespace) -> int:
    from ..demo import remove_database_files
    from ..transfer import import_jsonl

    source = Path(args.file)
    if args.file != "-" and not source.is_file():
        raise InvalidArgumentError(f"{args.file}: no such file")
    path = db_path(args)
    existed = path.exists()
    storage = open_database(path)
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


def _import_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="IN.jsonl", help="an export, or -")


IMPORT = Command(
    "import",
    cmd_import,
    "load a JSONL export into a new (empty) database",
    """examples:
  graphmem --db restored.db import backup.jsonl
  gunzip -c backup.jsonl.gz | graphmem --db restored.db import -""",
    _import_arguments,
    tenant_scoped=False,
)
