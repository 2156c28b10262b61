"""The MCP server over streamable HTTP: host checks, session limits, and serving.

- **Host and Origin.** Bound to any loopback address (``127.0.0.2``, the long form of ``::1``
  ...), the server accepts only requests whose ``Host`` (and ``Origin``, when sent) name a
  loopback address: a web page of another site cannot reach it through DNS rebinding. (The
  SDK's own check covers only the exact strings ``127.0.0.1``, ``localhost`` and ``::1``.)
- **Sessions.** At most :data:`DEFAULT_MAX_SESSIONS` open sessions, at most
  :data:`DEFAULT_SESSIONS_PER_USER` of them per user (the token's user, or every caller
  when there is no token), and a session idle for :data:`DEFAULT_SESSION_IDLE_TIMEOUT`
  seconds is closed: one token holder cannot shut the others out.

Example:
    >>> security = host_security("127.0.0.2", 8765)
    >>> "127.0.0.2:*" in security.allowed_hosts, "evil.example:*" in security.allowed_hosts
    (True, False)
    >>> host_security("0.0.0.0", 8765) is None
    True
"""

from __future__ import annotations

import ipaddress
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette

from .defaults import (
    DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_TIMEOUT,
    DEFAULT_SESSIONS_PER_USER,
)

__all__ = [
    "host_security",
    "http_app",
    "is_loopback",
    "serve_http",
]

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is a loopback address.

    Example:
        >>> is_loopback("127.0.0.2"), is_loopback("0:0:0:0:0:0:0:1"), is_loopback("10.0.0.1")
        (True, True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_security(host: str, port: int) -> TransportSecuritySettings | None:
    """The DNS-rebinding check for a server bound to ``host``: loopback names only (the
    bound address in every spelling, ``127.0.0.1``, ``localhost``, ``[::1]``); None when
    ``host`` is no loopback address (tokens guard it)."""
    if not is_loopback(host):
        return None
    names = list(_LOOPBACK_NAMES)
    if host != "localhost":
        address = ipaddress.ip_address(host)
        spelled = {host, address.compressed, address.exploded}
        names += [f"[{s}]" if address.version == 6 else s for s in sorted(spelled)]
    names = list(dict.fromkeys(names))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{n}:*" for n in names] + [f"{n}:{port}" for n in names],
        allowed_origins=[f"http://{n}:*" for n in names] + [f"http://{n}:{port}" for n in names],
    )


def http_app(
    server: MCPServer,
    host: str,
    port: int,
    *,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    sessions_per_user: int = DEFAULT_SESSIONS_PER_USER,
    idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT,
) -> Starlette:
    """The ASGI app of ``server`` on ``host:port`` with the host check and session limits."""
    app = server.streamable_http_app(
        host=host,
        transport_security=host_security(host, port),
        max_sessions=max_sessions,
        session_idle_timeout=idle_timeout,
    )
    _limit_sessions_per_user(server.session_manager, sessions_per_user)
    return app


def _limit_sessions_per_user(manager: Any, limit: int) -> None:
    """Refuse a new session (HTTP 503, as at the server's limit) to a user who holds
    ``limit`` open ones. The SDK (mcp 2.x) admits sessions in ``_admit_session`` and records
    each session's owner in ``_session_owners``; both are checked here so an SDK that
    renamed them fails loudly at start instead of serving without the limit."""
    admit = manager._admit_session
    owners: dict[str, Any] = manager._session_owners
    open_sessions: dict[str, Any] = manager._server_instances

    def admit_within_limit(requestor: Any) -> Any:
        held = sum(
            1
            for session, owner in owners.items()
            if owner == requestor and session in open_sessions
        )
        if requestor is None:  # no token: every caller is one user
            held = len(open_sessions)
        if held >= limit:
            return None
        return admit(requestor)

    manager._admit_session = admit_within_limit


def serve_http(server: MCPServer, host: str, port: int, **limits: Any) -> None:
    """Serve ``server`` over streamable HTTP on ``host:port`` until interrupted."""
    import uvicorn

    app = http_app(server, host, port, **limits)
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()
