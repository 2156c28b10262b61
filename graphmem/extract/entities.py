"""Entity mentions in analysed text: NER spans, plus names the tenant's memory already knows.

Example:
    >>> from graphmem.extract.pipeline import get_analyzer
    >>> doc = get_analyzer().analyse(["Alice Johnson joined Acme Corp in Berlin."])[0]
    >>> [(m.surface, m.label, m.key) for m in find_mentions(doc)]
    [('Alice Johnson', 'PERSON', 'alice johnson'), ('Acme Corp', 'ORG', 'acme'), ('Berlin', 'GPE', 'berlin')]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from spacy.language import Language
from spacy.matcher import PhraseMatcher
from spacy.tokens import Doc, Span, Token
from spacy.util import filter_spans

from .._assets import asset_path
from .normalize import CORPORATE_SUFFIXES, canonical_key, is_acronym, is_valid_entity_text

__all__ = ["GRAPH_LABELS", "AliasMatcher", "Mention", "acronym_definitions", "find_mentions"]

#: Entity labels that become graph nodes; dates and numbers stay attributes of memories.
GRAPH_LABELS = frozenset(
    {"PERSON", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "FAC", "NORP", "LAW"}
)
_DETERMINERS = frozenset({"the", "a", "an"})
_POSSESSIVES = frozenset({"'s", "\u2019s", "'"})


@dataclass(frozen=True)
class Mention:
    """One entity mention: where it is, what it is, and the sentence around it."""

    surface: str
    label: str
    key: str
    start: int
    end: int
    sent_start: int
    sent_end: int
    span: Span


class AliasMatcher:
    """Finds the names a tenant's memory already knows, so they are recognised every time.

    Multi-word names and names with inner capitals match case-insensitively; single words
    match as written (so a person called "Will" does not match the verb "will").
    """

    def __init__(self, nlp: Language) -> None:
        self._nlp = nlp
        self._lower = PhraseMatcher(nlp.vocab, attr="LOWER")
        self._orth = PhraseMatcher(nlp.vocab, attr="ORTH")
        self._known: set[str] = set()
        self.labels: dict[str, str] = {}

    def add(self, surface: str, label: str) -> None:
        """Teach the matcher one name."""
        if surface in self._known or not is_valid_entity_text(surface):
            return
        self._known.add(surface)
        pattern = self._nlp.make_doc(surface)
        if len(pattern) == 0:
            return
        self.labels[surface.lower()] = label
        self.labels[surface] = label
        inner_caps = any(ch.isupper() for ch in surface[1:])
        if len(pattern) > 1 or inner_caps:
            self._lower.add(label, [pattern])
        else:
            self._orth.add(label, [pattern])
            if label != "PERSON" and surface.upper() != surface:
                # "ACME" is the company "Acme"; capitals alone never make a common word a name.
                self._orth.add(label, [self._nlp.make_doc(surface.upper())])
        short = _without_legal_form(pattern)
        if short is not None:
            # "Acme Corp." is known, so "Acme" and "ACME" are too (same canonical key).
            self.add(short, label)

    def spans(self, doc: Doc) -> list[Span]:
        """Known names in ``doc`` as labelled spans."""
        out: list[Span] = []
        for matcher in (self._lower, self._orth):
            for match_id, start, end in matcher(doc):
                out.append(Span(doc, start, end, label=match_id))
        return out


@lru_cache(maxsize=1)
def role_titles() -> frozenset[str]:
    """Job titles ("CTO", "chief executive officer"): roles of entities, not entities.

    Taken from the role vocabulary of ``models/relation_rules.json``.
    """
    from .relations import load_relation_rules

    rules = load_relation_rules()
    names = set(rules.roles) | {alias.replace("_", " ") for alias in rules.role_aliases}
    return frozenset(canonical_key(name) for name in names)


def _word_list(filename: str) -> frozenset[str]:
    """The lower-case words of a ``models/`` word list (one a line, ``#`` comments)."""
    lines = asset_path("models", filename).read_text(encoding="utf-8").splitlines()
    return frozenset(w.strip().lower() for w in lines if w.strip() and not w.startswith("#"))


@lru_cache(maxsize=1)
def leading_verbs() -> frozenset[str]:
    """Imperative verbs that open task descriptions (``models/leading_verbs.txt``)."""
    return _word_list("leading_verbs.txt")


@lru_cache(maxsize=1)
def interjections() -> frozenset[str]:
    """Chat fillers never part of a name: "Wow", "Haha", "Hey" (``models/interjections.txt``)."""
    return _word_list("interjections.txt")


def find_mentions(
    doc: Doc, known: AliasMatcher | None = None, max_mentions: int = 500, include_ner: bool = True
) -> list[Mention]:
    """Entity mentions of ``doc`` in text order: NER spans of graph labels plus known names.

    Where a known name and an NER span overlap, the longer wins (ties: the NER span).
    """
    candidates = [e for e in doc.ents if e.label_ in GRAPH_LABELS] if include_ner else []
    if known is not None:
        candidates.extend(known.spans(doc))
    mentions: list[Mention] = []
    has_sentences = doc.has_annotation("SENT_START")
    for span in sorted(filter_spans(candidates), key=lambda s: s.start):
        text = _trim(span)
        if text is None:
            continue
        surface = text.text
        key = canonical_key(surface)
        if not key or key in role_titles():
            continue
        sent = text.sent if has_sentences else doc[:]
        mentions.append(
            Mention(
                surface=surface,
                label=span.label_,
                key=key,
                start=text.start_char,
                end=text.end_char,
                sent_start=sent.start_char,
                sent_end=sent.end_char,
                span=text,
            )
        )
        if len(mentions) >= max_mentions:
            break
    return mentions


def acronym_definitions(mentions: Sequence[Mention]) -> dict[int, int]:
    """Mentions that a name defines as its acronym, as ``{position: position of the name}``.

    "International Business Machines (IBM)" or "IBM (International Business Machines)": two
    adjacent mentions, the second in parentheses, one the initials of the capitalised words
    of the other. The second names what the first names.

    Example:
        >>> from graphmem.extract.pipeline import get_analyzer
        >>> doc = get_analyzer().analyse(["International Business Machines (IBM) grew."])[0]
        >>> acronym_definitions(find_mentions(doc))
        {1: 0}
    """
    out: dict[int, int] = {}
    text = mentions[0].span.doc.text if mentions else ""
    for position in range(1, len(mentions)):
        first, second = mentions[position - 1], mentions[position]
        between = text[first.end : second.start]
        if between.strip() != "(" or text[second.end : second.end + 1] != ")":
            continue
        if _initials(first.span) == _acronym_letters(second.surface) or _initials(
            second.span
        ) == _acronym_letters(first.surface):
            out[position] = position - 1
    return out


def _initials(name: Span) -> str:
    """Initials of the capitalised words of a name of several words: "Federal Bureau of
    Investigation" -> "FBI"."""
    return "".join(t.text[0] for t in name if t.text[:1].isupper()) if len(name) > 1 else ""


def _acronym_letters(surface: str) -> str | None:
    """The letters of a one-word acronym ("U.N." -> "UN"); None when ``surface`` is not one."""
    if " " in surface or not is_acronym(surface):
        return None
    return "".join(ch for ch in surface if ch.isalpha())


def _without_legal_form(name: Doc) -> str | None:
    """``name`` without its trailing legal form ("Acme Corp." -> "Acme"), or None if it has none."""
    end = len(name)
    while end > 1 and (
        name[end - 1].is_punct
        or name[end - 1].lower_ in {"&", "and"}
        or name[end - 1].lower_.replace(".", "") in CORPORATE_SUFFIXES
    ):
        end -= 1
    return name[:end].text if end < len(name) else None


def _trim(span: Span) -> Span | None:
    """The name inside a recognised span, or None when no name is left.

    Words that are never part of a name are dropped from either end: determiners, punctuation
    and possessives, interjections ("Omg Caroline"), verbs (a lower-case word tagged as one
    where the tagger ran, or an imperative of ``models/leading_verbs.txt`` opening a sentence:
    "Research Acme Corporation"), and numerals at the ends of a person's name (task and result
    text run together: "... sprint 7 Sara Kim approved it").
    """
    doc = span.doc
    start, end = span.start, span.end
    while start < end and _outside_name(doc[start], span.label_, opening=True):
        start += 1
    while end > start and _outside_name(doc[end - 1], span.label_, opening=False):
        end -= 1
    if start >= end:
        return None
    trimmed = Span(doc, start, end, label=span.label_)
    return trimmed if is_valid_entity_text(trimmed.text) else None


def _outside_name(token: Token, label: str, *, opening: bool) -> bool:
    """Whether ``token``, at the start (``opening``) or end of a span, is not part of the name."""
    lower = token.lower_
    if token.is_punct or lower in interjections():
        return True
    if token.pos_ in ("VERB", "AUX") and token.is_lower:
        return True  # "Sara Kim approved"; a capitalised one is a title's ("Know Your Enemy")
    if label == "PERSON" and token.like_num and any(ch.isdigit() for ch in lower):
        return True
    if opening:
        return lower in _DETERMINERS or (bool(token.is_sent_start) and lower in leading_verbs())
    return lower in _POSSESSIVES
