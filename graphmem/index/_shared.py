"""What the parts of the entity index share: limits, the tenant state, the relation-source
protocol and the record of one indexed text.

A leaf of :mod:`graphmem.index`: the views, the deferred batch, linking and support import
it, and it imports none of them (nor :mod:`~graphmem.index.entity_index`).

Example:
    >>> SENTENCE_LINK_WINDOW, MAX_MEMORY_LINKED_ENTITIES
    (32, 12)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args

from ..errors import InvalidArgumentError

if TYPE_CHECKING:
    from ..extract.entities import AliasMatcher
    from ..extract.texts import Doc, Span
    from ..graph.knowledge_graph import KnowledgeGraph

__all__ = [
    "EXTRACTOR_RULE",
    "MAX_INDEXED_CHARS",
    "MAX_MEMORY_LINKED_ENTITIES",
    "SENTENCE_LINK_WINDOW",
    "SQL_GRAPH_THRESHOLD",
    "GraphCache",
    "check_graph_cache",
    "IndexedMemory",
    "RelationSource",
    "TenantState",
    "VoteTable",
]

#: Entities are looked for in the first this-many characters of a memory (all of it is stored
#: and searchable); analysing megabytes of text on every save would stall the caller.
MAX_INDEXED_CHARS = 200_000
#: Entities of one sentence are linked pairwise, each to the next this-many of the sentence
#: (every pair, unless the sentence lists more names): a list of 200 names would otherwise
#: add 19,900 edges that say nothing about each pair.
SENTENCE_LINK_WINDOW = 32
#: Entities of one memory but of no common sentence are linked (weaker) among the memory's
#: this-many most mentioned entities.
MAX_MEMORY_LINKED_ENTITIES = 12
#: The evidence rule of relations the user's extractor found.
EXTRACTOR_RULE = "extractor"
#: With ``graph_cache="auto"``, tenants with more entities than this are queried in SQL.
SQL_GRAPH_THRESHOLD = 50_000
#: Where relationship queries (``neighbors``, ``paths``) run: the in-process NetworkX view,
#: recursive SQL (:class:`~graphmem.index.sql_graph.SQLGraph`), or SQL for large tenants.
GraphCache = Literal["memory", "sql", "auto"]


def check_graph_cache(graph_cache: object) -> GraphCache:
    """``graph_cache`` if it is one of :data:`GraphCache`'s values, else a clear error."""
    if graph_cache not in get_args(GraphCache):
        raise InvalidArgumentError(
            f"graph_cache must be 'memory', 'sql' or 'auto', got {graph_cache!r}"
        )
    return graph_cache  # type: ignore[return-value]


#: Label votes of entities: entity id -> label -> ``(weighted count, first)``, ``first``
#: ordering labels by the mention that brought them (stored ones before pending ones).
VoteTable = dict[int, dict[str, tuple[float, tuple[int, int]]]]


class RelationSource(Protocol):
    """What the index needs from a typed-relation extractor: its candidates. What the
    predicates mean is the index's :class:`~graphmem.extract.predicates.PredicateCatalogue`."""

    def extract(
        self, doc: Doc, entities: Sequence[Span] | None = None, speaker: Span | None = None
    ) -> Sequence[Any]: ...


@dataclass
class IndexedMemory:
    """What indexing found in one text: entity display names, in text order."""

    text_id: int
    entity_names: list[str] = field(default_factory=list)
    #: Entity keys in text order: all of them, and those of the text's body only.
    keys: list[str] = field(default_factory=list)
    body_keys: list[str] = field(default_factory=list)


@dataclass
class TenantState:
    """One tenant's view (its graph and matcher of known names) and the database generation
    it reflects."""

    graph: KnowledgeGraph
    matcher: AliasMatcher
    generation: int
    #: Stored label votes of entities (as :attr:`PendingWrites.stored_votes`), kept by the
    #: index across batches so a save does not count a busy entity's mentions again; a path
    #: that changes mentions otherwise drops the state, and with it these.
    votes: VoteTable = field(default_factory=dict)
