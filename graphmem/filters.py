"""Filters for ``search``/``retrieve``/``delete``: attribute first, then metadata.

A filter is a dict. Each key names a :class:`~graphmem.items.MemoryItem` attribute or, failing
that, a metadata key; each value is compared with ``==`` or, when callable, called with the
item's value and must return true. A key the item has neither as attribute nor in its
metadata means "no match" (Calute silently ignored such filters).

Example:
    >>> from graphmem.items import MemoryItem
    >>> item = MemoryItem("x", agent_id="bot", metadata={"importance": 0.9})
    >>> item_matches(item, {"agent_id": "bot", "importance": lambda v: v > 0.5})
    True
    >>> item_matches(item, {"colour": "red"})
    False
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from datetime import datetime
from typing import Any

from .errors import InvalidArgumentError, InvalidArgumentTypeError
from .items import MemoryItem, to_utc

__all__ = ["ITEM_ATTRIBUTES", "check_filters", "item_matches"]

ITEM_ATTRIBUTES = frozenset(f.name for f in fields(MemoryItem))
_MISSING = object()


def check_filters(filters: object) -> dict[str, Any] | None:
    """Validate a filters argument: ``None`` or a mapping with str keys. A datetime value is
    taken to UTC, as items hold their times (a naive one is read on the local clock).

    Example:
        >>> check_filters({"agent_id": "a"})
        {'agent_id': 'a'}
    """
    if filters is None:
        return None
    if not isinstance(filters, Mapping):
        raise InvalidArgumentTypeError(f"filters must be a dict, got {type(filters).__name__}")
    for key in filters:
        if not isinstance(key, str):
            raise InvalidArgumentTypeError(f"filters keys must be str, got {key!r}")
    return {k: to_utc(v) if isinstance(v, datetime) else v for k, v in filters.items()}


def item_matches(item: MemoryItem, filters: Mapping[str, Any] | None) -> bool:
    """True when ``item`` satisfies every filter (see the module docstring)."""
    if not filters:
        return True
    for key, expected in filters.items():
        if key in ITEM_ATTRIBUTES:
            actual = getattr(item, key)
        else:
            actual = item.metadata.get(key, _MISSING)
            if actual is _MISSING:
                return False
        if callable(expected):
            try:
                if not expected(actual):
                    return False
            except TypeError as exc:
                if "offset-naive and offset-aware" in str(exc):
                    raise InvalidArgumentError(
                        f"filter {key!r} compares a naive datetime with the item's "
                        "timezone-aware time (graphmem keeps times in UTC): give the datetime "
                        "a tzinfo, e.g. datetime(2025, 3, 1, tzinfo=timezone.utc)"
                    ) from None
                return False
            except ValueError:
                return False
        elif actual != expected:
            return False
    return True
