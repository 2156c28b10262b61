"""Speed and memory: graphmem vs calute 0.1.5, CortexMemory on both sides, same run.

For each size N (``--sizes 1000,10000,100000``) and system, in a fresh process per measurement
(so each peak RSS, ``ru_maxrss``, is that measurement's own):

graphmem (children of this script, ``--child``):

- ``batch``: N generated agent task results through the facade batch API
  ``CortexMemory.save_task_results(list, batch_size=--batch-size)`` into a persisted store
  (``WRITE_MEMORY=1``, ``persistence_path`` in a temporary directory): wall and CPU seconds,
  items/s, tier sizes. The spaCy pipeline is loaded and warmed up before the clock starts, as
  for ``raw``. Then, on that store, ``build_context_for_task`` over ``--queries``
  generated task descriptions (at least ``--min-queries``, then stopped after
  ``--context-budget`` seconds): p50/p95 wall and CPU (``time.process_time``) latency.
  With ``--profile-size N`` one more context build at that size runs under cProfile and the
  top cumulative entries under ``graphmem/`` are kept.
- ``reopen``: a fresh process opens that persisted store (``CortexMemory(persistence_path=...)``)
  and builds a first context: seconds for each.
- ``sample``: ``--per-call-sample`` more ``save_task_result`` calls appended one by one to that
  persisted store of N results (per-call p50/p95 at that store size).
- ``percall``: for N <= ``--per-call-max`` only, N ``save_task_result`` calls into a fresh
  in-memory ``CortexMemory()`` (total, p50/p95).
- ``raw`` (once per run, on the first ``--raw-n`` generated results): spaCy ``nlp.pipe`` with the
  pipeline graphmem loads and the same components, over exactly the texts and modes graphmem's
  batch analyses per task result: the entity-tier text ``"<task> <result>"`` with parser + NER
  (graphmem's relation mode) and each distinct result text once with NER (entity mode; graphmem
  caches the analysis so long-term and contextual share it; short-term does no NLP). Then the
  like-for-like pair: ``LongTermMemory.save_many`` over the results vs raw NER-only
  ``nlp.pipe`` over the same results.

calute (its venv worker, bench/calute_worker.py): per-call ``save_task_result`` of N results
(calute has no batch API), context p50/p95, and for N <= ``--calute-reopen-max`` a persisted store
reopened. calute is measured as shipped: its facade tests ``if self.short_term:`` on an empty
memory (``len() == 0`` -> falsy), so a fresh ``CortexMemory`` never writes short-term, long-term or
entity memory; only ``contextual`` receives the results. Tier sizes are reported so this shows.
The worker gives wall time only.

The machine may be shared: ``os.getloadavg()`` is recorded before and after every measurement;
a context or reopen measurement whose 1-minute load exceeded ``--extreme-load`` x cores is run
once more and both runs are kept (the rerun is the one reported).

Example:
    python bench/speed.py --sizes 1000,10000 --per-call-max 1000 --json /tmp/speed.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
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
)

ALL_SYSTEMS = ("graphmem", "calute")

FIRST = [
    "Alice",
    "Bob",
    "Carol",
    "Dmitri",
    "Elena",
    "Farid",
    "Grace",
    "Hiro",
    "Ines",
    "Jamal",
    "Kofi",
    "Lena",
    "Mateo",
    "Nadia",
    "Oren",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tariq",
]
LAST = [
    "Nguyen",
    "Schmidt",
    "Okafor",
    "Rossi",
    "Tanaka",
    "Kowalski",
    "Haddad",
    "Larsen",
    "Moreau",
    "Silva",
    "Chen",
    "Ivanova",
    "Murphy",
    "Patel",
    "Garcia",
]
ORGS = [
    "Acme Corp",
    "Initech",
    "Globex",
    "Umbrella Labs",
    "Stark Industries",
    "Wayne Enterprises",
    "OpenAI",
    "IBM",
    "Siemens",
    "Nordic Freight",
    "Helios Energy",
    "Bluebird Bank",
    "Vertex Analytics",
    "Quantum Retail",
    "Orbital Foods",
]
CITIES = [
    "Berlin",
    "Paris",
    "Tokyo",
    "Lagos",
    "Toronto",
    "Sydney",
    "Madrid",
    "Chicago",
    "Singapore",
    "Nairobi",
    "Oslo",
    "Seoul",
    "Lima",
    "Warsaw",
    "Austin",
]
PRODUCTS = [
    "Phoenix CRM",
    "Atlas API",
    "Nimbus Cloud",
    "Falcon Router",
    "Orion Dashboard",
    "Zephyr Mobile",
    "Titan Database",
    "Aurora Chatbot",
]
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
            "org": rng.choice(ORGS),
            "org2": rng.choice(ORGS),
            "city": rng.choice(CITIES),
            "product": rng.choice(PRODUCTS),
            "n": rng.randint(2, 90),
        }
        out.append(
            {
                "task_description": rng.choice(TASKS).format(**v),
                "result": rng.choice(RESULTS).format(**v),
                "agent_role": rng.choice(ROLES),
                "importance": round(rng.uniform(0.3, 1.0), 2),
            }
        )
    return out


def pct(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) * 1000 if values else None  # ms


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# ------------------------------------------------------------------------------------------
# graphmem child process (one measurement per process)
# ------------------------------------------------------------------------------------------


def _tiers(mem: Any) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for name in ("short_term", "long_term", "entity_memory", "contextual"):
        tier = getattr(mem, name, None)
        try:
            out[name] = None if tier is None else len(tier)
        except TypeError:
            out[name] = None
    return out


def _contexts(mem: Any, qtasks: list[dict], min_n: int, budget: float) -> dict[str, Any]:
    wall: list[float] = []
    cpu: list[float] = []
    t0 = time.perf_counter()
    for q in qtasks:
        s, c = time.perf_counter(), time.process_time()
        mem.build_context_for_task(q["task_description"], agent_role=q["agent_role"])
        wall.append(time.perf_counter() - s)
        cpu.append(time.process_time() - c)
        if len(wall) >= min_n and time.perf_counter() - t0 > budget:
            break
    return {
        "n": len(wall),
        "p50_ms": pct(wall, 50),
        "p95_ms": pct(wall, 95),
        "cpu_p50_ms": pct(cpu, 50),
        "cpu_p95_ms": pct(cpu, 95),
        "peak_rss_mb": peak_rss_mb(),
    }


def _profile_context(mem: Any, task: dict, top: int = 10) -> list[str]:
    import cProfile
    import io
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    mem.build_context_for_task(task["task_description"], agent_role=task["agent_role"])
    prof.disable()
    stats = pstats.Stats(prof, stream=io.StringIO())
    rows = []
    for (file, line, func), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if "/graphmem/" in file:
            rel = file.split("/graphmem/", 1)[1]
            rows.append(
                (
                    ct,
                    f"{ct * 1000:8.1f} ms cum  {tt * 1000:7.1f} ms own  {nc:6d} calls  "
                    f"graphmem/{rel}:{line}({func})",
                )
            )
    rows.sort(key=lambda r: -r[0])
    total = sum(tt for (_f, _l, _n), (_c, _nc, tt, _ct, _cl) in stats.stats.items())  # type: ignore[attr-defined]
    return [f"total {total * 1000:.1f} ms (under cProfile)"] + [r[1] for r in rows[:top]]


def _per_call(mem: Any, tasks: list[dict], queries: list[dict] | None = None) -> dict[str, Any]:
    """Per-call saves; with ``queries``, a context is built right after each save (an agent's
    loop: every context then finds the graph changed since the last one)."""
    wall: list[float] = []
    cpu: list[float] = []
    after_save: list[float] = []
    t0, c0 = time.perf_counter(), time.process_time()
    for i, t in enumerate(tasks):
        s, c = time.perf_counter(), time.process_time()
        mem.save_task_result(**t)
        wall.append(time.perf_counter() - s)
        cpu.append(time.process_time() - c)
        if queries:
            q = queries[i % len(queries)]
            s = time.perf_counter()
            mem.build_context_for_task(q["task_description"], agent_role=q["agent_role"])
            after_save.append(time.perf_counter() - s)
    out = {
        "n": len(tasks),
        "total_s": time.perf_counter() - t0,
        "cpu_s": time.process_time() - c0,
        "p50_ms": pct(wall, 50),
        "p95_ms": pct(wall, 95),
        "cpu_p50_ms": pct(cpu, 50),
        "cpu_p95_ms": pct(cpu, 95),
    }
    if queries:
        out.update(
            context_after_save_p50_ms=pct(after_save, 50),
            context_after_save_p95_ms=pct(after_save, 95),
        )
    return out


def _commit() -> str:
    found = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent,
    )
    return found.stdout.strip()


def _warm_pipeline() -> Any:
    """Load spaCy's pipeline and run it once, so that no timed run pays the model load."""
    from graphmem.extract.pipeline import get_analyzer

    an = get_analyzer()
    an.nlp("warm up", disable=an._relation_disable)
    return an


