"""What the ``graphmem`` command prints and how it writes its output files."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._files import replacing as replacing  # the CLI's outputs are written whole
from ..errors import InvalidArgumentError

if TYPE_CHECKING:
    from ..graph.knowledge_graph import Edge, KnowledgeGraph

#: Printed after a change of what the analysis finds (a declaration, a label).
REANALYSE_HINT = (
    "Texts saved from now on are read with it; `graphmem reanalyse` reads the stored ones "
    "again (the relations the new types let the rules find)."
)

#: Opening words of every page ``graphmem viz`` writes (the comment of viz/graph.html).
GRAPH_PAGE_MARK = b"graphmem graph page"


def check_output(
    out: Path, db: Path, *, force: bool, replaceable: Callable[[Path], bool] | None
) -> None:
    """Refuse an output path that would destroy something: the database itself (or its
    journal files), a directory, an existing file unless ``replaceable`` says it is an
    earlier output of the command or ``--force`` was given, or a file in a missing folder."""
    if not out.parent.is_dir():
        raise InvalidArgumentError(f"{out.parent}: no such folder (create it first)")
    database_files = [Path(f"{db}{suffix}") for suffix in ("", "-wal", "-shm", "-journal")]
    if any(same_file(out, f) for f in database_files):
        raise InvalidArgumentError(f"{out}: refusing to overwrite the database being read")
    if out.is_dir():
        raise InvalidArgumentError(f"{out}: is a directory")
    if out.exists() and not force and not (replaceable is not None and replaceable(out)):
        raise InvalidArgumentError(f"{out}: already exists (pass --force to replace it)")


def same_file(a: Path, b: Path) -> bool:
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.absolute() == b.absolute()


def is_graph_page(path: Path) -> bool:
    """Whether ``path`` is a page ``graphmem viz`` wrote (so writing it again loses nothing)."""
    with path.open("rb") as handle:
        return GRAPH_PAGE_MARK in handle.read(256)


def edge_dict(edge: Edge) -> dict[str, Any]:
    return edge.to_dict()


def edge_line(edge: Edge) -> str:
    when = f", {edge.validity}" if edge.validity else ""
    ended = " (ended)" if edge.valid_to and edge.is_typed else ""
    return (
        f"  {edge.subject} --{edge.predicate}--> {edge.object}{ended}"
        f"  [support {edge.support}{when}]"
    )


def print_evidence(edge: Edge, count: int, indent: int = 7) -> None:
    """The newest ``count`` evidence sentences of ``edge``, quoted, each with its date."""
    for sentence, stamp in edge.sentences()[:count]:
        print(f"      \u201c{wrap(sentence, indent)}\u201d ({stamp[:10]})")


def graph_summary(kg: KnowledgeGraph, user: str | None) -> str:
    """``Graph of user U: N entities, M relations (T typed).`` (the shared graph: no user)."""
    entities, typed, co_occurs = relation_counts(kg)
    return (
        f"Graph{' of user ' + user if user else ''}: {entities} entities, "
        f"{typed + co_occurs} relations ({typed} typed)."
    )


def relation_counts(kg: KnowledgeGraph) -> tuple[int, int, int]:
    """A graph's entities, typed relations and co-occurrence links (a graph page draws the
    typed ones and only each entity's strongest co-occurrence links)."""
    from ..graph.knowledge_graph import CO_OCCURS

    counts = kg.counts()
    co_occurs = counts["relations_by_predicate"].get(CO_OCCURS, 0)
    return counts["entities"], counts["relations"] - co_occurs, co_occurs


def print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def wrap(text: str, indent: int) -> str:
    width = max(60, min(shutil.get_terminal_size((100, 24)).columns, 120))
    lines = textwrap.wrap(" ".join(text.split()), width=width - indent) or [""]
    return ("\n" + " " * indent).join(lines)


def heading(text: str) -> None:
    print(f"\n== {text}")


def counts_text(counts: dict[str, int]) -> str:
    return (
        f"{counts.get('memories', 0)} memories, {counts.get('entities', 0)} entities, "
        f"{counts.get('relations', 0)} relations, {counts.get('relation_evidence', 0)} "
        f"evidence rows, {counts.get('kv', 0)} kv rows"
    )
