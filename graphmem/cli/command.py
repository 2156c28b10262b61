"""What a ``graphmem`` subcommand is: :class:`Command`, and the argument types and options
several commands share.

A command module declares its commands, each with the options it takes; the parser
(:func:`graphmem.cli.build_parser`) only loops over them.

Example:
    >>> import argparse
    >>> def add_arguments(p: argparse.ArgumentParser) -> None:
    ...     p.add_argument("name", type=non_blank)
    ...     add_json_option(p)
    >>> hello = Command("hello", lambda args: 0, "greet an entity", "examples: ...", add_arguments)
    >>> parser = argparse.ArgumentParser()
    >>> hello.add_arguments(parser)
    >>> parser.parse_args(["Ada", "--json"]).json
    True
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import GraphmemError

__all__ = [
    "Command",
    "UsageError",
    "add_json_option",
    "add_progress_option",
    "non_blank",
    "non_negative",
    "positive",
]


class UsageError(GraphmemError):
    """A command-line mistake the user can fix (exit status 2)."""


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    """A command without options of its own."""


@dataclass(frozen=True)
class Command:
    """One subcommand: its handler, one-line help, a help epilog with examples, and the
    options it takes.

    Args:
        add_arguments: adds the command's own arguments to its subparser.
        tenant_scoped: it reads or writes one user's memories, so it takes the shared
            ``--user`` option (docs/cli.md, "Tenant scope").
        db_option: it takes the shared ``--db PATH`` option after the command name too.
    """

    name: str
    handler: Callable[[argparse.Namespace], int]
    summary: str
    examples: str
    add_arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments
    tenant_scoped: bool = True
    db_option: bool = True


def non_blank(text: str) -> str:
    """A query, task or name: an empty or blank one would match everything or nothing.

    Example:
        >>> non_blank(" Ada ")
        ' Ada '
    """
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty or blank")
    return text


def positive(text: str) -> int:
    """A whole number of at least 1.

    Example:
        >>> positive("3")
        3
    """
    value = non_negative(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def non_negative(text: str) -> int:
    """A whole number of at least 0.

    Example:
        >>> non_negative("0")
        0
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text}")
    return value


def a_time(text: str) -> str:
    """A time as graphmem reads one (ISO 8601: a date, or a date and time), kept as given.

    Example:
        >>> a_time("2026-04-01")
        '2026-04-01'
    """
    from ..items import check_event_time

    try:
        check_event_time(text, "the time")
    except GraphmemError:
        raise argparse.ArgumentTypeError(
            f"not an ISO 8601 date or time: {text!r} (2026-04-01, 2026-04-01T12:00Z)"
        ) from None
    return text


def add_json_option(parser: argparse.ArgumentParser, help_text: str = "print JSON") -> None:
    """``--json``: print the answer as JSON."""
    parser.add_argument("--json", action="store_true", help=help_text)


def add_progress_option(parser: argparse.ArgumentParser) -> None:
    """``--progress`` / ``--no-progress`` (default: when stderr is a terminal)."""
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar (default: when stderr is a terminal)",
    )
