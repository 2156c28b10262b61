"""The agent-text relation model: typed relations of entity pairs in what agents write,
learned from the agent corpus (``tests/data/agent_corpus``, ``scripts/train_agent_relations.py``).

A multinomial logistic regression over :func:`agent_pair_features` of two entity spans of
one sentence: the first stage's parse features (:func:`~.features.pair_features`: dependency
path, words between, labels, distance) and the words and punctuation around each span
("ex-Rakuza", "Sr PM @ Kintsugi Pay", "(Head of Data, Arktos Bank)"). Its classes are the
public predicates read in one direction (``works_at>``: the first span is the subject) and
``role``, a role held at an organisation, whose name is read from the title words the two
spans are linked through (``head_of_data`` -> ``head_of_data_of``). Forbidden readings
(negated, hedged, planned...) were trained as no relation, and the rules' filters apply too.

Files (data, hashed in ``models/learned_relations_manifest.json``):
``models/agent_relations.json`` (features, classes, intercepts, thresholds) and
``models/agent_relations.npy`` (weights). Without them the model is off.

Example:
    >>> AGENT_CLASSES[0], "works_at>" in AGENT_CLASSES, "met<" in AGENT_CLASSES
    ('NA', True, False)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from spacy.tokens import Doc, Span, Token

from ..relations import RelationCandidate, RelationRules, is_blocked, is_past
from ..relations.coreference import pronoun_antecedents
from ..token_table import TokenTable
from .features import path_between, table_mention_pairs, table_pair_features
from .files import (
    NO_RELATION,
    LearnedModelError,
    model_dir,
    parse_predicate_map,
    read_linear,
    read_manifest,
)
from .model import LearnedModel

__all__ = [
    "AGENT_CLASSES",
    "AGENT_PREDICATES",
    "AGENT_FILES",
    "AGENT_RULE",
    "AGENT_SWITCH_VARIABLE",
    "ROLE_CLASS",
    "AgentCandidate",
    "AgentRelationExtractor",
    "agent_candidates",
    "agent_pair_features",
    "load_agent_model",
]

#: The public predicates the model types (models/relation_rules.json), besides roles.
AGENT_PREDICATES = (
    "works_at",
    "left",
    "lives_in",
    "met",
    "hired",
    "founded",
    "located_in",
    "acquired",
    "manages",
    "reports_to",
    "born_in",
    "studied_at",
    "partnered_with",
    "visited",
    "signed_with",
    "married",
)
#: Read the same both ways: one class, ``>``.
_SYMMETRIC = frozenset({"met", "partnered_with", "married"})
#: The class of "a role held at an organisation" (``{role}_of``, named from the text).
ROLE_CLASS = "role"
AGENT_CLASSES: tuple[str, ...] = (
    NO_RELATION,
    *(
        f"{p}{d}"
        for p in (*AGENT_PREDICATES, ROLE_CLASS)
        for d in (">", "<")
        if not (p in _SYMMETRIC and d == "<")
    ),
)
#: The model's files in ``models/``.
AGENT_FILES = ("agent_relations.json", "agent_relations.npy")
#: The rule id of the model's relations in their evidence.
AGENT_RULE = "learned/agent"
#: Set to "0" to run without the agent model.
AGENT_SWITCH_VARIABLE = "GRAPHMEM_AGENT_RELATIONS"
#: Words read on each side of a span.
_WINDOW = 2


def agent_pair_features(table: TokenTable, a: Span, b: Span, between: int) -> list[str]:
    """Features of the span pair ``a``, ``b`` (``a`` first, same sentence): the parse
    features of :func:`~.features.pair_features` and the words and punctuation around each
    span and between them.

    Example:
        >>> import spacy
        >>> from spacy.tokens import Doc, Span
        >>> doc = Doc(spacy.blank("en").vocab, words=["ex", "-", "Rakuza", ";", "Tokyo"],
        ...           heads=[0, 0, 0, 0, 0], deps=["ROOT", "punct", "dep", "punct", "dep"],
        ...           lemmas=["ex", "-", "Rakuza", ";", "Tokyo"])
        >>> table = TokenTable.of(doc)
        >>> features = agent_pair_features(table, Span(doc, 2, 3, "ORG"),
        ...                                Span(doc, 4, 5, "GPE"), 0)
        >>> "a-2=ex" in features and "punct=;" in features
        True
    """
    lemmas = table.lemmas
    start, end = table.sentence_of(a.start)
    out = table_pair_features(table, a, b, between)
    for name, span in (("a", a), ("b", b)):
        for k in range(1, _WINDOW + 1):
            i, j = span.start - k, span.end - 1 + k
            out.append(f"{name}-{k}={lemmas[i].lower() if i >= start else '<s>'}")
            out.append(f"{name}+{k}={lemmas[j].lower() if j < end else '</s>'}")
    marks = "".join(table.punct[a.end : b.start])[:6]
    out.append(f"punct={marks}")
    if "\n" in table.chars(a.start, b.start):
        out.append("newline_between")
    return out


@dataclass(frozen=True)
class AgentCandidate:
    """Two spans of one sentence the model reads (``first`` starts first), and the entity
    span each stands for: itself, or for a pronoun ("*She* left Acme") its antecedent, or
    for a sentence that names no person ("Currently Sr PM @ Kintsugi Pay") the person named
    last before it, read at the sentence's root (``kind``: ``name``, ``pronoun``,
    ``implicit``)."""

    first: Span
    second: Span
    between: int
    first_entity: Span
    second_entity: Span
    kind: str

    def features(self, table: TokenTable) -> list[str]:
        """:func:`agent_pair_features`, and the kind of stand-in (with the labels)."""
        a, b = self.first, self.second
        return [
            *agent_pair_features(table, a, b, self.between),
            f"kind={self.kind}",
            f"kind_types={self.kind}|{a.label_}|{b.label_}",
        ]


def agent_candidates(table: TokenTable, spans: Sequence[Span]) -> list[AgentCandidate]:
    """The span pairs the model scores: entity spans of one sentence, and pairs with a
    stand-in for an entity of another sentence (:class:`AgentCandidate`), in text order.

    Example:
        >>> import spacy
        >>> from spacy.tokens import Span
        >>> doc = spacy.blank("en")("Ana Silva called . She left Acme .")
        >>> doc[3].is_sent_start = True
        >>> ana, acme = Span(doc, 0, 2, "PERSON"), Span(doc, 6, 7, "ORG")
        >>> [(c.first.text, c.first_entity.text, c.second.text, c.kind)
        ...  for c in agent_candidates(TokenTable.of(doc), [ana, acme])]
        [('She', 'Ana Silva', 'Acme', 'pronoun')]
    """
    doc = table.doc
    stands: dict[tuple[int, int], tuple[Span, str]] = {}
    for i, entity in pronoun_antecedents(doc, spans).items():
        stands[(i, i + 1)] = (entity, "pronoun")
    covered = {i for s in spans for i in range(s.start, s.end)}
    last_person: Span | None = None
    for sent in doc.sents:
        named = [s for s in spans if sent.start <= s.start < sent.end]
        has_person = any(s.label_ == "PERSON" for s in named) or any(
            sent.start <= i < sent.end and e.label_ == "PERSON" for (i, _), (e, _) in stands.items()
        )
        root = sent.root.i
        if named and not has_person and last_person is not None and root not in covered:
            stands.setdefault((root, root + 1), (last_person, "implicit"))
        for s in named:
            if s.label_ == "PERSON":
                last_person = s
    extra = [Span(doc, i, j, label=stands[(i, j)][0].label_) for i, j in stands]
    out = []
    for a, b, between in table_mention_pairs(table, [*spans, *extra]):
        ea, ka = stands.get((a.start, a.end), (a, "name"))
        eb, kb = stands.get((b.start, b.end), (b, "name"))
        if ka != "name" and kb != "name" or table.name(ea) == table.name(eb):
            continue
        out.append(AgentCandidate(a, b, between, ea, eb, kb if ka == "name" else ka))
    return out


def load_agent_model(directory: Path | str | None = None) -> LearnedModel | None:
    """The agent model of ``directory`` (default: bundled ``models/``), hashes checked;
    ``None`` when its files are not there.

    Raises:
        LearnedModelError: a file is altered or malformed.
    """
    return _load_agent_model(model_dir(directory))


@lru_cache(maxsize=4)
def _load_agent_model(directory: Path) -> LearnedModel | None:
    if not all((directory / name).exists() for name in AGENT_FILES):
        return None
    predicates = parse_predicate_map(
        {
            "predicates": {p: {"description": p} for p in (*AGENT_PREDICATES, ROLE_CLASS)},
            "properties": {},
            "inference": {"compose": [], "propagate": [], "imply": []},
        },
        "agent predicates",
    )
    files = read_linear(directory, read_manifest(directory), *AGENT_FILES, predicates, True)
    if files.classes != AGENT_CLASSES:
        raise LearnedModelError(f"{directory / AGENT_FILES[0]}: unexpected classes")
    return LearnedModel.of(files, predicates)


#: Names a role from its title token and the spans by token (the rules' title reading).
RoleNamer = Callable[[Token, dict[int, Span]], str]


class AgentRelationExtractor:
    """Typed relations of a parsed doc from the agent model, with the rules' filters.

    ``role_name`` names a role from its title token (the rules' own title reading) and
    ``role_words`` are the words a title is made of.
    """

    def __init__(
        self,
        model: LearnedModel,
        filters: RelationRules,
        role_name: RoleNamer,
        role_words: frozenset[str],
    ) -> None:
        self.model = model
        self.filters = filters
        self.role_name = role_name
        self.role_words = role_words

    def extract(self, doc: Doc, entities: Sequence[Span] | None = None) -> list[RelationCandidate]:
        """The relations whose probability reaches their class threshold (best class per
        candidate; confidence = probability), between the entities the candidates stand for."""
        spans = list(doc.ents if entities is None else entities)
        if len(spans) < 2 or not doc.has_annotation("DEP"):
            return []
        table = TokenTable.of(doc)
        candidates = agent_candidates(table, spans)
        if not candidates:
            return []
        model = self.model
        features = [list(dict.fromkeys(c.features(table))) for c in candidates]
        probs = 1.0 / (1.0 + np.exp(-model.scores(features)))  # one vs the rest
        by_token = {i: s for s in spans for i in range(s.start, s.end)}
        out = []
        for c, p in zip(candidates, probs, strict=True):
            for label, confidence in self._fired(p):
                found = self._candidate(table, c, label, confidence, by_token)
                if found is not None:
                    out.append(found)
        return out

    def _fired(self, p: np.ndarray) -> list[tuple[str, float]]:
        """The classes whose score reaches their threshold; of a predicate read both ways,
        the stronger direction."""
        model = self.model
        best: dict[str, tuple[str, float]] = {}
        for j in np.nonzero(p >= model.thresholds)[0]:
            if j == 0:
                continue
            label = model.classes[j]
            if label[:-1] not in best or p[j] > best[label[:-1]][1]:
                best[label[:-1]] = (label, float(p[j]))
        return list(best.values())

    def _candidate(
        self,
        table: TokenTable,
        c: AgentCandidate,
        label: str,
        confidence: float,
        by_token: dict[int, Span],
    ) -> RelationCandidate | None:
        """The relation ``label`` reads between the entities ``c`` stands for (None: the
        rules' filters block it, or a role whose title is not found)."""
        doc = table.doc
        a, b = c.first, c.second
        start, end = table.sentence_of(a.start)
        path = [doc[i] for i in path_between(table, table.root(a), table.root(b))]
        past = is_past(self.filters, path)
        if is_blocked(self.filters, doc[start:end], path, past_ok=past):
            return None
        if _through_another(path, c, by_token):
            return None
        predicate = label[:-1]
        if predicate == ROLE_CLASS:
            title = self._title(path, by_token)
            if title is None:
                return None
            predicate = f"{self.role_name(title, by_token)}_of"
        subject, obj = (
            (c.first_entity, c.second_entity)
            if label[-1] == ">"
            else (c.second_entity, c.first_entity)
        )
        start = min(start, table.sentence_of(subject.start)[0], table.sentence_of(obj.start)[0])
        return RelationCandidate(
            subject, predicate, obj, doc[start:end], AGENT_RULE, round(confidence, 4), past
        )

    def _title(self, path: Sequence[Token], by_token: dict[int, Span]) -> Token | None:
        """The title noun a role pair is linked through: the first word on the path that is
        a title word, else its first common noun outside every name."""
        outside = [t for t in path if t.i not in by_token]
        for token in outside:
            if token.lower_ in self.role_words and token.pos_ in ("NOUN", "PROPN"):
                return token
        return next((t for t in outside if t.pos_ == "NOUN"), None)


def _through_another(path: Sequence[Token], c: AgentCandidate, by_token: dict[int, Span]) -> bool:
    """Whether the dependency path between the pair runs through a third entity that is no
    conjunct of an end: that entity is what the words relate ("Nadia Ali, the CEO of *Hooli*,
    was born in *Cairo*": Nadia Ali was, not Hooli), unlike "Ana and Tomas joined Acme"."""
    ends = {c.first_entity.start, c.second_entity.start, c.first.start, c.second.start}
    for token in path:
        other = by_token.get(token.i)
        if other is None or other.start in ends:
            continue
        if other.root.dep_ != "conj":
            return True
    return False


def agent_model_enabled() -> bool:
    """Whether ``GRAPHMEM_AGENT_RELATIONS`` leaves the agent model on (default: on)."""
    return os.environ.get(AGENT_SWITCH_VARIABLE, "1") != "0"
