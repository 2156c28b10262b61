"""Export a graphmem database to JSONL and import it again, losing nothing.

The file is one JSON object per line. The first line is a header::

    {"format": "graphmem-export", "format_version": 1, "schema_version": 5, "tables": {...}}

and every other line is one table row, ``{"table": "memories", "row": {...}}``, with every
column as stored: memory ids, tiers (namespaces), timestamps, access counts, metadata (tagged
datetimes stay tagged), embeddings, key-value rows, and the graph rows that cannot be derived
again from the text (entities, aliases, mentions, relations with their evidence, hand-added
relations, the merge log with its undo snapshots). Rows come in an order that satisfies
foreign keys, so an import inserts them verbatim, in one transaction, into an empty database.

Example:
    >>> import io
    >>> from graphmem import SQLiteStorage
    >>> source = SQLiteStorage(); _ = source.save("prefs", {"tone": "brief"})
    >>> buffer = io.StringIO()
    >>> export_jsonl(source.database, buffer)["kv"]
    1
    >>> _ = buffer.seek(0)
    >>> target = SQLiteStorage()
    >>> import_jsonl(target.database, buffer)["kv"]
    1
    >>> target.load("prefs")
    {'tone': 'brief'}
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from ._files import replacing
from .errors import GraphmemError, InvalidArgumentError, SchemaVersionError
from .items import check_event_time, time_text
from .store import dump, migrations, reanalysis_rows, schema
from .store.database import Database

__all__ = [
    "EXPORT_FORMAT",
    "EXPORT_FORMAT_VERSION",
    "ImportCounts",
    "ImportFileError",
    "export_jsonl",
    "import_jsonl",
]

#: The header's ``format`` value.
EXPORT_FORMAT = "graphmem-export"
#: Bumped when the layout of the export file (not of the database) changes.
EXPORT_FORMAT_VERSION = 1

PathOrFile = str | os.PathLike[str] | IO[str]

#: Errors of rows that do not fit the schema, or of values the conversion refuses.
_ROWS_THAT_DO_NOT_FIT: tuple[type[Exception], ...] = (*dump.ROW_ERRORS, ValueError)


class ImportFileError(GraphmemError, ValueError):
    """The file to import is not a graphmem export, or one of its lines is damaged."""


class ImportCounts(dict[str, int]):
    """Rows imported, by table; ``skipped``: the memories of the file that were not imported
    because the database holds them already (the same import run again)."""

    skipped: int = 0


@contextmanager
def _opened(target: PathOrFile, mode: str) -> Iterator[IO[str]]:
    """A path opened for reading, or for writing whole (:func:`replacing`: a killed export
    leaves no half file); a file object as it is."""
    if not isinstance(target, str | os.PathLike):
        yield target
    elif mode == "w":
        with (
            replacing(Path(target)) as partial,
            partial.open(mode, encoding="utf-8", newline="\n") as handle,
        ):
            yield handle
    else:
        with Path(target).open(mode, encoding="utf-8", newline="\n") as handle:
            yield handle


def export_jsonl(db: Database, target: PathOrFile) -> dict[str, int]:
    """Write every row of ``db`` to ``target`` (a path or a text file); returns rows per table.

    The export is read in one transaction, so it is a consistent snapshot even while other
    processes write. Two exports of the same data are byte-identical.
    """
    with db.read() as conn, _opened(target, "w") as out:
        counts = dump.table_counts(conn)
        counts["graphmem_meta"] = sum(1 for _ in dump.iter_rows(conn, "graphmem_meta"))
        header = {
            "format": EXPORT_FORMAT,
            "format_version": EXPORT_FORMAT_VERSION,
            "schema_version": schema.SCHEMA_VERSION,
            "tables": counts,
        }
        out.write(_line(header))
        for table in dump.DUMP_TABLES:
            for row in dump.iter_rows(conn, table):
                out.write(_line({"table": table, "row": row}))
    return counts


def import_jsonl(db: Database, source: PathOrFile) -> ImportCounts:
    """Insert the rows of an export into ``db``, which must be empty; returns rows per table.

    Everything is checked before anything is written, and the rows are inserted in one
    transaction: a damaged file leaves the database as it was. Importing a file into the
    database it was imported into already changes nothing (it holds every memory and
    key-value row of the file: the same memory ids, tiers and users): nothing is written,
    and ``skipped`` counts the file's memories.

    Raises:
        ImportFileError: not a graphmem export, a damaged line, or row counts that disagree
            with the header (a truncated file).
        SchemaVersionError: the export comes from a newer graphmem.
        InvalidArgumentError: the target database holds other data than the file's.
    """
    where = str(source) if isinstance(source, str | os.PathLike) else "the import file"
    with _opened(source, "r") as handle:
        version, rows = _read_export(handle, where)
    # An export of schema 1 (texts inside memory rows) goes in through the same conversion
    # as a schema-1 database file (graphmem.store.migrations).
    old_rows = (
        {table: rows.pop(table) for table in migrations.V1_COPIED_TABLES} if version == 1 else {}
    )
    if version == 1:
        for row in rows["merges"]:
            row["snapshot"] = json.dumps(migrations.v1_snapshot_to_v2(json.loads(row["snapshot"])))
    try:
        with db.write() as conn:
            if not dump.is_empty(conn):
                memories = rows.get("memories") or old_rows.get("memories") or []
                held = dump.held_rows(conn, memories, rows["kv"])
                if held == (len(memories), len(rows["kv"])):  # imported already
                    skipped = ImportCounts({table: 0 for table in (*rows, *old_rows)})
                    skipped.skipped = len(memories)
                    return skipped
                raise InvalidArgumentError(
                    f"{db.describe()}: the target database is not empty (it holds "
                    f"{held[0]} of the file's {len(memories)} memories); import into a new file"
                )
            for table, table_rows in rows.items():
                dump.insert_rows(conn, table, table_rows)
            if old_rows:
                migrations.load_v1_copies(conn, old_rows)
                migrations.fill_from_v1_copies(conn)
            migrations.fill_result_ids(conn)  # an export of schema 1 or 2 has none
            if version < 5:  # how its texts were indexed was not recorded
                migrations.infer_text_analysis(conn)
            if not any(
                row.get("key") == reanalysis_rows.EXTRACTION_VERSION_KEY
                for row in rows["graphmem_meta"]
            ):  # which rules analysed it is unknown (the target recorded its own when made)
                reanalysis_rows.write_versions(conn, None)
            dump.reset_sequences(conn)
            db.bump_generation(conn)  # graph views cached before the import are stale
    except _ROWS_THAT_DO_NOT_FIT as exc:
        if isinstance(exc, InvalidArgumentError):
            raise
        raise ImportFileError(
            f"{where}: rows do not fit the database schema ({getattr(exc, 'orig', exc)})"
        ) from None
    counts = ImportCounts({table: len(table_rows) for table, table_rows in rows.items()})
    counts.update({table: len(table_rows) for table, table_rows in old_rows.items()})
    return counts


def jsonl_objects(
    lines: Iterable[str], where: str, error: type[Exception] = InvalidArgumentError
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of JSON-lines text; a line that is
    not a JSON object raises ``error`` naming ``where`` and the line.

    Example:
        >>> list(jsonl_objects(['{"a": 1}', "", '{"b": 2}'], "notes.jsonl"))
        [(1, {'a': 1}), (3, {'b': 2})]
    """
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{where}, line {number}: not JSON ({exc.msg})") from None
        except (ValueError, RecursionError) as exc:  # a 5,000-digit number, deep nesting
            reason = str(exc).split(";")[0] if isinstance(exc, ValueError) else "nested too deep"
            raise error(f"{where}, line {number}: not JSON graphmem reads ({reason})") from None
        if not isinstance(record, dict):
            raise error(f"{where}, line {number}: not a JSON object")
        yield number, record


