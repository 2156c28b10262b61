"""The graphmem MCP server: an agent's memory as tools, over stdio or streamable HTTP.

Tools: ``remember`` (save a result or a fact; returns its id), ``recall`` (search),
``context`` (the context for a task), ``entity`` (an entity and its relations), ``relations``
(find, by subject/predicate/object, as of a time), ``path`` (how A connects to B) and
``forget`` (by id or by filter); resource ``graphmem://entity/{name}``, an entity's page.

Tenants: every call reaches one user's memory. The user is the one the bearer token of an
HTTP call is bound to (:mod:`graphmem.mcp.tokens`), else the server's own user (``user=``,
``graphmem mcp --user``), else the call's ``user_id`` argument, else the default user ``""``.
When a token or the server binds the user, a ``user_id`` argument naming another user is an
error: the model's arguments cannot reach another tenant.

Errors: bad arguments and graphmem's own errors come back as tool errors (``isError``) whose
text names the problem; the server keeps serving.

Example:
    >>> import asyncio
    >>> from mcp import Client
    >>> async def main():
    ...     async with Client(build_server(None)) as client:
    ...         await client.call_tool("remember", {"content": "Maya Lindqvist joined Lumen Robotics."})
    ...         found = await client.call_tool("recall", {"query": "Lumen Robotics"})
    ...         return [hit["content"] for hit in found.structured_content["results"]]
    >>> asyncio.run(main())
    ['Maya Lindqvist joined Lumen Robotics.']
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec, TypeAlias, TypeVar, cast

from mcp.server import MCPServer
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import Tool as MCPTool
from pydantic import AnyHttpUrl, Field

from ..aio import READ_THREADS, AsyncCortexMemory, warm_up, writer_thread
from ..errors import EntityNotFound, GraphmemError, InvalidArgumentError
from .defaults import DEFAULT_PORT
from .shapes import HINTS, EntityOut, ForgetOut, PathsOut, RecallOut, RelationsOut, RememberOut
from .tokens import TokenMap

if TYPE_CHECKING:  # the engine loads with the first memory, not with the server
    from ..compat.storage import SQLiteStorage
    from ..cortex import CortexMemory
    from ..graph.knowledge_graph import Edge, Hop, KnowledgeGraph
    from ..retrieval.search import Hit

__all__ = ["TOOL_SETS", "MemoryServer", "build_server", "tool_errors"]

#: The tool sets ``build_server`` serves (``graphmem mcp --tools``).
TOOL_SETS = ("graphmem", "reference", "all")
REFERENCE_INSTRUCTIONS = (
    "A knowledge graph memory: entities with observations, and relations between them. "
    "`search_nodes` or `open_nodes` before you answer, `create_entities`, `add_observations` "
    "and `create_relations` for what you learn."
)

#: The task a fact is saved under when ``remember`` is given no task.
FACT_TASK = "Remembered fact"

P = ParamSpec("P")
T = TypeVar("T")
#: Opens the database a server serves (called once, on first need).
Opener: TypeAlias = Callable[[], "SQLiteStorage"]
#: Seconds the background load waits for the client's first ``tools/list`` or call: until
#: then the start-up exchange has the interpreter to itself (threads share one GIL).
QUIET_START = 1.0


def _in_memory() -> SQLiteStorage:
    from ..compat.storage import SQLiteStorage

    return SQLiteStorage()


class MemoryServer:
    """The memories an MCP server serves: one storage, one facade per user (built on first
    use), one writer thread for all of them.

    Args:
        storage: the database served, or what opens it: then it opens on first need (or in
            the background, :meth:`warm_up`), so the server answers before SQLAlchemy and the
            engine have loaded.
        user: the user every call is bound to when no token binds one.
    """

    def __init__(self, storage: SQLiteStorage | Opener, *, user: str | None = None) -> None:
        self._storage: SQLiteStorage | None = None if callable(storage) else storage
        self._open: Opener | None = storage if callable(storage) else None
        #: The user every call is bound to when no token binds one (None: the call chooses).
        self.user = user
        self._writer = writer_thread()
        self._readers = ThreadPoolExecutor(READ_THREADS, thread_name_prefix="graphmem-reader")
        self._memories: dict[str, AsyncCortexMemory] = {}
        self._lock = threading.Lock()
        self._opening = threading.Lock()
        #: Set once a client has listed the tools or called one (see :meth:`warm_up`).
        self.greeted = threading.Event()

    @property
    def storage(self) -> SQLiteStorage:
        """The database served, opened now if it is not yet (a failed opening is tried
        again by the next call, which gets its error)."""
        with self._opening:
            if self._storage is None:
                assert self._open is not None
                self._storage = self._open()
            return self._storage

    @property
    def opened(self) -> SQLiteStorage | None:
        """The database served if it is open (None: not yet)."""
        return self._storage

    def warm_up(self) -> None:
        """Open the database, then load the NLP models, in the writer thread, in the
        background, once the client has listed the tools or called one (at the latest
        :data:`QUIET_START` seconds from now): the client is answered at once, reads (which
        analyse no text) wait at most for the opening, and a write queues behind the load
        (:func:`graphmem.aio.warm_up`). A database that cannot be opened is reported on
        stderr (and to each call)."""
        self._writer.submit(self._open_in_background)
        self._writer.submit(warm_up)

    def _open_in_background(self) -> None:
        self.greeted.wait(QUIET_START)
        try:
            self.storage  # noqa: B018 - opens it
        except GraphmemError as exc:
            sys.stderr.write(f"graphmem: error: {exc}\n")

    def memory(self, user_id: str) -> AsyncCortexMemory:
        """The facade of ``user_id`` (shared by every call of that user)."""
        self.greeted.set()
        storage = self.storage
        with self._lock:
            found = self._memories.get(user_id)
            if found is None:
                from ..cortex import CortexMemory

                facade = CortexMemory(
                    storage=storage,
                    user_id=user_id,
                    long_term_capacity=10**9,
                    knowledge_scope="team",  # what one agent saved answers another's task
                )
                found = AsyncCortexMemory(facade, writer=self._writer, readers=self._readers)
                self._memories[user_id] = found
            return found

    def tenant(self, requested: str | None) -> str:
        """The user a call reaches: the token's, else the server's, else ``requested``, else
        ``""``. A ``requested`` user other than a bound one is refused."""
        bound = _token_user()
        if bound is None:
            bound = self.user
        if bound is None:
            return requested if requested is not None else ""
        if requested is not None and requested != bound:
            raise ToolError(f"user_id {requested!r} is not the user of this connection")
        return bound


def _token_user() -> str | None:
    """The user the bearer token of this HTTP call is bound to (None without a token)."""
    token = get_access_token()
    return token.subject if token is not None else None


def tool_errors(fn: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """graphmem's named errors become tool errors with their message (not crashes)."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await fn(*args, **kwargs)
        except GraphmemError as exc:
            raise ToolError(f"{type(exc).__name__}: {exc}") from exc

    return wrapper


