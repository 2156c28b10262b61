"""Calute's mutable attributes, changed in place as calute code does (docs/contract.md §2): every change
reaches graphmem's graph or stored preferences, and survives a reopen.

calute 0.1.5 itself: ``self.relationships[relation].append((entity1, entity2))`` in
``EntityMemory.save``, ``sum(len(rels) for rels in entity_mem.relationships.values())`` in
``UserMemory.get_user_statistics``, ``self.user_preferences[user_id].update(preferences)`` and
``del self.user_preferences[user_id]`` in ``UserMemory``.
"""

from __future__ import annotations

import inspect

import pytest

from graphmem import EntityMemory, SQLiteStorage, UserMemory
from graphmem.errors import InvalidArgumentError
from graphmem.memories.user import DEFAULT_PREFERENCES


@pytest.fixture
def team() -> EntityMemory:
    memory = EntityMemory()
    memory.save("Alice Johnson joined Acme Corp in Berlin.")
    return memory


def _pairs(memory: EntityMemory, predicate: str) -> list[tuple[str, str]]:
    return [(e.subject, e.object) for e in memory.find(predicate=predicate)]


class TestRelationships:
    def test_calute_append_reaches_the_graph(self, team: EntityMemory) -> None:
        team.relationships["knows"].append(("Alice Johnson", "Bob Stone"))
        assert _pairs(team, "knows") == [("Alice Johnson", "Bob Stone")]
        assert "Bob Stone" in team.get_related_entities("Alice Johnson", max_depth=1)
        info = team.get_entity_info("Alice Johnson")
        assert {"relation": "knows", "target": "Bob Stone"} in info["relationships"]
        assert team.relationships["knows"] == [("Alice Johnson", "Bob Stone")]

    def test_reads_like_calutes_dict(self, team: EntityMemory) -> None:
        relationships = team.relationships
        assert "knows" not in relationships
        assert relationships.get("knows") is None
        assert relationships["knows"] == []  # a defaultdict(list) read
        relationships["knows"].append(("Alice Johnson", "Bob Stone"))
        # The view is live: the reference taken before the change sees it.
        assert "knows" in relationships
        assert dict(relationships)["knows"] == [("Alice Johnson", "Bob Stone")]
        assert sum(len(pairs) for pairs in relationships.values()) == sum(
            len(team.find(predicate=p)) for p in relationships
        )
        assert relationships == team.relation_pairs_by_predicate()

    def test_a_repeated_pair_adds_support_not_a_duplicate(self, team: EntityMemory) -> None:
        pairs = team.relationships["knows"]
        pairs.append(("Alice Johnson", "Bob Stone"))
        pairs.append(("Alice Johnson", "Bob Stone"))
        assert pairs == [("Alice Johnson", "Bob Stone")]
        (edge,) = team.find(predicate="knows")
        assert edge.support == 2

    def test_removals(self, team: EntityMemory) -> None:
        pairs = team.relationships["knows"]
        pairs.extend([("Alice Johnson", "Bob Stone"), ("Carol Diaz", "Dan Evans")])
        pairs.remove(("Carol Diaz", "Dan Evans"))
        assert _pairs(team, "knows") == [("Alice Johnson", "Bob Stone")]
        # Dan Evans was only ever in that relation: with no support left he is gone.
        assert team.get_entity("Dan Evans") is None
        with pytest.raises(ValueError, match="is not a 'knows' pair"):
            pairs.remove(("Carol Diaz", "Dan Evans"))
        assert pairs.pop() == ("Alice Johnson", "Bob Stone")
        assert "knows" not in team.relationships
        # No relation holds "knows" any more and the catalogue lacks it: find names it unknown.
        with pytest.raises(InvalidArgumentError, match="unknown predicate 'knows'"):
            team.find(predicate="knows")
        with pytest.raises(KeyError):
            del team.relationships["knows"]

    def test_assign_delete_and_clear(self, team: EntityMemory) -> None:
        relationships = team.relationships
        relationships["mentors"] = [("Alice Johnson", "Bob Stone"), ("Alice Johnson", "Carol Diaz")]
        relationships["mentors"] = [("Alice Johnson", "Carol Diaz")]
        assert _pairs(team, "mentors") == [("Alice Johnson", "Carol Diaz")]
        del relationships["co_occurs"]
        assert team.find(predicate="co_occurs") == []
        relationships.clear()
        assert dict(relationships) == {} and len(relationships) == 0
        assert team.graph.graph.number_of_edges() == 0
        # Entities still mentioned by a memory stay; the memory is untouched.
        assert team.get_entity("Acme Corp") is not None and len(team) == 1

    def test_predicate_is_normalised_as_add_relation_stores_it(self, team: EntityMemory) -> None:
        pairs = team.relationships["Works With"]
        pairs.append(("Alice Johnson", "Bob Stone"))
        assert pairs == [("Alice Johnson", "Bob Stone")]
        assert "works_with" in team.relationships

    def test_changes_persist(self, db_file: str) -> None:
        storage = SQLiteStorage(db_file)
        memory = EntityMemory(storage=storage)
        memory.save("Alice Johnson joined Acme Corp in Berlin.")
        memory.relationships["knows"].append(("Alice Johnson", "Bob Stone"))
        memory.relationships["co_occurs"].remove(("Acme Corp", "Berlin"))
        expected = dict(memory.relationships)
        storage.close()
        storage = SQLiteStorage(db_file)
        try:
            reopened = EntityMemory(storage=storage)
            assert dict(reopened.relationships) == expected
            assert ("Acme Corp", "Berlin") not in reopened.relationships["co_occurs"]
            assert reopened.relationships["knows"] == [("Alice Johnson", "Bob Stone")]
        finally:
            storage.close()

    def test_users_graphs_stay_apart(self) -> None:
        users = UserMemory()
        users.save_memory("alice", "Alice Johnson joined Acme Corp.")
        users.save_memory("bob", "Bob Stone joined Initech.")
        before = {u: users.get_user_statistics(u)["relationships"] for u in ("alice", "bob")}
        users.user_entities["alice"].relationships["knows"].append(("Alice Johnson", "Zed"))
        assert "knows" not in users.user_entities["bob"].relationships
        assert users.get_user_statistics("alice")["relationships"] == before["alice"] + 1
        assert users.get_user_statistics("bob")["relationships"] == before["bob"]

    @pytest.mark.parametrize(
        "bad",
        [
            "Alice Johnson",
            ("Alice Johnson",),
            ("Alice Johnson", 7),
            ("", "Bob"),
            None,
            ("a", "b", "c"),
        ],
    )
    def test_bad_pairs_write_nothing(self, team: EntityMemory, bad: object) -> None:
        before = dict(team.relationships)
        with pytest.raises((TypeError, ValueError), match="pair|must"):
            team.relationships["knows"].append(bad)  # type: ignore[arg-type]
        with pytest.raises((TypeError, ValueError)):
            team.relationships["knows"].extend([("Alice Johnson", "Bob Stone"), bad])  # type: ignore[list-item]
        with pytest.raises((TypeError, ValueError)):
            team.relationships["knows"] = [("Alice Johnson", "Bob Stone"), bad]  # type: ignore[list-item]
        assert dict(team.relationships) == before

    def test_bad_predicates(self, team: EntityMemory) -> None:
        with pytest.raises(TypeError, match="predicate must be a str"):
            team.relationships[7]  # type: ignore[index]
        with pytest.raises(ValueError, match="predicate must not be empty"):
            team.relationships["  "].append(("Alice Johnson", "Bob Stone"))
        with pytest.raises(ValueError, match="cannot be repeated"):
            pairs = team.relationships["co_occurs"]
            pairs *= 2


