"""The learned relation extractor: its files are checked before use, its relations reach the
graph beside the rules' (a rule wins for its pair), and it stays quiet on unrelated names.

Real en_core_web_sm, temporary files only; the shipped model in models/ is what is tested.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from graphmem._assets import asset_path
from graphmem.extract.learned import (
    AGENT_FILES,
    DOCUMENT_RULE,
    DOCUMENT_SWITCH_VARIABLE,
    INFERRED_RULE,
    LEARNED_RULE,
    MANIFEST_FILE,
    MODEL_FILES,
    SWITCH_VARIABLE,
    Implication,
    InferenceRules,
    LearnedModelError,
    Propagation,
    competing_mention,
    implied_relations,
    infer_relations,
    load_document_model,
    load_learned_model,
    load_predicate_map,
    parse_predicate_map,
)
from graphmem.extract.relations import load_relation_rules
from graphmem.memories.entity import EntityMemory
from graphmem.viz import render_graph

MODELS = asset_path("models", MANIFEST_FILE).parent


def copy_models(tmp_path: Path) -> Path:
    target = tmp_path / "models"
    target.mkdir()
    for name in (*MODEL_FILES, MANIFEST_FILE):
        shutil.copy(MODELS / name, target / name)
    return target


def typed(memory: EntityMemory, name: str) -> set[tuple[str, str, str, str]]:
    """(subject, predicate, object, rule of the first evidence) of ``name``'s typed relations."""
    return {
        (e.subject, e.predicate, e.object, e.evidence[0].rule)
        for e in memory.relations(name)
        if e.predicate != "co_occurs"
    }


