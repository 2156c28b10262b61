"""The agent-text corpus (tests/data/agent_corpus/, issue 35): frozen, sound, split by style."""

from __future__ import annotations

import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from agent_corpus import (  # noqa: E402
    CORPUS_DIR,
    PREDICATES,
    SPLITS,
    as_agent_log,
    load_styles,
    split_of,
    style_problems,
)

MANIFEST = json.loads((CORPUS_DIR / "MANIFEST.json").read_text(encoding="utf-8"))
FILES = sorted(MANIFEST["files"])


def test_the_manifest_lists_every_style_file_and_nothing_else() -> None:
    on_disk = sorted(p.name for p in CORPUS_DIR.glob("*.json") if p.name != "MANIFEST.json")
    assert on_disk == FILES


@pytest.mark.parametrize("name", FILES)
def test_each_file_is_frozen_and_sound(name: str) -> None:
    raw = (CORPUS_DIR / name).read_bytes()
    entry = MANIFEST["files"][name]
    assert hashlib.sha256(raw).hexdigest() == entry["sha256"], "a frozen file changed"
    data = json.loads(raw)
    assert style_problems(data) == []
    assert entry["split"] == split_of(data["style"]) and entry["records"] == len(data["records"])
    assert name == f"{data['style']}.json"


def test_a_style_is_in_one_split_whole_and_every_split_has_styles() -> None:
    splits = Counter(entry["split"] for entry in MANIFEST["files"].values())
    assert set(splits) == set(SPLITS)
    assert splits["test"] >= 10 and splits["dev"] >= 10 and splits["train"] >= 40
    ids = [r["id"] for style in load_styles() for r in style.records]
    assert len(ids) == len(set(ids))


def test_the_training_styles_teach_every_predicate_in_many_styles() -> None:
    styles_with: dict[str, set[str]] = {}
    for style in load_styles(["train"]):
        for record in style.records:
            for t in record["triples"]:
                key = t["predicate"] if t["predicate"] in PREDICATES else "{role}_of"
                styles_with.setdefault(key, set()).add(style.name)
    assert set(styles_with) == {*PREDICATES, "{role}_of"}
    assert all(len(names) >= 5 for names in styles_with.values()), {
        p: len(n) for p, n in styles_with.items()
    }


def test_a_style_converts_to_the_agent_log_format() -> None:
    style = load_styles(["dev"])[0]
    log = as_agent_log(style)
    assert [r["id"] for r in log["results"]] == [r["id"] for r in style.records]
    stamps = [r["timestamp"] for r in log["results"]]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    ended = [t for r in style.records for t in r["triples"] if t["state"] == "ended"]
    closed = [t for t in log["triples"] if t["to"] is not None]
    assert len(closed) <= len(ended) and all(t["to"] == t["from"] for t in closed)
