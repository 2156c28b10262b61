"""What the pictures and exports are made from: a graph with its evidence and one mention count.

A picture or export takes a *source*: an entity memory (``memory.entity_memory``, anything
with a :class:`~graphmem.graph.KnowledgeGraph` ``graph`` and ``mention_counts(keys)``), a
:class:`~graphmem.graph.KnowledgeGraph`, or a plain NetworkX graph. :func:`drawable_graph`
turns the first two into a NetworkX graph whose relations carry their evidence records
(sentence, source memory, rule, date) and whose nodes carry ``mentions``:

* from an entity memory: the number of memories of the entity tier that name the entity,
  the count its context shows ("Atlas: 83 mentions");
* from a bare knowledge graph (no tier to count): every time a memory named it.

``graph.graph["mentions_counted"]`` says which, and the page's legend shows it.

Example:
    >>> from graphmem import EntityMemory
    >>> memory = EntityMemory()
    >>> _ = memory.save("Alice Johnson joined Acme Corp. Alice Johnson is happy.")
    >>> drawn = drawable_graph(memory)
    >>> drawn.nodes["alice johnson"]["mentions"], drawn.graph["mentions_counted"]
    (1, 'memories of the entity tier that name it')
    >>> [(key, data["evidence"][0]["sentence"]) for *_, key, data in drawn.edges(keys=True, data=True)]
    [('works_at', 'Alice Johnson joined Acme Corp.'), ('co_occurs', 'Alice Johnson joined Acme Corp.')]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, TypeAlias, runtime_checkable

import networkx as nx

from graphmem.errors import InvalidArgumentTypeError
from graphmem.graph.knowledge_graph import KnowledgeGraph

__all__ = [
    "ENTITY_TIER_COUNT",
    "EVIDENCE_PER_ITEM",
    "EntityTier",
    "Source",
    "drawable_graph",
    "knowledge_graph_of",
]

#: What ``mentions`` counts when the source is an entity memory (the context's count).
ENTITY_TIER_COUNT = "memories of the entity tier that name it"
#: What it counts when the source is a bare knowledge graph.
ALL_MENTIONS_COUNT = "times memories named it"
#: Evidence records kept per relation and per entity.
EVIDENCE_PER_ITEM = 5


@runtime_checkable
class EntityTier(Protocol):
    """What a picture needs from an entity memory (:class:`graphmem.EntityMemory` has it)."""

    @property
    def graph(self) -> KnowledgeGraph:
        """The tier's knowledge graph."""
        ...

    def mention_counts(self, keys: Iterable[str]) -> dict[str, int]:
        """Entity key -> how many memories of the tier name it (zero counts left out)."""
        ...


#: What a picture or an export is made from.
Source: TypeAlias = "nx.Graph | KnowledgeGraph | EntityTier"


def knowledge_graph_of(source: Source) -> KnowledgeGraph | None:
    """The knowledge graph behind ``source`` (None for a plain NetworkX graph).

    Example:
        >>> knowledge_graph_of(nx.Graph()) is None, type(knowledge_graph_of(KnowledgeGraph()))
        (True, <class 'graphmem.graph.knowledge_graph.KnowledgeGraph'>)
    """
    if isinstance(source, KnowledgeGraph):
        return source
    if isinstance(source, nx.Graph):
        return None
    if isinstance(source, EntityTier) and isinstance(source.graph, KnowledgeGraph):
        return source.graph
    raise InvalidArgumentTypeError(
        "expected a NetworkX graph, a KnowledgeGraph or an entity memory "
        f"(memory.entity_memory), got {type(source).__name__}"
    )


def drawable_graph(source: Source, part: nx.Graph | None = None) -> nx.Graph:
    """Return the graph to draw or export from ``source`` (see the module docstring).

    ``part`` is a view drawn from the source's graph (``kg.subgraph(names)``, a path); by
    default the whole graph. A plain NetworkX ``source`` is returned as given (``part``, when
    given, instead). The result is a copy: changing it leaves the memory alone.
    """
    kg = knowledge_graph_of(source)
    if kg is None:
        graph: nx.Graph = source if part is None else part
        return graph
    drawn: nx.MultiDiGraph = (kg.graph if part is None else part).copy()
    by_relation = {edge.relation_id: edge for edge in kg.find(evidence=True)}
    node_evidence: dict[Any, list[dict[str, Any]]] = {node: [] for node in drawn}
    for u, v, data in drawn.edges(data=True):
        edge = by_relation.get(data.get("relation_id"))
        records = _evidence_records(edge.evidence if edge is not None else [])
        data["evidence"] = records[:EVIDENCE_PER_ITEM]
        node_evidence[u].extend(records)
        node_evidence[v].extend(records)
    for node, records in node_evidence.items():
        newest = sorted(records, key=lambda record: record["date"] or "", reverse=True)
        unique = {record["sentence"]: record for record in reversed(newest)}
        ordered = sorted(unique.values(), key=lambda record: record["date"] or "", reverse=True)
        drawn.nodes[node]["evidence"] = ordered[:EVIDENCE_PER_ITEM]
    if isinstance(source, EntityTier):
        counts = source.mention_counts(list(drawn))
        for node, attrs in drawn.nodes(data=True):
            attrs["mentions"] = counts.get(node, 0)
        drawn.graph["mentions_counted"] = ENTITY_TIER_COUNT
    else:
        drawn.graph["mentions_counted"] = ALL_MENTIONS_COUNT
    return drawn


def _evidence_records(evidence: Iterable[Any]) -> list[dict[str, Any]]:
    """One record per distinct sentence (as loaded: newest first): the sentence, the id and
    time of the memory it is from, and the rule that read the relation from it."""
    seen: set[str] = set()
    records: list[dict[str, Any]] = []
    for row in evidence:
        sentence = " ".join(str(row.sentence).split())
        if not sentence or sentence in seen:
            continue
        seen.add(sentence)
        records.append(
            {
                "sentence": sentence,
                "memory_id": row.memory_id,
                "rule": row.rule,
                "date": row.created_at or None,
            }
        )
    return records
