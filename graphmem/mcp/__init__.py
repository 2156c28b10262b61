"""graphmem as an MCP server (``graphmem mcp``): see :mod:`graphmem.mcp.server`.

Needs the MCP SDK (``pip install 'graphmem[mcp]'``); importing this package does not load
it, its names do (``from graphmem.mcp import build_server``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .defaults import DEFAULT_PORT, TOKEN_ENV

if TYPE_CHECKING:
    from .server import MemoryServer, build_server
    from .tokens import TokenMap

__all__ = ["DEFAULT_PORT", "TOKEN_ENV", "MemoryServer", "TokenMap", "build_server"]

_HOMES = {"MemoryServer": "server", "build_server": "server", "TokenMap": "tokens"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
