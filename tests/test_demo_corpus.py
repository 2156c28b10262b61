"""Checks for the bundled demo corpus, graphmem/demo_data/team_memories.jsonl.

These tests read only the data files. They do not import any other graphmem code.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from importlib.resources import files
from typing import Any

import pytest

DATA = files("graphmem.demo_data")
MEMORY_TYPES = {"task_result", "interaction", "decision", "note"}
START = datetime(2026, 3, 1, tzinfo=UTC)
END = datetime(2026, 7, 1, tzinfo=UTC)


def _lines() -> list[str]:
    text = DATA.joinpath("team_memories.jsonl").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]


def _rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in _lines()]


def _readme() -> str:
    return DATA.joinpath("README.md").read_text(encoding="utf-8")


def _cast() -> list[str]:
    """Bold names in the README's "## Cast" section."""
    section = _readme().split("## Cast", 1)[1].split("\n## ", 1)[0]
    return list(dict.fromkeys(re.findall(r"\*\*([^*]+)\*\*", section)))


def _corpus_text() -> str:
    return "\n".join(row["content"] for row in _rows())


def test_every_line_is_a_json_object() -> None:
    for number, line in enumerate(_lines(), start=1):
        row = json.loads(line)
        assert isinstance(row, dict), f"line {number} is not an object"


def test_row_count() -> None:
    assert 250 <= len(_rows()) <= 400


def test_required_fields_and_types() -> None:
    for number, row in enumerate(_rows(), start=1):
        where = f"line {number}"
        assert isinstance(row.get("content"), str) and row["content"].strip(), where
        assert isinstance(row.get("agent_id"), str) and row["agent_id"].strip(), where
        assert row.get("memory_type") in MEMORY_TYPES, where
        importance = row.get("importance")
        assert isinstance(importance, int | float) and not isinstance(importance, bool), where
        assert 0.0 <= importance <= 1.0, where
        assert "conversation_id" in row and (
            row["conversation_id"] is None or isinstance(row["conversation_id"], str)
        ), where
        assert "task_id" in row and (row["task_id"] is None or isinstance(row["task_id"], str)), (
            where
        )
        assert isinstance(row.get("timestamp"), str), where
        assert isinstance(row.get("metadata"), dict), where
        assert len(json.dumps(row["metadata"])) <= 300, f"{where}: metadata is not small"


def test_timestamps_are_iso_and_non_decreasing() -> None:
    previous = None
    for number, row in enumerate(_rows(), start=1):
        stamp = datetime.fromisoformat(row["timestamp"])
        assert stamp.tzinfo is not None, f"line {number} has no UTC offset"
        assert START <= stamp < END, f"line {number} is outside March to June 2026"
        if previous is not None:
            assert stamp >= previous, f"line {number} goes back in time"
        previous = stamp


def test_timeline_spans_four_months() -> None:
    months = {datetime.fromisoformat(row["timestamp"]).month for row in _rows()}
    assert months == {3, 4, 5, 6}


def test_agents_and_memory_types_are_varied() -> None:
    rows = _rows()
    assert len({row["agent_id"] for row in rows}) >= 8
    assert {row["memory_type"] for row in rows} == MEMORY_TYPES


def test_interactions_and_tasks_carry_ids() -> None:
    for row in _rows():
        if row["memory_type"] == "interaction":
            assert row["conversation_id"]
        if row["memory_type"] == "task_result":
            assert row["task_id"]


def test_readme_lists_a_cast() -> None:
    cast = _cast()
    assert len(cast) >= 30
    assert "Dana Whitfield" in cast and "Harbor Analytics" in cast


@pytest.mark.parametrize("name", _cast())
def test_corpus_mentions_cast_member(name: str) -> None:
    assert name in _corpus_text()


@pytest.mark.parametrize(
    "fact",
    [
        # "What changed for Dana Whitfield?"
        "Dana Whitfield left Northwind Systems",
        "Dana Whitfield started at Harbor Analytics today as head of data",
        "She moved from Boston to Dublin",
        # "Who works at Harbor Analytics?"
        "Their CEO Daniel Brooks",
        "Grace Liu, product manager at Harbor Analytics",
        "Harbor Analytics hired Lena Okafor",
        # "How is Priya Nair connected to Aurex Logistics?"
        "Priya Nair met Tom Becker from Aurex Logistics in Berlin",
        "Priya Nair met Karin Vogel in Berlin",
        "Karin Vogel, the CTO of Aurex Logistics",
        # "Prepare the Atlas status update for Aurex Logistics."
        "Decision: postpone the Atlas launch from April 15 to May 19",
        "Atlas launched at Aurex Logistics",
        "1,240 weekly active users",
        "Aurex Logistics signed Atlas phase 2",
        # other changes in the timeline
        "Marco Reyes moved to Lisbon",
        "Sarah Quinn founded Brightpath Robotics in 2019",
        "promoted Tom Becker to chief operating officer",
    ],
)
def test_corpus_supports_readme_answers(fact: str) -> None:
    assert fact in _corpus_text()


def test_some_memories_mention_no_cast_member() -> None:
    # Rows such as "Re-ran the nightly job; all checks green." mention nobody.
    cast = _cast()
    plain = [row for row in _rows() if not any(name in row["content"] for name in cast)]
    assert len(plain) >= 15