def _read_export(handle: IO[str], where: str) -> tuple[int, dict[str, list[dict[str, Any]]]]:
    """The export's schema version and its rows by table."""
    rows: dict[str, list[dict[str, Any]]] = {table: [] for table in dump.DUMP_TABLES}
    header: dict[str, Any] | None = None
    columns_of: dict[str, set[str]] = {}
    for number, record in jsonl_objects(handle, where, ImportFileError):
        if header is None:
            header = _check_header(record, where)
            columns_of = _columns(header["schema_version"])
            if header["schema_version"] < 2:
                del rows["texts"]
            continue
        table, row = record.get("table"), record.get("row")
        if table not in rows or not isinstance(row, dict) or set(record) != {"table", "row"}:
            raise ImportFileError(
                f"{where}, line {number}: expected {{'table': <one of "
                f"{', '.join(rows)}>, 'row': {{...}}}}"
            )
        unknown = sorted(set(row) - columns_of[table])
        if unknown:
            raise ImportFileError(
                f"{where}, line {number}: unknown column(s) of {table}: {', '.join(unknown)}"
            )
        if table == "graphmem_meta" and row.get("key") in dump.INTERNAL_META_KEYS:
            continue
        _check_times(table, row, f"{where}, line {number}")
        rows[table].append(row)
    if header is None:
        raise ImportFileError(f"{where}: empty file, not a graphmem export")
    expected = header["tables"]
    for table, table_rows in rows.items():
        if expected.get(table, 0) != len(table_rows):
            raise ImportFileError(
                f"{where}: the header promises {expected.get(table, 0)} {table} rows but the "
                f"file holds {len(table_rows)} (truncated or edited?)"
            )
    return int(header["schema_version"]), rows


