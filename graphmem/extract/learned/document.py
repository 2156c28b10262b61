"""The document stage's view of a text: its entities (mentions grouped by text), the shape
of an ordered entity pair, and the first stage's best probability per predicate and pair.

Example:
    >>> first_stage_features({"country": 0.71234})
    {'s1=country': 0.7123, 's1max': 0.7123}
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np
from spacy.tokens import Span

from ..token_table import TokenTable


@dataclass(frozen=True)
class DocumentEntity:
    """One entity of a document for the document stage: its label, its mentions in text
    order, and the index of the sentence of each mention."""

    key: Hashable
    label: str
    mentions: tuple[Span, ...]
    sentences: tuple[int, ...]

    @cached_property
    def names(self) -> frozenset[str]:
        """Its mentions' texts, lowercased."""
        return frozenset(m.text.lower() for m in self.mentions)

    @cached_property
    def sentence_set(self) -> frozenset[int]:
        """The sentences it is mentioned in."""
        return frozenset(self.sentences)


def document_entities(spans: Sequence[Span]) -> list[DocumentEntity]:
    """The entities of a doc, its mentions told apart by their lowercased text (as the
    inference rules do; the entity index resolves aliases later), in order of first mention.

    Example:
        >>> import spacy
        >>> from spacy.tokens import Span
        >>> nlp = spacy.blank("en"); nlp.add_pipe("sentencizer")
        <spacy.pipeline.sentencizer.Sentencizer object at ...>
        >>> doc = nlp("Ulm is a town. Ulm is in Germany.")
        >>> ents = document_entities([Span(doc, 0, 1, "GPE"), Span(doc, 5, 6, "GPE"),
        ...                           Span(doc, 8, 9, "GPE")])
        >>> [(e.key, e.sentences) for e in ents]
        [('ulm', (0, 1)), ('germany', (1,))]
    """
    return table_document_entities(TokenTable.of(spans[0].doc), spans) if spans else []


def table_document_entities(table: TokenTable, spans: Sequence[Span]) -> list[DocumentEntity]:
    grouped: dict[str, list[Span]] = {}
    for span in sorted(spans, key=lambda s: (s.start, s.end)):
        grouped.setdefault(table.name(span), []).append(span)
    number = table.sentence_number
    return [
        DocumentEntity(key, group[0].label_, tuple(group), tuple(number(m.start) for m in group))
        for key, group in grouped.items()
    ]


def _sentence_bucket(distance: int) -> str:
    return str(distance) if distance < 3 else "3-5" if distance <= 5 else "6+"


@dataclass(frozen=True)
class DocumentFacts:
    """What the document stage's features read of the whole document: how many entities are
    named as a country, the most mentions one of them has, and the first-named entity."""

    countries: int
    top_country_mentions: int | None
    first: Hashable | None

    @classmethod
    def of(cls, entities: Sequence[DocumentEntity], countries: frozenset[str]) -> DocumentFacts:
        named = [len(e.mentions) for e in entities if e.names & countries]
        return cls(len(named), max(named, default=None), entities[0].key if entities else None)


class PairShape(NamedTuple):
    """All that the document stage's binary features say of an ordered entity pair
    (:func:`pair_shape_features`); many pairs of many documents share one."""

    head_label: str
    tail_label: str
    #: Sentences both are mentioned in, at most 3.
    shared: int
    #: How many sentences apart their nearest mentions are (:func:`_sentence_bucket`).
    distance: str
    #: Whether the head is named before the tail.
    head_first: bool
    #: Mentions of each, at most 4.
    head_mentions: int
    tail_mentions: int
    #: When the tail is named as a country: how many entities are (at most 3), else None.
    countries: int | None
    #: Whether the tail is the most mentioned of the countries.
    tail_top_country: bool
    head_country: bool
    #: Whether the head (the tail) is the document's first-named entity.
    head_is_first: bool
    tail_is_first: bool


def pair_shape(
    head: DocumentEntity, tail: DocumentEntity, facts: DocumentFacts, countries: frozenset[str]
) -> PairShape:
    """The :class:`PairShape` of ``head``, ``tail`` in a document with ``facts``."""
    shared = len(head.sentence_set & tail.sentence_set)
    distance = (
        0 if shared else min(abs(a - b) for a in head.sentence_set for b in tail.sentence_set)
    )
    tail_country = bool(tail.names & countries)
    return PairShape(
        head.label,
        tail.label,
        min(shared, 3),
        _sentence_bucket(distance),
        head.mentions[0].start < tail.mentions[0].start,
        min(len(head.mentions), 4),
        min(len(tail.mentions), 4),
        min(facts.countries, 3) if tail_country else None,
        tail_country and len(tail.mentions) == facts.top_country_mentions,
        bool(head.names & countries),
        head.key == facts.first,
        tail.key == facts.first,
    )


