"""The dependency-matcher patterns of a rule: its own, one per ``either_attached``
preposition, the shared-subject variant of a conjoined verb ("Bob quit Acme and *moved* to
Austin") and the clause-as-modifier one ("Ann Lee, born in Lyon, *graduated* from MIT."), and
what a doc must hold for a pattern to match at all.

Example:
    >>> requirements([{"RIGHT_ID": "verb", "RIGHT_ATTRS": {"LEMMA": {"IN": ["join"]}}}])
    (('LEMMA', frozenset({'join'})),)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from spacy.language import Language
from spacy.parts_of_speech import IDS as UNIVERSAL_POS
from spacy.tokens import Token

from .rules import SUBJECT_DEPS, RelationRule

#: Pattern node added by the shared-subject variant of a rule: the verb the rule's verb is
#: conjoined to, whose subject it borrows.
SHARED_HEAD = "shared_head"
#: Token attributes of patterns that :func:`requirements` checks against a doc: pattern key ->
#: the attribute ``Doc.to_array`` reads.
_TOKEN_ATTRS = {
    "LEMMA": "LEMMA",
    "LOWER": "LOWER",
    "DEP": "DEP",
    "POS": "POS",
    "TAG": "TAG",
    "ORTH": "ORTH",
    "TEXT": "ORTH",
}


def requirements(pattern: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, frozenset[str]], ...]:
    """What a doc must contain for ``pattern`` to match: ``(token attribute, values)`` pairs,
    each met by a token whose attribute has one of the values (a necessary condition only)."""
    needs = []
    for node in pattern:
        for name, value in node["RIGHT_ATTRS"].items():
            if name not in _TOKEN_ATTRS:
                continue
            if isinstance(value, str):
                needs.append((_TOKEN_ATTRS[name], frozenset([value])))
            elif isinstance(value, dict) and set(value) == {"IN"}:
                needs.append((_TOKEN_ATTRS[name], frozenset(value["IN"])))
    return tuple(needs)


def attr_value(nlp: Language, attr: str, value: str) -> int:
    """The integer ``Doc.to_array(attr)`` holds for ``value``: a part-of-speech id, else the
    string's hash."""
    if attr == "POS":
        return int(UNIVERSAL_POS.get(value, -1))
    return int(nlp.vocab.strings[value])


def _own_subject(
    anchor: dict[str, Any], rest: Sequence[dict[str, Any]], deps: tuple[str, ...]
) -> int | None:
    """The index in ``rest`` of the rule's ``subject`` node when it is the anchor verb's own
    child with one of ``deps`` as its dependency, else None."""
    for i, node in enumerate(rest):
        if (
            node["RIGHT_ID"] == "subject"
            and node.get("LEFT_ID") == anchor["RIGHT_ID"]
            and node.get("REL_OP") == ">"
            and node["RIGHT_ATTRS"].get("DEP") in deps
        ):
            return i
    return None


def shared_subject_variant(
    pattern: tuple[dict[str, Any], ...],
) -> tuple[dict[str, Any], ...] | None:
    """A rule's ``pattern`` for a verb conjoined to another verb that holds the subject ("Bob
    quit Acme and *moved* to Austin"), or None when the rule's subject is not its verb's own.

    The variant hangs the subject on the verb's head (node :data:`SHARED_HEAD`); a match is
    kept only when the conjoined verb takes that subject (:func:`shares_subject`).
    """
    anchor, *rest = pattern
    if "DEP" in anchor["RIGHT_ATTRS"]:
        return None
    i = _own_subject(anchor, rest, ("nsubj", "nsubjpass"))
    if i is None:
        return None
    node = rest[i]
    verb = {**anchor, "RIGHT_ATTRS": {**anchor["RIGHT_ATTRS"], "DEP": "conj"}}
    head = {
        "LEFT_ID": anchor["RIGHT_ID"],
        "REL_OP": "<",
        "RIGHT_ID": SHARED_HEAD,
        "RIGHT_ATTRS": {"POS": {"IN": ["VERB", "AUX"]}},
    }
    # The head may be passive: "was promoted ... and now *reports* to Ingrid".
    attrs = {**node["RIGHT_ATTRS"], "DEP": {"IN": sorted(SUBJECT_DEPS)}}
    subject = {**node, "LEFT_ID": SHARED_HEAD, "RIGHT_ATTRS": attrs}
    return (verb, *rest[:i], head, subject, *rest[i + 1 :])


def clause_as_modifier_variant(
    pattern: tuple[dict[str, Any], ...],
) -> tuple[dict[str, Any], ...] | None:
    """A rule's ``pattern`` for a verb the parser hangs as a modifier (``acl``) on a subject
    that heads the sentence, so that the modifier is the sentence's only statement ("Ann Lee,
    born in Lyon, *graduated* from MIT."), or None when the rule's subject is not its verb's
    own active subject.

    A participle beside a main verb ("Acme, *founded* in 1990, makes anvils") is no
    statement of its own and keeps its own rules (``acl`` rules such as ``born_in_acl``).
    """
    anchor, *rest = pattern
    attrs = anchor["RIGHT_ATTRS"]
    tag = attrs.get("TAG")
    if "DEP" in attrs or not (tag is None or (isinstance(tag, dict) and set(tag) == {"NOT_IN"})):
        return None
    i = _own_subject(anchor, rest, ("nsubj",))
    if i is None:
        return None
    node = rest[i]
    verb = {**anchor, "RIGHT_ATTRS": {**attrs, "DEP": "acl", "TAG": {"NOT_IN": ["VBG"]}}}
    subject = {**node, "REL_OP": "<", "RIGHT_ATTRS": {"DEP": "ROOT"}}
    return (verb, *rest[:i], subject, *rest[i + 1 :])


def attachment_variants(rule: RelationRule) -> list[tuple[dict[str, Any], ...]]:
    """``rule``'s pattern and, for each ``either_attached`` node, the pattern with that node
    hung on its parent's head instead ("took up a post *at* Acme": "at" under "took")."""
    patterns = [rule.pattern]
    for node_id in sorted(rule.either_attached):
        for pattern in list(patterns):
            heads = {n["RIGHT_ID"]: n.get("LEFT_ID") for n in pattern}
            patterns.append(
                tuple(
                    {**n, "LEFT_ID": heads[n["LEFT_ID"]]} if n["RIGHT_ID"] == node_id else n
                    for n in pattern
                )
            )
    return patterns


def shares_subject(verb: Token) -> bool:
    """Whether a conjoined verb takes its head's subject: it has none of its own and follows
    the conjunction directly ("quit Acme and then *moved*"); a name between them is a subject
    the parser missed ("left Acme and Bob *joined* Initech")."""
    if any(child.dep_ in SUBJECT_DEPS for child in verb.children):
        return False
    before = verb.i - 1
    while before > 0 and verb.doc[before].pos_ in ("ADV", "AUX", "PART"):
        before -= 1
    return verb.doc[before].dep_ == "cc" or verb.doc[before].text == ","