def _columns(schema_version: int) -> dict[str, set[str]]:
    """The columns an export of ``schema_version`` may hold, by table."""
    columns = {name: {c.name for c in table.columns} for name, table in dump.DUMP_TABLES.items()}
    if schema_version < 2:
        for table, names in migrations.V1_COPIED_TABLES.items():
            columns[table] = set(names)
        columns["entities"].discard("mentions")
        columns["relations"].discard("support")
    return columns


def _check_header(record: dict[str, Any], where: str) -> dict[str, Any]:
    if record.get("format") != EXPORT_FORMAT:
        raise ImportFileError(f"{where}: not a graphmem export (no '{EXPORT_FORMAT}' header)")
    version = record.get("format_version")
    if not isinstance(version, int) or version > EXPORT_FORMAT_VERSION:
        raise ImportFileError(
            f"{where}: export format {version!r} is newer than this graphmem reads "
            f"({EXPORT_FORMAT_VERSION}); upgrade graphmem"
        )
    if not isinstance(record.get("tables"), dict):
        # The row counts are how a truncated file is recognised: without them, refuse.
        raise ImportFileError(f"{where}: the export header has no 'tables' row counts")
    schema_version = record.get("schema_version")
    if (
        not isinstance(schema_version, int)
        or schema_version < 1
        or schema_version > schema.SCHEMA_VERSION
    ):
        raise SchemaVersionError(
            f"{where}: exported from database schema {schema_version!r}; this release reads "
            f"schema {schema.SCHEMA_VERSION} and older. Upgrade graphmem to import it."
        )
    return record


def _check_times(table: str, row: dict[str, Any], where: str) -> None:
    """Each time of ``row`` in the one stored form (aware UTC; a naive text of an older
    export is read on the local clock), or :class:`ImportFileError` naming the column."""
    for column in schema.TIME_COLUMNS.get(table, ()):
        value = row.get(column)
        if value is None:
            continue
        try:
            when = check_event_time(value, column) if isinstance(value, str) else None
        except InvalidArgumentError:
            when = None
        if when is None:
            raise ImportFileError(
                f"{where}: {table}.{column} {str(value)[:40]!r} is not an ISO 8601 time"
            )
        row[column] = time_text(when)


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, allow_nan=False, sort_keys=True) + "\n"
