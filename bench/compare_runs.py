"""Paired bootstrap between two runs of a retrieval benchmark (before / after a change).

Reads two results files written by ``locomo_retrieval.py`` or ``redocred_retrieval.py``
(``bench/results/<stem>.json``) and, for each system in both, compares the per-question
metrics over the questions both answered: the mean difference (after - before) in points and
its 95% interval (2,000 resamples, seed 0), overall and per subset.

Example:
    python bench/compare_runs.py bench/results/before_locomo.json bench/results/locomo_retrieval.json
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from common import markdown_table, paired_bootstrap

METRICS = ("R@10", "MRR")


def _subsets(benchmark: str) -> Mapping[str, Callable[[Mapping[str, Any]], bool]]:
    """The subsets the benchmark itself reports."""
    if benchmark == "locomo_retrieval":
        from locomo_retrieval import category_groups

        return category_groups()
    from redocred_retrieval import tag_groups

    return tag_groups()


def compare(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[list[str]]:
    """One row per system, subset and metric: before, after, difference [95% CI]."""
    rows: list[list[str]] = []
    subsets = _subsets(str(after.get("benchmark")))
    for name in after["results"]:
        if name not in before["results"]:
            continue
        old = {r["qid"]: r for r in before["results"][name]["per_question"]}
        new = [r for r in after["results"][name]["per_question"] if r["qid"] in old]
        for subset, keep in subsets.items():
            chosen = [r for r in new if keep(r)]
            if not chosen:
                continue
            for metric in METRICS:
                a = [float(r["metrics"][metric]) for r in chosen]
                b = [float(old[r["qid"]]["metrics"][metric]) for r in chosen]
                diff, low, high = paired_bootstrap(a, b)
                rows.append(
                    [
                        name,
                        subset,
                        metric,
                        str(len(chosen)),
                        f"{100 * sum(b) / len(b):.1f}",
                        f"{100 * sum(a) / len(a):.1f}",
                        f"{100 * diff:+.1f} [{100 * low:+.1f}, {100 * high:+.1f}]",
                    ]
                )
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    a = ap.parse_args(argv)
    before = json.loads(a.before.read_text(encoding="utf-8"))
    after = json.loads(a.after.read_text(encoding="utf-8"))
    headers = ["system", "subset", "metric", "n", "before", "after", "Δ points [95% CI]"]
    print(markdown_table(headers, compare(before, after)))


if __name__ == "__main__":
    main()
