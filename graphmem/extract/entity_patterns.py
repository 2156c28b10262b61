"""Entity-ruler patterns: the shipped ones of ``models/entity_patterns.jsonl`` and the user's.

A pattern is a spaCy ``EntityRuler`` pattern: ``{"label": "PROJECT", "pattern": "Atlas"}`` (a
phrase, matched as written) or ``{"label": "ORG", "pattern": [{"LOWER": "acme"}]}`` (token
attributes), with an optional ``"id"``. The label is any upper-case name: spaCy's (ORG,
PRODUCT ...) or one the user declares (PROJECT, TEAM). A name a pattern finds keeps the
pattern's label: it is never relabelled from the statement or the gazetteer, nor dropped as a
technical term. Patterns are validated before they reach the pipeline, and an error names the
file and line (or the position in a list) and what is wrong.

Example:
    >>> load_entity_patterns(['{"label": "PROJECT", "pattern": "Atlas"}'])
    [{'label': 'PROJECT', 'pattern': 'Atlas', 'id': 'declared'}]
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from spacy.matcher import Matcher, PhraseMatcher
from spacy.schemas import validate_token_pattern
from spacy.tokens import Doc, Span
from spacy.util import filter_spans
from spacy.vocab import Vocab

from ..errors import GraphmemError, InvalidArgumentError
from .normalize import MODEL_LABELS

__all__ = [
    "DECLARED_ID",
    "NAME_LABELS",
    "DeclaredNames",
    "EntityPatternsError",
    "PatternSource",
    "check_entity_label",
    "load_entity_patterns",
    "read_entity_patterns",
    "validate_entity_patterns",
]

#: What :func:`read_entity_patterns` takes: a JSONL file, or a list of patterns (dicts) or
#: of JSONL lines.
PatternSource = Path | str | Sequence[Mapping[str, Any]] | Sequence[str]
#: The model's labels that name things (graph nodes); its others (DATE, MONEY, CARDINAL ...)
#: are values, never an entity's label.
NAME_LABELS = frozenset(
    {"PERSON", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "FAC", "NORP", "LAW"}
)

#: The id a pattern without one gets: every pattern has an id, so the names patterns find are
#: told from the model's (``Span.id_``).
DECLARED_ID = "declared"
_LABEL = re.compile(r"^[A-Z][A-Z0-9_]*$")
_KEYS = frozenset({"label", "pattern", "id"})


class EntityPatternsError(GraphmemError, ValueError):
    """An entity-pattern file or list is malformed; the message names the line."""


def validate_entity_patterns(
    patterns: Iterable[Mapping[str, Any]], source: str = "patterns"
) -> list[dict[str, Any]]:
    """Check entity-ruler patterns and return them as plain dicts, each with an ``id``.

    Raises:
        EntityPatternsError: naming ``source`` and the position of the first bad pattern.

    Examples:
        >>> validate_entity_patterns([{"label": "TEAM", "pattern": [{"LOWER": "platform"}]}])
        [{'label': 'TEAM', 'pattern': [{'LOWER': 'platform'}], 'id': 'declared'}]
        >>> validate_entity_patterns([{"label": "project", "pattern": "Atlas"}])
        Traceback (most recent call last):
        ...
        graphmem.extract.entity_patterns.EntityPatternsError: patterns[0]: the label must be upper case (A-Z, 0-9, _), got 'project'
    """
    out: list[dict[str, Any]] = []
    for position, raw in enumerate(patterns):
        out.append(_checked(raw, f"{source}[{position}]"))
    return out


def load_entity_patterns(source: Path | str | Sequence[str]) -> list[dict[str, Any]]:
    """Read patterns from a JSONL file (one pattern a line; blank lines and ``#`` comments
    skipped) or from its lines, and validate them.

    Raises:
        EntityPatternsError: naming the file and line of the first bad pattern.
        FileNotFoundError: when the file does not exist.
    """
    if isinstance(source, str | Path):
        name = str(source)
        lines = Path(source).read_text(encoding="utf-8").splitlines()
    else:
        name, lines = "patterns", list(source)
    out: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        where = f"{name}:{number}" if name != "patterns" else f"line {number}"
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise EntityPatternsError(f"{where}: not JSON ({exc.msg})") from None
        out.append(_checked(raw, where))
    return out


def read_entity_patterns(source: PatternSource) -> list[dict[str, Any]]:
    """Validated patterns from a JSONL file (a path), a list of pattern dicts, or a list of
    JSONL lines: what ``EntityMemory.declare_entities`` takes.

    Raises:
        EntityPatternsError: a pattern is malformed (the message names where).
        FileNotFoundError: the file does not exist.

    Examples:
        >>> read_entity_patterns([{"label": "PROJECT", "pattern": "Atlas"}])
        [{'label': 'PROJECT', 'pattern': 'Atlas', 'id': 'declared'}]
        >>> read_entity_patterns(['{"label": "TEAM", "pattern": "Platform"}'])[0]["label"]
        'TEAM'
    """
    if isinstance(source, str | Path):
        return load_entity_patterns(source)
    if not isinstance(source, Sequence):
        raise EntityPatternsError(f"patterns must be a path or a list, got {type(source).__name__}")
    if all(isinstance(line, str) for line in source):
        return load_entity_patterns([str(line) for line in source])
    return validate_entity_patterns(source)  # type: ignore[arg-type]


def check_entity_label(label: object) -> str:
    """``label`` if it may be an entity's label: upper case (A-Z, 0-9, _), and a name label
    of the model's (PERSON, ORG ...) or one of the user's (PROJECT, TEAM); not a value label
    such as DATE or MONEY.

    Raises:
        InvalidArgumentError: naming what is wrong.

    Examples:
        >>> check_entity_label("PROJECT"), check_entity_label("PERSON")
        ('PROJECT', 'PERSON')
        >>> check_entity_label("DATE")
        Traceback (most recent call last):
        ...
        graphmem.errors.InvalidArgumentError: DATE is a value label of the model, not an entity label
    """
    if not isinstance(label, str) or not _LABEL.match(label):
        raise InvalidArgumentError(
            f"an entity label must be upper case (A-Z, 0-9, _), got {label!r}"
        )
    if label in MODEL_LABELS and label not in NAME_LABELS:
        raise InvalidArgumentError(f"{label} is a value label of the model, not an entity label")
    return label


class DeclaredNames:
    """The names the user's patterns find in a Doc: a memory's own entity ruler, run beside
    the shared pipeline (whose ruler holds only the shipped patterns, so one memory's
    declarations never label another memory's names).

    Phrase patterns match as written (spaCy's ``EntityRuler`` default); token patterns as
    their attributes say. ``make_doc`` tokenizes the phrases (the pipeline's tokenizer).

    Example:
        >>> import spacy
        >>> nlp = spacy.blank("en")
        >>> names = DeclaredNames([{"label": "PROJECT", "pattern": "Atlas", "id": "declared"}],
        ...                       nlp.make_doc)
        >>> [(s.text, s.label_) for s in names.spans(nlp.make_doc("Atlas shipped."))]
        [('Atlas', 'PROJECT')]
    """

    def __init__(
        self, patterns: Sequence[Mapping[str, Any]], make_doc: Callable[[str], Doc]
    ) -> None:
        self.patterns = [dict(p) for p in patterns]
        self._make_doc = make_doc
        self._built: tuple[Vocab, Matcher, PhraseMatcher, list[tuple[str, str]]] | None = None

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def _matchers(self, vocab: Vocab) -> tuple[Matcher, PhraseMatcher, list[tuple[str, str]]]:
        if self._built is None or self._built[0] is not vocab:
            tokens, phrases = Matcher(vocab), PhraseMatcher(vocab)
            meaning: list[tuple[str, str]] = []  # match key (its position) -> (label, id)
            for position, pattern in enumerate(self.patterns):
                meaning.append((pattern["label"], pattern["id"]))
                if isinstance(pattern["pattern"], str):
                    phrases.add(str(position), [self._make_doc(pattern["pattern"])])
                else:
                    tokens.add(str(position), [pattern["pattern"]])
            self._built = (vocab, tokens, phrases, meaning)
        return self._built[1], self._built[2], self._built[3]

    def spans(self, doc: Doc) -> list[Span]:
        """The declared names of ``doc``, labelled, with the pattern's id as ``id_``;
        the longest where they overlap."""
        if not self.patterns:
            return []
        tokens, phrases, meaning = self._matchers(doc.vocab)
        found: list[Span] = []
        matches = [*(tokens(doc) if len(tokens) else ()), *(phrases(doc) if len(phrases) else ())]
        for match_id, start, end in matches:
            label, pattern_id = meaning[int(doc.vocab.strings[match_id])]
            found.append(Span(doc, start, end, label=label, span_id=pattern_id))
        return filter_spans(found)


def _checked(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise EntityPatternsError(f"{where}: expected an object, got {type(raw).__name__}")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise EntityPatternsError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}")
    label = raw.get("label")
    if not isinstance(label, str) or not _LABEL.match(label):
        raise EntityPatternsError(
            f"{where}: the label must be upper case (A-Z, 0-9, _), got {label!r}"
        )
    pattern = raw.get("pattern")
    if isinstance(pattern, str):
        if not pattern.strip():
            raise EntityPatternsError(f"{where}: the pattern is empty")
    elif isinstance(pattern, list) and pattern:
        for index, token in enumerate(pattern):
            if not isinstance(token, Mapping) or not token:
                raise EntityPatternsError(
                    f"{where}: token {index} of the pattern must be a non-empty object of "
                    "token attributes"
                )
        problems = validate_token_pattern(pattern)
        if problems:
            raise EntityPatternsError(f"{where}: {problems[0]}")
    else:
        raise EntityPatternsError(
            f"{where}: 'pattern' must be a phrase or a non-empty list of token objects"
        )
    pattern_id = raw.get("id", DECLARED_ID)
    if not isinstance(pattern_id, str) or not pattern_id:
        raise EntityPatternsError(f"{where}: 'id' must be a non-empty string")
    return {"label": label, "pattern": pattern, "id": pattern_id}
