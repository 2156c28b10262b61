"""The two linear models, loaded from their hash-checked files: :class:`LearnedModel` (the
first stage, over mention pairs of a sentence) and :class:`DocumentModel` (the document stage,
over entity pairs of a whole text).

Example:
    >>> load_learned_model().classes[0], load_document_model().classes[0]
    ('NA', 'NA')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np

from .document import MIN_FIRST_STAGE, FirstStageLayout, PairShape, pair_shape_features
from .files import (
    MODEL_FILES,
    LearnedModelError,
    LinearFiles,
    PredicateMap,
    cached_country_names,
    cached_predicate_map,
    model_dir,
    read_linear,
    read_manifest,
)


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

    @classmethod
    def of(cls, files: LinearFiles, predicates: PredicateMap) -> LearnedModel:
        """The model of checked linear files (:func:`~.files.read_linear`)."""
        return cls(
            files.features,
            files.classes,
            files.weights,
            files.intercepts,
            files.thresholds,
            predicates,
        )

    def probabilities(self, feature_lists: Sequence[Sequence[str]]) -> np.ndarray:
        """One row of class probabilities per feature list (unknown features are ignored).

        Example:
            >>> model = load_learned_model()
            >>> model.probabilities([["no such feature"]]).shape[0]
            1
        """
        return softmax(self.scores(feature_lists))

    def scores(self, feature_lists: Sequence[Sequence[str]]) -> np.ndarray:
        """One row of linear class scores per feature list (unknown features are ignored)."""
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
        return scores

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
    return _load_model(model_dir(directory))


@lru_cache(maxsize=4)
def _load_model(directory: Path) -> LearnedModel:
    predicates = cached_predicate_map(directory)
    files = read_linear(
        directory, read_manifest(directory), MODEL_FILES[1], MODEL_FILES[2], predicates, True
    )
    return LearnedModel.of(files, predicates)


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
    return _load_document_model(model_dir(directory))


@lru_cache(maxsize=4)
def _load_document_model(directory: Path) -> DocumentModel:
    manifest = read_manifest(directory)
    meta_name, weights_name = MODEL_FILES[3], MODEL_FILES[4]
    files = read_linear(
        directory, manifest, meta_name, weights_name, cached_predicate_map(directory), False
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
        cached_country_names(directory),
    )
