"""Re-DocRED entity-rich retrieval: where entity linking and graph neighbourhoods should matter.

Protocol (../shared/data/README.md): all 4,110 sentences of the 500 dev documents go into ONE
memory (a save per sentence, ``conversation_id`` = the document title, metadata as given); every
templated question (e.g. "What is the country of citizenship of X?") is asked with no filter; the
ranked items are scored against the triple's evidence sentences: recall@5/10/20, all-gold@10, MRR,
per tag (lex easy/alias/pronoun/bridge; needs-resolution = alias+pronoun+bridge; evid
single/multi) for the full variant (head named by its longest mention), and R@10/MRR for the short
variant (head named by its shortest mention).

Systems: ``bm25`` (the README's reference), ``graphmem`` (``graphmem.LongTermMemory``),
``calute`` (calute 0.1.5 ``LongTermMemory().search`` as shipped, SHA-256 "semantic" path) and
``calute-keyword`` (``use_semantic=False``). calute runs in its own venv via
bench/calute_worker.py. The calute systems are O(items x queries) in pure Python; use
``--calute-max-queries`` to score them on a fixed random subset (the same subset is then used
for the bootstrap against bm25).

Example:
    python bench/redocred_retrieval.py --systems bm25,calute-keyword
"""

from __future__ import annotations

import argparse
import random
from typing import Any

from common import (
    DEFAULT_REDOCRED_RETRIEVAL,
    BM25System,
    CaluteLongTermSystem,
    CaluteWorker,
    Query,
    RetrievalSystem,
    bootstrap_vs,
    group_metrics,
    load_redocred_retrieval,
    log,
    machine_facts,
    machine_line,
    markdown_table,
    run_retrieval,
    try_graphmem_system,
    write_results,
)

ALL_SYSTEMS = ("bm25", "graphmem", "calute", "calute-keyword")
REFERENCE_BM25 = {
    "full R@5": 65.8,
    "full R@10": 70.9,
    "full all@10": 51.4,
    "full MRR": 73.5,
    "needs-resolution R@10": 52.3,
    "multi R@10": 54.2,
    "short R@10": 61.8,
    "short MRR": 39.6,
}


