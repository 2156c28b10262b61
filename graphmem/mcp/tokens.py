"""Bearer tokens of the HTTP transport, each bound to the user (tenant) it may reach.

A tokens file is a JSON object, token -> user id (``{"alice-token-0123456789": "alice", "bob-token-0123456789":
"bob"}``); the environment variable ``GRAPHMEM_MCP_TOKEN`` adds one token for the server's
own user (``--user``, else the default user ``""``). A call made with a token reaches only
that token's user, whatever its arguments say.

Example:
    >>> tokens = TokenMap({"alice-token-0123456789": "alice"})
    >>> import asyncio
    >>> asyncio.run(tokens.verify_token("alice-token-0123456789")).subject
    'alice'
    >>> asyncio.run(tokens.verify_token("guess")) is None
    True
"""

from __future__ import annotations

import hmac
import json
import os
from collections.abc import Mapping
from pathlib import Path

from mcp.server.auth.provider import AccessToken

from ..errors import InvalidArgumentError
from .defaults import TOKEN_ENV

__all__ = ["TokenMap"]

#: Shorter tokens are guessable.
MIN_TOKEN_LENGTH = 16


class TokenMap:
    """The tokens the server accepts and the user each is bound to (an MCP
    ``TokenVerifier``: the SDK's bearer middleware asks it about each request)."""

    def __init__(self, users: Mapping[str, str]) -> None:
        for token, user in users.items():
            if not isinstance(token, str) or len(token) < MIN_TOKEN_LENGTH:
                raise InvalidArgumentError(
                    f"a token must be a string of at least {MIN_TOKEN_LENGTH} characters"
                )
            if not isinstance(user, str):
                raise InvalidArgumentError(f"the user of a token must be a string, got {user!r}")
        self._users = dict(users)

    def __len__(self) -> int:
        return len(self._users)

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None, own_user: str | None) -> TokenMap:
        """The tokens of the file at ``path`` (when given) and of ``$GRAPHMEM_MCP_TOKEN``
        (bound to ``own_user``, else the default user ``""``)."""
        users: dict[str, str] = {}
        if path is not None:
            file = Path(path)
            try:
                loaded = json.loads(file.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise InvalidArgumentError(f"{file}: cannot read the tokens file ({exc})") from None
            if not isinstance(loaded, dict):
                raise InvalidArgumentError(
                    f'{file}: the tokens file must be a JSON object {{"token": "user id", ...}}'
                )
            if not loaded:  # an empty file must not turn authentication off
                raise InvalidArgumentError(
                    f"{file}: the tokens file holds no token; give at least one "
                    '{"token": "user id"} (without --tokens the server needs none on loopback)'
                )
            users.update(loaded)
        own = os.environ.get(TOKEN_ENV)
        if own:
            users[own] = own_user or ""
        return cls(users)

    async def verify_token(self, token: str) -> AccessToken | None:
        """The access of ``token`` (its user as ``subject``), None when it is not known."""
        user = None
        for known, bound in self._users.items():
            # Every token is compared, in constant time: timing tells nothing.
            if hmac.compare_digest(
                known.encode("utf-8", "surrogatepass"), token.encode("utf-8", "surrogatepass")
            ):
                user = bound
        if user is None:
            return None
        return AccessToken(token=token, client_id="graphmem", scopes=[], subject=user)
