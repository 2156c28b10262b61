"""Entity resolution rules: which known entity a mention stands for, decided over plain records.

The index (:mod:`graphmem.index`) owns the rows and the views; what a mention *is* is decided
here, from the mention, the name it already is an alias of, and what the tenant's entities are
called (:class:`KnownEntities`, which a :class:`~graphmem.graph.knowledge_graph.KnowledgeGraph`
is): a lone first or last name joins the unique full PERSON name, a lone first word of an
organisation's name the unique ORG it opens, a lone name NER called a place a person only when
the memory or its conversation writes the person's full name. The mentions a memory adds to
its text's (its author, the entity it is ``about``, names a caller gave) are made here too.

Example:
    >>> from types import SimpleNamespace
    >>> people = SimpleNamespace(
    ...     label_of=lambda key: "PERSON", name_of=lambda key: key.title(),
    ...     keys_with_word=lambda word: {"ravi mehta", "ravi"})
    >>> shortens_only(people, "ravi", "ravi mehta")
    True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import InvalidArgumentError
from .entities import AliasMatcher, Mention, find_mentions
from .entity_types import place_kind
from .normalize import (
    PLACE_LABELS,
    UNKNOWN_LABEL,
    canonical_key,
    may_be_one_entity,
    may_shorten,
    why_not_one_entity,
)

if TYPE_CHECKING:
    from spacy.tokens import Doc

__all__ = [
    "PLACE_PREPOSITIONS",
    "KnownEntities",
    "Resolved",
    "author_mention",
    "given_mentions",
    "may_merge",
    "ner_labels",
    "person_named_nearby",
    "resolve_mention",
    "resolve_named",
    "short_names_of",
    "shortens_only",
    "subject_mention",
    "task_names_kept",
]

#: After these words a lone name NER calls a place stays a place ("lived in Berlin", "met at
#: Berlin"). "From", "to" and "near" come before people too ("a letter from Ayala", "a monument
#: to Piłsudski").
PLACE_PREPOSITIONS = frozenset({"in", "at", "into"})
#: What makes a name in a task's wording a name, not a capitalised word of a title ("Weekly
#: Digest", "Q3 Board Prep"): the user declared it, it is shaped like a person's or an
#: organisation's name, or it is a name the memory knows.
_TASK_NAME_SOURCES = frozenset({"declared", "shape", "known"})


class KnownEntities(Protocol):
    """What resolution reads of one tenant's entities (node keys, their labels and names)."""

    @property
    def alias_keys(self) -> Mapping[str, str]: ...

    def label_of(self, key: str) -> str | None: ...

    def name_of(self, key: str) -> str: ...

    def of_short_name(self, name: str, label: str | None = None) -> str | None: ...

    def resolve(self, name: str) -> str | None: ...

    def keys_with_word(self, word: str) -> Iterable[str]: ...


@dataclass(frozen=True)
class Resolved:
    """What a mention resolves to: the entity ``key`` (None: a new entity under its own key),
    the ``label`` its mention row gets, and whether its name becomes an ``alias`` of it."""

    key: str | None
    label: str
    alias: bool = True


def _label(entities: KnownEntities, key: str) -> str:
    label = entities.label_of(key)
    assert label is not None, key  # the caller passes keys of known entities
    return label