def _raw(tasks: list[dict], per_call: int) -> dict[str, Any]:
    """Raw spaCy over exactly the texts graphmem analyses per task result: the task and the
    result, apart, with the parser and NER (the entity tier is on), in ``nlp.pipe`` batches;
    then ``per_call`` results one ``nlp.pipe([task, result])`` call each (what one
    ``save_task_result`` analyses). And the like-for-like pair of issue 4:
    ``LongTermMemory.save_many`` vs raw NER-only over the same results."""
    from graphmem import LongTermMemory

    an = _warm_pipeline()
    nlp = an.nlp
    bs = 256
    texts = [text for t in tasks for text in (t["task_description"], t["result"])]
    out: dict[str, Any] = {
        "n": len(tasks),
        "pipe_names": nlp.pipe_names,
        "entity_mode_disabled": an._entity_disable,
        "relation_mode_disabled": an._relation_disable,
    }

    def timed(texts: list[str], disable: list[str]) -> tuple[float, float]:
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in nlp.pipe(texts, disable=disable, batch_size=bs):
            pass
        return time.perf_counter() - t0, time.process_time() - c0

    wall, cpu = timed(texts, an._relation_disable)
    out["raw_facade_texts"] = {"texts": len(texts), "wall_s": wall, "cpu_s": cpu}
    calls: list[float] = []
    calls_cpu: list[float] = []
    for t in tasks[:per_call]:
        s, c = time.perf_counter(), time.process_time()
        for _ in nlp.pipe([t["task_description"], t["result"]], disable=an._relation_disable):
            pass
        calls.append(time.perf_counter() - s)
        calls_cpu.append(time.process_time() - c)
    out["raw_per_call"] = {
        "n": len(calls),
        "p50_ms": pct(calls, 50),
        "p95_ms": pct(calls, 95),
        "cpu_p50_ms": pct(calls_cpu, 50),
    }
    records = [
        {
            "content": t["result"],
            "agent_id": t["agent_role"],
            "metadata": {"task": t["task_description"][:100]},
            "importance": t["importance"],
        }
        for t in tasks
    ]
    ner_w2, ner_c2 = timed([r["content"] for r in records], an._entity_disable)
    ltm = LongTermMemory(max_items=None)
    t0, c0 = time.perf_counter(), time.process_time()
    ltm.save_many(records, batch_size=bs)
    out["long_term_save_many"] = {
        "n": len(records),
        "wall_s": time.perf_counter() - t0,
        "cpu_s": time.process_time() - c0,
        "items": len(ltm),
    }
    out["raw_ner_same_texts"] = {"n": len(records), "wall_s": ner_w2, "cpu_s": ner_c2}
    out["peak_rss_mb"] = peak_rss_mb()
    return out


