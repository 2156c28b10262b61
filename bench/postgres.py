"""graphmem on PostgreSQL vs SQLite: ingest throughput and context-building latency.

Measurements per backend, through the ``CortexMemory`` facade, on the generated agent task
results of ``bench/speed.py`` (people, organisations, places and products; every result goes
through spaCy, the entity graph and typed relations):

1. batch: ``save_task_results`` of ``--size`` results (``--workers`` analysis processes);
2. ``build_context_for_task`` latency (median and p95 over ``--queries`` tasks) on that fresh
   store, right after the bulk load;
3. per call: ``--per-call`` more ``save_task_result`` calls onto it (p50);
4. with ``--raw-size``: texts and long-term items added by SQL alone up to that many (no
   entity extraction), to measure search at scale, and the contexts again;
5. concurrent ingest: ``--writers`` processes, each saving ``--concurrent-size / writers``
   memories into one shared database at the same time (wall time from a common start).

PostgreSQL runs in a fresh schema of the server at ``--pg-url`` (default: the environment
variable GRAPHMEM_TEST_PG_URL); ``scripts/pg_test_server.sh`` starts a throwaway server. SQLite
runs in a new file under a temporary directory. Results go to ``bench/results/postgres.json``
and, with ``--write-docs``, to the "PostgreSQL" section of ``docs/benchmarks.md``.

    .venv/bin/python bench/postgres.py --size 10000 --write-docs
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import multiprocessing as mp
import os
import platform
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
DOCS = ROOT / "docs" / "benchmarks.md"
SECTION = "## PostgreSQL"

FIRST = "Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Niaj Olivia Peggy".split()
LAST = "Johnson Stone Smith Jones Brown Miller Davis Wilson Moore Taylor Clark Lewis".split()
ORGS = "Acme Initech Globex Umbrella Hooli Vandelay Stark Wayne Cyberdyne Soylent".split()
CITIES = "Berlin Paris London Madrid Rome Vienna Oslo Dublin Lisbon Prague".split()
PRODUCTS = "Falcon Atlas Orion Phoenix Nimbus Vega Titan Aurora".split()
TEMPLATES = [
    "{p} from {o} met {q} in {c} to review the {x} launch.",
    "{p} shipped the {x} dashboard for {o} after a call with {q}.",
    "{q} asked {p} to move the {o} workshop to {c} next week.",
    "The {x} migration at {o} is blocked until {p} signs off.",
    "{p} and {q} presented quarterly numbers for {o} in {c}.",
]


def records(n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` synthetic work-log memories (dicts of ``save`` keyword arguments)."""
    rng = random.Random(seed)
    people = [f"{f} {last}" for f in FIRST for last in LAST]
    out = []
    for i in range(n):
        text = rng.choice(TEMPLATES).format(
            p=rng.choice(people),
            q=rng.choice(people),
            o=rng.choice(ORGS),
            c=rng.choice(CITIES),
            x=rng.choice(PRODUCTS),
        )
        out.append({"content": f"{text} Ticket {i}.", "agent_id": rng.choice(["ops", "sales"])})
    return out


@contextmanager
def database(backend: str, pg_url: str | None, tmp: Path) -> Iterator[str]:
    """A new, empty database of ``backend``: a SQLite path or a URL to a fresh PG schema."""
    if backend == "sqlite":
        yield str(tmp / f"bench-{uuid.uuid4().hex[:8]}.db")
        return
    assert pg_url is not None
    from graphmem.store.dialects.postgresql import temporary_schema

    with temporary_schema(pg_url, "gm_bench") as url:
        yield url


def open_memory(target: str, capacity: int) -> Any:
    os.environ["WRITE_MEMORY"] = "1"
    from graphmem import CortexMemory

    return CortexMemory(persistence_path=target, long_term_capacity=capacity)


def context_latency(memory: Any, n_queries: int) -> dict[str, float]:
    from speed import gen_tasks

    latencies = []
    for task in gen_tasks(n_queries, seed=2):
        t0 = time.perf_counter()
        context = memory.build_context_for_task(
            task["task_description"], agent_role=task["agent_role"]
        )
        latencies.append(time.perf_counter() - t0)
        assert context, task
    latencies.sort()
    return {
        "context_median_ms": round(statistics.median(latencies) * 1000, 1),
        "context_p95_ms": round(latencies[int(0.95 * (len(latencies) - 1))] * 1000, 1),
    }


def per_call_saves(memory: Any, n: int) -> dict[str, float]:
    """``n`` more ``save_task_result`` calls onto the store: p50 and p95 ms."""
    from speed import gen_tasks

    latencies = []
    for task in gen_tasks(n, seed=6):
        t0 = time.perf_counter()
        memory.save_task_result(**task)
        latencies.append(time.perf_counter() - t0)
    latencies.sort()
    return {
        "per_call_p50_ms": round(statistics.median(latencies) * 1000, 1),
        "per_call_p95_ms": round(latencies[int(0.95 * (len(latencies) - 1))] * 1000, 1),
    }


