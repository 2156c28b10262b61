"""A reference-format ``memory.jsonl`` of 1,000 entities / 5,000 observations / 3,000
relations through graphmem: import, export (byte-equal), and ``search_nodes`` for every
observation (found, and how long each search takes).

The file is the one ``tests/test_mcp_reference_diff.py`` round-trips (:func:`big_file`).

Usage::

    python bench/mcp_memory_file.py                # the whole check, timed
    python bench/mcp_memory_file.py --searches 500 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ENTITIES, OBSERVATIONS_EACH, RELATIONS = 1000, 5, 3000


def big_file(
    path: Path,
    entities: int = ENTITIES,
    observations_each: int = OBSERVATIONS_EACH,
    relations: int = RELATIONS,
) -> list[dict[str, Any]]:
    """Write the reference-format file (deterministic) and return its records: by default
    the issue's 1,000 entities, 5,000 observations and 3,000 relations."""
    rng = random.Random(27)
    kinds = ["person", "organization", "project", "location", "tool"]
    syllables = "ka lo mi ren sa tu vel dor ix an be cor fi gal hu jo ny pra qui sol".split()
    # A vocabulary of ~8,000 made-up words: observations as distinct as real notes are.
    words = sorted({"".join(rng.choices(syllables, k=3)) for _ in range(9000)})
    records: list[dict[str, Any]] = []
    for i in range(entities):
        observations = [
            f"{' '.join(rng.choices(words, k=6)).capitalize()} ({i}.{k})"
            for k in range(observations_each)
        ]
        records.append(
            {
                "type": "entity",
                "name": f"Entity {i:04d}",
                "entityType": rng.choice(kinds),
                "observations": observations,
            }
        )
    pairs: set[tuple[int, int, str]] = set()
    while len(pairs) < relations:
        kind = rng.choice(["knows", "uses", "part_of"])
        pairs.add((rng.randrange(entities), rng.randrange(entities), kind))
    for a, b, kind in sorted(pairs):
        records.append(
            {
                "type": "relation",
                "from": f"Entity {a:04d}",
                "to": f"Entity {b:04d}",
                "relationType": kind,
            }
        )
    path.write_text(
        "\n".join(json.dumps(r, separators=(",", ":")) for r in records), encoding="utf-8"
    )
    return records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--searches", type=int, default=None, help="default: every observation")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    from graphmem.compat.storage import SQLiteStorage
    from graphmem.reference import ReferenceGraph

    figures: dict[str, Any] = {"load_before": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "memory.jsonl"
        records = big_file(source)
        storage = SQLiteStorage(str(Path(folder) / "big.db"))
        graph = ReferenceGraph(storage)
        start = time.perf_counter()
        figures["imported"] = graph.import_jsonl(str(source))
        figures["import_s"] = round(time.perf_counter() - start, 1)
        out = Path(folder) / "out.jsonl"
        start = time.perf_counter()
        graph.export_jsonl(str(out))
        figures["export_s"] = round(time.perf_counter() - start, 2)
        figures["export_equal"] = out.read_bytes() == source.read_bytes()
        pairs = [(r["name"], o) for r in records[:ENTITIES] for o in r["observations"]]
        if args.searches is not None:
            pairs = random.Random(1).sample(pairs, args.searches)
        took, missed = [], 0
        for name, observation in pairs:
            start = time.perf_counter()
            found = graph.search_nodes(observation, limit=5)
            took.append(time.perf_counter() - start)
            missed += name not in [e["name"] for e in found["entities"]]
        figures["searches"] = len(pairs)
        figures["missed"] = missed
        figures["search_ms_p50"] = round(statistics.median(took) * 1000, 1)
        figures["search_ms_p95"] = round(sorted(took)[int(len(took) * 0.95)] * 1000, 1)
        storage.close()
    figures["load_after"] = os.getloadavg()[0]
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 0 if figures["export_equal"] and not figures["missed"] else 1


if __name__ == "__main__":
    sys.exit(main())