def _fts5_floor(path: str, qtasks: list[dict], min_n: int, budget: float) -> dict[str, Any]:
    """A bare FTS5 BM25 top-50 query per context task on the same store (the reference a
    context build cannot beat: it has to find these words first), timed like the contexts."""
    from graphmem.store.engine import SQLITE_MODULE  # the SQLite that wrote the store's FTS5
    from graphmem.store.query_text import fts_query_from_text

    conn = SQLITE_MODULE.connect(f"file:{path}?mode=ro", uri=True)
    sql = (
        "SELECT rowid, bm25(texts_fts) FROM texts_fts WHERE texts_fts MATCH ? "
        "ORDER BY bm25(texts_fts) LIMIT 50"
    )
    queries = [q for q in (fts_query_from_text(t["task_description"]) for t in qtasks) if q]
    conn.execute(sql, (queries[-1],)).fetchall()  # warm the page cache, as for the contexts
    wall: list[float] = []
    t0 = time.perf_counter()
    for fts in queries:
        s = time.perf_counter()
        conn.execute(sql, (fts,)).fetchall()
        wall.append(time.perf_counter() - s)
        if len(wall) >= min_n and time.perf_counter() - t0 > budget:
            break
    conn.close()
    return {"n": len(wall), "p50_ms": pct(wall, 50), "p95_ms": pct(wall, 95)}


