"""Page load and layout settle time of a graph page in headless Chromium (issue 17).

Builds a synthetic knowledge graph of N entities (default 5,000; people, organisations,
places and projects with typed relations and co-occurrence, hubs as in real memories),
renders it with :func:`graphmem.viz.render_graph` (default node budget, or ``--max-nodes``),
and opens the page in Debian's headless Chromium (selenium, network off) several times. One
run's time is from navigation start to the page's ``graphmemReady`` flag: the data parsed,
the vis-network layout stabilised, physics switched off and the view fitted
(``window.graphmemStats.readyMs``). Prints the median, and each run.

Usage::

    python bench/viz_load.py                       # 5,000 entities, default budget, 5 runs
    python bench/viz_load.py --entities 5000 --max-nodes 1000 --runs 3 --json out.json

Target (issue 17): a 5,000-entity graph loads and settles within 3 s.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import networkx as nx

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
TARGET_SECONDS = 3.0


@contextmanager
def chromium(width: int = 1400, height: int = 900) -> Iterator[Any]:
    """A headless Chromium (selenium) with every network request made impossible."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="graphmem-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        f"--window-size={width},{height}",
        "--proxy-server=127.0.0.1:9",
        "--proxy-bypass-list=<-loopback>",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        # The window size includes the browser's frame: make the page itself width x height.
        driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd(
            "Network.emulateNetworkConditions",
            {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0},
        )
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def open_page(driver: Any, path: Path, timeout: float = 120.0) -> dict[str, Any]:
    """Load ``path`` and wait until the page reports ready; return ``graphmemStats``."""
    driver.get(path.resolve().as_uri())
    deadline = time.monotonic() + timeout
    while not driver.execute_script("return window.graphmemReady === true"):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} never reported ready")
        time.sleep(0.02)
    stats: dict[str, Any] = driver.execute_script("return window.graphmemStats")
    return stats


def synthetic_graph(entities: int, seed: int = 17) -> nx.MultiDiGraph:
    """A knowledge-graph-shaped MultiDiGraph: a few hub organisations and places, people
    working at and living in them, projects, ended relations, and co-occurrence links."""
    rng = random.Random(seed)
    graph = nx.MultiDiGraph()
    orgs = max(entities // 25, 2)
    places = max(entities // 50, 2)
    projects = max(entities // 40, 2)
    people = entities - orgs - places - projects
    kinds = [("ORG", orgs), ("GPE", places), ("PROJECT", projects), ("PERSON", people)]
    keys: dict[str, list[str]] = {}
    for label, count in kinds:
        keys[label] = []
        for n in range(count):
            key = f"{label.lower()} {n}"
            month = rng.randint(1, 12)
            graph.add_node(
                key,
                name=f"{label.title()} {n}",
                label=label,
                mentions=max(1, int(rng.paretovariate(1.2))),
                aliases=[f"{label.title()} {n}"],
                first_seen=f"2025-{month:02d}-01T09:00:00",
                evidence=[f"{label.title()} {n} came up in the notes."],
            )
            keys[label].append(key)

    def pick(label: str) -> str:
        # Preferential: low numbers are hubs.
        items = keys[label]
        return items[min(int(rng.expovariate(8 / len(items))), len(items) - 1)]

    def relate(u: str, predicate: str, v: str, ended: bool = False) -> None:
        start = rng.randint(1, 9)
        graph.add_edge(
            u,
            v,
            key=predicate,
            predicate=predicate,
            support=rng.randint(1, 6),
            confidence=round(rng.uniform(0.5, 1.0), 2),
            first_seen=f"2025-{start:02d}-03T10:00:00",
            valid_from=f"2025-{start:02d}-03T10:00:00",
            valid_to=f"2025-{start + 2:02d}-20T10:00:00" if ended else None,
            evidence=[f"{u} {predicate} {v}."],
        )

    for person in keys["PERSON"]:
        relate(person, "works_at", pick("ORG"), ended=rng.random() < 0.15)
        if rng.random() < 0.5:
            relate(person, "lives_in", pick("GPE"))
        if rng.random() < 0.3:
            relate(person, "works_on", pick("PROJECT"))
        for _ in range(rng.randint(0, 3)):
            relate(person, "co_occurs", rng.choice(keys["PERSON"]))
    for org in keys["ORG"]:
        relate(org, "located_in", pick("GPE"))
    return graph


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=5000)
    parser.add_argument("--max-nodes", type=int, default=None, help="default: render_graph's")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)

    from graphmem.viz import render_graph

    graph = synthetic_graph(args.entities)
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "graph.html"
        started = time.perf_counter()
        budget = {} if args.max_nodes is None else {"max_nodes": args.max_nodes}
        report = render_graph(graph, page, title="viz_load", **budget)
        render_seconds = time.perf_counter() - started
        size = page.stat().st_size
        runs = []
        with chromium() as driver:
            open_page(driver, page)  # warm-up: Chromium's first start-up is not the page's
            for _ in range(args.runs):
                driver.get("about:blank")
                runs.append(open_page(driver, page))
    seconds = [run["readyMs"] / 1000 for run in runs]
    result = {
        "entities": graph.number_of_nodes(),
        "relations": graph.number_of_edges(),
        "nodes_drawn": report.nodes_drawn,
        "edges_drawn": report.edges_drawn,
        "page_bytes": size,
        "render_seconds": round(render_seconds, 3),
        "iterations": runs[0]["iterations"],
        "ready_seconds": [round(s, 3) for s in seconds],
        "median_ready_seconds": round(statistics.median(seconds), 3),
        "target_seconds": TARGET_SECONDS,
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if result["median_ready_seconds"] <= TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
