"""What forgetting costs (issue 25): one ``delete`` of a task result in a store of N results,
on a SQLite file, with the recompute from the remaining evidence, FTS5's ``optimize`` and the
WAL truncation it now does. Prints the median of a few deletes per size.

    PYTHONPATH=. python bench/forget_cost.py 1000 4000
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from graphmem import CortexMemory
from graphmem.compat.storage import SQLiteStorage

PEOPLE = ["Maya Lindqvist", "Tom Becker", "Ana Costa", "Erik Lund", "Dana Scott", "Priya Nair"]
ORGS = ["Lumen Robotics", "Harbor Bank", "Vela Labs", "Northwind", "Initech"]


def _records(n: int) -> list[dict[str, str]]:
    return [
        {
            "task_description": f"Log {i}",
            "result": f"{PEOPLE[i % 6]} met {PEOPLE[(i + 1) % 6]} of {ORGS[i % 5]} about order {i}.",
            "agent_role": "Ops",
        }
        for i in range(n)
    ]


def main(sizes: list[int]) -> None:
    for size in sizes:
        with tempfile.TemporaryDirectory() as folder:
            storage = SQLiteStorage(Path(folder) / "f.db")
            memory = CortexMemory(storage=storage, short_term_capacity=10)
            ids = memory.save_task_results(_records(size))
            times = []
            for result_id in ids[size // 2 : size // 2 + 5]:
                started = time.perf_counter()
                memory.delete(result_id)
                times.append(time.perf_counter() - started)
            storage.close()
        print(f"{size} results: delete median {statistics.median(times) * 1000:.0f} ms")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000])
