"""Settings of ``graphmem mcp`` that the command line names without loading the MCP SDK."""

from __future__ import annotations

__all__ = [
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_PORT",
    "DEFAULT_SESSIONS_PER_USER",
    "DEFAULT_SESSION_IDLE_TIMEOUT",
    "TOKEN_ENV",
]

#: Where ``graphmem mcp --transport http`` listens by default (on 127.0.0.1).
DEFAULT_PORT = 8765
#: One bearer token for the server's own user, from the environment (never from the command
#: line, where other users of the machine could read it).
TOKEN_ENV = "GRAPHMEM_MCP_TOKEN"

#: HTTP sessions the server keeps open at most, whoever opened them.
DEFAULT_MAX_SESSIONS = 1_000
#: HTTP sessions one user (one token's user; every caller without tokens) may hold at once.
DEFAULT_SESSIONS_PER_USER = 32
#: Seconds after which an HTTP session nobody used is closed.
DEFAULT_SESSION_IDLE_TIMEOUT = 300.0
