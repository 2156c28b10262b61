"""Cross-validated estimate of the learned relation extractor on Re-DocRED, beside the
shipped model's single hold-out (bench/redocred_relations.py), so the generalisation gap shows.

For each fold K (documents with index % 5 == K held out) this script makes a throwaway copy
of the checkout at HEAD (``git worktree``), trains the model there without fold K
(``scripts/train_relations.py --fold K``, needs the ``train`` extra), runs
``bench/redocred_relations.py --fold K`` against that copy, and finally prints each fold's end
to end figures with their mean and range. Fold 4 is the shipped model's hold-out; it is trained
again too, so all folds are treated alike (``--folds`` picks fewer).

    python bench/redocred_cv.py --folds 0,1,2,3,4 --out redocred_cv

Every fold costs a training run and three end-to-end ingests of 100 abstracts (about 10 CPU
minutes each on the reference machine).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import DEFAULT_REDOCRED_DEV, log, machine_line, markdown_table, write_results

ROOT = Path(__file__).resolve().parent.parent


def run_fold(fold: int, data: str, work: Path) -> dict[str, Any]:
    """Train without ``fold`` in a copy of HEAD, then score that copy on ``fold``."""
    copy = work / f"fold{fold}"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(copy), "HEAD"],
        check=True,
    )
    try:
        env = {"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin"}
        python = sys.executable
        log(f"fold {fold}: training")
        subprocess.run(
            [python, "scripts/train_relations.py", data, "--fold", str(fold)],
            cwd=copy,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        log(f"fold {fold}: scoring")
        out = work / f"fold{fold}_result"
        subprocess.run(
            [python, "bench/redocred_relations.py", "--data", data, "--fold", str(fold)]
            + ["--out", str(out)],
            cwd=copy,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        return json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(copy)], check=False
        )


def fold_row(fold: int, result: dict[str, Any]) -> dict[str, float]:
    """The end-to-end figures of one fold: learned model with its document stage vs off."""
    off, _first, on = result["end_to_end"]
    return {
        "fold": fold,
        "typed_precision": on["typed_precision"],
        "typed_linked_pair_share": on["typed_linked_pair_share"],
        "typed_per_abstract": on["typed_per_abstract"],
        "ingest_cpu_vs_off": on["cpu_seconds"] / off["cpu_seconds"] - 1,
        "gold_entities_P": result["gold_entities"]["overall"]["P"],
        "gold_entities_R": result["gold_entities"]["overall"]["R"],
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", default=str(DEFAULT_REDOCRED_DEV), help="path to dev_revised.json")
    ap.add_argument("--folds", default="0,1,2,3,4", help="comma-separated folds (0-4)")
    ap.add_argument("--out", default="redocred_cv", help="results file stem")
    args = ap.parse_args(argv)
    folds = [int(f) for f in args.folds.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="graphmem-cv-") as work:
        for fold in folds:
            rows.append(fold_row(fold, run_fold(fold, str(Path(args.data).resolve()), Path(work))))
    keys = [k for k in rows[0] if k != "fold"]
    summary = {
        k: {
            "mean": statistics.fmean(r[k] for r in rows),
            "min": min(r[k] for r in rows),
            "max": max(r[k] for r in rows),
        }
        for k in keys
    }
    print(f"## Re-DocRED, cross-validated by fold\n\n{machine_line()}\n")
    table = [[r["fold"], *(f"{r[k]:.3f}" for k in keys)] for r in rows]
    table.append(["mean", *(f"{summary[k]['mean']:.3f}" for k in keys)])
    print(markdown_table(["fold", *keys], table))
    log(
        f"results: {write_results(args.out, {'machine': machine_line(), 'folds': rows, 'summary': summary})}"
    )


if __name__ == "__main__":
    main()
