"""The nine tools of the MCP reference memory server, served over graphmem's store.

``graphmem mcp --tools reference`` serves exactly the tools of
``@modelcontextprotocol/server-memory`` (``create_entities``, ``create_relations``,
``add_observations``, ``delete_entities``, ``delete_observations``, ``delete_relations``,
``read_graph``, ``search_nodes``, ``open_nodes``) with its arguments, result shapes (structured
content and the same JSON text), output schemas and hints, and its resource
``memory://knowledge-graph``; ``--tools all`` serves them beside graphmem's own. The graph is a
:class:`~graphmem.reference.ReferenceGraph` of the connection's user. Beyond the
reference, ``read_graph`` and ``search_nodes`` take ``limit`` and ``cursor``.

Example:
    >>> import asyncio
    >>> from mcp import Client
    >>> from graphmem.mcp.server import build_server
    >>> async def main():
    ...     async with Client(build_server(None, tools="reference")) as client:
    ...         await client.call_tool("create_entities", {"entities": [
    ...             {"name": "Ada", "entityType": "person", "observations": ["Writes Rust"]}]})
    ...         found = await client.call_tool("search_nodes", {"query": "rust"})
    ...         return found.structured_content["entities"]
    >>> asyncio.run(main())
    [{'name': 'Ada', 'entityType': 'person', 'observations': ['Writes Rust']}]
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, NotRequired

from mcp.server import MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import Field
from typing_extensions import TypedDict

from .server import MemoryServer, tool_errors
from .shapes import tool_hints

if TYPE_CHECKING:  # the engine loads with the first call, not with the server
    from ..cortex import CortexMemory
    from ..reference import ReferenceGraph

__all__ = ["REFERENCE_TOOLS", "RESOURCE_URI", "add_reference_tools"]

#: The resource that mirrors the whole graph (as the reference server names it).
RESOURCE_URI = "memory://knowledge-graph"

#: The reference server's tool names, in its order.
REFERENCE_TOOLS = (
    "create_entities",
    "create_relations",
    "add_observations",
    "delete_entities",
    "delete_observations",
    "delete_relations",
    "read_graph",
    "search_nodes",
    "open_nodes",
)


class Entity(TypedDict):
    name: Annotated[str, Field(description="The name of the entity")]
    entityType: Annotated[str, Field(description="The type of the entity")]
    observations: Annotated[
        list[str],
        Field(description="An array of observation contents associated with the entity"),
    ]


Relation = TypedDict(
    "Relation",
    {
        "from": Annotated[
            str, Field(description="The name of the entity where the relation starts")
        ],
        "to": Annotated[str, Field(description="The name of the entity where the relation ends")],
        "relationType": Annotated[str, Field(description="The type of the relation")],
    },
)


class ObservationAddition(TypedDict):
    entityName: Annotated[
        str, Field(description="The name of the entity to add the observations to")
    ]
    contents: Annotated[list[str], Field(description="An array of observation contents to add")]


class ObservationDeletion(TypedDict):
    entityName: Annotated[
        str, Field(description="The name of the entity containing the observations")
    ]
    observations: Annotated[list[str], Field(description="An array of observations to delete")]


class EntitiesOut(TypedDict):
    entities: list[Entity]


class RelationsOut(TypedDict):
    relations: list[Relation]


class AddedObservations(TypedDict):
    entityName: str
    addedObservations: list[str]


class ObservationsOut(TypedDict):
    results: list[AddedObservations]


class DeletedOut(TypedDict):
    success: bool
    message: str


class GraphOut(TypedDict):
    entities: list[Entity]
    relations: list[Relation]
    nextCursor: NotRequired[
        Annotated[str, Field(description="pass as cursor for the next page (absent: the end)")]
    ]


def _answer(structured: dict[str, Any], text: str | None = None) -> CallToolResult:
    """A result as the reference gives it: structured content, and a text (its JSON, indented
    by 2, unless given)."""
    shown = text if text is not None else json.dumps(structured, indent=2, ensure_ascii=False)
    return CallToolResult(
        content=[TextContent(type="text", text=shown)], structured_content=structured
    )


def _deleted(what: str) -> CallToolResult:
    message = f"{what} deleted successfully"
    return _answer({"success": True, "message": message}, message)


Limit = Annotated[
    int | None,
    Field(ge=1, le=100_000, description="at most this many items (default: all)"),
]
Cursor = Annotated[str | None, Field(description="the nextCursor of the previous page")]


class _Graphs:
    """The reference graph of each user (built on first use), read and written through the
    facade of the connection's user (see :meth:`MemoryServer.tenant`)."""

    def __init__(self, memories: MemoryServer) -> None:
        self.memories = memories
        self._graphs: dict[str, ReferenceGraph] = {}
        self._lock = threading.Lock()

    def of(self, facade: CortexMemory) -> ReferenceGraph:
        user = facade.user_id or ""
        with self._lock:
            if user not in self._graphs:
                from ..reference import ReferenceGraph

                self._graphs[user] = ReferenceGraph(facade.storage, facade.user_id)
            return self._graphs[user]

    async def write(self, call: Any) -> Any:
        memory = self.memories.memory(self.memories.tenant(None))
        return await memory.write(lambda facade: call(self.of(facade)))

    async def read(self, call: Any) -> Any:
        memory = self.memories.memory(self.memories.tenant(None))
        return await memory.read(lambda facade: call(self.of(facade)))


