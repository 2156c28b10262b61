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
from datetime import UTC, date, datetime
from typing import Any
from uuid import uuid4

from .errors import InvalidArgumentError, InvalidArgumentTypeError

__all__ = [
    "MAX_CONTENT_CHARS",
    "MAX_QUERY_CHARS",
    "MAX_WORKERS",
    "author_of",
    "MemoryEntry",
    "MemoryItem",
    "StoredMemory",
    "check_capacity",
    "check_content",
    "check_count",
    "check_embedding",
    "check_encodable",
    "check_event_time",
    "check_finite",
    "check_importance",
    "check_limit",
    "check_memory_id",
    "check_optional_id",
    "check_query",
    "check_updates",
    "check_workers",
    "decode_metadata",
    "encode_metadata",
    "event_stamp",
    "stored_time",
    "time_text",
    "to_utc",
    "utc_now",
]

#: Longest content accepted by ``save`` (characters). Larger payloads belong in a file store.
MAX_CONTENT_CHARS = 10_000_000
#: Longest query or task description accepted (characters): a query is analysed whole, and
#: ranking a document-sized one would be slow and meaningless; it is refused, not cut.
MAX_QUERY_CHARS = 100_000
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
    timestamp: datetime = field(default_factory=lambda: utc_now())
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

    def __post_init__(self) -> None:
        # Every time an item holds is timezone-aware UTC, however it was given (see to_utc).
        if isinstance(self.timestamp, datetime):
            self.timestamp = to_utc(self.timestamp)
        if isinstance(self.last_accessed, datetime):
            self.last_accessed = to_utc(self.last_accessed)

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
            if values.get(key) is not None:
                values[key] = check_event_time(values[key], key)
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
    check_encodable(content, name)
    return content


def utc_now() -> datetime:
    """The current time, timezone-aware UTC (the default ``timestamp`` of an item).

    Example:
        >>> utc_now().tzinfo
        datetime.timezone.utc
    """
    return datetime.now(UTC)


def to_utc(when: datetime) -> datetime:
    """``when`` as a timezone-aware UTC datetime: an aware time is converted, a naive one
    is read on the local clock (Python's own reading of naive times, and what
    ``datetime.now()`` gives), then converted.

    Example:
        >>> from datetime import timedelta, timezone
        >>> to_utc(datetime(2025, 3, 3, 9, 12, tzinfo=timezone(timedelta(hours=2))))
        datetime.datetime(2025, 3, 3, 7, 12, tzinfo=datetime.timezone.utc)
    """
    if when.tzinfo is UTC:
        return when
    try:
        return when.astimezone(UTC)
    except (OverflowError, ValueError, OSError):
        raise InvalidArgumentError(f"{when.isoformat()} has no UTC time in years 1-9999") from None


def check_query(query: object, name: str = "query") -> str:
    """A search query or task description: a str (blank lists recent items) of at most
    :data:`MAX_QUERY_CHARS` characters, valid Unicode.

    Example:
        >>> check_query("Who works at Acme?")
        'Who works at Acme?'
    """
    if not isinstance(query, str):
        raise InvalidArgumentTypeError(f"{name} must be a str, got {type(query).__name__}")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidArgumentError(
            f"{name} is {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,} "
            "(search with a question or key words, not a document)"
        )
    check_encodable(query, name)  # a lone surrogate cannot reach the tokenizer
    return query


def check_event_time(value: object, name: str = "timestamp") -> datetime | None:
    """The one entry point of every time graphmem is given (saves, updates, ingest, import,
    ``as_of``, ``MemoryItem.from_dict``): None (the save's own time) or a timezone-aware UTC
    datetime.

    Accepts a datetime, a date (its midnight) or an ISO 8601 string ("2025-03-03",
    "2025-03-03T09:12:00", "2025-03-03T09:12:00+02:00", "...Z"). A time without a UTC
    offset is read on the local clock (see :func:`to_utc`).

    Example:
        >>> check_event_time("2025-03-03T09:12:00+02:00")
        datetime.datetime(2025, 3, 3, 7, 12, tzinfo=datetime.timezone.utc)
        >>> check_event_time("next week")
        Traceback (most recent call last):
        ...
        graphmem.errors.InvalidArgumentError: timestamp must be a datetime or an ISO 8601 string, got 'next week'
    """
    if value is None:
        return None
    if isinstance(value, str):
        text = value
        try:
            value = datetime.fromisoformat(text.strip())
        except ValueError:
            raise InvalidArgumentError(
                f"{name} must be a datetime or an ISO 8601 string, got {text[:80]!r}"
            ) from None
    elif isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if not isinstance(value, datetime):
        raise InvalidArgumentTypeError(
            f"{name} must be a datetime, a date or an ISO 8601 string, got {type(value).__name__}"
        )
    return to_utc(value)