class TestExtractRelationships:
    def test_calutes_signature(self) -> None:
        params = list(inspect.signature(EntityMemory._extract_relationships).parameters)
        assert params == ["self", "text", "entities"]

    def test_multi_word_names_in_text_order_once(self) -> None:
        memory = EntityMemory()
        text = (
            "Bob Stone, the CTO of Initech, met Carol Diaz. Alice Johnson works at Acme Corp. "
            "Alice Johnson works at Acme Corp."
        )
        entities = ["Alice Johnson", "Acme Corp", "Bob Stone", "Initech"]
        # calute's regexes see one-word names only ("Johnson works at Acme"), and keep a
        # triple once per occurrence.
        assert memory._extract_relationships(text, entities) == [
            ("Bob Stone", "cto_of", "Initech"),
            ("Alice Johnson", "works_at", "Acme Corp"),
        ]
        # Only between the given entities.
        assert memory._extract_relationships(text, ["Alice Johnson", "Initech"]) == []

    def test_ends_named_as_given_and_resolved_through_the_graph(self) -> None:
        memory = EntityMemory()
        memory.save("Alice Johnson joined Acme Corp in Berlin.")
        found = memory._extract_relationships("Alice moved to Paris.", ["Alice Johnson", "Paris"])
        assert found == [("Alice Johnson", "lives_in", "Paris")]

    def test_stores_nothing(self) -> None:
        memory = EntityMemory()
        memory._extract_relationships(
            "Alice Johnson works at Acme Corp.", ["Alice Johnson", "Acme Corp"]
        )
        assert len(memory) == 0 and len(memory.graph) == 0

    def test_empty_and_bad_input(self) -> None:
        memory = EntityMemory()
        assert memory._extract_relationships("", ["Alice"]) == []
        assert memory._extract_relationships("Alice Johnson works at Acme Corp.", []) == []
        with pytest.raises(TypeError, match="text must be a str"):
            memory._extract_relationships(None, ["Alice"])  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="entities must be a list of str"):
            memory._extract_relationships("Alice works at Acme.", "Alice")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="entities must be a list of str"):
            memory._extract_relationships("Alice works at Acme.", [None])  # type: ignore[list-item]