def child(measure: str, size: int, a: argparse.Namespace) -> dict:
    from graphmem import CortexMemory

    out: dict[str, Any] = {"measure": measure, "size": size}
    qtasks = gen_tasks(a.queries, a.seed + 1)
    if measure == "raw":
        out.update(_raw(gen_tasks(size, a.seed), a.per_call_sample))
    elif measure == "batch":
        os.environ["WRITE_MEMORY"] = "1"
        tasks = gen_tasks(size, a.seed)
        mem = CortexMemory(persistence_path=a.path)
        _warm_pipeline()  # as in ``raw``: the model load is not ingest throughput
        t0, c0 = time.perf_counter(), time.process_time()
        mem.save_task_results(tasks, batch_size=a.batch_size, progress=False, workers=a.workers)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        out.update(
            api=f"save_task_results(batch_size={a.batch_size}, workers={a.workers})",
            workers=a.workers,
            workers_cpu_s=children.ru_utime + children.ru_stime,
            total_s=wall,
            cpu_s=cpu,
            items_per_s=size / wall,
            items_per_cpu_s=size / cpu,
            peak_rss_mb=peak_rss_mb(),
            tiers=_tiers(mem),
        )
        if a.measure_only_batch:
            return out
        Path(a.path + ".build.json").write_text(
            json.dumps(dict(out, commit=_commit(), finished=time.strftime("%Y-%m-%d %H:%M:%S")))
        )
        out["context"] = _contexts(mem, qtasks, a.min_queries, a.context_budget)
        out["fts5"] = _fts5_floor(a.path, qtasks, a.min_queries, a.context_budget)
        if a.profile_size == size:
            out["profile"] = _profile_context(mem, qtasks[0])
    elif measure == "context":
        os.environ["WRITE_MEMORY"] = "1"
        mem = CortexMemory(persistence_path=a.path)
        warm = qtasks[-1]  # not measured: loads the pipeline and the graph view (see reopen)
        mem.build_context_for_task(warm["task_description"], agent_role=warm["agent_role"])
        out.update(
            context=_contexts(mem, qtasks, a.min_queries, a.context_budget),
            fts5=_fts5_floor(a.path, qtasks, a.min_queries, a.context_budget),
            peak_rss_mb=peak_rss_mb(),
            tiers=_tiers(mem),
        )
        if a.profile_size == size:
            out["profile"] = _profile_context(mem, qtasks[0])
    elif measure == "reopen":
        os.environ["WRITE_MEMORY"] = "1"
        t0, c0 = time.perf_counter(), time.process_time()
        mem = CortexMemory(persistence_path=a.path)
        t1, c1 = time.perf_counter(), time.process_time()
        mem.build_context_for_task(
            qtasks[0]["task_description"], agent_role=qtasks[0]["agent_role"]
        )
        out.update(
            open_s=t1 - t0,
            open_cpu_s=c1 - c0,
            first_context_s=time.perf_counter() - t1,
            first_context_cpu_s=time.process_time() - c1,
            total_s=time.perf_counter() - t0,
            peak_rss_mb=peak_rss_mb(),
            tiers=_tiers(mem),
        )
    elif measure == "sample":
        os.environ["WRITE_MEMORY"] = "1"
        mem = CortexMemory(persistence_path=a.path)
        out.update(
            _per_call(mem, gen_tasks(a.per_call_sample, a.seed + 2), qtasks),
            store="persisted",
            peak_rss_mb=peak_rss_mb(),
        )
    elif measure == "percall":
        mem = CortexMemory()
        out.update(
            _per_call(mem, gen_tasks(size, a.seed)),
            store="in-memory",
            peak_rss_mb=peak_rss_mb(),
            tiers=_tiers(mem),
        )
    return out


def run_graphmem(
    measure: str,
    size: int,
    a: argparse.Namespace,
    path: str = "",
    workers: int | None = None,
    only_batch: bool = False,
) -> dict:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        measure,
        "--sizes",
        str(size),
        "--queries",
        str(a.queries),
        "--min-queries",
        str(a.min_queries),
        "--seed",
        str(a.seed),
        "--context-budget",
        str(a.context_budget),
        "--batch-size",
        str(a.batch_size),
        "--per-call-sample",
        str(a.per_call_sample),
        "--profile-size",
        str(a.profile_size),
        "--workers",
        str(workers if workers is not None else a.workers),
        "--path",
        path,
    ]
    if only_batch:
        cmd.append("--measure-only-batch")
    before = load()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines() or ["?"]
        errors = [ln for ln in lines if "Error" in ln or "Exception" in ln] or lines
        return {
            "measure": measure,
            "size": size,
            "error": errors[-1][:300],
            "load_before": before,
            "load_after": load(),
        }
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res.update(load_before=before, load_after=load())
    return res


