"""Reading ``models/relation_rules.json``: validation of each section and rule (a
:class:`~graphmem.extract.relations.RelationRulesError` names the file and the rule), vocabulary
references expanded, and a cache per path.

Example:
    >>> "works_at" in load_relation_rules().functional_predicates()
    True
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from graphmem._assets import asset_path

from .rules import (
    ROLE_PLACEHOLDER,
    ClosedPredicates,
    PredicateInfo,
    RelationRule,
    RelationRules,
    RelationRulesError,
)

_TOP_KEYS = frozenset(
    {"version", "description", "predicates", "vocabularies", "role_aliases", "filters", "rules"}
)
_RULE_REQUIRED = ("id", "predicate", "confidence", "pattern")
_RULE_KEYS = frozenset(_RULE_REQUIRED) | {
    "subject_labels",
    "object_labels",
    "description",
    "ends",
    "without",
    "object_preps",
    "names",
    "employer",
    "requires",
    "not_countries",
    "either_attached",
    "as_modifier",
}
_PREDICATE_KEYS = frozenset(
    {
        "functional",
        "symmetric",
        "state",
        "closes",
        "closes_except",
        "closes_on_end",
        "closes_all_on_end",
        "implies",
        "implies_except",
        "description",
    }
)
_FILTER_LISTS = (
    "negation_deps",
    "hypothetical_aux",
    "conditional_marks",
    "blocking_modifiers",
    "past_modifiers",
)
_FILTER_KEYS = frozenset(_FILTER_LISTS) | {"reject_questions"}


def default_rules_path() -> Path:
    """Path of the bundled ``models/relation_rules.json``."""
    return asset_path("models", "relation_rules.json")


def _fail(source: str, where: str, message: str) -> RelationRulesError:
    return RelationRulesError(f"{source}: {where}: {message}")


def _string_list(value: object, source: str, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(source, where, "expected a list of strings")
    return list(value)


def _expand_vocabularies(
    value: Any, vocabularies: Mapping[str, list[str]], source: str, where: str
) -> Any:
    """Replace ``"$name"`` strings (as IN / NOT_IN values) by ``vocabularies[name]``; a
    ``REL_OP`` such as ``"$--"`` (a sibling before) is an operator, not a vocabulary."""
    if isinstance(value, dict):
        return {
            k: v if k == "REL_OP" else _expand_vocabularies(v, vocabularies, source, where)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_expand_vocabularies(v, vocabularies, source, where) for v in value]
    if isinstance(value, str) and value.startswith("$"):
        name = value[1:]
        if name not in vocabularies:
            raise _fail(source, where, f"unknown vocabulary {value!r}")
        return list(vocabularies[name])
    return value


def _parse_predicates(raw: object, source: str) -> dict[str, PredicateInfo]:
    if not isinstance(raw, dict) or not raw:
        raise _fail(source, "predicates", "expected a non-empty object")
    predicates: dict[str, PredicateInfo] = {}
    for name, spec in raw.items():
        where = f"predicate {name!r}"
        if not isinstance(spec, dict):
            raise _fail(source, where, "expected an object")
        unknown = sorted(set(spec) - _PREDICATE_KEYS)
        if unknown:
            raise _fail(source, where, f"unknown key(s) {', '.join(map(repr, unknown))}")
        if not re.fullmatch(r"[a-z][a-z0-9_]*|\{role\}_[a-z0-9_]+", name):
            raise _fail(source, where, "names are snake_case (or '{role}_of')")
        for flag in ("functional", "symmetric", "state"):
            if not isinstance(spec.get(flag, False), bool):
                raise _fail(source, where, f"{flag!r} must be true or false")
        closed = {key: _declared_names(spec, key, raw, source, where) for key in _CLOSING_KEYS}
        predicates[name] = PredicateInfo(
            name=name,
            functional=spec.get("functional", False),
            symmetric=spec.get("symmetric", False),
            state=spec.get("state", False),
            description=str(spec.get("description", "")),
            **closed,
        )
    return predicates


_CLOSING_KEYS = (
    "closes",
    "closes_except",
    "closes_on_end",
    "closes_all_on_end",
    "implies",
    "implies_except",
)


def _declared_names(
    spec: Mapping[str, Any], key: str, declared: Mapping[str, Any], source: str, where: str
) -> tuple[str, ...]:
    """``spec[key]``, one predicate name or a list of them, each declared (or a role
    predicate: ``founder_of``)."""
    names = spec.get(key, [])
    names = [names] if isinstance(names, str) else names
    roles = ClosedPredicates(tuple(n for n in declared if ROLE_PLACEHOLDER in n))
    if not isinstance(names, list) or not all(
        isinstance(n, str) and (n in declared or n in roles) for n in names
    ):
        raise _fail(source, where, f"{key!r} must name declared predicates, got {spec[key]!r}")
    return tuple(names)


def _confidence(value: object, source: str, where: str) -> float:
    """A rule's ``confidence``: a number in (0, 1].

    Example:
        >>> _confidence(1, "rules.json", "rule 'x'")
        1.0
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(source, where, "'confidence' must be a number")
    if not 0.0 < value <= 1.0:
        raise _fail(source, where, f"'confidence' must be in (0, 1], got {value}")
    return float(value)


