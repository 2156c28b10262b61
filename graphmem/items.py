"""The memory record (:class:`MemoryItem`) and the checks every saved value goes through.

Example:
    >>> item = MemoryItem("Alice joined Acme", agent_id="researcher")
    >>> MemoryItem.from_dict(item.to_dict()) == item
    True
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from datetime import date, datetime
from typing import Any
from uuid import uuid4

from .errors import InvalidArgumentError, InvalidArgumentTypeError

__all__ = [
    "MAX_CONTENT_CHARS",
    "author_of",
    "MemoryEntry",
    "MemoryItem",
    "check_content",
    "check_event_time",
    "check_importance",
    "check_optional_id",
    "decode_metadata",
    "encode_metadata",
    "event_stamp",
]

#: Longest content accepted by ``save`` (characters). Larger payloads belong in a file store.
MAX_CONTENT_CHARS = 10_000_000
_MAX_METADATA_DEPTH = 64
_DATETIME_TAG = "$datetime"
_DATE_TAG = "$date"


@dataclass
class MemoryItem:
    """One memory: its text, who and what it belongs to, and how it has been used.

    Fields and defaults are those of Calute's ``MemoryItem``; ``to_dict`` / ``from_dict``
    round-trip every field, ``embedding`` included.

    Example:
        >>> MemoryItem("note").memory_type
        'general'
    """

    content: str
    memory_type: str = "general"
    timestamp: datetime = field(default_factory=datetime.now)
    metadata: dict[str, Any] = field(default_factory=dict)
    agent_id: str | None = None
    task_id: str | None = None
    conversation_id: str | None = None
    user_id: str | None = None
    relevance_score: float = 1.0
    access_count: int = 0
    last_accessed: datetime | None = None
    embedding: list[float] | None = None
    memory_id: str = field(default_factory=lambda: str(uuid4()))

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dict (datetimes as ISO 8601 strings).

        Example:
            >>> MemoryItem("x", memory_id="m1").to_dict()["memory_id"]
            'm1'
        """
        return {
            "memory_id": self.memory_id,
            "content": self.content,
            "memory_type": self.memory_type,
            "timestamp": self.timestamp.isoformat(),
            "metadata": json.loads(encode_metadata(self.metadata)),
            "agent_id": self.agent_id,
            "task_id": self.task_id,
            "conversation_id": self.conversation_id,
            "user_id": self.user_id,
            "relevance_score": self.relevance_score,
            "access_count": self.access_count,
            "last_accessed": self.last_accessed.isoformat() if self.last_accessed else None,
            "embedding": list(self.embedding) if self.embedding is not None else None,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MemoryItem:
        """Rebuild an item from :meth:`to_dict` output; unknown keys are an error.

        Example:
            >>> MemoryItem.from_dict({"content": "hi"}).content
            'hi'
        """
        if not isinstance(data, dict):
            raise InvalidArgumentTypeError(f"data must be a dict, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidArgumentError(f"unknown MemoryItem field(s): {', '.join(unknown)}")
        values = dict(data)
        for key in ("timestamp", "last_accessed"):
            if isinstance(values.get(key), str):
                values[key] = datetime.fromisoformat(values[key])
        if "metadata" in values:
            values["metadata"] = decode_metadata(json.dumps(values["metadata"] or {}))
        return cls(**values)


MemoryEntry = MemoryItem


def author_of(item: MemoryItem) -> str | None:
    """Who said or did this memory: ``metadata["speaker"]`` or ``["author"]``, else the agent.

    Example:
        >>> author_of(MemoryItem("Hi!", metadata={"speaker": "Caroline"}))
        'Caroline'
    """
    for key in ("speaker", "author"):
        value = item.metadata.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return item.agent_id


def check_content(content: object, name: str = "content") -> str:
    """Return ``content`` if it is a non-blank string graphmem can store, else raise.

    Example:
        >>> check_content("Alice met Bob")
        'Alice met Bob'
    """
    if not isinstance(content, str):
        raise InvalidArgumentTypeError(f"{name} must be a str, got {type(content).__name__}")
    if not content.strip():
        raise InvalidArgumentError(f"{name} must not be empty or blank")
    if len(content) > MAX_CONTENT_CHARS:
        raise InvalidArgumentError(
            f"{name} is {len(content):,} characters; the limit is {MAX_CONTENT_CHARS:,}"
        )
    _check_encodable(content, name)
    return content


def check_event_time(value: object, name: str = "timestamp") -> datetime | None:
    """The event time given to a save call (None: the save's own time), as a datetime.

    A datetime, a date (its midnight) or an ISO 8601 string ("2025-03-03",
    "2025-03-03T09:12:00", "2025-03-03T09:12:00+02:00"). Times are kept as graphmem keeps
    every time, as :class:`MemoryItem` does (``datetime.now()``): naive, on the local clock;
    an aware time is converted to it, and a naive one is taken as local already.

    Example:
        >>> check_event_time("2025-03-03T09:12:00")
        datetime.datetime(2025, 3, 3, 9, 12)
        >>> check_event_time("next week")
        Traceback (most recent call last):
        ...
        graphmem.errors.InvalidArgumentError: timestamp must be a datetime or an ISO 8601 string, got 'next week'
    """
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise InvalidArgumentError(
                f"{name} must be a datetime or an ISO 8601 string, got {value!r}"
            ) from None
    elif isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if not isinstance(value, datetime):
        raise InvalidArgumentTypeError(
            f"{name} must be a datetime, a date or an ISO 8601 string, got {type(value).__name__}"
        )
    return value.astimezone().replace(tzinfo=None) if value.tzinfo is not None else value


def event_stamp(when: datetime) -> str:
    """The text form of a time in the graph (``first_seen``, ``valid_from`` ...): ISO 8601 on
    graphmem's naive local clock (see :func:`check_event_time`), so that such texts order
    as their times do.

    Example:
        >>> event_stamp(datetime(2025, 3, 3, 9, 12))
        '2025-03-03T09:12:00'
    """
    if when.tzinfo is not None:
        when = when.astimezone().replace(tzinfo=None)
    return when.isoformat()


def check_importance(importance: object, name: str = "importance") -> float:
    """Return ``importance`` as a float in [0, 1], or raise naming the argument.

    Example:
        >>> check_importance(1)
        1.0
    """
    if isinstance(importance, bool) or not isinstance(importance, int | float):
        raise InvalidArgumentTypeError(f"{name} must be a number, got {type(importance).__name__}")
    value = float(importance)
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise InvalidArgumentError(f"{name} must be in [0, 1], got {importance!r}")
    return value


def check_optional_id(value: object, name: str) -> str | None:
    """Return an identifier argument (``agent_id``, ``user_id``...) that is a str or None.

    Example:
        >>> check_optional_id("alice", "user_id")
        'alice'
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArgumentTypeError(f"{name} must be a str or None, got {type(value).__name__}")
    _check_encodable(value, name)
    return value


def encode_metadata(metadata: object, name: str = "metadata") -> str:
    """Serialise metadata to JSON text; datetimes and dates are tagged so they round-trip.

    Raises ``TypeError``/``ValueError`` subclasses naming ``name`` for anything else that is
    not plain JSON (sets, objects, tuples, NaN, non-string keys, nesting deeper than 64).

    Example:
        >>> encode_metadata({"n": 1})
        '{"n": 1}'
    """
    if not isinstance(metadata, dict):
        raise InvalidArgumentTypeError(f"{name} must be a dict, got {type(metadata).__name__}")
    plain = _to_plain_json(metadata, name, depth=0)
    return json.dumps(plain, ensure_ascii=False, allow_nan=False)


def decode_metadata(text: str | None) -> dict[str, Any]:
    """Inverse of :func:`encode_metadata`.

    Example:
        >>> decode_metadata('{"when": {"$datetime": "2026-01-02T03:04:05"}}')["when"].year
        2026
    """
    if not text:
        return {}
    value = json.loads(text, object_hook=_from_tagged)
    if not isinstance(value, dict):
        raise InvalidArgumentTypeError("stored metadata is not a JSON object")
    return value


def _to_plain_json(value: object, name: str, depth: int) -> object:
    if depth > _MAX_METADATA_DEPTH:
        raise InvalidArgumentError(f"{name} is nested deeper than {_MAX_METADATA_DEPTH} levels")
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidArgumentError(f"{name} holds a non-finite number ({value!r})")
        return value
    if isinstance(value, str):
        _check_encodable(value, name)
        return value
    if isinstance(value, datetime):
        return {_DATETIME_TAG: value.isoformat()}
    if isinstance(value, date):
        return {_DATE_TAG: value.isoformat()}
    if isinstance(value, list):
        return [_to_plain_json(v, name, depth + 1) for v in value]
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for key, inner in value.items():
            if not isinstance(key, str):
                raise InvalidArgumentTypeError(
                    f"{name} keys must be str, got {type(key).__name__} ({key!r})"
                )
            _check_encodable(key, name)
            if key in (_DATETIME_TAG, _DATE_TAG):
                raise InvalidArgumentError(f"{name} key {key!r} is reserved")
            out[key] = _to_plain_json(inner, name, depth + 1)
        return out
    raise InvalidArgumentTypeError(
        f"{name} must be JSON-serialisable; {type(value).__name__} values are not "
        "(use str, int, float, bool, None, list, dict, datetime or date)"
    )


def _from_tagged(obj: dict[str, Any]) -> object:
    if len(obj) == 1:
        if _DATETIME_TAG in obj:
            return datetime.fromisoformat(obj[_DATETIME_TAG])
        if _DATE_TAG in obj:
            return date.fromisoformat(obj[_DATE_TAG])
    return obj


def _check_encodable(text: str, name: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidArgumentError(
            f"{name} is not valid Unicode text (lone surrogate at position {exc.start})"
        ) from None
