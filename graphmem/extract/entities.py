"""Entity mentions in analysed text: NER spans, plus names the tenant's memory already knows.

Example:
    >>> from graphmem.extract.pipeline import get_analyzer
    >>> doc = get_analyzer().analyse(["Alice Johnson joined Acme Corp in Berlin."])[0]
    >>> [(m.surface, m.label, m.key) for m in find_mentions(doc)]
    [('Alice Johnson', 'PERSON', 'alice johnson'), ('Acme Corp', 'ORG', 'acme'), ('Berlin', 'GPE', 'berlin')]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .entity_patterns import DeclaredNames
from .entity_types import (
    NAME_PARTICLES,
    descriptor_label,
    framed_label,
    is_common_word,
    is_first_name,
    label_and_source,
    person_shaped,
    place_kind,
)
from .extractor import ExtractedEntity, Extraction
from .known_names import KnownNames
from .normalize import (
    MODEL_LABELS,
    TUNED_MODEL_LABELS,
    canonical_key,
    is_acronym,
    is_valid_entity_text,
    name_text,
)
from .vocabulary import (
    POSSESSIVES,
    business_terms,
    interjections,
    leading_words,
    organisation_heads,
    organisation_names,
    role_titles,
)

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token

__all__ = [
    "GRAPH_LABELS",
    "AliasMatcher",
    "Mention",
    "acronym_definitions",
    "business_terms",
    "extracted_mentions",
    "extracted_span",
    "extraction_doc",
    "extraction_of",
    "find_mentions",
    "is_graph_label",
    "organisation_heads",
    "organisation_names",
    "relation_spans",
    "unnamed_names",
]

#: Entity labels of the model that become graph nodes; dates and numbers stay attributes of
#: memories. Labels the user declares (PROJECT, TEAM ...) become graph nodes too.
GRAPH_LABELS = frozenset(
    {"PERSON", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "FAC", "NORP", "LAW"}
)
_DETERMINERS = frozenset({"the", "a", "an"})
#: Prepositions that join a role to its organisation ("CTO of Lumen Robotics").
_ROLE_PREPOSITIONS = frozenset({"of", "at"})
#: Punctuation after which a heading ends and the name begins ("Focus: UAT fixes").
_HEADING_MARKS = frozenset({":", ";"})
#: Titles, which may hold a colon ("Star Wars: A New Hope").
_TITLE_LABELS = frozenset({"WORK_OF_ART", "LAW"})
#: Names that may hold a preposition of place ("Love in Paris", "Summit in Davos").
_UNSPLIT_LABELS = _TITLE_LABELS | {"EVENT"}
#: Labels whose NER spans may have swallowed the word opening a log entry ("Screened ...").
_PERSON_OR_ORG = frozenset({"PERSON", "ORG"})
#: Prepositions before a place that an NER span may run across ("Sanne de Wit *in* Ghent");
#: never "of", which is part of names ("Bank of Montreal").
_PLACE_PREPOSITIONS = frozenset({"in", "at", "near", "from"})
#: Labels whose names may end in a lower-case common noun ("Rogaland county", "Black sea").
_LOWER_END_LABELS = frozenset({"GPE", "LOC", "FAC", "WORK_OF_ART", "LAW", "EVENT"})
#: Magnitudes the tokenizer splits from their number ("3.1M" -> "3.1", "M").
_MAGNITUDES = frozenset({"k", "m", "b", "bn", "mn", "mm"})
#: Clock times and calendar periods ("07:00", "7pm", "Q3", "H1", "FY2025").
_TIME = re.compile(
    r"^\d{1,2}[:.]\d{2}(?::\d{2})?(?:[ap]\.?m\.?)?$|^\d{1,2}[ap]\.?m\.?$"
    r"|^(?:Q[1-4]|H[12]|FY\d{2}(?:\d{2})?)$",
    re.I,
)
_AMOUNT = re.compile(
    r"^[$\u20ac\u00a3\u00a5]\d[\d,.]*(?:[kmb]n?)?$|^\d[\d,.]*(?:[kmb]n?|mm)$", re.I
)
#: Ticket, issue and order ids ("SUP-1012", "INC0042317", "#4521").
_IDENTIFIER = re.compile(r"^[A-Za-z]{2,}[-_]?\d{3,}$|^#\d+$")


def is_graph_label(label: str) -> bool:
    """Tell whether entities labelled ``label`` become graph nodes: the model's name labels,
    and every label the model does not have (declared by the user: PROJECT, TEAM).

    Examples:
        >>> [is_graph_label(x) for x in ("ORG", "PROJECT", "DATE", "CARDINAL")]
        [True, True, False, False]
    """
    return label in GRAPH_LABELS or label not in MODEL_LABELS


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
    #: What gave the label (:data:`~graphmem.extract.entity_types.LABEL_SOURCES`): how much
    #: this mention counts in its entity's type vote.
    source: str = "model"

    def __post_init__(self) -> None:
        cleaned = name_text(self.surface)  # the one rule for names (control characters)
        if cleaned != self.surface:
            object.__setattr__(self, "surface", cleaned)
            object.__setattr__(self, "key", canonical_key(cleaned) or self.key)


def relation_spans(
    labelled: Iterable[tuple[Mention, str]], speaker_key: str | None = None
) -> tuple[list[Span], Span | None]:
    """The entity spans the relation rules read, each with the label given beside its mention
    (its entity's voted label, not the sentence's NER guess), and the span of the speaker
    (the mention whose key is ``speaker_key``, or ``None``). A mention of no text (the author
    of a memory that does not name them) is the speaker only: as an entity span it would
    cover the whole text.

    Example:
        >>> from graphmem.extract.pipeline import get_analyzer
        >>> doc = get_analyzer().nlp("Alice joined Acme.")
        >>> alice = Mention("Alice", "ORG", "alice", 0, 5, 0, 18, doc[0:1])
        >>> spans, speaker = relation_spans([(alice, "PERSON")], speaker_key="alice")
        >>> [(s.text, s.label_) for s in spans], speaker.text
        ([('Alice', 'PERSON')], 'Alice')
    """
    from spacy.tokens import Span

    spans: list[Span] = []
    speaker: Span | None = None
    for mention, label in labelled:
        doc = mention.span.doc
        span = (
            Span(doc, mention.span.start, mention.span.end, label=label)
            if mention.end > mention.start
            else None
        )
        if span is not None:
            spans.append(span)
        if speaker_key is not None and mention.key == speaker_key and speaker is None:
            speaker = span if span is not None else Span(doc, 0, 0, label=label)
    return spans, speaker


class AliasMatcher:
    """Finds the names a tenant's memory already knows in a Doc, so they are recognised
    every time (:class:`~graphmem.extract.known_names.KnownNames`: multi-word names and names
    with inner capitals match case-insensitively; single words as written, so a person called
    "Will" does not match the verb "will")."""

    def __init__(self) -> None:
        self.names = KnownNames()

    @property
    def labels(self) -> dict[str, str]:
        """The label of each name taught, by the name and its lower-case form."""
        return self.names.labels

    def add(self, surface: str, label: str) -> None:
        """Teach the matcher one name."""
        self.names.add(surface, label)

    def spans(self, doc: Doc) -> list[Span]:
        """Known names in ``doc`` as labelled spans (those that fall on its tokens)."""
        out: list[Span] = []
        for start, end, label in self.names.find(doc.text):
            span = doc.char_span(start, end, label=label)
            if span is not None:
                out.append(span)
        return out


def unnamed_names(doc: Doc) -> list[Span]:
    """Names the model did not find whole, from the tagger's proper nouns: a run of proper
    nouns (name particles such as "de" between them) shaped like a person's name
    (:func:`~graphmem.extract.entity_types.person_shaped`: "Sanne de Vries", "Beatriz Olmedo"
    where the model saw only "Olmedo"), labelled PERSON, or one a describing noun types
    ("Canopy, the depot-automation project": PROJECT). Words inside a date, amount or other
    non-name entity, role titles, business terms and the words that open log entries are no
    part of one. Needs a tagged doc (empty otherwise).

    Example:
        >>> from graphmem.extract.pipeline import get_analyzer
        >>> text = "Tobias Lund met Sanne de Vries in Oslo."
        >>> doc = get_analyzer().analyse([text], relations=True)[0]
        >>> [(s.text, s.label_) for s in unnamed_names(doc)]
        [('Tobias Lund', 'PERSON'), ('Sanne de Vries', 'PERSON')]
    """
    from spacy.tokens import Span

    if not doc.has_annotation("TAG"):
        return []
    excluded = {i for e in doc.ents if not is_graph_label(e.label_) for i in range(e.start, e.end)}
    out: list[Span] = []
    start: int | None = None
    for token in [*doc, None]:
        inside = (
            token is not None
            and token.i not in excluded
            and (
                (token.pos_ == "PROPN" and token.text[:1].isupper() and _may_be_name_word(token))
                or (start is not None and token.lower_ in NAME_PARTICLES)
            )
            and not (start is not None and token.is_sent_start)
        )
        if inside:
            start = token.i if start is None else start
            continue
        if start is not None:
            end = token.i if token is not None else len(doc)
            while end > start and doc[end - 1].lower_ in NAME_PARTICLES:
                end -= 1
            found = _name_in_run(Span(doc, start, end)) if end > start else None
            if found is not None:
                out.append(found)
        start = None
        if token is not None and token.pos_ == "PROPN" and _may_be_name_word(token):
            start = None if token.i in excluded else token.i  # a run may start a sentence
    return out


def _may_be_name_word(token: Token) -> bool:
    lower = token.lower_
    opening = _opens_statement(token)
    return (
        token.is_alpha
        and lower not in business_terms()
        and lower not in interjections()
        and canonical_key(token.text) not in role_titles()
        and not (opening and lower in leading_words())
    )


def _name_in_run(run: Span) -> Span | None:
    """The name a run of proper nouns holds: its longest person-shaped tail, labelled PERSON
    (a capitalised word before a name is not part of it: "Met *Tobias Lund*"), else the
    whole run labelled as a describing noun or the statement's frame says ("left
    *Marrowind*", "*Quell* hired ..."), else None."""
    from spacy.tokens import Span

    doc = run.doc
    for start in range(run.start, run.end - 1):
        if person_shaped(doc[start : run.end]):
            return Span(doc, start, run.end, label="PERSON")
    first = run[0]
    if (
        len(run) == 1
        and _opens_statement(first)
        and is_common_word(first)
        and not is_first_name(first.text)
        and not (run.end < len(doc) and doc[run.end].text == ",")
    ):
        return None  # "Summary of ...": a common word opening a statement; a name set off
        # by its apposition may be one ("Lanternfish, the warehouse-mapping project, ...")
    label = descriptor_label(run) or framed_label(run)
    return Span(doc, run.start, run.end, label=label) if label is not None else None


