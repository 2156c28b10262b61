"""Recall by meaning: the embedding backends side by side (docs/benchmarks.md).

For each backend of ``graphmem.extract.embeddings`` (and ``off``):
- the paraphrase set ``tests/data/paraphrases.json`` (queries that share no content word with
  the note that answers them): recall@1/5/10 of graphmem's ranking (``LongTermMemory``, one
  memory holding every note), and of the model alone (cosine over all notes);
- query latency (ms a query, best of 3 rounds over the set's queries) and embedding
  throughput (texts a second, batches of 64, LoCoMo turns when the data is there, else the
  notes repeated).

LoCoMo and Re-DocRED recall with a backend: run ``locomo_retrieval.py`` /
``redocred_retrieval.py`` with ``GRAPHMEM_SEMANTIC=<backend>`` (``0``: off).

Example:
    python bench/semantic.py --backends static,e5,off
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import DEFAULT_LOCOMO, REPO_ROOT, log, machine_line, markdown_table, write_results

PARAPHRASES = REPO_ROOT / "tests" / "data" / "paraphrases.json"


def paraphrase_ranks(data: dict[str, Any]) -> list[int]:
    """The rank (1-based; 0: not in the top 10) of each pair's note in graphmem's ranking."""
    from graphmem import LongTermMemory

    memory = LongTermMemory()
    for line in data["background"]:
        memory.save(line)
    ids = [
        memory.save(pair["note"], metadata={"speaker": pair["speaker"]}).memory_id
        for pair in data["pairs"]
    ]
    # Saved after the notes: newer, they win every tie of the ranking (no help from recency).
    for speaker in sorted({pair["speaker"] for pair in data["pairs"]}):
        for line in data["small_talk"]:
            memory.save(line, metadata={"speaker": speaker})
    ranks = []
    for pair, memory_id in zip(data["pairs"], ids, strict=True):
        found = [item.memory_id for item in memory.search(pair["query"], limit=10)]
        ranks.append(found.index(memory_id) + 1 if memory_id in found else 0)
    return ranks


def model_alone_ranks(embedder: Any, data: dict[str, Any]) -> list[int]:
    notes = embedder.embed([pair["note"] for pair in data["pairs"]])
    ranks = []
    for i, pair in enumerate(data["pairs"]):
        order = np.argsort(-(notes @ embedder.embed_query(pair["query"])), kind="stable")
        ranks.append(int(np.where(order == i)[0][0]) + 1)
    return ranks


def recall(ranks: list[int], k: int) -> float:
    return 100.0 * sum(1 for r in ranks if 0 < r <= k) / len(ranks)


def throughput_texts(limit: int, data: dict[str, Any]) -> list[str]:
    if DEFAULT_LOCOMO.exists():
        samples = json.loads(DEFAULT_LOCOMO.read_text(encoding="utf-8"))
        turns = [
            f"{turn['speaker']}: {turn['text']}"
            for sample in samples
            for key, value in sample["conversation"].items()
            if key.startswith("session_") and isinstance(value, list)
            for turn in value
        ]
        return turns[:limit]
    notes = [pair["note"] for pair in data["pairs"]]
    return (notes * (limit // len(notes) + 1))[:limit]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--backends", default="static,e5,off")
    ap.add_argument("--texts", type=int, default=512, help="texts embedded for throughput")
    ap.add_argument("--out", default="semantic", help="results file stem in bench/results/")
    args = ap.parse_args(argv)
    data = json.loads(PARAPHRASES.read_text(encoding="utf-8"))
    texts = throughput_texts(args.texts, data)
    rows, results = [], {}
    for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
        os.environ["GRAPHMEM_SEMANTIC"] = "0" if backend == "off" else backend
        from graphmem.extract.embeddings import get_embedder

        embedder = get_embedder()
        ranks = paraphrase_ranks(data)
        result: dict[str, Any] = {
            "model": embedder.name if embedder else None,
            "graphmem ranks": ranks,
            "graphmem R@1": recall(ranks, 1),
            "graphmem R@5": recall(ranks, 5),
            "graphmem R@10": recall(ranks, 10),
        }
        if embedder is not None:
            alone = model_alone_ranks(embedder, data)
            result.update({"alone R@1": recall(alone, 1), "alone R@5": recall(alone, 5)})
            queries = [pair["query"] for pair in data["pairs"]]
            best = float("inf")
            for _ in range(3):
                start = time.perf_counter()
                for query in queries:
                    embedder.embed_query(query)
                best = min(best, (time.perf_counter() - start) / len(queries))
            result["query ms"] = 1000 * best
            start = time.perf_counter()
            for at in range(0, len(texts), 64):
                embedder.embed(texts[at : at + 64])
            result["texts/s"] = len(texts) / (time.perf_counter() - start)
        log(f"{backend}: {result}")
        results[backend] = result
        rows.append(
            [backend, result["model"] or "-"]
            + [result.get(k, "") for k in ("graphmem R@1", "graphmem R@5", "graphmem R@10")]
            + [result.get(k, "") for k in ("alone R@1", "alone R@5", "query ms", "texts/s")]
        )
    print(f"## Recall by meaning: backends\n\n{machine_line()}\n")
    print(f"Paraphrase set: {len(data['pairs'])} pairs ({Path(PARAPHRASES).name}).\n")
    headers = ["backend", "model", "R@1", "R@5", "R@10", "alone R@1", "alone R@5"]
    print(markdown_table([*headers, "query ms", "texts/s"], rows))
    log(f"wrote {write_results(args.out, {'benchmark': 'semantic', 'results': results})}")


if __name__ == "__main__":
    main()
