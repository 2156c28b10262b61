"""LoCoMo conversational-memory retrieval: recall@5/10/20, all-gold@10, MRR per category.

Protocol (../shared/data/README.md): per conversation, a fresh memory; each turn saved as one
memory ``"<speaker>: <text>"`` with metadata ``dia_id``, ``session``, ``session_date``,
``speaker`` and ``conversation_id`` = the sample id; every question asked with no filter; the
returned items are mapped back to their ``dia_id`` and scored against the normalised evidence.
Categories 1-4 are reported as "overall"; 5 (adversarial) separately.

Systems: ``bm25`` (the README's reference), ``graphmem`` (``graphmem.LongTermMemory``),
``graphmem-cortex`` (the ``graphmem.CortexMemory`` facade: each turn a task result with the
speaker as ``agent_role`` and the conversation in ``task_metadata``, ranked by
``CortexMemory.search``; see ``common.GraphmemCortexSystem``), ``calute`` (calute 0.1.5 ``LongTermMemory().search`` as shipped: the SHA-256 "semantic" path) and
``calute-keyword`` (its ``use_semantic=False`` substring-keyword path). calute runs in its own
venv (bench/.venvs/calute-0.1.5, created on first use) through bench/calute_worker.py.

Example:
    python bench/locomo_retrieval.py --systems bm25,graphmem,calute,calute-keyword
    python bench/locomo_retrieval.py --systems bm25,graphmem,graphmem-cortex
"""

from __future__ import annotations

import argparse
from typing import Any

from common import (
    DEFAULT_LOCOMO,
    LOCOMO_CATEGORIES,
    BM25System,
    CaluteLongTermSystem,
    CaluteWorker,
    GraphmemCortexSystem,
    RetrievalSystem,
    bootstrap_vs,
    group_metrics,
    load_locomo,
    log,
    machine_facts,
    machine_line,
    markdown_table,
    run_retrieval,
    try_graphmem_system,
    write_results,
)

ALL_SYSTEMS = ("bm25", "graphmem", "graphmem-cortex", "calute", "calute-keyword")
REFERENCE_BM25 = {
    "R@5": 50.5,
    "R@10": 57.4,
    "R@20": 62.4,
    "multi-hop R@10": 27.9,
    "open-domain R@10": 29.5,
    "adversarial R@10": 62.0,
}


def make_systems(
    names: list[str], calute_venv: str | None, cortex_importance: float = 0.7
) -> list[RetrievalSystem]:
    systems: list[RetrievalSystem] = []
    worker: CaluteWorker | None = None
    for name in names:
        if name == "bm25":
            systems.append(BM25System())
        elif name == "graphmem":
            gm = try_graphmem_system()
            if gm is not None:
                systems.append(gm)
        elif name == "graphmem-cortex":
            systems.append(GraphmemCortexSystem(importance=cortex_importance))
        elif name in ("calute", "calute-keyword"):
            if worker is None:
                worker = CaluteWorker(calute_venv) if calute_venv else CaluteWorker()
                log(f"calute worker: {worker.info}")
            sysm = CaluteLongTermSystem("semantic" if name == "calute" else "keyword", worker)
            sysm.name = name
            systems.append(sysm)
        else:
            raise SystemExit(f"unknown system {name!r}; choose from {', '.join(ALL_SYSTEMS)}")
    return systems


def category_groups() -> dict[str, Any]:
    groups: dict[str, Any] = {"overall (1-4)": lambda r: r["tags"]["category"] in (1, 2, 3, 4)}
    for cat in (1, 2, 3, 4, 5):
        groups[LOCOMO_CATEGORIES[cat]] = lambda r, c=cat: r["tags"]["category"] == c
    return groups


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--locomo", default=str(DEFAULT_LOCOMO), help="path to locomo_dev.json")
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
    ap.add_argument("--calute-venv", default=None, help="calute venv (default bench/.venvs/...)")
    ap.add_argument(
        "--cortex-importance",
        type=float,
        default=0.7,
        help="importance of every turn saved through the facade (graphmem-cortex)",
    )
    ap.add_argument("--out", default="locomo_retrieval", help="results file stem in bench/results/")
    args = ap.parse_args(argv)

    conversations = load_locomo(args.locomo)
    n_q = sum(len(c.queries) for c in conversations)
    log(
        f"LoCoMo: {len(conversations)} conversations, {sum(len(c.records) for c in conversations)} "
        f"turns, {n_q} questions kept, {sum(c.skipped_questions for c in conversations)} skipped "
        f"(no valid evidence), {sum(c.dropped_evidence for c in conversations)} evidence ids dropped"
    )
    groups = [(c.records, c.queries) for c in conversations]
    systems = make_systems(
        [s.strip() for s in args.systems.split(",") if s.strip()],
        args.calute_venv,
        args.cortex_importance,
    )

    results: dict[str, dict[str, Any]] = {}
    try:
        for system in systems:
            res = run_retrieval(system, groups, depth=args.depth)
            res["groups"] = group_metrics(res["per_question"], category_groups())
            if hasattr(system, "timings"):
                res["worker_seconds"] = dict(system.timings)
            results[system.name] = res
    finally:
        for system in systems:
            system.close()

    cats = list(category_groups())
    print(f"## LoCoMo retrieval ({args.locomo})\n\n{machine_line()}\n")
    headers = ["system", "R@5", "R@10", "R@20", "all@10", "MRR"] + [f"{c} R@10" for c in cats[1:]]
    rows = []
    for name, res in results.items():
        g = res["groups"]
        o = g["overall (1-4)"]
        rows.append(
            [name, o["R@5"], o["R@10"], o["R@20"], o["all@10"], o["MRR"]]
            + [g[c].get("R@10", float("nan")) for c in cats[1:]]
        )
    rows.append(["README bm25 reference", 50.5, 57.4, 62.4, "", "", 27.9, "", 29.5, "", 62.0])
    n_overall = next(iter(results.values()))["groups"]["overall (1-4)"]["n"] if results else 0
    print(f"Overall = categories 1-4 ({n_overall} questions); adversarial (5) separately.\n")
    print(markdown_table(headers, rows))

    comparisons: dict[str, Any] = {}
    if "bm25" in results and len(results) > 1:
        is_overall = category_groups()["overall (1-4)"]
        for metric in ("R@10", "MRR"):
            comparisons[metric] = bootstrap_vs(results, "bm25", metric, is_overall)
        print("\nPaired bootstrap vs bm25 (categories 1-4, 2000 resamples, seed 0), points:\n")
        brow = []
        for name in comparisons["R@10"]:
            d10, lo10, hi10 = comparisons["R@10"][name]
            dm, lom, him = comparisons["MRR"][name]
            brow.append(
                [
                    name,
                    f"{d10:+.1f} [{lo10:+.1f}, {hi10:+.1f}]",
                    f"{dm:+.1f} [{lom:+.1f}, {him:+.1f}]",
                ]
            )
        print(markdown_table(["system", "ΔR@10 [95% CI]", "ΔMRR [95% CI]"], brow))

    path = write_results(
        args.out,
        {
            "benchmark": "locomo_retrieval",
            "data": args.locomo,
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
