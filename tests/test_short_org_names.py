"""A lone first word of an organisation's name ("Northwind") joins the one ORG it opens
(Northwind Systems): at save time in either order of arrival, across reopening, and in queries.

Real spaCy model, real SQLite files. The NER labels these tests rely on are asserted where the
test depends on them, so a model change fails loudly instead of passing vacuously.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from graphmem.compat.storage import SQLiteStorage
from graphmem.extract.normalize import may_shorten
from graphmem.extract.pipeline import get_analyzer
from graphmem.memories.entity import EntityMemory
from graphmem.store import schema

LONG = "Dana Whitfield works at Northwind Systems."
SHORT = "Ravi prepared a handover document for Northwind."


def _entities(storage: SQLiteStorage) -> list[tuple[str, str]]:
    """(key, label) of every stored entity, in id order."""
    e = schema.entities
    with storage.database.read() as conn:
        return [(r.key, r.label) for r in conn.execute(select(e.c.key, e.c.label).order_by(e.c.id))]


def _labels(text: str) -> list[tuple[str, str]]:
    return [(ent.text, ent.label_) for ent in get_analyzer().analyse([text])[0].ents]


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[SQLiteStorage]:
    storage = SQLiteStorage(tmp_path / "graph.db")
    yield storage
    storage.close()


def test_the_model_labels_the_lone_word_an_organisation() -> None:
    assert ("Northwind", "ORG") in _labels(SHORT)
    assert ("Northwind Systems", "ORG") in _labels(LONG)


class TestJoin:
    def test_a_short_name_joins_the_one_organisation_it_opens(self, storage: SQLiteStorage) -> None:
        memory = EntityMemory(storage=storage)
        memory.save(LONG)
        item = memory.save(SHORT)
        assert item.metadata["entities"] == ["Northwind Systems"]
        assert [k for k, label in _entities(storage) if label == "ORG"] == ["northwind systems"]
        info = memory.get_entity("Northwind")
        assert info is not None and info.key == "northwind systems" and info.mentions == 2
        assert "Northwind" in info.aliases

    def test_a_short_name_seen_first_is_merged_into_the_long_one(
        self, storage: SQLiteStorage
    ) -> None:
        memory = EntityMemory(storage=storage)
        memory.save(SHORT)
        assert [k for k, _ in _entities(storage)] == ["northwind"]
        memory.save(LONG)
        assert [k for k, label in _entities(storage) if label == "ORG"] == ["northwind systems"]
        info = memory.get_entity("Northwind")
        assert info is not None and (info.name, info.mentions) == ("Northwind Systems", 2)
        # Later mentions of the short name reach it through the merged alias.
        assert memory.save(SHORT).metadata["entities"] == ["Northwind Systems"]

    def test_a_name_that_opens_two_organisations_joins_neither(
        self, storage: SQLiteStorage
    ) -> None:
        memory = EntityMemory(storage=storage)
        memory.save(LONG)
        memory.save("Tom Baker works at Northwind Traders.")
        item = memory.save(SHORT)
        assert item.metadata["entities"] == ["Northwind"]
        keys = [k for k, label in _entities(storage) if label == "ORG"]
        assert keys == ["northwind systems", "northwind traders", "northwind"]
        systems, traders = (
            memory.get_entity("Northwind Systems"),
            memory.get_entity("Northwind Traders"),
        )
        assert systems is not None and traders is not None
        assert (systems.mentions, traders.mentions) == (1, 1)

    def test_known_first_a_short_name_is_not_merged_into_one_of_two(
        self, storage: SQLiteStorage
    ) -> None:
        memory = EntityMemory(storage=storage)
        memory.save(SHORT)
        memory.save(LONG)  # merged: Northwind Systems is the only one
        memory.save("Tom Baker works at Northwind Traders.")
        keys = [k for k, label in _entities(storage) if label == "ORG"]
        assert keys == ["northwind systems", "northwind traders"]
        traders = memory.get_entity("Northwind Traders")
        assert traders is not None and traders.mentions == 1

    def test_a_generic_first_word_joins_nothing(self, storage: SQLiteStorage) -> None:
        memory = EntityMemory(storage=storage)
        memory.save("Grace Liu studied at the University of Oslo.")
        assert ("University", "ORG") in _labels("The University approved the budget.")
        memory.save("The University approved the budget.")
        lone, oslo = memory.get_entity("University"), memory.get_entity("University of Oslo")
        assert lone is not None and oslo is not None and lone.key != oslo.key


class TestPlacesAndPeopleNeverJoinAnOrganisation:
    def test_a_city_is_not_the_firm_named_after_it(self, storage: SQLiteStorage) -> None:
        assert ("Berlin", "GPE") in _labels("The conference was held in Berlin.")
        memory = EntityMemory(storage=storage)
        memory.save("Kim Weber joined Berlin Partners in May.")
        memory.save("The conference was held in Berlin.")
        assert _entities(storage)[-2:] == [("berlin partners", "ORG"), ("berlin", "GPE")]

    def test_a_city_seen_first_is_not_merged_into_the_firm(self, storage: SQLiteStorage) -> None:
        memory = EntityMemory(storage=storage)
        memory.save("The conference was held in Berlin.")
        memory.save("Kim Weber joined Berlin Partners in May.")
        assert {("berlin", "GPE"), ("berlin partners", "ORG")} <= set(_entities(storage))
        berlin = memory.get_entity("Berlin")
        assert berlin is not None and berlin.label == "GPE" and berlin.mentions == 1

    def test_a_speaker_is_not_the_firm_named_after_them(self, storage: SQLiteStorage) -> None:
        # The speaker metadata is a PERSON mention of its own: "Sterling" the person who
        # wrote this is not Sterling Labs.
        memory = EntityMemory(storage=storage)
        memory.save("Kim Weber joined Sterling Labs in May.")
        memory.save("The invoice went out today.", metadata={"speaker": "Sterling"})
        assert {("sterling labs", "ORG"), ("sterling", "PERSON")} <= set(_entities(storage))

    def test_a_person_seen_first_is_not_merged_into_the_firm(self, storage: SQLiteStorage) -> None:
        memory = EntityMemory(storage=storage)
        memory.save("The invoice went out today.", metadata={"speaker": "Sterling"})
        memory.save("Kim Weber joined Sterling Labs in May.")
        assert {("sterling labs", "ORG"), ("sterling", "PERSON")} <= set(_entities(storage))

    @pytest.mark.parametrize(
        ("short", "label", "key", "key_label", "expected"),
        [
            ("northwind", "ORG", "northwind systems", "ORG", True),
            ("harbor", "NORP", "harbor analytics", "ORG", True),
            ("northwind", None, "northwind systems", "ORG", True),  # a query: label unknown
            ("northwind", "PERSON", "northwind systems", "ORG", False),
            ("berlin", "GPE", "berlin partners", "ORG", False),
            ("berlin", "LOC", "berlin partners", "ORG", False),
            ("systems", "ORG", "northwind systems", "ORG", False),  # not the first word
            ("northwind", "ORG", "northwind", "ORG", False),
            ("northwind", "ORG", "northwind harbour", "GPE", False),  # not an organisation
            ("national", "ORG", "national grid", "ORG", False),
            ("eur", "ORG", "eur 210k", "ORG", False),  # an amount NER calls an ORG
            ("BBC", "ORG", "bbc television", "ORG", False),  # an acronym is a whole name
            ("Northwind", "ORG", "northwind systems", "ORG", True),  # as written
            ("american", "NORP", "american airlines", "ORG", False),
            ("northwind systems", "ORG", "northwind systems group", "ORG", False),  # lone words
            ("stone", "ORG", "bob stone", "PERSON", True),  # the lone-name rule, unchanged
            ("berlin", "GPE", "leslie berlin", "PERSON", False),
        ],
    )
    def test_rule(
        self, short: str, label: str | None, key: str, key_label: str, expected: bool
    ) -> None:
        assert may_shorten(short, label, key, key_label) is expected


class TestReopening:
    def test_the_join_and_the_merge_survive_reopening(self, tmp_path: Path) -> None:
        path = tmp_path / "reopen.db"
        storage = SQLiteStorage(path)
        memory = EntityMemory(storage=storage)
        memory.save(LONG)
        memory.save(SHORT)
        memory.save("Jake Morrison called Grace Liu at Harbor Analytics.")
        storage.close()

        storage = SQLiteStorage(path)
        memory = EntityMemory(storage=storage)
        info = memory.get_entity("Northwind")
        assert info is not None and (info.key, info.mentions) == ("northwind systems", 2)
        # The word index is rebuilt from the tables: a short name first seen now joins too.
        assert ("Harbor", "NORP") in _labels("We sent the Harbor team a deck.")  # a group
        item = memory.save("We sent the Harbor team a deck.")
        assert item.metadata["entities"] == ["Harbor Analytics"]
        storage.close()

        storage = SQLiteStorage(path)
        assert [k for k, label in _entities(storage) if label == "ORG"] == [
            "northwind systems",
            "harbor analytics",
        ]
        harbor = EntityMemory(storage=storage).get_entity("Harbor")
        assert harbor is not None and harbor.mentions == 2
        storage.close()


class TestQueries:
    @pytest.fixture
    def memory(self, storage: SQLiteStorage) -> EntityMemory:
        memory = EntityMemory(storage=storage)
        memory.save(LONG)
        memory.save("Michael Grant is the CEO of Northwind Systems.")
        return memory

    def test_a_question_naming_the_short_form_finds_the_organisation(
        self, memory: EntityMemory
    ) -> None:
        # No memory ever said "Northwind" alone: the query side resolves it by the same rule.
        assert memory.get_entity("Northwind") == memory.get_entity("Northwind Systems")
        assert memory.known_entities_in("Who works at Northwind?") == [("Northwind Systems", 2)]
        # The CEO works there too: a role held at an organisation implies employment.
        found = memory.find(predicate="works_at", object="Northwind")
        assert [(e.subject, e.predicate) for e in found] == [
            ("Dana Whitfield", "works_at"),
            ("Michael Grant", "ceo_of"),
        ]

    def test_a_query_word_opening_two_organisations_names_neither(
        self, memory: EntityMemory
    ) -> None:
        memory.save("Tom Baker works at Northwind Traders.")
        assert memory.get_entity("Northwind") is None
        assert memory.known_entities_in("Who works at Northwind?") == []

    def test_the_sql_graph_resolves_it_alike(self, tmp_path: Path) -> None:
        storage = SQLiteStorage(tmp_path / "sql.db", graph_cache="sql")
        memory = EntityMemory(storage=storage)
        memory.save(LONG)
        assert "Dana Whitfield" in memory.neighbors("Northwind")
        memory.save("Tom Baker works at Northwind Traders.")
        with pytest.raises(Exception, match="not in the graph"):
            memory.neighbors("Northwind")
        storage.close()
