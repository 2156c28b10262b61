"""Task records from files: what ``graphmem ingest`` reads and how it saves them.

A record is a dict of ``save`` keyword arguments (``content`` and the :data:`RECORD_FIELDS`),
read from plain text (one memory per line), JSON lines or CSV, each checked before anything
is saved; a mistake names the file and line.

Example:
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
    ...     _ = f.write('{"content": "Alice joined Acme Corp.", "importance": 0.9}\\n')
    >>> [(r["content"], r["importance"]) for r in read_records(f.name)]
    [('Alice joined Acme Corp.', 0.9)]
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import AnalysisWorkerError, GraphmemError, InvalidArgumentError

if TYPE_CHECKING:
    from .compat.storage import SQLiteStorage
    from .extract.texts import Doc
    from .index.writer import NewText
    from .items import MemoryItem
    from .space import Work

__all__ = [
    "RECORD_FIELDS",
    "TIME_FIELD",
    "IngestSummary",
    "ingest_records",
    "read_records",
    "records_from_text",
]

#: Fields an input record may carry besides ``content``.
RECORD_FIELDS = (
    "agent_id",
    "user_id",
    "conversation_id",
    "task_id",
    "importance",
    "metadata",
    "timestamp",
    "memory_type",
    "dedupe_key",
)
#: The field of a record that holds its event time, unless the reader is told another.
TIME_FIELD = "timestamp"


def read_records(
    source: str,
    fmt: str = "auto",
    user: str | None = None,
    time_field: str = TIME_FIELD,
) -> list[dict[str, Any]]:
    """Parse an input file (or ``-`` for stdin) into ``save`` records.

    ``fmt`` is ``text`` (one memory per non-blank line), ``jsonl`` (objects with ``content``
    and optional ``agent_id``, ``user_id``, ``conversation_id``, ``task_id``, ``importance``,
    ``metadata``, ``timestamp``, ``memory_type``, ``dedupe_key``), ``csv`` (a ``content``
    column and the same optional columns; ``metadata`` holds JSON), or ``auto`` (by file
    suffix; stdin is text).

    ``time_field`` names the field (or column) holding each record's event time, an ISO
    8601 string ("2025-03-03", "2025-03-03T09:12:00+01:00"; see
    :func:`~graphmem.items.check_event_time`), in place of ``timestamp``: ``"date"`` reads
    an export whose time column is called ``date``. Records without one are dated now.

    Example:
        >>> import tempfile
        >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        ...     _ = f.write("Alice met Bob\\n\\nBob joined Acme\\n")
        >>> [r["content"] for r in read_records(f.name)]
        ['Alice met Bob', 'Bob joined Acme']
    """
    if fmt == "auto":
        suffix = Path(source).suffix.lower() if source != "-" else ""
        fmt = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}.get(suffix, "text")
    if source == "-":
        text = sys.stdin.read()
        where = "<stdin>"
    else:
        path = Path(source)
        if not path.exists():
            raise InvalidArgumentError(f"{source}: no such file")
        if path.is_dir():
            raise InvalidArgumentError(f"{source}: is a directory, not an input file")
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InvalidArgumentError(f"{source}: not UTF-8 text ({exc.reason})") from None
        where = source
    return records_from_text(text, fmt, where, user, time_field)


def records_from_text(
    text: str, fmt: str, where: str, user: str | None = None, time_field: str = TIME_FIELD
) -> list[dict[str, Any]]:
    """The records of ``text`` in format ``fmt`` (``text``, ``jsonl`` or ``csv``, as in
    :func:`read_records`); errors name ``where`` and the line.

    Example:
        >>> [r["content"] for r in records_from_text("Alice met Bob\\n\\nBob joined Acme", "text", "notes")]
        ['Alice met Bob', 'Bob joined Acme']
    """
    if not isinstance(time_field, str) or not time_field.strip():
        raise InvalidArgumentError("the time field must be a non-empty field name")
    if time_field == "content" or (time_field != TIME_FIELD and time_field in RECORD_FIELDS):
        raise InvalidArgumentError(f"the time field cannot be {time_field!r}: it has a meaning")
    if fmt == "text" and time_field != TIME_FIELD:
        raise InvalidArgumentError(
            f"{where}: plain text has no fields; a time field needs jsonl or csv input"
        )
    if fmt == "text":
        raw = [
            (number, {"content": line.strip()})
            for number, line in enumerate(text.splitlines(), start=1)
            if line.strip()
        ]
    elif fmt == "jsonl":
        from .transfer import jsonl_objects

        raw = list(jsonl_objects(text.splitlines(), where, InvalidArgumentError))
    elif fmt == "csv":
        raw = list(_csv_rows(text, where))
    else:
        raise InvalidArgumentError(f"unknown format {fmt!r} (choose auto, text, jsonl or csv)")
    return [_record(row, f"{where}, line {number}", user, time_field) for number, row in raw]


def _csv_rows(text: str, where: str) -> Iterator[tuple[int, dict[str, Any]]]:
    from .items import MAX_CONTENT_CHARS

    # A cell may hold as much as a saved content (csv's default limit is 131,072 characters).
    csv.field_size_limit(max(csv.field_size_limit(), MAX_CONTENT_CHARS + 1))
    reader = csv.DictReader(io.StringIO(text))
    try:
        yield from _csv_values(reader, where)
    except csv.Error as exc:
        raise InvalidArgumentError(f"{where}, line {reader.line_num}: bad CSV ({exc})") from None


def _csv_values(reader: csv.DictReader[str], where: str) -> Iterator[tuple[int, dict[str, Any]]]:
    if not reader.fieldnames or "content" not in reader.fieldnames:
        raise InvalidArgumentError(f"{where}: the CSV header has no 'content' column")
    for row in reader:
        number = reader.line_num
        if None in row:
            raise InvalidArgumentError(f"{where}, line {number}: more cells than header columns")
        values: dict[str, Any] = {k: (v if v != "" else None) for k, v in row.items()}
        if values.get("importance") is not None:
            try:
                values["importance"] = float(values["importance"])
            except ValueError:
                raise InvalidArgumentError(
                    f"{where}, line {number}: importance {values['importance']!r} is not a number"
                ) from None
        if values.get("metadata") is not None:
            try:
                values["metadata"] = json.loads(values["metadata"])
            except json.JSONDecodeError:
                raise InvalidArgumentError(
                    f"{where}, line {number}: the metadata cell is not JSON"
                ) from None
        if values.get("content") is None:
            continue  # a blank line inside a CSV file
        yield number, values


def _record(
    row: dict[str, Any], where: str, user: str | None, time_field: str = TIME_FIELD
) -> dict[str, Any]:
    from .items import (
        check_content,
        check_event_time,
        check_importance,
        check_optional_id,
        encode_metadata,
    )
    from .task_results import check_dedupe_key

    known = ["content", *(time_field if f == TIME_FIELD else f for f in RECORD_FIELDS)]
    unknown = sorted(set(row) - set(known))
    if unknown:
        raise InvalidArgumentError(
            f"{where}: unknown field(s) {', '.join(unknown)} (known: {', '.join(known)})"
        )
    try:
        content = check_content(row.get("content"), "content")
        metadata = row.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise InvalidArgumentError("metadata must be a JSON object")
        metadata = dict(metadata)
        encode_metadata(metadata)
        if row.get("memory_type") is not None:
            metadata.setdefault("memory_type", check_optional_id(row["memory_type"], "memory_type"))
        record: dict[str, Any] = {"content": content, "metadata": metadata}
        for name in ("agent_id", "user_id", "conversation_id", "task_id"):
            value = check_optional_id(row.get(name), name)
            if value is not None:
                record[name] = value
        if user is not None:
            record.setdefault("user_id", user)
        key = check_dedupe_key(row.get("dedupe_key"))
        if key is not None:
            record["dedupe_key"] = key
        importance = row.get("importance")
        record["importance"] = check_importance(0.5 if importance is None else importance)
        stamp = row.get(time_field)
        if stamp is not None:
            if not isinstance(stamp, str):
                raise InvalidArgumentError(f"{time_field} must be an ISO 8601 string")
            try:
                record["timestamp"] = check_event_time(stamp, time_field)
            except ValueError:
                raise InvalidArgumentError(
                    f"{time_field} {stamp!r} is not ISO 8601 (e.g. 2026-05-05T09:30:00+00:00)"
                ) from None
    except (GraphmemError, TypeError, ValueError) as exc:
        raise InvalidArgumentError(f"{where}: {exc}") from None
    return record


@dataclass(frozen=True)
class IngestSummary:
    """What :func:`ingest_records` did: records saved, and records skipped because the
    tenant already held them (same content fingerprint: an earlier run, or a repeated line)."""

    saved: int
    skipped: int


def ingest_records(
    storage: SQLiteStorage,
    records: Sequence[dict[str, Any]],
    *,
    batch_size: int = 256,
    progress: bool = False,
    workers: int | None = None,
) -> IngestSummary:
    """Save each record once, as one text shown by the ``long_term`` tier and the ``entity``
    tier of ``storage`` (analysed once, typed relations extracted; no eviction).

    Each batch of whole records is one transaction, and each record carries its
    ``dedupe_key`` (a field of the record: the id the caller has for it), else its content
    fingerprint (:func:`~graphmem.index.writer.fingerprint`): a record whose key its tenant
    already holds is skipped, so running an ingest again, after it finished or after it was
    killed halfway, stores each record exactly once and counts each statement once.

    ``workers`` processes analyse the text (default: the machine's cores), the next batch
    while this one is written; the rows stored are the same with one or many.

    Example:
        >>> from graphmem import SQLiteStorage
        >>> storage = SQLiteStorage()
        >>> ingest_records(storage, [{"content": "Alice met Bob"}, {"content": "Alice met Bob"}])
        IngestSummary(saved=1, skipped=1)
        >>> ingest_records(storage, [{"content": "Alice met Bob"}, {"content": "Bob met Carol"}])
        IngestSummary(saved=1, skipped=1)
    """
    from ._batches import batched, one_ahead
    from .items import check_workers

    texts = _ingest_texts(storage, records)
    writer = storage.writer
    saved = 0
    with writer.bulk(check_workers(workers), len(texts)) as pool:

        def started(
            batch: Sequence[NewText],
        ) -> tuple[list[NewText], Callable[[], list[Doc | None]]]:
            with storage.reading() as tx:  # skip what landed before analysing it again
                fresh = _new_results(tx, list(batch))
            return fresh, writer.analyse_later(fresh, pool)

        batches = batched(texts, batch_size, progress, "ingesting")
        try:
            # The next batch is analysed (by the workers) while this one is written.
            for batch, analysed in one_ahead(started(whole) for whole in batches):
                if batch:
                    docs = analysed()
                    with storage.transaction() as tx:
                        known = tx.known_results(_keys(batch))
                        fresh = [
                            (t, d) for t, d, k in zip(batch, docs, known, strict=True) if k is None
                        ]
                        tx.write([t for t, _ in fresh], [d for _, d in fresh])
                    saved += len(fresh)
        except AnalysisWorkerError as exc:
            raise AnalysisWorkerError(
                f"{exc}. {saved} of the {len(texts)} records were stored (whole batches, "
                "before it), the others not: run the ingest again to store them (what was "
                "stored is skipped)"
            ) from None
    return IngestSummary(saved, len(texts) - saved)


def _ingest_texts(storage: SQLiteStorage, records: Sequence[dict[str, Any]]) -> list[NewText]:
    """Each record as one text shown by a ``long_term`` and an ``entity`` item (checked,
    nothing written), keyed by its ``dedupe_key`` or its fingerprint."""
    from .index.writer import NewText, new_result_id
    from .memories import EntityMemory, LongTermMemory

    long_term = LongTermMemory(storage=storage, max_items=None)
    entity = EntityMemory(storage=storage, max_items=None)
    texts = []
    for position, record in enumerate(records):
        fields = dict(record)
        key = fields.pop("dedupe_key", None)
        try:
            items = [
                long_term.as_new_item(long_term.prepare(**fields)),
                entity.as_new_item(entity.prepare(**fields)),
            ]
        except TypeError as exc:  # a field the tiers do not take
            raise InvalidArgumentError(f"records[{position}]: {exc}") from None
        texts.append(
            NewText(
                body=items[0].item.content,
                items=items,
                relations=entity.extract_relations,
                result_id=new_result_id(),
                dedupe_key=key if key is not None else _fingerprint(items[0].item, fields),
            )
        )
    return texts


def _fingerprint(item: MemoryItem, fields: dict[str, Any]) -> str:
    """The record's fingerprint, of its checked values (so the same record read from JSONL,
    from CSV or given as a dict of strings is the same record): its time only when given
    (a record without one is dated now, and is the same record tomorrow)."""
    from .index.writer import fingerprint
    from .items import check_event_time

    return fingerprint(
        {
            "content": item.content,
            "metadata": item.metadata,  # the importance and memory_type included
            "agent_id": item.agent_id,
            "user_id": item.user_id,
            "conversation_id": item.conversation_id,
            "task_id": item.task_id,
            "timestamp": check_event_time(fields.get("timestamp")),
        }
    )


def _keys(texts: Sequence[NewText]) -> list[tuple[str, str | None, str]]:
    return [(t.tenant, t.dedupe_key, t.result_id or "") for t in texts]


def _new_results(tx: Work, texts: list[NewText]) -> list[NewText]:
    """The texts no stored result (nor an earlier one of ``texts``) has the key of."""
    known = tx.known_results(_keys(texts), writing=False)
    return [t for t, k in zip(texts, known, strict=True) if k is None]
