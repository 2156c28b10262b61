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
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from spacy.schemas import validate_token_pattern

from ..errors import GraphmemError

__all__ = [
    "DECLARED_ID",
    "EntityPatternsError",
    "load_entity_patterns",
    "validate_entity_patterns",
]

#: The id a pattern without one gets: every pattern has an id, so the names patterns find are
#: told from the model's (``Span.ent_id_``).
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