def resolve_mention(
    mention: Mention,
    known: str | None,
    entities: KnownEntities,
    same_as: str | None = None,
    named_in_conversation: Callable[[str], bool] = lambda name: False,
) -> Resolved:
    """The entity ``mention`` stands for; ``known``: the entity its key already names (an
    alias), if any; ``same_as``: the key of a name it stands for ("IBM" in "International
    Business Machines (IBM)"), used when it has none yet; ``named_in_conversation(name)``:
    whether the memory's conversation writes that full name.

    A lone word joins the one entity it may be a short name of: a lone first or last name its
    full PERSON name (a lone "Berlin" NER calls a person is Leslie Berlin, not the city
    "Berlin"), "Northwind" the ORG Northwind Systems. One NER calls a place joins a person
    only when the memory or conversation names them (:func:`person_named_nearby`).
    """
    key = known
    if (
        key is None
        and same_as is not None
        and may_be_one_entity(mention.label, mention.key, _label(entities, same_as), same_as)
    ):
        key = same_as
    if " " not in mention.key and (
        key is None or not may_be_one_entity(mention.label, mention.key, _label(entities, key), key)
    ):
        if mention.label not in PLACE_LABELS:
            key = entities.of_short_name(mention.surface, mention.label) or key
        else:  # no short name by its label alone (one scan of the people, not two)
            person = person_named_nearby(mention, entities, named_in_conversation)
            if person is not None:
                # NER mislabelled this mention; the word becomes no alias of the person.
                return Resolved(person, "PERSON", alias=False)
    return Resolved(key, mention.label)


def person_named_nearby(
    mention: Mention, entities: KnownEntities, named_in_conversation: Callable[[str], bool]
) -> str | None:
    """The unique person a lone name NER called a place may stand for, when the person's
    full name is written in the same memory or conversation, or the name is no place the
    gazetteer knows, and no word of place (:data:`PLACE_PREPOSITIONS`) comes before the
    name, else None.

    "Kiarostami" (GPE) in "Kiarostami won the prize." is Abbas Kiarostami after "Abbas
    Kiarostami was born in Tehran." in the same conversation; "Berlin" in "Leslie Berlin
    lived in Berlin." stays the city, and so does every "Berlin" of other conversations;
    "Kenji" (GPE) in a later memory "Kenji answers to Marisol." is the one Kenji Morimoto.
    """
    person = entities.of_short_name(mention.surface, "PERSON")  # people only
    if person is None:
        return None
    doc = mention.span.doc
    start = mention.span.start
    if start > 0 and doc[start - 1].lower_ in PLACE_PREPOSITIONS:
        return None
    name = entities.name_of(person)
    if place_kind(mention.key) is None or name in doc.text or named_in_conversation(name):
        return person
    return None


def may_merge(entities: KnownEntities, a: str, b: str) -> bool:
    """Whether the entities of node keys ``a`` and ``b`` (different) may become one."""
    label_a, label_b = _label(entities, a), _label(entities, b)
    return a != b and may_be_one_entity(label_a, a, label_b, b)


def resolve_named(entities: KnownEntities, name: str, label: str | None) -> str | None:
    """The entity a name given by hand stands for (None: a new one), by the one label rule:
    its own entity (refused when ``label`` may not be one with it), else the one entity it
    may be a short name of.

    Raises:
        InvalidArgumentError: the name's own entity has a label ``label`` cannot be one with.
    """
    if label is None:
        return entities.resolve(name)
    own = canonical_key(name)
    key = entities.alias_keys.get(own)
    known_label = entities.label_of(key) if key is not None else None
    if key is None or known_label is None:
        return entities.of_short_name(name, label)
    reason = why_not_one_entity(label, own, known_label, key)
    if reason is not None:
        raise InvalidArgumentError(
            f"{name!r} ({label}) cannot be {entities.name_of(key)!r} ({known_label}): {reason}"
        )
    return key


def shortens_only(entities: KnownEntities, short: str, full: str) -> bool:
    """Whether the entity keyed by the lone word ``short`` may be a short name of the entity
    ``full`` and of no other (:func:`~graphmem.extract.normalize.may_shorten`); True when
    ``short`` is no word of ``full`` (an acronym a definition joins is no short name)."""
    if short not in full.split():
        return True
    name, label = entities.name_of(short), _label(entities, short)
    shortened = set()
    for node in entities.keys_with_word(short):
        node_label = entities.label_of(node) if node != short else None
        if node_label is not None and may_shorten(name, label, node, node_label):
            shortened.add(node)
    return shortened == {full}


