"""Your own extractor: entities and typed relations from any model, instead of spaCy's rules.

An extractor is any object with ``extract(texts) -> list[Extraction]`` (one extraction per
text, in order), for example a bigger NER model, a fine-tuned relation model or an LLM call.
An :class:`Extraction` lists entities as character spans with a label (``PERSON``, ``ORG`` or
your own, such as ``PROJECT``) and relations between two of them, each with the span of the
text that states it (its evidence). graphmem resolves the entities (canonical names, aliases,
short names and the one label rule), links them and stores everything as it stores its own
extractions; nothing else of the default path runs on those texts (spaCy only splits them
into sentences, for co-occurrence).

Example:
    >>> class Colons:
    ...     "Reads 'subject: predicate: object' lines."
    ...     def extract(self, texts):
    ...         out = []
    ...         for text in texts:
    ...             s, p, o = (part.strip() for part in text.split(":"))
    ...             subject = ExtractedEntity(text.index(s), text.index(s) + len(s), "PERSON")
    ...             obj = ExtractedEntity(text.rindex(o), text.rindex(o) + len(o), "ORG")
    ...             out.append(Extraction([subject, obj], [ExtractedRelation(subject, p, obj)]))
    ...         return out
    >>> [extraction] = checked_extractions(Colons(), ["Alice Johnson: works_at: Acme"])
    >>> [(r.subject.start, r.predicate, r.object.end) for r in extraction.relations]
    [(0, 'works_at', 29)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ..errors import InvalidArgumentError, InvalidArgumentTypeError
from .entity_patterns import check_entity_label

__all__ = [
    "ExtractedEntity",
    "ExtractedRelation",
    "Extraction",
    "Extractor",
    "checked_extractions",
]


@dataclass(frozen=True)
class ExtractedEntity:
    """A name in a text: ``text[start:end]``, with its label (PERSON, ORG, PROJECT ...)."""

    start: int
    end: int
    label: str


@dataclass(frozen=True)
class ExtractedRelation:
    """``subject -predicate-> object`` between two entities of the same extraction.

    ``evidence`` is the ``(start, end)`` span of the text stating it (default: from the start
    of the first entity to the end of the second). ``confidence`` is between 0 and 1.
    """

    subject: ExtractedEntity
    predicate: str
    object: ExtractedEntity
    evidence: tuple[int, int] | None = None
    confidence: float = 1.0


@dataclass(frozen=True)
class Extraction:
    """What an extractor found in one text."""

    entities: Sequence[ExtractedEntity] = ()
    relations: Sequence[ExtractedRelation] = field(default_factory=tuple)


@runtime_checkable
class Extractor(Protocol):
    """What graphmem needs from your extractor: one :class:`Extraction` per text, in order."""

    def extract(self, texts: Sequence[str]) -> Sequence[Extraction]: ...


def checked_extractions(extractor: Extractor, texts: Sequence[str]) -> list[Extraction]:
    """Run ``extractor`` over ``texts`` and check what it returns: one extraction per text,
    spans inside their text, labels upper case, relations between the extraction's own
    entities, predicates non-empty. Relation predicates are normalised as ``add_relation``
    does (``"works at"`` -> ``"works_at"``).

    Raises:
        InvalidArgumentError: naming the text and what is wrong.
    """
    found = list(extractor.extract(list(texts)))
    name = type(extractor).__name__
    if len(found) != len(texts):
        raise InvalidArgumentError(
            f"{name}.extract returned {len(found)} extractions for {len(texts)} texts"
        )
    out: list[Extraction] = []
    for position, (text, extraction) in enumerate(zip(texts, found, strict=True)):
        where = f"{name}.extract: text {position}"
        if not isinstance(extraction, Extraction):
            raise InvalidArgumentTypeError(
                f"{where}: expected an Extraction, got {type(extraction).__name__}"
            )
        entities = list(extraction.entities)
        for entity in entities:
            if not isinstance(entity, ExtractedEntity):
                raise InvalidArgumentTypeError(
                    f"{where}: expected ExtractedEntity, got {type(entity).__name__}"
                )
            if not 0 <= entity.start < entity.end <= len(text):
                raise InvalidArgumentError(
                    f"{where}: entity span {entity.start}..{entity.end} is outside the text "
                    f"(length {len(text)})"
                )
            try:
                check_entity_label(entity.label)
            except InvalidArgumentError as exc:
                raise InvalidArgumentError(f"{where}: {exc}") from None
        known = set(entities)
        relations: list[ExtractedRelation] = []
        for relation in extraction.relations:
            if not isinstance(relation, ExtractedRelation):
                raise InvalidArgumentTypeError(
                    f"{where}: expected ExtractedRelation, got {type(relation).__name__}"
                )
            if relation.subject not in known or relation.object not in known:
                raise InvalidArgumentError(
                    f"{where}: relation {relation.predicate!r} links an entity that is not "
                    "in the extraction's entities"
                )
            predicate = relation.predicate.strip().lower().replace(" ", "_")
            if not predicate:
                raise InvalidArgumentError(f"{where}: a relation has an empty predicate")
            if not 0.0 <= relation.confidence <= 1.0:
                raise InvalidArgumentError(
                    f"{where}: confidence must be between 0 and 1, got {relation.confidence}"
                )
            evidence = relation.evidence or (
                min(relation.subject.start, relation.object.start),
                max(relation.subject.end, relation.object.end),
            )
            if not 0 <= evidence[0] <= evidence[1] <= len(text):
                raise InvalidArgumentError(f"{where}: evidence span {evidence} is outside the text")
            relations.append(
                ExtractedRelation(
                    relation.subject, predicate, relation.object, evidence, relation.confidence
                )
            )
        out.append(Extraction(tuple(entities), tuple(relations)))
    return out