def time_text(when: datetime) -> str:
    """The one stored form of a time (memory rows, access times, the graph's ``first_seen``,
    ``valid_from`` ...): ISO 8601 in UTC, so that texts order as their times do (a whole
    second, "...:00+00:00", sorts before the same second with a fraction, "...:00.5+00:00").

    Example:
        >>> time_text(datetime(2025, 3, 3, 9, 12, tzinfo=UTC))
        '2025-03-03T09:12:00+00:00'
    """
    return to_utc(when).isoformat()


#: The graph's name for :func:`time_text`.
event_stamp = time_text


def stored_time(text: str) -> datetime:
    """A stored time text back as an aware UTC datetime. Files written before graphmem kept
    UTC hold naive texts on the local clock of the writer; they are read as local.

    Example:
        >>> stored_time("2025-03-03T09:12:00+00:00")
        datetime.datetime(2025, 3, 3, 9, 12, tzinfo=datetime.timezone.utc)
    """
    return to_utc(datetime.fromisoformat(text))


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


#: Largest integer a stored column holds (SQL BIGINT, SQLite INTEGER).
MAX_STORED_INT = 2**63 - 1


def check_count(value: object, name: str) -> int:
    """A non-negative int that fits a stored integer column.

    Example:
        >>> check_count(3, "access_count")
        3
    """
    return _stored_int(value, name, 0, "an int")


def check_capacity(value: object, name: str) -> int:
    """A positive int capacity (``max_items``, ``capacity`` ...) that a stored count can reach.

    Example:
        >>> check_capacity(50, "short_term_capacity")
        50
    """
    return _stored_int(value, name, 1, "a positive int")


def check_limit(limit: object, name: str = "limit") -> int:
    """A non-negative int limit (of a search, a listing ...); 0 asks for nothing.

    Example:
        >>> check_limit(10), check_limit(0, "max_items")
        (10, 0)
    """
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise InvalidArgumentTypeError(f"{name} must be an int, got {type(limit).__name__}")
    if limit < 0:
        raise InvalidArgumentError(f"{name} must be >= 0, got {limit}")
    return limit


#: Most analysis worker processes one ingest may start.
MAX_WORKERS = 256


def check_workers(value: object, name: str = "workers") -> int | None:
    """None (the machine's cores) or a number of worker processes in ``[1, MAX_WORKERS]``.

    Example:
        >>> check_workers(2), check_workers(None)
        (2, None)
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentTypeError(f"{name} must be an int, got {type(value).__name__}")
    if not 1 <= value <= MAX_WORKERS:
        raise InvalidArgumentError(f"{name} must be in [1, {MAX_WORKERS}], got {value}")
    return value


def _stored_int(value: object, name: str, low: int, kind: str) -> int:
    """``value`` if it is an int (not a bool) in ``[low, MAX_STORED_INT]``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentTypeError(f"{name} must be {kind}, got {type(value).__name__}")
    if not low <= value <= MAX_STORED_INT:
        shown = f"{value}" if abs(value) < 10**30 else f"a {len(str(abs(value)))}-digit number"
        raise InvalidArgumentError(f"{name} must be in [{low}, 2**63 - 1], got {shown}")
    return value


