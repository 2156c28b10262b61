"""The output schemas and hints of graphmem's own MCP tools.

Each tool's answer is one of these typed dicts: the SDK publishes it as the tool's
``outputSchema`` and checks every answer against it. The hints tell a client which tools only
read (``recall``, ``context``, ``entity``, ``relations``, ``path``), which one deletes
(``forget``) and which calls can be repeated without effect.

Example:
    >>> HINTS["forget"].destructive_hint, HINTS["recall"].read_only_hint
    (True, True)
"""

from __future__ import annotations

from mcp.types import ToolAnnotations
from typing_extensions import TypedDict

__all__ = [
    "HINTS",
    "EdgeOut",
    "EntityOut",
    "EvidenceOut",
    "ForgetOut",
    "HopOut",
    "PathsOut",
    "RecallHit",
    "RecallOut",
    "RelationsOut",
    "RememberOut",
    "tool_hints",
]


class RememberOut(TypedDict):
    id: str


class RecallHit(TypedDict):
    id: str
    content: str
    score: float
    agent_role: str | None
    timestamp: str
    matched_terms: list[str]
    via_entities: list[str]
    #: Found by meaning: the memory's words nearest the query (["the question"] when the
    #: model cannot name words).
    similar_to: list[str]


class RecallOut(TypedDict):
    results: list[RecallHit]


class EvidenceOut(TypedDict):
    sentence: str
    date: str
    memory_id: str | None
    rule: str


class EdgeOut(TypedDict):
    """A relation (:meth:`graphmem.graph.knowledge_graph.Edge.to_dict`)."""

    subject: str
    predicate: str
    object: str
    support: int
    confidence: float
    first_seen: str
    last_seen: str
    valid_from: str | None
    valid_to: str | None
    validity: str
    evidence: list[EvidenceOut]


class EntityOut(TypedDict):
    name: str
    label: str
    mentions: int
    aliases: list[str]
    first_seen: str
    last_seen: str
    relations: list[EdgeOut]
    co_occurs_with: list[str]


class RelationsOut(TypedDict):
    relations: list[EdgeOut]


HopOut = TypedDict(
    "HopOut",
    {
        "from": str,
        "to": str,
        "reversed": bool,
        "subject": str,
        "predicate": str,
        "object": str,
        "support": int,
        "confidence": float,
        "first_seen": str,
        "last_seen": str,
        "valid_from": str | None,
        "valid_to": str | None,
        "validity": str,
        "evidence": list[EvidenceOut],
    },
)


class PathsOut(TypedDict):
    paths: list[list[HopOut]]


class ForgetOut(TypedDict):
    removed: int


def tool_hints(
    title: str,
    *,
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool | None = None,
) -> ToolAnnotations:
    """A tool's hints; idempotent by default when it only reads or only deletes, and never
    reaching an open world (graphmem's tools touch only its database)."""
    if idempotent is None:
        idempotent = read_only or destructive
    return ToolAnnotations(
        title=title,
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


#: Hints of graphmem's tools: ``remember`` adds (idempotent only with a dedupe_key, so not
#: declared so), ``forget`` deletes (again: nothing more to remove), the others only read.
HINTS = {
    "remember": tool_hints("Remember"),
    "recall": tool_hints("Recall", read_only=True),
    "context": tool_hints("Context for a task", read_only=True),
    "entity": tool_hints("Entity", read_only=True),
    "relations": tool_hints("Relations", read_only=True),
    "path": tool_hints("Path between entities", read_only=True),
    "forget": tool_hints("Forget", destructive=True),
}