# ---------------------------------------------------------------------- JSON shapes
def _hop(hop: Hop) -> dict[str, Any]:
    return {"from": hop.source, "to": hop.target, "reversed": hop.reversed, **hop.edge.to_dict()}


def _entity(kg: KnowledgeGraph, name: str, limit: int) -> dict[str, Any]:
    info = kg.get_entity(name)
    if info is None:
        raise EntityNotFound(f"no entity named {name!r} in this memory")
    edges = kg.relations(name)
    typed = [e for e in edges if e.is_typed]
    co_occurring = [e for e in edges if not e.is_typed]
    return {
        "name": info.name,
        "label": info.label,
        "mentions": info.mentions,
        "aliases": [a for a in info.aliases if a != info.name],
        "first_seen": info.first_seen,
        "last_seen": info.last_seen,
        "relations": [e.to_dict() for e in typed[:limit]],
        "co_occurs_with": [
            e.object if e.subject == info.name else e.subject for e in co_occurring[:limit]
        ],
    }


def _entity_page(entity: dict[str, Any]) -> str:
    """An entity as Markdown: what it is, then each relation with its evidence."""
    lines = [f"# {entity['name']} ({entity['label']})", ""]
    lines.append(f"{entity['mentions']} mentions, first seen {entity['first_seen'][:10]}.")
    if entity["aliases"]:
        lines.append(f"Also called: {', '.join(entity['aliases'])}.")
    if entity["relations"]:
        lines += ["", "## Relations"]
        for edge in entity["relations"]:
            when = f" ({edge['validity']})" if edge["validity"] else ""
            lines.append(f"- {edge['subject']} {edge['predicate']} {edge['object']}{when}")
            lines += [f"  - \u201c{ev['sentence']}\u201d" for ev in edge["evidence"][:2]]
    if entity["co_occurs_with"]:
        lines += ["", f"Mentioned with: {', '.join(entity['co_occurs_with'])}."]
    return "\n".join(lines) + "\n"


