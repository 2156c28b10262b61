"""`graphmem mcp` driven by the MCP SDK's own client, over stdio and streamable HTTP.

One real server subprocess per transport (HTTP: one for the module, with two users' tokens);
each test opens its own client sessions on it.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

pytestmark = pytest.mark.timeout(300)

GRAPHMEM = [sys.executable, "-c", "from graphmem.cli import main; raise SystemExit(main())"]
ALICE, BOB = "alice-token-for-tests-0001", "bob-token-for-tests-00002"
TOOLS = {"remember", "recall", "context", "entity", "relations", "path", "forget"}

MAYA = "Maya Lindqvist joined Lumen Robotics in Berlin."
TOM = "Tom Becker, the CTO of Lumen Robotics, met Maya Lindqvist in Oslo."


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def http_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    folder = tmp_path_factory.mktemp("mcp-http")
    tokens = folder / "tokens.json"
    tokens.write_text(json.dumps({ALICE: "alice", BOB: "bob"}), encoding="utf-8")
    port = _free_port()
    log = (folder / "server.log").open("wb")
    args = ["--db", str(folder / "m.db"), "mcp", "--transport", "http"]
    proc = subprocess.Popen(
        [*GRAPHMEM, *args, "--port", str(port), "--tokens", str(tokens)],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while True:
        assert proc.poll() is None, (folder / "server.log").read_text()
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "the server did not start listening"
            time.sleep(0.2)
    yield f"http://127.0.0.1:{port}/mcp", proc
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


@asynccontextmanager
async def _http(url: str, token: str | None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    # The SDK's own client and timeouts (30 s, 300 s to read): a first write waits for the
    # server's models, which it loads in the background after it starts listening.
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    async with Client(transport) as client:
        yield client


async def _ok(client: Client, tool: str, args: dict[str, Any]) -> Any:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    return result.structured_content


async def _error(client: Client, tool: str, args: dict[str, Any]) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error, (tool, args, result.structured_content)
    return str(getattr(result.content[0], "text", ""))


def _contents(found: dict[str, Any]) -> list[str]:
    return [hit["content"] for hit in found["results"]]


async def _remember_and_ask(client: Client, user_id: str | None = None) -> None:
    """What an agent does: remember two results, recall, get a context, ask the graph."""
    who = {"user_id": user_id} if user_id else {}
    first = await _ok(client, "remember", {"content": MAYA, "task": "Record the hire", **who})
    second = await _ok(client, "remember", {"content": TOM, "agent_role": "Scribe", **who})
    assert first["id"] and second["id"] and first["id"] != second["id"]
    assert MAYA in _contents(await _ok(client, "recall", {"query": "Who joined Lumen?", **who}))
    scribe = await _ok(client, "recall", {"query": "Lumen Robotics", "agent_role": "Scribe", **who})
    assert _contents(scribe) == [TOM]
    context = (await _ok(client, "context", {"task": "Brief me on Lumen Robotics", **who}))[
        "result"
    ]
    assert "Known entities:" in context and "Maya Lindqvist works_at Lumen Robotics" in context
    maya = await _ok(client, "entity", {"name": "Maya", **who})
    assert maya["name"] == "Maya Lindqvist" and maya["label"] == "PERSON"
    assert ("works_at", "Lumen Robotics") in {
        (r["predicate"], r["object"]) for r in maya["relations"]
    }
    works = await _ok(client, "relations", {"predicate": "works_at", "object": "Lumen", **who})
    # Lumen's CTO works there too: a role implies employment.
    assert [(r["subject"], r["evidence"][0]["sentence"]) for r in works["relations"]] == [
        ("Maya Lindqvist", MAYA),
        ("Tom Becker", TOM),
    ]
    before = await _ok(client, "relations", {"predicate": "works_at", "as_of": "2000-01-01", **who})
    assert before["relations"] == []
    paths = (await _ok(client, "path", {"a": "Tom Becker", "b": "Berlin", **who}))["paths"]
    assert paths and all(
        hops[0]["from"] == "Tom Becker" and hops[-1]["to"] == "Berlin" for hops in paths
    )
    # The id recall gives is the one remember gave; forgetting it removes it everywhere.
    found = await _ok(client, "recall", {"query": "Tom Becker Oslo", **who})
    assert [hit["id"] for hit in found["results"] if hit["content"] == TOM] == [second["id"]]
    assert await _ok(client, "forget", {"id": second["id"], **who}) == {"removed": 1}
    assert TOM not in _contents(await _ok(client, "recall", {"query": "Tom Becker Oslo", **who}))
    assert "EntityNotFound" in await _error(client, "entity", {"name": "Tom Becker", **who})
    assert await _ok(client, "forget", {"id": second["id"], **who}) == {"removed": 0}
    assert await _ok(client, "forget", {"agent_role": "Scribe", **who}) == {"removed": 0}
    again = await _ok(client, "remember", {"content": MAYA, "dedupe_key": "hire-1", **who})
    assert await _ok(client, "remember", {"content": MAYA, "dedupe_key": "hire-1", **who}) == again


# ---------------------------------------------------------------------- streamable HTTP
def test_http_lists_the_tools_and_the_entity_page(http_server: tuple[str, Any]) -> None:
    async def main() -> None:
        async with _http(http_server[0], ALICE) as client:
            tools = (await client.list_tools()).tools
            assert {t.name for t in tools} == TOOLS
            assert all(t.description for t in tools)
            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["graphmem://entity/{name}"]

    asyncio.run(main())


def test_http_agent_workflow_and_the_entity_page(http_server: tuple[str, Any]) -> None:
    async def main() -> None:
        async with _http(http_server[0], ALICE) as client:
            await _remember_and_ask(client)
            page = await client.read_resource("graphmem://entity/Maya%20Lindqvist")
            text = page.contents[0].text  # type: ignore[union-attr]
            assert text.startswith("# Maya Lindqvist (PERSON)")
            assert "Maya Lindqvist works_at Lumen Robotics" in text and MAYA in text

    asyncio.run(main())


def test_http_a_token_reaches_only_its_own_user(http_server: tuple[str, Any]) -> None:
    async def main() -> None:
        async with _http(http_server[0], ALICE) as alice, _http(http_server[0], BOB) as bob:
            secret = "Priya Nair signed the Orion Freight renewal."
            saved = await _ok(alice, "remember", {"content": secret})
            assert secret in _contents(await _ok(alice, "recall", {"query": "Orion Freight"}))
            assert _contents(await _ok(bob, "recall", {"query": "Orion Freight renewal"})) == []
            assert "Orion" not in (await _ok(bob, "context", {"task": "Orion Freight"}))["result"]
            assert (await _ok(bob, "relations", {"subject": "Priya Nair"}))["relations"] == []
            assert "EntityNotFound" in await _error(bob, "entity", {"name": "Priya Nair"})
            assert "EntityNotFound" in await _error(bob, "path", {"a": "Priya Nair", "b": "Orion"})
            # The model's arguments cannot reach another tenant.
            for tool, args in [
                ("recall", {"query": "Orion Freight"}),
                ("context", {"task": "Orion Freight"}),
                ("entity", {"name": "Priya Nair"}),
                ("remember", {"content": "Bob was here."}),
            ]:
                message = await _error(bob, tool, {**args, "user_id": "alice"})
                assert "is not the user of this connection" in message
            with pytest.raises(Exception, match="no entity named"):
                await bob.read_resource("graphmem://entity/Priya%20Nair")
            assert secret in _contents(await _ok(alice, "recall", {"query": "Orion Freight"}))
            assert await _ok(bob, "forget", {"id": saved["id"]}) == {"removed": 0}
            assert await _ok(bob, "forget", {"before": "2100-01-01"}) == {"removed": 0}
            assert secret in _contents(await _ok(alice, "recall", {"query": "Orion Freight"}))
            assert "Bob was here." not in _contents(await _ok(alice, "recall", {"query": "Bob"}))

    asyncio.run(main())


def test_http_without_a_valid_token_is_refused(http_server: tuple[str, Any]) -> None:
    url = http_server[0]
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for headers in ({}, {"Authorization": "Bearer not-a-token-of-this-server"}):
        response = httpx2.post(url, json=body, headers=headers, timeout=30)
        assert response.status_code == 401, response.text


def test_http_malformed_calls_get_errors_and_the_server_keeps_serving(
    http_server: tuple[str, subprocess.Popen[bytes]],
) -> None:
    url, proc = http_server

    async def main() -> None:
        async with _http(url, ALICE) as client:
            bad: list[tuple[str, dict[str, Any], str]] = [
                ("recall", {}, "query"),
                ("recall", {"query": 5}, "query"),
                ("recall", {"query": "x", "limit": 0}, "limit"),
                ("recall", {"query": "x", "limit": "many"}, "limit"),
                ("remember", {"content": ""}, "result"),
                ("remember", {"content": "x", "importance": 2}, "importance"),
                ("remember", {"content": "x", "timestamp": "yesterday-ish"}, "timestamp"),
                ("remember", {"content": "x", "metadata": "not a dict"}, "metadata"),
                ("relations", {"as_of": "not a time"}, "when"),
                ("path", {"a": "Nobody", "b": "Noone", "max_hops": 99}, "max_hops"),
                ("entity", {"name": "Nobody Known"}, "no entity named"),
                ("forget", {}, "needs an id or a filter"),
                ("forget", {"id": "x", "agent_role": "QA"}, "not both"),
                ("forget", {"before": "soon"}, "before"),
                ("forget", {"id": ""}, "result_id"),
                ("no_such_tool", {}, "no_such_tool"),
            ]
            for tool, args, named in bad:
                message = await _error(client, tool, args)
                assert named in message, (tool, args, message)
            await _ok(client, "remember", {"content": "Ana Costa founded Vela Labs."})
            assert "Ana Costa founded Vela Labs." in _contents(
                await _ok(client, "recall", {"query": "Vela Labs"})
            )
        assert proc.poll() is None

    asyncio.run(main())


# ---------------------------------------------------------------------- stdio
@pytest.mark.slow
def test_stdio_agent_workflow_bound_to_the_servers_user(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    params = StdioServerParameters(
        command=GRAPHMEM[0], args=[*GRAPHMEM[1:], "--db", str(db), "mcp", "--user", "carol"]
    )

    async def main() -> None:
        async with Client(params) as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            await _remember_and_ask(client, user_id="carol")
            assert "is not the user of this connection" in await _error(
                client, "recall", {"query": "Lumen", "user_id": "dave"}
            )
            assert "query" in await _error(client, "recall", {"query": ["not", "text"]})
            assert MAYA in _contents(await _ok(client, "recall", {"query": "Lumen Robotics"}))

    asyncio.run(main())
    # What the server wrote is carol's, in the file.
    from graphmem import CortexMemory, SQLiteStorage

    storage = SQLiteStorage(str(db))
    try:
        assert MAYA in [
            i.content for i in CortexMemory(storage=storage, user_id="carol").search("Lumen")
        ]
        assert CortexMemory(storage=storage, user_id="dave").search("Lumen") == []
    finally:
        storage.close()


# ---------------------------------------------------------------------- tokens
def test_tokens_come_from_the_file_and_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphmem import InvalidArgumentError
    from graphmem.mcp import TOKEN_ENV, TokenMap

    file = tmp_path / "tokens.json"
    file.write_text(json.dumps({ALICE: "alice"}), encoding="utf-8")
    monkeypatch.setenv(TOKEN_ENV, BOB)
    tokens = TokenMap.load(file, "bob")
    verified = [asyncio.run(tokens.verify_token(t)) for t in (ALICE, BOB, ALICE[:-1], "")]
    assert [v.subject if v else None for v in verified] == ["alice", "bob", None, None]
    monkeypatch.delenv(TOKEN_ENV)
    assert len(TokenMap.load(None, None)) == 0
    for text, message in [
        ("{not json", "cannot read the tokens file"),
        ('["a list"]', "must be a JSON object"),
        ('{"short": "alice"}', "at least 16 characters"),
        (json.dumps({ALICE: 7}), "must be a string"),
    ]:
        file.write_text(text, encoding="utf-8")
        with pytest.raises(InvalidArgumentError, match=message):
            TokenMap.load(file, None)
    with pytest.raises(InvalidArgumentError, match="cannot read the tokens file"):
        TokenMap.load(tmp_path / "missing.json", None)


def test_cli_refuses_tokens_on_stdio_and_a_bad_tokens_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from graphmem.cli import main

    bad = tmp_path / "tokens.json"
    bad.write_text('{"short": "alice"}', encoding="utf-8")
    for extra, status, message in [
        (["--tokens", str(bad)], 2, "--tokens applies to --transport http"),
        (["--transport", "http", "--tokens", str(bad)], 1, "at least 16 characters"),
        (["--transport", "http", "--port", "70000"], 2, "--port must be in 1..65535"),
        (["--transport", "http", "--host", "0.0.0.0"], 2, "would open this memory to the"),
    ]:
        assert main(["--db", str(tmp_path / "m.db"), "mcp", *extra]) == status
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "m.db").exists()
