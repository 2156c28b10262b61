"""Declared entity types, relabel, the one label rule in merges and add_relation, and undo
of merges out of order (issue 16, "Entity types")."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphmem import CortexMemory, EntityMemory, SQLiteStorage
from graphmem.errors import EntityNotFound, InvalidArgumentError
from graphmem.extract.entity_patterns import EntityPatternsError

PROJECTS = [
    {"label": "PROJECT", "pattern": "Atlas"},
    {"label": "PROJECT", "pattern": "Beacon"},
]


def _label(memory: EntityMemory, name: str) -> str | None:
    info = memory.get_entity(name)
    return None if info is None else info.label


class TestDeclareEntities:
    def test_declared_names_take_the_declared_label(self) -> None:
        memory = EntityMemory()
        assert memory.declare_entities(PROJECTS) == 2
        memory.save("Atlas shipped the dashboard for Aurex Logistics in Berlin.")
        memory.save("Ravi Mehta moved Beacon to the new warehouse.")
        assert _label(memory, "Atlas") == "PROJECT"
        assert _label(memory, "Beacon") == "PROJECT"
        assert _label(memory, "Aurex Logistics") == "ORG"  # the model's other names stay

    def test_an_entity_known_before_the_declaration_is_relabelled_and_stays_so(self) -> None:
        memory = EntityMemory()
        for _ in range(3):
            memory.save("Atlas shipped the dashboard for Aurex Logistics in Berlin.")
        assert _label(memory, "Atlas") == "PERSON"  # the small model's mistake
        memory.declare_entities(PROJECTS)
        assert _label(memory, "Atlas") == "PROJECT"
        # Later mentions are found by the pattern; the model's old votes do not win back.
        memory.save("Priya reviewed Atlas with Tom Becker.")
        assert _label(memory, "Atlas") == "PROJECT"

    def test_declared_label_wins_the_vote_over_more_model_mentions(self) -> None:
        memory = EntityMemory()
        memory.declare_entities([{"label": "TEAM", "pattern": [{"LOWER": "platform"}]}])
        memory.save("Platform met Aurex Logistics in Berlin.")
        memory.save("The platform team owns the pipeline.")
        info = memory.get_entity("Platform")
        assert info is not None and info.label == "TEAM"

    def test_declarations_persist_in_the_database(self, tmp_path: Path) -> None:
        path = tmp_path / "memory.db"
        storage = SQLiteStorage(path)
        EntityMemory(storage=storage).declare_entities(['{"label": "PROJECT", "pattern": "Orion"}'])
        storage.close()
        storage = SQLiteStorage(path)
        try:
            memory = EntityMemory(storage=storage)
            assert memory.declared_entities() == [
                {"label": "PROJECT", "pattern": "Orion", "id": "declared"}
            ]
            memory.save("Jake Morrison won Orion from Brightpath Robotics in Austin.")
            assert _label(memory, "Orion") == "PROJECT"
        finally:
            storage.close()

    def test_a_file_of_patterns(self, tmp_path: Path) -> None:
        patterns = tmp_path / "types.jsonl"
        patterns.write_text(
            '# our projects\n{"label": "PROJECT", "pattern": "Atlas"}\n', encoding="utf-8"
        )
        memory = EntityMemory()
        assert memory.declare_entities(patterns) == 1
        assert memory.declare_entities(patterns) == 0  # declared once

    def test_a_bad_pattern_names_its_line_and_declares_nothing(self, tmp_path: Path) -> None:
        patterns = tmp_path / "types.jsonl"
        patterns.write_text(
            '{"label": "PROJECT", "pattern": "Atlas"}\n{"label": "project", "pattern": "Beacon"}\n',
            encoding="utf-8",
        )
        memory = EntityMemory()
        with pytest.raises(EntityPatternsError, match=r"types\.jsonl:2: the label must be upper"):
            memory.declare_entities(patterns)
        assert memory.declared_entities() == []

    def test_the_facade_declares_for_its_entity_tier(self) -> None:
        memory = CortexMemory()
        memory.declare_entities(PROJECTS)
        memory.save_task_result(
            "Report on Atlas", "Atlas went live for Aurex Logistics on 19 May.", "PM"
        )
        assert memory.entity_memory is not None
        assert _label(memory.entity_memory, "Atlas") == "PROJECT"

    def test_one_memory_s_declarations_do_not_label_another_s_names(self) -> None:
        declared, other = EntityMemory(), EntityMemory()
        declared.declare_entities(PROJECTS)
        declared.save("Atlas shipped the dashboard for Aurex Logistics in Berlin.")
        other.save("Atlas shipped the dashboard for Aurex Logistics in Berlin.")
        assert _label(declared, "Atlas") == "PROJECT"
        assert _label(other, "Atlas") == "PERSON"


class TestRelabel:
    def test_relabel_persists_and_later_mentions_do_not_vote_it_back(self, tmp_path: Path) -> None:
        path = tmp_path / "memory.db"
        storage = SQLiteStorage(path)
        memory = EntityMemory(storage=storage)
        memory.save("Ask Aisha.")
        assert _label(memory, "Aisha") == "GPE"
        assert memory.relabel("Aisha", "PERSON") == "GPE"
        storage.close()
        storage = SQLiteStorage(path)
        try:
            memory = EntityMemory(storage=storage)
            assert _label(memory, "Aisha") == "PERSON"
            for text in ("The shipment went to Aisha.", "Lunch in Aisha.", "Ask Aisha."):
                memory.save(text)  # the model calls each of these a place
            assert _label(memory, "Aisha") == "PERSON"
        finally:
            storage.close()

    def test_unknown_name(self) -> None:
        memory = EntityMemory()
        with pytest.raises(EntityNotFound, match="'Zed Quill' is not in the graph"):
            memory.relabel("Zed Quill", "PERSON")

    @pytest.mark.parametrize(
        ("label", "message"),
        [("DATE", "DATE is a value label"), ("person", "must be upper case"), ("", "upper")],
    )
    def test_bad_labels(self, label: str, message: str) -> None:
        memory = EntityMemory()
        memory.save("Ask Aisha.")
        with pytest.raises(InvalidArgumentError, match=message):
            memory.relabel("Aisha", label)
        assert _label(memory, "Aisha") == "GPE"

    def test_a_label_the_entity_s_other_names_cannot_share_is_refused(self) -> None:
        memory = EntityMemory()
        memory.save("Bob Stone approved the budget.")
        memory.save("Robert Stone signed the contract with Initech.")
        memory.merge_entities("Bob Stone", "Robert Stone")
        with pytest.raises(InvalidArgumentError, match="'Robert Stone' .*a person is not a place"):
            memory.relabel("Bob Stone", "GPE")
        assert _label(memory, "Bob Stone") == "PERSON"


class TestOneLabelRule:
    def test_a_place_and_an_organisation_are_not_merged(self) -> None:
        memory = EntityMemory()
        memory.save("Aisha Bello was promoted to CTO of Lumen Robotics in Oslo.")
        with pytest.raises(
            InvalidArgumentError,
            match="a place and an organisation are one entity only under one name",
        ):
            memory.merge_entities("Oslo", "Lumen Robotics")
        edge = memory.add_relation("Aisha Bello", "cto_of", "Lumen Robotics")
        assert (edge.subject, edge.object) == ("Aisha Bello", "Lumen Robotics")
        assert [e.object for e in memory.find(predicate="cto_of")] == ["Lumen Robotics"]
        assert memory.find(predicate="cto_of", object="Oslo") == []

    def test_a_lone_name_tagged_a_place_joins_the_person_after_relabel(self) -> None:
        memory = EntityMemory()
        memory.save("Ask Aisha.")
        memory.save("Aisha Bello joined Lumen Robotics in Oslo.")
        with pytest.raises(
            InvalidArgumentError, match=r"a person is not a place.*relabel\('Aisha'"
        ):
            memory.merge_entities("Aisha Bello", "Aisha")
        memory.relabel("Aisha", "PERSON")
        memory.merge_entities("Aisha Bello", "Aisha")
        info = memory.get_entity("Aisha")
        assert info is not None and info.name == "Aisha Bello" and info.label == "PERSON"

    def test_add_relation_with_labels_follows_the_rule(self) -> None:
        memory = EntityMemory()
        memory.save("Leslie Berlin wrote the report.")
        # "Berlin" the place is not Leslie Berlin: a new entity.
        edge = memory.add_relation("Aurex Logistics", "located_in", "Berlin", object_label="GPE")
        assert edge.object == "Berlin" and _label(memory, "Berlin") == "GPE"
        assert _label(memory, "Leslie Berlin") == "PERSON"
        # A name whose own entity the label cannot be is refused, not relabelled.
        with pytest.raises(InvalidArgumentError, match="a person is not a place"):
            memory.add_relation("Leslie Berlin", "lives_in", "Oslo", subject_label="GPE")


class TestUnmerge:
    def _memory(self) -> EntityMemory:
        memory = EntityMemory()
        memory.save("Bob Stone approved the budget.")
        memory.save("Robert Stone met Carol King in Paris.")
        memory.save("Dana Scott signed the contract.")
        return memory

    @staticmethod
    def _state(memory: EntityMemory) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
        g = memory.graph.graph
        nodes = sorted((data["name"], data["label"]) for _, data in g.nodes(data=True))
        edges = sorted(
            (g.nodes[u]["name"], key, g.nodes[v]["name"]) for u, v, key in g.edges(keys=True)
        )
        return nodes, edges

    def test_out_of_order_unmerge_is_refused_cleanly_and_in_order_undoes_exactly(self) -> None:
        memory = self._memory()
        before = self._state(memory)
        assert ("Robert Stone", "co_occurs", "Carol King") in before[1] or (
            "Carol King",
            "co_occurs",
            "Robert Stone",
        ) in before[1]
        first = memory.merge_entities("Bob Stone", "Robert Stone")
        second = memory.merge_entities("Dana Scott", "Carol King")
        with pytest.raises(
            InvalidArgumentError, match=f"undo merge {second} .* before merge {first}"
        ):
            memory.unmerge(first)
        memory.unmerge(second)
        memory.unmerge(first)
        assert self._state(memory) == before

    def test_unrelated_merges_undo_in_any_order(self) -> None:
        memory = self._memory()
        memory.save("Carl Jung wrote to Karl Jung.")
        before = self._state(memory)
        first = memory.merge_entities("Bob Stone", "Robert Stone")
        second = memory.merge_entities("Carl Jung", "Karl Jung")
        memory.unmerge(first)
        memory.unmerge(second)
        assert self._state(memory) == before


def test_reset_all_forgets_relabelled_entities_and_keeps_declarations() -> None:
    memory = CortexMemory()
    memory.declare_entities(PROJECTS)
    memory.save_task_result("Triage", "Send the Atlas report to Aisha.", "Support")
    assert memory.relabel("Aisha", "PERSON") == "GPE"
    memory.reset_all()
    memory.save_task_result("Triage", "Send the Atlas report to Aisha.", "Support")
    assert memory.entity_memory is not None
    assert _label(memory.entity_memory, "Aisha") == "GPE"  # the model's label again
    assert _label(memory.entity_memory, "Atlas") == "PROJECT"
