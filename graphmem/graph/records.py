"""The records relationship queries answer with, and the data the graph view holds.

:class:`Edge` (a relation, with its evidence when asked for), :class:`Hop` (one step of a
path), :class:`EntityInfo`; the view's node and edge data (:class:`EntityData`,
:class:`RelationData`); the one rule that picks a path's hops (:func:`hop_rank`), and what both
graph back ends answer (:class:`RelationshipQueries`).

Example:
    >>> edge = Edge("Ann", "works_at", "Acme", 1, 1.0, "2025-03-03", "2025-03-03", None, None, 7)
    >>> edge.is_typed, edge.current, edge.validity
    (True, True, 'since 2025-03-03')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict

from ..extract.predicates import event_predicates
from ..items import CO_OCCURS

__all__ = [
    "Edge",
    "EntityData",
    "EntityInfo",
    "Hop",
    "RelationData",
    "RelationshipQueries",
    "hop_rank",
    "validity_text",
]


class EntityData(TypedDict):
    """A node's data in the view (``kg.graph.nodes[key]``): an entity row's current values."""

    name: str
    label: str
    mentions: int
    aliases: list[str]
    first_seen: str
    last_seen: str
    entity_id: int | None


class RelationData(TypedDict):
    """An edge's data in the view (``kg.graph.edges[u, v, predicate]``): a relation row's
    current values (``relation_id`` None for an edge no row holds)."""

    predicate: str
    support: int
    confidence: float
    first_seen: str
    last_seen: str
    valid_from: str | None
    valid_to: str | None
    relation_id: int | None


def validity_text(
    valid_from: str | None, valid_to: str | None, first_seen: str = "", *, event: bool = False
) -> str:
    """When a relation held, by day: ``"since 2025-03-03"`` while it holds, ``"2025-03-03 to
    2025-04-21"`` once it ended (``"until 2025-04-21"`` when it was over when first stated:
    its start is unknown), ``"on 2025-04-21"`` for an ``event`` (a predicate that
    happens once, such as ``left``); from ``first_seen`` when it has no ``valid_from``, and
    ``""`` when neither is known.

    Example:
        >>> validity_text("2025-03-03T09:12:00", None), validity_text(None, "2025-04-21", "2025-03-03")
        ('since 2025-03-03', '2025-03-03 to 2025-04-21')
        >>> validity_text("2025-04-21T10:00:00", None, event=True)
        'on 2025-04-21'
        >>> validity_text("2025-05-05T09:00:00", "2025-05-05T09:00:00")  # over when stated
        'until 2025-05-05'
    """
    start = (valid_from or first_seen or "")[:10]
    if valid_to and start == valid_to[:10]:
        return f"until {start}"  # over when first stated ("previously worked at", "moved from")
    if valid_to:
        return f"{start or '?'} to {valid_to[:10]}"
    if not start:
        return ""
    return f"on {start}" if event else f"since {start}"


@dataclass(frozen=True)
class EntityInfo:
    """What the graph knows about one entity."""

    key: str
    name: str
    label: str
    mentions: int
    aliases: tuple[str, ...]
    first_seen: str
    last_seen: str


@dataclass
class Edge:
    """A relation between two entities, with its evidence when it was asked for."""

    subject: str
    predicate: str
    object: str
    support: int
    confidence: float
    first_seen: str
    last_seen: str
    valid_from: str | None
    valid_to: str | None
    relation_id: int | None
    evidence: list[Any] = field(default_factory=list)

    @property
    def is_typed(self) -> bool:
        """Whether it is a typed relation, not a ``co_occurs`` link."""
        return self.predicate != CO_OCCURS

    @property
    def current(self) -> bool:
        """False once a newer value of a one-valued predicate closed this relation."""
        return self.valid_to is None

    @property
    def validity(self) -> str:
        """When it held, as every answer shows it: see :func:`validity_text`."""
        return validity_text(
            self.valid_from,
            self.valid_to,
            self.first_seen,
            event=self.predicate in event_predicates(),
        )

    def to_dict(self) -> dict[str, Any]:
        """The relation as JSON data (``graphmem relations --json``, the MCP tools), its
        evidence as sentences with their date, memory id and rule."""
        return {
            "subject": self.subject,
            "predicate": self.predicate,
            "object": self.object,
            "support": self.support,
            "confidence": self.confidence,
            "first_seen": self.first_seen,
            "last_seen": self.last_seen,
            "valid_from": self.valid_from,
            "valid_to": self.valid_to,
            "validity": self.validity,
            "evidence": [
                {"sentence": s, "date": d, "memory_id": ev.memory_id, "rule": ev.rule}
                for s, d, ev in self._distinct_evidence()
            ],
        }

    def _distinct_evidence(self) -> list[tuple[str, str, Any]]:
        """(sentence, time, evidence row) of each distinct sentence, as loaded."""
        seen: set[str] = set()
        out: list[tuple[str, str, Any]] = []
        for ev in self.evidence:
            sentence = " ".join(str(ev.sentence).split())
            if sentence and sentence not in seen:
                seen.add(sentence)
                out.append((sentence, str(ev.created_at or ""), ev))
        return out

    def sentences(self) -> list[tuple[str, str]]:
        """The distinct sentences of its evidence (as loaded: newest first), each with the
        time of the memory it is from; whitespace runs are one space.

        Example:
            >>> from types import SimpleNamespace as Ev
            >>> edge = Edge("Ann", "met", "Bo", 2, 1.0, "", "", None, None, None, [
            ...     Ev(sentence="Ann  met Bo.", created_at="2026-05-02"),
            ...     Ev(sentence="Ann met Bo.", created_at="2026-05-01")])
            >>> edge.sentences()
            [('Ann met Bo.', '2026-05-02')]
        """
        return [(sentence, when) for sentence, when, _ in self._distinct_evidence()]


@dataclass
class Hop:
    """One step of a path: ``source`` to ``target`` through ``edge`` (possibly reversed)."""

    source: str
    target: str
    edge: Edge
    reversed: bool


#: What a typed relation adds to a hop's rank over any support a co-occurrence link may have.
_TYPED_HOP_BONUS = 1000


def hop_rank(predicate: str, support: int, reversed_: bool) -> tuple[int, bool, str]:
    """The rank of an edge as the hop between two entities of a path (the highest wins):
    typed before co-occurrence, then support, then read forwards, then the predicate. Both
    graph back ends pick a path's hops by it.

    Example:
        >>> max([("co_occurs", 9, False), ("works_at", 1, True)], key=lambda o: hop_rank(*o))
        ('works_at', 1, True)
    """
    typed = _TYPED_HOP_BONUS if predicate != CO_OCCURS else 0
    return support + typed, not reversed_, predicate


class RelationshipQueries(Protocol):
    """The relationship queries a tenant's graph answers, in memory (:class:`KnowledgeGraph`)
    or in SQL (:class:`~graphmem.index.sql_graph.SQLGraph`): same arguments, same answers."""

    def __contains__(self, name: object) -> bool: ...

    def __len__(self) -> int: ...

    def neighbors(
        self, name: str, depth: int = 1, predicate: str | None = None
    ) -> dict[str, int]: ...

    def paths(
        self, a: str, b: str, max_hops: int = 3, limit: int = 10, *, typed_only: bool = False
    ) -> list[list[Hop]]: ...
