"""The models learned from agent text (issue 35): the fine-tuned NER and the agent relation
model load hash-checked, read agent wording the rules never listed, and state no forbidden
reading. Texts here were written for these tests, in no style of the training corpus."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from graphmem import EntityMemory
from graphmem.extract.learned import (
    AGENT_CLASSES,
    AGENT_FILES,
    LearnedModelError,
    agent_candidates,
    load_agent_model,
)
from graphmem.extract.pipeline import get_analyzer
from graphmem.extract.token_table import TokenTable

MODELS = Path(__file__).resolve().parents[1] / "models"


def triples(memory: EntityMemory) -> set[tuple[str, str, str]]:
    g = memory.graph.typed().graph
    return {
        (g.nodes[a]["name"], data["predicate"], g.nodes[b]["name"])
        for a, b, data in g.edges(data=True)
    }


def test_the_agent_model_loads_with_its_classes() -> None:
    model = load_agent_model()
    assert model is not None and model.classes == AGENT_CLASSES
    assert model.weights.shape == (len(model.features), len(AGENT_CLASSES))


def test_an_altered_agent_model_file_is_refused(tmp_path: Path) -> None:
    for path in MODELS.iterdir():
        if path.is_file():
            shutil.copy(path, tmp_path / path.name)
    weights = np.load(tmp_path / AGENT_FILES[1], allow_pickle=False)
    weights[0, 1] += 1.0
    np.save(tmp_path / AGENT_FILES[1], weights, allow_pickle=False)
    with pytest.raises(LearnedModelError, match="SHA-256"):
        load_agent_model(tmp_path)


def _printed_with_ner(switch: str, code: str) -> str:
    """What ``code`` prints in a fresh process with ``GRAPHMEM_AGENT_NER=switch`` (the
    pipeline is loaded once per process)."""
    return subprocess.run(
        [sys.executable, "-c", code],
        env={"GRAPHMEM_AGENT_NER": switch, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def _ner_labels(switch: str) -> str:
    code = (
        "from graphmem.extract.pipeline import get_analyzer;"
        "print(sorted(get_analyzer().nlp.get_pipe('ner').labels))"
    )
    return _printed_with_ner(switch, code)


def test_graphmem_agent_ner_1_loads_the_fine_tuned_ner_with_projects_and_teams() -> None:
    out = _ner_labels("1")
    assert all(label in out for label in ("PROJECT", "TEAM", "PERSON", "ORG", "GPE"))


def test_by_default_the_base_ner_runs() -> None:
    assert "PROJECT" not in _ner_labels("0") and "PERSON" in _ner_labels("0")
    assert set(get_analyzer().nlp.get_pipe("ner").labels).isdisjoint({"PROJECT", "TEAM"})


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        (
            "Guest list: Mireille Castaing flew back to Montreal after the offsite.",
            ("Mireille Castaing", "visited>", "Montreal"),
        ),
        (
            "Vendor file. Kestrelmoor, headquartered in Leeds, supplies the pallet wrap.",
            ("Kestrelmoor", "located_in>", "Leeds"),
        ),
    ],
)
def test_the_model_reads_agent_wording_as_its_relation(
    text: str, fact: tuple[str, str, str]
) -> None:
    """The class the model scores highest for the pair is the stated relation, with the
    stated direction (whether it reaches the class's threshold is the next test's matter)."""
    model = load_agent_model()
    assert model is not None
    doc = get_analyzer().nlp(text)
    table = TokenTable.of(doc)
    scored = {
        (c.first_entity.text, c.second_entity.text): model.scores(
            [list(dict.fromkeys(c.features(table)))]
        )[0]
        for c in agent_candidates(table, list(doc.ents))
    }
    scores = scored[(fact[0], fact[2])]
    assert model.classes[int(np.argmax(scores[1:])) + 1] == fact[1]


def test_a_confident_reading_reaches_the_graph() -> None:
    memory = EntityMemory()
    memory.save("Vendor file. Kestrelmoor, headquartered in Leeds, supplies the pallet wrap.")
    assert ("Kestrelmoor", "located_in", "Leeds") in triples(memory)


@pytest.mark.parametrize(
    "text",
    [
        "Tomasz Wrona might join Halvergate next spring, if the visa comes through.",
        "Flights are booked for Imke Borchardt to Lisbon next week.",
        "Did Sunniva Aas leave Brightwater? Nobody has confirmed it.",
    ],
)
def test_forbidden_readings_give_no_relation(text: str) -> None:
    memory = EntityMemory()
    memory.save(text)
    stated = {p for _, p, _ in triples(memory)}
    assert not stated & {"works_at", "visited", "left"}


def test_the_fine_tuned_ner_finds_an_organisation_after_an_at_sign() -> None:
    """ "X (ops lead @ Org)": the base model finds no organisation there, the fine-tuned one
    does (so the relation model gets the pair)."""
    code = (
        "from graphmem.extract.pipeline import get_analyzer\n"
        "doc = get_analyzer().nlp('Quick sync notes. Oyelaran Bakare (ops lead @ Farrowdale) "
        "confirmed the rota.')\n"
        "print(sorted((e.text, e.label_) for e in doc.ents))"
    )
    assert "('Farrowdale', 'ORG')" in _printed_with_ner("1", code)
    assert "('Farrowdale', 'ORG')" not in _printed_with_ner("0", code)
