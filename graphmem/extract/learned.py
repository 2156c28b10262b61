"""Typed relations from a learned linear model, beside the dependency rules.

The model is a multinomial logistic regression over features of two entity mentions of one
sentence (:func:`pair_features`): the dependency path between their head tokens (labels,
direction and the lemmas on the way), the lemmas between them, their entity labels, distance,
order and head lemmas. Each class is a predicate read in one direction (``country>``: the first
mention is the subject; ``country<``: the second is) or ``NA``. A class fires when its
probability reaches its threshold, picked by cross-validation on the training documents
(``scripts/train_relations.py``, which reproduces the shipped files exactly). The rules'
filters apply to the path between the two mentions ("Alice does not work at Acme": nothing).
Then document-level rules (data too) add what follows from the model's relations of the same
text: "Pankow is in Berlin" + "Berlin is in Germany (country)" give Pankow ``country``
Germany (rule id ``learned/inferred``), and "Ulm is in Germany", Germany being a country name,
gives Ulm ``country`` Germany as well (:func:`implied_relations`).

In the graph a rule match wins for its pair (:class:`CombinedRelationSource`); learned
relations carry the rule id ``learned`` and their probability as confidence.

Files, all data (never pickle), hashed in ``models/learned_relations_manifest.json`` and checked
at load:

- ``models/learned_predicates.json``: the predicates and the Wikidata properties each stands
  for (the training labels);
- ``models/learned_relations.json``: feature names, classes, intercepts, thresholds;
- ``models/learned_relations.npy``: the weights, one row per feature, one column per class.

Example:
    >>> load_predicate_map().predicates["born_in"].functional
    True
    >>> load_predicate_map().properties["P112"]  # founded by: read as person "founded" org
    ('founded', True)
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Collection, Container, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc, Span, Token

from .._assets import asset_path
from ..errors import GraphmemError
from .relations import (
    PredicateInfo,
    RelationCandidate,
    RelationExtractor,
    RelationRules,
    is_blocked,
    load_relation_rules,
)
from .token_table import TokenTable

__all__ = [
    "DOCUMENT_RULE",
    "DocumentEntity",
    "DocumentModel",
    "INFERRED_RULE",
    "LEARNED_RULE",
    "InferenceRules",
    "NO_RELATION",
    "CombinedRelationSource",
    "LearnedModel",
    "LearnedModelError",
    "LearnedRelationExtractor",
    "PredicateMap",
    "default_relation_source",
    "document_entities",
    "document_pair_features",
    "load_document_model",
    "implied_relations",
    "infer_relations",
    "load_country_names",
    "load_learned_model",
    "load_predicate_map",
    "competing_mention",
    "mention_pairs",
    "pair_features",
    "plausible_value",
]

#: The rule id of learned relations in their evidence.
LEARNED_RULE = "learned"
#: The rule id of relations inferred from learned ones (``located_in`` + ``country``).
INFERRED_RULE = "learned/inferred"
#: The rule id of relations from the document stage (entity pairs of a whole text).
DOCUMENT_RULE = "learned/document"
#: The class of "no relation between these two mentions".
NO_RELATION = "NA"
#: Mentions further apart than this many tokens are not paired (few relations span more).
MAX_TOKEN_DISTANCE = 40
#: Dependency paths longer than this many edges are summarised as ``long``.
MAX_PATH_EDGES = 6

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

MODEL_FILES = (
    "learned_predicates.json",
    "learned_relations.json",
    "learned_relations.npy",
    "learned_document.json",
    "learned_document.npy",
    "country_names.json",
)
MANIFEST_FILE = "learned_relations_manifest.json"


class LearnedModelError(GraphmemError, ValueError):
    """A learned-model file is missing, altered (hash mismatch) or malformed."""


@dataclass(frozen=True)
class Propagation:
    """Give every entity with one of ``subject_labels`` and no ``predicate`` value the value
    most often found for ``predicate`` in the document, when found ``min_votes`` times."""

    predicate: str
    subject_labels: frozenset[str]
    min_votes: int


@dataclass(frozen=True)
class Implication:
    """A ``predicate`` triple implies an ``implies`` triple between the same two entities,
    only when the object is named as a country if ``object_is_country``: "Ulm located_in
    Germany" gives "Ulm country Germany" (Wikidata, and so Re-DocRED, states both)."""

    predicate: str
    implies: str
    object_is_country: bool