def _check_either_attached(
    node_ids: Iterable[str], pattern: Sequence[Mapping[str, Any]], source: str, where: str
) -> None:
    """Each ``either_attached`` node hangs on a parent (``>``) that itself has a head, the
    other place the parser may attach it."""
    for node_id in node_ids:
        node = next((n for n in pattern if n.get("RIGHT_ID") == node_id), None)
        parent = node and next((n for n in pattern if n["RIGHT_ID"] == node.get("LEFT_ID")), None)
        if parent is None or parent.get("REL_OP") != ">" or "LEFT_ID" not in parent:
            raise _fail(
                source, where, f"either_attached node {node_id!r} needs a parent with a head"
            )


def _parse_rule(
    index: int,
    raw: object,
    predicates: Mapping[str, PredicateInfo],
    vocabularies: Mapping[str, list[str]],
    source: str,
) -> RelationRule:
    if not isinstance(raw, dict):
        raise _fail(source, f"rule #{index}", "expected an object")
    rule_id = raw.get("id")
    where = f"rule {rule_id!r}" if isinstance(rule_id, str) else f"rule #{index} (no id)"
    unknown = sorted(set(raw) - _RULE_KEYS)
    if unknown:
        raise _fail(source, where, f"unknown key(s) {', '.join(map(repr, unknown))}")
    for key in _RULE_REQUIRED:
        if key not in raw:
            raise _fail(source, where, f"missing field {key!r}")
    if not isinstance(rule_id, str) or not rule_id:
        raise _fail(source, where, "'id' must be a non-empty string")
    predicate = raw["predicate"]
    roles = ClosedPredicates(tuple(name for name in predicates if ROLE_PLACEHOLDER in name))
    if predicate not in predicates and predicate not in roles:
        raise _fail(source, where, f"predicate {predicate!r} is not declared in 'predicates'")
    confidence = _confidence(raw["confidence"], source, where)
    pattern = raw["pattern"]
    if not (isinstance(pattern, list) and pattern and all(isinstance(n, dict) for n in pattern)):
        raise _fail(source, where, "'pattern' must be a non-empty list of objects")
    node_ids = [node.get("RIGHT_ID") for node in pattern]
    object_preps = _string_list(
        _expand_vocabularies(raw.get("object_preps", []), vocabularies, source, where),
        source,
        f"{where}: object_preps",
    )
    # The object is a node, or (object_preps) what the role node names.
    required_nodes = ["subject", "role" if object_preps else "object"]
    if ROLE_PLACEHOLDER in predicate and "role" not in required_nodes:
        required_nodes.append("role")
    for node_id in required_nodes:
        if node_id not in node_ids:
            raise _fail(source, where, f"pattern has no node with RIGHT_ID {node_id!r}")
    expanded = _expand_vocabularies(pattern, vocabularies, source, where)
    for flag in ("ends", "employer", "not_countries", "as_modifier"):
        if not isinstance(raw.get(flag, False), bool):
            raise _fail(source, where, f"{flag!r} must be true or false")
    _check_either_attached(raw.get("either_attached", []), pattern, source, where)
    without = raw.get("without", {})
    if not isinstance(without, dict) or not set(without) <= set(node_ids):
        raise _fail(source, where, "'without' must map pattern node ids to lists")
    return RelationRule(
        id=rule_id,
        predicate=predicate,
        confidence=confidence,
        pattern=tuple(expanded),
        subject_labels=frozenset(
            _string_list(raw.get("subject_labels", []), source, f"{where}: subject_labels")
        ),
        object_labels=frozenset(
            _string_list(raw.get("object_labels", []), source, f"{where}: object_labels")
        ),
        description=str(raw.get("description", "")),
        ends=raw.get("ends", False),
        without={
            node: frozenset(_string_list(words, source, f"{where}: without"))
            for node, words in without.items()
        },
        object_preps=frozenset(object_preps),
        names=frozenset(_string_list(raw.get("names", []), source, f"{where}: names")),
        employer=raw.get("employer", False),
        requires=frozenset(_string_list(raw.get("requires", []), source, f"{where}: requires")),
        not_countries=raw.get("not_countries", False),
        as_modifier=raw.get("as_modifier", False),
        either_attached=frozenset(
            _string_list(raw.get("either_attached", []), source, f"{where}: either_attached")
        ),
    )