class TestFiles:
    def test_the_manifest_records_the_shipped_bytes(self):
        manifest = json.loads((MODELS / MANIFEST_FILE).read_text(encoding="utf-8"))["files"]
        assert sorted(manifest) == sorted((*MODEL_FILES, *AGENT_FILES))
        for name in (*MODEL_FILES, *AGENT_FILES):
            assert manifest[name] == hashlib.sha256((MODELS / name).read_bytes()).hexdigest()

    @pytest.mark.parametrize("name", MODEL_FILES)
    def test_a_tampered_file_is_refused(self, tmp_path, name):
        models = copy_models(tmp_path)
        data = bytearray((models / name).read_bytes())
        data[len(data) // 2] ^= 0x01
        (models / name).write_bytes(bytes(data))
        with pytest.raises(LearnedModelError, match=rf"{name}: SHA-256 .* does not match"):
            load_learned_model(models)
            load_document_model(models)  # the document stage's files are its own

    def test_an_intact_copy_loads(self, tmp_path):
        model = load_learned_model(copy_models(tmp_path))
        assert model.weights.shape == (len(model.features), len(model.classes))
        assert model.classes[0] == "NA"

    def test_a_missing_manifest_is_refused(self, tmp_path):
        models = copy_models(tmp_path)
        (models / MANIFEST_FILE).unlink()
        with pytest.raises(LearnedModelError, match="manifest"):
            load_learned_model(models)

    def test_predicates_agree_with_the_rules_file(self):
        """A predicate both sources produce must be functional / symmetric in both or neither:
        the graph closes old values of functional predicates whichever source found them."""
        learned = load_predicate_map().predicates
        rules = load_relation_rules().predicates
        shared = sorted(set(learned) & set(rules))
        assert {"works_at", "lives_in", "born_in", "located_in", "founded"} <= set(shared)
        for name in shared:
            assert (learned[name].functional, learned[name].symmetric) == (
                rules[name].functional,
                rules[name].symmetric,
            ), name

    def test_every_class_is_a_declared_predicate_in_one_direction(self):
        model = load_learned_model()
        for label in model.classes[1:]:
            assert label[-1] in "<>" and label[:-1] in model.predicates.predicates


class TestInference:
    rules = InferenceRules(
        (("located_in", "country", "country"),),
        (Propagation("country", frozenset({"GPE"}), 2),),
    )

    def test_composition(self):
        found = {("a", "located_in", "b"): 0.9, ("b", "country", "c"): 0.7}
        new = infer_relations(found, {}, self.rules)
        assert new == {
            ("a", "country", "c"): (0.7, ("a", "located_in", "b"), ("b", "country", "c"))
        }

    def test_propagation_needs_the_votes(self):
        labels = {"x": "GPE", "y": "GPE", "z": "PERSON", "c": "GPE"}
        one_vote = {("x", "country", "c"): 0.8}
        assert infer_relations(one_vote, labels, self.rules) == {}
        two_votes = {("x", "country", "c"): 0.8, ("w", "country", "c"): 0.6}
        new = infer_relations(two_votes, labels, self.rules)
        # y is a GPE without a country; z is not a GPE; c is the value itself.
        assert list(new) == [("y", "country", "c")]
        assert new[("y", "country", "c")][0] == 0.6


class TestImplications:
    rules = InferenceRules((), (), (Implication("located_in", "country", True),))

    def test_a_place_in_a_country_has_that_country(self):
        found = {("ulm", "located_in", "germany"): 0.8, ("ulm", "located_in", "swabia"): 0.9}
        assert implied_relations(found, {"germany"}, self.rules) == {
            ("ulm", "country", "germany"): (0.8, ("ulm", "located_in", "germany"))
        }

    def test_nothing_is_implied_twice_or_over_a_found_triple(self):
        found = {("ulm", "located_in", "germany"): 0.8, ("ulm", "country", "germany"): 0.6}
        assert implied_relations(found, {"germany"}, self.rules) == {}

    def test_without_the_country_condition_every_triple_implies(self):
        rules = InferenceRules((), (), (Implication("performed", "created", False),))
        found = {("band", "performed", "album"): 0.7}
        assert list(implied_relations(found, set(), rules)) == [("band", "created", "album")]

    def test_the_shipped_rules_hold_the_country_implication(self):
        assert Implication("located_in", "country", True) in load_predicate_map().inference.imply

    def test_an_implication_of_an_undeclared_predicate_is_refused(self):
        data = json.loads((MODELS / MODEL_FILES[0]).read_text(encoding="utf-8"))
        data["inference"]["imply"] = [{"predicate": "located_in", "implies": "nationality"}]
        with pytest.raises(LearnedModelError, match="undeclared.*nationality"):
            parse_predicate_map(data)

    def test_a_malformed_implication_is_refused(self):
        data = json.loads((MODELS / MODEL_FILES[0]).read_text(encoding="utf-8"))
        data["inference"]["imply"] = [["located_in", "country"]]
        with pytest.raises(LearnedModelError, match="malformed predicate map"):
            parse_predicate_map(data)


@pytest.fixture(scope="module")
def memory() -> EntityMemory:
    return EntityMemory()


class TestThroughEntityMemory:
    def test_born_in_a_city_of_a_country(self, memory):
        memory.save("Marie Curie was born in Warsaw, Poland.")
        # The rule types the person's pair; the model the city's.
        assert typed(memory, "Warsaw") == {
            ("Marie Curie", "born_in", "Warsaw", "born_in/born_in"),
            ("Warsaw", "located_in", "Poland", LEARNED_RULE),
            # Poland is a country name: the implication adds its country, same evidence.
            ("Warsaw", "country", "Poland", INFERRED_RULE),
        }
        found = memory.find(predicate="located_in", object="Poland")
        assert [e.subject for e in found] == ["Warsaw"]
        (country,) = memory.find(predicate="country", subject="Warsaw")
        assert country.evidence[0].sentence == "Marie Curie was born in Warsaw, Poland."

    def test_a_city_in_a_state(self, memory):
        memory.save("Initech is an American software company in Austin, Texas.")
        found = typed(memory, "Austin")
        assert ("Austin", "located_in", "Texas", LEARNED_RULE) in found
        # "a company in Austin" is a rule's: the rule's evidence, not the model's.
        assert ("Initech", "located_in", "Austin", "located_in/place_in") in found
        edge = next(e for e in memory.relations("Austin", predicate="located_in"))
        assert edge.object == "Texas" and 0.5 <= edge.confidence <= 1.0

    def test_a_rule_match_keeps_its_own_evidence(self, memory):
        memory.save("Acme Corp is headquartered in Berlin.")
        assert typed(memory, "Acme Corp") == {
            ("Acme Corp", "located_in", "Berlin", "located_in/based_in")
        }

    def test_a_rule_wins_for_its_pair(self, memory):
        memory.save("Dana Scott works at Northwind.")
        found = typed(memory, "Dana Scott")
        assert found == {("Dana Scott", "works_at", "Northwind", "works_at/work_at")}

    def test_no_relation_between_unrelated_names(self, memory):
        memory.save("Tom Hanks ate a sandwich while Lisbon got some rain.")
        assert typed(memory, "Tom Hanks") == set()
        assert "Lisbon" in memory.neighbors("Tom Hanks")  # they do co-occur

    def test_an_inferred_relation_across_sentences(self, memory):
        memory.save("Pankow is a locality in Berlin. Berlin is the largest city of Germany.")
        # The model reads "city of Germany" as located_in; Germany being a country name, the
        # implication adds its country.
        assert {
            ("Berlin", "located_in", "Germany", LEARNED_RULE),
            ("Berlin", "country", "Germany", INFERRED_RULE),
        } <= typed(memory, "Berlin")
        assert ("Pankow", "country", "Germany", INFERRED_RULE) in typed(memory, "Pankow")
        (edge,) = memory.find(predicate="country", subject="Pankow")
        # The evidence spans both sentences it was inferred from.
        assert "locality in Berlin" in edge.evidence[0].sentence
        assert "city of Germany" in edge.evidence[0].sentence

    def test_paths_and_the_graph_page_show_learned_relations(self, memory, tmp_path):
        memory.save("The Louvre is a museum in Paris, France.")
        assert {
            ("Paris", "located_in", "France", LEARNED_RULE),
            ("Paris", "country", "France", INFERRED_RULE),
        } <= typed(memory, "Paris")
        hops = memory.paths("Louvre", "France")
        # Louvre located_in France and its implied country (Re-DocRED gives both); a hop
        # shows one of the two edges.
        assert any(h.edge.predicate in ("country", "located_in") for path in hops for h in path)
        page = tmp_path / "g.html"
        render_graph(memory.subgraph(["Paris"], 1), page)
        assert "country" in page.read_text(encoding="utf-8")

    def test_the_switch_turns_the_model_off(self, monkeypatch):
        monkeypatch.setenv(SWITCH_VARIABLE, "0")
        plain = EntityMemory()
        plain.save("Marie Curie was born in Warsaw, Poland.")
        # Only the rule's relation is left (the model's Warsaw -> Poland is not).
        assert typed(plain, "Warsaw") == {("Marie Curie", "born_in", "Warsaw", "born_in/born_in")}

    def test_output_is_deterministic(self):
        text = "Marie Curie was born in Warsaw, Poland. Acme Corp is headquartered in Berlin."
        runs = []
        for _ in range(2):
            m = EntityMemory()
            m.save(text)
            runs.append(
                sorted(
                    (e.subject, e.predicate, e.object, e.confidence)
                    for name in m.entities
                    for e in m.relations(name)
                )
            )
        assert runs[0] == runs[1] and runs[0]


def test_inferred_rule_id_is_distinct():
    assert INFERRED_RULE != LEARNED_RULE and INFERRED_RULE.startswith(LEARNED_RULE)


class TestCompetingMentions:
    """A mention pair is no candidate when a word on the path between them takes another
    mention of one end's label as its subject or object, nearer the other end."""

    def test_the_met_person_holds_the_organisation(self, memory):
        memory.save("Priya Nair met Tom Becker from Aurex Logistics in Berlin.")
        assert not {r for r in typed(memory, "Priya Nair") if r[2] == "Aurex Logistics"} - {
            ("Priya Nair", "met", "Tom Becker", "met/met")
        }
        assert ("Tom Becker", "works_at", "Aurex Logistics") in {
            r[:3] for r in typed(memory, "Tom Becker")
        }

    def test_the_leaving_subject_holds_the_destination(self, memory):
        memory.save(
            "Context: Lena Okafor is leaving for Harbor Analytics; Dana Whitfield and Grace "
            "Liu agreed to the handover."
        )
        assert not {r for r in typed(memory, "Dana Whitfield") if r[2] == "Harbor Analytics"}

    def test_a_parse_without_competitor_keeps_the_pair(self):
        import spacy
        from spacy.tokens import Doc, Span

        doc = Doc(
            spacy.blank("en").vocab,
            words=["Ann", "works", "at", "Acme"],
            heads=[1, 1, 1, 2],
            deps=["nsubj", "ROOT", "prep", "pobj"],
        )
        ann, acme = Span(doc, 0, 1, "PERSON"), Span(doc, 3, 4, "ORG")
        assert competing_mention(ann, acme, {0: ann, 3: acme}) is None


class TestDocumentStage:
    """The second stage relates entities of one text, also across sentences."""

    def test_the_model_loads_with_its_country_names(self):
        model = load_document_model()
        assert model.classes[0] == "NA" and "country" in model.classes
        assert {"germany", "united states", "france"} <= model.countries

    def test_a_relation_across_sentences(self, memory):
        memory.save(
            "Lake Bled is a lake in the Julian Alps. The lake is a popular tourist "
            "destination in Slovenia."
        )
        found = {r for r in typed(memory, "Lake Bled") if r[3] == DOCUMENT_RULE}
        assert {(s, o) for s, _, o, _ in found} == {("Lake Bled", "Slovenia")}
        (edge,) = [
            e
            for e in memory.relations("Lake Bled")
            if e.object == "Slovenia" and e.evidence[0].rule == DOCUMENT_RULE
        ]
        # The evidence is the sentence naming the tail, not the whole text.
        assert edge.evidence[0].sentence.endswith("destination in Slovenia.")
        assert "Julian Alps" not in edge.evidence[0].sentence
        # Slovenia is a country name: the implication adds its country, with that evidence.
        assert edge.predicate == "located_in"
        (implied,) = memory.find(predicate="country", subject="Lake Bled")
        assert implied.evidence[0].rule == INFERRED_RULE
        assert implied.evidence[0].sentence == edge.evidence[0].sentence

    def test_no_relation_between_a_person_and_a_country_merely_named(self, memory):
        memory.save(
            "Ravi Mehta reviewed the Beacon migration plan. The vendor call with Japan is "
            "on Friday."
        )
        assert {r for r in typed(memory, "Ravi Mehta") if r[3] == DOCUMENT_RULE} == set()

    def test_the_switch_turns_the_stage_off(self, monkeypatch):
        monkeypatch.setenv(DOCUMENT_SWITCH_VARIABLE, "0")
        plain = EntityMemory()
        plain.save(
            "Lake Bled is a lake in the Julian Alps. The lake is a popular tourist "
            "destination in Slovenia."
        )
        assert {r for r in typed(plain, "Lake Bled") if r[3] == DOCUMENT_RULE} == set()


def test_document_rule_id_is_distinct():
    assert DOCUMENT_RULE not in (INFERRED_RULE, LEARNED_RULE)
    assert DOCUMENT_RULE.startswith(LEARNED_RULE)
