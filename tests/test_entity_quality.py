"""Entity quality (issue 11): junk kept out of the graph, and every pair of a sentence linked.

Real spaCy pipeline, temporary databases. The label, alias and acronym rules of resolution
are tested in test_resolution.py; canonical keys in test_normalize.py.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from spacy.tokens import Span

from graphmem import CortexMemory
from graphmem.compat.storage import SQLiteStorage
from graphmem.extract.entities import find_mentions, interjections
from graphmem.extract.pipeline import get_analyzer
from graphmem.graph.knowledge_graph import CO_OCCURS
from graphmem.index.entity_index import SENTENCE_LINK_WINDOW
from graphmem.memories.entity import EntityMemory


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[EntityMemory]:
    storage = SQLiteStorage(tmp_path / "quality.db")
    yield EntityMemory(storage=storage)
    storage.close()


def _surfaces(text: str, relations: bool = False) -> list[str]:
    doc = get_analyzer().analyse([text], relations=relations)[0]
    return [m.surface for m in find_mentions(doc)]


class TestJunkSpans:
    @pytest.mark.parametrize(
        ("text", "ner_span", "names"),
        [
            # The small model reads these chat fillers as part of a PERSON name.
            ("Omg Caroline!!", "Omg Caroline", ["Caroline"]),
            ("Hahaha Melanie you are the best!", "Hahaha Melanie", ["Melanie"]),
            ("Omg Mel, congrats!", "Omg Mel", ["Mel"]),
            # Task and result text run together: the number ends the task.
            (
                "Review the notes from sprint 7 Sara Kim approved the budget.",
                "7 Sara Kim",
                ["Sara Kim"],
            ),
            # A sentence-initial imperative glued to the name that follows it.
            (
                "Research Acme Corporation and report.",
                "Research Acme Corporation",
                ["Acme Corporation"],
            ),
        ],
    )
    def test_names_are_cut_out_of_the_span(
        self, text: str, ner_span: str, names: list[str]
    ) -> None:
        doc = get_analyzer().analyse([text])[0]
        assert ner_span in [e.text for e in doc.ents]  # the model's span, for the record
        assert _surfaces(text) == names
        assert _surfaces(text, relations=True) == names

    def test_a_span_of_fillers_alone_is_dropped(self) -> None:
        doc = get_analyzer().nlp.make_doc("Wow Haha Hey")
        doc.ents = [Span(doc, 0, 3, label="PERSON")]
        assert find_mentions(doc) == []
        doc.ents = [Span(doc, 0, 1, label="ORG")]
        assert find_mentions(doc) == []

    def test_a_verb_is_not_part_of_a_name(self) -> None:
        doc = get_analyzer().analyse(["Sara Kim approved the budget."], relations=True)[0]
        assert doc[2].pos_ == "VERB"
        doc.ents = [Span(doc, 0, 3, label="PERSON")]  # as if NER had read "Sara Kim approved"
        assert [m.surface for m in find_mentions(doc)] == ["Sara Kim"]

    @pytest.mark.parametrize("title", ["Know Your Enemy", "Suffer the Children"])
    def test_a_title_keeps_its_verb(self, title: str) -> None:
        doc = get_analyzer().analyse([f"{title} is a song."], relations=True)[0]
        assert doc[0].pos_ == "VERB"  # the tagger reads the title's first word as a verb
        doc.ents = [doc.char_span(0, len(title), label="WORK_OF_ART")]
        assert [m.surface for m in find_mentions(doc)] == [title]

    def test_fillers_are_data(self) -> None:
        assert {"wow", "haha", "hey", "omg", "lol"} <= interjections()

    def test_task_and_result_of_the_facade(self) -> None:
        cortex = CortexMemory()
        cortex.save_task_result(
            "Review the notes from sprint 7", "Sara Kim approved the budget.", "Analyst"
        )
        assert cortex.entity_memory is not None
        assert cortex.entity_memory.get_entity("Sara Kim") is not None
        assert [i.metadata["entities"] for i in cortex.entity_memory.retrieve(limit=5)] == [
            ["Sara Kim"]
        ]


PEOPLE = (
    "Tom Baker, Priya Nair, Dana Scott, Grace Liu, Daniel Brooks, Jake Morrison, Hannah Cole, "
    "Omar Haddad, Sofia Rossi, Liam Walsh, Mei Chen, Raj Patel, Nina Petrova and Carlos Diaz"
)


class TestCoOccurrence:
    def test_every_pair_of_a_sentence_is_linked(self, memory: EntityMemory) -> None:
        item = memory.save(f"Lena Okafor met {PEOPLE} in Boston.")
        names = item.metadata["entities"]
        assert len(names) == 16  # more than the 12 entities a memory was once cut to
        g = memory.graph.graph
        keys = [memory.graph.resolve(n) for n in names]
        for a, b in itertools.combinations(keys, 2):
            assert g.has_edge(a, b, key=CO_OCCURS) or g.has_edge(b, a, key=CO_OCCURS), (a, b)
        edges = memory.graph.find(predicate=CO_OCCURS, evidence=True)
        assert len(edges) == 16 * 15 // 2
        assert {ev.rule for e in edges for ev in e.evidence} == {"co_sentence"}

    def test_a_long_list_links_each_name_to_its_neighbours(self, memory: EntityMemory) -> None:
        names = [f"Member{n} Quorum" for n in range(SENTENCE_LINK_WINDOW + 8)]
        item = memory.save("The roll call: " + ", ".join(names) + ".", entities=names)
        assert item.metadata["entities"] == names
        n, w = len(names), SENTENCE_LINK_WINDOW
        edges = memory.find(predicate=CO_OCCURS)
        assert len(edges) == sum(min(w - 1, n - 1 - i) for i in range(n))
        g = memory.graph.graph
        first, last = (memory.graph.resolve(x) for x in (names[0], names[-1]))
        assert not g.has_edge(first, last) and not g.has_edge(last, first)
        assert all(g.degree(memory.graph.resolve(x)) >= w - 1 for x in names)

    def test_entities_of_different_sentences_are_linked_more_weakly(
        self, memory: EntityMemory
    ) -> None:
        memory.save("Dana Scott works at Initech. Tom Baker lives in Oslo.")
        [edge] = memory.graph.find(
            subject="Dana Scott", predicate=CO_OCCURS, object="Tom Baker", evidence=True
        )
        assert [ev.rule for ev in edge.evidence] == ["co_memory"]
        assert edge.confidence < 1.0