def pair_shape_features(shape: PairShape) -> list[str]:
    """The binary features of a pair of that shape: both labels, the sentences they share
    and how far apart they are, whether either is a country name and how many countries the
    document names, whether either is its first-named entity (an abstract, or a memory, is
    often about one subject), mention counts.

    Example:
        >>> shape = PairShape("GPE", "GPE", 0, "1", True, 1, 1, 1, True, False, True, False)
        >>> pair_shape_features(shape)[:4]
        ['types=GPE|GPE', 'shared=0', 'tshared=GPE|GPE|0', 'sdist=1']
    """
    head, types = shape.head_label, f"{shape.head_label}|{shape.tail_label}"
    names = [
        f"types={types}",
        f"shared={shape.shared}",
        f"tshared={types}|{shape.shared}",
        f"sdist={shape.distance}",
        f"tsdist={types}|{shape.distance}",
        f"order={types}|{shape.head_first}",
        f"hment={shape.head_mentions}",
        f"tment={shape.tail_mentions}",
    ]
    if shape.countries is not None:
        names += [
            f"tcountry={head}",
            f"tcountry_n={head}|{shape.countries}",
            f"tcountry_sdist={head}|{shape.distance}",
            f"tcountry_top={head}|{shape.tail_top_country}",
        ]
        if shape.head_is_first:
            names.append(f"tcountry_hfirst={head}|{shape.countries}")
    if shape.head_country:
        names.append(f"hcountry={shape.tail_label}")
    if shape.head_is_first:
        names.append(f"hfirst={types}")
    if shape.tail_is_first:
        names.append(f"tfirst={types}")
    return names


#: First-stage probabilities below this are no feature of the document stage.
MIN_FIRST_STAGE = 0.01


def first_stage_features(first_stage: Mapping[str, float]) -> dict[str, float]:
    """The document stage's features of the first stage's best probability per predicate
    read head -> tail: ``s1=<predicate>`` (from :data:`MIN_FIRST_STAGE`) and ``s1max``.

    Example:
        >>> first_stage_features({"country": 0.71234, "born_in": 0.001})
        {'s1=country': 0.7123, 's1max': 0.7123}
    """
    features = {
        f"s1={predicate}": round(float(probability), 4)
        for predicate, probability in first_stage.items()
        if probability >= MIN_FIRST_STAGE
    }
    if first_stage:
        features["s1max"] = round(float(max(first_stage.values())), 4)
    return features


def document_pair_features(
    head: DocumentEntity,
    tail: DocumentEntity,
    entities: Sequence[DocumentEntity],
    countries: frozenset[str],
    first_stage: Mapping[str, float],
) -> dict[str, float]:
    """Features of the ordered entity pair ``head``, ``tail`` of one document: those of its
    shape (:func:`pair_shape_features`), then the first stage's best probability per
    predicate read head -> tail (``first_stage``, :func:`first_stage_features`).

    Example:
        >>> import spacy
        >>> from spacy.tokens import Span
        >>> nlp = spacy.blank("en"); nlp.add_pipe("sentencizer")
        <spacy.pipeline.sentencizer.Sentencizer object at ...>
        >>> doc = nlp("Ulm is a town. It is in Germany.")
        >>> ulm, de = document_entities([Span(doc, 0, 1, "GPE"), Span(doc, 8, 9, "GPE")])
        >>> f = document_pair_features(ulm, de, [ulm, de], frozenset({"germany"}), {})
        >>> f["tcountry_n=GPE|1"], f["sdist=1"], f["hfirst=GPE|GPE"]
        (1.0, 1.0, 1.0)
    """
    shape = pair_shape(head, tail, DocumentFacts.of(entities, countries), countries)
    features = dict.fromkeys(pair_shape_features(shape), 1.0)
    features.update(first_stage_features(first_stage))
    return features


