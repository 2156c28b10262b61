"""What the relation rules (``models/relation_rules.json``) declare about predicates, read
without spaCy: what answers need to word a relation's time (the context, the graph page,
the CLI) and which stored predicates answer a query's, on paths that never analyse text.

Example:
    >>> "left" in event_predicates(), "works_at" in event_predicates()
    (True, False)
    >>> answers("cto_of", "works_at"), answers("founder_of", "works_at")
    (True, False)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from .._assets import asset_path

__all__ = ["answers", "event_predicates"]

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
