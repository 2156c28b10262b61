"""The ``graphmem`` command: ingest memories, search them, ask the graph, draw it, move it.

Every subcommand has ``--help`` with examples; ``docs/cli.md`` is the manual. Every failure
prints one line, ``graphmem: error: ...``, to stderr, never a traceback, and exits with a
documented status (:data:`EXIT_CODES`): 1 for an error of the library, the input file or the
database (a missing file, a bad argument or record, an unknown entity, a file that is not a
graphmem database, a full disk), 2 for bad usage, 3 for an unexpected internal error (a bug:
``GRAPHMEM_DEBUG=1`` shows its traceback), 130 when interrupted.

Layout written by ``graphmem ingest`` (the one ``CortexMemory`` itself writes for an important
task result): each record is saved to the ``long_term`` tier (no eviction) and to the
``entity`` tier (typed relations extracted) of one database, so ``graphmem context`` and a
``CortexMemory(persistence_path=...)`` opened on the file find the knowledge, and the
relationship commands find the typed, evidenced graph.

Tenant scope, the same for every command that reads or writes memories (ingest, search,
context, entities, relations, relabel, path, viz, stats): ``--user U`` works on user ``U``'s
memories and graph only; without it, on the shared ones (those ingested without ``--user``).
Other users' memories are never shown or counted (``stats`` lists which users exist).

Example:
    >>> parser = build_parser()
    >>> parser.parse_args(["--db", "x.db", "search", "Atlas launch", "--limit", "3"]).limit
    3
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn

from ..errors import GraphmemError
from ..records import read_records
from .commands import (
    UsageError,
    cmd_context,
    cmd_declare,
    cmd_demo,
    cmd_entities,
    cmd_export,
    cmd_export_graph,
    cmd_import,
    cmd_ingest,
    cmd_path,
    cmd_reanalyse,
    cmd_relabel,
    cmd_relations,
    cmd_search,
    cmd_stats,
    cmd_undeclare,
    cmd_viz,
    default_db_path,
)
from .mcp_command import EXAMPLES as MCP_EXAMPLES
from .mcp_command import add_mcp_arguments, cmd_mcp
from .mcp_memory_command import EXAMPLES as IMPORT_MCP_MEMORY_EXAMPLES
from .mcp_memory_command import cmd_import_mcp_memory

__all__ = ["COMMANDS", "EXIT_CODES", "build_parser", "default_db_path", "main", "read_records"]

PROG = "graphmem"
#: The exit statuses of ``graphmem`` (docs/cli.md lists the same).
EXIT_CODES = {
    0: "success",
    1: "error: the library refused an argument, an input file or the database",
    2: "usage: a wrong command line",
    3: "internal error: a bug of graphmem (set GRAPHMEM_DEBUG=1 for the traceback)",
    130: "interrupted (Ctrl-C)",
}


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
  graphmem ingest history.csv --time-field date   # dated by its "date" column
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
        "declare",
        cmd_declare,
        "declare entity types (PROJECT, TEAM ...) from a JSONL file of spaCy patterns",
        """examples:
  graphmem declare types.jsonl      # lines like {"label": "PROJECT", "pattern": "Atlas"}
  graphmem declare                  # list what is declared
  graphmem declare --json""",
    ),
    Command(
        "undeclare",
        cmd_undeclare,
        "remove declared entity types: every pattern of a label, or one",
        """examples:
  graphmem undeclare PROJECT                 # every PROJECT pattern
  graphmem undeclare PROJECT --pattern '"Atlas"'""",
    ),
    Command(
        "relabel",
        cmd_relabel,
        "give an entity another label, for good",
        """examples:
  graphmem relabel Atlas PROJECT
  graphmem relabel "Aisha" PERSON --user alice""",
    ),
    Command(
        "reanalyse",
        cmd_reanalyse,
        "analyse the stored texts again with the current declarations and rules",
        """examples:
  graphmem reanalyse                # every user's texts
  graphmem reanalyse --user alice   # one user's (--user "" : the shared memories)
  graphmem reanalyse --batch-size 64 --no-progress""",
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
  graphmem export - | gzip > backup.jsonl.gz
  graphmem export memory.jsonl --format mcp-memory    # the MCP memory server's file""",
    ),
    Command(
        "export-graph",
        cmd_export_graph,
        "write the graph (or a part of it) as GraphML or GEXF, for Gephi, yEd or Cytoscape",
        """examples:
  graphmem export-graph knowledge.graphml                   # the whole graph
  graphmem export-graph dana.gexf --entity "Dana Whitfield" --depth 2
  graphmem export-graph out.xml --format graphml --user alice""",
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
        "import-mcp-memory",
        cmd_import_mcp_memory,
        "add the MCP reference memory server's memory.jsonl (entities, observations, "
        "relations) to the database",
        IMPORT_MCP_MEMORY_EXAMPLES,
    ),
    Command(
        "mcp",
        cmd_mcp,
        "serve the memory to agents over MCP (stdio or streamable HTTP)",
        MCP_EXAMPLES,
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
        help="the user (tenant) whose memories and graph to use (default: the shared "
        "ones, saved without --user)",
    )
    parser = _Parser(
        prog=PROG,
        description=_DESCRIPTION,
        epilog="Run `graphmem COMMAND --help` for a command's options and examples.\n"
        "Start with: graphmem demo",
        formatter_class=_Formatter,
    )
    parser.add_argument("--db", metavar="PATH", default=None, help=db_help)
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"graphmem {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    parsers: dict[str, argparse.ArgumentParser] = {}
    p: argparse.ArgumentParser
    for command in COMMANDS:
        parents = [] if command.name == "demo" else [common]
        if command.name in {
            "ingest",
            "search",
            "context",
            "entities",
            "relations",
            "relabel",
            "path",
            "viz",
            "export-graph",
            "stats",
            "import-mcp-memory",
        }:
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
        "--workers",
        type=_positive,
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

    p = parsers["declare"]
    p.add_argument(
        "file", metavar="FILE", nargs="?", help="JSONL patterns; without it: list the declared"
    )
    p.add_argument("--json", action="store_true", help="print JSON (when listing)")

    p = parsers["undeclare"]
    p.add_argument("label", metavar="LABEL", type=_non_blank, help="the declared label")
    p.add_argument(
        "--pattern",
        metavar="JSON",
        help="only the pattern that is this JSON phrase or token list ('\"Atlas\"')",
    )

    p = parsers["relabel"]
    p.add_argument("name", metavar="NAME", type=_non_blank, help="an entity name or alias")
    p.add_argument("label", metavar="LABEL", type=_non_blank, help="PERSON, ORG, PROJECT ...")

    p = parsers["reanalyse"]
    p.add_argument(
        "--user",
        metavar="USER_ID",
        default=None,
        help="only this user's texts (\"\" for the shared ones; default: every user's)",
    )
    p.add_argument("--batch-size", type=_positive, default=256, metavar="N", help="default 256")
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar (default: when stderr is a terminal)",
    )

    p = parsers["path"]
    p.add_argument("a", metavar="A", type=_non_blank)
    p.add_argument("b", metavar="B", type=_non_blank)
    p.add_argument("--max-hops", type=_positive, default=3, metavar="N", help="default 3")
    p.add_argument("--limit", type=_positive, default=3, metavar="N", help="paths shown")
    p.add_argument(
        "--typed-only",
        action="store_true",
        help="only paths over typed relations (default: co-occurrence links when no typed "
        "path is within --max-hops)",
    )
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
    parsers["export"].add_argument(
        "--format",
        choices=("graphmem", "mcp-memory"),
        default="graphmem",
        help="graphmem: every row, lossless (default); mcp-memory: the graph of the MCP "
        "memory tools as the reference server's memory.jsonl",
    )
    parsers["export"].add_argument(
        "--user",
        metavar="USER_ID",
        default=None,
        help="with --format mcp-memory: whose graph (default: the shared one)",
    )
    p = parsers["export-graph"]
    p.add_argument("out", metavar="OUT", help="a .graphml or .gexf file")
    p.add_argument("--format", choices=("graphml", "gexf"), help="default: from the suffix of OUT")
    p.add_argument("--entity", metavar="NAME", type=_non_blank, help="an entity's neighbourhood")
    p.add_argument("--depth", type=_non_negative, default=1, metavar="N", help="with --entity")
    p.add_argument("--force", action="store_true", help="replace an existing file")
    parsers["import"].add_argument("file", metavar="IN.jsonl", help="an export, or -")
    parsers["import-mcp-memory"].add_argument(
        "file", metavar="memory.jsonl", help="the reference server's file, or -"
    )

    add_mcp_arguments(parsers["mcp"])

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
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning  # one line, as errors are
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
    except Exception as exc:
        from ..store import DriverError  # (imported late: `--help` loads no SQL driver)

        if isinstance(exc, DriverError):  # the database itself failed: a full disk, a lock
            _fail(f"database error: {_message(getattr(exc, 'orig', None) or exc)}")
            return 1
        if os.environ.get("GRAPHMEM_DEBUG") == "1":
            raise
        _fail(f"internal error ({type(exc).__name__}: {_message(exc)[:300]}); please report it")
        return 3


def _message(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: {exc.strerror or exc}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _show_warning(message: Warning | str, *_: object, **__: object) -> None:
    sys.stderr.write(f"{PROG}: warning: {message}\n")


def _fail(message: str) -> None:
    sys.stderr.write(f"{PROG}: error: {message}\n")


if __name__ == "__main__":
    raise SystemExit(main())