def _split_at_commas(span: Span) -> list[Span]:
    """The parts of an NER span between its commas, and before a preposition of place that
    runs it into a place: the small model runs a name into the apposition after it ("Wendell
    Park, Fernhollow's chief executive" as one FAC) or the place after it ("Sanne de Wit in
    Ghent", "Brightwater Health in Toronto"). Two names a comma separates are two mentions
    ("Paris, Texas" is two places); titles keep their words ("Love in Paris").

    Example:
        >>> from spacy.tokens import Span
        >>> from graphmem.extract.pipeline import get_analyzer
        >>> doc = get_analyzer().nlp.make_doc("Wendell Park, Fernhollow's CEO, spoke in Oslo.")
        >>> [p.text for p in _split_at_commas(Span(doc, 0, 5, label="FAC"))]
        ['Wendell Park', "Fernhollow's"]
        >>> doc = get_analyzer().nlp.make_doc("Sanne de Wit in Ghent")
        >>> [p.text for p in _split_at_commas(Span(doc, 0, 5, label="PERSON"))]
        ['Sanne de Wit', 'Ghent']
    """
    from spacy.tokens import Span

    cuts = [
        t.i
        for t in span
        if t.text == ","
        or (
            span.label_ not in _UNSPLIT_LABELS
            and t.i > span.start
            and t.i + 1 < span.end
            and span.doc[t.i + 1].is_title
            and (
                t.lower_ in _PLACE_PREPOSITIONS
                # a person's name never goes on with "of": "Owain Prosser of Kittering Power"
                or (t.lower_ == "of" and person_shaped(span.doc[span.start : t.i]))
            )
        )
    ]
    if not cuts:
        return [span]
    bounds = [span.start, *cuts, span.end]
    parts = [
        Span(span.doc, a + (1 if a in cuts else 0), b, label=span.label_)
        for a, b in zip(bounds, bounds[1:], strict=False)
    ]
    return [p for p in parts if len(p) > 0]


