"""Speed and memory: graphmem vs calute 0.1.5, CortexMemory on both sides, same run.

For each size N (``--sizes 1000,10000,100000``) and system, in a fresh process per measurement
(so peak RSS is that measurement's own):

- save: N generated agent task results (named people, organisations, places, products) through
  ``CortexMemory.save_task_result`` one call at a time (total, per-call p50/p95); and as a batch
  where the system has one (graphmem: ``long_term.save_many``; calute has none);
- build_context_for_task p50/p95 over ``--queries`` generated task descriptions at that size
  (stopped early after ``--context-budget`` seconds; the count measured is reported);
- reopen: time to open a persisted store of N task results again (``WRITE_MEMORY=1`` and a
  ``persistence_path`` in a temporary directory) and answer a first context build;
- peak RSS (``ru_maxrss``) of the process after each phase.

calute is measured as shipped: its facade tests ``if self.short_term:`` on an empty memory
(``len() == 0`` -> falsy), so a fresh ``CortexMemory`` never writes short-term, long-term or entity
memory; only ``contextual`` receives the results. The tier sizes after saving are reported so
this shows. calute runs in its venv worker (bench/calute_worker.py); graphmem runs in a child of
this script (``--child``).

Example:
    python bench/speed.py --sizes 1000,10000 --systems graphmem,calute
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import (
    BENCH_DIR,
    CaluteWorker,
    log,
    machine_facts,
    machine_line,
    markdown_table,
    write_results,
)

ALL_SYSTEMS = ("graphmem", "calute")

FIRST = ["Alice", "Bob", "Carol", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jamal",
         "Kofi", "Lena", "Mateo", "Nadia", "Oren", "Priya", "Quinn", "Rosa", "Sven", "Tariq"]
LAST = ["Nguyen", "Schmidt", "Okafor", "Rossi", "Tanaka", "Kowalski", "Haddad", "Larsen",
        "Moreau", "Silva", "Chen", "Ivanova", "Murphy", "Patel", "Garcia"]
ORGS = ["Acme Corp", "Initech", "Globex", "Umbrella Labs", "Stark Industries", "Wayne Enterprises",
        "OpenAI", "IBM", "Siemens", "Nordic Freight", "Helios Energy", "Bluebird Bank",
        "Vertex Analytics", "Quantum Retail", "Orbital Foods"]
CITIES = ["Berlin", "Paris", "Tokyo", "Lagos", "Toronto", "Sydney", "Madrid", "Chicago",
          "Singapore", "Nairobi", "Oslo", "Seoul", "Lima", "Warsaw", "Austin"]
PRODUCTS = ["Phoenix CRM", "Atlas API", "Nimbus Cloud", "Falcon Router", "Orion Dashboard",
            "Zephyr Mobile", "Titan Database", "Aurora Chatbot"]
ROLES = ["Data Analyst", "Researcher", "Sales Lead", "Support Agent", "Engineer", "Planner"]
TASKS = [
    "Analyze {product} sales for {org} in {city}",
    "Review the {product} contract between {org} and {org2}",
    "Prepare a briefing on {person} of {org}",
    "Investigate customer complaints about {product} in {city}",
    "Summarize the {city} office performance of {org}",
]
RESULTS = [
    "{person} from {org} reported that {product} revenue in {city} grew {n}% this quarter; "
    "{person2} will present the numbers to {org2} next week.",
    "{person} works at {org} as head of the {city} office. She met {person2} of {org2} to "
    "discuss the {product} rollout, which slipped by {n} days.",
    "Found {n} open tickets about {product}. Most came from {org2} customers in {city}; "
    "{person} at {org} owns the fix.",
    "{org} signed a {n}-month agreement with {org2} for {product}. {person} negotiated it in "
    "{city} with {person2}.",
]


def gen_tasks(n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` realistic task results (deterministic for a seed)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        v = {
            "person": f"{rng.choice(FIRST)} {rng.choice(LAST)}",
            "person2": f"{rng.choice(FIRST)} {rng.choice(LAST)}",
            "org": rng.choice(ORGS), "org2": rng.choice(ORGS), "city": rng.choice(CITIES),
            "product": rng.choice(PRODUCTS), "n": rng.randint(2, 90),
        }
        out.append({
            "task_description": rng.choice(TASKS).format(**v),
            "result": rng.choice(RESULTS).format(**v),
            "agent_role": rng.choice(ROLES),
            "importance": round(rng.uniform(0.3, 1.0), 2),
        })
    return out


def pct(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) * 1000 if values else None  # ms


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# ------------------------------------------------------------------------------------------
# graphmem child process (one measurement per process)
# ------------------------------------------------------------------------------------------


def child(measure: str, size: int, queries: int, seed: int, budget: float, path: str) -> dict:
    from graphmem import CortexMemory

    tasks = gen_tasks(size, seed)
    qtasks = gen_tasks(queries, seed + 1)
    out: dict[str, Any] = {"measure": measure, "size": size}
    if measure == "save":
        mem = CortexMemory()
        per_call = []
        t0 = time.perf_counter()
        for t in tasks:
            s = time.perf_counter()
            mem.save_task_result(**t)
            per_call.append(time.perf_counter() - s)
        out.update(total_s=time.perf_counter() - t0, p50_ms=pct(per_call, 50),
                   p95_ms=pct(per_call, 95), peak_rss_mb=peak_rss_mb())
        lat = []
        t0 = time.perf_counter()
        for q in qtasks:
            s = time.perf_counter()
            mem.build_context_for_task(q["task_description"], agent_role=q["agent_role"])
            lat.append(time.perf_counter() - s)
            if time.perf_counter() - t0 > budget:
                break
        out["context"] = {"n": len(lat), "p50_ms": pct(lat, 50), "p95_ms": pct(lat, 95),
                          "peak_rss_mb": peak_rss_mb()}
    elif measure == "batch":
        mem = CortexMemory()
        if mem.long_term is None or not hasattr(mem.long_term, "save_many"):
            return {"measure": measure, "size": size, "skipped": "no long_term.save_many"}
        records = [{"content": t["result"], "agent_id": t["agent_role"],
                    "metadata": {"task": t["task_description"][:100]},
                    "importance": t["importance"]} for t in tasks]
        t0 = time.perf_counter()
        mem.long_term.save_many(records)
        out.update(api="long_term.save_many", total_s=time.perf_counter() - t0,
                   peak_rss_mb=peak_rss_mb())
    elif measure == "reopen-write":
        os.environ["WRITE_MEMORY"] = "1"
        mem = CortexMemory(persistence_path=path)
        t0 = time.perf_counter()
        for t in tasks:
            mem.save_task_result(**t)
        out.update(total_s=time.perf_counter() - t0, peak_rss_mb=peak_rss_mb())
        close = getattr(mem, "close", None)
        if callable(close):
            close()
    elif measure == "reopen":
        os.environ["WRITE_MEMORY"] = "1"
        t0 = time.perf_counter()
        mem = CortexMemory(persistence_path=path)
        t1 = time.perf_counter()
        mem.build_context_for_task(qtasks[0]["task_description"])
        out.update(open_s=t1 - t0, first_context_s=time.perf_counter() - t1,
                   peak_rss_mb=peak_rss_mb())
    return out


def run_graphmem(measure: str, size: int, args: argparse.Namespace, path: str = "") -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", measure, "--sizes", str(size),
           "--queries", str(args.queries), "--seed", str(args.seed),
           "--context-budget", str(args.context_budget), "--path", path]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines() or ["?"]
        errors = [ln for ln in lines if "Error" in ln or "Exception" in ln] or lines
        return {"measure": measure, "size": size, "error": errors[-1][:300]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------------------
# calute (worker process per measurement)
# ------------------------------------------------------------------------------------------


def run_calute(measure: str, size: int, args: argparse.Namespace, path: str = "") -> dict:
    tasks = gen_tasks(size, args.seed)
    qtasks = gen_tasks(args.queries, args.seed + 1)
    env = {"WRITE_MEMORY": "1"} if measure.startswith("reopen") else {"WRITE_MEMORY": "0"}
    with tempfile.TemporaryDirectory() as cwd:  # calute writes .calute_memory/ into its cwd
        w = CaluteWorker(args.calute_venv, env=env, cwd=cwd) if args.calute_venv else \
            CaluteWorker(env=env, cwd=cwd)
        try:
            out: dict[str, Any] = {"measure": measure, "size": size}
            if measure == "save":
                w.call("cortex_new")
                per_call: list[float] = []
                total = 0.0
                for i in range(0, size, 5000):
                    r = w.call("cortex_save_task_results", tasks=tasks[i : i + 5000])
                    per_call += r["per_call"]
                    total += r["seconds"]
                out.update(total_s=total, p50_ms=pct(per_call, 50), p95_ms=pct(per_call, 95),
                           peak_rss_mb=r["peak_rss_mb"], tiers=r["tiers"])
                lat: list[float] = []
                t0 = time.perf_counter()
                for i in range(0, len(qtasks), 10):
                    r = w.call("cortex_build_context", tasks=qtasks[i : i + 10])
                    lat += r["latencies"]
                    if time.perf_counter() - t0 > args.context_budget:
                        break
                out["context"] = {"n": len(lat), "p50_ms": pct(lat, 50), "p95_ms": pct(lat, 95),
                                  "peak_rss_mb": r["peak_rss_mb"]}
            elif measure == "batch":
                out["skipped"] = "calute has no batch save"
            elif measure == "reopen-write":
                w.call("cortex_new", persistence_path=path)
                total = 0.0
                for i in range(0, size, 5000):
                    r = w.call("cortex_save_task_results", tasks=tasks[i : i + 5000])
                    total += r["seconds"]
                out.update(total_s=total, tiers=r["tiers"])
            elif measure == "reopen":
                r = w.call("cortex_new", persistence_path=path)
                c = w.call("cortex_build_context", tasks=qtasks[:1])
                out.update(open_s=r["seconds"], first_context_s=c["latencies"][0],
                           tiers=r["tiers"], peak_rss_mb=c["peak_rss_mb"])
            return out
        finally:
            w.close()


# ------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000", help="comma-separated N")
    ap.add_argument("--systems", default=",".join(ALL_SYSTEMS))
    ap.add_argument("--queries", type=int, default=100, help="context builds per size")
    ap.add_argument("--context-budget", type=float, default=60.0,
                    help="seconds of context builds per size at most")
    ap.add_argument("--skip", default="", help="comma-separated phases to skip: batch,reopen")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--calute-venv", default=None)
    ap.add_argument("--out", default="speed")
    ap.add_argument("--child", default="", help=argparse.SUPPRESS)
    ap.add_argument("--path", default="", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    if args.child:
        print(json.dumps(child(args.child, sizes[0], args.queries, args.seed,
                               args.context_budget, args.path)))
        return

    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    results: dict[str, list[dict[str, Any]]] = {}
    for name in [s.strip() for s in args.systems.split(",") if s.strip()]:
        if name == "graphmem":
            probe = subprocess.run([sys.executable, "-c", "from graphmem import CortexMemory"],
                                   capture_output=True, text=True)
            if probe.returncode != 0:
                log("graphmem skipped: cannot import CortexMemory from graphmem yet")
                continue
            runner = run_graphmem
        elif name == "calute":
            runner = run_calute
        else:
            raise SystemExit(f"unknown system {name!r}")
        rows = []
        for size in sizes:
            row: dict[str, Any] = {"size": size}
            log(f"{name}: N={size}: save + context")
            row["save"] = runner("save", size, args)
            if "batch" not in skip:
                log(f"{name}: N={size}: batch save")
                row["batch"] = runner("batch", size, args)
            if "reopen" not in skip:
                with tempfile.TemporaryDirectory(dir=BENCH_DIR / "results"
                                                 if (BENCH_DIR / "results").is_dir() else None) as d:
                    path = str(Path(d) / "memory.db")
                    log(f"{name}: N={size}: fill persisted store, then reopen")
                    row["reopen_write"] = runner("reopen-write", size, args, path)
                    row["reopen"] = runner("reopen", size, args, path)
            rows.append(row)
            log(f"{name}: N={size}: {json.dumps(row, default=str)[:400]}")
        results[name] = rows

    print(f"## Speed: CortexMemory, graphmem vs calute 0.1.5\n\n{machine_line()}\n")
    table = []
    for name, rows in results.items():
        for row in rows:
            s, b, r = row["save"], row.get("batch", {}), row.get("reopen", {})
            c = s.get("context", {})
            table.append([
                name, row["size"], s.get("total_s", s.get("error", "")), s.get("p50_ms"),
                s.get("p95_ms"), b.get("total_s", b.get("skipped", b.get("error", ""))),
                c.get("p50_ms"), c.get("p95_ms"), c.get("n"), r.get("open_s", r.get("error", "")),
                max(x.get("peak_rss_mb") or 0 for x in (s, b, r)),
            ])
    print(markdown_table(["system", "N", "save total s", "save p50 ms", "save p95 ms",
                          "batch s", "context p50 ms", "context p95 ms", "contexts",
                          "reopen s", "peak RSS MB"], table))
    print("\ncalute as shipped: its facade never writes short/long-term/entity tiers on a fresh "
          "memory (`if self.short_term:` on an empty memory); see tiers in the JSON.")
    path = write_results(args.out, {"benchmark": "speed", "machine": machine_facts(),
                                    "sizes": sizes, "results": results})
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