def check_finite(value: object, name: str) -> float:
    """A real, finite number (bool refused) as a float.

    Example:
        >>> check_finite(2, "relevance_score")
        2.0
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidArgumentTypeError(f"{name} must be a number, got {type(value).__name__}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise InvalidArgumentError(f"{name} must be a finite number, got {value!r:.40}")
    return number


def check_embedding(value: object, name: str = "embedding") -> list[float] | None:
    """None or a list of finite numbers, as floats.

    Example:
        >>> check_embedding([1, 0.5])
        [1.0, 0.5]
    """
    if value is None:
        return None
    if not isinstance(value, list | tuple):
        raise InvalidArgumentTypeError(
            f"{name} must be a list of numbers or None, got {type(value).__name__}"
        )
    return [check_finite(v, f"{name}[{i}]") for i, v in enumerate(value)]


def check_updates(updates: object) -> dict[str, Any]:
    """The ``updates`` of a tier's ``update(memory_id, updates)``: each value checked as its
    field needs (times to aware UTC), or an error naming the field; ``memory_id`` is read-only.

    Example:
        >>> check_updates({"access_count": 2, "last_accessed": "2026-01-01T00:00:00+00:00"})
        {'access_count': 2, 'last_accessed': datetime.datetime(2026, 1, 1, 0, 0, tzinfo=datetime.timezone.utc)}
    """
    if not isinstance(updates, dict):
        raise InvalidArgumentTypeError(f"updates must be a dict, got {type(updates).__name__}")
    updatable = {f.name for f in fields(MemoryItem)} - {"memory_id"}
    unknown = sorted(k if isinstance(k, str) else repr(k) for k in set(updates) - updatable)
    if unknown:
        raise InvalidArgumentError(
            f"cannot update unknown or read-only field(s): {', '.join(unknown)}"
        )
    checked: dict[str, Any] = {}
    for key, value in updates.items():
        if key == "content":
            checked[key] = check_content(value)
        elif key == "memory_type":
            checked[key] = check_content(value, key)
        elif key == "timestamp":
            if value is None:
                raise InvalidArgumentTypeError(
                    "timestamp must be a datetime, a date or an ISO 8601 string, got NoneType"
                )
            checked[key] = check_event_time(value, key)
        elif key == "last_accessed":
            checked[key] = check_event_time(value, key)
        elif key == "metadata":
            checked[key] = decode_metadata(encode_metadata(value))
        elif key == "relevance_score":
            checked[key] = check_finite(value, key)
        elif key == "access_count":
            checked[key] = check_count(value, key)
        elif key == "embedding":
            checked[key] = check_embedding(value, key)
        else:  # the ids
            checked[key] = check_optional_id(value, key)
    return checked


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
    check_encodable(value, name)
    return value


def check_memory_id(value: object, name: str = "memory_id") -> str:
    """A memory id argument: a str (an id no memory has is not an error: it finds nothing).

    Example:
        >>> check_memory_id("0b6c")
        '0b6c'
    """
    if not isinstance(value, str):
        raise InvalidArgumentTypeError(f"{name} must be a str, got {type(value).__name__}")
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
        check_encodable(value, name)
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
            check_encodable(key, name)
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
            return datetime.fromisoformat(obj[_DATETIME_TAG])  # metadata is kept as given
        if _DATE_TAG in obj:
            return date.fromisoformat(obj[_DATE_TAG])
    return obj


def check_encodable(text: str, name: str) -> None:
    """Raise unless ``text`` can be stored: valid Unicode, no lone surrogate.

    Example:
        >>> check_encodable("caf\\udce9", "entityType")
        Traceback (most recent call last):
        ...
        graphmem.errors.InvalidArgumentError: entityType is not valid Unicode text (lone surrogate at position 3)
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidArgumentError(
            f"{name} is not valid Unicode text (lone surrogate at position {exc.start})"
        ) from None


#: Predicate of the untyped edge between entities mentioned in the same memory (every other
#: predicate is a typed relation); defined here, at the bottom, so every layer spells it once.
CO_OCCURS = "co_occurs"


@dataclass(frozen=True)
class StoredMemory:
    """Where a stored item lives, beside the item itself: its sequence number (the order of
    saving), its tier's namespace, its owner (tenant), its text and the save that wrote it.

    Example:
        >>> StoredMemory(seq=7, namespace="long_term", tenant="").view
        'full'
    """

    seq: int
    namespace: str
    tenant: str
    text_id: int = 0
    #: What the item shows of its text: "full", or "body" (the text without its head).
    view: str = "full"
    #: The save that wrote it (every item of one task result shares it), and its key.
    result_id: str | None = None
    dedupe_key: str | None = None
