"""Types and identity from the store's evidence (issue 24): the shape of a name, describing
nouns, weighted votes across memories, names the model missed, pronouns further back, the
task's wording, roles that imply employment and departures that end only what they name.

Every text here was written for these tests; none comes from an evaluation corpus.
"""

from __future__ import annotations

import pytest

from graphmem import CortexMemory, EntityMemory
from graphmem.extract.entity_types import (
    is_first_name,
    name_gender,
    organisation_shaped,
    person_shaped,
)
from graphmem.extract.pipeline import get_analyzer
from graphmem.extract.predicates import answers


def _typed(memory: EntityMemory) -> set[tuple[str, str, str]]:
    return {(e.subject, e.predicate, e.object) for e in memory.find() if e.predicate != "co_occurs"}


def _labels(memory: EntityMemory) -> dict[str, str]:
    return {d["name"]: d["label"] for _, d in memory.graph.graph.nodes(data=True)}


class TestNameShapes:
    @pytest.mark.parametrize(
        "text, person",
        [
            ("Ines Carvalho", True),
            ("Kwabena Asante", True),
            ("Marieke van Dijk", True),
            ("Pellbrook Analytics", False),  # an organisation head noun
            ("Victoria Station", False),  # a place noun
            ("Brasswick", False),  # one word
            ("Thornbury Freight", False),  # no given name first
        ],
    )
    def test_person_shaped(self, text: str, person: bool) -> None:
        doc = get_analyzer().nlp.make_doc(text)
        assert person_shaped(doc[:]) is person

    @pytest.mark.parametrize(
        "text, organisation",
        [
            ("Thornbury Freight", True),
            ("Calloway Cycles", True),
            ("Calloway Kettleworks", False),  # no common noun last: nothing says
            ("Kwabena Asante", False),  # a given name first
            ("Dunmore Okonkwo", False),  # a surname last
            ("Lisbon", False),
        ],
    )
    def test_organisation_shaped(self, text: str, organisation: bool) -> None:
        doc = get_analyzer().nlp.make_doc(text)
        assert organisation_shaped(doc[:]) is organisation

    def test_given_names_of_many_countries_and_their_gender(self) -> None:
        assert all(is_first_name(n) for n in ("Siobhan", "Wojciech", "Priya", "Bogdan"))
        assert not any(is_first_name(n) for n in ("Freightlines", "Quarterly", "Will"))
        assert (name_gender("Siobhan"), name_gender("Wojciech"), name_gender("Thornbury")) == (
            "female",
            "male",
            None,
        )


class TestTypesFromEvidence:
    def test_a_describing_noun_types_a_name(self) -> None:
        memory = EntityMemory()
        memory.save("Lanternfish, the warehouse-mapping project, starts in June.")
        memory.save("Brasswick Tools, a Gdansk drill maker, ordered 40 units.")
        labels = _labels(memory)
        assert labels["Lanternfish"] == "PROJECT"
        assert labels["Brasswick Tools"] == "ORG"

    def test_strong_evidence_outvotes_the_model_across_memories(self) -> None:
        memory = EntityMemory()
        # The small model calls "Ines Carvalho" an organisation in some of these; her shape,
        # the apposition and the frames say person, and one vote of them outweighs its guesses.
        memory.save("Ines Carvalho, our new head of research, starts Monday.")
        memory.save("Ines Carvalho reviewed the Q3 figures.")
        memory.save("The board thanked Ines Carvalho.")
        assert _labels(memory)["Ines Carvalho"] == "PERSON"

    def test_a_team_and_a_project_by_their_own_word(self) -> None:
        memory = EntityMemory()
        memory.save("Rosa Delgado joined the Fleet Telemetry Team last month.")
        memory.save("Project Kittiwake was paused after the audit.")
        labels = _labels(memory)
        assert labels["Fleet Telemetry Team"] == "TEAM"
        assert labels.get("Project Kittiwake", labels.get("Kittiwake")) == "PROJECT"

    def test_a_name_the_model_missed_is_found_by_its_shape_or_frame(self) -> None:
        memory = EntityMemory()
        memory.save("Tobias Brand met Sanne de Wit in Ghent.")
        memory.save("Ana Pereira left Marrowind in March.")
        typed = _typed(memory)
        assert ("Tobias Brand", "met", "Sanne de Wit") in typed or (
            "Sanne de Wit",
            "met",
            "Tobias Brand",
        ) in typed
        assert ("Ana Pereira", "left", "Marrowind") in typed
        assert _labels(memory)["Marrowind"] == "ORG"

    def test_a_run_of_name_particles_alone_is_no_name(self) -> None:
        memory = EntityMemory()  # "de" after a sentence's last proper noun: an empty run
        memory.save("The estate passed to Van. De la Cruz bought it. Works by Le.")
        assert all(name.strip() for name in _labels(memory))

    def test_a_span_is_cut_at_a_comma(self) -> None:
        memory = EntityMemory()
        memory.save("Wendell Okafor, Pellbrook's chief executive, was born in Accra.")
        labels = _labels(memory)
        assert labels.get("Wendell Okafor") == "PERSON"
        assert not any("," in name for name in labels)


