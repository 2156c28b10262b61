"""Canonical keys for entity names, which labels may name one entity, and a junk filter.

The canonical key is what entity resolution compares: two surfaces with the same key are the
same name. It is case-folded and NFKC-normalised; possessives, punctuation, a leading "the" and
corporate suffixes (Inc., Corp., Ltd, GmbH ...) are removed. Accents are kept ("Nestlé" and
"Nestle" stay distinct): folding them would corrupt scripts whose vowel signs are combining marks.
Generic organisation nouns such as "Company", "Group" or "Holdings" are part of the name and are
kept: "The Walt Disney Company" keys as ``"walt disney company"``. Other names of well-known
places and bodies (``models/well_known_aliases.json``: "U.S.", "USA", "United States of America")
key as the name they stand for.

Example:
    >>> canonical_key("Acme Corp.")
    'acme'
    >>> canonical_key("ALICE  johnson")
    'alice johnson'
    >>> canonical_key("the U.S.")
    'united states'
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from .._assets import asset_path

__all__ = [
    "name_text",
    "CORPORATE_SUFFIXES",
    "MODEL_LABELS",
    "TUNED_MODEL_LABELS",
    "PLACE_LABELS",
    "UNKNOWN_LABEL",
    "canonical_key",
    "is_acronym",
    "is_valid_entity_text",
    "label_kind",
    "may_be_one_entity",
    "may_shorten",
    "why_not_one_entity",
]

#: Legal-form suffixes removed from the end of a name, as they read once punctuation is gone
#: ("S.A." -> "sa", "Co." -> "co"). Only trailing words are removed, and never the whole name.
CORPORATE_SUFFIXES: frozenset[str] = frozenset(
    {
        "ab",
        "ag",
        "as",
        "asa",
        "bv",
        "bhd",
        "co",
        "corp",
        "corporation",
        "gmbh",
        "inc",
        "incorporated",
        "kg",
        "kgaa",
        "kk",
        "limited",
        "llc",
        "llp",
        "lp",
        "ltd",
        "nv",
        "oy",
        "oyj",
        "plc",
        "pte",
        "pty",
        "sa",
        "sarl",
        "sas",
        "se",
        "spa",
        "srl",
    }
)

# Words that may be left dangling once a suffix goes: "Acme & Co." -> "acme and".
_DANGLING = frozenset({"and"})

_PRONOUNS = frozenset(
    {
        "i", "me", "my", "mine", "myself", "you", "your", "yours", "yourself", "yourselves",
        "he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself",
        "we", "us", "our", "ours", "ourselves", "they", "them", "their", "theirs", "themselves",
        "who", "whom", "whose", "which", "what", "that", "this", "these", "those", "someone",
        "somebody", "anyone", "anybody", "everyone", "everybody", "nobody", "the", "a", "an",
    }
)  # fmt: skip

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_POSSESSIVE = re.compile(r"(?<=\w)'s\b|(?<=s)'(?=\s|$)")
_JOINING_MARKS = re.compile(r"[.']")  # "U.S." -> "us", "O'Brien" -> "obrien"
_LEADING_THE = re.compile(r"^the\s+", re.IGNORECASE)
_NON_WORD = re.compile(r"[^\w]+|_+")
_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|www\.)|^[^\s@]+@[^\s@]+\.[^\s@]+$", re.IGNORECASE)


#: Characters no name keeps: controls (C0 and C1, tab and line breaks included), surrogates
#: and the noncharacters U+FFFE/U+FFFF (XML, so GraphML and GEXF, cannot hold most of them).
_NOT_IN_NAMES = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def name_text(surface: str) -> str:
    """The one rule for a name where it enters the graph (extracted, given with a save, named
    in ``add_relation``): each control character, surrogate or noncharacter becomes a space,
    and runs of spaces one; the ends are stripped.

    Example:
        >>> name_text("Acme\x0bCorp\uffff ")
        'Acme Corp'
    """
    if _NOT_IN_NAMES.search(surface) is None and "  " not in surface:
        return surface.strip()
    return " ".join(_NOT_IN_NAMES.sub(" ", surface).split())


def _fold(surface: str) -> str:
    return unicodedata.normalize("NFKC", surface).casefold().translate(_APOSTROPHES)


@lru_cache(maxsize=32768)  # names recur: the same surfaces are keyed on every save
def canonical_key(surface: str) -> str:
    """Return the key under which ``surface`` is resolved to an entity.

    Never returns ``""`` for a name that has a letter in it: a lone suffix or "the" is kept
    (``"Inc."`` -> ``"inc"``), and should stripping ever leave nothing, the case-folded,
    space-collapsed surface is returned.

    Examples:
        >>> canonical_key("Acme Corp.")
        'acme'
        >>> canonical_key("The Walt Disney Company")
        'walt disney company'
        >>> canonical_key("Alice's")
        'alice'
        >>> canonical_key("ALICE  johnson")
        'alice johnson'
        >>> canonical_key("Samsung Electronics Co., Ltd.")
        'samsung electronics'
        >>> canonical_key("Johnson & Johnson")
        'johnson and johnson'
        >>> canonical_key("U.S. Steel")
        'us steel'
        >>> canonical_key("Inc.")
        'inc'
    """
    key = _surface_key(surface)
    alias = _well_known_aliases().get(key)
    if alias is not None and (not alias.capitals or is_acronym(surface)):
        return alias.key
    return key


def _surface_key(surface: str) -> str:
    """The canonical key of ``surface`` before well-known aliases are looked up."""
    folded = _fold(surface)
    text = _POSSESSIVE.sub("", folded)
    text = text.replace("&", " and ")
    text = _JOINING_MARKS.sub("", text)
    words = _NON_WORD.sub(" ", text).split()
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    while len(words) > 1 and (words[-1] in CORPORATE_SUFFIXES or words[-1] in _DANGLING):
        words.pop()
    key = " ".join(words)
    if key or not any(ch.isalpha() for ch in folded):
        return key
    return " ".join(folded.split())


@dataclass(frozen=True)
class _Alias:
    key: str  # the key of the name the alias stands for
    capitals: bool  # written in capitals ("US"): matches only a name written in capitals


@lru_cache(maxsize=1)
def _well_known_aliases() -> dict[str, _Alias]:
    """Alias key -> what it stands for, from ``models/well_known_aliases.json``."""
    table = json.loads(asset_path("models", "well_known_aliases.json").read_text("utf-8"))
    out: dict[str, _Alias] = {}
    for name, aliases in table.items():
        if name.startswith("_"):
            continue
        for alias in aliases:
            out[_surface_key(alias)] = _Alias(_surface_key(name), is_acronym(alias))
    return out


def is_acronym(text: str) -> bool:
    """Tell whether ``text`` is written in capitals, two letters or more ("US", "the U.S.").

    Examples:
        >>> [is_acronym(t) for t in ("US", "the U.S.", "WHO's", "Us", "X")]
        [True, True, True, False, False]
    """
    name = _LEADING_THE.sub("", _POSSESSIVE.sub("", text.strip().translate(_APOSTROPHES)))
    letters = [ch for ch in name if ch.isalpha()]
    return len(letters) >= 2 and all(ch.isupper() for ch in letters)


@lru_cache(maxsize=32768)
def is_valid_entity_text(text: str) -> bool:
    """Tell whether a recognised span is worth an entity node.

    Rejects spans without letters (``"1999"``, ``"--"``), single letters, pronouns and
    determiners (``"She"``, ``"the"``), and URLs or e-mail addresses.

    Examples:
        >>> is_valid_entity_text("Acme Corp.")
        True
        >>> [is_valid_entity_text(t) for t in ("She", "42", "X", "https://acme.com", "")]
        [False, False, False, False, False]
    """
    stripped = text.strip()
    letters = [ch for ch in stripped if ch.isalpha()]
    if len(letters) < 2 and len(stripped.strip(".")) < 2:
        return False
    if not letters:
        return False
    if _URL.search(stripped):
        return False
    # "US" and "WHO" written in capitals are names; "us" and "who" are pronouns.
    return is_acronym(stripped) or " ".join(_fold(stripped).split()) not in _PRONOUNS


#: The entity labels of the spaCy model (OntoNotes 5). Any other upper-case label is declared
#: by the user (PROJECT, TEAM ...), save :data:`UNKNOWN_LABEL`.
MODEL_LABELS = frozenset(
    {
        "PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW",
        "LANGUAGE", "DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL",
    }
)  # fmt: skip
#: Labels only the NER fine-tuned on agent text gives (``models/agent_ner``).
TUNED_MODEL_LABELS = frozenset({"PROJECT", "TEAM"})
#: The label of an entity the caller named without a type (``EntityMemory.save(...,
#: entities=[...])``): compatible with every label.
UNKNOWN_LABEL = "ENTITY"

#: Labels of places: a person is never one ("Berlin" the city is not Leslie Berlin).
PLACE_LABELS = frozenset({"GPE", "LOC", "FAC"})
#: Labels of organisations and groups: not a person either, save for NER's lone-name mistake.
_GROUP_LABELS = frozenset({"ORG", "NORP"})


def label_kind(label: str) -> str:
    """The kind of thing an entity label names, as :func:`may_be_one_entity` compares them:
    ``"person"``, ``"place"`` (GPE, LOC, FAC), ``"group"`` (ORG, NORP), ``"other"`` (the
    model's other labels), ``"declared"`` (a label of the user's: PROJECT, TEAM) or
    ``"unknown"`` (:data:`UNKNOWN_LABEL`).

    Examples:
        >>> [label_kind(x) for x in ("PERSON", "FAC", "NORP", "PRODUCT", "PROJECT", "ENTITY")]
        ['person', 'place', 'group', 'other', 'declared', 'unknown']
    """
    if label == "PERSON":
        return "person"
    if label in PLACE_LABELS:
        return "place"
    if label in _GROUP_LABELS:
        return "group"
    if label == UNKNOWN_LABEL:
        return "unknown"
    return "other" if label in MODEL_LABELS else "declared"


def may_be_one_entity(label_a: str, key_a: str, label_b: str, key_b: str) -> bool:
    """Tell whether names labelled and keyed so may be one entity: the one rule of entity
    resolution, merges and ``add_relation``.

    - The same label, or :data:`UNKNOWN_LABEL` (a name the caller gave without a type) on
      either side: yes.
    - A person is never a place (GPE, LOC, FAC) by labels alone (entity resolution lets a lone
      name NER called a place join a person whose full name the memory or its conversation
      writes: :func:`graphmem.extract.resolution.person_named_nearby`). A person is not an organisation or a
      group (ORG, NORP) either, except for a lone word of the person's name labelled so: the
      small NER model calls most lone names an ORG ("Stone" in "Stone approved the budget").
    - A place and an organisation are one entity only under one name: the model calls
      "Apple" or "Washington" either, and the mentions' vote settles it; "Oslo" is not "Lumen
      Robotics".
    - A declared type (PROJECT, TEAM ...) is one entity with a name the model labelled
      otherwise only under the same name (the declaration corrects the model: "Atlas" PERSON
      is the project Atlas), and never with another declared type.
    - Otherwise (the model's PRODUCT, EVENT, WORK_OF_ART, LAW, LANGUAGE with anything but a
      declared type): yes; the mentions' vote settles the label.

    Examples:
        >>> may_be_one_entity("GPE", "berlin", "PERSON", "leslie berlin")
        False
        >>> may_be_one_entity("ORG", "stone", "PERSON", "bob stone")
        True
        >>> may_be_one_entity("ORG", "stone labs", "PERSON", "bob stone")
        False
        >>> may_be_one_entity("ORG", "apple", "GPE", "apple")
        True
        >>> may_be_one_entity("GPE", "oslo", "ORG", "lumen robotics")
        False
        >>> may_be_one_entity("PROJECT", "atlas", "PERSON", "atlas")
        True
        >>> may_be_one_entity("ENTITY", "atlas", "GPE", "oslo")
        True
    """
    return why_not_one_entity(label_a, key_a, label_b, key_b) is None


def why_not_one_entity(label_a: str, key_a: str, label_b: str, key_b: str) -> str | None:
    """Why names labelled and keyed so are not one entity (:func:`may_be_one_entity`), for an
    error message; None when they may be.

    Examples:
        >>> why_not_one_entity("GPE", "oslo", "ORG", "lumen robotics")
        'a place and an organisation are one entity only under one name'
        >>> why_not_one_entity("ORG", "acme", "ORG", "initech") is None
        True
    """
    if label_a == label_b:
        return None
    kinds = {label_kind(label_a), label_kind(label_b)}
    if "unknown" in kinds:
        return None
    if kinds == {"declared"}:
        return "two declared types are never one entity"
    if "declared" in kinds:
        return None if key_a == key_b else "a declared type is one entity only under its name"
    if "person" in kinds:
        other_label, other_key, person_key = (
            (label_b, key_b, key_a) if label_a == "PERSON" else (label_a, key_a, key_b)
        )
        if other_label in PLACE_LABELS:
            return "a person is not a place"
        if other_label in _GROUP_LABELS and not (
            " " not in other_key and other_key in person_key.split()
        ):
            return "a person is not an organisation"
        return None
    if kinds == {"place", "group"} and key_a != key_b:
        return "a place and an organisation are one entity only under one name"
    return None


#: Words that open many organisation names and so shorten none of them alone: "University" is
#: not the University of Oslo, "American" (NER's NORP) not American Airlines.
_GENERIC_ORG_WORDS = frozenset(
    {
        "the", "a", "an", "of", "and", "for", "in", "on", "at", "to",
        "academy", "agency", "association", "bank", "board", "bureau", "center", "centre",
        "church", "city", "club", "college", "commission", "committee", "company", "council",
        "county", "court", "department", "faculty", "federation", "foundation", "fund",
        "group", "holdings", "hospital", "institute", "league", "library", "ministry",
        "museum", "office", "party", "school", "service", "society", "state", "team",
        "trust", "union", "university",
        "central", "federal", "first", "general", "global", "grand", "great", "imperial",
        "international", "national", "new", "old", "royal", "united", "world",
        "north", "south", "east", "west", "northern", "southern", "eastern", "western",
        "african", "american", "asian", "australian", "british", "canadian", "chinese",
        "english", "european", "french", "german", "indian", "irish", "italian", "japanese",
        "korean", "mexican", "russian", "scottish", "spanish", "swiss",
    }
)  # fmt: skip


def may_shorten(short: str, short_label: str | None, key: str, label: str) -> bool:
    """Tell whether the lone word ``short`` (as written, or its key) may be a short name of
    the entity keyed ``key``.

    It may be a first or last name of a PERSON (labelled as :func:`may_be_one_entity`
    allows), or the first word of an ORG's name ("Northwind" for Northwind Systems) when NER
    called it an organisation or a group (ORG, NORP: the small model calls a lone "Harbor" a
    NORP), the word is not one that opens many names ("University", "National"), it is not
    written in capitals (an acronym is a whole name: "BBC" does not shorten BBC Television,
    a part of it), and a word follows it, not a number (nor "EUR" the amount "EUR 210k" NER
    calls an ORG). ``short_label`` is None when unknown (a name in a query). Whether the
    short name stands for one entity only is the caller's to check.

    Examples:
        >>> may_shorten("Alice", "ORG", "alice johnson", "PERSON")
        True
        >>> may_shorten("Northwind", "NORP", "northwind systems", "ORG")
        True
        >>> may_shorten("Systems", "ORG", "northwind systems", "ORG")
        False
        >>> may_shorten("Berlin", "GPE", "berlin partners", "ORG")
        False
        >>> may_shorten("BBC", "ORG", "bbc television", "ORG")
        False
        >>> may_shorten("University", None, "university of oslo", "ORG")
        False
    """
    short_key = canonical_key(short)
    if not short_key or " " in short_key:
        return False
    if label == "PERSON":
        return short_key in key.split() and (
            short_label is None or may_be_one_entity(short_label, short_key, label, key)
        )
    return (
        label == "ORG"
        and (short_label is None or short_label in _GROUP_LABELS)
        and key.startswith(short_key + " ")
        and key[len(short_key) + 1 : len(short_key) + 2].isalpha()
        and short_key not in _GENERIC_ORG_WORDS
        and not is_acronym(short)
    )
