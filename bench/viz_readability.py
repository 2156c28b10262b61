"""Are the pictures of a big memory readable? (issue 30)

Builds a store of 3,000 task results with ``bench/speed.py``'s generator (the store of the
issue: about 590 entities), draws the overview (``graphmem viz``) and the page of its most
connected person (``graphmem viz --entity``), opens both in headless Chromium at 1400x900 with
the network off, and measures what a reader sees at the default zoom:

* relations drawn per entity drawn (target: at most 3);
* the share of drawn node labels whose box overlaps another drawn label (target: under 5%),
  from vis-network's own label boxes after drawing.

Usage::

    python bench/viz_readability.py                      # builds bench/results/viz_3000.db once
    python bench/viz_readability.py --store /tmp/s.db --json out.json

The store is kept (it takes a minute or two to build) and not committed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from speed import gen_tasks  # noqa: E402
from viz_load import chromium, open_page  # noqa: E402

RESULTS = 3000
SEED = 0
MAX_EDGES_PER_NODE = 3.0
MAX_LABEL_OVERLAP = 0.05

#: Run in the page: the drawn nodes and edges, and each drawn label's box in DOM pixels as
#: vis-network drew it (``labelModule.size``, canvas units, moved by the label's ``vadjust``
#: as vis-network draws it, converted at the current zoom).
MEASURE_JS = """
var network = graphmemNetwork, scale = network.getScale();
var shown = graphmemView();
var boxes = [];
shown.nodes.forEach(function (id) {
  var body = network.body.nodes[id];
  if (!body || !body.options.label || body.options.hidden) { return; }
  var size = body.labelModule.size;
  if (!size.width) { return; }
  var shift = body.labelModule.fontOptions.vadjust || 0;
  var corner = network.canvasToDOM({x: size.left, y: size.top + shift});
  boxes.push({id: id, left: corner.x, top: corner.y,
              width: size.width * scale, height: size.height * scale});
});
var edges = graphmemEdges.get({filter: function (e) { return !e.hidden; }}).length;
var nodes = graphmemNodes.get({filter: function (n) { return !n.hidden; }}).length;
return {nodes: nodes, edges: edges, boxes: boxes, scale: scale};
"""


def build_store(path: Path, results: int = RESULTS, seed: int = SEED) -> Path:
    """Save ``results`` generated task results into a persistent store at ``path`` (kept if
    it is already there)."""
    if path.exists():
        return path
    os.environ["WRITE_MEMORY"] = "1"
    from graphmem import CortexMemory

    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    for leftover in path.parent.glob(partial.name + "*"):
        leftover.unlink()
    memory = CortexMemory(persistence_path=str(partial))
    memory.save_task_results(gen_tasks(results, seed), batch_size=256, progress=False)
    memory.storage.close()
    partial.rename(path)
    return path


def most_connected_person(store: Path) -> str:
    """The name of the person with the most typed relations in the store's graph (then the
    most distinct neighbours; co-occurrence alone makes a few products tagged PERSON look
    connected)."""
    os.environ["WRITE_MEMORY"] = "1"
    from graphmem import CortexMemory
    from graphmem.graph.knowledge_graph import CO_OCCURS

    memory = CortexMemory(persistence_path=str(store))
    assert memory.entity_memory is not None
    graph = memory.entity_memory.graph.graph
    people = [node for node, data in graph.nodes(data=True) if data.get("label") == "PERSON"]
    undirected = graph.to_undirected(as_view=True)

    def typed(node: Any) -> int:
        edges = [*graph.out_edges(node, keys=True), *graph.in_edges(node, keys=True)]
        return sum(1 for *_, key in edges if key != CO_OCCURS)

    best = max(people, key=lambda node: (typed(node), len(set(undirected[node])), str(node)))
    name = str(graph.nodes[best].get("name") or best)
    memory.storage.close()
    return name


def draw_pages(store: Path, out: Path, person: str) -> dict[str, Path]:
    """Write the overview and the person's page with the ``graphmem viz`` command."""
    from graphmem.cli import main as cli

    pages = {"overview": out / "overview.html", "ego": out / "ego.html"}
    for args in (
        ["--db", str(store), "viz", str(pages["overview"]), "--force"],
        ["--db", str(store), "viz", str(pages["ego"]), "--entity", person, "--force"],
    ):
        if cli(args) != 0:
            raise RuntimeError(f"graphmem {' '.join(args)} failed")
    return pages


def overlapping(boxes: list[dict[str, float]]) -> int:
    """How many boxes overlap at least one other box."""
    hit = set()
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if (
                a["left"] < b["left"] + b["width"]
                and b["left"] < a["left"] + a["width"]
                and a["top"] < b["top"] + b["height"]
                and b["top"] < a["top"] + a["height"]
            ):
                hit.update((a["id"], b["id"]))
    return len(hit)


def readability(driver: Any, page: Path) -> dict[str, Any]:
    """Open ``page`` and measure it at its default zoom (see the module docstring)."""
    stats = open_page(driver, page)
    seen: dict[str, Any] = driver.execute_script(MEASURE_JS)
    labels = len(seen["boxes"])
    overlaps = overlapping(seen["boxes"])
    return {
        "nodes_drawn": seen["nodes"],
        "edges_drawn": seen["edges"],
        "edges_per_node": round(seen["edges"] / max(seen["nodes"], 1), 3),
        "labels_drawn": labels,
        "labels_overlapping": overlaps,
        "label_overlap_share": round(overlaps / max(labels, 1), 4),
        "scale": round(seen["scale"], 3),
        "ready_seconds": round(stats["readyMs"] / 1000, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, default=BENCH / "results" / "viz_3000.db")
    parser.add_argument("--results", type=int, default=RESULTS)
    parser.add_argument("--person", help="the ego page's person (default: the most connected)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    store = build_store(args.store, args.results)
    person = args.person or most_connected_person(store)
    with tempfile.TemporaryDirectory() as tmp:
        pages = draw_pages(store, Path(tmp), person)
        with chromium() as driver:
            result = {name: readability(driver, page) for name, page in pages.items()}
    result["person"] = person
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    ok = all(
        result[name]["edges_per_node"] <= MAX_EDGES_PER_NODE
        and result[name]["label_overlap_share"] < MAX_LABEL_OVERLAP
        for name in pages
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
