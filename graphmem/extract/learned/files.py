"""The learned model's files: the predicate map (with the document-level inference rules),
the SHA-256 check of each file against ``models/learned_relations_manifest.json``, the linear
weights of both stages and the country names. All data, never pickle.

Example:
    >>> load_predicate_map().predicates["born_in"].functional
    True
    >>> sorted(load_country_names())[:1]
    ['afghanistan']
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..._assets import asset_path
from ...errors import GraphmemError
from ..relations import PredicateInfo

#: The class of "no relation between these two mentions".
NO_RELATION = "NA"


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


def read_manifest(directory: Path) -> dict[str, str]:
    path = directory / MANIFEST_FILE
    try:
        files = json.loads(path.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise LearnedModelError(f"{path}: missing or malformed manifest ({exc!r})") from exc
    return {str(k): str(v) for k, v in files.items()}


def load_predicate_map(directory: Path | str | None = None) -> PredicateMap:
    """The predicate map of the model files in ``directory`` (default: bundled ``models/``)."""
    return cached_predicate_map(model_dir(directory))


@lru_cache(maxsize=4)
def cached_predicate_map(directory: Path) -> PredicateMap:
    name = MODEL_FILES[0]
    raw = _read_verified(directory, name, read_manifest(directory))
    return parse_predicate_map(json.loads(raw), str(directory / name))


def model_dir(directory: Path | str | None) -> Path:
    if directory is None:
        return asset_path("models", MANIFEST_FILE).parent
    return Path(directory).resolve()


@dataclass(frozen=True)
class LinearFiles:
    """What both stages' files hold: the metadata JSON, features, classes and parameters."""

    meta: dict[str, Any]
    features: dict[str, int]
    classes: tuple[str, ...]
    weights: np.ndarray
    intercepts: np.ndarray
    thresholds: np.ndarray


def read_linear(
    directory: Path,
    manifest: Mapping[str, str],
    meta_name: str,
    weights_name: str,
    predicates: PredicateMap,
    directional: bool,
) -> LinearFiles:
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
    return LinearFiles(meta, features, classes, weights, intercepts, thresholds)


def load_country_names(directory: Path | str | None = None) -> frozenset[str]:
    """The lowercase country names of ``directory`` (default: bundled ``models/``), hash
    checked: the document stage's features and the implications read them.

    Example:
        >>> {"germany", "united states"} <= load_country_names()
        True
    """
    return cached_country_names(model_dir(directory))


@lru_cache(maxsize=4)
def cached_country_names(directory: Path) -> frozenset[str]:
    name = MODEL_FILES[5]
    try:
        data = json.loads(_read_verified(directory, name, read_manifest(directory)))
        return frozenset(str(n) for n in data["names"])
    except (KeyError, TypeError, ValueError) as exc:
        raise LearnedModelError(f"{directory / name}: malformed country names ({exc!r})") from exc
