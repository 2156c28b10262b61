"""Load benchmark of `graphmem mcp`: concurrent MCP clients over streamable HTTP.

A real server subprocess (`graphmem mcp --transport http`, bearer tokens for 4 users) on a
fresh file; 8 clients (2 per user, so two sessions write one tenant's graph at once) each
first remember ``--seed`` memories of the bundled demo corpus (not timed), then make
``--calls`` mixed calls, timed one by one from the client: remember, recall, context, entity,
relations, path and forget (of a memory the client remembered). Errors (a tool error or an
exception) must be 0. Prints p50 / p95 / max per tool, the throughput, and the load average
before and after (the machine may be shared).

Usage::

    python bench/mcp_load.py                       # 8 clients x 200 calls
    python bench/mcp_load.py --clients 2 --calls 20 --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "graphmem" / "demo_data" / "team_memories.jsonl"
GRAPHMEM = [sys.executable, "-c", "from graphmem.cli import main; raise SystemExit(main())"]
USERS = 4
#: The mix of the timed calls (weights).
MIX = {
    "remember": 20,
    "recall": 25,
    "context": 15,
    "entity": 10,
    "relations": 10,
    "path": 10,
    "forget": 10,
}
QUERIES = [
    "Atlas launch date",
    "Who works at Harbor Analytics?",
    "What did Priya Nair decide?",
    "budget approval",
    "Berlin office",
    "customer analytics platform",
    "Who left the company?",
    "sales pipeline review",
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_server(folder: Path, tokens: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    (folder / "tokens.json").write_text(json.dumps(tokens), encoding="utf-8")
    port = _free_port()
    log = (folder / "server.log").open("wb")
    proc = subprocess.Popen(
        [
            *GRAPHMEM,
            "--db",
            str(folder / "load.db"),
            "mcp",
            "--transport",
            "http",
            "--port",
            str(port),
            "--tokens",
            str(folder / "tokens.json"),
        ],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 180
    while True:
        if proc.poll() is not None:
            raise SystemExit((folder / "server.log").read_text())
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit("the server did not start listening") from None
            time.sleep(0.2)


class LoadClient:
    """One MCP client session: seeds its memories, then makes its timed calls."""

    def __init__(self, number: int, url: str, token: str, records: list[dict[str, Any]]):
        self.number = number
        self.url = url
        self.token = token
        self.records = records
        self.random = random.Random(number)
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: list[str] = []
        self.remembered: list[str] = []
        self.names: list[str] = []

    async def run(self, seed: int, calls: int) -> None:
        headers = {"Authorization": f"Bearer {self.token}"}
        http = httpx2.AsyncClient(headers=headers, timeout=300)
        async with Client(streamable_http_client(self.url, http_client=http)) as client:
            for record in self.records[:seed]:
                await self._call(client, "remember", self._remember_args(record), timed=False)
            found = await self._call(
                client, "relations", {"limit": 200, "include_co_occurs": True}, timed=False
            )
            for edge in (found or {}).get("relations", []):
                self.names += [edge["subject"], edge["object"]]
            self.names = sorted(set(self.names)) or ["Priya Nair"]
            tools, weights = zip(*MIX.items(), strict=True)
            for _ in range(calls):
                tool = self.random.choices(tools, weights)[0]
                await self._call(client, tool, self._args(tool))

    def _remember_args(self, record: dict[str, Any]) -> dict[str, Any]:
        return {
            "content": record["content"],
            "agent_role": record.get("agent_id") or "agent",
            "importance": record.get("importance", 0.7),
            "timestamp": record.get("timestamp"),
        }

    def _args(self, tool: str) -> dict[str, Any]:
        pick = self.random.choice
        if tool == "remember":
            return self._remember_args(pick(self.records))
        if tool == "recall":
            return {"query": pick(QUERIES), "limit": 10}
        if tool == "context":
            return {"task": pick(QUERIES)}
        if tool == "entity":
            return {"name": pick(self.names)}
        if tool == "relations":
            return {"subject": pick(self.names)}
        if tool == "path":
            return {"a": pick(self.names), "b": pick(self.names), "max_hops": 3}
        if self.remembered:
            return {"id": self.remembered.pop(self.random.randrange(len(self.remembered)))}
        return {"agent_role": "nobody-at-all"}

    async def _call(
        self, client: Client, tool: str, args: dict[str, Any], timed: bool = True
    ) -> Any:
        started = time.perf_counter()
        try:
            result = await client.call_tool(tool, args)
        except Exception as exc:  # a benchmark counts every failure, whatever it is
            self.errors.append(f"{tool}: {type(exc).__name__}: {exc}")
            return None
        elapsed = time.perf_counter() - started
        if result.is_error:
            text = getattr(result.content[0], "text", "") if result.content else ""
            self.errors.append(f"{tool} {args}: {text}")
            return None
        if timed:
            self.latencies[tool].append(elapsed)
        found = result.structured_content
        if tool == "remember" and timed and found and found.get("id"):
            self.remembered.append(found["id"])
        return found


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def _drive(url: str, tokens: list[str], args: argparse.Namespace) -> list[LoadClient]:
    records = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    clients = []
    for n in range(args.clients):
        mine = records[:]
        random.Random(1000 + n).shuffle(mine)
        clients.append(LoadClient(n, url, tokens[n % len(tokens)], mine))
    await asyncio.gather(*(c.run(args.seed, 0) for c in clients))
    return clients


async def _timed(clients: list[LoadClient], args: argparse.Namespace) -> None:
    await asyncio.gather(*(c.run(0, args.calls) for c in clients))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--calls", type=int, default=200, help="timed calls per client")
    parser.add_argument("--seed", type=int, default=25, help="memories each client seeds")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    tokens = {f"load-token-{n:02d}-0123456789": f"user{n}" for n in range(USERS)}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="graphmem-mcp-load-") as tmp:
        proc, url = _start_server(Path(tmp), tokens)
        try:
            clients = asyncio.run(_drive(url, list(tokens), args))  # seeding, not timed
            for c in clients:
                c.latencies.clear()
            started = time.perf_counter()
            asyncio.run(_timed(clients, args))
            elapsed = time.perf_counter() - started
            alive = proc.poll() is None
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    load_after = os.getloadavg()
    by_tool: dict[str, list[float]] = defaultdict(list)
    for c in clients:
        for tool, values in c.latencies.items():
            by_tool[tool].extend(values)
    errors = [e for c in clients for e in c.errors]
    total = sum(len(v) for v in by_tool.values())
    report = {
        "clients": args.clients,
        "calls_per_client": args.calls,
        "seeded_per_client": args.seed,
        "calls": total,
        "errors": len(errors),
        "server_alive": alive,
        "seconds": round(elapsed, 2),
        "calls_per_second": round(total / elapsed, 1),
        "cores": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "tools": {
            tool: {
                "calls": len(v),
                "p50_ms": round(statistics.median(v) * 1000, 1),
                "p95_ms": round(_percentile(v, 0.95) * 1000, 1),
                "max_ms": round(max(v) * 1000, 1),
            }
            for tool, v in sorted(by_tool.items())
        },
    }
    print(
        f"{args.clients} clients x {args.calls} calls: {total} calls in {elapsed:.1f} s "
        f"({report['calls_per_second']} calls/s), {len(errors)} errors, server alive: {alive}"
    )
    print(
        f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} ({os.cpu_count()} cores)"
    )
    print("| tool | calls | p50 ms | p95 ms | max ms |\n|---|---:|---:|---:|---:|")
    for tool, row in report["tools"].items():  # type: ignore[union-attr]
        print(f"| {tool} | {row['calls']} | {row['p50_ms']} | {row['p95_ms']} | {row['max_ms']} |")
    for error in errors[:20]:
        print("error:", error)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0 if not errors and alive else 1


if __name__ == "__main__":
    raise SystemExit(main())
