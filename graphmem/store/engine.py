"""Engine setup: SQLite files (WAL, busy timeout, foreign keys), in-memory SQLite, other URLs.

Opening a file never damages it: a file that is not SQLite, another application's SQLite
database, or a graphmem database from a newer release is refused with
:class:`~graphmem.errors.DatabaseFileError` naming the file, before anything is written. A
file whose only damage is in its full-text index (derived from the ``texts`` rows) is opened,
and the index is rebuilt (:meth:`graphmem.store.dialects.sqlite.SQLiteDialect.heal_index`).

SQLite is the one the ``sqlean.py`` wheel ships (3.50, with FTS5's ``secure-delete``; see
docs/reliability.md, "Which SQLite"), else the interpreter's own ``sqlite3``.

Example:
    >>> engine = create_engine_for(None)   # ephemeral, in-memory
    >>> engine.dialect.name
    'sqlite'
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.pool import StaticPool

from ..errors import DatabaseFileError, SchemaVersionError
from .schema import APPLICATION_ID, SCHEMA_VERSION, parse_schema_version

__all__ = [
    "BUSY_TIMEOUT_MS",
    "SQLITE_MODULE",
    "check_sqlite_file",
    "create_engine_for",
    "is_url",
    "open_engine",
]

try:  # SQLite 3.50 with FTS5 secure-delete, from a wheel (sqlean.py)
    import sqlean as _sqlite_module
except ImportError:  # pragma: no cover - platforms without a sqlean.py wheel
    import sqlite3 as _sqlite_module

#: The DB-API module graphmem's SQLite engines use (``sqlean``, else ``sqlite3``).
SQLITE_MODULE: Any = _sqlite_module
#: ``PRAGMA quick_check`` findings that concern only the FTS5 index, which is derived from the
#: ``texts`` rows and rebuilt from them.
_INDEX_PROBLEM = "FTS5 table"

#: How long a writer waits for another process's lock before giving up.
BUSY_TIMEOUT_MS = 60_000
_SQLITE_HEADER = b"SQLite format 3\x00"
#: PostgreSQL's ``plan_cache_mode`` setting (version 12 and later), and graphmem's value.
_PLAN_CACHE_MODE_SINCE = 120000
_CUSTOM_PLANS = "SET plan_cache_mode = force_custom_plan"
_HEADER_SIZE = 100


def is_url(target: str) -> bool:
    """True for a database URL such as ``postgresql+psycopg://host/db``."""
    return "://" in target


def create_engine_for(target: str | os.PathLike[str] | None) -> Engine:
    """Create the engine for a SQLite file path, a database URL, or ``None`` (in memory).

    A SQLite file named by a ``sqlite:///`` URL gets the same checks as one named by a path
    (:func:`check_sqlite_file`).
    """
    return open_engine(target)[0]


def open_engine(target: str | os.PathLike[str] | None) -> tuple[Engine, bool]:
    """:func:`create_engine_for`, and whether the file's full-text index needs rebuilding
    (``PRAGMA quick_check`` found damage in it alone)."""
    if target is None:
        engine = create_engine(
            "sqlite://",
            module=SQLITE_MODULE,
            poolclass=StaticPool,
            connect_args={"check_same_thread": False},
        )
        _install_sqlite_hooks(engine, wal=False)
        return engine, False
    text = os.fspath(target)
    url = make_url(text) if is_url(text) else None
    if url is not None and url.get_backend_name() != "sqlite":
        engine = create_engine(url, pool_pre_ping=True)
        if url.get_backend_name() == "postgresql":
            _install_postgresql_hooks(engine)
        return engine, False
    if url is not None and url.database in (None, "", ":memory:"):
        engine = create_engine(url, module=SQLITE_MODULE, connect_args={"check_same_thread": False})
        _install_sqlite_hooks(engine, wal=False)
        return engine, False
    path = Path(url.database if url is not None else text).expanduser()  # type: ignore[arg-type]
    index_damaged = check_sqlite_file(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    file_url = (url or make_url("sqlite://")).set(database=str(path))
    engine = create_engine(
        file_url,
        module=SQLITE_MODULE,
        connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000},
    )
    _install_sqlite_hooks(engine, wal=True)
    return engine, index_damaged


