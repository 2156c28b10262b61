"""Analysing stored texts: a text with a head (a task before its result) is two documents.

The facade stores a task result as one text whose whole is Calute's entity-tier content,
``"{task} {result}"``. Run together, the task's last words and the result's first ones read as
one sentence ("Record the new hire Maya Lindqvist started at Lumen Robotics" has no relation;
"Update the CRM Erik Solberg ..." makes "CRM Erik Solberg" a person), so the head and the body
are analysed as separate documents (one ``nlp.pipe`` batch) and joined: their sentences, entities
and parses never cross the seam, and character offsets are those of the stored whole.

Example:
    >>> from graphmem.extract.pipeline import get_analyzer
    >>> [doc] = analyse_texts(get_analyzer(), [("Update the CRM", "Erik Solberg joined Acme.")])
    >>> [ent.text for ent in doc.ents if ent.label_ == "PERSON"]
    ['Erik Solberg']
    >>> [sent.text for sent in doc.sents]
    ['Update the CRM', 'Erik Solberg joined Acme.']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # spaCy's analysed text and span, named here for the layers that carry them without
    # running spaCy (index/, the facade's write path): only extract/ imports spaCy.
    from spacy.tokens import Doc, Span

    from .pipeline import Analyzer

__all__ = ["MAX_ANALYSED_CHARS", "Doc", "Span", "analyse_texts", "whole_text"]

#: Entities are looked for in the first this-many characters of a text (all of it is stored
#: and searchable); analysing megabytes of text on every save would stall the caller.
MAX_ANALYSED_CHARS = 200_000


def whole_text(head: str, body: str) -> str:
    """The whole of a stored text: ``"{head} {body}"``, or the body when there is no head.

    Example:
        >>> whole_text("Audit Acme", "Acme passed"), whole_text("", "Acme passed")
        ('Audit Acme Acme passed', 'Acme passed')
    """
    return f"{head} {body}" if head else body


def analyse_texts(
    analyzer: Analyzer, texts: Sequence[tuple[str, str]], relations: bool = False
) -> list[Doc]:
    """One Doc per ``(head, body)`` text, whose text is :func:`whole_text` (cut to
    :data:`MAX_ANALYSED_CHARS`); the head and the body are analysed apart.

    A text the join cannot reproduce exactly (a head ending in whitespace, a whole longer than
    the limit) is analysed whole.
    """
    from spacy.tokens import Doc

    pieces: list[str] = []
    plans: list[tuple[int, int]] = []  # (first piece, number of pieces) per text
    for head, body in texts:
        whole = whole_text(head, body)
        if head and head == head.rstrip() and len(whole) <= MAX_ANALYSED_CHARS:
            plans.append((len(pieces), 2))
            pieces.extend((head, body))
        else:
            plans.append((len(pieces), 1))
            pieces.append(whole[:MAX_ANALYSED_CHARS])
    docs = analyzer.analyse(pieces, relations=relations)
    out: list[Doc] = []
    for first, count in plans:
        if count == 1:
            out.append(docs[first])
        else:
            out.append(Doc.from_docs([docs[first], docs[first + 1]], ensure_whitespace=True))
    return out
