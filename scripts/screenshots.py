"""Regenerate the screenshots of docs/visualisation.md at 1400x900 in headless Chromium with the
network off:

* docs/overview.png: the demo's whole graph as ``graphmem demo`` draws it;
* docs/neighbourhood.png: ``graphmem viz --entity "Dana Whitfield"`` on the demo;
* docs/large_overview.png and docs/large_ego.png: ``graphmem viz`` and the page of its most
  connected person on a store of 3,000 generated task results (``bench/viz_readability.py``
  builds it once, in bench/results/, in a few minutes).

Usage::

    python scripts/screenshots.py               # writes the four files into docs/
    python scripts/screenshots.py --out /tmp    # somewhere else
    python scripts/screenshots.py --demo-only   # the demo's two
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from viz_load import chromium, open_page  # noqa: E402
from viz_readability import build_store, draw_pages, most_connected_person  # noqa: E402

WIDTH, HEIGHT = 1400, 900
NEIGHBOURHOOD = "Dana Whitfield"
LARGE_STORE = REPO / "bench" / "results" / "viz_3000.db"


def graphmem(*args: str) -> None:
    script = Path(sys.executable).with_name("graphmem")
    subprocess.run([str(script), *args], check=True, stdout=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs", help="default: docs/")
    parser.add_argument("--demo-only", action="store_true", help="skip the 3,000-result store")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "demo"
        graphmem("demo", "--out", str(demo))
        near = Path(tmp) / "neighbourhood.html"
        graphmem("--db", str(demo / "demo.db"), "viz", str(near), "--entity", NEIGHBOURHOOD)
        pages = [(demo / "graph.html", "overview.png"), (near, "neighbourhood.png")]
        if not args.demo_only:
            store = build_store(LARGE_STORE)
            large = draw_pages(store, Path(tmp), most_connected_person(store))
            pages += [(large["overview"], "large_overview.png"), (large["ego"], "large_ego.png")]
        with chromium(WIDTH, HEIGHT) as driver:
            for page, name in pages:
                stats = open_page(driver, page)
                target = args.out / name
                driver.save_screenshot(str(target))
                print(f"{target}: {stats['nodes']} entities, scale {stats['scale']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
