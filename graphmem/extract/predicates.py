"""What the relation rules (``models/relation_rules.json``) declare about predicates, read
without spaCy: what answers need to word a relation's time (the context, the graph page,
the CLI), on paths that never analyse text.

Example:
    >>> "left" in event_predicates(), "works_at" in event_predicates()
    (True, False)
"""

from __future__ import annotations

import json
from functools import lru_cache

from .._assets import asset_path

__all__ = ["event_predicates"]


@lru_cache(maxsize=1)
def event_predicates() -> frozenset[str]:
    """The predicates the bundled rules declare that happen once ("left", "met",
    "visited"), not ``state`` ones that hold over a time ("works_at", roles): an event's
    time is the day it was stated, a state's the interval it held."""
    path = asset_path("models", "relation_rules.json")
    declared = json.loads(path.read_text(encoding="utf-8"))["predicates"]
    return frozenset(
        name
        for name, info in declared.items()
        if "{" not in name and isinstance(info, dict) and not info.get("state")
    )
