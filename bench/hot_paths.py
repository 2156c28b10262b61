"""What a context build and a per-call save cost on a persisted store, and where it goes.

On a store built by ``--build N`` (bench/speed.py's generated task results, one batch call,
``WRITE_MEMORY=1``) or given by ``--db``, in this process:

- ``context``: ``build_context_for_task`` over ``--queries`` generated tasks (after one
  unmeasured warm-up): p50 wall ms, and the SQL statements each ran (median);
- ``save``: ``--saves`` per-call ``save_task_result`` onto the store: p50 wall ms and
  statements per save (median);
- with ``--statements N``: the N statements that took longest in all, of each;
- with ``--profile``: the top entries under ``graphmem/`` of one more context and one more
  save run under cProfile (cumulative time).

The machine may be shared: the 1-minute load average is printed before and after.

Example:
    python bench/hot_paths.py --build 1000 --db /tmp/s1k.db --queries 100 --saves 30
    python bench/hot_paths.py --db /tmp/s1k.db --profile
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from speed import gen_tasks


class Statements(list[str]):
    """The statements an engine runs from now on (appended as they run), and the wall
    seconds each statement text took in all (``spent``)."""

    def __init__(self, engine: Any) -> None:
        from sqlalchemy import event

        super().__init__()
        self.spent: dict[str, float] = {}
        self._started = 0.0

        @event.listens_for(engine, "before_cursor_execute")
        def _before(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
            self.append(statement)
            self._started = time.perf_counter()

        @event.listens_for(engine, "after_cursor_execute")
        def _after(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
            took = time.perf_counter() - self._started
            self.spent[statement] = self.spent.get(statement, 0.0) + took

    def top(self, n: int) -> list[str]:
        """The ``n`` statements that took longest in all, and then forget them."""
        rows = sorted(self.spent.items(), key=lambda kv: -kv[1])[:n]
        self.spent.clear()
        return [f"{t * 1000:8.1f} ms  {' '.join(sql.split())[:150]}" for sql, t in rows]


def _timed(calls: list[Callable[[], object]], seen: list[str]) -> dict[str, float]:
    wall: list[float] = []
    cpu: list[float] = []
    statements: list[int] = []
    for call in calls:
        before = len(seen)
        start, start_cpu = time.perf_counter(), time.process_time()
        call()
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        statements.append(len(seen) - before)
    return {
        "n": len(calls),
        "p50_ms": statistics.median(wall),
        "p95_ms": sorted(wall)[int(0.95 * (len(wall) - 1))],
        "cpu_p50_ms": statistics.median(cpu),
        "statements_p50": statistics.median(statements),
    }


def _profile(call: Callable[[], object], top: int) -> list[str]:
    prof = cProfile.Profile()
    prof.enable()
    call()
    prof.disable()
    stats = pstats.Stats(prof, stream=io.StringIO())
    rows = []
    for (file, line, func), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if "/graphmem/" in file:
            where = f"graphmem/{file.split('/graphmem/', 1)[1]}:{line}({func})"
            rows.append((ct, f"{ct * 1000:8.1f} ms cum {tt * 1000:7.1f} own {nc:6d}x  {where}"))
    rows.sort(key=lambda r: -r[0])
    return [r[1] for r in rows[:top]]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--db", required=True, help="the store (built with --build N when given)")
    ap.add_argument("--build", type=int, default=0, help="build a store of N task results first")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--saves", type=int, default=30)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--statements", type=int, default=0, help="list the N costliest statements")
    a = ap.parse_args(argv)
    os.environ["WRITE_MEMORY"] = "1"
    from graphmem import CortexMemory
    from graphmem.extract.pipeline import get_analyzer

    if a.build:
        if Path(a.db).exists():
            raise SystemExit(f"{a.db} exists: --build makes a new store")
        start = time.perf_counter()
        CortexMemory(persistence_path=a.db).save_task_results(gen_tasks(a.build, 0), workers=1)
        print(f"built {a.build} results in {time.perf_counter() - start:.1f} s")
    print(f"load (1 min) {os.getloadavg()[0]:.2f}")
    mem = CortexMemory(persistence_path=a.db)
    get_analyzer()  # the model load is the first save's, not the hot path's
    seen = Statements(mem.space.database.engine)
    queries = gen_tasks(a.queries + 1, 1)

    def context(q: dict[str, Any]) -> Callable[[], object]:
        return lambda: mem.build_context_for_task(q["task_description"], agent_role=q["agent_role"])

    context(queries[-1])()  # the graph view and the caches load here
    seen.spent.clear()
    print("context", _timed([context(q) for q in queries[:-1]], seen))
    if a.statements:
        print("\n".join(["context statements, longest in all:", *seen.top(a.statements)]))
    saves = gen_tasks(a.saves + 1, 2)

    def save(t: dict[str, Any]) -> Callable[[], object]:
        return lambda: mem.save_task_result(**t)

    save(saves[-1])()
    seen.spent.clear()
    print("save   ", _timed([save(t) for t in saves[:-1]], seen))
    if a.statements:
        print("\n".join(["save statements, longest in all:", *seen.top(a.statements)]))
    if a.profile:
        print("\n".join(["context under cProfile:", *_profile(context(queries[0]), a.top)]))
        print("\n".join(["save under cProfile:", *_profile(save(gen_tasks(1, 3)[0]), a.top)]))
    print(f"load (1 min) {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