def _select_edges(edges: list[Edge], predicate: str | None, co_occurs: bool) -> list[Edge]:
    if predicate is not None or co_occurs:
        return edges
    return [e for e in edges if e.is_typed]


# ---------------------------------------------------------------------- the server
UserId = Annotated[
    str | None,
    Field(
        description="the user whose memory to use; fixed by the connection when it has a "
        "token or the server a --user (then only that user is accepted)"
    ),
]
Limit = Annotated[int, Field(ge=1, le=200)]


GRAPHMEM_INSTRUCTIONS = (
    "Long-term memory with a knowledge graph. `remember` what you learn or did "
    "(returns an id), `recall` or get the `context` for a task before you work, ask "
    "`entity`, `relations` and `path` about people, organisations and places, and "
    "`forget` what was wrong."
)


def build_server(
    storage: SQLiteStorage | Opener | None,
    *,
    user: str | None = None,
    tokens: TokenMap | None = None,
    url: str = f"http://127.0.0.1:{DEFAULT_PORT}",
    tools: str = "graphmem",
    warm: bool = False,
) -> MCPServer:
    """The MCP server of ``storage`` (None: an in-memory database).

    Args:
        storage: the database served, or a function that opens it (called on first need,
            or with ``warm`` at once in the background: the server answers meanwhile).
        user: the user every call is bound to when no token binds one; None lets each call
            choose (``user_id``), defaulting to the user ``""``.
        tokens: bearer tokens the HTTP transport requires, each bound to a user; None: no
            token needed.
        url: where the HTTP transport listens (named in the OAuth metadata of token errors).
        tools: ``"graphmem"`` (graphmem's tools), ``"reference"`` (exactly the MCP reference
            memory server's, :mod:`graphmem.mcp.reference_tools`) or ``"all"`` (both).
        warm: open the database and load the NLP models now, in the background
            (:meth:`MemoryServer.warm_up`), so that neither the client's first request nor its
            first write waits for all of it.
    """
    if tools not in TOOL_SETS:
        raise InvalidArgumentError(f"tools must be one of {', '.join(TOOL_SETS)}, got {tools!r}")
    memories = MemoryServer(storage if storage is not None else _in_memory, user=user)
    auth = (
        AuthSettings(
            issuer_url=AnyHttpUrl(url), resource_server_url=None, validate_token_resource=False
        )
        if tokens is not None
        else None
    )
    server: MCPServer = _Server(
        memories,
        "graphmem",
        instructions=REFERENCE_INSTRUCTIONS if tools == "reference" else GRAPHMEM_INSTRUCTIONS,
        token_verifier=tokens,
        auth=auth,
        log_level="WARNING",
    )
    for add in _GRAPHMEM_TOOLS:
        add(server, memories)
    if tools != "graphmem":
        from .reference_tools import add_reference_tools

        add_reference_tools(server, memories)
    if tools == "reference":
        for name in HINTS:
            server.remove_tool(name)
    if warm:
        memories.warm_up()
    return server


