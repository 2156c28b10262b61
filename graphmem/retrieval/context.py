"""The context a task gets: a structured report, its text in Calute's format, and how it is
assembled from the tiers (:func:`assemble_context`).

Example:
    >>> report = ContextReport(task="Plan the launch", background="Launch is in May")
    >>> report.sections.append(ContextSection("Recent context:", [ContextEntry("Atlas slipped", 200)]))
    >>> print(report.text)
    Background:
    Launch is in May
    Recent context:
      • Atlas slipped
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence, Set
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .search import Explanation, Hit, Ranking, analyse_query
from .weights import RankingWeights, resolved

if TYPE_CHECKING:
    import networkx as nx

if TYPE_CHECKING:
    from ..graph.knowledge_graph import Edge, KnowledgeGraph
    from ..items import MemoryItem
    from ..space import MemorySpace, Work

__all__ = [
    "BULLET",
    "ContextEntry",
    "ContextReport",
    "ContextSection",
    "ContextSources",
    "EntitySource",
    "assemble_context",
    "context_ranking",
]

BULLET = "  • "
#: Items of each section (Calute's layout): recent context, relevant knowledge, known entities;
#: related memories: as many as the caller asks, of which the text lists the first three.
RECENT_ITEMS = KNOWLEDGE_ITEMS = ENTITY_ITEMS = 5
RELATED_SHOWN = 3
#: Characters of an item each section shows.
RECENT_CHARS, KNOWLEDGE_CHARS, RELATED_CHARS = 200, 200, 150
#: Typed relations the context lists under each known entity.
RELATIONS_PER_ENTITY = 3


@dataclass
class ContextEntry:
    """One line of context: the text shown (cut to ``max_chars``) and where it came from."""

    content: str
    max_chars: int
    memory_id: str | None = None
    tier: str | None = None
    score: float | None = None
    explanation: Explanation | None = None

    @property
    def line(self) -> str:
        """The bullet line as it appears in the context text."""
        return f"{BULLET}{self.content[: self.max_chars]}"


@dataclass
class ContextSection:
    """A titled list of entries (``Recent context:``, ``Relevant knowledge:``...), of which
    the first ``shown`` (all when None) appear in the context text."""

    title: str
    entries: list[ContextEntry] = field(default_factory=list)
    shown: int | None = None

    @property
    def visible(self) -> list[ContextEntry]:
        """The entries the context text lists."""
        return self.entries if self.shown is None else self.entries[: self.shown]


@dataclass
class ContextReport:
    """Everything ``build_context_for_task`` used, in rank order, beside the text it gives."""

    task: str
    background: str | None = None
    sections: list[ContextSection] = field(default_factory=list)
    #: The entities the task names (those shown under "Known entities:").
    entities: list[str] = field(default_factory=list)
    #: Builds the subgraph around ``entities`` when first asked for (it is not needed for
    #: the text, and copying a dense neighbourhood is the costliest step of a context).
    subgraph_builder: Callable[[list[str]], nx.MultiDiGraph] | None = field(
        default=None, repr=False
    )
    _subgraph: nx.MultiDiGraph | None = field(default=None, repr=False)

    @property
    def subgraph(self) -> nx.MultiDiGraph:
        """The entities of the task and their neighbours (depth 1) in the knowledge graph."""
        import networkx as nx

        if self._subgraph is None:
            builder = self.subgraph_builder
            self._subgraph = builder(self.entities) if builder is not None else nx.MultiDiGraph()
        return self._subgraph

    @property
    def text(self) -> str:
        """The context string, exactly as Calute formats it ("" when there is nothing)."""
        parts: list[str] = []
        if self.background:
            parts.append(f"Background:\n{self.background}")
        for section in self.sections:
            if not section.visible:
                continue
            # Calute's layout: "Recent context:" follows the background directly; later
            # sections are preceded by a blank line (but the text never starts with one).
            blank_line = parts and section.title != "Recent context:"
            parts.append(f"\n{section.title}" if blank_line else section.title)
            parts.extend(entry.line for entry in section.visible)
        return "\n".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable form (for ``graphmem context --explain``)."""
        return {
            "task": self.task,
            "background": self.background,
            "sections": [
                {
                    "title": s.title,
                    "shown": len(s.visible),
                    "entries": [
                        {
                            "content": e.content[: e.max_chars],
                            "memory_id": e.memory_id,
                            "tier": e.tier,
                            "score": e.score,
                            "matched_terms": e.explanation.matched_terms if e.explanation else [],
                            "entity_path": e.explanation.entity_path if e.explanation else [],
                            "similar_to": e.explanation.similar_to if e.explanation else [],
                            "sources": e.explanation.sources if e.explanation else [],
                        }
                        for e in s.entries
                    ],
                }
                for s in self.sections
                if s.entries
            ],
            "subgraph": {
                "nodes": sorted(
                    str(self.subgraph.nodes[n].get("name", n)) for n in self.subgraph.nodes
                ),
                "edges": sorted(
                    [
                        str(self.subgraph.nodes[u].get("name", u)),
                        k,
                        str(self.subgraph.nodes[v].get("name", v)),
                    ]
                    for u, v, k in self.subgraph.edges(keys=True)
                ),
            },
        }