def _without_opening_word(span: Span) -> list[Span]:
    """An NER span less the common English word that opens its statement ("*Screened*
    Tendai Mutasa", "*Champion* Owain Prosser"), or nothing when that word is all of it
    ("*Discovery* call with ...", "*Intro* call"): a capitalised word at the start of a
    sentence or after a colon is a name only if it is none of the lemmatizer's words (or a
    given name), or the word after it is one too ("International Business Machines"); alone,
    it is dropped only where it modifies a common noun after it (the lemmatizer's words
    include famous names: "Chiluba won").
    The doc needs the lemmatizer's tables (kept as it is otherwise).

    Example:
        >>> from spacy.tokens import Span
        >>> from graphmem.extract.pipeline import get_analyzer
        >>> doc = get_analyzer().nlp.make_doc("Screened Tendai Mutasa today.")
        >>> [s.text for s in _without_opening_word(Span(doc, 0, 3, label="ORG"))]
        ['Tendai Mutasa']
    """
    from spacy.tokens import Span

    first = span[0]
    if (
        span.label_ in _UNSPLIT_LABELS  # a title may open with a verb ("Know Your Enemy")
        or not _opens_statement(first)
        or not first.is_title
        or is_first_name(first.text)
        or not is_common_word(first)
        or place_kind(canonical_key(span.text)) is not None  # "Reading", "Lake Bled"
    ):
        return [span]
    if len(span) == 1:  # "Discovery call with ...": no product; "Google hired": a company
        head = first.head
        modifies_a_noun = (
            first.dep_ in ("compound", "amod", "nmod") and head.pos_ == "NOUN" and head.is_lower
        )
        return [] if modifies_a_noun and span.label_ not in _PERSON_OR_ORG else [span]
    if span.label_ not in _PERSON_OR_ORG:
        return [span]  # places and things may open with a common noun ("Lake Bled")
    rest = span[1]
    if is_common_word(rest) and not is_first_name(rest.text):
        return [span]  # "International Business Machines": the name starts with the word
    return [Span(span.doc, span.start + 1, span.end, label=span.label_)]