@dataclass(frozen=True)
class InferenceRules:
    """Document-level rules over the model's relations (the ``inference`` section of
    ``learned_predicates.json``): ``compose`` ``(p, q, r)`` reads "x p y and y q z give
    x r z"; then each :class:`Propagation` in order. Each :class:`Implication` applies last,
    to everything found in the text (:func:`implied_relations`)."""

    compose: tuple[tuple[str, str, str], ...]
    propagate: tuple[Propagation, ...]
    imply: tuple[Implication, ...] = ()


Triple = tuple[Hashable, str, Hashable]


def infer_relations(
    found: Mapping[Triple, float], labels: Mapping[Hashable, str], rules: InferenceRules
) -> dict[Triple, tuple[float, Triple, Triple | None]]:
    """New triples implied by ``found`` (entity ids -> confidence), each with its confidence
    and the one or two triples it comes from.

    Example:
        >>> rules = InferenceRules((("located_in", "country", "country"),), ())
        >>> found = {("Pankow", "located_in", "Berlin"): 0.9, ("Berlin", "country", "Germany"): 0.8}
        >>> infer_relations(found, {}, rules)
        {('Pankow', 'country', 'Germany'): (0.8, ('Pankow', 'located_in', 'Berlin'), ('Berlin', 'country', 'Germany'))}
    """
    known = dict(found)
    new: dict[Triple, tuple[float, Triple, Triple | None]] = {}
    for first, second, result in rules.compose:
        for (x, p, y), c1 in found.items():
            if p != first:
                continue
            for (y2, q, z), c2 in found.items():
                triple = (x, result, z)
                if q == second and y2 == y and z != x and triple not in known:
                    new[triple] = (min(c1, c2), (x, p, y), (y2, q, z))
                    known[triple] = min(c1, c2)
    for rule in rules.propagate:
        votes: dict[Hashable, list[Triple]] = {}
        for triple in known:
            if triple[1] == rule.predicate:
                votes.setdefault(triple[2], []).append(triple)
        if not votes:
            continue
        value, sources = max(votes.items(), key=lambda kv: len(kv[1]))
        if len(sources) < rule.min_votes:
            continue
        has_value = {x for x, p, _ in known if p == rule.predicate}
        confidence = min(known[t] for t in sources)
        for entity, label in labels.items():
            if label in rule.subject_labels and entity != value and entity not in has_value:
                new[(entity, rule.predicate, value)] = (confidence, sources[0], None)
    return new


def implied_relations(
    found: Mapping[Triple, float], countries: Collection[Hashable], rules: InferenceRules
) -> dict[Triple, tuple[float, Triple]]:
    """New triples the implications of ``rules`` give from ``found`` (entity ids ->
    confidence), each with its confidence and the triple it comes from; ``countries``: the
    ids of the entities named as a country.

    Example:
        >>> rules = InferenceRules((), (), (Implication("located_in", "country", True),))
        >>> found = {("Ulm", "located_in", "Germany"): 0.9, ("Ulm", "located_in", "Swabia"): 0.8}
        >>> implied_relations(found, {"Germany"}, rules)
        {('Ulm', 'country', 'Germany'): (0.9, ('Ulm', 'located_in', 'Germany'))}
    """
    new: dict[Triple, tuple[float, Triple]] = {}
    for rule in rules.imply:
        for (x, p, y), confidence in found.items():
            triple = (x, rule.implies, y)
            if (
                p == rule.predicate
                and (y in countries or not rule.object_is_country)
                and triple not in found
                and triple not in new
            ):
                new[triple] = (confidence, (x, p, y))
    return new


@dataclass(frozen=True)
class PredicateMap:
    """The learned predicates and, per Wikidata property, ``(predicate, inverse)``."""

    predicates: Mapping[str, PredicateInfo]
    properties: Mapping[str, tuple[str, bool]]
    inference: InferenceRules = field(default_factory=lambda: InferenceRules((), ()))

    def functional_predicates(self) -> frozenset[str]:
        """Predicates with one value at a time per subject, e.g. ``born_in``."""
        return frozenset(p.name for p in self.predicates.values() if p.functional)

    def symmetric_predicates(self) -> frozenset[str]:
        """Predicates that read the same both ways, e.g. ``married``."""
        return frozenset(p.name for p in self.predicates.values() if p.symmetric)


