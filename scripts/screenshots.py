"""Regenerate the README's screenshots from the demo: docs/overview.png (the whole graph as
``graphmem demo`` draws it) and docs/neighbourhood.png (``graphmem viz --entity "Dana
Whitfield" --depth 1``), each at 1400x900 in headless Chromium with the network off.

Usage::

    python scripts/screenshots.py               # writes docs/overview.png, docs/neighbourhood.png
    python scripts/screenshots.py --out /tmp    # somewhere else
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

WIDTH, HEIGHT = 1400, 900
NEIGHBOURHOOD = "Dana Whitfield"


def graphmem(*args: str) -> None:
    script = Path(sys.executable).with_name("graphmem")
    subprocess.run([str(script), *args], check=True, stdout=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs", help="default: docs/")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "demo"
        graphmem("demo", "--out", str(demo))
        near = Path(tmp) / "neighbourhood.html"
        graphmem("--db", str(demo / "demo.db"), "viz", str(near), "--entity", NEIGHBOURHOOD)
        with chromium(WIDTH, HEIGHT) as driver:
            for page, name in [(demo / "graph.html", "overview.png"), (near, "neighbourhood.png")]:
                stats = open_page(driver, page)
                target = args.out / name
                driver.save_screenshot(str(target))
                print(f"{target}: {stats['nodes']} entities, scale {stats['scale']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