@dataclass(frozen=True)
class _Candidates:
    """The spans :func:`find_mentions` chooses among, and the extents (start, end) that came
    from known names, organisation shapes and runs of proper nouns (:func:`unnamed_names`)."""

    spans: list[Span]
    known: frozenset[tuple[int, int]]
    organisations: frozenset[tuple[int, int]]
    runs: frozenset[tuple[int, int]]

    @classmethod
    def of(
        cls,
        doc: Doc,
        known: AliasMatcher | None,
        include_ner: bool,
        declared: DeclaredNames | None,
    ) -> _Candidates:
        """The model's spans (split at commas, less an opening word), then known names, then
        organisation shapes, then runs of proper nouns of no other extent: ``filter_spans``
        keeps the first of a tie. Declared names come first and drop what they overlap."""
        spans = (
            [
                name
                for e in doc.ents
                if is_graph_label(e.label_)
                for part in _split_at_commas(e)
                for name in _without_opening_word(part)
            ]
            if include_ner
            else []
        )
        known_spans = known.spans(doc) if known is not None else []
        organisations = organisation_names(doc) if include_ner else []
        spans.extend(known_spans)
        spans.extend(organisations)  # after the model's: a tie keeps the model's span
        taken_extents = {(span.start, span.end) for span in spans}
        named_runs = [
            span
            for span in (unnamed_names(doc) if include_ner else [])
            if (span.start, span.end) not in taken_extents
        ]
        spans.extend(named_runs)  # last: the model's, known and organisation spans win ties
        declared_spans = declared.spans(doc) if declared else []
        if declared_spans:
            taken = {i for span in declared_spans for i in range(span.start, span.end)}
            spans = declared_spans + [
                s for s in spans if not taken.intersection(range(s.start, s.end))
            ]
        return cls(
            spans,
            frozenset((span.start, span.end) for span in known_spans),
            frozenset((span.start, span.end) for span in organisations),
            frozenset((span.start, span.end) for span in named_runs),
        )

    def label_and_source(
        self, span: Span, text: Span, key: str, person_words: set[str]
    ) -> tuple[str, str]:
        """The label of the mention ``text`` (``span`` trimmed) and what gave it
        (:data:`~graphmem.extract.entity_types.LABEL_SOURCES`)."""
        extent = (span.start, span.end)
        label = span.label_
        if span.id_:
            return label, "declared"  # a declared pattern's label
        if extent in self.runs:
            return label, "shape" if label == "PERSON" else "descriptor"
        if label not in MODEL_LABELS:  # a type the small model does not have
            if extent in self.known:
                return label, "known"
            # PROJECT or TEAM from the fine-tuned NER (models/agent_ner), else declared
            return label, "model" if label in TUNED_MODEL_LABELS else "declared"
        if extent in self.organisations:
            return "ORG", "shape"  # "Vertex Labs", which the model calls a person
        label, source = label_and_source(text, label, key, person_words)
        if source == "model" and extent in self.known:
            source = "known"  # the entity's own label, found again
        return label, source


