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

A command is a :class:`Command` in the module of its topic (``memory_commands``,
``graph_commands``, ``declare_commands``, ``viz_commands``, ``file_commands``,
``mcp_command``, ...): its handler, help, examples, its own options and whether it takes
``--user``. Adding one is that module, a line in :data:`COMMANDS`, a section of
``docs/cli.md`` (a test fails without it) and its tests.

Example:
    >>> parser = build_parser()
    >>> parser.parse_args(["--db", "x.db", "search", "Atlas launch", "--limit", "3"]).limit
    3
"""

from __future__ import annotations

import argparse
import atexit
import gc
import os
import sys
import warnings
from collections.abc import Sequence
from typing import NoReturn

from ..errors import GraphmemError
from ..records import read_records
from .command import Command, UsageError
from .database import default_db_path
from .declare_commands import DECLARE, REANALYSE, UNDECLARE
from .demo_command import DEMO
from .file_commands import EXPORT, IMPORT, STATS
from .graph_commands import ENTITIES, PATH, RELABEL, RELATIONS
from .mcp_command import MCP
from .mcp_memory_command import IMPORT_MCP_MEMORY
from .memory_commands import CONTEXT, INGEST, SEARCH
from .viz_commands import EXPORT_GRAPH, VIZ

__all__ = [
    "COMMANDS",
    "EXIT_CODES",
    "Command",
    "build_parser",
    "default_db_path",
    "main",
    "read_records",
]

PROG = "graphmem"
#: The exit statuses of ``graphmem`` (docs/cli.md lists the same).
EXIT_CODES = {
    0: "success",
    1: "error: the library refused an argument, an input file or the database",
    2: "usage: a wrong command line",
    3: "internal error: a bug of graphmem (set GRAPHMEM_DEBUG=1 for the traceback)",
    130: "interrupted (Ctrl-C)",
}

#: The subcommands, in the order ``graphmem --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    INGEST,
    SEARCH,
    CONTEXT,
    ENTITIES,
    RELATIONS,
    DECLARE,
    UNDECLARE,
    RELABEL,
    REANALYSE,
    PATH,
    VIZ,
    STATS,
    EXPORT,
    EXPORT_GRAPH,
    IMPORT,
    IMPORT_MCP_MEMORY,
    MCP,
    DEMO,
)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr (status 2), never a usage dump."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{PROG}: error: {message} (see `{self.prog} --help`)\n")
        raise SystemExit(2)


class _Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32)


_DESCRIPTION = """\
graphmem: knowledge-graph entity memory for LLM agents.

The database is --db PATH, else $GRAPHMEM_DB, else graphmem.db in the user's data
directory ($XDG_DATA_HOME/graphmem/ or ~/.local/share/graphmem/)."""
_DB_HELP = "database file (default: $GRAPHMEM_DB, else graphmem.db in the user data dir)"


def build_parser() -> argparse.ArgumentParser:
    """The ``graphmem`` argument parser: one subparser per :data:`COMMANDS` entry, with the
    shared ``--db`` and (a tenant-scoped command) ``--user``, then the command's own options."""
    from .. import __version__

    parser = _Parser(
        prog=PROG,
        description=_DESCRIPTION,
        epilog="Run `graphmem COMMAND --help` for a command's options and examples.\n"
        "Start with: graphmem demo",
        formatter_class=_Formatter,
    )
    parser.add_argument("--db", metavar="PATH", default=None, help=_DB_HELP)
    parser.add_argument("--version", action="version", version=f"graphmem {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    shared = _shared_options()
    for command in COMMANDS:
        parents = [shared["db"]] if command.db_option else []
        parents += [shared["user"]] if command.tenant_scoped else []
        p = sub.add_parser(
            command.name,
            parents=parents,
            help=command.summary,
            description=command.summary[0].upper() + command.summary[1:] + ".",
            epilog=command.examples,
            formatter_class=_Formatter,
        )
        p.set_defaults(handler=command.handler)
        command.add_arguments(p)
    return parser


def _shared_options() -> dict[str, _Parser]:
    """The options several subcommands take, as argparse parents: ``--db`` (after the
    command name too) and ``--user`` (the tenant scope)."""
    db = _Parser(add_help=False)
    db.add_argument("--db", metavar="PATH", default=argparse.SUPPRESS, help=_DB_HELP)
    user = _Parser(add_help=False)
    user.add_argument(
        "--user",
        metavar="USER_ID",
        default=None,
        help="the user (tenant) whose memories and graph to use (default: the shared "
        "ones, saved without --user)",
    )
    return {"db": db, "user": user}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 error, 2 usage)."""
    if argv is None:  # the process is this command
        _exit_without_collecting()
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
        from ..space import DriverError  # (imported late: `--help` loads no SQL driver)

        if isinstance(exc, DriverError):  # the database itself failed: a full disk, a lock
            _fail(f"database error: {_message(getattr(exc, 'orig', None) or exc)}")
            return 1
        if os.environ.get("GRAPHMEM_DEBUG") == "1":
            raise
        _fail(f"internal error ({type(exc).__name__}: {_message(exc)[:300]}); please report it")
        return 3


def _exit_without_collecting() -> None:
    """At exit, freeze the objects out of the interpreter's last garbage collection, which
    walks them all to free memory the process gives back anyway: 0.05 s CPU with SQLAlchemy
    loaded, 0.1 s with the MCP SDK (bench/startup.py). Commands close what they open."""
    atexit.unregister(gc.freeze)  # once, however often main runs
    atexit.register(gc.freeze)


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