# ------------------------------------------------------------------------------------------
# calute (worker process per measurement)
# ------------------------------------------------------------------------------------------


def run_calute(measure: str, size: int, a: argparse.Namespace, path: str = "") -> dict:
    tasks = gen_tasks(size, a.seed)
    qtasks = gen_tasks(a.queries, a.seed + 1)
    env = {"WRITE_MEMORY": "1"} if measure.startswith("reopen") else {"WRITE_MEMORY": "0"}
    before = load()
    with tempfile.TemporaryDirectory() as cwd:  # calute writes .calute_memory/ into its cwd
        w = (
            CaluteWorker(a.calute_venv, env=env, cwd=cwd)
            if a.calute_venv
            else CaluteWorker(env=env, cwd=cwd)
        )
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
                out.update(
                    total_s=total,
                    p50_ms=pct(per_call, 50),
                    p95_ms=pct(per_call, 95),
                    items_per_s=size / total if total else None,
                    peak_rss_mb=r["peak_rss_mb"],
                    tiers=r["tiers"],
                )
                lat: list[float] = []
                t0 = time.perf_counter()
                for i in range(0, len(qtasks), 10):
                    r = w.call("cortex_build_context", tasks=qtasks[i : i + 10])
                    lat += r["latencies"]
                    if len(lat) >= a.min_queries and time.perf_counter() - t0 > a.context_budget:
                        break
                out["context"] = {
                    "n": len(lat),
                    "p50_ms": pct(lat, 50),
                    "p95_ms": pct(lat, 95),
                    "peak_rss_mb": r["peak_rss_mb"],
                }
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
                out.update(
                    open_s=r["seconds"],
                    first_context_s=c["latencies"][0],
                    total_s=r["seconds"] + c["latencies"][0],
                    tiers=r["tiers"],
                    peak_rss_mb=c["peak_rss_mb"],
                )
            out.update(load_before=before, load_after=load())
            return out
        except RuntimeError as exc:
            return {
                "measure": measure,
                "size": size,
                "error": str(exc)[:300],
                "load_before": before,
                "load_after": load(),
            }
        finally:
            w.close()


# ------------------------------------------------------------------------------------------


def _extreme(res: dict, a: argparse.Namespace) -> bool:
    cores = os.cpu_count() or 1
    return (
        max(res.get("load_before", [0])[0], res.get("load_after", [0])[0]) > a.extreme_load * cores
    )


def _with_rerun(fn: Any, measure: str, size: int, a: argparse.Namespace, path: str = "") -> dict:
    res = fn(measure, size, a, path)
    if _extreme(res, a) and "error" not in res:
        log(
            f"  load {res.get('load_before')} -> {res.get('load_after')} extreme: rerunning "
            f"{measure}"
        )
        again = fn(measure, size, a, path)
        again["first_run_under_extreme_load"] = res
        return again
    return res