@dataclass(frozen=True)
class FirstStageLayout:
    """Where each predicate's probability read head -> tail sits among the first stage's
    classes: the class ``p>`` of the pair (head, tail) or ``p<`` of the pair (tail, head)
    (both for a symmetric predicate). Column ``len(classes)`` stands for "no such class"
    (probability 0); a symmetric predicate with two classes takes the larger."""

    predicates: tuple[str, ...]
    #: Per predicate, its column in the probabilities of a mention pair (first, second) read
    #: first -> second; ``forward_also``: a second such column (else the same again).
    forward: np.ndarray
    forward_also: np.ndarray
    #: The same, read second -> first.
    backward: np.ndarray
    backward_also: np.ndarray

    @classmethod
    def of(cls, classes: Sequence[str], symmetric: frozenset[str]) -> FirstStageLayout:
        predicates = tuple(dict.fromkeys(label[:-1] for label in classes[1:]))
        columns: dict[tuple[str, bool], list[int]] = {}
        for j, label in enumerate(classes[1:], start=1):
            predicate, forward = label[:-1], label[-1] == ">"
            for direction in (True, False) if predicate in symmetric else (forward,):
                columns.setdefault((predicate, direction), []).append(j)
        none = len(classes)

        def column(direction: bool, n: int) -> np.ndarray:
            found = [columns.get((p, direction), [none]) for p in predicates]
            return np.array([c[min(n, len(c) - 1)] for c in found], dtype=np.intp)

        return cls(predicates, column(True, 0), column(True, 1), column(False, 0), column(False, 1))

    def maxima(
        self, rows: Sequence[tuple[Hashable, Hashable]], probabilities: np.ndarray
    ) -> dict[tuple[Hashable, Hashable], np.ndarray]:
        """Per ordered entity pair (head, tail), the best probability of each predicate read
        head -> tail (0 where no class reads it so) over the mention pairs ``rows`` (first
        entity, second entity) with their class probabilities."""
        kept = [(a, b) for a, b in rows if a != b]
        if not kept:
            return {}
        padded = np.hstack([probabilities, np.zeros((len(probabilities), 1))])
        keep = np.array([a != b for a, b in rows], dtype=bool)
        values = np.vstack(
            [
                np.maximum(padded[:, self.forward], padded[:, self.forward_also])[keep],
                np.maximum(padded[:, self.backward], padded[:, self.backward_also])[keep],
            ]
        )
        slots: dict[tuple[Hashable, Hashable], int] = {}
        targets = [slots.setdefault(pair, len(slots)) for pair in kept]
        targets += [slots.setdefault((b, a), len(slots)) for a, b in kept]
        order = np.argsort(targets, kind="stable")
        ordered = np.asarray(targets)[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        best = np.maximum.reduceat(values[order], starts, axis=0)
        by_slot = dict(zip(ordered[starts].tolist(), best, strict=True))
        return {pair: by_slot[slot] for pair, slot in slots.items()}


def first_stage_by_pair(
    rows: Sequence[tuple[Hashable, Hashable, np.ndarray]],
    classes: Sequence[str],
    symmetric: frozenset[str],
) -> dict[tuple[Hashable, Hashable], dict[str, float]]:
    """Per ordered entity pair ``(head, tail)``, the best first-stage probability of each
    predicate read head -> tail, from ``(first entity, second entity, class probabilities)``
    of the mention pairs (``p>``: the first mention is the subject).

    Example:
        >>> rows = [("ulm", "germany", np.array([0.2, 0.7, 0.1]))]
        >>> first_stage_by_pair(rows, ["NA", "country>", "country<"], frozenset())
        {('ulm', 'germany'): {'country': 0.7}, ('germany', 'ulm'): {'country': 0.1}}
    """
    layout = FirstStageLayout.of(classes, symmetric)
    none = len(classes)
    probabilities = np.array([probs for _, _, probs in rows]).reshape(len(rows), none)
    maxima = layout.maxima([(a, b) for a, b, _ in rows], probabilities)
    # A predicate reads head -> tail when a mention pair gave it a class that way round.
    reads: dict[tuple[Hashable, Hashable], np.ndarray] = {}
    for a, b, _ in rows:
        if a != b:
            for pair, first in (((a, b), layout.forward), ((b, a), layout.backward)):
                reads[pair] = reads.get(pair, np.zeros(len(first), bool)) | (first != none)
    return {
        pair: {
            p: float(v)
            for p, v, read in zip(layout.predicates, values.tolist(), reads[pair], strict=True)
            if read
        }
        for pair, values in maxima.items()
    }
