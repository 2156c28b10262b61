"""`graphmem mcp --tools reference`: the MCP reference memory server's nine tools, driven by
the MCP SDK's own client over streamable HTTP and stdio, each tool's documented behaviour
(skips, cascades, errors, result shapes, hints), paging and ranked search, and 8 concurrent
clients (HTTP sessions and stdio server processes) writing one database without a loss.
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

pytestmark = pytest.mark.timeout(600)

GRAPHMEM = [sys.executable, "-c", "from graphmem.cli import main; raise SystemExit(main())"]
TOKEN = "reference-token-for-tests-01"
OTHER = "reference-token-for-tests-02"

#: The reference server's tools and their hints (readOnly, destructive, idempotent), from
#: @modelcontextprotocol/server-memory's registerTool calls.
HINTS = {
    "create_entities": (False, False, False),
    "create_relations": (False, False, False),
    "add_observations": (False, False, False),
    "delete_entities": (False, True, True),
    "delete_observations": (False, True, True),
    "delete_relations": (False, True, True),
    "read_graph": (True, False, True),
    "search_nodes": (True, False, True),
    "open_nodes": (True, False, True),
}
OUTPUT_KEYS = {
    "create_entities": {"entities"},
    "create_relations": {"relations"},
    "add_observations": {"results"},
    "delete_entities": {"success", "message"},
    "delete_observations": {"success", "message"},
    "delete_relations": {"success", "message"},
    "read_graph": {"entities", "relations", "nextCursor"},
    "search_nodes": {"entities", "relations", "nextCursor"},
    "open_nodes": {"entities", "relations", "nextCursor"},
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_http(folder: Path, db: Path, tools: str) -> tuple[str, subprocess.Popen[bytes]]:
    tokens = folder / "tokens.json"
    tokens.write_text(json.dumps({TOKEN: "ann", OTHER: "ben"}), encoding="utf-8")
    port = _free_port()
    log = (folder / "server.log").open("wb")
    proc = subprocess.Popen(
        [*GRAPHMEM, "--db", str(db), "mcp", "--transport", "http", "--tools", tools]
        + ["--port", str(port), "--tokens", str(tokens)],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while True:
        assert proc.poll() is None, (folder / "server.log").read_text()
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return f"http://127.0.0.1:{port}/mcp", proc
        except OSError:
            assert time.monotonic() < deadline, "the server did not start listening"
            time.sleep(0.2)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("mcp-reference")
    db = folder / "m.db"
    url, proc = _start_http(folder, db, "reference")
    yield url, db
    proc.terminate()
    proc.wait(timeout=30)


@asynccontextmanager
async def _http(url: str, token: str = TOKEN) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
    async with Client(streamable_http_client(url, http_client=http)) as client:
        yield client


async def _ok(client: Client, tool: str, args: dict[str, Any]) -> Any:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    text = getattr(result.content[0], "text", "")
    if tool.startswith("delete_"):
        assert text == result.structured_content["message"]
    else:  # the text is the JSON of the answer, indented by 2, as the reference writes it
        shown = result.structured_content
        if tool in ("create_entities", "create_relations", "add_observations"):
            (shown,) = result.structured_content.values()
        assert json.loads(text) == shown
    return result.structured_content


async def _error(client: Client, tool: str, args: dict[str, Any]) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error, (tool, args, result.structured_content)
    return str(getattr(result.content[0], "text", ""))


def _entity(name: str, kind: str, *observations: str) -> dict[str, Any]:
    return {"name": name, "entityType": kind, "observations": list(observations)}


def _rel(a: str, b: str, kind: str) -> dict[str, str]:
    return {"from": a, "to": b, "relationType": kind}


def test_exactly_the_nine_tools_with_their_schemas_and_hints(server: tuple[str, Path]) -> None:
    async def main() -> None:
        async with _http(server[0]) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == set(HINTS)
            for name, tool in tools.items():
                hints = tool.annotations
                assert hints is not None and hints.title
                assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (
                    HINTS[name]
                ), name
                assert hints.open_world_hint is False
                assert tool.output_schema is not None
                assert set(tool.output_schema["properties"]) == OUTPUT_KEYS[name], name
            entity_args = tools["create_entities"].input_schema
            assert entity_args["required"] == ["entities"]
            assert set(tools["delete_entities"].input_schema["properties"]) == {"entityNames"}
            assert set(tools["read_graph"].input_schema["properties"]) == {"limit", "cursor"}
            resources = (await client.list_resources()).resources
            assert "memory://knowledge-graph" in {str(r.uri) for r in resources}

    asyncio.run(main())


def test_creations_skip_what_exists_and_answer_what_was_created(server: tuple[str, Path]) -> None:
    async def main() -> None:
        async with _http(server[0]) as client:
            ada = _entity("Ada Okafor", "person", "Leads the Atlas project", "Speaks Yoruba")
            lumen = _entity("Lumen Labs", "organization")
            created = await _ok(client, "create_entities", {"entities": [ada, lumen]})
            assert created == {"entities": [ada, lumen]}
            again = _entity("Ada Okafor", "robot", "Something else")
            created = await _ok(client, "create_entities", {"entities": [again]})
            assert created == {"entities": []}
            works = _rel("Ada Okafor", "Lumen Labs", "works_at")
            out = await _ok(client, "create_relations", {"relations": [works]})
            assert out == {"relations": [works]}
            both = [works, _rel("Ada Okafor", "Lumen Labs", "founded")]
            out = await _ok(client, "create_relations", {"relations": both})
            assert out == {"relations": [both[1]]}
            opened = await _ok(client, "open_nodes", {"names": ["Ada Okafor", "Nobody"]})
            assert opened == {"entities": [ada], "relations": both}

    asyncio.run(main())


def test_add_observations_errors_for_an_unknown_entity_and_skips_repeats(
    server: tuple[str, Path],
) -> None:
    async def main() -> None:
        async with _http(server[0]) as client:
            kim = _entity("Kim Sato", "person", "Prefers morning meetings")
            await _ok(client, "create_entities", {"entities": [kim]})
            message = await _error(
                client,
                "add_observations",
                {
                    "observations": [
                        {"entityName": "Kim Sato", "contents": ["Plays the cello"]},
                        {"entityName": "Nobody Here", "contents": ["x"]},
                    ]
                },
            )
            assert "Entity with name Nobody Here not found" in message
            opened = await _ok(client, "open_nodes", {"names": ["Kim Sato"]})
            assert opened["entities"] == [kim]  # nothing of the failed call was written
            added = await _ok(
                client,
                "add_observations",
                {
                    "observations": [
                        {
                            "entityName": "Kim Sato",
                            "contents": ["Prefers morning meetings", "Plays the cello"],
                        }
                    ]
                },
            )
            assert added == {
                "results": [{"entityName": "Kim Sato", "addedObservations": ["Plays the cello"]}]
            }
            opened = await _ok(client, "open_nodes", {"names": ["Kim Sato"]})
            assert opened["entities"][0]["observations"] == [
                "Prefers morning meetings",
                "Plays the cello",
            ]

    asyncio.run(main())


def test_deletes_cascade_and_ignore_what_is_not_there(server: tuple[str, Path]) -> None:
    async def main() -> None:
        async with _http(server[0]) as client:
            entities = [
                _entity("Rao Mehta", "person", "Maintains the billing service"),
                _entity("Vela Systems", "company", "Sells billing software"),
                _entity("Ivo Petrov", "person"),
            ]
            await _ok(client, "create_entities", {"entities": entities})
            relations = [
                _rel("Rao Mehta", "Vela Systems", "works_at"),
                _rel("Ivo Petrov", "Rao Mehta", "mentors"),
                _rel("Ivo Petrov", "Vela Systems", "advises"),
            ]
            await _ok(client, "create_relations", {"relations": relations})
            await _ok(client, "delete_entities", {"entityNames": ["Rao Mehta", "Not Known"]})
            opened = await _ok(
                client, "open_nodes", {"names": ["Rao Mehta", "Ivo Petrov", "Vela Systems"]}
            )
            assert [e["name"] for e in opened["entities"]] == ["Vela Systems", "Ivo Petrov"]
            assert opened["relations"] == [relations[2]]  # both of Rao's relations went
            found = await _ok(client, "search_nodes", {"query": "billing service"})
            assert "Rao Mehta" not in {e["name"] for e in found["entities"]}
            await _ok(
                client,
                "delete_observations",
                {
                    "deletions": [
                        {"entityName": "Vela Systems", "observations": ["Sells billing software"]},
                        {"entityName": "Nobody", "observations": ["x"]},
                    ]
                },
            )
            await _ok(
                client, "delete_relations", {"relations": [relations[2], _rel("a", "b", "c")]}
            )
            opened = await _ok(client, "open_nodes", {"names": ["Vela Systems", "Ivo Petrov"]})
            assert opened == {
                "entities": [_entity("Vela Systems", "company"), _entity("Ivo Petrov", "person")],
                "relations": [],
            }
            found = await _ok(client, "search_nodes", {"query": "Sells billing software"})
            assert found["entities"] == []

    asyncio.run(main())


def test_search_matches_names_types_and_observations_in_any_case_best_first(
    server: tuple[str, Path],
) -> None:
    async def main() -> None:
        async with _http(server[0], OTHER) as client:  # user ben: a graph of its own
            entities = [
                _entity("Harbor Analytics", "organization", "Builds dashboards for ports"),
                _entity("Noor Haddad", "person", "Wrote the Harbor dashboard migration"),
                _entity("Harbor", "project", "The port analytics project"),
                _entity("Quill", "tool", "A note taking app"),
            ]
            await _ok(client, "create_entities", {"entities": entities})
            link = _rel("Noor Haddad", "Quill", "uses")
            await _ok(client, "create_relations", {"relations": [link]})
            found = await _ok(client, "search_nodes", {"query": "HARBOR"})
            names = [e["name"] for e in found["entities"]]
            assert names[:2] == ["Harbor", "Harbor Analytics"]  # the name, then names with it
            assert set(names) == {"Harbor", "Harbor Analytics", "Noor Haddad"}
            assert found["relations"] == [link]
            assert [e["name"] for e in (await _ok(client, "search_nodes", {"query": "TOOL"}))[
                "entities"
            ]] == ["Quill"]  # fmt: skip
            # Ranked search finds other word forms the reference's substring test misses.
            ranked = await _ok(client, "search_nodes", {"query": "writing migrations"})
            assert [e["name"] for e in ranked["entities"]][:1] == ["Noor Haddad"]
            page = await _ok(client, "search_nodes", {"query": "harbor", "limit": 2})
            rest = await _ok(
                client, "search_nodes", {"query": "harbor", "cursor": page["nextCursor"]}
            )
            assert [e["name"] for e in page["entities"] + rest["entities"]] == names
            assert "nextCursor" not in rest
            # The other user's graph is not reached.
            assert (await _ok(client, "open_nodes", {"names": ["Kim Sato"]}))["entities"] == []

    asyncio.run(main())


def test_read_graph_pages_concatenate_to_the_graph_and_the_resource_mirrors_it(
    server: tuple[str, Path],
) -> None:
    async def main() -> None:
        async with _http(server[0]) as client:
            whole = await _ok(client, "read_graph", {})
            assert "nextCursor" not in whole and whole["entities"] and whole["relations"]
            entities: list[Any] = []
            relations: list[Any] = []
            args: dict[str, Any] = {"limit": 2}
            while True:
                page = await _ok(client, "read_graph", args)
                assert len(page["entities"]) + len(page["relations"]) <= 2
                entities += page["entities"]
                relations += page["relations"]
                if "nextCursor" not in page:
                    break
                args = {"limit": 2, "cursor": page["nextCursor"]}
            assert {"entities": entities, "relations": relations} == whole
            assert "cursor" in await _error(client, "read_graph", {"cursor": "bogus"})
            assert await _error(client, "read_graph", {"limit": 0})
            resource = await client.read_resource("memory://knowledge-graph")
            assert json.loads(resource.contents[0].text) == whole  # type: ignore[union-attr]

    asyncio.run(main())


def test_bad_arguments_are_tool_errors(server: tuple[str, Path]) -> None:
    async def main() -> None:
        async with _http(server[0]) as client:
            assert await _error(client, "create_entities", {"entities": [{"name": "x"}]})
            assert await _error(client, "create_relations", {"relations": "nope"})
            blank = _entity("   ", "person")
            assert "must not be empty" in await _error(
                client, "create_entities", {"entities": [blank]}
            )
            assert (await _ok(client, "open_nodes", {"names": ["   x"]}))["entities"] == []

    asyncio.run(main())


def test_stdio_and_the_graph_in_graphmem_s_own_tools(tmp_path: Path) -> None:
    """Over stdio with --tools all: the reference tools beside graphmem's, whose answers have
    output schemas and hints too; the reference graph is in graphmem's graph and search."""
    params = StdioServerParameters(
        command=GRAPHMEM[0],
        args=[*GRAPHMEM[1:], "--db", str(tmp_path / "s.db"), "mcp", "--tools", "all"],
    )

    async def main() -> None:
        async with Client(params) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            own = {"remember", "recall", "context", "entity", "relations", "path", "forget"}
            assert set(tools) == set(HINTS) | own
            for name in own:
                tool = tools[name]
                assert tool.output_schema is not None and tool.annotations is not None, name
                assert tool.annotations.read_only_hint is (name not in ("remember", "forget")), name
            assert tools["forget"].annotations.destructive_hint is True  # type: ignore[union-attr]
            maya = _entity("Maya Lindqvist", "person", "Moved to Berlin in 2021")
            await _ok(client, "create_entities", {"entities": [maya, _entity("Lumen", "org")]})
            await _ok(
                client,
                "create_relations",
                {"relations": [_rel("Maya Lindqvist", "Lumen", "works_at")]},
            )
            entity = await client.call_tool("entity", {"name": "Maya Lindqvist"})
            found = entity.structured_content
            assert found["label"] == "PERSON"
            assert ("works_at", "Lumen") in {
                (r["predicate"], r["object"]) for r in found["relations"]
            }
            await _one_memory_behind_every_tool(client)

    asyncio.run(main())


