"""The learned relation model's cheaper paths give what the straightforward ones give (issue 15).

The learned model reads a doc through a ``TokenTable`` (lemmas, labels, heads read once per
doc) and scores the document stage's pairs by shape; each is compared here with what spaCy
itself (or the definition it replaces) gives on real parses: the demo corpus, the agent-log
corpus of tests/data, and sentences written for the rules' phrasings.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest
from spacy.language import Language
from spacy.tokens import Doc

from graphmem.extract.learned import (
    DocumentFacts,
    LearnedRelationExtractor,
    document_entities,
    document_pair_features,
    first_stage_by_pair,
    load_document_model,
    load_learned_model,
    pair_features,
    pair_shape,
)
from graphmem.extract.pipeline import get_analyzer
from graphmem.extract.texts import analyse_texts
from graphmem.extract.token_table import TokenTable

AGENT_LOG = Path(__file__).parent / "data" / "agent_logs" / "dev.json"

#: Phrasings the rules are written for, and near misses.
SENTENCES = [
    "Steve Jobs founded Apple in Cupertino, California.",
    "Alice Johnson, the CTO of Initech, met Bob Stone in Berlin.",
    "Maya Lindqvist started at Lumen Robotics as a product manager.",
    "Erik Solberg quit Kestrel Automation and joined Vantor as head of logistics.",
    "Lumen Robotics moved its headquarters from Oslo to Bergen.",
    "Priya Nair (procurement lead, Halden) toured the Bergen lab with Tom Becker.",
    "Mitsubishi Electric (Japan) and France Transfo signed a deal.",
    "Dana left Acme. She joined Initech in May and now reports to Henrik Dahl.",
    "Samir Haddad graduated from the University of Oslo and previously worked at Equinor.",
    "Does Alice work at Acme? Bob does not work at Initech.",
    "The firm, Acme Corp, is based in Dublin; its CEO Daniel Brooks lives in Cork.",
    "Ingrid was promoted to CTO of Vantor and reports to Leila Haddad.",
]


@pytest.fixture(scope="module")
def nlp() -> Language:
    return get_analyzer().nlp


@pytest.fixture(scope="module")
def docs(nlp: Language) -> list[Doc]:
    """Parsed docs, as the engine parses them: sentences, the demo, the agent log."""
    analyzer = get_analyzer()
    demo = files("graphmem.demo_data").joinpath("team_memories.jsonl").read_text("utf-8")
    texts = SENTENCES + [json.loads(line)["content"] for line in demo.splitlines() if line]
    results = json.loads(AGENT_LOG.read_text(encoding="utf-8"))["results"]
    pairs = [(r["task_description"], r["result"]) for r in results]
    return analyzer.analyse(texts, relations=True) + analyse_texts(analyzer, pairs, True)


class TestTokenTable:
    def test_same_as_the_tokens(self, docs: list[Doc]) -> None:
        for doc in docs[:80]:
            table = TokenTable(doc)
            assert table.lemmas == [t.lemma_.lower() for t in doc]
            assert table.deps == [t.dep_ for t in doc]
            assert table.heads == [t.head.i for t in doc]
            assert table.spaces == [t.is_space for t in doc]
            for token in doc:
                assert table.sentence_of(token.i) == (token.sent.start, token.sent.end)
                assert table.children(token.i) == tuple(c.i for c in token.children)
                assert table.ancestors(token.i) == (token.i, *(a.i for a in token.ancestors))
                assert table.trees[token.i] == table.ancestors(token.i)[-1]
            for span in doc.ents:
                assert table.root(span) == span.root.i
                assert table.name(span) == span.text.lower()

    def test_one_table_per_doc_in_a_row(self, docs: list[Doc]) -> None:
        first = TokenTable.of(docs[0])
        assert TokenTable.of(docs[0]) is first
        assert TokenTable.of(docs[1]) is not first
        assert TokenTable.of(docs[1]).doc is docs[1]


def _old_first_stage_by_pair(
    rows: Sequence[tuple[Hashable, Hashable, np.ndarray]],
    classes: Sequence[str],
    symmetric: frozenset[str],
) -> dict[tuple[Hashable, Hashable], dict[str, float]]:
    """The definition the vectorised one replaces (main 3a19242), kept as the reference."""
    out: dict[tuple[Hashable, Hashable], dict[str, float]] = {}
    for a, b, probs in rows:
        if a == b:
            continue
        for j, label in enumerate(classes[1:], start=1):
            predicate = label[:-1]
            forward = label[-1] == ">"
            for head, tail in (
                ((a, b), (b, a)) if predicate in symmetric else ([(a, b)] if forward else [(b, a)])
            ):
                slot = out.setdefault((head, tail), {})
                slot[predicate] = max(slot.get(predicate, 0.0), float(probs[j]))
    return out


@pytest.fixture(scope="module")
def extractor() -> LearnedRelationExtractor:
    return LearnedRelationExtractor()


class TestLearnedStages:
    def test_first_stage_probabilities_are_the_summed_weights(
        self, extractor: LearnedRelationExtractor, docs: list[Doc]
    ) -> None:
        model = extractor.model
        scored = 0
        for doc in docs:
            features = [pair_features(p.first, p.second, 0) for p in extractor.score(doc)]
            features.append(["no such feature"])
            scores = np.tile(model.intercepts, (len(features), 1))
            for row, names in enumerate(features):
                index = [model.features[n] for n in names if n in model.features]
                if index:
                    scores[row] += model.weights[index].sum(axis=0)
            expected = np.exp(scores - scores.max(axis=1, keepdims=True))
            expected /= expected.sum(axis=1, keepdims=True)
            assert np.array_equal(model.probabilities(features), expected)
            scored += len(features) - 1
        assert scored > 50

    def test_first_stage_by_pair_as_defined(
        self, extractor: LearnedRelationExtractor, docs: list[Doc]
    ) -> None:
        model = extractor.model
        symmetric = model.predicates.symmetric_predicates()
        compared = 0
        for doc in docs:
            rows = [
                (p.first.text.lower(), p.second.text.lower(), p.probabilities)
                for p in extractor.score(doc)
            ]
            got = first_stage_by_pair(rows, model.classes, symmetric)
            expected = _old_first_stage_by_pair(rows, model.classes, symmetric)
            assert got == expected
            assert [list(v) for v in got.values()] == [list(expected[k]) for k in got]
            compared += len(got)
        assert compared > 50

    def test_document_stage_by_shape_is_the_feature_sum(
        self, extractor: LearnedRelationExtractor, docs: list[Doc]
    ) -> None:
        document = load_document_model()
        model = load_learned_model()
        layout = model.first_stage_layout
        symmetric = model.predicates.symmetric_predicates()
        compared = 0
        for doc in docs:
            spans = list(doc.ents)
            entities = document_entities(spans)
            pairs = [(h, t) for h in entities for t in entities if h.key != t.key]
            if not pairs:
                continue
            scored = extractor.score(doc, spans)
            rows = [(p.first.text.lower(), p.second.text.lower(), p.probabilities) for p in scored]
            by_pair = first_stage_by_pair(rows, model.classes, symmetric)
            expected = document.probabilities(
                [
                    document_pair_features(
                        h, t, entities, document.countries, by_pair.get((h.key, t.key), {})
                    )
                    for h, t in pairs
                ]
            )
            maxima = layout.maxima(
                [(a, b) for a, b, _ in rows],
                np.array([p for _, _, p in rows]).reshape(len(rows), len(model.classes)),
            )
            facts = DocumentFacts.of(entities, document.countries)
            got = document.pair_probabilities(
                [pair_shape(h, t, facts, document.countries) for h, t in pairs],
                np.array(
                    [maxima.get((h.key, t.key), np.zeros(len(layout.predicates))) for h, t in pairs]
                ),
                layout.predicates,
            )
            assert np.array_equal(got, expected)
            compared += len(pairs)
        assert compared > 100