def ingest_and_query(
    target: str, size: int, n_queries: int, raw_size: int, workers: int, per_call: int
) -> list[dict[str, Any]]:
    """Rows: the facade batch of ``size`` task results, then (``raw_size``) SQL-only rows
    up to that total."""
    from speed import gen_tasks

    from graphmem.index.writer import NewItem
    from graphmem.store import memory_rows, text_rows

    memory = open_memory(target, capacity=max(size, raw_size) * 2)
    data = gen_tasks(size, seed=1)
    memory.save_task_results(data[:16], workers=1)  # warm up: spaCy loaded, tables created
    start, cpu = time.perf_counter(), time.process_time()
    memory.save_task_results(data[16:], batch_size=256, workers=workers)
    ingest_s, ingest_cpu = time.perf_counter() - start, time.process_time() - cpu
    rows = [
        {
            "kind": f"facade batch, {workers} worker{'s' if workers > 1 else ''}",
            "items": size,
            "ingest_s": round(ingest_s, 1),
            "ingest_cpu_s": round(ingest_cpu, 1),
            "ingest_per_s": round((size - 16) / ingest_s, 1),
            "load": [round(x, 2) for x in os.getloadavg()],
            **context_latency(memory, n_queries),
        }
    ]
    if per_call > 0:
        rows[0].update(per_call_saves(memory, per_call))
    extra = raw_size - size
    if extra > 0:
        tier = memory.long_term
        db = tier.space.database
        start = time.perf_counter()
        raw = records(extra, seed=4)
        for first in range(0, extra, 1000):
            items = [
                tier.as_new_item(tier.prepare(r["content"], agent_id=r["agent_id"], importance=0.5))
                for r in raw[first : first + 1000]
            ]
            with db.write() as conn:  # one executemany per kind and batch, no extraction
                text_ids = text_rows.insert_texts(conn, [("", "", ni.item.content) for ni in items])
                memory_rows.insert_items(
                    conn, [NewItem.row(ni, t) for ni, t in zip(items, text_ids, strict=True)]
                )
        raw_s = time.perf_counter() - start
        db.refresh_statistics()  # as a bulk save does
        memory.build_context_for_task("warm up the caches", agent_role="ops")
        rows.append(
            {
                "kind": f"+ {extra:,} rows SQL only",
                "items": raw_size,
                "ingest_s": round(raw_s, 1),
                "ingest_per_s": round(extra / raw_s, 1),
                **context_latency(memory, n_queries),
            }
        )
    memory.storage.close()
    return rows


def _writer(target: str, share: list[dict[str, Any]], ready: Any, go: Any, out: Any) -> None:
    memory = open_memory(target, capacity=10**9)
    memory.long_term.save_many(share[:8])  # warm up before the common start
    ready.put(1)
    go.wait()
    t0 = time.perf_counter()
    memory.long_term.save_many(share[8:], batch_size=256)
    out.put(time.perf_counter() - t0)
    memory.storage.close()


def concurrent_ingest(target: str, size: int, writers: int) -> dict[str, float]:
    ctx = mp.get_context("spawn")
    data = records(size, seed=3)
    shares = [data[i::writers] for i in range(writers)]
    open_memory(target, capacity=10**9).storage.close()  # create the schema once
    ready, out, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    procs = [ctx.Process(target=_writer, args=(target, s, ready, go, out)) for s in shares]
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=600)
    start = time.perf_counter()
    go.set()
    per_writer = [out.get(timeout=3600) for _ in procs]
    wall = time.perf_counter() - start
    for p in procs:
        p.join()
        if p.exitcode != 0:
            raise SystemExit(f"a writer failed (exit code {p.exitcode})")
    memory = open_memory(target, capacity=10**9)
    stored = len(memory.long_term)
    memory.storage.close()
    expected = size
    if stored != expected:
        raise SystemExit(f"concurrent ingest stored {stored} items, expected {expected}")
    saved = size - 8 * writers
    return {
        "items": size,
        "writers": writers,
        "wall_s": round(wall, 1),
        "items_per_s": round(saved / wall, 1),
        "slowest_writer_s": round(max(per_writer), 1),
    }


def machine() -> dict[str, Any]:
    cpu = platform.machine()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gib": round(ram, 1),
        "python": platform.python_version(),
        "date": dt.date.today().isoformat(),
    }


