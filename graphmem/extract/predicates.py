"""What the relation rules (``models/relation_rules.json``) and the learned model
(``models/learned_predicates.json``) declare about predicates.

Read without spaCy: what answers need to word a relation's time (the context, the graph page,
the CLI) and which stored predicates answer a query's, on paths that never analyse text. And
the :class:`PredicateCatalogue` the index keeps relations' validity by (which predicates hold
one value at a time, what a statement ends), loaded once and handed to the index, so that a
relation source only extracts.

Example:
    >>> "left" in event_predicates(), "works_at" in event_predicates()
    (True, False)
    >>> answers("cto_of", "works_at"), answers("founder_of", "works_at")
    (True, False)
    >>> catalogue = load_catalogue()
    >>> "works_at" in catalogue.functional, catalogue.ended_by("left", "Acme", [("works_at", "Acme")])
    (True, [('works_at', 'Acme')])
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from difflib import get_close_matches
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .._assets import asset_path
from ..errors import InvalidArgumentError
from ..items import CO_OCCURS

if TYPE_CHECKING:
    from .relations import RelationRules

__all__ = [
    "PredicateCatalogue",
    "answers",
    "catalogue_predicates",
    "check_predicate",
    "default_catalogue",
    "event_predicates",
    "load_catalogue",
]

#: The rules' name for every role predicate: a title, then ``_of`` (``cto_of``, ``head_of_sales_of``).
ROLE_TEMPLATE = "{role}_of"
_ROLE = "{role}"


@lru_cache(maxsize=1)
def _declared() -> Mapping[str, Any]:
    path = asset_path("models", "relation_rules.json")
    declared: Mapping[str, Any] = json.loads(path.read_text(encoding="utf-8"))["predicates"]
    return declared


@lru_cache(maxsize=1)
def event_predicates() -> frozenset[str]:
    """The predicates the bundled rules declare that happen once ("left", "met",
    "visited"), not ``state`` ones that hold over a time ("works_at", roles): an event's
    time is the day it was stated, a state's the interval it held."""
    return frozenset(
        name
        for name, info in _declared().items()
        if "{" not in name and isinstance(info, dict) and not info.get("state")
    )


def _declaration(predicate: str) -> Mapping[str, Any] | None:
    """The declaration of ``predicate``: its own, or for a role predicate ("cto_of") the
    ``{role}_of`` template's."""
    declared = _declared()
    if predicate in declared:
        info = declared[predicate]
        return info if isinstance(info, dict) else None
    for name, info in declared.items():
        prefix, placeholder, suffix = name.partition(_ROLE)
        if (
            placeholder
            and isinstance(info, dict)
            and len(predicate) > len(prefix) + len(suffix)
            and predicate.startswith(prefix)
            and predicate.endswith(suffix)
        ):
            return info
    return None


@lru_cache(maxsize=4096)
def answers(stored: str, asked: str) -> bool:
    """Whether a relation stored as ``stored`` answers a query for ``asked``: the same
    predicate, or one that implies it (a role held at an organisation is employment there,
    so ``find(predicate="works_at", object="Acme")`` finds Acme's CTO; a founder, board member
    or investor is no employee by that alone).

    Examples:
        >>> answers("works_at", "works_at"), answers("head_of_logistics_of", "works_at")
        (True, True)
        >>> answers("board_member_of", "works_at"), answers("works_at", "cto_of")
        (False, False)
    """
    if stored == asked:
        return True
    info = _declaration(stored)
    if info is None or stored in info.get("implies_except", ()):
        return False
    return asked in info.get("implies", ())


@lru_cache(maxsize=1)
def catalogue_predicates() -> frozenset[str]:
    """The predicates the bundled rules and the learned model declare (``works_at``,
    ``left``, ``country`` ...; the role template ``{role}_of`` stands for every
    ``<title>_of``)."""
    names: set[str] = set()
    for asset in ("relation_rules.json", "learned_predicates.json"):
        declared = json.loads(asset_path("models", asset).read_text(encoding="utf-8"))
        names.update(declared["predicates"])
    return frozenset(names)