def parse_predicate_map(data: Any, source: str = "<predicates>") -> PredicateMap:
    """Validate the decoded ``learned_predicates.json``.

    Raises:
        LearnedModelError: naming ``source`` and the offending entry.
    """
    try:
        predicates = {
            name: PredicateInfo(
                name,
                functional=bool(spec.get("functional", False)),
                symmetric=bool(spec.get("symmetric", False)),
                description=str(spec.get("description", "")),
            )
            for name, spec in data["predicates"].items()
        }
        properties: dict[str, tuple[str, bool]] = {}
        for prop, (predicate, direction) in data["properties"].items():
            if predicate not in predicates or direction not in ("forward", "inverse"):
                raise LearnedModelError(f"{source}: property {prop!r}: bad mapping")
            properties[prop] = (predicate, direction == "inverse")
        raw = data.get("inference", {})
        inference = InferenceRules(
            tuple((str(p), str(q), str(r)) for p, q, r in raw.get("compose", [])),
            tuple(
                Propagation(
                    str(r["predicate"]), frozenset(r["subject_labels"]), int(r["min_votes"])
                )
                for r in raw.get("propagate", [])
            ),
            tuple(
                Implication(
                    str(r["predicate"]), str(r["implies"]), bool(r.get("object_is_country"))
                )
                for r in raw.get("imply", [])
            ),
        )
        used = {p for rule in inference.compose for p in rule}
        used |= {r.predicate for r in inference.propagate}
        used |= {p for r in inference.imply for p in (r.predicate, r.implies)}
        if used - set(predicates):
            raise LearnedModelError(
                f"{source}: inference uses undeclared {sorted(used - set(predicates))}"
            )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        if isinstance(exc, LearnedModelError):
            raise
        raise LearnedModelError(f"{source}: malformed predicate map ({exc!r})") from exc
    return PredicateMap(predicates, properties, inference)


def _read_verified(directory: Path, name: str, manifest: Mapping[str, str]) -> bytes:
    path = directory / name
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LearnedModelError(f"{path}: cannot read the learned model file ({exc})") from exc
    digest = hashlib.sha256(data).hexdigest()
    if manifest.get(name) != digest:
        raise LearnedModelError(
            f"{path}: SHA-256 {digest} does not match {MANIFEST_FILE} "
            f"({manifest.get(name, 'no entry')}); refusing to load an altered model"
        )
    return data