class TestPronouns:
    def test_an_antecedent_in_the_sentence_before_need_not_be_its_subject(self) -> None:
        memory = EntityMemory()
        memory.save("Reference check for Ana Pereira. She left Thornbury Freightlines in May.")
        assert ("Ana Pereira", "left", "Thornbury Freightlines") in _typed(memory)

    def test_the_pronoun_picks_the_name_of_its_gender(self) -> None:
        memory = EntityMemory()
        memory.save("Tobias Brand met Siobhan Walsh in Ghent. She joined Pellbrook Analytics.")
        typed = _typed(memory)
        assert ("Siobhan Walsh", "works_at", "Pellbrook Analytics") in typed
        assert ("Tobias Brand", "works_at", "Pellbrook Analytics") not in typed

    def test_their_role_belongs_to_the_organisation_named_before(self) -> None:
        memory = EntityMemory()
        memory.save("Call with Pellbrook Analytics today. Their CTO, Priya Raman, wants a demo.")
        assert ("Priya Raman", "cto_of", "Pellbrook Analytics") in _typed(memory)


class TestTaskWording:
    def test_capitalised_task_words_are_no_entities(self) -> None:
        memory = CortexMemory()
        memory.save_task_result("Weekly Digest", "Marrowind acquired Brasswick Tools.", "Analyst")
        memory.save_task_result("Q3 Board Prep", "The board approved the budget.", "Analyst")
        memory.save_task_result("Follow Up With Dana Kowalczyk", "Pricing was sent.", "Sales")
        names = set(_labels(memory.entity_memory))
        assert "Digest" not in names and "Weekly Digest" not in names
        assert not any("Board Prep" in n for n in names)
        assert "Dana Kowalczyk" in names  # shaped like a person's name
        assert {"Marrowind", "Brasswick Tools"} <= names


class TestRolesAndDepartures:
    def test_a_role_implies_employment(self) -> None:
        assert answers("cto_of", "works_at") and answers("head_of_data_of", "works_at")
        assert not answers("board_member_of", "works_at") and not answers("investor_of", "works_at")
        memory = EntityMemory()
        memory.save("Priya Raman is the CTO of Pellbrook Analytics.")
        memory.save("Rosa Delgado works at Pellbrook Analytics.")
        found = memory.find(predicate="works_at", object="Pellbrook Analytics")
        assert sorted((e.subject, e.predicate) for e in found) == [
            ("Priya Raman", "cto_of"),
            ("Rosa Delgado", "works_at"),
        ]

    def test_a_role_title_takes_no_word_of_the_organisations_name(self) -> None:
        memory = EntityMemory()
        memory.save("Thornbury Logistics CEO Pieter Smit said margins improved.")
        predicates = {p for s, p, o in _typed(memory) if s == "Pieter Smit"}
        assert predicates == {"ceo_of"}

    def test_leaving_an_old_employer_keeps_the_current_reporting_line(self) -> None:
        memory = EntityMemory()
        memory.save(
            "Pellbrook Analytics hired Rosa Delgado as data lead, reporting to Ines Carvalho.",
            timestamp="2025-06-01T09:00:00+00:00",
        )
        memory.save(
            "Rosa Delgado's last day at Thornbury Freightlines was Friday.",
            timestamp="2025-06-20T09:00:00+00:00",
        )
        line = [e for e in memory.relations("Rosa Delgado") if e.predicate == "reports_to"]
        assert [(e.object, e.valid_to) for e in line] == [("Ines Carvalho", None)]