class TestUserPreferences:
    def test_calutes_shape(self) -> None:
        users = UserMemory()
        assert dict(users.user_preferences) == {}
        users.get_or_create_user_memory("alice")
        assert dict(users.user_preferences) == {"alice": DEFAULT_PREFERENCES}
        with pytest.raises(KeyError):
            users.user_preferences["bob"]

    def test_changes_in_place_are_stored(self) -> None:
        users = UserMemory()
        users.get_or_create_user_memory("alice")
        users.get_or_create_user_memory("bob")
        users.user_preferences["alice"].update({"verbosity": "low"})
        users.user_preferences["alice"]["language"] = "de"
        prefs = users.get_user_preferences("alice")
        assert (prefs["verbosity"], prefs["language"]) == ("low", "de")
        assert users.get_user_preferences("bob") == DEFAULT_PREFERENCES
        users.user_preferences["bob"] = {"timezone": "CET"}
        assert users.get_user_preferences("bob") == {**DEFAULT_PREFERENCES, "timezone": "CET"}
        del users.user_preferences["alice"]  # calute's clear_user_memory does this
        assert users.get_user_preferences("alice") == DEFAULT_PREFERENCES
        held = users.user_preferences["bob"]
        assert held.pop("timezone") == "CET"
        assert users.get_user_preferences("bob") == DEFAULT_PREFERENCES

    def test_changes_persist(self, db_file: str) -> None:
        storage = SQLiteStorage(db_file)
        users = UserMemory(storage=storage)
        users.save_memory("alice", "Alice likes tea")
        users.user_preferences["alice"]["response_style"] = "terse"
        storage.close()
        storage = SQLiteStorage(db_file)
        try:
            reopened = UserMemory(storage=storage)
            assert reopened.user_preferences["alice"]["response_style"] == "terse"
            assert list(reopened.user_preferences) == ["alice"]
        finally:
            storage.close()

    @pytest.mark.parametrize("bad", [{1, 2}, float("nan"), object()])
    def test_values_that_cannot_be_stored_are_refused(self, bad: object) -> None:
        users = UserMemory()
        users.update_user_preferences("alice", {"verbosity": "low"})
        with pytest.raises((TypeError, ValueError), match="preferences"):
            users.user_preferences["alice"]["extra"] = bad
        with pytest.raises((TypeError, ValueError), match="preferences"):
            users.update_user_preferences("alice", {"extra": bad})
        assert users.get_user_preferences("alice") == {**DEFAULT_PREFERENCES, "verbosity": "low"}

    def test_bad_assignments(self) -> None:
        users = UserMemory()
        users.get_or_create_user_memory("alice")
        with pytest.raises(TypeError, match="preferences must be a dict"):
            users.user_preferences["alice"] = "verbose"  # type: ignore[assignment]
        with pytest.raises(TypeError, match="user_id must be a str"):
            users.user_preferences[3] = {}  # type: ignore[index]
        with pytest.raises(KeyError):
            del users.user_preferences["nobody"]
        assert users.get_user_preferences("alice") == DEFAULT_PREFERENCES
