"""The word lists and name patterns of ``models/`` that say what is, or is not, part of a
name: role titles and role words (the relation rules' vocabulary), the words that open log
entries, chat fillers, business terms, and the shapes of organisations' names.

Example:
    >>> "cto" in role_words(), "uat" in business_terms()
    (True, True)
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .._assets import asset_path
from .entity_patterns import load_entity_patterns
from .normalize import canonical_key

if TYPE_CHECKING:
    from spacy.matcher import Matcher
    from spacy.tokens import Doc, Span
    from spacy.vocab import Vocab

#: The possessive endings the tokenizer splits from a name ("Acme*'s*", "James*'*").
POSSESSIVES = frozenset({"'s", "\u2019s", "'"})


@lru_cache(maxsize=1)
def role_titles() -> frozenset[str]:
    """Job titles ("CTO", "chief executive officer"): roles of entities, not entities.

    Taken from the role vocabulary of ``models/relation_rules.json``.
    """
    from .relations import load_relation_rules

    rules = load_relation_rules()
    names = set(rules.roles) | {alias.replace("_", " ") for alias in rules.role_aliases}
    return frozenset(canonical_key(name) for name in names)


@lru_cache(maxsize=1)
def role_words() -> frozenset[str]:
    """The one-word role nouns of ``models/relation_rules.json`` ("cto", "officer", "head")."""
    from .relations import load_relation_rules

    return frozenset(word.lower() for word in load_relation_rules().roles if " " not in word)


def _word_list(filename: str) -> frozenset[str]:
    """The lower-case words of a ``models/`` word list (one a line, ``#`` comments)."""
    lines = asset_path("models", filename).read_text(encoding="utf-8").splitlines()
    return frozenset(w.strip().lower() for w in lines if w.strip() and not w.startswith("#"))


@lru_cache(maxsize=1)
def leading_words() -> frozenset[str]:
    """Words that open task descriptions and log entries, never a name: "Research", "Logged",
    "Last" (``models/leading_words.txt``)."""
    return _word_list("leading_words.txt")


@lru_cache(maxsize=1)
def interjections() -> frozenset[str]:
    """Chat fillers never part of a name: "Wow", "Haha", "Hey" (``models/interjections.txt``)."""
    return _word_list("interjections.txt")


@lru_cache(maxsize=1)
def business_terms() -> frozenset[str]:
    """Terms never an entity alone: "UAT", "SSO", "Operations", "EUR"
    (``models/business_terms.txt``)."""
    return _word_list("business_terms.txt")


@lru_cache(maxsize=1)
def _organisation_patterns() -> tuple[list[dict[str, Any]], re.Pattern[str]]:
    """The patterns of ``models/organisation_patterns.jsonl``, and a regular expression of
    their last words (the head nouns): a text without one holds no such name."""
    patterns = load_entity_patterns(asset_path("models", "organisation_patterns.jsonl"))
    heads: set[str] = set()
    for pattern in patterns:
        last = pattern["pattern"][-1] if isinstance(pattern["pattern"], list) else {}
        heads.update(last.get("LOWER", {}).get("IN", ()))
    alternatives = "|".join(sorted(map(re.escape, heads), key=len, reverse=True))
    return patterns, re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


def organisation_heads() -> frozenset[str]:
    """The head nouns that end an organisation's name ("Robotics", "Systems", "Health"), as
    ``models/organisation_patterns.jsonl`` lists them (lower case)."""
    return _organisation_heads()


@lru_cache(maxsize=1)
def _organisation_heads() -> frozenset[str]:
    heads: set[str] = set()
    for pattern in _organisation_patterns()[0]:
        last = pattern["pattern"][-1] if isinstance(pattern["pattern"], list) else {}
        heads.update(word.lower() for word in last.get("LOWER", {}).get("IN", ()))
    return frozenset(heads)


@lru_cache(maxsize=4)
def _organisation_matcher(vocab: Vocab) -> Matcher:
    """A matcher of ``models/organisation_patterns.jsonl`` over ``vocab`` (built once)."""
    from spacy.matcher import Matcher

    matcher = Matcher(vocab)
    for pattern in _organisation_patterns()[0]:
        matcher.add(pattern["label"], [pattern["pattern"]])
    return matcher


def organisation_names(doc: Doc) -> list[Span]:
    """Names shaped like an organisation's ("Kestrel Automation", "Lumen Robotics"), longest
    first where they overlap (``models/organisation_patterns.jsonl``), none that continues a
    capitalised word inside its sentence.

    Example:
        >>> from graphmem.extract.pipeline import get_analyzer
        >>> doc = get_analyzer().nlp.make_doc("Samir Haddad joined Kestrel Automation.")
        >>> [span.text for span in organisation_names(doc)]
        ['Kestrel Automation']
    """
    from spacy.tokens import Span
    from spacy.util import filter_spans

    if not _organisation_patterns()[1].search(doc.text):
        return []  # most texts name no "... Robotics": skip the matcher's pass over the tokens
    spans = [
        Span(doc, start, end, label=label)
        for label, start, end in _organisation_matcher(doc.vocab)(doc)
        if not _continues_a_name(doc, start)
    ]
    return filter_spans(spans)


def _continues_a_name(doc: Doc, start: int) -> bool:
    """Whether a capitalised word inside a sentence comes right before ``doc[start]``: the
    match is then the tail of a longer name ("the Social *Media Group*")."""
    if start == 0:
        return False
    before = doc[start - 1]
    return not before.is_sent_start and (before.is_title or before.is_upper) and before.is_alpha