class _Server(MCPServer):
    """The SDK's server, telling its memories when a client has listed the tools."""

    def __init__(self, memories: MemoryServer, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._memories = memories

    async def list_tools(self) -> list[MCPTool]:
        tools = await super().list_tools()
        self._memories.greeted.set()
        return tools


def _add_remember(server: MCPServer, memories: MemoryServer) -> None:
    """``remember``: save a task result or a fact."""

    @server.tool(annotations=HINTS["remember"])
    @tool_errors
    async def remember(
        content: Annotated[str, Field(description="what to remember: a result or a fact")],
        task: Annotated[
            str | None, Field(description="the task it is the result of (default: a fact)")
        ] = None,
        agent_role: Annotated[str, Field(description="who saved it")] = "agent",
        importance: Annotated[
            float, Field(ge=0, le=1, description=">= 0.7: also long-term knowledge")
        ] = 0.7,
        conversation_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        timestamp: Annotated[
            str | None, Field(description="when it happened, ISO 8601 (default: now)")
        ] = None,
        dedupe_key: Annotated[
            str | None,
            Field(description="your key for it: remembering again with it changes nothing"),
        ] = None,
        user_id: UserId = None,
    ) -> RememberOut:
        """Save a task result or a fact; its people, organisations and places join the graph.
        Returns its id, which `forget` takes."""
        memory = memories.memory(memories.tenant(user_id))
        task_metadata = dict(metadata or {})
        if conversation_id is not None:
            task_metadata["conversation_id"] = conversation_id
        saved = await memory.save_task_result(
            task or FACT_TASK,
            content,
            agent_role,
            importance,
            task_metadata or None,
            timestamp=timestamp,
            dedupe_key=dedupe_key,
        )
        return {"id": saved}


def _add_recall(server: MCPServer, memories: MemoryServer) -> None:
    """``recall``: search memory, each hit with why it matched."""

    @server.tool(annotations=HINTS["recall"])
    @tool_errors
    async def recall(
        query: Annotated[str, Field(description="what to look for, in plain words")],
        limit: Limit = 10,
        agent_role: Annotated[str | None, Field(description="only this agent's memories")] = None,
        user_id: UserId = None,
    ) -> RecallOut:
        """Search memory: the best matching memories first, each with its score and why it
        matched (words, and the entities that led to it)."""
        memory = memories.memory(memories.tenant(user_id))
        hits = await memory.search_hits(query, limit, agent_role)
        return {
            "results": [
                {
                    "id": hit.result_id,
                    "content": hit.item.content,
                    "score": round(hit.score, 4),
                    "agent_role": hit.item.agent_id,
                    "timestamp": hit.item.timestamp.isoformat(),
                    "matched_terms": hit.explanation.matched_terms if hit.explanation else [],
                    "via_entities": hit.explanation.entity_path if hit.explanation else [],
                    "similar_to": _similar_to(hit),
                }
                for hit in hits
            ]
        }


def _similar_to(hit: Hit) -> list[str]:
    """Why meaning found ``hit`` (empty: it did not)."""
    why = hit.explanation
    if why is None or "semantic" not in why.sources:
        return []
    return why.similar_to or ["the question"]


def _add_context(server: MCPServer, memories: MemoryServer) -> None:
    """``context``: the context for a task, as text."""

    @server.tool(annotations=HINTS["context"])
    @tool_errors
    async def context(
        task: Annotated[str, Field(description="the task about to be done")],
        agent_role: Annotated[
            str | None,
            Field(
                description="who asks: their own recent memories; knowledge comes from every "
                "agent's memories"
            ),
        ] = None,
        additional_context: str | None = None,
        max_items: Limit = 10,
        user_id: UserId = None,
    ) -> str:
        """The context for a task: recent context, relevant knowledge, known entities (with
        their relations) and related memories, as text ("" when memory holds nothing)."""
        memory = memories.memory(memories.tenant(user_id))
        return await memory.build_context_for_task(task, agent_role, additional_context, max_items)


def _add_entity(server: MCPServer, memories: MemoryServer) -> None:
    """``entity``: an entity, its relations and the entities mentioned with it."""

    @server.tool(annotations=HINTS["entity"])
    @tool_errors
    async def entity(
        name: Annotated[str, Field(description="a name, alias or short name")],
        limit: Limit = 20,
        user_id: UserId = None,
    ) -> EntityOut:
        """An entity: its label, mentions, aliases, typed relations with evidence, and the
        entities it is mentioned with."""
        memory = memories.memory(memories.tenant(user_id))
        return cast(EntityOut, await memory.read(_graph_query(lambda kg: _entity(kg, name, limit))))


def _add_relations(server: MCPServer, memories: MemoryServer) -> None:
    """``relations``: the relations matching a pattern, as of a time."""

    @server.tool(annotations=HINTS["relations"])
    @tool_errors
    async def relations(
        subject: str | None = None,
        predicate: Annotated[
            str | None, Field(description="works_at, lives_in, founded, met, cto_of ...")
        ] = None,
        object: str | None = None,  # noqa: A002 - subject, predicate, object
        as_of: Annotated[
            str | None, Field(description="only relations valid at this ISO 8601 time")
        ] = None,
        current_only: Annotated[bool, Field(description="only relations not ended")] = False,
        include_co_occurs: Annotated[
            bool, Field(description="also plain co-occurrence links")
        ] = False,
        limit: Limit = 50,
        user_id: UserId = None,
    ) -> RelationsOut:
        """Relations matching a pattern ("who works_at Acme": predicate=works_at,
        object=Acme), strongest first, each with when it held and its evidence."""
        memory = memories.memory(memories.tenant(user_id))

        def find(kg: KnowledgeGraph) -> list[Edge]:
            if as_of is not None:
                kg = kg.as_of(as_of)
            edges = kg.find(
                subject=subject,
                predicate=predicate,
                object=object,
                current_only=current_only,
                evidence=True,
            )
            return _select_edges(edges, predicate, include_co_occurs)[:limit]

        found = await memory.read(_graph_query(find))
        return cast(RelationsOut, {"relations": [e.to_dict() for e in found]})


def _add_path(server: MCPServer, memories: MemoryServer) -> None:
    """``path``: how one entity connects to another."""

    @server.tool(annotations=HINTS["path"])
    @tool_errors
    async def path(
        a: Annotated[str, Field(description="one entity")],
        b: Annotated[str, Field(description="the other entity")],
        max_hops: Annotated[int, Field(ge=1, le=6)] = 3,
        limit: Limit = 5,
        user_id: UserId = None,
    ) -> PathsOut:
        """How entity a connects to entity b: the shortest paths, each hop a relation with
        its evidence (no paths: not connected within max_hops)."""
        memory = memories.memory(memories.tenant(user_id))

        def paths(kg: KnowledgeGraph) -> list[list[Hop]]:
            return kg.paths(a, b, max_hops=max_hops)[:limit]

        found = await memory.read(_graph_query(paths))
        return cast(PathsOut, {"paths": [[_hop(h) for h in hops] for hops in found]})


def _add_forget(server: MCPServer, memories: MemoryServer) -> None:
    """``forget``: one memory by id, or every memory matching filters."""

    @server.tool(annotations=HINTS["forget"])
    @tool_errors
    async def forget(
        id: Annotated[  # noqa: A002 - the id remember and recall give
            str | None, Field(description="the id remember or recall gave")
        ] = None,
        agent_role: Annotated[str | None, Field(description="all this agent saved")] = None,
        conversation_id: str | None = None,
        task_id: str | None = None,
        before: Annotated[
            str | None, Field(description="all saved before this ISO 8601 time")
        ] = None,
        user_id: UserId = None,
    ) -> ForgetOut:
        """Forget one memory by id, or every memory matching all the filters given (at least
        one); the graph drops what only they said. Returns how many were removed."""
        memory = memories.memory(memories.tenant(user_id))
        filters = {
            "agent_role": agent_role,
            "conversation_id": conversation_id,
            "task_id": task_id,
            "before": before,
        }
        given = {name: value for name, value in filters.items() if value is not None}
        if id is not None and given:
            raise ToolError("give an id or filters, not both")
        if id is not None:
            removed = int(await memory.delete(id))
        elif given:
            removed = await memory.forget(**given)
        else:
            raise ToolError("forget needs an id or a filter (agent_role, conversation_id, "
                            "task_id, before)")  # fmt: skip
        return {"removed": removed}


def _add_entity_page(server: MCPServer, memories: MemoryServer) -> None:
    """Resource ``graphmem://entity/{name}``: an entity's page, as Markdown."""

    @server.resource(
        "graphmem://entity/{name}",
        name="entity",
        description="An entity's page: what it is, its relations and their evidence",
        mime_type="text/markdown",
    )
    async def entity_page(name: str) -> str:
        try:
            memory = memories.memory(memories.tenant(None))
            found = await memory.read(_graph_query(lambda kg: _entity(kg, name, 50)))
        except (GraphmemError, ToolError) as exc:
            raise ResourceError(str(exc)) from exc
        return _entity_page(found)


#: graphmem's own tools and its entity resource, in the order they are added.
_GRAPHMEM_TOOLS: tuple[Callable[[MCPServer, MemoryServer], None], ...] = (
    _add_remember,
    _add_recall,
    _add_context,
    _add_entity,
    _add_relations,
    _add_path,
    _add_forget,
    _add_entity_page,
)


def _graph_query(query: Callable[[KnowledgeGraph], T]) -> Callable[[CortexMemory], T]:
    """``query`` of a facade's graph, run inside a read of the database (writers of this
    process update the graph view under the same lock, so it never changes under a query)."""

    def run(memory: CortexMemory) -> T:
        entities = memory.entity_memory
        assert entities is not None  # the server's facades keep the entity tier
        with entities.space.reading():
            return query(entities.graph)

    return run
