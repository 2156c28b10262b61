"""Unit tests of the benchmark scoring helpers (bench/common.py). Hermetic: no data files."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from common import (  # noqa: E402
    all_gold_at_k,
    bm25_tokens,
    normalize_evidence,
    normalize_evidence_id,
    paired_bootstrap,
    recall_at_k,
    reciprocal_rank,
    score_ranking,
)


class TestRecall:
    def test_partial_and_full(self) -> None:
        ranked = ["a", "b", "c", "d"]
        assert recall_at_k(ranked, ["b", "z"], 2) == 0.5
        assert recall_at_k(ranked, ["b", "d"], 4) == 1.0
        assert recall_at_k(ranked, ["d"], 3) == 0.0

    def test_empty_gold_and_short_list(self) -> None:
        assert recall_at_k(["a"], [], 10) == 0.0
        assert recall_at_k([], ["a"], 10) == 0.0
        assert recall_at_k(["a"], ["a"], 10) == 1.0

    def test_duplicate_gold_counts_once(self) -> None:
        assert recall_at_k(["a", "b"], ["a", "a", "c"], 2) == 0.5


class TestAllGoldAndMRR:
    def test_all_gold(self) -> None:
        assert all_gold_at_k(["a", "b", "c"], ["a", "c"], 3) == 1.0
        assert all_gold_at_k(["a", "b", "c"], ["a", "c"], 2) == 0.0
        assert all_gold_at_k(["a"], [], 10) == 0.0

    def test_mrr(self) -> None:
        assert reciprocal_rank(["x", "y", "g"], ["g"]) == pytest.approx(1 / 3)
        assert reciprocal_rank(["g", "h"], ["h", "g"]) == 1.0
        assert reciprocal_rank(["x"], ["g"]) == 0.0

    def test_score_ranking_keys(self) -> None:
        m = score_ranking(["x", "g"] + [f"n{i}" for i in range(20)], ["g", "h"])
        assert m == {"R@5": 0.5, "R@10": 0.5, "R@20": 0.5, "all@10": 0.0, "MRR": 0.5}


class TestEvidenceNormalisation:
    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            ("D1:3", ["D1:3"]),
            ("D8:6; D9:17", ["D8:6", "D9:17"]),
            ("D:11:26", ["D11:26"]),
            ("D30:05", ["D30:5"]),
            ("D", []),
            ("", []),
        ],
    )
    def test_one_id(self, raw: str, expected: list[str]) -> None:
        assert normalize_evidence_id(raw) == expected

    def test_drop_unknown_and_duplicates(self) -> None:
        valid = {"D1:1", "D2:5", "D8:6"}
        assert normalize_evidence(["D8:6; D9:17", "D2:05", "D2:5", "D"], valid) == ["D8:6", "D2:5"]
        assert normalize_evidence(["D40:1"], valid) == []


class TestBootstrap:
    def test_identical_systems_give_zero_interval(self) -> None:
        assert paired_bootstrap([1, 0, 1], [1, 0, 1]) == (0.0, 0.0, 0.0)

    def test_constant_difference(self) -> None:
        # Every question improves by exactly 0.5: every resample's mean difference is 0.5.
        d, lo, hi = paired_bootstrap([1.0, 0.5, 1.0, 0.5], [0.5, 0.0, 0.5, 0.0])
        assert (d, lo, hi) == pytest.approx((0.5, 0.5, 0.5))

    def test_known_two_point_distribution(self) -> None:
        # Differences: one question +1, one 0. A resample of 2 has mean 0 (p=1/4), 0.5 (1/2) or
        # 1 (1/4): the 95% percentile interval is [0, 1] and the observed mean is 0.5.
        d, lo, hi = paired_bootstrap([1.0, 0.0], [0.0, 0.0], n_resamples=2000, seed=0)
        assert d == 0.5 and lo == 0.0 and hi == 1.0

    def test_deterministic_and_brackets_mean(self) -> None:
        rng = np.random.default_rng(1)
        a, b = rng.random(50), rng.random(50)
        r1, r2 = paired_bootstrap(a, b), paired_bootstrap(a, b)
        assert r1 == r2
        assert r1[1] <= r1[0] <= r1[2]

    def test_rejects_mismatched(self) -> None:
        with pytest.raises(ValueError):
            paired_bootstrap([1.0], [1.0, 2.0])


def test_bm25_tokens() -> None:
    assert bm25_tokens("What did Caroline's 2 dogs do at the park?") == [
        "did",
        "caroline",
        "s",
        "2",
        "dogs",
        "park",
    ]


def test_cortex_adapter_ranks_record_ids_with_speaker_and_conversation() -> None:
    from common import GraphmemCortexSystem, Record

    records = [
        Record("D1:1", "Ann: Did you watch the meteor shower?", {"speaker": "Ann"}, "conv-1"),
        Record("D1:2", "Bob: Yes, I felt tiny under that sky.", {"speaker": "Bob"}, "conv-1"),
        Record("D1:3", "Ann: The bakery closes early now.", {"speaker": "Ann"}, "conv-1"),
    ]
    system = GraphmemCortexSystem()
    system.ingest(records)
    (ranked,) = system.search_many(["meteor shower"], 5)
    assert ranked[:2] == ["D1:1", "D1:2"]  # the reply comes in through the conversation
    (item,) = system.memory.contextual.retrieve(filters={"record_id": "D1:2"})
    assert (item.agent_id, item.conversation_id) == ("Bob", "conv-1")
    system.reset()
    assert system.search_many(["meteor shower"], 5) == [[]]


class TestSpeedRegressionCheck:
    """bench/regression_check.py: a cost ratio more than 25% above the baseline, or a
    throughput share more than 25% below it, is a regression; absolute figures are not."""

    def test_costs_and_shares(self) -> None:
        from regression_check import regressions

        baseline = {
            "1000": {
                "context/calute": 2.0,
                "batch throughput/raw nlp.pipe": 0.8,
                "peak RSS MB": 300.0,
            }
        }
        fine = {
            "1000": {
                "context/calute": 2.4,
                "batch throughput/raw nlp.pipe": 0.66,
                "peak RSS MB": 900.0,
            }
        }
        assert regressions(fine, baseline) == ([], 2)
        slow = {"1000": {"context/calute": 2.6, "batch throughput/raw nlp.pipe": 0.6}}
        found, compared = regressions(slow, baseline)
        assert compared == 2
        assert [line.split(":")[0] for line in found] == [
            "N=1000 context/calute",
            "N=1000 batch throughput/raw nlp.pipe",
        ]

    def test_sizes_missing_from_the_baseline_are_not_compared(self) -> None:
        from regression_check import regressions

        assert regressions({"100000": {"context/calute": 9.0}}, {"1000": {}}) == ([], 0)
