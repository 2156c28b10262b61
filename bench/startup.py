"""Start-up times a newcomer feels: process wall seconds, median of a few runs each.

Measured, each in a fresh process:

- ``import``: ``python -c "import graphmem"``;
- ``cortex``: ``import graphmem`` + ``CortexMemory()`` (an in-memory store);
- ``stats``, ``search``, ``relations``, ``entities``: ``graphmem --db FILE <command>`` on a
  small store (``--results`` generated task results, bench/speed.py's generator, saved once
  before the clock starts);
- ``mcp``: ``graphmem --db FILE mcp`` over stdio, from spawning the server until the official
  MCP client's ``tools/list`` answers (the client's own import is not timed);
- ``first_save``: ``import graphmem`` + ``CortexMemory()`` + one ``save_task_result`` (what
  the first save pays: the spaCy pipeline's load), for reference.

Each line gives the median wall seconds, each run's, and (but for ``mcp``, whose server
outlives the answer) the median CPU seconds of the process.

Byte code: graphmem is compiled before the clock starts and every process may read and write
its byte-code cache (``PYTHONDONTWRITEBYTECODE``, set in some shells, is dropped for them):
without it each start compiles graphmem's modules again (0.06-0.1 s CPU for ``stats``).

The machine may be shared: the 1-minute load average is printed before and after.

Example:
    python bench/startup.py --runs 5
    python bench/startup.py --runs 3 --only cortex,stats,mcp --json /tmp/startup.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from speed import ORGS, gen_tasks

BENCH_DIR = Path(__file__).resolve().parent
PYTHON = sys.executable
#: The console script next to this interpreter (what a user runs), else the module.
_SCRIPT = Path(PYTHON).with_name("graphmem")
GRAPHMEM = [str(_SCRIPT)] if _SCRIPT.exists() else [PYTHON, "-m", "graphmem.cli"]
#: The targets of issue 36 (seconds), where there is one.
TARGETS = {"cortex": 0.5, "stats": 0.4, "mcp": 1.0}


#: The CPU seconds (user + system) of each process run by :func:`_wall`, by measure.
CPU: dict[str, list[float]] = {}
#: The environment of the measured processes: they use the byte-code cache, as an installed
#: package does.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _compile_graphmem() -> None:
    """Byte-compile the graphmem the measured processes import (not timed)."""
    code = (
        "import compileall, graphmem, os\n"
        "compileall.compile_dir(os.path.dirname(graphmem.__file__), quiet=1)\n"
    )
    subprocess.run([PYTHON, "-c", code], check=True, env=ENV)


def _wall(argv: list[str], env: dict[str, str] | None = None, name: str = "") -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    CPU.setdefault(name, []).append(cpu)
    return took


def _make_store(path: Path, results: int) -> None:
    """A persisted store of ``results`` generated task results (not timed)."""
    code = (
        "import json, sys\n"
        "from graphmem import CortexMemory\n"
        "tasks = json.loads(sys.stdin.read())\n"
        f"m = CortexMemory(persistence_path={str(path)!r})\n"
        "m.save_task_results(tasks, workers=1)\n"
    )
    tasks = gen_tasks(results, seed=36)
    env = {**os.environ, "WRITE_MEMORY": "1"}
    subprocess.run([PYTHON, "-c", code], input=json.dumps(tasks), text=True, check=True, env=env)


def _mcp_once(db: Path) -> float:
    """Seconds from spawning ``graphmem mcp`` (stdio) until ``tools/list`` answers."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=GRAPHMEM[0],
        args=[*GRAPHMEM[1:], "--db", str(db), "mcp"],
        env=ENV,  # the SDK passes on only a few variables (not PYTHONPATH)
    )

    async def main() -> float:
        start = time.perf_counter()
        async with Client(params) as client:
            tools = (await client.list_tools()).tools
            took = time.perf_counter() - start
        assert tools, "the server lists no tools"
        return took

    return asyncio.run(main())


def measures(db: Path) -> dict[str, object]:
    """What each measure runs: an argv, or a callable returning seconds."""
    return {
        "import": [PYTHON, "-c", "import graphmem"],
        "cortex": [PYTHON, "-c", "from graphmem import CortexMemory; CortexMemory()"],
        "stats": [*GRAPHMEM, "--db", str(db), "stats"],
        "search": [*GRAPHMEM, "--db", str(db), "search", "quarterly report"],
        "relations": [*GRAPHMEM, "--db", str(db), "relations", ORGS[0]],
        "entities": [*GRAPHMEM, "--db", str(db), "entities"],
        "mcp": lambda: _mcp_once(db),
        "first_save": [
            PYTHON,
            "-c",
            "from graphmem import CortexMemory; "
            "CortexMemory().save_task_result('task', 'Acme hired Alice Johnson.', 'Researcher')",
        ],
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="runs per measure (default: 5)")
    ap.add_argument("--results", type=int, default=200, help="task results in the store")
    ap.add_argument("--only", default="", help="comma-separated measures (default: all)")
    ap.add_argument("--json", help="write the figures here too")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="graphmem-startup-") as tmp:
        db = Path(tmp) / "small.db"
        _make_store(db, a.results)
        _compile_graphmem()
        todo = measures(db)
        names = [n for n in a.only.split(",") if n] or list(todo)
        load_before = os.getloadavg()[0]
        out: dict[str, dict[str, float | list[float]]] = {}
        for name in names:
            how = todo[name]
            runs = [
                how() if callable(how) else _wall(how, ENV, name)  # type: ignore[operator,arg-type]
                for _ in range(a.runs)
            ]
            out[name] = {"median_s": statistics.median(runs), "runs_s": runs}
            target = TARGETS.get(name)
            mark = "" if target is None else f"  (target <= {target:g} s)"
            if name in CPU:  # a loaded machine stretches the wall time; the CPU time less
                out[name]["cpu_median_s"] = statistics.median(CPU[name])
                mark = f"  cpu {statistics.median(CPU[name]):.3f} s" + mark
            print(
                f"{name:<11} median {statistics.median(runs):6.3f} s   "
                f"runs {' '.join(f'{r:.3f}' for r in runs)}{mark}",
                flush=True,
            )
        load_after = os.getloadavg()[0]
        print(
            f"load (1 min) before {load_before:.2f}, after {load_after:.2f}, {os.cpu_count()} cores"
        )
        if a.json:
            Path(a.json).write_text(
                json.dumps({"measures": out, "load": [load_before, load_after]}, indent=2)
            )


if __name__ == "__main__":
    main()