def tag_groups() -> dict[str, Any]:
    def full(r: dict[str, Any]) -> bool:
        return r["tags"]["variant"] == "full"

    g: dict[str, Any] = {"full": full}
    for lex in ("easy", "alias", "pronoun", "bridge"):
        g[f"full/{lex}"] = lambda r, lex=lex: full(r) and r["tags"]["lex"] == lex
    g["full/needs-resolution"] = lambda r: full(r) and r["tags"]["needs_resolution"]
    for ev in ("single", "multi"):
        g[f"full/{ev}"] = lambda r, ev=ev: full(r) and r["tags"]["evid"] == ev
    g["short"] = lambda r: r["tags"]["variant"] == "short"
    return g


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--data", default=str(DEFAULT_REDOCRED_RETRIEVAL), help="path to retrieval_dev.json"
    )
    ap.add_argument(
        "--systems",
        default=",".join(ALL_SYSTEMS),
        help=f"comma-separated subset of {','.join(ALL_SYSTEMS)}",
    )
    ap.add_argument(
        "--depth",
        type=int,
        default=50,
        help="ranked items requested per question (MRR looks this deep)",
    )
    ap.add_argument(
        "--max-queries",
        type=int,
        default=0,
        help="score every system on a fixed random subset of this size (0 = all)",
    )
    ap.add_argument(
        "--calute-max-queries",
        type=int,
        default=1000,
        help="query subset size for the calute systems (0 = all; the SHA-256 path "
        "takes ~0.1 s per query over 4,110 items)",
    )
    ap.add_argument("--seed", type=int, default=0, help="seed of the query subsets")
    ap.add_argument("--calute-venv", default=None, help="calute venv (default bench/.venvs/...)")
    ap.add_argument(
        "--out", default="redocred_retrieval", help="results file stem in bench/results/"
    )
    args = ap.parse_args(argv)

    records, queries = load_redocred_retrieval(args.data)
    if args.max_queries and args.max_queries < len(queries):
        queries = sorted(
            random.Random(args.seed).sample(queries, args.max_queries), key=lambda q: q.qid
        )
    n_full = sum(q.tags["variant"] == "full" for q in queries)
    log(
        f"Re-DocRED retrieval: {len(records)} items, {len(queries)} queries "
        f"({n_full} full, {len(queries) - n_full} short)"
    )

    names = [s.strip() for s in args.systems.split(",") if s.strip()]
    results: dict[str, dict[str, Any]] = {}
    worker: CaluteWorker | None = None
    try:
        for name in names:
            system: RetrievalSystem | None
            qs: list[Query] = queries
            if name == "bm25":
                system = BM25System()
            elif name == "graphmem":
                system = try_graphmem_system()
            elif name in ("calute", "calute-keyword"):
                if worker is None:
                    worker = CaluteWorker(args.calute_venv) if args.calute_venv else CaluteWorker()
                    log(f"calute worker: {worker.info}")
                system = CaluteLongTermSystem("semantic" if name == "calute" else "keyword", worker)
                system.name = name
                if args.calute_max_queries and args.calute_max_queries < len(queries):
                    qs = sorted(
                        random.Random(args.seed).sample(queries, args.calute_max_queries),
                        key=lambda q: q.qid,
                    )
                    log(f"{name}: scoring a fixed random subset of {len(qs)} queries")
            else:
                raise SystemExit(f"unknown system {name!r}; choose from {', '.join(ALL_SYSTEMS)}")
            if system is None:
                continue
            # One memory for everything; search in chunks so progress shows.
            system.reset()
            chunks = [qs[i : i + 1000] for i in range(0, len(qs), 1000)]
            res = run_retrieval(system, [(records, chunks[0])], depth=args.depth)
            for ci, chunk in enumerate(chunks[1:], start=2):
                rankings = system.search_many([q.question for q in chunk], args.depth)
                from common import score_ranking

                for q, ranked in zip(chunk, rankings, strict=True):
                    res["per_question"].append(
                        {
                            "qid": q.qid,
                            "tags": q.tags,
                            "gold": q.gold,
                            "ranked": ranked,
                            "metrics": score_ranking(ranked, q.gold),
                        }
                    )
                log(f"{name}: query chunk {ci}/{len(chunks)}")
            res["n_queries"] = len(qs)
            res["groups"] = group_metrics(res["per_question"], tag_groups())
            if hasattr(system, "timings"):
                res["worker_seconds"] = dict(system.timings)
            results[name] = res
            system.close()
    finally:
        if worker is not None:
            worker.close()

    print(f"## Re-DocRED retrieval ({args.data})\n\n{machine_line()}\n")
    headers = [
        "system",
        "n",
        "R@5",
        "R@10",
        "R@20",
        "all@10",
        "MRR",
        "easy R@10",
        "alias R@10",
        "pronoun R@10",
        "bridge R@10",
        "needs-res R@10",
        "single R@10",
        "multi R@10",
        "short R@10",
        "short MRR",
    ]
    rows = []
    for name, res in results.items():
        g = res["groups"]
        f = g["full"]
        rows.append(
            [
                name,
                res["n_queries"],
                f.get("R@5"),
                f.get("R@10"),
                f.get("R@20"),
                f.get("all@10"),
                f.get("MRR"),
            ]
            + [
                g[k].get("R@10")
                for k in (
                    "full/easy",
                    "full/alias",
                    "full/pronoun",
                    "full/bridge",
                    "full/needs-resolution",
                    "full/single",
                    "full/multi",
                    "short",
                )
            ]
            + [g["short"].get("MRR")]
        )
    rows.append(
        [
            "README bm25 reference",
            "",
            65.8,
            70.9,
            "",
            51.4,
            73.5,
            "",
            "",
            "",
            "",
            52.3,
            "",
            54.2,
            61.8,
            39.6,
        ]
    )
    print(markdown_table(headers, rows))

    comparisons: dict[str, Any] = {}
    if "bm25" in results and len(results) > 1:

        def is_full(r: dict[str, Any]) -> bool:
            return r["tags"]["variant"] == "full"

        def needs_res(r: dict[str, Any]) -> bool:
            return is_full(r) and r["tags"]["needs_resolution"]

        for label, subset in (("full", is_full), ("needs-resolution", needs_res)):
            for metric in ("R@10", "MRR"):
                comparisons[f"{label} {metric}"] = bootstrap_vs(results, "bm25", metric, subset)
        print("\nPaired bootstrap vs bm25 (full variant, 2000 resamples, seed 0), points:\n")
        brow = []
        for name in comparisons["full R@10"]:
            cells = [name]
            for key in ("full R@10", "full MRR", "needs-resolution R@10"):
                d, lo, hi = comparisons[key][name]
                cells.append(f"{d:+.1f} [{lo:+.1f}, {hi:+.1f}]")
            brow.append(cells)
        print(markdown_table(["system", "ΔR@10", "ΔMRR", "Δneeds-res R@10"], brow))

    path = write_results(
        args.out,
        {
            "benchmark": "redocred_retrieval",
            "data": args.data,
            "machine": machine_facts(),
            "depth": args.depth,
            "reference_bm25": REFERENCE_BM25,
            "comparisons_vs_bm25": comparisons,
            "results": results,
        },
    )
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
