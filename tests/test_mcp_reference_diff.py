"""The reference memory server itself (npm ``@modelcontextprotocol/server-memory``) and
``graphmem mcp --tools reference`` get the same call sequences from the MCP SDK's client: the
answers and the graphs agree after every call, and the reference's ``memory.jsonl`` is
byte-for-byte what ``graphmem export --format mcp-memory`` writes.

Needs Node and the package: ``$GRAPHMEM_REFERENCE_MEMORY_SERVER`` (its ``dist/index.js``;
``.ci/run`` installs it), else ``node_modules/`` of the repository; skipped, with the reason,
where either is missing. Then a 1,000-entity / 3,000-relation / 5,000-observation file in the
reference's format imports, exports back equal, and search finds every observation.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from graphmem.compat.storage import SQLiteStorage
from graphmem.reference import ReferenceGraph

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from mcp_memory_file import big_file  # noqa: E402  (the file bench/mcp_memory_file.py times)

pytestmark = pytest.mark.timeout(3600)

GRAPHMEM = [sys.executable, "-c", "from graphmem.cli import main; raise SystemExit(main())"]
ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "node_modules/@modelcontextprotocol/server-memory/dist/index.js"


def _reference_server() -> Path | None:
    given = os.environ.get("GRAPHMEM_REFERENCE_MEMORY_SERVER")
    for candidate in ([Path(given)] if given else []) + [ROOT / PACKAGE]:
        if candidate.is_file():
            return candidate
    return None


NODE = shutil.which("node")
SERVER = _reference_server()
needs_reference = pytest.mark.skipif(
    NODE is None or SERVER is None,
    reason="no node on PATH"
    if NODE is None
    else "@modelcontextprotocol/server-memory is not "
    "installed (npm install it, or set GRAPHMEM_REFERENCE_MEMORY_SERVER to its dist/index.js)",
)


def _entity(name: str, kind: str, *observations: str) -> dict[str, Any]:
    return {"name": name, "entityType": kind, "observations": list(observations)}


def _rel(a: str, b: str, kind: str) -> dict[str, str]:
    return {"from": a, "to": b, "relationType": kind}


#: Call sequences: each call's answer is compared, then both graphs.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read_graph", {}),
    (
        "create_entities",
        {
            "entities": [
                _entity("Ada Okafor", "person", "Leads the Atlas project", "Speaks Yoruba"),
                _entity("Lumen Labs", "organization", "Based in Lagos"),
                _entity("Atlas", "project"),
            ]
        },
    ),
    ("create_entities", {"entities": [_entity("Ada Okafor", "robot", "ignored")]}),
    (
        "create_relations",
        {
            "relations": [
                _rel("Ada Okafor", "Lumen Labs", "works_at"),
                _rel("Ada Okafor", "Atlas", "leads"),
                _rel("Ghost", "Atlas", "haunts"),  # endpoints need not exist
            ]
        },
    ),
    ("create_relations", {"relations": [_rel("Ada Okafor", "Lumen Labs", "works_at")]}),
    (
        "add_observations",
        {
            "observations": [
                {"entityName": "Atlas", "contents": ["Ships in March", "Uses Rust"]},
                {"entityName": "Ada Okafor", "contents": ["Speaks Yoruba", "Joined in 2020"]},
            ]
        },
    ),
    ("add_observations", {"observations": [{"entityName": "Nobody", "contents": ["x"]}]}),
    ("search_nodes", {"query": "RUST"}),
    ("search_nodes", {"query": "person"}),
    ("search_nodes", {"query": "lumen"}),
    ("open_nodes", {"names": ["Atlas", "Ghost", "Nobody"]}),
    (
        "delete_observations",
        {
            "deletions": [
                {"entityName": "Ada Okafor", "observations": ["Speaks Yoruba", "not there"]},
                {"entityName": "Nobody", "observations": ["x"]},
            ]
        },
    ),
    (
        "delete_relations",
        {"relations": [_rel("Ada Okafor", "Atlas", "leads"), _rel("a", "b", "c")]},
    ),
    ("delete_entities", {"entityNames": ["Lumen Labs", "Nobody"]}),
    ("read_graph", {}),
    ("create_entities", {"entities": [_entity("Lumen Labs", "company", "Back again")]}),
    ("search_nodes", {"query": "again"}),
]


async def _call(client: Client, tool: str, args: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(tool, args)
    return bool(result.is_error), result.structured_content


def _same_answer(tool: str, theirs: tuple[bool, Any], ours: tuple[bool, Any]) -> None:
    assert theirs[0] == ours[0], (tool, theirs, ours)
    if theirs[0]:
        return
    if tool == "search_nodes":  # ours ranks, and may find more: all theirs, in any order
        names = [e["name"] for e in ours[1]["entities"]]
        assert all(e in ours[1]["entities"] for e in theirs[1]["entities"]), (theirs, ours)
        assert len(names) == len(set(names))
        assert all(r in ours[1]["relations"] for r in theirs[1]["relations"])
        return
    assert theirs[1] == ours[1], (tool, theirs, ours)


@needs_reference
def test_the_reference_and_graphmem_agree_call_by_call(tmp_path: Path) -> None:
    memory_file = tmp_path / "memory.jsonl"
    reference = StdioServerParameters(
        command=str(NODE), args=[str(SERVER)], env={"MEMORY_FILE_PATH": str(memory_file)}
    )
    db = tmp_path / "g.db"
    ours = StdioServerParameters(
        command=GRAPHMEM[0], args=[*GRAPHMEM[1:], "--db", str(db), "mcp", "--tools", "reference"]
    )

    async def main() -> None:
        async with Client(reference) as theirs, Client(ours) as graphmem:
            their_tools = {t.name: t for t in (await theirs.list_tools()).tools}
            our_tools = {t.name: t for t in (await graphmem.list_tools()).tools}
            assert set(their_tools) == set(our_tools)
            for name, tool in their_tools.items():
                mine = our_tools[name]
                assert (
                    mine.description
                    and tool.description
                    and mine.description.startswith(tool.description)
                )
                for hint in ("read_only_hint", "destructive_hint", "idempotent_hint"):
                    assert getattr(mine.annotations, hint) == getattr(tool.annotations, hint)
                assert set(tool.input_schema["properties"]) <= set(mine.input_schema["properties"])
                assert set(tool.output_schema["properties"]) <= set(
                    mine.output_schema["properties"]
                )
            for tool, args in CALLS:
                _same_answer(
                    tool, await _call(theirs, tool, args), await _call(graphmem, tool, args)
                )
                assert await _call(theirs, "read_graph", {}) == await _call(
                    graphmem, "read_graph", {}
                )
            their_resource = await theirs.read_resource("memory://knowledge-graph")
            our_resource = await graphmem.read_resource("memory://knowledge-graph")
            assert json.loads(their_resource.contents[0].text) == json.loads(  # type: ignore[union-attr]
                our_resource.contents[0].text  # type: ignore[union-attr]
            )

    asyncio.run(main())
    exported = tmp_path / "export.jsonl"
    subprocess.run(
        [*GRAPHMEM, "--db", str(db), "export", str(exported), "--format", "mcp-memory"],
        check=True,
        capture_output=True,
    )
    assert exported.read_bytes() == memory_file.read_bytes()


@pytest.mark.slow
def test_a_large_file_imports_exports_back_equal_and_every_observation_is_found(
    tmp_path: Path,
) -> None:
    # A fifth of the 1,000 / 3,000 / 5,000 file, to keep CI short: the full size is
    # bench/mcp_memory_file.py's run (same checks; figures in docs/benchmarks.md).
    source = tmp_path / "memory.jsonl"
    records = big_file(source, entities=200, observations_each=5, relations=600)
    storage = SQLiteStorage(str(tmp_path / "big.db"))
    try:
        graph = ReferenceGraph(storage)
        counts = graph.import_jsonl(str(source))
        assert counts == {"entities": 200, "relations": 600, "observations": 1000}
        out = tmp_path / "out.jsonl"
        graph.export_jsonl(str(out))
        assert out.read_bytes() == source.read_bytes()
        assert graph.import_jsonl(str(source)) == {"entities": 0, "relations": 0, "observations": 0}
        for record in records[:200]:
            for observation in record["observations"]:
                found = graph.search_nodes(observation, limit=5)
                assert record["name"] in [e["name"] for e in found["entities"]], observation
    finally:
        storage.close()