def short_names_of(entities: KnownEntities, key: str, label: str) -> list[str]:
    """The lone-word entities a new entity ``key`` (of ``label``) absorbs: a lone word known
    before the full name it now shortens ("Northwind" before Northwind Systems, "Ravi" before
    Ravi Mehta), only when it names no other entity, and by the one label rule (a lone
    "Sofia" NER called a place stays apart from Sofia Martin)."""
    if label not in ("ORG", "PERSON") or " " not in key:
        return []
    words = key.split() if label == "PERSON" else key.split()[:1]
    return [
        word
        for word in dict.fromkeys(words)
        if entities.alias_keys.get(word) == word
        and entities.label_of(word) is not None
        and shortens_only(entities, word, key)
    ]


# ------------------------------------------------------------------ a memory's own mentions
def ner_labels(doc: Doc) -> list[str]:
    """The entity labels NER gave in ``doc``, sorted (what a text row records)."""
    return sorted({ent.label_ for ent in doc.ents})


def author_mention(author: str | None, doc: Doc, mentions: list[Mention]) -> list[Mention]:
    """``mentions`` with the person who said the text (``author``) first, unless the text
    names them already: a zero-width span at 0."""
    if author is None:
        return mentions
    key = canonical_key(author)
    if not key or any(m.key == key for m in mentions):
        return mentions
    return [Mention(author, "PERSON", key, 0, 0, 0, len(doc.text), doc[:]), *mentions]


def subject_mention(
    metadata: Mapping[str, Any], entities: KnownEntities, doc: Doc, mentions: list[Mention]
) -> list[Mention]:
    """``mentions`` with the entity the text is about (``about`` metadata; a new entity gets
    the label ``about_label``) last: an MCP observation need not name its entity."""
    about = metadata.get("about")
    if not isinstance(about, str):
        return mentions
    key = canonical_key(about)
    if not key or any(m.key == key for m in mentions):
        return mentions
    known = entities.resolve(about)
    label = metadata.get("about_label")
    if known is not None:
        label = _label(entities, known)
    elif not isinstance(label, str) or not label:
        label = UNKNOWN_LABEL
    pos = len(doc.text) + 1  # a zero-width span of its own (the author's is at 0)
    return [*mentions, Mention(about.strip(), label, key, pos, pos, 0, len(doc.text), doc[:])]


def given_mentions(doc: Doc, names: Sequence[str], entities: KnownEntities) -> list[Mention]:
    """Mentions of caller-supplied entity names (Calute's ``entities=`` argument), each
    labelled as the entity it names (:data:`UNKNOWN_LABEL` for a new one); a name the text
    does not contain gets a zero-width span of its own past the text."""
    matcher = AliasMatcher()
    for name in names:
        known = entities.resolve(name)
        matcher.add(name, (entities.label_of(known) if known else None) or UNKNOWN_LABEL)
    found = find_mentions(doc, matcher, include_ner=False)
    found_keys = {m.key for m in found}
    whole = doc[:]
    for name in names:
        key = canonical_key(name)
        if key and key not in found_keys:
            found_keys.add(key)
            label = matcher.labels.get(name, UNKNOWN_LABEL)
            # Spans key the mentions, so two names absent from the text must not share one
            # (they were not linked).
            pos = len(doc.text) + len(found)
            found.append(Mention(name, label, key, pos, pos, 0, len(doc.text), whole))
    return found


def task_names_kept(
    mentions: Sequence[Mention], head_chars: int, known: Mapping[str, str]
) -> list[Mention]:
    """The mentions of a text whose first ``head_chars`` are its task, less the task's words
    that only the small model took for names: a task mention stays when its result names it
    too, or it is known, declared or shaped like a name (:data:`_TASK_NAME_SOURCES`)."""
    in_body = {m.key for m in mentions if m.start >= head_chars}
    return [
        m
        for m in mentions
        if m.start >= head_chars
        or m.end == 0
        or m.key in in_body
        or m.key in known
        or m.source in _TASK_NAME_SOURCES
    ]
