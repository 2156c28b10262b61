"""Canonical keys for entity names, and a filter for junk entity spans.

The canonical key is what entity resolution compares: two surfaces with the same key are the
same name. It is case-folded and NFKC-normalised; possessives, punctuation, a leading "the" and
corporate suffixes (Inc., Corp., Ltd, GmbH ...) are removed. Accents are kept ("Nestlé" and
"Nestle" stay distinct): folding them would corrupt scripts whose vowel signs are combining marks.
Generic organisation nouns such as "Company", "Group" or "Holdings" are part of the name and are
kept: "The Walt Disney Company" keys as ``"walt disney company"``.

Example:
    >>> canonical_key("Acme Corp.")
    'acme'
    >>> canonical_key("ALICE  johnson")
    'alice johnson'
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["CORPORATE_SUFFIXES", "canonical_key", "is_valid_entity_text"]

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
_NON_WORD = re.compile(r"[^\w]+|_+")
_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|www\.)|^[^\s@]+@[^\s@]+\.[^\s@]+$", re.IGNORECASE)


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
    return " ".join(_fold(stripped).split()) not in _PRONOUNS
