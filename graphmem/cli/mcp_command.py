"""``graphmem mcp``: serve a database to MCP clients over stdio or streamable HTTP."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..mcp.defaults import (
    DEFAULT_MAX_SESSIONS,
    DEFAULT_PORT,
    DEFAULT_SESSION_IDLE_TIMEOUT,
    DEFAULT_SESSIONS_PER_USER,
    TOKEN_ENV,
)
from .command import Command, UsageError
from .database import check_not_a_directory, db_path, open_database

if TYPE_CHECKING:
    from ..compat.storage import SQLiteStorage

__all__ = ["MCP", "add_mcp_arguments", "cmd_mcp"]

EXAMPLES = """examples:
  graphmem mcp                                   # stdio, for a desktop client
  graphmem --db memory.db mcp --tools reference  # the reference memory server's tools
  graphmem --db team.db mcp --user alice         # every call reaches alice's memory
  graphmem mcp --transport http --port 8765      # http://127.0.0.1:8765/mcp
  GRAPHMEM_MCP_TOKEN=$(cat token) graphmem mcp --transport http
  graphmem mcp --transport http --tokens tokens.json   # {"token": "user id", ...}"""


def add_mcp_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``graphmem mcp``."""
    p.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (the client starts the server) or streamable HTTP (default: stdio)",
    )
    p.add_argument(
        "--tools",
        choices=("graphmem", "reference", "all"),
        default="graphmem",
        help="graphmem's tools, exactly the MCP reference memory server's nine "
        "(create_entities ... open_nodes, for a user switching from it), or all of them "
        "(default: graphmem)",
    )
    p.add_argument(
        "--user",
        metavar="USER_ID",
        default=None,
        help="bind every call to this user (tenant); without it a call may pass user_id "
        "(default user: none); a token's user wins over it",
    )
    p.add_argument("--host", default="127.0.0.1", help="HTTP address to bind (default: 127.0.0.1)")
    p.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"HTTP port (default: {DEFAULT_PORT})"
    )
    p.add_argument(
        "--tokens",
        metavar="FILE",
        help=f'HTTP bearer tokens, a JSON object {{"token": "user id"}}; ${TOKEN_ENV} adds '
        "one token for --user",
    )
    p.add_argument(
        "--max-sessions",
        type=int,
        default=None,
        help=f"HTTP sessions open at once, all users (default: {DEFAULT_MAX_SESSIONS})",
    )
    p.add_argument(
        "--sessions-per-user",
        type=int,
        default=None,
        help=f"HTTP sessions one user (token) may hold open (default: {DEFAULT_SESSIONS_PER_USER})",
    )
    p.add_argument(
        "--session-idle-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"close an HTTP session unused this long (default: {DEFAULT_SESSION_IDLE_TIMEOUT:g})",
    )


def cmd_mcp(args: argparse.Namespace) -> int:
    http = args.transport == "http"
    try:
        from ..mcp.server import build_server
        from ..mcp.tokens import TokenMap

        if http:  # the web stack loads only for HTTP: stdio starts sooner
            from ..mcp.http import is_loopback, serve_http
    except ModuleNotFoundError as exc:
        if exc.name != "mcp" and not str(exc.name).startswith("mcp."):
            raise
        raise UsageError("graphmem mcp needs the MCP SDK: pip install 'graphmem[mcp]'") from None

    tokens = TokenMap.load(args.tokens, args.user) if http else None
    if not http and args.tokens:
        raise UsageError("--tokens applies to --transport http (stdio has no tokens)")
    if tokens is not None and not len(tokens):
        tokens = None
    if http and tokens is None and not is_loopback(args.host):
        raise UsageError(
            f"--host {args.host} without a token would open this memory to the network: "
            f"give --tokens FILE or set {TOKEN_ENV}"
        )
    if not 0 < args.port < 65536:
        raise UsageError(f"--port must be in 1..65535, got {args.port}")
    limits = _session_limits(args)
    path = db_path(args)
    check_not_a_directory(path)
    opened: list[SQLiteStorage] = []

    def open_storage() -> SQLiteStorage:
        opened.append(open_database(path))
        return opened[-1]

    url = f"http://{args.host}:{args.port}"
    try:
        if http:  # a database that cannot be opened stops the server before it listens
            open_storage()
        # Over stdio the database opens and the models load in the background: the client
        # is answered at once (a database that cannot be opened fails each call).
        server = build_server(
            opened[0] if opened else open_storage,
            user=args.user,
            tokens=tokens,
            url=url,
            tools=args.tools,
            warm=True,
        )
        if http:
            guarded = f"{len(tokens)} token(s)" if tokens is not None else "no token"
            sys.stderr.write(f"graphmem MCP server: {url}/mcp ({path}, {guarded})\n")
            serve_http(server, args.host, args.port, **limits)
        else:
            server.run("stdio")
    finally:
        for storage in opened:
            storage.close()
    return 0


def _session_limits(args: argparse.Namespace) -> dict[str, float]:
    """The session options given, checked (each must be positive)."""
    limits: dict[str, float] = {}
    for option, name in (
        ("max_sessions", "max_sessions"),
        ("sessions_per_user", "sessions_per_user"),
        ("session_idle_timeout", "idle_timeout"),
    ):
        value = getattr(args, option)
        if value is None:
            continue
        if not value > 0 or value != value or value == float("inf"):
            raise UsageError(f"--{option.replace('_', '-')} must be a positive number, got {value}")
        limits[name] = value
    return limits


MCP = Command(
    "mcp",
    cmd_mcp,
    "serve the memory to agents over MCP (stdio or streamable HTTP)",
    EXAMPLES,
    add_mcp_arguments,
    tenant_scoped=False,  # its own --user: it binds every call to the user
)