def parse_relation_rules(data: object, source: str = "<rules>") -> RelationRules:
    """Validate the decoded JSON of a rules file and build :class:`RelationRules`.

    Raises:
        RelationRulesError: naming ``source`` and the offending rule or section.
    """
    if not isinstance(data, dict):
        raise _fail(source, "top level", "expected a JSON object")
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise _fail(source, "top level", f"unknown key(s) {', '.join(map(repr, unknown))}")
    for key in ("predicates", "rules"):
        if key not in data:
            raise _fail(source, "top level", f"missing field {key!r}")
    predicates = _parse_predicates(data["predicates"], source)

    raw_vocab = data.get("vocabularies", {})
    if not isinstance(raw_vocab, dict):
        raise _fail(source, "vocabularies", "expected an object")
    vocabularies = {
        name: _string_list(words, source, f"vocabulary {name!r}")
        for name, words in raw_vocab.items()
    }
    aliases = data.get("role_aliases", {})
    if not isinstance(aliases, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in aliases.items()
    ):
        raise _fail(source, "role_aliases", "expected an object of strings")

    filters = data.get("filters", {})
    if not isinstance(filters, dict):
        raise _fail(source, "filters", "expected an object")
    unknown = sorted(set(filters) - _FILTER_KEYS)
    if unknown:
        raise _fail(source, "filters", f"unknown key(s) {', '.join(map(repr, unknown))}")
    filter_sets = {
        key: frozenset(w.lower() for w in _string_list(filters.get(key, []), source, key))
        for key in _FILTER_LISTS
    }
    reject_questions = filters.get("reject_questions", True)
    if not isinstance(reject_questions, bool):
        raise _fail(source, "filters", "'reject_questions' must be true or false")

    raw_rules = data["rules"]
    if not isinstance(raw_rules, list) or not raw_rules:
        raise _fail(source, "rules", "expected a non-empty list")
    rules: list[RelationRule] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_rules):
        rule = _parse_rule(index, raw, predicates, vocabularies, source)
        if rule.id in seen:
            raise _fail(source, f"rule {rule.id!r}", "duplicate rule id")
        seen.add(rule.id)
        rules.append(rule)

    return RelationRules(
        rules=tuple(rules),
        predicates=predicates,
        roles=frozenset(vocabularies.get("roles", [])),
        role_prefixes=frozenset(vocabularies.get("role_prefixes", [])),
        title_words=frozenset(vocabularies.get("title_words", [])),
        department_nouns=frozenset(vocabularies.get("department_nouns", [])),
        role_prep_words=frozenset(vocabularies.get("role_preps", [])),
        org_descriptions=frozenset(vocabularies.get("org_nouns", [])),
        employer_preps=frozenset(vocabularies.get("employer_preps", [])),
        role_aliases=dict(aliases),
        reject_questions=reject_questions,
        **filter_sets,
    )


@lru_cache(maxsize=8)
def _load_cached(path: Path) -> RelationRules:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RelationRulesError(f"{path}: not valid JSON: {exc}") from exc
    return parse_relation_rules(data, str(path))


def load_relation_rules(path: Path | str | None = None) -> RelationRules:
    """Load and validate a rules file (the bundled one by default); cached per path.

    Example:
        >>> rules = load_relation_rules()
        >>> "works_at" in rules.functional_predicates()
        True
    """
    return _load_cached(Path(path).resolve() if path is not None else default_rules_path())


def functional_predicates(rules_path: Path | str | None = None) -> frozenset[str]:
    """Predicates flagged ``functional`` in the rules file (one value at a time).

    Example:
        >>> sorted(functional_predicates())
        ['born_in', 'lives_in', 'reports_to', 'works_at']
    """
    return load_relation_rules(rules_path).functional_predicates()