async def _one_memory_behind_every_tool(client: Client) -> None:
    """An observation added through the reference tools is a memory that ``recall`` and
    ``context`` find, until ``delete_observations`` forgets it (issue 38)."""
    await _ok(client, "create_entities", {"entities": [_entity("Ines Duarte", "person")]})
    note = "Speaks Portuguese at home and teaches evening classes"
    add = {"entityName": "Ines Duarte", "contents": [note]}
    await _ok(client, "add_observations", {"observations": [add]})

    async def recalled() -> list[str]:
        found = (
            await client.call_tool("recall", {"query": "Portuguese classes"})
        ).structured_content
        return [r["content"] for r in found["results"]]

    assert note in await recalled()
    context = await client.call_tool("context", {"task": "Who teaches Portuguese?"})
    assert note in str(getattr(context.content[0], "text", ""))
    gone = {"entityName": "Ines Duarte", "observations": [note]}
    await _ok(client, "delete_observations", {"deletions": [gone]})
    assert note not in await recalled()


def test_observations_are_memories_over_http(tmp_path: Path) -> None:
    url, proc = _start_http(tmp_path, tmp_path / "h.db", "all")

    async def main() -> None:
        async with _http(url) as client:
            await _one_memory_behind_every_tool(client)

    try:
        asyncio.run(main())
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_search_nodes_returns_only_entities_that_match(server: tuple[str, Path]) -> None:
    async def main() -> None:
        async with _http(server[0], OTHER) as client:
            entities = [
                _entity("Rui Costa", "person", "Lives in Lisbon near the river"),
                _entity("Dana Weiss", "person", "Works with Rui Costa on the port survey"),
                _entity("Oslo office", "place", "Opened last spring"),
            ]
            await _ok(client, "create_entities", {"entities": entities})
            found = await _ok(client, "search_nodes", {"query": "Lisbon"})
            assert [e["name"] for e in found["entities"]] == ["Rui Costa"]

    asyncio.run(main())