def _manifest(directory: Path) -> dict[str, str]:
    path = directory / MANIFEST_FILE
    try:
        files = json.loads(path.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise LearnedModelError(f"{path}: missing or malformed manifest ({exc!r})") from exc
    return {str(k): str(v) for k, v in files.items()}


def load_predicate_map(directory: Path | str | None = None) -> PredicateMap:
    """The predicate map of the model files in ``directory`` (default: bundled ``models/``)."""
    return _load_predicate_map(_model_dir(directory))


@lru_cache(maxsize=4)
def _load_predicate_map(directory: Path) -> PredicateMap:
    name = MODEL_FILES[0]
    raw = _read_verified(directory, name, _manifest(directory))
    return parse_predicate_map(json.loads(raw), str(directory / name))


def _model_dir(directory: Path | str | None) -> Path:
    if directory is None:
        return asset_path("models", MANIFEST_FILE).parent
    return Path(directory).resolve()


@dataclass(frozen=True)
class LearnedModel:
    """Weights and thresholds of the learned extractor (see :func:`load_learned_model`).

    ``classes[j]`` is ``NA`` or ``"<predicate>>"`` / ``"<predicate><"`` (first / second mention
    is the subject); ``weights[features[name], j]`` is the weight of a feature for class ``j``.
    """

    features: Mapping[str, int]
    classes: tuple[str, ...]
    weights: np.ndarray
    intercepts: np.ndarray
    thresholds: np.ndarray
    predicates: PredicateMap

    def probabilities(self, feature_lists: Sequence[Sequence[str]]) -> np.ndarray:
        """One row of class probabilities per feature list (unknown features are ignored).

        Example:
            >>> model = load_learned_model()
            >>> model.probabilities([["no such feature"]]).shape[0]
            1
        """
        scores = np.tile(self.intercepts, (len(feature_lists), 1))
        known = self.features
        rows: list[int] = []
        starts: list[int] = []
        index: list[int] = []
        for row, names in enumerate(feature_lists):
            found = [i for i in map(known.get, names) if i is not None]
            if found:
                rows.append(row)
                starts.append(len(index))
                index += found
        if rows:
            # Each row's features' weights summed in order (as ``weights[found].sum(axis=0)``).
            scores[rows] += np.add.reduceat(self.weights[index], starts, axis=0)
        return softmax(scores)

    @cached_property
    def first_stage_layout(self) -> FirstStageLayout:
        """Where each predicate read head -> tail sits among :attr:`classes`."""
        return FirstStageLayout.of(self.classes, self.predicates.symmetric_predicates())


def softmax(scores: np.ndarray) -> np.ndarray:
    """Row-wise softmax of linear class scores (shifted by each row's maximum for stability).

    Example:
        >>> softmax(np.array([[0.0, 0.0], [1000.0, 0.0]])).round(3).tolist()
        [[0.5, 0.5], [1.0, 0.0]]
    """
    shifted = scores - scores.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    probs: np.ndarray = exp / exp.sum(axis=1, keepdims=True)
    return probs


def load_learned_model(directory: Path | str | None = None) -> LearnedModel:
    """Load the model files of ``directory`` (default: bundled ``models/``), hashes checked.

    Raises:
        LearnedModelError: a file is missing, malformed or differs from the manifest.

    Example:
        >>> load_learned_model().classes[0]
        'NA'
    """
    return _load_model(_model_dir(directory))


@dataclass(frozen=True)
class _LinearFiles:
    """What both stages' files hold: the metadata JSON, features, classes and parameters."""

    meta: dict[str, Any]
    features: dict[str, int]
    classes: tuple[str, ...]
    weights: np.ndarray
    intercepts: np.ndarray
    thresholds: np.ndarray


def _read_linear(
    directory: Path,
    manifest: Mapping[str, str],
    meta_name: str,
    weights_name: str,
    predicates: PredicateMap,
    directional: bool,
) -> _LinearFiles:
    """Read and check one stage's metadata and weights (hashes, shapes, declared classes).

    ``directional`` classes end in ``>`` or ``<`` (which mention is the subject).
    """
    meta = json.loads(_read_verified(directory, meta_name, manifest))
    raw = _read_verified(directory, weights_name, manifest)
    try:
        weights = np.load(io.BytesIO(raw), allow_pickle=False).astype(np.float64)
        features = {name: i for i, name in enumerate(meta["features"])}
        classes = tuple(meta["classes"])
        intercepts = np.asarray(meta["intercepts"], dtype=np.float64)
        thresholds = np.asarray([meta["thresholds"][c] for c in classes], dtype=np.float64)
    except (KeyError, TypeError, ValueError) as exc:
        raise LearnedModelError(f"{directory / meta_name}: malformed model ({exc!r})") from exc
    if weights.shape != (len(features), len(classes)) or classes[0] != NO_RELATION:
        raise LearnedModelError(
            f"{directory / weights_name}: weights of shape {weights.shape} do not fit "
            f"{len(features)} features x {len(classes)} classes"
        )
    for label in classes[1:]:
        if (label.rstrip("<>") if directional else label) not in predicates.predicates:
            raise LearnedModelError(f"{directory / meta_name}: class {label!r} is not declared")
    return _LinearFiles(meta, features, classes, weights, intercepts, thresholds)


@lru_cache(maxsize=4)
def _load_model(directory: Path) -> LearnedModel:
    predicates = _load_predicate_map(directory)
    files = _read_linear(
        directory, _manifest(directory), MODEL_FILES[1], MODEL_FILES[2], predicates, True
    )
    return LearnedModel(
        files.features,
        files.classes,
        files.weights,
        files.intercepts,
        files.thresholds,
        predicates,
    )


# ---------------------------------------------------------------------------------- features
#
# Each feature reads a doc through a TokenTable (lemmas, labels and heads as lists, read once
# per doc): the public functions below build one for their doc; the extractor builds one per
# doc and shares it between all the pairs.


def dependency_path(a: Token, b: Token) -> tuple[str, str]:
    """The path from ``a`` up to the common ancestor and down to ``b``: ``(with lemmas,
    labels only)``.

    Example:
        >>> import spacy
        >>> from spacy.tokens import Doc
        >>> doc = Doc(spacy.blank("en").vocab, words=["Ann", "works", "at", "Acme"],
        ...           heads=[1, 1, 1, 2], deps=["nsubj", "ROOT", "prep", "pobj"],
        ...           lemmas=["Ann", "work", "at", "Acme"])
        >>> dependency_path(doc[0], doc[3])
        ('nsubj^ work prep_ at pobj_', 'nsubj^ prep_ pobj_')
    """
    return _dependency_path(TokenTable.of(a.doc), a.i, b.i)


def _dependency_path(table: TokenTable, a: int, b: int) -> tuple[str, str]:
    up, down = table.ancestors(a), table.ancestors(b)
    down_ids = {t: n for n, t in enumerate(down)}
    n_up = next((n for n, t in enumerate(up) if t in down_ids), None)
    if n_up is None:  # not one tree: a span across a sentence boundary
        return "none", "none"
    n_down = down_ids[up[n_up]]
    if n_up + n_down > MAX_PATH_EDGES:
        return "long", "long"
    deps, lemmas, heads = table.deps, table.lemmas, table.heads
    words: list[str] = []
    labels: list[str] = []
    for t in up[:n_up]:
        labels.append(f"{deps[t]}^")
        words += [f"{deps[t]}^", lemmas[heads[t]]]
    for t in reversed(down[:n_down]):
        labels.append(f"{deps[t]}_")
        words += [f"{deps[t]}_", lemmas[t]]
    if words:
        words.pop()  # b itself is named by its label, not its lemma
    return " ".join(words), " ".join(labels)


def path_tokens(a: Token, b: Token) -> list[Token]:
    """The tokens on the dependency path from ``a`` to ``b``, both ends excluded.

    Example:
        >>> import spacy
        >>> from spacy.tokens import Doc
        >>> doc = Doc(spacy.blank("en").vocab, words=["Ann", "works", "at", "Acme"],
        ...           heads=[1, 1, 1, 2], deps=["nsubj", "ROOT", "prep", "pobj"])
        >>> [t.text for t in path_tokens(doc[0], doc[3])]
        ['works', 'at']
    """
    return [a.doc[i] for i in _path_between(TokenTable.of(a.doc), a.i, b.i)]


def _path_between(table: TokenTable, a: int, b: int) -> list[int]:
    """The indices of :func:`path_tokens`, in text order."""
    up, down = table.ancestors(a), table.ancestors(b)
    down_ids = set(down)
    n_up = next((n for n, t in enumerate(up) if t in down_ids), len(up))
    common = up[n_up] if n_up < len(up) else None
    n_down = next((n for n, t in enumerate(down) if t == common), len(down))
    inner = up[1 : n_up + 1] + down[1:n_down]
    return sorted(t for t in inner if t not in (a, b))


def _bucket(distance: int) -> str:
    for limit, name in ((0, "0"), (1, "1"), (2, "2"), (5, "3-5"), (10, "6-10"), (20, "11-20")):
        if distance <= limit:
            return name
    return "21+"


def pair_features(a: Span, b: Span, entities_between: int = 0) -> list[str]:
    """Feature names of the mention pair ``a``, ``b`` (``a`` starts first, same sentence).

    Example:
        >>> import spacy
        >>> from spacy.tokens import Doc, Span
        >>> doc = Doc(spacy.blank("en").vocab, words=["Ann", "works", "at", "Acme"],
        ...           heads=[1, 1, 1, 2], deps=["nsubj", "ROOT", "prep", "pobj"],
        ...           lemmas=["Ann", "work", "at", "Acme"])
        >>> features = pair_features(Span(doc, 0, 1, "PERSON"), Span(doc, 3, 4, "ORG"))
        >>> [f for f in features if f.startswith(("types=", "path="))]
        ['types=PERSON|ORG', 'path=nsubj^ work prep_ at pobj_']
    """
    return _pair_features(TokenTable.of(a.doc), a, b, entities_between)


def _pair_features(table: TokenTable, a: Span, b: Span, entities_between: int) -> list[str]:
    lemmas, deps, heads = table.lemmas, table.deps, table.heads
    types = f"{a.label_}|{b.label_}"
    root1, root2 = table.root(a), table.root(b)
    path, labels = _dependency_path(table, root1, root2)
    between = [lemmas[i] for i in range(a.end, b.start) if not table.spaces[i]]
    sentence_start, sentence_end = table.sentence_of(a.start)
    features = [
        f"types={types}",
        f"path={path}",
        f"tpath={types}|{path}",
        f"dpath={labels}",
        f"tdpath={types}|{labels}",
        f"dist={_bucket(len(between))}",
        f"tdist={types}|{_bucket(len(between))}",
        f"between_ents={min(entities_between, 3)}",
        f"head1={lemmas[root1]}",
        f"head2={lemmas[root2]}",
        f"gov1={deps[root1]}:{lemmas[heads[root1]]}",
        f"gov2={deps[root2]}:{lemmas[heads[root2]]}",
        f"before1={lemmas[a.start - 1] if a.start > sentence_start else '<s>'}",
        f"after2={lemmas[b.end] if b.end < sentence_end else '</s>'}",
    ]
    if len(between) <= 4:
        features.append(f"tbetween={types}|{' '.join(between)}")
    if len(between) <= 10:
        features += [f"bw={w}" for w in dict.fromkeys(between)]
    return features


#: Dependencies by which a word on the path between two mentions takes its own argument.
ARGUMENT_DEPS = frozenset({"nsubj", "nsubjpass", "dobj"})


def _nearness(table: TokenTable, x: Span, y: Span) -> tuple[int, int]:
    """How near ``x`` is to ``y``: dependency edges between their roots, then tokens between."""
    gap = y.start - x.end if x.start < y.start else x.start - y.end
    return len(_path_between(table, table.root(x), table.root(y))) + 1, gap


def competing_mention(a: Span, b: Span, roots: Mapping[int, Span]) -> Span | None:
    """Another mention, labelled like one end, that is the subject or object of a word on the
    dependency path between ``a`` and ``b`` and nearer the other end (dependency edges, then
    tokens): that word relates it, not the far end. "Priya met Tom Becker from Aurex": ``met``
    takes Tom Becker as its object, nearer Aurex than Priya, so Priya and Aurex are no
    candidate; "Lena is leaving for Harbor; Dana agreed": ``leaving`` has Lena as subject, so
    Dana and Harbor are none. ``roots``: root token index -> mention, for the doc's mentions.

    Example:
        >>> import spacy
        >>> from spacy.tokens import Doc, Span
        >>> doc = Doc(spacy.blank("en").vocab, words=["Ann", "met", "Bob", "from", "Acme"],
        ...           heads=[1, 1, 1, 1, 3], deps=["nsubj", "ROOT", "dobj", "prep", "pobj"])
        >>> ann, bob = Span(doc, 0, 1, "PERSON"), Span(doc, 2, 3, "PERSON")
        >>> acme = Span(doc, 4, 5, "ORG")
        >>> roots = {0: ann, 2: bob, 4: acme}
        >>> competing_mention(ann, acme, roots).text
        'Bob'
        >>> competing_mention(bob, acme, roots) is None
        True
    """
    return _competing_mention(TokenTable.of(a.doc), a, b, roots)


def _competing_mention(
    table: TokenTable, a: Span, b: Span, roots: Mapping[int, Span]
) -> Span | None:
    root1, root2 = table.root(a), table.root(b)
    inner = _path_between(table, root1, root2)
    on_path = {*inner, root1, root2}
    for token in inner:
        for child in table.children(token):
            other = roots.get(child)
            if other is None or table.deps[child] not in ARGUMENT_DEPS or child in on_path:
                continue
            if table.name(other) in (table.name(a), table.name(b)):
                continue
            for end, far in ((a, b), (b, a)):
                if other.label_ == end.label_ and _nearness(table, other, far) < _nearness(
                    table, end, far
                ):
                    return other
    return None


def mention_pairs(spans: Sequence[Span]) -> Iterator[tuple[Span, Span, int]]:
    """``(a, b, entities between)`` for each two non-overlapping spans of one sentence, ``a``
    first, at most :data:`MAX_TOKEN_DISTANCE` tokens apart, and no :func:`competing_mention`
    between them (with a parse); in text order."""
    if spans:
        yield from _mention_pairs(TokenTable.of(spans[0].doc), spans)


def _mention_pairs(table: TokenTable, spans: Sequence[Span]) -> Iterator[tuple[Span, Span, int]]:
    ordered = sorted(spans, key=lambda s: (s.start, s.end))
    parsed = table.doc.has_annotation("DEP")
    roots = {table.root(s): s for s in ordered} if parsed else {}
    for i, a in enumerate(ordered):
        sentence_end = table.sentence_of(a.start)[1]
        for j in range(i + 1, len(ordered)):
            b = ordered[j]
            if b.start - a.end > MAX_TOKEN_DISTANCE or b.end > sentence_end:
                break
            if b.start < a.end:
                continue  # overlapping or nested: not two things
            if parsed and _competing_mention(table, a, b, roots) is not None:
                continue
            between = sum(1 for s in ordered[i + 1 : j] if s.start >= a.end and s.end <= b.start)
            yield a, b, between


# ---------------------------------------------------------------------------------- document stage


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
    return _document_entities(TokenTable.of(spans[0].doc), spans) if spans else []


def _document_entities(table: TokenTable, spans: Sequence[Span]) -> list[DocumentEntity]:
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


@dataclass(frozen=True)
class DocumentModel:
    """The document stage: a multinomial logistic regression over entity pairs of a document
    (:func:`document_pair_features`). ``classes[0]`` is ``NA``, the others are predicates read
    head -> tail; ``type_pairs`` are the ``head|tail`` labels it scores (those seen related
    in training)."""

    features: Mapping[str, int]
    classes: tuple[str, ...]
    weights: np.ndarray
    intercepts: np.ndarray
    thresholds: np.ndarray
    type_pairs: frozenset[str]
    countries: frozenset[str]
    #: Class scores of each pair shape seen (the intercepts plus its features' weights).
    _shape_scores: dict[PairShape, np.ndarray] = field(
        default_factory=dict, compare=False, repr=False
    )

    def probabilities(self, rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        """One row of class probabilities per feature mapping (unknown features ignored).

        Example:
            >>> load_document_model().probabilities([{"no such feature": 1.0}]).shape[0]
            1
        """
        scores = np.tile(self.intercepts, (len(rows), 1))
        for row, values in enumerate(rows):
            for name, value in values.items():
                index = self.features.get(name)
                if index is not None:
                    scores[row] += value * self.weights[index]
        return softmax(scores)

    def pair_probabilities(
        self, shapes: Sequence[PairShape], first_stage: np.ndarray, predicates: Sequence[str]
    ) -> np.ndarray:
        """:meth:`probabilities` of the pairs of ``shapes`` whose first-stage probabilities
        are the rows of ``first_stage`` (a column per predicate of ``predicates``, 0 where the
        first stage has none; a row of zeros for a pair it never saw): the same sums, term by
        term in the same order, with each shape's part computed once."""
        scores = np.array([self._shape_score(shape) for shape in shapes])
        # The s1 features, as first_stage_features gives them, predicate by predicate.
        features = first_stage >= MIN_FIRST_STAGE
        for column in np.flatnonzero(features.any(axis=0)).tolist():
            index = self.features.get(f"s1={predicates[column]}")
            if index is not None:
                rows = np.flatnonzero(features[:, column])
                rounded = [round(v, 4) for v in first_stage[rows, column].tolist()]
                scores[rows] += np.array(rounded)[:, None] * self.weights[index]
        index = self.features.get("s1max")
        rows = np.flatnonzero(first_stage.any(axis=1))
        if len(rows) and index is not None:
            best = [round(v, 4) for v in first_stage[rows].max(axis=1).tolist()]
            scores[rows] += np.array(best)[:, None] * self.weights[index]
        return softmax(scores)

    def _shape_score(self, shape: PairShape) -> np.ndarray:
        score = self._shape_scores.get(shape)
        if score is None:
            score = self.intercepts.copy()
            for name in dict.fromkeys(pair_shape_features(shape)):
                index = self.features.get(name)
                if index is not None:
                    score += self.weights[index]
            if len(self._shape_scores) >= MAX_REMEMBERED_SHAPES:
                self._shape_scores.clear()
            self._shape_scores[shape] = score
        return score


#: Pair shapes whose class scores the document model remembers (about 300 bytes each).
MAX_REMEMBERED_SHAPES = 20_000


def load_document_model(directory: Path | str | None = None) -> DocumentModel:
    """The document stage's files of ``directory`` (default: bundled ``models/``), hashes
    checked.

    Raises:
        LearnedModelError: a file is missing, malformed or differs from the manifest.

    Example:
        >>> load_document_model().classes[0]
        'NA'
    """
    return _load_document_model(_model_dir(directory))


@lru_cache(maxsize=4)
def _load_document_model(directory: Path) -> DocumentModel:
    manifest = _manifest(directory)
    meta_name, weights_name = MODEL_FILES[3], MODEL_FILES[4]
    files = _read_linear(
        directory, manifest, meta_name, weights_name, _load_predicate_map(directory), False
    )
    try:
        type_pairs = frozenset(files.meta["type_pairs"])
    except (KeyError, TypeError, ValueError) as exc:
        raise LearnedModelError(f"{directory / meta_name}: malformed model ({exc!r})") from exc
    return DocumentModel(
        files.features,
        files.classes,
        files.weights,
        files.intercepts,
        files.thresholds,
        type_pairs,
        _load_country_names(directory),
    )


def load_country_names(directory: Path | str | None = None) -> frozenset[str]:
    """The lowercase country names of ``directory`` (default: bundled ``models/``), hash
    checked: the document stage's features and the implications read them.

    Example:
        >>> {"germany", "united states"} <= load_country_names()
        True
    """
    return _load_country_names(_model_dir(directory))


@lru_cache(maxsize=4)
def _load_country_names(directory: Path) -> frozenset[str]:
    name = MODEL_FILES[5]
    try:
        data = json.loads(_read_verified(directory, name, _manifest(directory)))
        return frozenset(str(n) for n in data["names"])
    except (KeyError, TypeError, ValueError) as exc:
        raise LearnedModelError(f"{directory / name}: malformed country names ({exc!r})") from exc


# ---------------------------------------------------------------------------------- extractors


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

    def functional_predicates(self) -> frozenset[str]:
        """Learned predicates with one value at a time per subject (``born_in`` ...)."""
        return self.model.predicates.functional_predicates()

    def score(self, doc: Doc, entities: Sequence[Span] | None = None) -> list[ScoredPair]:
        """Class probabilities of every mention pair of ``doc`` (``[]`` without a parse)."""
        if not doc.has_annotation("DEP"):
            return []
        spans = list(doc.ents if entities is None else entities)
        return self._score(TokenTable.of(doc), spans) if spans else []

    def _score(self, table: TokenTable, spans: Sequence[Span]) -> list[ScoredPair]:
        pairs = list(_mention_pairs(table, spans))
        if not pairs:
            return []
        probs = self.model.probabilities([_pair_features(table, a, b, n) for a, b, n in pairs])
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
        entities = _document_entities(table, spans)
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
            path = _path_between(table, table.root(pair.first), table.root(pair.second))
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
    """The rules and the learned model on the same doc; a rule match wins for its pair.

    A pair is the two mention spans, in either order: when any rule relates them, the learned
    model's guess for them is dropped; a document-stage relation is dropped when a rule relates
    any mentions of its two entities.
    """

    def __init__(self, rules: Any, learned: LearnedRelationExtractor) -> None:
        self.rules = rules
        self.learned = learned

    def functional_predicates(self) -> frozenset[str]:
        """Functional predicates of both sources."""
        return frozenset(self.rules.functional_predicates()) | self.learned.functional_predicates()

    def closing_predicates(self) -> Mapping[str, Container[str]]:
        """Predicates that end others (``left`` closes ``works_at``): the rules' only."""
        return dict(self.rules.closing_predicates())

    def ended_by(
        self,
        predicate: str,
        obj: str,
        open_relations: Iterable[tuple[str, str]],
        ends: bool = False,
    ) -> list[tuple[str, str]]:
        """The subject's open relations a statement ends (a departure ends the job and its
        roles): the rules' decision."""
        return list(self.rules.ended_by(predicate, obj, open_relations, ends))

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
        # The document stage relates entities, not mention pairs: a rule on any of their
        # mentions wins.
        named = {frozenset((c.subject.text.lower(), c.object.text.lower())) for c in found}
        for cand in self.learned.extract(doc, entities):
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
    if os.environ.get(SWITCH_VARIABLE, "1") == "0":
        return rules
    document_stage = os.environ.get(DOCUMENT_SWITCH_VARIABLE, "1") != "0"
    return CombinedRelationSource(
        rules, LearnedRelationExtractor(rules=rules.rules, document_stage=document_stage)
    )
