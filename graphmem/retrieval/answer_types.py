"""What kind of entity answers a question: "When ..." a date, "Where ..." a place, by the
cue words of ``models/answer_types.json`` (a ranking prior of :mod:`graphmem.retrieval.search`).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from .._assets import asset_path

__all__ = ["expected_answer_labels"]


def expected_answer_labels(query: str) -> frozenset[str]:
    """Entity labels an answer to ``query`` usually holds (``models/answer_types.json``).

    Example:
        >>> sorted(expected_answer_labels("When did Alice move to Berlin?"))
        ['DATE', 'TIME']
    """
    text = query.lower()
    labels: set[str] = set()
    for pattern, cue_labels in _answer_cues():
        if pattern.search(text):
            labels.update(cue_labels)
    return frozenset(labels)


@lru_cache(maxsize=1)
def _answer_cues() -> list[tuple[re.Pattern[str], tuple[str, ...]]]:
    data = json.loads(asset_path("models", "answer_types.json").read_text(encoding="utf-8"))
    return [
        (re.compile(rf"\b{re.escape(cue)}\b"), tuple(labels))
        for cue, labels in data["cues"].items()
    ]
