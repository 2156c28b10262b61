"""What the rules file declares, once parsed: predicates and what their statements end
(:class:`PredicateInfo`, :class:`ClosedPredicates`, :meth:`RelationRules.ended_by`), the
rules, the filters that reject a statement (:func:`is_blocked`), and the relations found
(:class:`RelationCandidate`).

Example:
    >>> "cto_of" in ClosedPredicates(("{role}_of",))
    True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from spacy.tokens import Span, Token

from graphmem.errors import GraphmemError

#: Stands for the title in a role predicate's name: ``"{role}_of"`` covers ``cto_of``.
ROLE_PLACEHOLDER = "{role}"
#: Dependencies of the modifiers the filters read ("*former* CEO", "*previously* worked").
_MODIFIER_DEPS = frozenset({"amod", "advmod", "compound", "npadvmod", "nmod"})
#: Dependencies of a clause's subject.
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})


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
    #: :func:`clause_as_modifier_variant`. Opt-in: each variant costs matcher time.
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
            >>> from graphmem.extract.relations import load_relation_rules
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