def add_reference_tools(server: MCPServer, memories: MemoryServer) -> None:
    """Register the reference memory server's tools and resource on ``server``, each call
    reaching the graph of the connection's user (see :meth:`MemoryServer.tenant`)."""
    graphs = _Graphs(memories)
    for add in _REFERENCE_TOOLS:
        add(server, graphs)


def _add_create_entities(server: MCPServer, graphs: _Graphs) -> None:
    """``create_entities``, as the reference server has it."""

    @server.tool(
        description="Create multiple new entities in the knowledge graph",
        annotations=tool_hints("Create Entities"),
    )
    @tool_errors
    async def create_entities(entities: list[Entity]) -> Annotated[CallToolResult, EntitiesOut]:
        created = await graphs.write(lambda g: g.create_entities(entities))
        return _answer({"entities": created}, json.dumps(created, indent=2, ensure_ascii=False))


def _add_create_relations(server: MCPServer, graphs: _Graphs) -> None:
    """``create_relations``, as the reference server has it."""

    @server.tool(
        description="Create multiple new relations between entities in the knowledge graph. "
        "Relations should be in active voice",
        annotations=tool_hints("Create Relations"),
    )
    @tool_errors
    async def create_relations(
        relations: list[Relation],
    ) -> Annotated[CallToolResult, RelationsOut]:
        created = await graphs.write(lambda g: g.create_relations(relations))
        return _answer({"relations": created}, json.dumps(created, indent=2, ensure_ascii=False))


def _add_add_observations(server: MCPServer, graphs: _Graphs) -> None:
    """``add_observations``, as the reference server has it."""

    @server.tool(
        description="Add new observations to existing entities in the knowledge graph",
        annotations=tool_hints("Add Observations"),
    )
    @tool_errors
    async def add_observations(
        observations: list[ObservationAddition],
    ) -> Annotated[CallToolResult, ObservationsOut]:
        results = await graphs.write(lambda g: g.add_observations(observations))
        return _answer({"results": results}, json.dumps(results, indent=2, ensure_ascii=False))


def _add_delete_entities(server: MCPServer, graphs: _Graphs) -> None:
    """``delete_entities``, as the reference server has it."""

    @server.tool(
        description="Delete multiple entities and their associated relations from the "
        "knowledge graph",
        annotations=tool_hints("Delete Entities", destructive=True),
    )
    @tool_errors
    async def delete_entities(
        entityNames: Annotated[  # noqa: N803 - the reference's argument name
            list[str], Field(description="An array of entity names to delete")
        ],
    ) -> Annotated[CallToolResult, DeletedOut]:
        await graphs.write(lambda g: g.delete_entities(entityNames))
        return _deleted("Entities")