def run_size_graphmem(size: int, a: argparse.Namespace) -> dict[str, Any]:
    row: dict[str, Any] = {"size": size, "load_start": load()}
    with tempfile.TemporaryDirectory(dir=a.tmp_dir or None) as d:
        if a.keep_stores:
            Path(a.keep_stores).mkdir(parents=True, exist_ok=True)
        path = str(Path(a.keep_stores or d) / f"graphmem-{size}.db")
        built = Path(path + ".build.json")
        if a.keep_stores and built.exists():
            log(f"graphmem: N={size}: reusing {path} (built {built.read_text()[:300]}); contexts")
            row["batch"] = dict(json.loads(built.read_text()), reused=True)
            row["batch"].update(run_graphmem("context", size, a, path))
        else:
            if a.keep_stores:
                for leftover in Path(a.keep_stores).glob(f"graphmem-{size}.db*"):
                    leftover.unlink()  # an unfinished build: start again
            log(f"graphmem: N={size}: batch save_task_results into {path}, then contexts")
            row["batch"] = run_graphmem("batch", size, a, path, workers=1)
        log(f"  {json.dumps(row['batch'], default=str)[:600]}")
        for workers in a.batch_workers:
            if workers == 1:
                continue
            log(f"graphmem: N={size}: batch with {workers} analysis workers (throughput only)")
            other = str(Path(d) / f"batch-w{workers}.db")
            row[f"batch_w{workers}"] = run_graphmem(
                "batch", size, a, other, workers=workers, only_batch=True
            )
            log(f"  {json.dumps(row[f'batch_w{workers}'], default=str)[:400]}")
        if "error" not in row["batch"]:
            log(f"graphmem: N={size}: reopen + first context")
            row["reopen"] = _with_rerun(run_graphmem, "reopen", size, a, path)
            log(f"  {json.dumps(row['reopen'], default=str)[:400]}")
            if a.per_call_sample > 0:
                log(
                    f"graphmem: N={size}: {a.per_call_sample} per-call saves (each followed by "
                    f"a context) onto a copy of the store"
                )
                sample_path = str(Path(d) / "sample.db")
                for suffix in ("", "-wal", "-shm"):
                    if Path(path + suffix).exists():
                        shutil.copyfile(path + suffix, sample_path + suffix)
                row["sample"] = run_graphmem("sample", size, a, sample_path)
                log(f"  {json.dumps(row['sample'], default=str)[:400]}")
    if size <= a.per_call_max:
        log(f"graphmem: N={size}: per-call save_task_result x {size} (in-memory)")
        row["percall"] = run_graphmem("percall", size, a)
        log(f"  {json.dumps(row['percall'], default=str)[:400]}")
    row["load_end"] = load()
    return row


def run_size_calute(size: int, a: argparse.Namespace) -> dict[str, Any]:
    row: dict[str, Any] = {"size": size, "load_start": load()}
    log(f"calute: N={size}: per-call save + contexts")
    row["save"] = run_calute("save", size, a)
    log(f"  {json.dumps(row['save'], default=str)[:500]}")
    if size <= a.calute_reopen_max:
        with tempfile.TemporaryDirectory(dir=a.tmp_dir or None) as d:
            path = str(Path(d) / "calute_memory")
            log(f"calute: N={size}: fill persisted store, then reopen")
            row["reopen_write"] = run_calute("reopen-write", size, a, path)
            row["reopen"] = _with_rerun(run_calute, "reopen", size, a, path)
            log(f"  {json.dumps(row['reopen'], default=str)[:400]}")
    row["load_end"] = load()
    return row


def report(results: dict[str, Any], a: argparse.Namespace) -> str:
    f = lambda v, d=1: "" if v is None else (f"{v:,.{d}f}" if isinstance(v, float) else f"{v:,}")  # noqa: E731
    lines = [f"{machine_line()}\n"]
    rows = []
    for r in results.get("graphmem", []):
        b, ro, s, pc = (
            r.get("batch", {}),
            r.get("reopen", {}),
            r.get("sample", {}),
            r.get("percall", {}),
        )
        c = b.get("context", {})
        rows.append(
            [
                "graphmem",
                r["size"],
                b.get("total_s", b.get("error")),
                b.get("items_per_s"),
                b.get("items_per_cpu_s"),
                pc.get("total_s"),
                pc.get("p50_ms"),
                pc.get("p95_ms"),
                s.get("p50_ms"),
                s.get("p95_ms"),
                c.get("p50_ms"),
                c.get("p95_ms"),
                c.get("cpu_p50_ms"),
                c.get("n"),
                ro.get("open_s", ro.get("error")),
                ro.get("first_context_s"),
                max([x.get("peak_rss_mb") or 0 for x in (b, ro, s, pc, c)]),
                f"{r['load_start'][0]}->{r['load_end'][0]}",
            ]
        )
    for r in results.get("calute", []):
        s, ro = r.get("save", {}), r.get("reopen", {})
        c = s.get("context", {})
        rows.append(
            [
                "calute",
                r["size"],
                "no batch API",
                None,
                None,
                s.get("total_s", s.get("error")),
                s.get("p50_ms"),
                s.get("p95_ms"),
                None,
                None,
                c.get("p50_ms"),
                c.get("p95_ms"),
                None,
                c.get("n"),
                ro.get("open_s", ro.get("error")),
                ro.get("first_context_s"),
                max([x.get("peak_rss_mb") or 0 for x in (s, ro, c)]),
                f"{r['load_start'][0]}->{r['load_end'][0]}",
            ]
        )
    lines.append(
        markdown_table(
            [
                "system",
                "N",
                "batch s",
                "batch items/s",
                "items/CPU-s",
                "per-call total s",
                "per-call p50 ms",
                "per-call p95 ms",
                "per-call on N p50 ms",
                "per-call on N p95 ms",
                "context p50 ms",
                "context p95 ms",
                "context CPU p50 ms",
                "contexts",
                "reopen s",
                "first context s",
                "peak RSS MB",
                "load 1-min",
            ],
            [[x if not isinstance(x, float) else f(x) for x in row] for row in rows],
        )
    )
    for r in results.get("graphmem", []):
        for key in sorted(k for k in r if k.startswith("batch_w")):
            b = r[key]
            lines.append(
                f"\ngraphmem N={r['size']:,} batch with {b.get('workers')} analysis workers: "
                f"{f(b.get('total_s'))} s, {f(b.get('items_per_s'))} items/s (writer CPU "
                f"{f(b.get('cpu_s'))} s, workers' CPU {f(b.get('workers_cpu_s'))} s; load "
                f"{b.get('load_before', ['?'])[0]} -> {b.get('load_after', ['?'])[0]})"
                if "error" not in b
                else f"\ngraphmem N={r['size']:,} batch with workers: {b['error']}"
            )
    raw = results.get("raw")
    if raw and "error" not in raw:
        rf = raw["raw_facade_texts"]
        lines.append(
            f"\nraw nlp.pipe (parser + NER) over the task and the result of {raw['n']} results: "
            f"{rf['wall_s']:.1f} s wall, {rf['cpu_s']:.1f} s CPU; one call per result p50 "
            f"{raw['raw_per_call']['p50_ms']:.1f} ms; LongTermMemory.save_many "
            f"{raw['long_term_save_many']['wall_s']:.1f} s vs raw NER "
            f"{raw['raw_ner_same_texts']['wall_s']:.1f} s"
        )
    return "\n".join(lines)


