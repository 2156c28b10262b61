"""Resolving pattern ends to entity spans by context: the entity a pronoun or a description
("the company") refers to, and who says "I" on a transcript line.

Example:
    >>> sorted(_PRONOUN_GENDERS)[:3]
    ['he', 'her', 'hers']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from spacy.tokens import Doc, Span, Token

from graphmem.extract.gazetteer import name_gender

from .rules import SUBJECT_DEPS

#: The gender a pronoun asks of a person's given name (:func:`~graphmem.extract.gazetteer.name_gender`).
_PRONOUN_GENDERS = {
    "he": "male",
    "him": "male",
    "his": "male",
    "she": "female",
    "her": "female",
    "hers": "female",
}


#: Pronouns of one referent kind: a later one refers to what an earlier one did.
_PRONOUN_KINDS = {
    **dict.fromkeys(("he", "him", "his", "himself"), "male"),
    **dict.fromkeys(("she", "her", "hers", "herself"), "female"),
    **dict.fromkeys(("it", "its"), "thing"),
    **dict.fromkeys(("they", "them", "their"), "plural"),
}
#: How many sentences before its own a pronoun's antecedent may be named in.
_ANTECEDENT_SENTENCES = 2


@dataclass(frozen=True)
class Ends:
    """The entity spans of one doc, indexed for resolving pattern ends to them."""

    by_token: Mapping[int, Span]
    #: The spans pronouns may refer to, in text order (speakers are not among them).
    referents: tuple[Span, ...]
    #: ``(line start, line end, speaker)`` for each transcript line "Name: ...", char offsets.
    line_speakers: tuple[tuple[int, int, Span], ...]
    speaker: Span | None

    @classmethod
    def of(cls, doc: Doc, spans: Sequence[Span], speaker: Span | None) -> Ends:
        by_token: dict[int, Span] = {}
        for span in sorted(spans, key=lambda s: (s.start, s.start - s.end)):
            for i in range(span.start, span.end):
                by_token.setdefault(i, span)
        line_speakers = []
        text = ""  # the doc's text, built only for a "Name:" (it costs a pass over the doc)
        for span in sorted(spans, key=lambda s: s.start):
            if span.label_ != "PERSON" or span.end >= len(doc) or doc[span.end].text != ":":
                continue
            text = text or doc.text
            if not text[: span.start_char].rpartition("\n")[2].strip():
                end = text.find("\n", span.end_char)
                line_speakers.append((span.start_char, end if end >= 0 else len(text), span))
        speakers = {s for _, _, s in line_speakers} | ({speaker} if speaker is not None else set())
        referents = tuple(s for s in sorted(spans, key=lambda s: s.start) if s not in speakers)
        return cls(by_token, referents, tuple(line_speakers), speaker)

    def antecedent(
        self, pronoun: Token, label: str, described: bool = False, owner: bool = False
    ) -> Span | None:
        """The entity labelled ``label`` that ``pronoun`` refers to: the nearest one named
        before it, looking in its own sentence, then in each of the
        :data:`_ANTECEDENT_SENTENCES` sentences before, and of the pronoun's gender where the
        name's given name tells one ("she" is no Tomasz).

        In the sentence where candidates are found, several mentions of one entity ("Dana
        Whitfield ... Dana") count once; of several entities, the one that is a subject there
        is taken, else none (ambiguous). In the pronoun's own sentence a lone candidate that
        is no subject is not taken: in "The daughter of Mondher Ben Ammar, she ..." the
        pronoun is someone unnamed; but a description that says what it stands for ("*the
        company*'s CTO", ``described``), or a possessive that owns a role (``owner``: "Acme's
        CEO is Ann, and Bob is *its* CTO") takes it. In a sentence before, a lone entity is
        taken whatever its role ("Reference check for Ana Silva. *She* left Acme ..."). An
        object pronoun is not the subject of its own clause ("Henrik reports to *her*").
        """
        return self._antecedent(pronoun, label, described, owner, _ANTECEDENT_SENTENCES)

    def _antecedent(
        self, pronoun: Token, label: str, described: bool, owner: bool, reach: int
    ) -> Span | None:
        sentence = pronoun.sent
        doc = pronoun.doc
        starts = [sentence.start]
        while len(starts) <= reach and starts[-1] > 0:
            starts.append(doc[starts[-1] - 1].sent.start)
        clause = _clause_verb(pronoun)
        named = [
            s
            for s in self.referents
            if s.label_ == label
            and s.end <= pronoun.i
            and not (
                pronoun.dep_ in ("pobj", "dobj")
                and s.root.dep_ in SUBJECT_DEPS
                and s.root.head == clause
            )
        ]
        end = pronoun.i
        for position, start in enumerate(starts):
            window = doc[start:end]
            candidates = [s for s in named if start <= s.start < end]
            end = start
            earlier = _same_pronoun_subject(pronoun, window, candidates) if position else None
            if earlier is not None:  # "She ... She later joined": the first one's referent
                return self._antecedent(earlier, label, described, owner, reach - position)
            if not candidates:
                continue
            if position > 0:  # beyond its own sentence, "she" is no Gareth
                candidates = _of_gender(candidates, pronoun)
                if not candidates:
                    continue
            one = _one_entity(candidates)
            if one is None:  # several: the pronoun's gender may tell them apart, else none
                return _one_entity(_of_gender(candidates, pronoun))
            if any(map(_is_subject, candidates)) or described or (owner and position == 0):
                return one
            if position > 0 and not _has_nominal_subject(window, candidates):
                return one  # "Reference check for Ana Silva. She left Acme ..."
        return None

    def speaker_of(self, token: Token) -> Span | None:
        """Who says ``token``: the speaker opening its line, else the memory's speaker."""
        for start, end, span in self.line_speakers:
            if start <= token.idx < end:
                return span
        return self.speaker


def _one_entity(spans: Sequence[Span]) -> Span | None:
    """The fullest of ``spans`` when they all name one entity ("Dana Whitfield ... Dana"),
    else None (none, or several entities)."""
    if not spans:
        return None
    fullest = max(spans, key=len)
    words = {t.lower_ for t in fullest}
    return fullest if all({t.lower_ for t in s} <= words for s in spans) else None


def _of_gender(spans: Sequence[Span], pronoun: Token) -> list[Span]:
    """The spans whose given name may be of ``pronoun``'s gender ("she" is no Tomasz); all of
    them for a pronoun without one. Used to choose among several people, and to turn down a
    lone one only beyond the pronoun's own sentence, where the syntax says less (the lists
    know no unisex names' other uses: "Jin Park moved to Oracle, where he works")."""
    gender = _PRONOUN_GENDERS.get(pronoun.lower_)
    if gender is None:
        return list(spans)
    return [s for s in spans if name_gender(s[0].text) in (gender, None)]


def _same_pronoun_subject(pronoun: Token, window: Span, candidates: Sequence[Span]) -> Token | None:
    """A pronoun of ``pronoun``'s kind that is the subject in ``window`` where no candidate is
    one ("*She* was born in Tunis ... She later joined"): the one to follow back."""
    if any(map(_is_subject, candidates)):
        return None  # the sentence's subject is named: that is the referent
    kind = _PRONOUN_KINDS.get(pronoun.lower_)
    if kind is None:  # a description ("the company"), no pronoun
        return None
    for token in reversed(window):
        if token.dep_ in SUBJECT_DEPS and _PRONOUN_KINDS.get(token.lower_) == kind:
            return token
    return None


def _has_nominal_subject(window: Span, candidates: Sequence[Span]) -> bool:
    """Whether ``window`` has a subject that is a common noun, none of the candidates ("*The
    band* opened for Kestrel Labs"): the pronoun after it may well be that."""
    inside = {i for c in candidates for i in range(c.start, c.end)}
    return any(
        t.dep_ in SUBJECT_DEPS and t.pos_ == "NOUN" and t.i not in inside and not t.ent_type_
        for t in window
    )


def _is_subject(span: Span) -> bool:
    """Whether ``span`` is a clause's subject, or names it: its apposition ("Acme's founder,
    *Noemi Diaz*, joined ...") or its possessor ("*Sam Cole*'s last day was Friday"), unless
    a pronoun is the clause's subject beside it ("The daughter of X, *she* was born ...")."""
    root = span.root
    if root.dep_ in SUBJECT_DEPS:
        return True
    noun = root.head
    return (
        root.dep_ in ("appos", "poss")
        and noun.dep_ in SUBJECT_DEPS
        and not any(c.dep_ in SUBJECT_DEPS and c.pos_ == "PRON" for c in noun.head.children)
    )


def _clause_verb(token: Token) -> Token | None:
    """The nearest verb above ``token`` (the one whose clause it is in)."""
    head = token.head
    while head.i != head.head.i and head.pos_ not in ("VERB", "AUX"):
        head = head.head
    return head if head.pos_ in ("VERB", "AUX") else None


#: The pronouns that stand for a person, and for an organisation.
_PERSON_PRONOUNS = frozenset({"he", "him", "his", "she", "her", "hers"})
_ORG_PRONOUNS = frozenset({"it", "its", "they", "them", "their"})


def pronoun_antecedents(doc: Doc, spans: Sequence[Span]) -> dict[int, Span]:
    """Token index of each personal pronoun of ``doc`` -> the entity span it refers to
    (:meth:`Ends.antecedent`: a person for he/she/his/her, else an organisation for
    it/they/their), for the pronouns that have one.

    Example:
        >>> import spacy
        >>> from spacy.tokens import Span
        >>> doc = spacy.blank("en")("Ana Silva called . She left Acme .")
        >>> doc[3].is_sent_start = True
        >>> ana = Span(doc, 0, 2, "PERSON")
        >>> {i: s.text for i, s in pronoun_antecedents(doc, [ana]).items()}
        {4: 'Ana Silva'}
    """
    ends = Ends.of(doc, spans, None)
    out: dict[int, Span] = {}
    for token in doc:
        lower = token.lower_
        label = "PERSON" if lower in _PERSON_PRONOUNS else "ORG" if lower in _ORG_PRONOUNS else None
        if label is None or token.i in ends.by_token:
            continue
        found = ends.antecedent(token, label)
        if found is not None:
            out[token.i] = found
    return out