def check_predicate(predicate: str, stored: Iterable[str], co_occurs: str = CO_OCCURS) -> str:
    """``predicate`` if the relation catalogue knows it: a predicate the rules declare, a role
    (``<title>_of``), ``co_occurs``, or one of ``stored`` (those of the relations a graph holds,
    hand-added ones included); else an error naming what is accepted.

    Example:
        >>> check_predicate("cto_of", [])
        'cto_of'
        >>> check_predicate("work_at", ["mentors"])
        Traceback (most recent call last):
        ...
        graphmem.errors.InvalidArgumentError: unknown predicate 'work_at' (did you mean 'works_at'?); accepted: acquired, appears_in, applies_to, born_in, born_on, capital_of, citizen_of, co_occurs, country, created, dated, died_in, died_on, flows_into, followed_by, founded, founded_on, hired, language, left, lives_in, located_in, manages, married, member_of, mentors, met, owned_by, parent_of, part_of, participated_in, partnered_with, performed, published_on, received_award, religion, reports_to, sibling_of, signed_with, studied_at, visited, works_at, and a role as <title>_of (ceo_of, cto_of ...)
    """
    declared = catalogue_predicates()
    if predicate in declared or predicate == co_occurs:
        return predicate
    if ROLE_TEMPLATE in declared and predicate.endswith("_of") and len(predicate) > 3:
        return predicate
    stored = set(stored)
    if predicate in stored:
        return predicate
    names = sorted((declared - {ROLE_TEMPLATE}) | {co_occurs} | stored)
    close = get_close_matches(predicate, names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    roles = ", and a role as <title>_of (ceo_of, cto_of ...)" if ROLE_TEMPLATE in declared else ""
    raise InvalidArgumentError(
        f"unknown predicate {predicate!r}{hint}; accepted: {', '.join(names)}{roles}"
    )


@dataclass(frozen=True)
class PredicateCatalogue:
    """What predicates mean for the time a relation holds: ``functional`` ones hold one value
    at a time per subject (a new ``lives_in`` closes the previous one), and :meth:`ended_by`
    says which of a subject's open relations a statement ends (the rules' decision).

    Made by :func:`load_catalogue` (or :func:`default_catalogue`) from the validated rules
    file and the learned model's predicate map.
    """

    functional: frozenset[str]
    rules: RelationRules

    def ended_by(
        self,
        predicate: str,
        obj: str,
        open_relations: Iterable[tuple[str, str]],
        ends: bool = False,
    ) -> list[tuple[str, str]]:
        """Which of a subject's open ``(predicate, object)`` relations a statement of
        ``predicate`` about ``obj`` ends (``ends``: the statement says that relation ended);
        see :meth:`graphmem.extract.relations.RelationRules.ended_by`.

        Example:
            >>> load_catalogue().ended_by("ceo_of", "Acme", [("cto_of", "Acme")])
            [('cto_of', 'Acme')]
        """
        return list(self.rules.ended_by(predicate, obj, open_relations, ends))


@lru_cache(maxsize=2)
def load_catalogue(*, learned: bool = True) -> PredicateCatalogue:
    """The catalogue of the bundled rules, with the learned model's functional predicates
    when ``learned`` (what :func:`~graphmem.extract.learned.default_relation_source`
    extracts with); loaded once.

    Example:
        >>> "born_in" in load_catalogue(learned=False).functional
        True
    """
    from .learned import load_predicate_map  # the parsers load spaCy: only when asked
    from .relations import load_relation_rules

    rules = load_relation_rules()
    functional = rules.functional_predicates()
    if learned:
        functional = functional | load_predicate_map().functional_predicates()
    return PredicateCatalogue(frozenset(functional), rules)


def default_catalogue() -> PredicateCatalogue:
    """The catalogue of the relations graphmem extracts now: the learned model's predicates
    count unless the environment variable ``GRAPHMEM_LEARNED_RELATIONS`` is ``"0"`` (as
    :func:`~graphmem.extract.learned.default_relation_source` reads it)."""
    from .learned import SWITCH_VARIABLE

    return load_catalogue(learned=os.environ.get(SWITCH_VARIABLE, "1") != "0")