@pytest.mark.slow
def test_eight_concurrent_clients_lose_nothing(tmp_path: Path) -> None:
    """4 HTTP sessions on one server and 4 stdio server processes, all on one database
    file, each creating its entities, observations and relations at once."""
    db = tmp_path / "shared.db"
    url, proc = _start_http(tmp_path, db, "reference")

    def stdio() -> Client:
        return Client(
            StdioServerParameters(
                command=GRAPHMEM[0],
                args=[
                    *GRAPHMEM[1:],
                    "--db",
                    str(db),
                    "mcp",
                    "--tools",
                    "reference",
                    "--user",
                    "ann",
                ],
            )
        )

    async def work(client: Client, n: int) -> None:
        for i in range(5):
            name = f"Client {n} item {i}"
            await _ok(
                client, "create_entities", {"entities": [_entity(name, "thing", f"c{n} i{i}")]}
            )
            await _ok(
                client,
                "add_observations",
                {"observations": [{"entityName": "Hub", "contents": [f"seen by {n} at {i}"]}]},
            )
            await _ok(client, "create_relations", {"relations": [_rel(name, "Hub", "links")]})

    async def main() -> None:
        async with _http(url) as first:
            await _ok(first, "create_entities", {"entities": [_entity("Hub", "place")]})
        clients = [_http(url) for _ in range(4)] + [stdio() for _ in range(4)]
        opened = [await c.__aenter__() for c in clients]
        try:
            await asyncio.gather(*(work(c, n) for n, c in enumerate(opened)))
        finally:
            for c in reversed(clients):
                await c.__aexit__(None, None, None)
        async with _http(url) as check:
            graph = await _ok(check, "read_graph", {})
        names = {e["name"] for e in graph["entities"]}
        assert names == {"Hub"} | {f"Client {n} item {i}" for n in range(8) for i in range(5)}
        hub = next(e for e in graph["entities"] if e["name"] == "Hub")
        assert sorted(hub["observations"]) == sorted(
            f"seen by {n} at {i}" for n in range(8) for i in range(5)
        )
        assert len(graph["relations"]) == 40

    try:
        asyncio.run(main())
    finally:
        proc.terminate()
        proc.wait(timeout=30)
