"""The learned extractor on a parsed doc (first stage, inference rules, document stage), its
combination with the dependency rules, and the relation source graphmem uses by default.

Example:
    >>> import spacy
    >>> type(default_relation_source(spacy.blank("en"))).__name__
    'CombinedRelationSource'
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc, Span

from ..relations import (
    RelationCandidate,
    RelationExtractor,
    RelationRules,
    is_blocked,
    load_relation_rules,
)
from ..token_table import TokenTable
from .agent import AgentRelationExtractor, agent_model_enabled, load_agent_model
from .document import DocumentFacts, pair_shape, table_document_entities
from .features import path_between, table_mention_pairs, table_pair_features
from .files import load_country_names
from .inference import Triple, implied_relations, infer_relations
from .model import DocumentModel, LearnedModel, load_document_model, load_learned_model

#: The rule id of learned relations in their evidence.
LEARNED_RULE = "learned"
#: The rule id of relations inferred from learned ones (``located_in`` + ``country``).
INFERRED_RULE = "learned/inferred"
#: The rule id of relations from the document stage (entity pairs of a whole text).
DOCUMENT_RULE = "learned/document"


#: Predicates whose value is a calendar date: "tomorrow" or "next week" is no such value.
DATE_PREDICATES = frozenset({"born_on", "died_on", "founded_on", "published_on", "dated"})

#: Predicates whose value is a place: a nationality adjective ("American", NORP) is none.
PLACE_PREDICATES = frozenset({"located_in", "born_in", "died_in", "lives_in"})


def plausible_value(predicate: str, value: Span) -> bool:
    """Whether ``value`` can be the object of ``predicate`` at all: a date predicate needs a
    calendar date ("tomorrow" is none), a place predicate no nationality adjective.

    Example:
        >>> import spacy
        >>> from spacy.tokens import Span
        >>> doc = spacy.blank("en")("born tomorrow in American 1990")
        >>> plausible_value("born_on", Span(doc, 1, 2, "DATE"))
        False
        >>> plausible_value("located_in", Span(doc, 3, 4, "NORP"))
        False
        >>> plausible_value("born_on", Span(doc, 4, 5, "DATE"))
        True
    """
    if predicate in DATE_PREDICATES:
        return any(c.isdigit() for c in value.text)
    return not (predicate in PLACE_PREDICATES and value.label_ == "NORP")


#: Set to "0" to run the dependency rules alone (e.g. to measure what the model adds).
SWITCH_VARIABLE = "GRAPHMEM_LEARNED_RELATIONS"
#: Set to "0" to run the learned model without its document stage.
DOCUMENT_SWITCH_VARIABLE = "GRAPHMEM_LEARNED_DOCUMENT"


@dataclass(frozen=True)
class ScoredPair:
    """A mention pair with its class probabilities (one per ``LearnedModel.classes``)."""

    first: Span
    second: Span
    probabilities: np.ndarray


class LearnedRelationExtractor:
    """Typed relations of a parsed doc from the learned model.

    Example (needs a parsed doc, so not run as a doctest):

        .. code-block:: python

            extractor = LearnedRelationExtractor()
            [c.triple for c in extractor.extract(nlp("Acme Corp is based in Berlin."))]
            # [('Acme Corp', 'located_in', 'Berlin')]
    """

    def __init__(
        self,
        model: LearnedModel | None = None,
        rules: RelationRules | None = None,
        document: DocumentModel | None = None,
        document_stage: bool = True,
    ) -> None:
        self.model = model if model is not None else load_learned_model()
        #: The document stage (``None``: first stage and inference rules only).
        self.document = (
            (document if document is not None else load_document_model())
            if document_stage
            else None
        )
        # The rules' filters apply here too: "Alice does not work at Acme" states no relation.
        self.filters = rules if rules is not None else load_relation_rules()
        #: Country names, for the implications ("x located_in Germany": x country Germany).
        self.countries = self.document.countries if self.document else load_country_names()

    def score(self, doc: Doc, entities: Sequence[Span] | None = None) -> list[ScoredPair]:
        """Class probabilities of every mention pair of ``doc`` (``[]`` without a parse)."""
        if not doc.has_annotation("DEP"):
            return []
        spans = list(doc.ents if entities is None else entities)
        return self._score(TokenTable.of(doc), spans) if spans else []

    def _score(self, table: TokenTable, spans: Sequence[Span]) -> list[ScoredPair]:
        pairs = list(table_mention_pairs(table, spans))
        if not pairs:
            return []
        probs = self.model.probabilities([table_pair_features(table, a, b, n) for a, b, n in pairs])
        return [ScoredPair(a, b, p) for (a, b, _), p in zip(pairs, probs, strict=True)]

    def extract(self, doc: Doc, entities: Sequence[Span] | None = None) -> list[RelationCandidate]:
        """The relations whose probability reaches their class threshold (best class per
        mention pair), then those the document-level rules infer from them (rule id
        ``learned/inferred``), then the document stage's over entity pairs of the whole text
        (``learned/document``). Ordered by sentence, subject and object, like the rules' output.
        """
        spans = list(doc.ents if entities is None else entities)
        if len(spans) < 2:
            return []  # no pair: nothing to score, to infer from or to relate
        table = TokenTable.of(doc)
        scored = self._score(table, spans) if doc.has_annotation("DEP") else []
        direct = self._direct(table, scored)
        # Entities are told apart by their text here: resolution happens later, in the index.
        first: dict[str, Span] = {}
        for span in sorted(spans, key=lambda s: s.start):
            first.setdefault(table.name(span), span)
        found: dict[Triple, float] = {}
        for c in direct:
            key = (table.name(c.subject), c.predicate, table.name(c.object))
            found[key] = max(found.get(key, 0.0), c.confidence)
        labels: dict[Hashable, str] = {name: span.label_ for name, span in first.items()}
        inferred = []
        for (x, predicate, z), (confidence, source, _) in infer_relations(
            found, labels, self.model.predicates.inference
        ).items():
            subject, obj = first[str(x)], first[str(z)]
            bounds = [table.sentence_of(s.start) for s in (subject, obj, first[str(source[2])])]
            start, end = min(s for s, _ in bounds), max(e for _, e in bounds)
            inferred.append(
                RelationCandidate(
                    subject, predicate, obj, doc[start:end], INFERRED_RULE, confidence
                )
            )
        for c in inferred:
            found[(table.name(c.subject), c.predicate, table.name(c.object))] = c.confidence
        document = self._document(table, scored, spans, found) if self.document else []
        return sorted(
            direct + inferred + document + self._implied(table, direct + inferred + document),
            key=lambda c: (c.sentence.start, c.subject.start, c.object.start),
        )

    def _implied(
        self, table: TokenTable, candidates: Sequence[RelationCandidate]
    ) -> list[RelationCandidate]:
        """What the implications add to ``candidates`` (rule id ``learned/inferred``, the
        evidence of the triple each comes from)."""
        by_triple: dict[Triple, RelationCandidate] = {}
        for c in candidates:
            by_triple.setdefault((table.name(c.subject), c.predicate, table.name(c.object)), c)
        found = {triple: c.confidence for triple, c in by_triple.items()}
        countries = {y for _, _, y in found if y in self.countries}
        out = []
        for (_, predicate, _), (confidence, source) in implied_relations(
            found, countries, self.model.predicates.inference
        ).items():
            c = by_triple[source]
            out.append(
                RelationCandidate(
                    c.subject, predicate, c.object, c.sentence, INFERRED_RULE, confidence
                )
            )
        return out

    def _document(
        self,
        table: TokenTable,
        scored: Sequence[ScoredPair],
        spans: Sequence[Span],
        found: Mapping[Triple, float],
    ) -> list[RelationCandidate]:
        """The document stage: every ordered pair of the doc's entities (by text) whose labels
        it scores; a relation fires at its class threshold unless already ``found`` (a pair
        may have two: Re-DocRED gives a state both ``located_in`` and ``country`` Germany). Evidence:
        the sentence of the tail's mention nearest a head mention (a Wikipedia abstract or a
        memory names its subject once and states its country later)."""
        model = self.document
        assert model is not None
        entities = table_document_entities(table, spans)
        pairs = [
            (h, t)
            for h in entities
            for t in entities
            if h.key != t.key and f"{h.label}|{t.label}" in model.type_pairs
        ]
        if not pairs:
            return []
        layout = self.model.first_stage_layout
        maxima = layout.maxima(
            [(table.name(p.first), table.name(p.second)) for p in scored],
            np.array([p.probabilities for p in scored]).reshape(
                len(scored), len(self.model.classes)
            ),
        )
        unseen = np.zeros(len(layout.predicates))
        facts = DocumentFacts.of(entities, model.countries)
        probs = model.pair_probabilities(
            [pair_shape(h, t, facts, model.countries) for h, t in pairs],
            np.array([maxima.get((h.key, t.key), unseen) for h, t in pairs]),
            layout.predicates,
        )
        passing = probs >= model.thresholds
        passing[:, 0] = False  # NA
        symmetric = self.model.predicates.symmetric_predicates()
        sentence_of = table.sentence_of
        out = []
        for row in np.flatnonzero(passing.any(axis=1)).tolist():
            (head, tail), p = pairs[row], probs[row]
            classes = np.flatnonzero(passing[row])
            best = int(classes[np.argmax(p[classes])])
            predicate = model.classes[best]
            if predicate in symmetric and str(head.key) > str(tail.key):
                head, tail = tail, head
            if (head.key, predicate, tail.key) in found:
                continue
            if not plausible_value(predicate, tail.mentions[0]):
                continue
            subject, obj = min(
                ((h, t) for h in head.mentions for t in tail.mentions),
                key=lambda ht: (
                    abs(sentence_of(ht[0].start)[0] - sentence_of(ht[1].start)[0]),
                    ht[1].start,
                ),
            )
            evidence = table.doc[slice(*table.sentence_of(obj.start))]
            out.append(
                RelationCandidate(
                    subject, predicate, obj, evidence, DOCUMENT_RULE, round(float(p[best]), 4)
                )
            )
        return out

    def _direct(self, table: TokenTable, scored: Sequence[ScoredPair]) -> list[RelationCandidate]:
        model = self.model
        out = []
        doc = table.doc
        for pair in scored:
            passing = np.where(pair.probabilities >= model.thresholds)[0]
            passing = passing[passing > 0]
            if not len(passing):
                continue
            sentence = doc[slice(*table.sentence_of(pair.first.start))]
            path = path_between(table, table.root(pair.first), table.root(pair.second))
            if is_blocked(self.filters, sentence, [doc[i] for i in path]):
                continue
            best = int(passing[np.argmax(pair.probabilities[passing])])
            label = model.classes[best]
            subject, obj = (
                (pair.first, pair.second) if label[-1] == ">" else (pair.second, pair.first)
            )
            if not plausible_value(label[:-1], obj):
                continue
            out.append(
                RelationCandidate(
                    subject,
                    label[:-1],
                    obj,
                    sentence,
                    LEARNED_RULE,
                    round(float(pair.probabilities[best]), 4),
                )
            )
        return out


class CombinedRelationSource:
    """The rules, the agent model and the learned model on the same doc; a rule match wins
    for its pair, then the agent model's.

    A pair is the two mention spans, in either order: when any rule relates them, the models'
    guesses for them are dropped (and the encyclopaedia model's when the agent model relates
    them); a document-stage relation is dropped when a rule relates any mentions of its two
    entities.
    """

    def __init__(
        self,
        rules: Any,
        learned: LearnedRelationExtractor | None,
        agent: AgentRelationExtractor | None = None,
    ) -> None:
        self.rules = rules
        self.learned = learned
        self.agent = agent

    def extract(
        self, doc: Doc, entities: Sequence[Span] | None = None, speaker: Span | None = None
    ) -> list[RelationCandidate]:
        """Rule candidates, then learned ones for the pairs no rule relates.

        ``speaker`` (the entity "I" stands for in a conversation turn) reaches the rules only.
        """
        found = list(self.rules.extract(doc, entities, speaker=speaker))
        taken = {
            frozenset(((c.subject.start, c.subject.end), (c.object.start, c.object.end)))
            for c in found
        }
        for cand in self.agent.extract(doc, entities) if self.agent else ():
            key = frozenset(
                ((cand.subject.start, cand.subject.end), (cand.object.start, cand.object.end))
            )
            if key not in taken:
                found.append(cand)
        taken |= {
            frozenset(((c.subject.start, c.subject.end), (c.object.start, c.object.end)))
            for c in found
        }
        # The document stage relates entities, not mention pairs: a rule on any of their
        # mentions wins.
        named = {frozenset((c.subject.text.lower(), c.object.text.lower())) for c in found}
        for cand in self.learned.extract(doc, entities) if self.learned else ():
            key = frozenset(
                ((cand.subject.start, cand.subject.end), (cand.object.start, cand.object.end))
            )
            names = frozenset((cand.subject.text.lower(), cand.object.text.lower()))
            if key not in taken and not (cand.rule == DOCUMENT_RULE and names in named):
                found.append(cand)
        return found


def default_relation_source(nlp: Language) -> RelationExtractor | CombinedRelationSource:
    """What graphmem extracts typed relations with: the rules, plus the learned model unless
    the environment variable ``GRAPHMEM_LEARNED_RELATIONS`` is ``"0"`` (its document stage
    too unless ``GRAPHMEM_LEARNED_DOCUMENT`` is ``"0"``).

    Example:
        >>> import spacy
        >>> type(default_relation_source(spacy.blank("en"))).__name__
        'CombinedRelationSource'
    """
    rules = RelationExtractor(nlp)
    agent_model = load_agent_model() if agent_model_enabled() else None
    agent = (
        AgentRelationExtractor(agent_model, rules.rules, rules.role_name, rules.role_words)
        if agent_model is not None
        else None
    )
    learned = None
    if os.environ.get(SWITCH_VARIABLE, "1") != "0":
        document_stage = os.environ.get(DOCUMENT_SWITCH_VARIABLE, "1") != "0"
        learned = LearnedRelationExtractor(rules=rules.rules, document_stage=document_stage)
    if learned is None and agent is None:
        return rules
    return CombinedRelationSource(rules, learned, agent)
