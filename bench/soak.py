"""Soak benchmark: several writer processes and reader threads share one graphmem file.

4 writer processes (``multiprocessing`` with "spawn") each save memories into one SQLite file
through ``LongTermMemory`` (NER, entity graph, one transaction per save) for N minutes, while
4 reader threads in the parent search the same file and read the entity graph (which reloads
whenever another process changed it). Every writer appends the id of each memory *after*
``save()`` returned (flushed), so the parent knows what was acknowledged.

At the end the parent opens the file afresh and reports: operations per second, p50/p99
latency of writes and reads, errors (must be 0: no "database is locked" may reach a caller),
rows lost (acknowledged ids missing from the file; must be 0) and ``PRAGMA integrity_check``.

Usage::

    python bench/soak.py --minutes 10            # the default
    python bench/soak.py --minutes 1 --json out.json

This is a benchmark, not a unit test; the reliability tests live in ``tests/``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any

PEOPLE = ["Alice Johnson", "Bob Stone", "Carol Diaz", "Dan Wu", "Eve Martin", "Farid Khan"]
ORGS = ["Acme Corp", "Initech", "Globex", "Umbrella Labs", "Hooli"]
PLACES = ["Paris", "Berlin", "Tokyo", "Lagos", "Lima"]
TOPICS = ["pricing", "the migration", "hiring", "the audit", "latency", "the roadmap"]
QUERIES = [
    "Who works at Acme?",
    "pricing review",
    "Alice Johnson",
    "Berlin office audit",
    "roadmap Globex",
    "latency Tokyo",
    'NEAR("Bob" "Stone") OR *',
]


def _content(rng: random.Random, writer: int, n: int) -> str:
    return (
        f"{rng.choice(PEOPLE)} of {rng.choice(ORGS)} met {rng.choice(PEOPLE)} in "
        f"{rng.choice(PLACES)} to discuss {rng.choice(TOPICS)} (writer {writer}, note {n})."
    )


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def writer_main(
    path: str, writer: int, ready: Any, start: Any, deadline: Any, out_dir: str
) -> None:
    """One writer process: save until ``deadline``; ack ids and latencies go to files."""
    from graphmem import LongTermMemory, SQLiteStorage

    rng = random.Random(writer)
    storage = SQLiteStorage(path)
    memory = LongTermMemory(storage=storage, max_items=None, namespace="soak")
    memory.space.entity_index.analyzer.analyse(["Warm up Alice in Paris."])  # load spaCy
    ready.put(writer)
    start.wait()
    latencies: list[float] = []
    errors: list[str] = []
    with open(Path(out_dir) / f"acked-{writer}.txt", "w", encoding="utf-8") as acked:
        n = 0
        while time.time() < deadline.value:
            n += 1
            start = time.perf_counter()
            try:
                item = memory.save(
                    _content(rng, writer, n), agent_id=f"writer-{writer}", importance=0.5
                )
            except Exception as exc:  # counted and reported, never hidden
                errors.append(f"{type(exc).__name__}: {exc}")
                continue
            latencies.append(time.perf_counter() - start)
            acked.write(item.memory_id + "\n")
            acked.flush()
    storage.close()
    (Path(out_dir) / f"writer-{writer}.json").write_text(
        json.dumps({"latencies": latencies, "errors": errors[:20], "error_count": len(errors)})
    )


def _reader(
    path: str,
    deadline: float,
    latencies: list[float],
    errors: list[str],
    lock: threading.Lock,
    seed: int,
) -> None:
    from graphmem import LongTermMemory, SQLiteStorage

    rng = random.Random(seed)
    storage = SQLiteStorage(path)
    memory = LongTermMemory(storage=storage, max_items=None, namespace="soak")
    local: list[float] = []
    local_errors: list[str] = []
    while time.time() < deadline:
        start = time.perf_counter()
        try:
            if rng.random() < 0.7:
                memory.search(rng.choice(QUERIES), limit=10)
            else:
                graph = storage.entity_index.graph("")
                person = rng.choice(PEOPLE)
                if person in graph:
                    graph.neighbors(person, depth=2)
        except Exception as exc:
            local_errors.append(f"{type(exc).__name__}: {exc}")
            continue
        local.append(time.perf_counter() - start)
    storage.close()
    with lock:
        latencies.extend(local)
        errors.extend(local_errors)


def run(minutes: float, path: Path, writers: int = 4, readers: int = 4) -> dict[str, Any]:
    """Run the soak and return its figures."""
    from graphmem import SQLiteStorage

    SQLiteStorage(path).close()  # create the schema once, before the race
    out_dir = Path(tempfile.mkdtemp(prefix="graphmem-soak-"))
    ctx = mp.get_context("spawn")
    ready, start, shared_deadline = ctx.Queue(), ctx.Event(), ctx.Value("d", 0.0)
    procs = [
        ctx.Process(
            target=writer_main,
            args=(str(path), i, ready, start, shared_deadline, str(out_dir)),
        )
        for i in range(writers)
    ]
    for proc in procs:
        proc.start()
    # Writers import spaCy first (seconds each); the clock starts once all are ready.
    for _ in procs:
        ready.get(timeout=300)
    from graphmem.extract.pipeline import get_analyzer

    get_analyzer()
    started = time.time()
    deadline = started + minutes * 60
    shared_deadline.value = deadline
    start.set()
    read_latencies: list[float] = []
    read_errors: list[str] = []
    lock = threading.Lock()
    threads = [
        threading.Thread(
            target=_reader, args=(str(path), deadline, read_latencies, read_errors, lock, i)
        )
        for i in range(readers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for proc in procs:
        proc.join()
    elapsed = time.time() - started

    write_latencies: list[float] = []
    write_errors: list[str] = []
    write_error_count = 0
    acked: list[str] = []
    exit_codes = [proc.exitcode for proc in procs]
    for i in range(writers):
        result_file = out_dir / f"writer-{i}.json"
        if result_file.exists():
            data = json.loads(result_file.read_text())
            write_latencies.extend(data["latencies"])
            write_errors.extend(data["errors"])
            write_error_count += data["error_count"]
        acked.extend((out_dir / f"acked-{i}.txt").read_text().split())

    conn = sqlite3.connect(path)
    stored = {r[0] for r in conn.execute("SELECT memory_id FROM memories WHERE namespace='soak'")}
    integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    conn.close()
    lost = [mid for mid in acked if mid not in stored]
    ops = len(write_latencies) + len(read_latencies)
    return {
        "minutes": minutes,
        "elapsed_s": round(elapsed, 1),
        "writers": writers,
        "readers": readers,
        "writes": len(write_latencies),
        "reads": len(read_latencies),
        "ops_per_s": round(ops / elapsed, 1),
        "writes_per_s": round(len(write_latencies) / elapsed, 1),
        "reads_per_s": round(len(read_latencies) / elapsed, 1),
        "write_p50_ms": round(_percentile(write_latencies, 0.5) * 1000, 1),
        "write_p99_ms": round(_percentile(write_latencies, 0.99) * 1000, 1),
        "read_p50_ms": round(_percentile(read_latencies, 0.5) * 1000, 1),
        "read_p99_ms": round(_percentile(read_latencies, 0.99) * 1000, 1),
        "write_mean_ms": round(statistics.fmean(write_latencies) * 1000, 1)
        if write_latencies
        else None,
        "errors": write_error_count + len(read_errors) + sum(1 for c in exit_codes if c != 0),
        "error_samples": (write_errors + read_errors)[:10],
        "writer_exit_codes": exit_codes,
        "rows_acknowledged": len(acked),
        "rows_lost": len(lost),
        "integrity_check": integrity,
        "file_mb": round(path.stat().st_size / 1e6, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="how long to run (10)")
    parser.add_argument("--writers", type=int, default=4, help="writer processes (4)")
    parser.add_argument("--readers", type=int, default=4, help="reader threads (4)")
    parser.add_argument("--path", type=Path, help="database file (default: a new temp file)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    path = args.path or Path(tempfile.mkdtemp(prefix="graphmem-soak-db-")) / "soak.db"
    try:
        result = run(args.minutes, path, args.writers, args.readers)
    except Exception:
        traceback.print_exc()
        return 2
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    ok = result["errors"] == 0 and result["rows_lost"] == 0 and result["integrity_check"] == "ok"
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
