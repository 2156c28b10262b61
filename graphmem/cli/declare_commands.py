"""``graphmem declare``, ``undeclare`` and ``reanalyse``: what the analysis looks for, and
reading the stored texts again with it."""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

from ..errors import InvalidArgumentError
from .command import Command, UsageError, add_json_option, add_progress_option, non_blank, positive
from .database import db_path, entity_memory, open_database, open_existing
from .output import REANALYSE_HINT, graph_summary, print_json

__all__ = ["DECLARE", "REANALYSE", "UNDECLARE", "cmd_declare", "cmd_reanalyse", "cmd_undeclare"]


def cmd_declare(args: argparse.Namespace) -> int:
    path = db_path(args)
    if args.file is None:
        storage = open_existing(args)
        try:
            declared = entity_memory(storage, None).declared_entities()
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
    storage = open_database(path)
    try:
        added = entity_memory(storage, None).declare_entities(source)
    finally:
        storage.close()
    print(f"Declared {added} new pattern{'s' * (added != 1)} in {path}.")
    if added:
        print(REANALYSE_HINT)
    return 0


def _declare_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "file", metavar="FILE", nargs="?", help="JSONL patterns; without it: list the declared"
    )
    add_json_option(p, "print JSON (when listing)")


DECLARE = Command(
    "declare",
    cmd_declare,
    "declare entity types (PROJECT, TEAM ...) from a JSONL file of spaCy patterns",
    """examples:
  graphmem declare types.jsonl      # lines like {"label": "PROJECT", "pattern": "Atlas"}
  graphmem declare                  # list what is declared
  graphmem declare --json""",
    _declare_arguments,
    tenant_scoped=False,
)


def cmd_undeclare(args: argparse.Namespace) -> int:
    pattern = None
    if args.pattern is not None:
        try:
            pattern = json.loads(args.pattern)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--pattern is not JSON ({exc.msg})") from None
        except RecursionError:
            raise UsageError("--pattern nests too deeply") from None
        if not isinstance(pattern, str | list):
            raise UsageError("--pattern must be a JSON string (a phrase) or list (tokens)")
    storage = open_existing(args)
    try:
        removed = entity_memory(storage, None).undeclare_entities(args.label, pattern)
    finally:
        storage.close()
    print(f"Removed {removed} pattern{'s' * (removed != 1)} of {args.label}.")
    return 0


def _undeclare_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("label", metavar="LABEL", type=non_blank, help="the declared label")
    p.add_argument(
        "--pattern",
        metavar="JSON",
        help="only the pattern that is this JSON phrase or token list ('\"Atlas\"')",
    )


UNDECLARE = Command(
    "undeclare",
    cmd_undeclare,
    "remove declared entity types: every pattern of a label, or one",
    """examples:
  graphmem undeclare PROJECT                 # every PROJECT pattern
  graphmem undeclare PROJECT --pattern '"Atlas"'""",
    _undeclare_arguments,
    tenant_scoped=False,
)


def cmd_reanalyse(args: argparse.Namespace) -> int:
    from ..index.reanalysis import ReanalysisWarning

    started = time.monotonic()
    path = db_path(args)
    with warnings.catch_warnings():  # opening says it is due: this command does it
        warnings.simplefilter("ignore", ReanalysisWarning)
        storage = open_existing(args)
    try:
        done = entity_memory(storage, None).reanalyse(
            user_id=args.user,
            batch_size=args.batch_size,
            progress=sys.stderr.isatty() if args.progress is None else args.progress,
        )
        graph = graph_summary(entity_memory(storage, args.user or "").graph, args.user)
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
    print(graph)
    return 0


def _reanalyse_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--user",
        metavar="USER_ID",
        default=None,
        help="only this user's texts (\"\" for the shared ones; default: every user's)",
    )
    p.add_argument("--batch-size", type=positive, default=256, metavar="N", help="default 256")
    add_progress_option(p)


REANALYSE = Command(
    "reanalyse",
    cmd_reanalyse,
    "analyse the stored texts again with the current declarations and rules",
    """examples:
  graphmem reanalyse                # every user's texts
  graphmem reanalyse --user alice   # one user's (--user "" : the shared memories)
  graphmem reanalyse --batch-size 64 --no-progress""",
    _reanalyse_arguments,
    tenant_scoped=False,  # its own --user: every user's texts without it
)