def find_mentions(
    doc: Doc,
    known: AliasMatcher | None = None,
    max_mentions: int = 500,
    include_ner: bool = True,
    declared: DeclaredNames | None = None,
) -> list[Mention]:
    """Entity mentions of ``doc`` in text order: NER spans of graph labels plus known names.

    Names the user declared (``declared``: the memory's patterns) come first: they keep their
    label, and no other span that overlaps one is kept (the declaration corrects the model).

    Where a known name, an NER span or a name shaped like an organisation's
    (:func:`organisation_names`) overlap, the longer wins (ties: the NER span, which an
    organisation's shape relabels ORG). A mention's label is otherwise the model's, corrected
    by the statement around it and the gazetteer
    (:func:`~graphmem.extract.entity_types.corrected_label`), save for names of declared
    patterns (entity-ruler spans, which all have an id) and labels the model does not have.
    What the model tags but names nothing is left out: amounts, times, ids, technical terms
    (unless the memory knows the name or the user declared it).
    """
    from spacy.tokens import Span
    from spacy.util import filter_spans

    candidates = _Candidates.of(doc, known, include_ner, declared)
    person_words = {
        token.lower_ for span in candidates.spans if span.label_ == "PERSON" and len(span) > 1
        for token in span
    }  # fmt: skip
    mentions: list[Mention] = []
    has_sentences = doc.has_annotation("SENT_START")
    for span in sorted(filter_spans(candidates.spans), key=lambda s: s.start):
        is_declared = bool(span.id_)  # entity-ruler spans: shipped and declared patterns
        text = _trim(span, trusted=is_declared or (span.start, span.end) in candidates.known)
        if text is None:
            continue
        surface = text.text
        key = canonical_key(surface)
        if not key or key in role_titles():
            continue
        label, source = candidates.label_and_source(span, text, key, person_words)
        if label != text.label_:
            text = Span(doc, text.start, text.end, label=label)
        sent = text.sent if has_sentences else doc[:]
        mentions.append(
            Mention(
                surface=surface,
                label=label,
                key=key,
                start=text.start_char,
                end=text.end_char,
                sent_start=sent.start_char,
                sent_end=sent.end_char,
                span=text,
                source=source,
            )
        )
        if len(mentions) >= max_mentions:
            break
    return mentions


#: Where :func:`extraction_doc` keeps a Doc's extraction (``Doc.user_data``).
_EXTRACTION = "graphmem.extraction"


