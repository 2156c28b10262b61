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
import re._parser as regex_parser  # the stdlib's own parse of a regex (Python >= 3.11)
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import GraphmemError, InvalidArgumentError
from .normalize import MODEL_LABELS

if TYPE_CHECKING:
    from spacy.matcher import Matcher, PhraseMatcher
    from spacy.tokens import Doc, Span
    from spacy.vocab import Vocab

__all__ = [
    "DECLARED_ID",
    "NAME_LABELS",
    "DeclaredNames",
    "EntityPatternsError",
    "PatternSource",
    "check_entity_label",
    "load_entity_patterns",
    "read_entity_patterns",
    "read_patterns_file",
    "try_entity_patterns",
    "usable_patterns",
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
        EntityPatternsError: naming the file and line of the first bad pattern, or why the
            file cannot be read.
    """
    if isinstance(source, str | Path):
        name = str(source)
        lines = read_patterns_file(Path(source))
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
        except RecursionError:
            raise EntityPatternsError(f"{where}: nests too deeply") from None
        out.append(_checked(raw, where))
    return out


def read_patterns_file(path: Path) -> list[str]:
    """The lines of a patterns file.

    Raises:
        EntityPatternsError: the file does not exist, is a directory, cannot be read, or is
            not UTF-8 text.
    """
    shown = str(path)[:200]
    try:
        if path.is_dir():
            raise EntityPatternsError(f"{shown}: is a directory, not a patterns file")
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise EntityPatternsError(
            f"{shown}: not UTF-8 text (byte {exc.start}: {exc.reason})"
        ) from None
    except FileNotFoundError:
        raise EntityPatternsError(f"{shown}: no such file") from None
    except (OSError, ValueError) as exc:  # permissions, a name too long, a NUL in the path
        raise EntityPatternsError(f"{shown}: cannot read the patterns file ({exc})") from None


def read_entity_patterns(source: PatternSource) -> list[dict[str, Any]]:
    """Validated patterns from a JSONL file (a path), a list of pattern dicts, or a list of
    JSONL lines: what ``EntityMemory.declare_entities`` takes.

    Raises:
        EntityPatternsError: a pattern is malformed (the message names where), or the file
            cannot be read.

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
        from spacy.matcher import Matcher, PhraseMatcher

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
        from spacy.tokens import Span
        from spacy.util import filter_spans

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
    from spacy.schemas import validate_token_pattern

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
    _check_values(pattern, where)
    _check_values(pattern_id, where)
    return {"label": label, "pattern": pattern, "id": pattern_id}


def _check_values(value: Any, where: str) -> None:
    """Every string of a pattern is Unicode text, and every ``REGEX`` value compiles and
    runs in time linear in the token (no nested repeats such as ``(a+)+``: spaCy runs it on
    every token of every save)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise EntityPatternsError(f"{where}: the pattern is not valid Unicode text") from None
    elif isinstance(value, Mapping):
        for key, inner in value.items():
            _check_values(key, where)
            _check_values(inner, where)
            if key == "REGEX":
                _check_regex(inner, where)
    elif isinstance(value, list | tuple):
        for inner in value:
            _check_values(inner, where)


def _check_regex(expression: Any, where: str) -> None:
    if not isinstance(expression, str):
        raise EntityPatternsError(f"{where}: a REGEX must be a string, got {expression!r}")
    try:
        parsed = regex_parser.parse(expression)
    except re.error as exc:
        raise EntityPatternsError(
            f"{where}: REGEX {expression!r} does not compile ({exc})"
        ) from None
    except RecursionError:
        raise EntityPatternsError(f"{where}: REGEX {expression!r} nests too deeply") from None
    if _nested_repeat(parsed.data if hasattr(parsed, "data") else list(parsed), False):
        raise EntityPatternsError(
            f"{where}: REGEX {expression!r} repeats a repeat (as in (a+)+), which can take "
            "exponential time on one token; write it without the nested repeat"
        )


_REPEATS = {regex_parser.MAX_REPEAT, regex_parser.MIN_REPEAT}


def _nested_repeat(items: Any, inside: bool) -> bool:
    """Whether a parsed regex holds an unbounded or many-times repeat inside another."""
    for op, av in items:
        if op in _REPEATS:
            low, high, sub = av
            many = high is regex_parser.MAXREPEAT or high > 1
            if many and inside:
                return True
            if _nested_repeat(sub, inside or many):
                return True
        elif op is regex_parser.SUBPATTERN:
            if _nested_repeat(av[-1], inside):
                return True
        elif op is regex_parser.BRANCH:
            if any(_nested_repeat(branch, inside) for branch in av[1]):
                return True
        elif op in (regex_parser.ATOMIC_GROUP, regex_parser.ASSERT, regex_parser.ASSERT_NOT):
            sub = av if op is regex_parser.ATOMIC_GROUP else av[1]
            if _nested_repeat(sub, inside):
                return True
    return False


def usable_patterns(
    patterns: Sequence[Mapping[str, Any]], make_doc: Callable[[str], Doc]
) -> list[dict[str, Any]]:
    """The stored patterns spaCy can use; one it cannot (stored by a graphmem that did not
    try patterns first) is left out with a warning naming it, so that it fails no save
    (remove it with ``undeclare``)."""
    out: list[dict[str, Any]] = []
    for pattern in patterns:
        try:
            checked = _checked(pattern, "a declared pattern")
            try_entity_patterns([checked], make_doc)
        except EntityPatternsError as exc:
            warnings.warn(
                f"declared pattern {json.dumps(pattern, ensure_ascii=True)[:200]} is not used: "
                f"{exc} (remove it: graphmem undeclare {pattern.get('label')})",
                stacklevel=2,
            )
            continue
        out.append(checked)
    return out


#: A text declared patterns are tried on before they are stored.
_PROBE_TEXT = "Probe: Alice Johnson met the Platform team at Acme Corp in Berlin on 3 May."


def try_entity_patterns(
    patterns: Sequence[Mapping[str, Any]], make_doc: Callable[[str], Doc]
) -> None:
    """Build each pattern's spaCy matcher and run it on a probe text, so that a pattern spaCy
    cannot use (an operator such as ``{2,1}``, an unregistered ``_`` attribute) is refused
    before it is stored instead of failing every later save.

    Raises:
        EntityPatternsError: naming the first pattern spaCy refused and why.

    Example:
        >>> import spacy
        >>> try_entity_patterns([{"label": "T", "pattern": [{"_": {"nope": 1}}], "id": "x"}],
        ...                     spacy.blank("en").make_doc)
        Traceback (most recent call last):
        ...
        graphmem.extract.entity_patterns.EntityPatternsError: patterns[0] (T): spaCy cannot use it (...)
    """
    for position, pattern in enumerate(patterns):
        try:
            DeclaredNames([pattern], make_doc).spans(make_doc(_PROBE_TEXT))
        except Exception as exc:  # noqa: BLE001 - whatever spaCy raises, the pattern is refused
            reason = " ".join(str(exc).split())[:200]
            raise EntityPatternsError(
                f"patterns[{position}] ({pattern.get('label')}): spaCy cannot use it "
                f"({type(exc).__name__}: {reason})"
            ) from None
