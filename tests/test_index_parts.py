"""The parts the entity index is made of agree with what they replaced: the predicate catalogue
with the relation sources' own answers, the one hop rule with both graph back ends, and the
resolution rules over plain records."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from graphmem.extract.learned import load_predicate_map
from graphmem.extract.predicates import PredicateCatalogue, default_catalogue, load_catalogue
from graphmem.extract.relations import load_relation_rules
from graphmem.extract.resolution import (
    may_merge,
    resolve_named,
    short_names_of,
    shortens_only,
)
from graphmem.graph.knowledge_graph import CO_OCCURS, Edge, KnowledgeGraph, hop_rank
from graphmem.graph.records import RelationshipQueries
from graphmem.index.entity_index import EntityIndex
from graphmem.index.sql_graph import SQLGraph
from graphmem.items import CO_OCCURS as BOTTOM_CO_OCCURS
from graphmem.store.database import Database

HELD = [("works_at", "Acme"), ("cto_of", "Acme"), ("reports_to", "Dana"), ("lives_in", "Oslo")]


class TestPredicateCatalogue:
    def test_it_answers_as_the_rules_and_the_learned_predicates_do(self) -> None:
        rules, learned = load_relation_rules(), load_predicate_map()
        catalogue = default_catalogue()
        assert catalogue.functional == rules.functional_predicates() | (
            learned.functional_predicates()
        )
        assert "works_at" in catalogue.functional and "met" not in catalogue.functional
        for predicate, obj in [("left", "Acme"), ("ceo_of", "Acme"), ("works_at", "Initech")]:
            for ends in (False, True):
                assert catalogue.ended_by(predicate, obj, HELD, ends) == rules.ended_by(
                    predicate, obj, HELD, ends
                )

    def test_without_the_learned_model_only_the_rules_count(self, monkeypatch) -> None:
        monkeypatch.setenv("GRAPHMEM_LEARNED_RELATIONS", "0")
        catalogue = default_catalogue()
        assert catalogue is load_catalogue(learned=False)
        assert catalogue.functional == load_relation_rules().functional_predicates()

    def test_the_index_uses_the_catalogue_it_is_given(self) -> None:
        rules = load_relation_rules()
        given = PredicateCatalogue(frozenset(), rules)
        index = EntityIndex(Database(), predicates=given)
        assert index.relation_source is not None
        assert index.predicates is given


class TestOneHopRule:
    def test_typed_before_support_then_forwards(self) -> None:
        options = [(CO_OCCURS, 50, False), ("works_at", 1, True), ("manages", 1, False)]
        assert max(options, key=lambda o: hop_rank(*o)) == ("manages", 1, False)

    def test_both_back_ends_pick_the_same_hops(self) -> None:
        db = Database()
        index = EntityIndex(db)
        for subject, predicate, obj in [
            ("Alice Johnson", "works_at", "Acme"),
            ("Alice Johnson", "co_occurs", "Acme"),
            ("Bob Stone", "co_occurs", "Acme"),
            ("Acme", "partnered_with", "Bob Stone"),
        ]:
            index.add_relation("", subject, predicate, obj)
        backends: list[RelationshipQueries] = [index.graph(""), SQLGraph(db, "")]
        found = [
            [
                [(h.edge.predicate, h.reversed) for h in path]
                for path in q.paths("Alice Johnson", "Bob Stone")
            ]
            for q in backends
        ]
        assert found[0] == found[1] == [[("works_at", False), ("partnered_with", False)]]

    def test_co_occurs_is_spelt_once(self) -> None:
        assert CO_OCCURS is BOTTOM_CO_OCCURS
        edge = Edge("a", CO_OCCURS, "b", 1, 1.0, "", "", None, None, None)
        assert not edge.is_typed
        assert Edge("a", "met", "b", 1, 1.0, "", "", None, None, None).is_typed


@pytest.fixture
def people() -> KnowledgeGraph:
    kg = KnowledgeGraph()
    for key, name, label in [
        ("ravi", "Ravi", "PERSON"),
        ("ravi mehta", "Ravi Mehta", "PERSON"),
        ("northwind", "Northwind", "ORG"),
        ("oslo", "Oslo", "GPE"),
    ]:
        kg.add_entity(key, name=name, label=label)
    return kg


class TestResolutionRules:
    def test_a_lone_word_shortens_the_one_full_name(self, people: KnowledgeGraph) -> None:
        assert shortens_only(people, "ravi", "ravi mehta")
        people.add_entity("ravi shah", name="Ravi Shah", label="PERSON")
        assert not shortens_only(people, "ravi", "ravi mehta")

    def test_a_new_full_name_absorbs_the_lone_words_it_shortens(
        self, people: KnowledgeGraph
    ) -> None:
        people.add_entity("northwind systems", name="Northwind Systems", label="ORG")
        assert short_names_of(people, "northwind systems", "ORG") == ["northwind"]
        assert short_names_of(people, "ravi mehta", "PERSON") == ["ravi"]
        assert short_names_of(people, "ravi mehta", "GPE") == []

    def test_the_one_label_rule(self, people: KnowledgeGraph) -> None:
        assert may_merge(people, "ravi", "ravi mehta")
        assert not may_merge(people, "ravi", "ravi")
        assert not may_merge(people, "ravi mehta", "oslo")

    def test_a_name_given_by_hand(self, people: KnowledgeGraph) -> None:
        assert resolve_named(people, "Ravi Mehta", "PERSON") == "ravi mehta"
        assert resolve_named(people, "Initech", "ORG") is None
        with pytest.raises(ValueError, match="'Oslo' \\(PERSON\\) cannot be 'Oslo' \\(GPE\\)"):
            resolve_named(people, "Oslo", "PERSON")

    def test_plain_records_will_do(self) -> None:
        records = SimpleNamespace(
            label_of={"ravi": "PERSON", "ravi mehta": "PERSON"}.get,
            name_of=lambda key: key.title(),
            keys_with_word=lambda word: {"ravi", "ravi mehta"},
        )
        assert shortens_only(records, "ravi", "ravi mehta")