def figures(results: dict[str, Any]) -> dict[str, dict[str, float]]:
    """The ratios issue 15 sets targets for, per size, from one run (each one graphmem's
    cost over the same run's reference): context p50 over calute's and over a bare FTS5
    top-50 query, a context right after a save over a plain one, per-call
    ``save_task_result`` p50 over raw spaCy on the same texts, batch throughput as a share
    of raw ``nlp.pipe``'s; and reopen + first context seconds, peak RSS MB."""
    calute = {r["size"]: r.get("save", {}).get("context", {}) for r in results.get("calute", [])}
    raw = results.get("raw") or {}
    raw_call = (raw.get("raw_per_call") or {}).get("p50_ms")
    raw_call_cpu = (raw.get("raw_per_call") or {}).get("cpu_p50_ms")
    raw_rate = raw["n"] / raw["raw_facade_texts"]["wall_s"] if raw.get("raw_facade_texts") else None
    raw_cpu_rate = (
        raw["n"] / raw["raw_facade_texts"]["cpu_s"] if raw.get("raw_facade_texts") else None
    )
    out: dict[str, dict[str, float]] = {}
    for r in results.get("graphmem", []):
        b, ro, s, pc = (r.get(k, {}) for k in ("batch", "reopen", "sample", "percall"))
        context = (b.get("context") or {}).get("p50_ms")
        row: dict[str, float] = {}

        def ratio(name: str, top: Any, bottom: Any, row: dict[str, float] = row) -> None:
            if top and bottom:
                row[name] = float(top) / float(bottom)

        ratio("context/calute", context, calute.get(r["size"], {}).get("p50_ms"))
        ratio("context/fts5", context, (b.get("fts5") or {}).get("p50_ms"))
        ratio("context after save/context", s.get("context_after_save_p50_ms"), context)
        ratio("per-call save/raw spaCy", pc.get("p50_ms"), raw_call)
        ratio("per-call save onto N/raw spaCy", s.get("p50_ms"), raw_call)
        ratio("per-call save onto N CPU/raw spaCy CPU", s.get("cpu_p50_ms"), raw_call_cpu)
        ratio("batch throughput/raw nlp.pipe", b.get("items_per_s"), raw_rate)
        ratio("batch per CPU-s/raw nlp.pipe per CPU-s", b.get("items_per_cpu_s"), raw_cpu_rate)
        for key in sorted(k for k in r if k.startswith("batch_w")):
            workers = key.removeprefix("batch_w")
            ratio(
                f"batch throughput, {workers} workers/raw nlp.pipe",
                r[key].get("items_per_s"),
                raw_rate,
            )
        if ro.get("total_s") is not None:
            row["reopen + first context s"] = float(ro["total_s"])
        peaks = [x.get("peak_rss_mb") for x in (b, ro, s, pc) if x.get("peak_rss_mb")]
        if peaks:
            row["peak RSS MB"] = float(max(peaks))
        out[str(r["size"])] = row
    return out