def extraction_doc(nlp: Language, text: str, extraction: Extraction) -> Doc:
    """A Doc of ``text`` carrying what the user's extractor found in it: tokens, sentences
    (the pipeline's sentencizer, for co-occurrence) and the extraction's entities as its
    ``ents`` (the longest where they overlap); no tagger, parser or NER runs.

    Example:
        >>> from graphmem.extract.pipeline import get_analyzer
        >>> from graphmem.extract.extractor import ExtractedEntity, Extraction
        >>> found = Extraction([ExtractedEntity(0, 5, "PROJECT")])
        >>> doc = extraction_doc(get_analyzer().nlp, "Atlas went live.", found)
        >>> [(e.text, e.label_) for e in doc.ents], extraction_of(doc) is found
        ([('Atlas', 'PROJECT')], True)
    """
    from spacy.util import filter_spans

    doc = nlp.make_doc(text)
    if "sentencizer" in nlp.pipe_names:
        doc = nlp.get_pipe("sentencizer")(doc)
    spans = [extracted_span(doc, entity) for entity in extraction.entities]
    doc.ents = filter_spans(spans)
    doc.user_data[_EXTRACTION] = extraction
    return doc


def extraction_of(doc: Doc) -> Extraction | None:
    """The user's extraction :func:`extraction_doc` put in ``doc``, or None."""
    found = doc.user_data.get(_EXTRACTION)
    return found if isinstance(found, Extraction) else None


def extracted_span(doc: Doc, entity: ExtractedEntity) -> Span:
    """The tokens of ``doc`` an extracted entity covers (widened to whole tokens)."""
    span = doc.char_span(entity.start, entity.end, label=entity.label, alignment_mode="expand")
    assert span is not None  # "expand" always finds tokens for a non-empty span in the text
    return span


def extracted_mentions(doc: Doc, extraction: Extraction) -> list[Mention]:
    """The mentions of an extraction's entities, in text order, one per span, at the
    extractor's character offsets (its tokens may differ from spaCy's); names without a
    letter or key (``"42"``) are left out."""
    has_sentences = doc.has_annotation("SENT_START")
    out: dict[tuple[int, int], Mention] = {}
    for entity in extraction.entities:
        surface = doc.text[entity.start : entity.end]
        key = canonical_key(surface)
        if not key or not is_valid_entity_text(surface):
            continue
        span = extracted_span(doc, entity)
        sent = span.sent if has_sentences else doc[:]
        out.setdefault(
            (entity.start, entity.end),
            Mention(
                surface=surface,
                label=entity.label,
                key=key,
                start=entity.start,
                end=entity.end,
                sent_start=sent.start_char,
                sent_end=sent.end_char,
                span=span,
                source="declared",  # the user's extractor decides
            ),
        )
    return sorted(out.values(), key=lambda m: m.start)


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


def _trim(span: Span, trusted: bool = False) -> Span | None:
    """The name inside a recognised span, or None when no name is left.

    Words that are never part of a name are dropped from either end: determiners, punctuation
    and possessives, interjections ("Omg Caroline"), verbs (a lower-case word tagged as one
    where the tagger ran, or a word of ``models/leading_words.txt`` opening a sentence:
    "Research Acme Corporation", "Logged Harbor Analytics", "Last Beacon"), times and amounts ("07:00 Berlin"), numerals at the
    ends of a person's name (task and result text run together: "... sprint 7 Sara Kim
    approved it"), lower-case words at the end ("Atlas anomaly model on"), a heading before a
    colon ("Focus: ...", not in a title), and a leading role ("CTO of Lumen Robotics").

    Unless ``trusted`` (a name the memory knows, or a declared pattern), a span holding an id
    ("Ticket SUP-1012"), made only of numbers, or only of a term of ``models/business_terms.txt``
    ("UAT", "EUR") is no name, and such a term at its end (or at the start of a person's name)
    is cut off ("Atlas UAT", "CRM Erik Solberg").
    """
    from spacy.tokens import Span

    doc = span.doc
    label = span.label_
    start, end = span.start, span.end
    if (
        label not in _TITLE_LABELS
        and end - start > 2
        and doc[start + 1].text in _HEADING_MARKS
        and doc[start].is_sent_start
    ):
        start += 2  # "Focus: UAT fixes", a one-word heading; not "Extreme Makeover: Home Edition"
    start = _after_role(doc, start, end)
    while start < end and _outside_name(doc[start], label, opening=True, trusted=trusted):
        start += 1
    while end > start and _outside_name(doc[end - 1], label, opening=False, trusted=trusted):
        end -= 1
    end = _before_lower_tail(doc, start, end, label)
    if start >= end:
        return None
    trimmed = Span(doc, start, end, label=label)
    if not trusted and (
        any(_IDENTIFIER.match(token.text) for token in trimmed)
        or all(_is_number(token) for token in trimmed)
        or _is_numbered_term(trimmed)
    ):
        return None
    return trimmed if is_valid_entity_text(trimmed.text) else None


