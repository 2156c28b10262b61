"""Ablation of graphmem's ranking on LoCoMo and Re-DocRED: what each component adds.

Steps, each adding to the one before (the last is graphmem's default ranking):

1. ``lexical``: FTS5 BM25 with Porter stemming only;
2. ``+ author links``: memories said by a person the query names are favoured;
3. ``+ entity links and graph hops``: memories mentioning the query's entities and their 1-2 hop
   neighbourhood;
4. ``+ adjacency``: a hit lends score to its neighbours in the same conversation (and, from
   entity-linked hits, to the rest of a document-sized conversation);
5. ``+ answer type`` (= default): memories holding the entity type the question asks for.

Each dataset is ingested once (the default ``LongTermMemory``); the steps only change the
ranking weights each query pass is given (a ``RankingWeights`` of ``graphmem.retrieval.weights``
made with ``dataclasses.replace``: nothing global changes). Reported: recall@10 and MRR per
step, each step's change with a paired-bootstrap 95% interval (2000 resamples, seed 0).
Re-DocRED uses a fixed random subset of the full-variant queries (``--redocred-queries``).

Example:
    python bench/ablation.py --redocred-queries 1500
"""

from __future__ import annotations

import argparse
import random
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from common import (
    DEFAULT_LOCOMO,
    DEFAULT_REDOCRED_RETRIEVAL,
    load_locomo,
    load_redocred_retrieval,
    log,
    machine_line,
    paired_bootstrap,
    score_ranking,
)

if TYPE_CHECKING:
    from graphmem.retrieval.weights import RankingWeights

#: Each step's changes to the default weights (``conversation_share``: the share an
#: entity-linked hit lends to the rest of a document-sized conversation).
STEPS: list[tuple[str, dict[str, float]]] = [
    (
        "lexical",
        {
            "author": 0.0,
            "graph": 0.0,
            "adjacency": 0.0,
            "answer_type": 0.0,
            "conversation_share": 0.0,
        },
    ),
    (
        "+ author links",
        {"graph": 0.0, "adjacency": 0.0, "answer_type": 0.0, "conversation_share": 0.0},
    ),
    (
        "+ entity links and graph hops",
        {"adjacency": 0.0, "answer_type": 0.0, "conversation_share": 0.0},
    ),
    ("+ adjacency", {"answer_type": 0.0}),
    ("+ answer type (default)", {}),
]


def step_weights(overrides: dict[str, float]) -> RankingWeights:
    """The default ranking weights with a step's ``overrides``.

    Example:
        >>> step_weights(dict(STEPS[0][1])).graph, step_weights({}).graph
        (0.0, 0.6)
    """
    from graphmem.retrieval.weights import DEFAULT_WEIGHTS

    return replace(DEFAULT_WEIGHTS, **overrides)


def search(memory: Any, question: str, weights: RankingWeights, limit: int = 20) -> list[Any]:
    """``memory.search(question, limit)`` ranked by ``weights``: the ranking the tier's search
    runs for an unfiltered query (the same candidates, filter step included), given weights."""
    from graphmem.retrieval.search import rank

    hits = rank(
        memory.space,
        [memory.namespace],
        question,
        sql_filters={},
        predicate=lambda item: True,
        limit=limit,
        weights=weights,
    )
    return [hit.item for hit in hits]


def _memory(records: Any) -> tuple[Any, dict[str, str]]:
    from graphmem import LongTermMemory

    memory = LongTermMemory(max_items=None)
    items = memory.save_many(
        [
            {
                "content": r.content,
                "metadata": dict(r.metadata),
                "conversation_id": r.conversation_id,
            }
            for r in records
        ]
    )
    return memory, {item.memory_id: r.id for item, r in zip(items, records, strict=True)}


def run(groups: list[tuple[Any, Any]], name: str) -> list[tuple[str, list[dict[str, float]]]]:
    memories = []
    for gi, (records, queries) in enumerate(groups):
        log(f"{name}: ingesting group {gi + 1}/{len(groups)} ({len(records)} records)")
        memories.append((_memory(records), queries))
    _check_default(memories)
    results = []
    for step, overrides in STEPS:
        weights = step_weights(overrides)
        rows = []
        for (memory, id_of), queries in memories:
            for q in queries:
                ranked = [id_of[i.memory_id] for i in search(memory, q.question, weights)]
                rows.append(score_ranking(ranked, q.gold))
        log(f"{name}: {step}: R@10 {100 * sum(r['R@10'] for r in rows) / len(rows):.1f}")
        results.append((step, rows))
    return results


def _check_default(memories: list[tuple[tuple[Any, dict[str, str]], Any]]) -> None:
    """The default step ranks as the tier's own search does (first queries of each group)."""
    default = step_weights({})
    for (memory, _), queries in memories:
        for q in queries[:3]:
            own = [item.memory_id for item in memory.search(q.question, limit=20)]
            given = [item.memory_id for item in search(memory, q.question, default)]
            if own != given:
                raise SystemExit(f"ablation: default weights rank {q.question!r} differently")


def table(title: str, results: list[tuple[str, list[dict[str, float]]]]) -> str:
    lines = [
        f"### {title}",
        "",
        "| step | R@10 | MRR | ΔR@10 vs previous [95% CI] |",
        "| --- | ---: | ---: | ---: |",
    ]
    previous: list[dict[str, float]] | None = None
    for step, rows in results:
        r10 = 100 * sum(r["R@10"] for r in rows) / len(rows)
        mrr = 100 * sum(r["MRR"] for r in rows) / len(rows)
        delta = ""
        if previous is not None:
            d, lo, hi = paired_bootstrap([r["R@10"] for r in rows], [r["R@10"] for r in previous])
            delta = f"{100 * d:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]"
        lines.append(f"| {step} | {r10:.1f} | {mrr:.1f} | {delta} |")
        previous = rows
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--locomo", default=str(DEFAULT_LOCOMO), help="path to locomo_dev.json")
    ap.add_argument(
        "--redocred", default=str(DEFAULT_REDOCRED_RETRIEVAL), help="path to retrieval_dev.json"
    )
    ap.add_argument(
        "--redocred-queries",
        type=int,
        default=1500,
        help="random subset of full-variant queries (fixed seed 0)",
    )
    args = ap.parse_args(argv)
    out = [machine_line(), ""]
    convs = load_locomo(args.locomo)
    groups = [
        (c.records, [q for q in c.queries if q.tags["category"] in (1, 2, 3, 4)]) for c in convs
    ]
    out.append(table("LoCoMo dev, categories 1-4", run(groups, "locomo")))
    records, queries = load_redocred_retrieval(args.redocred)
    full = [q for q in queries if q.tags.get("variant") == "full"]
    random.Random(0).shuffle(full)
    subset = full[: args.redocred_queries]
    out.append("")
    out.append(
        table(
            f"Re-DocRED retrieval, {len(subset)} random full-variant queries",
            run([(records, subset)], "redocred"),
        )
    )
    print("\n".join(out))


if __name__ == "__main__":
    main()
