"""Settings of ``graphmem mcp`` that the command line names without loading the MCP SDK."""

from __future__ import annotations

__all__ = ["DEFAULT_PORT", "TOKEN_ENV"]

#: Where ``graphmem mcp --transport http`` listens by default (on 127.0.0.1).
DEFAULT_PORT = 8765
#: One bearer token for the server's own user, from the environment (never from the command
#: line, where other users of the machine could read it).
TOKEN_ENV = "GRAPHMEM_MCP_TOKEN"