def _before_lower_tail(doc: Doc, start: int, end: int, label: str) -> int:
    """Where ``doc[start:end]`` ends once lower-case words that run past the name are cut.

    A span ending in a lower-case function word ran on ("Atlas anomaly model on": every
    lower-case word before it goes too); a person's or organisation's name does not end in a
    lower-case word ("Aurex marketing"), save after a hyphen ("Chan-o-cha") or where the
    whole name is lower case ("danah boyd"). Places and titles may ("Rogaland county").
    """
    cut = end
    if doc[cut - 1].is_lower and doc[cut - 1].is_stop:
        cut -= 1
        while cut > start and doc[cut - 1].is_lower and doc[cut - 1].is_alpha:
            cut -= 1
        return cut if cut > start else end
    if label in _LOWER_END_LABELS:
        return end
    while cut > start and doc[cut - 1].is_lower and doc[cut - 1].is_alpha:
        if doc[cut - 1].is_stop or (cut - 2 >= start and doc[cut - 2].text in ("-", "\u2013")):
            return end  # "Reyes de la canción", "Chan-o-cha": particles of the name
        cut -= 1
    return cut if cut > start else end


def _is_numbered_term(span: Span) -> bool:
    """Whether ``span`` is a term of ``models/business_terms.txt``, maybe numbered ("UAT",
    "Sprint 5", "Phase 2")."""
    words = [token for token in span if not _is_number(token)]
    return bool(words) and canonical_key(" ".join(t.text for t in words)) in business_terms()


def _after_role(doc: Doc, start: int, end: int) -> int:
    """Where the name starts in ``doc[start:end]`` once a leading role ("CTO of") is cut off."""
    for index in range(start + 1, end - 1):
        if doc[index].lower_ in _ROLE_PREPOSITIONS:
            if canonical_key(doc[start:index].text) in role_titles():
                return index + 1
            break
    return start


def _is_number(token: Token) -> bool:
    """Whether ``token`` is a number, an amount ("210k", "$5", the "M" of "3.1M") or a time
    ("07:00", "Q3")."""
    text = token.text
    if text.lower() in _MAGNITUDES:
        return token.i > 0 and token.nbor(-1).like_num
    return token.like_num or bool(_AMOUNT.match(text) or _TIME.match(text))


def _opens_statement(token: Token) -> bool:
    """Whether ``token`` opens a sentence, or what follows a colon ("Result: Deployed ...")."""
    return bool(token.is_sent_start) or (token.i > 0 and token.nbor(-1).text == ":")


def _is_term_acronym(token: Token) -> bool:
    return token.lower_ in business_terms() and is_acronym(token.text)


def _outside_name(token: Token, label: str, *, opening: bool, trusted: bool = False) -> bool:
    """Whether ``token``, at the start (``opening``) or end of a span, is not part of the name."""
    lower = token.lower_
    if token.is_punct or lower in interjections():
        return True
    if token.pos_ in ("VERB", "AUX") and token.is_lower:
        return True  # "Sara Kim approved"; a capitalised one is a title's ("Know Your Enemy")
    if label == "PERSON" and token.like_num and any(ch.isdigit() for ch in lower):
        return True
    if (
        _TIME.match(token.text)
        or _AMOUNT.match(token.text)
        or (lower in _MAGNITUDES and _is_number(token))
    ):
        return True  # "07:00 Berlin", "EUR 210k"; a bare integer may end a name ("Windows 10")
    if not trusted and _is_term_acronym(token) and (not opening or label == "PERSON"):
        return True  # "Atlas UAT", "CRM Erik Solberg"
    if opening:
        return lower in _DETERMINERS or (_opens_statement(token) and lower in leading_words())
    return lower in POSSESSIVES
