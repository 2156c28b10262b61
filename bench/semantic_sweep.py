"""Choose the fusion of meaning by measurement: one ingest, many rankings (dev data only).

Ingests each LoCoMo dev conversation (and, with ``--redocred``, the Re-DocRED dev sentences)
once with vectors, then asks every question under each variant of
:class:`~graphmem.retrieval.weights.RankingWeights` given (``name:field=value,...``; the
variant ``off`` sets both semantic weights to 0, which is ``GRAPHMEM_SEMANTIC=off``'s
ranking). Prints R@10 and MRR per category for each variant and its paired difference from
``off`` (95% interval). The committed defaults are checked afterwards with the benchmarks'
own scripts (``locomo_retrieval.py``, ``redocred_retrieval.py``, ``compare_runs.py``).

``--store DIR`` keeps each ingested memory in a SQLite file there (and its record ids beside
it) and reopens it on the next run, so that a change of the ranking's code is measured without
a new ingest; ``--dump FILE`` writes every question's ranked ids per variant (JSON lines).

Example:
    python bench/semantic_sweep.py --systems graphmem-cortex \\
        --variant a:semantic=0.3,semantic_alone=0.3 --variant b:semantic_alone=0.2
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

from common import (
    DEFAULT_LOCOMO,
    DEFAULT_REDOCRED_RETRIEVAL,
    REPO_ROOT,
    GraphmemCortexSystem,
    GraphmemLongTermSystem,
    load_locomo,
    load_redocred_retrieval,
    log,
    paired_bootstrap,
    score_ranking,
)

import graphmem.retrieval.weights as weights_module

DATA = REPO_ROOT / "tests" / "data"


def parse_variant(text: str) -> tuple[str, dict[str, Any]]:
    name, _, fields = text.partition(":")
    out: dict[str, Any] = {}
    for part in filter(None, fields.split(",")):
        key, _, value = part.partition("=")
        out[key] = type(getattr(weights_module.DEFAULT_WEIGHTS, key))(value)
    return name, out


def paraphrase_sets() -> list[tuple[str, Any, list[tuple[str, str]]]]:
    """(name, memory, [(query, memory id)]) of the test set and the unnamed dev set."""
    from graphmem import LongTermMemory

    out = []
    named = json.loads((DATA / "paraphrases.json").read_text(encoding="utf-8"))
    memory = LongTermMemory()
    for line in named["background"]:
        memory.save(line)
    ids = [
        memory.save(p["note"], metadata={"speaker": p["speaker"]}).memory_id for p in named["pairs"]
    ]
    for speaker in sorted({p["speaker"] for p in named["pairs"]}):
        for line in named["small_talk"]:
            memory.save(line, metadata={"speaker": speaker})
    out.append(
        ("named", memory, [(p["query"], i) for p, i in zip(named["pairs"], ids, strict=True)])
    )
    unnamed = json.loads((DATA / "paraphrases_unnamed.json").read_text(encoding="utf-8"))
    memory = LongTermMemory()
    ids = [memory.save(p["note"]).memory_id for p in unnamed["pairs"]]
    for line in unnamed["distractors"]:
        memory.save(line)
    out.append(
        ("unnamed", memory, [(p["query"], i) for p, i in zip(unnamed["pairs"], ids, strict=True)])
    )
    return out


def ranks_at_5(memory: Any, pairs: list[tuple[str, str]]) -> int:
    return sum(i in [x.memory_id for x in memory.search(q, limit=5)] for q, i in pairs)


def cached(system: Any, store: Path | None, key: str, records: Any) -> None:
    """Fill ``system`` with ``records``: reopened from ``store``/``key`` when it was ingested
    there before, else ingested (into that file when ``store`` is given)."""
    if store is None:
        system.reset()
        system.ingest(records)
        return
    from graphmem import SQLiteStorage

    store.mkdir(parents=True, exist_ok=True)
    path, ids = store / f"{key}.sqlite", store / f"{key}.ids.json"
    system._memory_kwargs = {"storage": SQLiteStorage(str(path))}
    system.reset()
    if ids.exists():
        if hasattr(system, "_id_of"):
            system._id_of = json.loads(ids.read_text(encoding="utf-8"))
        return
    system.ingest(records)
    ids.write_text(json.dumps(getattr(system, "_id_of", {})), encoding="utf-8")


def report(bench: str, variants: list[tuple[str, dict[str, Any]]], per: dict) -> None:
    """Print each variant's R@10 and MRR per tag, with its paired difference from off."""
    base = per[(bench, "off")]
    tags = sorted({r["tag"] for r in base})
    for vname, _ in variants:
        rows = per[(bench, vname)]
        line = [f"{bench:22} {vname:10}"]
        for tag in ["all", *tags]:
            # LoCoMo's overall is categories 1-4 (5, adversarial, is reported on its own).
            keep = [
                i
                for i, r in enumerate(base)
                if r["tag"] == tag or (tag == "all" and r["tag"] != "5")
            ]
            for metric in ("R@10", "MRR"):
                after = [rows[i]["m"][metric] * 100 for i in keep]
                before = [base[i]["m"][metric] * 100 for i in keep]
                mean = sum(after) / len(after)
                diff, lo, hi = paired_bootstrap(after, before)
                line.append(f"{tag}:{metric} {mean:.1f} ({diff:+.1f} [{lo:+.1f},{hi:+.1f}])")
        print(" | ".join(line), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--systems", default="graphmem,graphmem-cortex")
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("--redocred", type=int, default=0, help="Re-DocRED queries (0: skip)")
    ap.add_argument("--locomo", type=int, default=1, help="0: skip LoCoMo")
    ap.add_argument("--conversations", default="", help="LoCoMo conversations (e.g. 0,1; all)")
    ap.add_argument("--store", type=Path, help="keep (and reuse) the ingested memories here")
    ap.add_argument("--dump", type=Path, help="write each question's ranking (JSON lines)")
    ap.add_argument("--no-paraphrases", action="store_true")
    a = ap.parse_args()
    defaults = weights_module.DEFAULT_WEIGHTS
    off = {"semantic": 0.0, "semantic_alone": 0.0, "semantic_weak": 0.0, "semantic_alone_weak": 0.0}
    variants = [("off", off), ("default", {})] if not a.variant else [("off", off)]
    variants += [parse_variant(v) for v in a.variant]
    per: dict[tuple[str, str], list[dict[str, Any]]] = {}
    sets = [] if a.no_paraphrases else paraphrase_sets()
    for vname, fields in variants:
        weights_module.DEFAULT_WEIGHTS = replace(defaults, **fields)
        found = [f"{name} {ranks_at_5(memory, pairs)}/{len(pairs)}" for name, memory, pairs in sets]
        print(f"paraphrases {vname:10} " + " | ".join(found), flush=True)
    weights_module.DEFAULT_WEIGHTS = defaults
    benches: list[tuple[str, Any, list[tuple[str, Any, Any]]]] = []
    if a.locomo:
        conversations = load_locomo(DEFAULT_LOCOMO)
        keep = {int(i) for i in a.conversations.split(",") if i} or set(range(len(conversations)))
        groups = [
            (c.sample_id, c.records, c.queries) for i, c in enumerate(conversations) if i in keep
        ]
        for name in a.systems.split(","):
            system = (
                GraphmemCortexSystem() if name == "graphmem-cortex" else GraphmemLongTermSystem()
            )
            benches.append((f"locomo/{name}", system, groups))
    if a.redocred:
        records, queries = load_redocred_retrieval(DEFAULT_REDOCRED_RETRIEVAL)
        queries = random.Random(0).sample(queries, min(a.redocred, len(queries)))
        benches.append(("redocred/graphmem", GraphmemLongTermSystem(), [("all", records, queries)]))
    for bench, system, groups in benches:
        for key, records, queries in groups:
            cached(system, a.store, f"{bench.replace('/', '-')}-{key}", records)
            for vname, fields in variants:
                weights_module.DEFAULT_WEIGHTS = replace(defaults, **fields)
                ranked = system.search_many([q.question for q in queries], 50)
                for q, r in zip(queries, ranked, strict=True):
                    tag = q.tags.get("category", q.tags.get("lex", ""))
                    row = {"qid": q.qid, "tag": str(tag), "m": score_ranking(r, q.gold, (10,))}
                    per.setdefault((bench, vname), []).append(row)
                    if a.dump is not None:
                        line = {"bench": bench, "variant": vname, "gold": q.gold, "ranked": r}
                        with a.dump.open("a", encoding="utf-8") as out:
                            out.write(json.dumps({**line, "qid": q.qid, "tag": str(tag)}) + "\n")
            weights_module.DEFAULT_WEIGHTS = defaults
            log(f"{bench}: {len(queries)} queries x {len(variants)} rankings")
        report(bench, variants, per)


if __name__ == "__main__":
    main()