def figures_table(results: dict[str, Any]) -> str:
    """:func:`figures` as a markdown table (a row per figure, a column per size)."""
    found = figures(results)
    sizes = list(found)
    names = list(dict.fromkeys(name for row in found.values() for name in row))
    rows = [
        [name, *(f"{found[n][name]:.2f}" if name in found[n] else "" for n in sizes)]
        for name in names
    ]
    return markdown_table(["figure", *(f"N={n}" for n in sizes)], rows)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000", help="comma-separated N")
    ap.add_argument("--systems", default=",".join(ALL_SYSTEMS))
    ap.add_argument("--queries", type=int, default=100, help="context builds per size at most")
    ap.add_argument("--min-queries", type=int, default=50, help="context builds per size at least")
    ap.add_argument(
        "--context-budget",
        type=float,
        default=60.0,
        help="stop context builds after this many seconds (once --min-queries ran)",
    )
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument(
        "--batch-workers",
        default="1",
        help="comma-separated analysis worker counts for the batch; 1 builds the store the "
        "other measurements use, the others are timed into a store of their own",
    )
    ap.add_argument("--workers", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--measure-only-batch", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument(
        "--per-call-max",
        type=int,
        default=10000,
        help="per-call save of all N results only for N up to this",
    )
    ap.add_argument(
        "--per-call-sample",
        type=int,
        default=100,
        help="per-call saves appended to the persisted store of N (0: none)",
    )
    ap.add_argument(
        "--raw-n", type=int, default=1000, help="results for the raw nlp.pipe run (0: skip)"
    )
    ap.add_argument(
        "--profile-size", type=int, default=10000, help="cProfile one context build at this size"
    )
    ap.add_argument("--calute-reopen-max", type=int, default=10000)
    ap.add_argument("--calute-sizes", default="", help="calute sizes if not --sizes")
    ap.add_argument(
        "--extreme-load",
        type=float,
        default=4.0,
        help="rerun context/reopen once when 1-min load > this x cores",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--calute-venv", default=None)
    ap.add_argument("--tmp-dir", default="", help="where persisted stores go (default: system tmp)")
    ap.add_argument(
        "--keep-stores",
        default="",
        help="keep each batch-built store in this directory; a later run reuses a "
        "finished one (its recorded batch figures) and measures on it again",
    )
    ap.add_argument("--json", default=str(BENCH_DIR / "results" / "speed.json"))
    ap.add_argument("--child", default="", help=argparse.SUPPRESS)
    ap.add_argument("--path", default="", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    sizes = [int(s) for s in a.sizes.split(",") if s.strip()]
    a.batch_workers = [int(w) for w in str(a.batch_workers).split(",") if w.strip()]

    if a.child:
        print(json.dumps(child(a.child, sizes[0], a)))
        return

    results: dict[str, Any] = {}
    started = time.time()
    systems = [s.strip() for s in a.systems.split(",") if s.strip()]
    if "graphmem" in systems and a.raw_n > 0:
        log(f"raw nlp.pipe over the texts of {a.raw_n} results")
        results["raw"] = run_graphmem("raw", a.raw_n, a)
        log(f"  {json.dumps(results['raw'], default=str)[:800]}")
    for name in systems:
        if name == "graphmem":
            results[name] = [run_size_graphmem(n, a) for n in sizes]
        elif name == "calute":
            csizes = [int(s) for s in a.calute_sizes.split(",") if s.strip()] or sizes
            results[name] = [run_size_calute(n, a) for n in csizes]
        else:
            raise SystemExit(f"unknown system {name!r}")
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(
            json.dumps(
                {
                    "benchmark": "speed",
                    "machine": machine_facts(),
                    "args": vars(a),
                    "results": results,
                },
                indent=1,
                default=str,
            )
        )
    log(f"done in {time.time() - started:.0f} s; wrote {a.json}")
    print(report(results, a))
    print("\n" + figures_table(results))


if __name__ == "__main__":
    main()
