"""The context a task gets: a structured report, and its text in Calute's format.

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

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from .search import Explanation

__all__ = ["BULLET", "ContextEntry", "ContextReport", "ContextSection"]

BULLET = "  • "


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
