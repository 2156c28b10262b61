"""``graphmem import-mcp-memory`` and ``graphmem export --format mcp-memory``: move the MCP
reference memory server's ``memory.jsonl`` in and out (see :mod:`graphmem.reference`).

Neither needs the MCP SDK: the graph lives in graphmem's database, and ``graphmem mcp --tools
reference`` serves it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .._files import replacing
from ..errors import InvalidArgumentError
from .command import Command
from .database import db_path, open_database, open_existing
from .output import check_output

__all__ = ["EXAMPLES", "IMPORT_MCP_MEMORY", "cmd_export_mcp_memory", "cmd_import_mcp_memory"]

EXAMPLES = """examples:
  graphmem --db memory.db import-mcp-memory ~/memory.jsonl
  graphmem --db team.db import-mcp-memory alice.jsonl --user alice
  cat memory.jsonl | graphmem import-mcp-memory -"""


def cmd_import_mcp_memory(args: argparse.Namespace) -> int:
    """Add a reference server's graph file to the database (created when missing)."""
    from ..reference import ReferenceGraph  # loads the store: not for --help

    source = Path(args.file)
    if args.file != "-" and not source.is_file():
        raise InvalidArgumentError(f"{args.file}: no such file")
    path = db_path(args)
    storage = open_database(path)
    try:
        graph = ReferenceGraph(storage, args.user)
        counts = graph.import_jsonl(sys.stdin if args.file == "-" else str(source))
        total = graph.counts()
    finally:
        storage.close()
    print(
        f"Imported {counts['entities']} new entities, {counts['observations']} observations "
        f"and {counts['relations']} relations into {path} (its MCP memory graph now holds "
        f"{total[0]} entities and {total[1]} relations)."
    )
    return 0


def _import_mcp_memory_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="memory.jsonl", help="the reference server's file, or -")


IMPORT_MCP_MEMORY = Command(
    "import-mcp-memory",
    cmd_import_mcp_memory,
    "add the MCP reference memory server's memory.jsonl (entities, observations, "
    "relations) to the database",
    EXAMPLES,
    _import_mcp_memory_arguments,
)


def cmd_export_mcp_memory(args: argparse.Namespace) -> int:
    """Write the database's reference graph (of ``--user``) as a ``memory.jsonl``."""
    from ..reference import ReferenceGraph

    out = Path(args.out)
    if args.out != "-":
        check_output(out, db_path(args), force=args.force, replaceable=None)
    storage = open_existing(args)
    try:
        graph = ReferenceGraph(storage, args.user)
        if args.out == "-":
            counts = graph.export_jsonl(sys.stdout)
            sys.stdout.write("\n" if counts["entities"] or counts["relations"] else "")
        else:
            with replacing(out) as partial, partial.open("w", encoding="utf-8") as handle:
                counts = graph.export_jsonl(handle)
    finally:
        storage.close()
    if args.out != "-":
        print(
            f"Exported {counts['entities']} entities, {counts['observations']} observations "
            f"and {counts['relations']} relations to {out}."
        )
    return 0
