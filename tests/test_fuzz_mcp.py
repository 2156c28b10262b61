"""Fuzz (issue 25): the MCP tools over streamable HTTP and stdio, given hostile arguments.

Every argument of every tool (read from the server's own tool list) gets wrong types, huge
numbers and strings, control characters, SQL/FTS5 fragments, deep nesting. Each call returns a
result or a tool error with a message, never a crash: the server keeps serving, and a call
that errs leaves the file's export unchanged. Real server subprocesses, the SDK's own client.
"""

from __future__ import annotations

import asyncio
import io
import json
import random
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from _mcp_server import GRAPHMEM, mcp_http_server  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402

from graphmem.compat.storage import SQLiteStorage  # noqa: E402
from graphmem.transfer import export_jsonl  # noqa: E402

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]

TOKEN = "fuzz-token-for-tests-000001"
VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    2**63,
    10**30,
    1.5,
    "",
    "   ",
    "x" * 100_001,
    "'; DROP TABLE memories; --",
    'NEAR("a" "b", 2) AND content:x*',
    "<script>alert(1)</script>",
    "\x00\x01\x0b\x1b[31m\r\n",
    "\u202e\ufeff\uffff",
    "2026-13-45T99:00:00",
    "Alice Stone",
    [],
    [1, "a", None],
    {},
    {"a": {"b": {"c": {"d": [[[[[]]]]]}}}},
    {"importance": "high", "$date": 1},
]


def _snapshot(db: Path) -> str:
    storage = SQLiteStorage(str(db))
    try:
        buffer = io.StringIO()
        export_jsonl(storage.database, buffer)
        return buffer.getvalue()
    finally:
        storage.close()


async def _fuzz(client: Client, db: Path, per_argument: int) -> int:
    """Call each tool with one hostile argument at a time; returns the number of calls."""
    chance = random.Random(25)  # the same calls every run
    tools = (await client.list_tools()).tools
    assert {t.name for t in tools} >= {"remember", "recall", "forget"}
    calls = 0
    for tool in sorted(tools, key=lambda t: t.name):
        properties = sorted((tool.input_schema or {}).get("properties", {}))
        for name in properties:
            for value in chance.sample(VALUES, per_argument):
                before = _snapshot(db)
                result = await client.call_tool(tool.name, {name: value})
                calls += 1
                if result.is_error:
                    message = str(getattr(result.content[0], "text", ""))
                    assert message.strip(), (tool.name, name, value)
                    assert "Traceback" not in message, message
                    assert _snapshot(db) == before, f"{tool.name}({name}={value!r:.60}) wrote"
    # Still serving, and what it stores comes back.
    stored = await client.call_tool("remember", {"content": "Ana Costa founded Vela Labs."})
    assert not stored.is_error, stored.content
    found = await client.call_tool("recall", {"query": "Vela Labs"})
    assert "Ana Costa founded Vela Labs." in json.dumps(found.structured_content)
    return calls


def test_mcp_tools_over_http_take_hostile_arguments(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({TOKEN: "fuzz"}), encoding="utf-8")
    with mcp_http_server(tmp_path, "127.0.0.1", "--tokens", str(tokens)) as url:

        async def main() -> int:
            http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
            async with Client(streamable_http_client(url, http_client=http)) as client:
                return await _fuzz(client, db, per_argument=3)

        assert asyncio.run(main()) > 30
    assert "Traceback" not in (tmp_path / "server.log").read_text()


def test_mcp_tools_over_stdio_take_hostile_arguments(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    params = StdioServerParameters(
        command=GRAPHMEM[0], args=[*GRAPHMEM[1:], "--db", str(db), "mcp", "--user", "fuzz"]
    )

    async def main() -> int:
        async with Client(params) as client:
            return await _fuzz(client, db, per_argument=2)

    assert asyncio.run(main()) > 20