def _add_delete_observations(server: MCPServer, graphs: _Graphs) -> None:
    """``delete_observations``, as the reference server has it."""

    @server.tool(
        description="Delete specific observations from entities in the knowledge graph",
        annotations=tool_hints("Delete Observations", destructive=True),
    )
    @tool_errors
    async def delete_observations(
        deletions: list[ObservationDeletion],
    ) -> Annotated[CallToolResult, DeletedOut]:
        await graphs.write(lambda g: g.delete_observations(deletions))
        return _deleted("Observations")


def _add_delete_relations(server: MCPServer, graphs: _Graphs) -> None:
    """``delete_relations``, as the reference server has it."""

    @server.tool(
        description="Delete multiple relations from the knowledge graph",
        annotations=tool_hints("Delete Relations", destructive=True),
    )
    @tool_errors
    async def delete_relations(
        relations: Annotated[list[Relation], Field(description="An array of relations to delete")],
    ) -> Annotated[CallToolResult, DeletedOut]:
        await graphs.write(lambda g: g.delete_relations(relations))
        return _deleted("Relations")


def _add_read_graph(server: MCPServer, graphs: _Graphs) -> None:
    """``read_graph``, as the reference server has it."""

    @server.tool(
        description="Read the entire knowledge graph (or a page of it: limit, then the "
        "answer's nextCursor as cursor)",
        annotations=tool_hints("Read Graph", read_only=True),
    )
    @tool_errors
    async def read_graph(
        limit: Limit = None, cursor: Cursor = None
    ) -> Annotated[CallToolResult, GraphOut]:
        return _answer(await graphs.read(lambda g: g.read_graph(limit, cursor)))


def _add_search_nodes(server: MCPServer, graphs: _Graphs) -> None:
    """``search_nodes``, as the reference server has it."""

    @server.tool(
        description="Search for nodes in the knowledge graph based on a query (best matches first)",
        annotations=tool_hints("Search Nodes", read_only=True),
    )
    @tool_errors
    async def search_nodes(
        query: Annotated[
            str,
            Field(
                description="The search query to match against entity names, types, and "
                "observation content"
            ),
        ],
        limit: Limit = None,
        cursor: Cursor = None,
    ) -> Annotated[CallToolResult, GraphOut]:
        return _answer(await graphs.read(lambda g: g.search_nodes(query, limit, cursor)))


def _add_open_nodes(server: MCPServer, graphs: _Graphs) -> None:
    """``open_nodes``, as the reference server has it."""

    @server.tool(
        description="Open specific nodes in the knowledge graph by their names",
        annotations=tool_hints("Open Nodes", read_only=True),
    )
    @tool_errors
    async def open_nodes(
        names: Annotated[list[str], Field(description="An array of entity names to retrieve")],
    ) -> Annotated[CallToolResult, GraphOut]:
        return _answer(await graphs.read(lambda g: g.open_nodes(names)))


def _add_knowledge_graph(server: MCPServer, graphs: _Graphs) -> None:
    """Resource ``memory://knowledge-graph``: the whole graph, as JSON."""

    @server.resource(
        RESOURCE_URI,
        name="knowledge-graph",
        title="Knowledge Graph",
        description="The full knowledge graph with all entities and relations",
        mime_type="application/json",
    )
    async def knowledge_graph() -> str:
        graph = await graphs.read(lambda g: g.read_graph())
        return json.dumps(graph, indent=2, ensure_ascii=False)


#: The reference server's tools (in its order) and its resource, as they are added.
_REFERENCE_TOOLS: tuple[Callable[[MCPServer, _Graphs], None], ...] = (
    _add_create_entities,
    _add_create_relations,
    _add_add_observations,
    _add_delete_entities,
    _add_delete_observations,
    _add_delete_relations,
    _add_read_graph,
    _add_search_nodes,
    _add_open_nodes,
    _add_knowledge_graph,
)
