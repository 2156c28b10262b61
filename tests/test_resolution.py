"""Entity resolution through EntityMemory.save: aliases, lone names, tenants, corporate
suffixes, label voting, and known names found where NER alone would miss them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from graphmem.compat.storage import SQLiteStorage
from graphmem.errors import InvalidArgumentError
from graphmem.extract.pipeline import get_analyzer
from graphmem.items import MemoryItem
from graphmem.memories.entity import EntityMemory
from graphmem.memories.user import UserMemory
from graphmem.store import graph_rows, schema, text_rows
from graphmem.store.database import Database


def _entity_rows(storage: SQLiteStorage) -> list[tuple[str, str, str]]:
    """(tenant, key, label) of every stored entity."""
    e = schema.entities
    with storage.database.read() as conn:
        return [
            (r.tenant, r.key, r.label)
            for r in conn.execute(select(e.c.tenant, e.c.key, e.c.label).order_by(e.c.id))
        ]


def _mention_labels(storage: SQLiteStorage, key: str) -> Counter[str]:
    e, m = schema.entities, schema.mentions
    with storage.database.read() as conn:
        return Counter(
            conn.execute(
                select(m.c.label).join(e, e.c.id == m.c.entity_id).where(e.c.key == key)
            ).scalars()
        )


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[EntityMemory]:
    storage = SQLiteStorage(tmp_path / "graph.db")
    yield EntityMemory(storage=storage)
    storage.close()


@pytest.fixture(scope="module")
def alice(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EntityMemory]:
    storage = SQLiteStorage(tmp_path_factory.mktemp("alice") / "graph.db")
    memory = EntityMemory(storage=storage)
    for text in (
        "Alice Johnson works at Acme Corp.",
        "Alice reviewed the budget.",
        "alice johnson moved to Berlin.",
        "Alice Johnson's team shipped the release.",
    ):
        memory.save(text)
    yield memory
    storage.close()


class TestOnePerson:
    """ "Alice Johnson", "Alice", "alice johnson" and "Alice Johnson's" are one person."""

    @pytest.mark.parametrize("name", ["Alice Johnson", "Alice", "alice johnson", "ALICE JOHNSON"])
    def test_every_form_resolves_to_one_entity(self, alice: EntityMemory, name: str) -> None:
        info = alice.get_entity(name)
        assert info is not None
        assert (info.key, info.name, info.label) == ("alice johnson", "Alice Johnson", "PERSON")

    def test_all_four_memories_mention_her(self, alice: EntityMemory) -> None:
        info = alice.get_entity("Alice Johnson")
        assert info is not None
        assert info.mentions == 4
        assert alice.entities["Alice Johnson"]["frequency"] == 4
        assert "Alice" in info.aliases

    def test_one_person_entity(self, alice: EntityMemory) -> None:
        people = [key for _, key, label in _entity_rows(alice.space) if label == "PERSON"]
        assert people == ["alice johnson"]

    def test_saved_items_name_her_canonically(self, alice: EntityMemory) -> None:
        for item in alice.retrieve(limit=10):  # type: ignore[union-attr]
            assert item.metadata["entities"][0] == "Alice Johnson", item.content

    def test_lone_name_relations_attach_to_her(self, alice: EntityMemory) -> None:
        # "alice johnson moved to Berlin." -> lives_in, on the one entity.
        assert [e.subject for e in alice.find(predicate="lives_in", object="Berlin")] == [
            "Alice Johnson"
        ]


def test_two_alices_make_a_lone_alice_ambiguous(memory: EntityMemory) -> None:
    memory.save("Alice Johnson works at Acme Corp.")
    memory.save("Alice Wong works at Globex.")
    item = memory.save("Alice reviewed the budget.")
    assert item.metadata["entities"] == ["Alice"]
    lone = memory.get_entity("Alice")
    johnson, wong = memory.get_entity("Alice Johnson"), memory.get_entity("Alice Wong")
    assert lone is not None and johnson is not None and wong is not None
    assert len({lone.key, johnson.key, wong.key}) == 3
    assert (johnson.mentions, wong.mentions, lone.mentions) == (1, 1, 1)
    # Family names still pick out one person each.
    assert memory.get_entity("Wong") == wong
    assert memory.get_entity("Johnson") == johnson


def test_a_lone_name_seen_before_the_full_name_joins_it(memory: EntityMemory) -> None:
    """Issue 16: "Ravi" saved before "Ravi Mehta" is the same person once the full name is
    known and no other person has the word (the merge is logged, as an explicit one is)."""
    memory.save("Alice reviewed the budget.")
    memory.save("Alice Johnson works at Acme Corp.")
    keys = {key for _, key, _ in _entity_rows(memory.space)}
    assert "alice johnson" in keys and "alice" not in keys
    info = memory.get_entity("Alice")
    assert info is not None and info.name == "Alice Johnson" and info.mentions == 2


def test_a_lone_name_two_full_names_share_stays_apart(memory: EntityMemory) -> None:
    memory.save("Alice reviewed the budget.")
    memory.save("Alice Johnson met Alice Wong at Acme Corp.")
    keys = {key for _, key, _ in _entity_rows(memory.space)}
    assert {"alice", "alice johnson", "alice wong"} <= keys


class TestTenants:
    def test_two_users_get_two_entities(self, tmp_path: Path) -> None:
        storage = SQLiteStorage(tmp_path / "users.db")
        users = UserMemory(storage=storage)
        users.save_memory("u1", "Alice Johnson works at Acme Corp.")
        users.save_memory("u2", "Alice Johnson lives in Paris.")
        one = users.user_entities["u1"]
        two = users.user_entities["u2"]
        assert [e.object for e in one.find(subject="Alice Johnson", predicate="works_at")] == [
            "Acme Corp."
        ]
        assert one.find(subject="Alice Johnson", predicate="lives_in") == []
        assert [e.object for e in two.find(subject="Alice Johnson", predicate="lives_in")] == [
            "Paris"
        ]
        assert two.find(subject="Alice Johnson", predicate="works_at") == []
        assert two.get_entity("Acme") is None
        rows = [(t, k) for t, k, _ in _entity_rows(storage) if k == "alice johnson"]
        assert sorted(rows) == [("u1", "alice johnson"), ("u2", "alice johnson")]
        storage.close()

    def test_lone_name_resolves_within_its_tenant_only(self, tmp_path: Path) -> None:
        storage = SQLiteStorage(tmp_path / "tenants.db")
        first = EntityMemory(storage=storage, tenant="t1")
        second = EntityMemory(storage=storage, tenant="t2")
        first.save("Alice Johnson works at Acme Corp.")
        second.save("Alice Wong works at Globex.")
        second.save("Alice reviewed the budget.")
        # In t2 the only Alice is Alice Wong; t1's Alice Johnson does not make it ambiguous.
        wong = second.get_entity("Alice Wong")
        assert wong is not None and wong.mentions == 2
        assert second.get_entity("Alice Johnson") is None
        johnson = first.get_entity("Alice")
        assert johnson is not None and (johnson.name, johnson.mentions) == ("Alice Johnson", 1)
        storage.close()


def test_corporate_suffixes_resolve_together(memory: EntityMemory) -> None:
    memory.save("Acme Corp. opened an office in Boston.")
    memory.save("Acme Corporation hired Tom Baker.")
    item = memory.save("ACME shipped the product.")
    assert item.metadata["entities"] == ["Acme Corp."]
    info = memory.get_entity("Acme Inc")
    assert info is not None
    assert (info.key, info.label, info.mentions) == ("acme", "ORG", 3)
    assert [key for _, key, label in _entity_rows(memory.space) if label == "ORG"] == ["acme"]
    assert [e.object for e in memory.find(subject="ACME", predicate="hired")] == ["Tom Baker"]


def test_label_is_voted_by_frequency(memory: EntityMemory) -> None:
    # The small model reads "Initech" in "The CTO of Initech" as a nationality (NORP) and as
    # an organisation elsewhere; the majority of mentions decides.
    memory.save("The CTO of Initech spoke.")
    first = memory.get_entity("Initech")
    assert first is not None
    assert first.label == _mention_labels(memory.space, "initech").most_common(1)[0][0]
    memory.save("Initech announced earnings.")
    memory.save("Initech is growing.")
    labels = _mention_labels(memory.space, "initech")
    assert sum(labels.values()) == 3
    info = memory.get_entity("Initech")
    assert info is not None
    assert labels["ORG"] >= 2
    assert info.label == "ORG"
    assert (_entity_rows(memory.space)[0][1:]) == ("initech", "ORG")


def test_a_tie_keeps_the_first_label(memory: EntityMemory) -> None:
    # In "Alice joined Acme Corp." the small model calls the lone "Alice" an ORG; one odd
    # mention against one PERSON mention must not turn her into an organisation ...
    memory.save("Alice Johnson met Dana Scott in Oslo.")
    memory.save("Alice joined Acme Corp.")
    assert _mention_labels(memory.space, "alice johnson") == Counter({"PERSON": 1, "ORG": 1})
    info = memory.get_entity("Alice")
    assert info is not None and (info.name, info.label) == ("Alice Johnson", "PERSON")
    # ... and the relation rules see the entity's label, so her employer is found.
    assert [e.subject for e in memory.find(predicate="works_at", object="Acme")] == [
        "Alice Johnson"
    ]


def test_known_names_flow_back(tmp_path: Path) -> None:
    sentence = "Northwind is based in Seattle."
    # The small model does not see "Northwind" as a name in this sentence ...
    doc = get_analyzer().analyse([sentence])[0]
    assert "Northwind" not in [ent.text for ent in doc.ents]

    storage = SQLiteStorage(tmp_path / "known.db")
    memory = EntityMemory(storage=storage)
    cold = memory.save(sentence)
    assert "Northwind" not in cold.metadata["entities"]
    # ... but once a memory taught it, the entity is found there too, with its relation.
    memory.save("Dana Scott works at Northwind.")
    warm = memory.save(sentence)
    assert warm.metadata["entities"] == ["Northwind", "Seattle"]
    info = memory.get_entity("Northwind")
    assert info is not None and info.label == "ORG" and info.mentions == 2
    assert [e.subject for e in memory.find(predicate="located_in", object="Seattle")] == [
        "Northwind"
    ]
    storage.close()


def test_known_names_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "reopen.db"
    storage = SQLiteStorage(path)
    EntityMemory(storage=storage).save("Dana Scott works at Northwind.")
    storage.close()
    storage = SQLiteStorage(path)
    item = EntityMemory(storage=storage).save("Northwind is based in Seattle.")
    assert item.metadata["entities"] == ["Northwind", "Seattle"]
    storage.close()


class TestLabelsKeepPeopleAndPlacesApart:
    """The lone-name rule links a lone name to a person only when the labels allow it."""

    def test_a_city_is_not_the_person_named_after_it(self, memory: EntityMemory) -> None:
        memory.save("Leslie Berlin wrote a history of Silicon Valley.")
        memory.save("The conference was held in Berlin.")
        person, city = memory.get_entity("Leslie Berlin"), memory.get_entity("Berlin")
        assert person is not None and city is not None
        assert (person.key, person.label, person.mentions) == ("leslie berlin", "PERSON", 1)
        assert (city.key, city.label, city.mentions) == ("berlin", "GPE", 1)
        assert "Berlin" not in person.aliases

    def test_the_person_is_not_the_city_seen_before(self, memory: EntityMemory) -> None:
        memory.save("Berlin is the capital of Germany.")
        memory.save("Leslie Berlin wrote a history of Silicon Valley.")
        memory.save("The conference was held in Berlin.")
        person, city = memory.get_entity("Leslie Berlin"), memory.get_entity("Berlin")
        assert person is not None and city is not None and person.key != city.key
        assert (person.mentions, city.mentions) == (1, 2)

    def test_a_lone_surname_labelled_org_still_joins_its_person(self, memory: EntityMemory) -> None:
        # The small model calls the lone "Stone" of this sentence an ORG.
        memory.save("Bob Stone works at Initech.")
        item = memory.save("Stone approved the budget.")
        assert item.metadata["entities"] == ["Bob Stone"]
        assert _mention_labels(memory.space, "bob stone") == Counter({"PERSON": 1, "ORG": 1})

    def test_a_lone_name_tagged_a_place_that_is_no_place_joins_its_person(
        self, memory: EntityMemory
    ) -> None:
        # The small model calls the lone "Kenji" a place; no gazetteer knows a place "Kenji".
        later = "Yesterday Kenji approved the budget."
        doc = get_analyzer().analyse([later])[0]
        assert ("Kenji", "GPE") in [(ent.text, ent.label_) for ent in doc.ents]
        memory.save("Kenji Morimoto works at Initech.")
        item = memory.save(later)  # another memory, no conversation
        assert item.metadata["entities"] == ["Kenji Morimoto"]
        assert memory.get_entity("Kenji") is not None
        assert memory.get_entity("Kenji").key == "kenji morimoto"  # type: ignore[union-attr]

    @pytest.mark.parametrize("batch", [False, True], ids=["save", "save_many"])
    def test_a_lone_name_tagged_a_place_joins_the_person_its_conversation_names(
        self, memory: EntityMemory, batch: bool
    ) -> None:
        bio = ("Leslie Berlin wrote a history of Silicon Valley.", "Berlin wrote the book in 2005.")
        # The small model calls this lone "Berlin" a city.
        doc = get_analyzer().analyse([bio[1]])[0]
        assert [(ent.text, ent.label_) for ent in doc.ents] == [("Berlin", "GPE"), ("2005", "DATE")]
        if batch:  # one batch: the first memory's rows are still pending at the second
            items = memory.save_many([{"content": t, "conversation_id": "bio"} for t in bio])
        else:
            items = [memory.save(t, conversation_id="bio") for t in bio]
        assert items[1].metadata["entities"] == ["Leslie Berlin"]
        person = memory.get_entity("Leslie Berlin")
        assert person is not None and (person.label, person.mentions) == ("PERSON", 2)
        # NER's label is not the person's; the word does not become her alias everywhere.
        assert _mention_labels(memory.space, "leslie berlin") == Counter({"PERSON": 2})
        assert "Berlin" not in person.aliases
        assert [(key, label) for _, key, label in _entity_rows(memory.space)] == [
            ("leslie berlin", "PERSON"),
            ("silicon valley", "LOC"),
        ]

    def test_the_same_name_in_another_conversation_stays_a_place(
        self, memory: EntityMemory
    ) -> None:
        memory.save("Leslie Berlin wrote a history of Silicon Valley.", conversation_id="bio")
        memory.save("Berlin wrote the book in 2005.", conversation_id="travel")
        memory.save("Berlin wrote the book in 2005.")  # no conversation: only its own text
        memory.save("The conference was held in Berlin.", conversation_id="bio")  # "in"
        person, city = memory.get_entity("Leslie Berlin"), memory.get_entity("Berlin")
        assert person is not None and city is not None
        assert (person.key, person.mentions) == ("leslie berlin", 1)
        assert (city.key, city.label, city.mentions) == ("berlin", "GPE", 3)

    def test_the_memory_itself_may_name_the_person(self, memory: EntityMemory) -> None:
        # Both lone names are tagged GPE; the first follows its person's full name, the
        # second comes after "in", a word of place.
        joined = memory.save(
            "Frederick Chiluba was the second President of Zambia. Chiluba won the election."
        )
        assert joined.metadata["entities"] == ["Frederick Chiluba", "Zambia"]
        assert _mention_labels(memory.space, "frederick chiluba") == Counter({"PERSON": 2})
        apart = memory.save("Leslie Berlin lived in Berlin.")
        assert apart.metadata["entities"] == ["Leslie Berlin", "Berlin"]
        city = memory.get_entity("Berlin")
        assert city is not None and (city.key, city.label) == ("berlin", "GPE")

    def test_conversation_text_is_matched_literally(self, tmp_path: Path) -> None:
        db = Database(tmp_path / "rows.db")
        with db.write() as conn:
            for text, conversation in [("Ada_Lovelace 100% wrote it.", "c"), ("AdaXLovelace", "d")]:
                item = MemoryItem(text, conversation_id=conversation)
                text_rows.insert_memory(conn, item, namespace="n")
            found = {
                (text, conversation): graph_rows.conversation_contains(conn, "", conversation, text)
                for text, conversation in [
                    ("Ada_Lovelace", "c"),
                    ("ada_lovelace", "c"),  # SQLite's LIKE folds ASCII case
                    ("100% wrote", "c"),
                    ("Ada_Lovelace", "d"),  # "_" is no wildcard
                    ("Ada%wrote", "c"),  # nor is "%"
                    ("Ada_Lovelace", "e"),
                ]
            }
        assert found == {
            ("Ada_Lovelace", "c"): True,
            ("ada_lovelace", "c"): True,
            ("100% wrote", "c"): True,
            ("Ada_Lovelace", "d"): False,
            ("Ada%wrote", "c"): False,
            ("Ada_Lovelace", "e"): False,
        }
        db.close()

    def test_merging_a_person_into_a_place_is_refused(self, memory: EntityMemory) -> None:
        memory.save("Leslie Berlin wrote a history of Silicon Valley.")
        memory.save("The conference was held in Berlin.")
        before = _entity_rows(memory.space)
        with pytest.raises(InvalidArgumentError, match="cannot be one entity"):
            memory.merge_entities("Leslie Berlin", "Berlin")
        assert _entity_rows(memory.space) == before


def test_names_of_the_united_states_are_one_entity(memory: EntityMemory) -> None:
    for text in (
        "She moved to the U.S. in 2010.",
        "The US economy grew last year.",
        "The United States of America signed the treaty.",
        "Tell us about the plan.",
    ):
        memory.save(text)
    assert [(key, label) for _, key, label in _entity_rows(memory.space)] == [
        ("united states", "GPE")
    ]
    for name in ("United States", "USA", "U.S.A."):
        info = memory.get_entity(name)
        assert info is not None and (info.name, info.mentions) == ("U.S.", 3), name


class TestAcronymsDefinedInParentheses:
    @pytest.mark.parametrize(
        "definition",
        [
            "International Business Machines (IBM) announced results.",
            "IBM (International Business Machines) hired Tom Baker.",
        ],
    )
    def test_the_acronym_names_the_company(self, memory: EntityMemory, definition: str) -> None:
        memory.save(definition)
        memory.save("IBM hired Tom Baker.")
        orgs = [key for _, key, label in _entity_rows(memory.space) if label == "ORG"]
        assert len(orgs) == 1
        info = memory.get_entity("International Business Machines")
        assert info is not None and info == memory.get_entity("IBM")
        assert info.mentions == 3

    def test_a_definition_merges_names_known_apart(self, memory: EntityMemory) -> None:
        memory.save("IBM hired Tom Baker.")
        memory.save("International Business Machines announced results.")
        assert len([k for _, k, label in _entity_rows(memory.space) if label == "ORG"]) == 2
        memory.save("International Business Machines (IBM) opened a lab.")
        info = memory.get_entity("IBM")
        assert info is not None and info == memory.get_entity("International Business Machines")
        assert (info.key, info.mentions) == ("international business machines", 4)
        merges = schema.merges
        with memory.space.database.read() as conn:
            rows = conn.execute(select(merges.c.id, merges.c.kept_key, merges.c.merged_key)).all()
        assert [(k, m) for _, k, m in rows] == [("international business machines", "ibm")]
        memory.unmerge(rows[0][0])  # logged like a merge by hand, so it can be undone
        assert memory.get_entity("IBM") != memory.get_entity("International Business Machines")

    def test_a_place_in_parentheses_is_not_an_alias(self, memory: EntityMemory) -> None:
        memory.save("Acme Corp (Berlin) hired Tom Baker.")
        acme, berlin = memory.get_entity("Acme"), memory.get_entity("Berlin")
        assert acme is not None and berlin is not None and acme.key != berlin.key