def check_sqlite_file(path: Path) -> bool:
    """Refuse a file that graphmem must not open, without modifying it; True when only its
    full-text index is damaged (graphmem rebuilds it from the rows on open).

    Accepts a missing or empty file (a new database) and sound graphmem databases of this or
    an older schema version: a file cut short (not a whole number of pages) or one that
    ``PRAGMA quick_check`` finds damaged outside its full-text index is refused.
    """
    if path.is_dir():
        raise DatabaseFileError(f"{path}: is a directory, not a database file")
    if not path.exists() or path.stat().st_size == 0:
        return False
    with path.open("rb") as handle:
        header = handle.read(_HEADER_SIZE)
    if header[: len(_SQLITE_HEADER)] != _SQLITE_HEADER:
        raise DatabaseFileError(f"{path}: not a SQLite database (unrecognised file header)")
    # A read-only connection to a WAL database leaves -wal and -shm files beside it. Without a
    # -wal file no connection has the database open in WAL mode (and no committed data waits
    # in a WAL), so the file alone is complete: read it as immutable, which creates nothing.
    # If a writer appeared meanwhile, read again the normal way.
    wal_file = path.with_name(path.name + "-wal")
    immutable = not wal_file.exists()
    if immutable:
        _check_whole_pages(path, header)
    try:
        try:
            found = _probe(path, immutable=immutable)
        except SQLITE_MODULE.DatabaseError:
            if not wal_file.exists():
                raise
            immutable = False
            found = _probe(path, immutable=False)
        if immutable and (_is_foreign(found) or (found.problems and wal_file.exists())):
            # An immutable read takes no lock: a writer that started meanwhile (another process
            # creating this very database, its pages being checkpointed) can show it half
            # written. Refuse only what a locked read confirms. (Damage seen while no writer
            # has the file open is real: no second look, which would leave -shm behind.)
            found = _probe(path, immutable=False)
    except SQLITE_MODULE.DatabaseError as exc:
        raise DatabaseFileError(f"{path}: damaged or unreadable SQLite file ({exc})") from None
    if not found.tables and found.app_id == 0:
        return False  # an empty SQLite file: becomes a new graphmem database
    if _is_foreign(found):
        raise DatabaseFileError(
            f"{path}: a SQLite database of another application, not a graphmem database"
        )
    damaged = [p for p in found.problems if _INDEX_PROBLEM not in p]
    if damaged:
        raise DatabaseFileError(f"{path}: damaged SQLite file (quick_check: {'; '.join(damaged)})")
    if found.version is None:
        raise DatabaseFileError(f"{path}: graphmem database without a schema version")
    if found.version > SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{path}: written by a newer graphmem (schema {found.version}); this release reads "
            f"schema {SCHEMA_VERSION} and older. Upgrade graphmem to open it."
        )
    return bool(found.problems)


def _check_whole_pages(path: Path, header: bytes) -> None:
    """Refuse a file cut short: a SQLite file is a whole number of pages, as many as its
    header says (when the header's count is current)."""
    if len(header) < _HEADER_SIZE:
        raise DatabaseFileError(f"{path}: damaged SQLite file (cut short inside its header)")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    size = path.stat().st_size
    pages = int.from_bytes(header[28:32], "big")
    count_is_current = header[24:28] == header[92:96]
    if not page_size or size % page_size or (count_is_current and pages * page_size > size):
        raise DatabaseFileError(
            f"{path}: damaged SQLite file (truncated: {size} bytes, pages of {page_size})"
        )


@dataclass(frozen=True)
class _Probe:
    """What a read-only look at a SQLite file found."""

    app_id: int
    tables: set[str]
    version: int | None
    #: ``PRAGMA quick_check`` findings of a graphmem database (empty: sound).
    problems: list[str]


def _is_foreign(found: _Probe) -> bool:
    return bool(found.tables or found.app_id) and not _is_graphmem(found.app_id, found.tables)


def _is_graphmem(app_id: int, tables: set[str]) -> bool:
    return app_id == APPLICATION_ID and "graphmem_meta" in tables


def _probe(path: Path, *, immutable: bool) -> _Probe:
    """Application id, tables, schema version and (for a graphmem file) ``quick_check``
    findings of a SQLite file, read-only."""
    uri = f"{path.resolve().as_uri()}?mode=ro" + ("&immutable=1" if immutable else "")
    conn = SQLITE_MODULE.connect(uri, uri=True, timeout=5)
    try:
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        version: int | None = None
        problems: list[str] = []
        if _is_graphmem(app_id, tables):
            row = conn.execute(
                "SELECT value FROM graphmem_meta WHERE key = 'schema_version'"
            ).fetchone()
            version = parse_schema_version(row[0], str(path)) if row else None
            # Reads every page once (60 ms CPU for 10,000 memories, docs/reliability.md).
            # (3: the findings an error message quotes at most.)
            found = [str(r[0]) for r in conn.execute("PRAGMA quick_check(3)")]
            problems = [] if found == ["ok"] else found
        return _Probe(app_id, tables, version, problems)
    finally:
        conn.close()


def _install_postgresql_hooks(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # psycopg prepares a statement run five times, and the server then plans it once for
        # any values (a generic plan) when that looks as cheap; for graphmem's queries, whose
        # best plan depends on the tier, agent and entity asked for, the generic plan read up
        # to five times the rows (bench/postgres.py at 10k). Each run is planned for its
        # values; the statement is still parsed once.
        if dbapi_connection.info.server_version >= _PLAN_CACHE_MODE_SINCE:
            with dbapi_connection.cursor() as cursor:
                cursor.execute(_CUSTOM_PLANS)
            dbapi_connection.commit()


def _install_sqlite_hooks(engine: Engine, *, wal: bool) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event below emit BEGIN itself (pysqlite's own
        # transaction handling would defer it and break BEGIN IMMEDIATE).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        # Deleted content is overwritten with zeros, not left in free pages (forgetting).
        cursor.execute("PRAGMA secure_delete = ON")
        if wal:
            cursor.execute("PRAGMA journal_mode = WAL")
            # FULL: a commit that returned survives power loss, not only a process crash
            # (NORMAL could lose the last commits). Costs one fsync (~5 ms here) per commit.
            cursor.execute("PRAGMA synchronous = FULL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # Writers take the write lock up front: a deferred transaction that reads and then
        # writes can fail with "database is locked" without waiting for the busy timeout.
        if conn.get_execution_options().get("graphmem_write"):
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            conn.exec_driver_sql("BEGIN")
