"""One count of mentions on the context and the page, and the page of the subgraph a context
used (graphmem.viz.render_context, ``graphmem viz --task``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from graphmem import CortexMemory
from graphmem.viz import drawable_graph, render_context, render_graph

TASK = "Prepare the Atlas review for Acme Corp."


def page_data(path: Path) -> dict[str, Any]:
    found = re.search(
        r'<script type="application/json" id="graphmem-data">(.*?)</script>',
        path.read_text(encoding="utf-8"),
    )
    assert found
    data: dict[str, Any] = json.loads(found.group(1))
    return data


@pytest.fixture(scope="module")
def cortex() -> CortexMemory:
    cortex = CortexMemory()
    results = [
        "Maria Garcia presented the Atlas roadmap to Acme Corp in Berlin.",
        "Acme Corp signed the Atlas contract; Maria Garcia and Ben Okafor attended.",
        "Ben Okafor works at Globex and reviewed Atlas for Acme Corp.",
        "Atlas launch slipped to May; Acme Corp was told by Maria Garcia.",
    ]
    for n, result in enumerate(results):
        # Important results land in four tiers: each is still one memory of the entity tier.
        cortex.save_task_result(f"Atlas step {n}", result, agent_role="PM", importance=0.9)
    return cortex


def known_counts(cortex: CortexMemory, names: list[str]) -> dict[str, int]:
    """The entity-tier mention counts of the context's "Known entities" (what picks them)."""
    memory = cortex.entity_memory
    assert memory is not None
    counts = memory.mention_counts([memory.graph.resolve(n) or n for n in names])
    return {memory.graph.name_of(k): c for k, c in counts.items()}


def test_the_page_counts_mentions_as_the_context_does(cortex: CortexMemory, tmp_path: Path) -> None:
    report = cortex.build_context_report(TASK)
    counts = known_counts(cortex, report.entities)
    assert counts["Atlas"] == 4 and "Acme Corp" in counts
    memory = cortex.entity_memory
    assert memory is not None
    data = page_data(render_graph(memory, tmp_path / "g.html").path)
    drawn = {node["name"]: node["mentions"] for node in data["nodes"]}
    assert {name: drawn[name] for name in counts} == counts
    # The graph's own counter counts every time a name appears, in every tier's copy of a text.
    assert memory.graph.nodes["atlas"]["mentions"] > counts["Atlas"]
    assert data["mentionsCounted"] == "memories of the entity tier that name it"
    atlas = next(node for node in data["nodes"] if node["name"] == "Atlas")
    assert "4 mentions" in atlas["tooltip"]["subtitle"]


def test_the_context_page_draws_what_the_context_used(cortex: CortexMemory, tmp_path: Path) -> None:
    report = cortex.build_context_report(TASK)
    memory = cortex.entity_memory
    assert memory is not None
    drawn = render_context(report, memory, tmp_path / "c.html")
    data = page_data(drawn.path)
    names = {node["name"] for node in data["nodes"]}
    assert names == {memory.graph.name_of(n) for n in report.subgraph}
    assert {node["name"] for node in data["nodes"] if node["focus"]} == set(report.entities)
    counts = known_counts(cortex, report.entities)
    assert {n["name"]: n["mentions"] for n in data["nodes"] if n["name"] in counts} == counts
    context = data["context"]
    assert context["task"] == TASK
    titles = [section["title"] for section in context["sections"]]
    assert titles == [s.title for s in report.sections if s.visible]
    knowledge = context["sections"][titles.index("Relevant knowledge:")]["entries"]
    assert knowledge[0]["tier"] == "long_term" and knowledge[0]["score"] > 0
    assert any("atlas" in [t.lower() for t in entry["matched"]] for entry in knowledge)
    # relations carry their sentences
    assert any(r["evidence"] for e in data["edges"] for r in e["relations"])
    assert data["summary"]["nodesTotal"] == drawn.nodes_drawn == len(report.subgraph)


def test_drawable_graph_is_a_copy(cortex: CortexMemory) -> None:
    memory = cortex.entity_memory
    assert memory is not None
    drawn = drawable_graph(memory)
    drawn.nodes["atlas"]["mentions"] = -1
    drawn.remove_node("atlas")
    assert "atlas" in memory.graph.graph and memory.graph.nodes["atlas"]["mentions"] > 0
