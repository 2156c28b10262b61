"""Speed regression check: fail when graphmem's cost relative to the same run's references
grew more than 25% against the committed baseline.

Reads a ``bench/speed.py`` result (``--json`` of that script) and compares its issue-15
ratios (:func:`speed.figures`: graphmem over calute's context and a bare FTS5 top-50 query,
a context after a save over a plain one, per-call save over raw spaCy, batch throughput as a
share of raw ``nlp.pipe``) with ``bench/results/speed_baseline.json``. Ratios are taken within
one run, so a slower or busier machine moves both sides; absolute times are not compared.
Run it before every change to extraction, storage, retrieval or the facade lands:

    python bench/speed.py --sizes 1000,10000 --per-call-max 1000 --json /tmp/speed.json
    python bench/regression_check.py /tmp/speed.json              # exit 1 on a regression
    python bench/regression_check.py /tmp/speed.json --update     # accept it as the baseline

Exit status: 0 all within the tolerance, 1 a figure regressed, 2 nothing to compare.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from speed import figures

BENCH_DIR = Path(__file__).resolve().parent
BASELINE = BENCH_DIR / "results" / "speed_baseline.json"
#: How much worse a ratio may get before the check fails (1.25: 25%).
TOLERANCE = 1.25
#: Figures where more is better (a share of the reference's throughput); the others are costs.
HIGHER_IS_BETTER = frozenset(
    {
        "batch throughput/raw nlp.pipe",
        "batch per CPU-s/raw nlp.pipe per CPU-s",
        "batch throughput, 2 workers/raw nlp.pipe",
    }
)
#: Figures that are ratios against a reference of the same run (absolute ones are not checked).
CHECKED = frozenset(
    {
        "context/calute",
        "context/fts5",
        "context after save/context",
        "per-call save/raw spaCy",
        "per-call save onto N/raw spaCy",
        "per-call save onto N CPU/raw spaCy CPU",
        "batch throughput/raw nlp.pipe",
        "batch per CPU-s/raw nlp.pipe per CPU-s",
        "batch throughput, 2 workers/raw nlp.pipe",
    }
)
#: Figures the baseline must hold at 10k (the size where a cost that grows with the store
#: shows): a run that measured 10k but lacks one of them fails.
REQUIRED_AT_10K = (
    "per-call save onto N/raw spaCy",
    "per-call save onto N CPU/raw spaCy CPU",
    "batch throughput/raw nlp.pipe",
    "batch per CPU-s/raw nlp.pipe per CPU-s",
)


def regressions(
    run: dict[str, dict[str, float]], baseline: dict[str, dict[str, float]]
) -> tuple[list[str], int]:
    """The figures of ``run`` worse than ``baseline`` by more than :data:`TOLERANCE`, as
    lines to print, and how many figures were compared.

    Example:
        >>> regressions({"1000": {"context/calute": 1.6}}, {"1000": {"context/calute": 1.2}})
        (['N=1000 context/calute: 1.60 vs baseline 1.20 (1.33x worse)'], 1)
    """
    found: list[str] = []
    compared = 0
    if "10000" in run:
        found += [
            f"N=10000 {name}: not measured"
            for name in REQUIRED_AT_10K
            if name in baseline.get("10000", {}) and name not in run["10000"]
        ]
    for size, row in run.items():
        for name, value in row.items():
            before = baseline.get(size, {}).get(name)
            if name not in CHECKED or not before or not value:
                continue
            compared += 1
            worse = before / value if name in HIGHER_IS_BETTER else value / before
            if worse > TOLERANCE:
                found.append(
                    f"N={size} {name}: {value:.2f} vs baseline {before:.2f} ({worse:.2f}x worse)"
                )
    return found, compared


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("run", help="a bench/speed.py --json result")
    ap.add_argument("--baseline", default=str(BASELINE))
    ap.add_argument("--update", action="store_true", help="write the run's figures as baseline")
    a = ap.parse_args(argv)
    data = json.loads(Path(a.run).read_text())
    run = figures(data.get("results", data))  # speed.py nests its results
    if a.update:
        Path(a.baseline).write_text(json.dumps(run, indent=2, sort_keys=True) + "\n")
        print(f"baseline {a.baseline} updated from {a.run}")
        return 0
    baseline = json.loads(Path(a.baseline).read_text())
    found, compared = regressions(run, baseline)
    for size, row in sorted(run.items(), key=lambda kv: int(kv[0])):
        for name, value in row.items():
            before = baseline.get(size, {}).get(name)
            shown = f"{before:.2f}" if before else "-"
            print(f"N={size:>6} {name:<32} {value:8.2f}  baseline {shown}")
    if not compared:
        print("nothing to compare: the run and the baseline share no figure", file=sys.stderr)
        return 2
    for line in found:
        print(f"REGRESSION {line}", file=sys.stderr)
    print(f"{compared} figures compared, {len(found)} regressed (tolerance {TOLERANCE:.2f}x)")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