def server_version(pg_url: str) -> str:
    from sqlalchemy import create_engine

    engine = create_engine(pg_url)
    with engine.connect() as conn:
        version = str(conn.exec_driver_sql("SHOW server_version").scalar())
    engine.dispose()
    return version


def markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    lines = [
        SECTION,
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['ram_gib']} GiB RAM, Python {m['python']}, "
        f"{m['date']}; PostgreSQL {results.get('pg_version', '?')} on the same machine "
        "(loopback TCP, `fsync=off` throwaway cluster from `scripts/pg_test_server.sh`); SQLite "
        "file in WAL mode. Command: `" + results["command"] + "`.",
        "",
        'Ingest "facade batch": `CortexMemory.save_task_results` of the generated task '
        "results of `bench/speed.py` (spaCy, entity resolution, typed relations, SQL; one "
        'transaction per batch; the store then fresh from that bulk load). "SQL only": texts '
        "and long-term items added by one executemany per kind and 1,000-row transaction "
        "(full-text index maintained, no entity extraction), to measure search at scale. "
        "Context: `build_context_for_task` over everything in the database; per-call: "
        "`save_task_result` onto the store.",
        "",
        "| backend | ingest | items in db | ingest s | items/s | context median ms "
        "| context p95 ms | per-call save p50 ms | load 1/5/15 min |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in results["single"]:
        lines.append(
            f"| {r['backend']} | {r['kind']} | {r['items']:,} | {r['ingest_s']} | "
            f"{r['ingest_per_s']} | "
            f"{r['context_median_ms']} | {r['context_p95_ms']} | {r.get('per_call_p50_ms', '')} "
            f"| {', '.join(str(x) for x in r.get('load', []))} |"
        )
    if results["concurrent"]:
        lines += [
            "",
            "Concurrent ingest: several writer processes, one shared database, common start.",
            "",
            "| backend | items | writers | wall s | items/s | slowest writer s |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for r in results["concurrent"]:
            lines.append(
                f"| {r['backend']} | {r['items']:,} | {r['writers']} | {r['wall_s']} | "
                f"{r['items_per_s']} | {r['slowest_writer_s']} |"
            )
    if results.get("notes"):
        for note in results["notes"]:
            lines += ["", note]
    return "\n".join(lines) + "\n"


def write_docs(section: str) -> None:
    """Replace (or append) the PostgreSQL section of docs/benchmarks.md, nothing else."""
    if DOCS.exists():
        text = DOCS.read_text(encoding="utf-8")
    else:
        text = "# Benchmarks\n\nEach section names the machine and date it was measured on.\n"
    start = text.find(SECTION + "\n")
    if start == -1:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = text.find("\n## ", start + len(SECTION))
        rest = text[end + 1 :] if end != -1 else ""
        text = text[:start] + section + ("\n" + rest if rest else "")
    DOCS.parent.mkdir(parents=True, exist_ok=True)
    DOCS.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pg-url", default=os.environ.get("GRAPHMEM_TEST_PG_URL"))
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--size", type=int, nargs="*", default=[10_000], help="sizes; none: skip")
    parser.add_argument(
        "--raw-size",
        type=int,
        default=0,
        help="after the NER ingest, add SQL-only rows up to this many items (search at scale)",
    )
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--workers", type=int, default=1, help="analysis processes (batch)")
    parser.add_argument("--per-call", type=int, default=30, help="per-call saves after it")
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--concurrent-size", type=int, default=10_000)
    parser.add_argument("--note", action="append", default=[], help="a line for the docs")
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--json", default=str(BENCH_DIR / "results" / "postgres.json"))
    args = parser.parse_args(argv)
    backends = args.backends.split(",")
    if "postgresql" in backends and not args.pg_url:
        parser.error("--pg-url (or GRAPHMEM_TEST_PG_URL) is needed for postgresql")
    results: dict[str, Any] = {
        "machine": machine(),
        "command": "bench/postgres.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "single": [],
        "concurrent": [],
        "notes": args.note,
    }
    if args.pg_url:
        results["pg_version"] = server_version(args.pg_url)
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.size:
            for backend in backends:
                with database(backend, args.pg_url, Path(tmp)) as target:
                    found = ingest_and_query(
                        target, size, args.queries, args.raw_size, args.workers, args.per_call
                    )
                for row in found:
                    row = {"backend": backend, **row}
                    print(json.dumps(row), flush=True)
                    results["single"].append(row)
        if args.writers > 0 and args.concurrent_size > 0:
            for backend in backends:
                with database(backend, args.pg_url, Path(tmp)) as target:
                    row = {
                        "backend": backend,
                        **concurrent_ingest(target, args.concurrent_size, args.writers),
                    }
                print(json.dumps(row), flush=True)
                results["concurrent"].append(row)
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    if args.write_docs:
        write_docs(markdown(results))
    print(markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