class EntitySource(Protocol):
    """What a context reads from the entity tier ("Known entities:"); ``EntityMemory`` is one."""

    @property
    def graph(self) -> KnowledgeGraph:
        """The tier's knowledge graph view."""
        ...

    def mention_counts(self, keys: Iterable[str]) -> dict[str, int]:
        """Entity key -> how many memories of the tier mention it (keys with none left out)."""
        ...

    def known_relations(self, keys: Iterable[str], per_entity: int = 3) -> dict[str, list[Edge]]:
        """Entity key -> its ``per_entity`` strongest typed relations."""
        ...

    def subgraph(self, names: Iterable[str], depth: int = 1) -> nx.MultiDiGraph:
        """The named entities and their neighbourhood."""
        ...


@dataclass
class ContextSources:
    """What a context reads from the tiers, as the facade hands it over (the tiers sit above
    ``retrieval/``, so they are passed in, not imported). ``tx`` is the context's read (a
    unit of work of the memory space)."""

    #: ``(tx, n)`` -> the ``n`` "Recent context:" items, oldest first, and those of them
    #: that count as read (accessed; their saves are not shown again). None: no short-term tier.
    recent: Callable[[Work, int], tuple[list[MemoryItem], list[Hit]]] | None
    #: ``(tx, shown)`` -> the task ranked over every tier the context searches, for
    #: sections showing ``shown`` items at most (see :func:`context_ranking`). None: the task
    #: is blank, nothing is searched.
    ranking: Callable[[Work, int], Ranking] | None
    #: The long-term tier's namespace ("Relevant knowledge:"); None: no long-term tier.
    knowledge: str | None
    #: The entity tier ("Known entities:"); None: none.
    entities: EntitySource | None
    #: The contextual tier's namespaces ("Related memories:").
    related: Set[str]
    #: ``(related, others)`` -> the related hits as the contextual tier shows them (its
    #: re-rank), counting one access of them and of ``others`` (the items read before).
    shown: Callable[[list[Hit], Sequence[Hit]], list[Hit]]


def assemble_context(
    space: MemorySpace,
    sources: ContextSources,
    task: str,
    background: str | None = None,
    max_items: int = 10,
    *,
    explain: bool = True,
) -> ContextReport:
    """The context for ``task``: one read of ``space`` and one ranking, split into "Recent
    context", "Relevant knowledge" (the best five long-term items), "Known entities" and
    "Related memories" (the best ``max_items`` contextual items not shown in an earlier
    section, each text once); then one batched access-count update (``sources.shown``).
    ``explain=False``: the entries carry no explanations (a caller that wants the text only).

    Example:
        >>> from graphmem import CortexMemory
        >>> memory = CortexMemory(enable_short_term=False)
        >>> _ = memory.save_task_result("Audit", "Acme passed the audit", agent_role="QA")
        >>> print(memory.build_context_report("Acme audit").text)
        Related memories:
          • Acme passed the audit
    """
    report = ContextReport(task=task, background=background or None)
    shown = _Shown()
    read: list[Hit] = []  # recent items of one agent, and knowledge: accessed
    related: list[Hit] = []
    with space.reading() as tx:
        if sources.recent is not None:
            items, hits = sources.recent(tx, RECENT_ITEMS)
            read.extend(hits)
            shown.saves.update(hit.result_id for hit in hits)
            entries = [shown.entry(item, RECENT_CHARS, "short_term") for item in items]
            report.sections.append(ContextSection("Recent context:", entries))
        if sources.ranking is not None:
            ranking = sources.ranking(tx, KNOWLEDGE_ITEMS + max_items)
            read.extend(_knowledge(tx, ranking, sources, report, shown, explain))
            if sources.entities is not None:
                _add_entities(report, sources.entities, ranking.query.named)
            if max_items > 0:
                related = _related(tx, ranking, sources, shown, max_items, explain)
    # One write: the access counts of what was read (and any promotion they bring).
    related = sources.shown(related, read)
    if sources.ranking is not None and max_items > 0:
        entries = [shown.entry(h.item, RELATED_CHARS, "contextual", h) for h in related]
        report.sections.append(ContextSection("Related memories:", entries, RELATED_SHOWN))
    return report


def context_ranking(
    tx: Work,
    space: MemorySpace,
    namespaces: Sequence[str],
    query: str,
    *,
    tenant: str | None,
    agent_role: str | None,
    shown: int,
    weights: RankingWeights | None = None,
) -> Ranking:
    """One ranking of ``query`` over every tier a context searches (of ``agent_role``'s
    memories when given), to be split into its sections; ``shown``: how many items the
    sections show at most (the lexical pool grows with it: ``weights.context_pool``)."""
    weights = resolved(weights)
    return Ranking.of(
        tx.connection,
        space,
        namespaces,
        analyse_query(space, tenant or "", query, weights),
        tenant=tenant,
        sql_filters={"agent_id": agent_role} if agent_role else None,
        pool=weights.context_pool(shown),
        weights=weights,
    )


@dataclass
class _Shown:
    """What a context shows so far: the texts (each once) and the saves (a task result is
    one save in several tiers: shown once)."""

    texts: set[str] = field(default_factory=set)
    saves: set[str] = field(default_factory=set)

    def entry(
        self, item: MemoryItem, max_chars: int, tier: str, hit: Hit | None = None
    ) -> ContextEntry:
        """The entry showing ``item`` (cut to ``max_chars``), remembered as shown."""
        self.texts.add(item.content[:max_chars])
        self.texts.add(item.content)
        return ContextEntry(
            item.content,
            max_chars,
            item.memory_id,
            tier,
            hit.score if hit else None,
            hit.explanation if hit else None,
        )

    def fresh(self, item: MemoryItem) -> bool:
        """Not shown yet (each text once in "Related memories"); remembered as shown."""
        if item.content in self.texts or item.content[:RELATED_CHARS] in self.texts:
            return False
        self.texts.add(item.content)
        return True


def _knowledge(
    tx: Work,
    ranking: Ranking,
    sources: ContextSources,
    report: ContextReport,
    shown: _Shown,
    explain: bool,
) -> list[Hit]:
    """Add "Relevant knowledge:" (the best long-term items not shown yet); the hits read."""
    if sources.knowledge is None:
        return []
    hits = ranking.take(tx, KNOWLEDGE_ITEMS, namespaces={sources.knowledge}, explain=explain)
    entries = [
        shown.entry(h.item, KNOWLEDGE_CHARS, "long_term", h)
        for h in hits
        if h.item.content not in shown.texts and h.result_id not in shown.saves
    ]
    report.sections.append(ContextSection("Relevant knowledge:", entries))
    shown.saves.update(h.result_id for h in hits)
    return hits


def _add_entities(report: ContextReport, entities: EntitySource, query_named: list[str]) -> None:
    """Add "Known entities:": the entities the task names that the tier mentions."""
    counts = entities.mention_counts(query_named)
    named = [key for key in query_named if counts.get(key)][:ENTITY_ITEMS]
    kg = entities.graph
    report.entities = [kg.name_of(key) for key in named]
    report.sections.append(
        ContextSection("Known entities:", _known_entities(entities, named, report.entities))
    )
    report.subgraph_builder = lambda names: entities.subgraph(names, depth=1)


def _related(
    tx: Work,
    ranking: Ranking,
    sources: ContextSources,
    shown: _Shown,
    max_items: int,
    explain: bool,
) -> list[Hit]:
    """The best ``max_items`` contextual hits of texts and saves not shown yet."""
    related = ranking.take(
        tx,
        max_items + len(shown.saves),
        namespaces=sources.related,
        predicate=shown.fresh,
        explain=explain,
    )
    return [h for h in related if h.result_id not in shown.saves][:max_items]


def _known_entities(memory: EntitySource, keys: list[str], names: list[str]) -> list[ContextEntry]:
    """What the memory knows of each entity: what it is ("Samir Haddad (PERSON)"; with no
    typed relation, who or what it is mentioned with), then its strongest typed relations,
    current ones first, each with when it held ("Samir Haddad works_at Kestrel Automation
    (2025-03-03 to 2025-04-21)"), each relation once."""
    relations = memory.known_relations(keys, RELATIONS_PER_ENTITY)
    kg = memory.graph
    listed: set[int | None] = set()
    out: list[ContextEntry] = []
    for key, name in zip(keys, names, strict=True):
        head = f"{name} ({kg.nodes[key]['label']})"
        if not relations.get(key):
            partners = kg.strongest_co_occurring(key, RELATIONS_PER_ENTITY)
            head += f", mentioned with {', '.join(partners)}" if partners else ""
        out.append(ContextEntry(head, 10**9, tier="entity"))
        for edge in relations.get(key, []):
            if edge.relation_id in listed:
                continue
            listed.add(edge.relation_id)
            when = f" ({edge.validity})" if edge.validity else ""
            line = f"{edge.subject} {edge.predicate} {edge.object}{when}"
            out.append(ContextEntry(line, 10**9, tier="entity"))
    return out
