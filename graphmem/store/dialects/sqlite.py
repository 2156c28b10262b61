"""SQLite specifics: the FTS5 full-text index, ``sqlite_sequence``, and scrubbing the WAL.

The FTS5 table ``texts_fts`` is an external-content index of ``texts`` (porter stemming),
kept in step by triggers; searches are ranked by FTS5's BM25
(:func:`graphmem.store.ranking_rows.lexical_hits`). With FTS5's ``secure-delete`` option
(SQLite 3.42+, which the ``sqlean.py`` wheel brings) a deleted text's words leave the index
at once, so nothing rewrites the index; without it an explicit forget rebuilds the index
(never ``optimize``, which damages the index of SQLite 3.40 after about a thousand deletes).
The index is derived from the rows: a damaged one is rebuilt from them
(:meth:`SQLiteDialect.heal_index`). Write transactions begin with
``BEGIN IMMEDIATE`` (:mod:`graphmem.store.engine`), which also serialises schema creation and
dedupe-key checks between processes, so those locks are no-ops here.

Example:
    >>> SQLITE.name, SQLITE.rebuilds_pre_v4_ids
    ('sqlite', True)
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError

from ...errors import IndexRepairedWarning
from .. import schema
from ..query_text import fts_query_from_text
from . import Dialect

__all__ = ["DIALECT", "SQLITE", "SQLiteDialect", "WAL_SCRUB_WAIT_MS"]

#: How long emptying the WAL after a forgetting commit waits for readers of older snapshots.
WAL_SCRUB_WAIT_MS = 2_000
#: The statements that set those waits (fixed text: SQL is never assembled from values).
_WAL_SCRUB_TIMEOUT = "PRAGMA busy_timeout = 2000"
_BUSY_TIMEOUT = "PRAGMA busy_timeout = 60000"  # engine.BUSY_TIMEOUT_MS, restored

_CREATE_FTS = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS texts_fts USING fts5("
    "head, body, content='texts', content_rowid='id', "
    "tokenize='porter unicode61 remove_diacritics 2')"
)
_FTS_TRIGGERS = (
    "CREATE TRIGGER IF NOT EXISTS texts_fts_ai AFTER INSERT ON texts BEGIN "
    "INSERT INTO texts_fts(rowid, head, body) VALUES (new.id, new.head, new.body); END",
    "CREATE TRIGGER IF NOT EXISTS texts_fts_ad AFTER DELETE ON texts BEGIN "
    "INSERT INTO texts_fts(texts_fts, rowid, head, body) "
    "VALUES('delete', old.id, old.head, old.body); END",
    "CREATE TRIGGER IF NOT EXISTS texts_fts_au AFTER UPDATE OF head, body ON texts BEGIN "
    "INSERT INTO texts_fts(texts_fts, rowid, head, body) "
    "VALUES('delete', old.id, old.head, old.body); "
    "INSERT INTO texts_fts(rowid, head, body) VALUES (new.id, new.head, new.body); END",
)
_REBUILD_FTS = "INSERT INTO texts_fts(texts_fts) VALUES ('rebuild')"
_OPTIMIZE_FTS = "INSERT INTO texts_fts(texts_fts) VALUES ('optimize')"
_SECURE_DELETE_ON = "INSERT INTO texts_fts(texts_fts, rank) VALUES ('secure-delete', 1)"
_SECURE_DELETE_SET = "SELECT v FROM texts_fts_config WHERE k = 'secure-delete'"
#: A query that reads the index's structure (fails on a damaged one) and finds nothing.
_PROBE_FTS = "SELECT rowid FROM texts_fts WHERE texts_fts MATCH '\"graphmem0probe\"' LIMIT 1"
#: Words of SQLite's errors that a damaged FTS5 index gives.
_DAMAGE_WORDS = ("malformed", "texts_fts", "fts5")
# Past the largest id ever given out (AUTOINCREMENT's sqlite_sequence), not only the
# largest in use: ids are never reused.
_NEXT_RELATION_ID = text(
    "SELECT max(coalesce((SELECT max(id) FROM relations), 0), "
    "coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'relations'), 0)) + 1"
)
_RAISE_SEQUENCE = text("UPDATE sqlite_sequence SET seq = max(seq, :seq) WHERE name = :name")
_START_SEQUENCE = text("INSERT INTO sqlite_sequence (name, seq) VALUES (:name, :seq)")


class SQLiteDialect:
    """The :class:`~graphmem.store.dialects.Dialect` of SQLite files and in-memory databases."""

    name: str = "sqlite"
    drop_v1_tables: Sequence[str] = (
        "DROP TRIGGER IF EXISTS memories_fts_ai",
        "DROP TRIGGER IF EXISTS memories_fts_ad",
        "DROP TRIGGER IF EXISTS memories_fts_au",
        "DROP TABLE IF EXISTS memories_fts",
        "DROP TABLE relation_evidence",
        "DROP TABLE mentions",
        "DROP TABLE memories",
    )
    rebuilds_pre_v4_ids: bool = True
    analyze_statement: str | None = (
        None  # SQLite keeps no statistics (its plans rely on the indexes)
    )

    def lock_schema(self, conn: Connection) -> None:
        """Nothing to do: ``BEGIN IMMEDIATE`` already serialises writers."""

    def lock_dedupe_keys(self, conn: Connection) -> None:
        """Nothing to do: ``BEGIN IMMEDIATE`` already serialises writers."""

    def create_extras(self, conn: Connection, *, rebuild: bool) -> None:
        """Mark the file as graphmem's; create the FTS5 index and its triggers; turn on its
        ``secure-delete`` where SQLite has it; rebuild an index found damaged."""
        conn.exec_driver_sql(f"PRAGMA application_id = {schema.APPLICATION_ID}")
        conn.exec_driver_sql(_CREATE_FTS)
        for sql in _FTS_TRIGGERS:
            conn.exec_driver_sql(sql)
        if rebuild:  # the texts were copied before the index existed
            conn.exec_driver_sql(_REBUILD_FTS)
        try:
            conn.exec_driver_sql(_PROBE_FTS).all()
        except DBAPIError as exc:
            if not self.is_damaged_index(exc):
                raise
            self.heal_index(conn, str(exc.orig))
        self._secure_deletes(conn)

    def _secure_deletes(self, conn: Connection) -> None:
        """Turn FTS5's ``secure-delete`` on (SQLite 3.42+), once per file; an index made
        without it is compacted once, which drops what earlier deletes left in it."""
        if not self.has_secure_delete(conn) or conn.exec_driver_sql(_SECURE_DELETE_SET).first():
            return
        conn.exec_driver_sql(_SECURE_DELETE_ON)
        conn.exec_driver_sql(_OPTIMIZE_FTS)

    @staticmethod
    def has_secure_delete(conn: Connection) -> bool:
        """Whether this SQLite's FTS5 has the ``secure-delete`` option (3.42 and later)."""
        version = conn.exec_driver_sql("SELECT sqlite_version()").scalar_one()
        return tuple(int(part) for part in str(version).split(".")[:2]) >= (3, 42)

    @staticmethod
    def is_damaged_index(exc: DBAPIError) -> bool:
        """Whether a statement failed because the FTS5 index is damaged."""
        message = str(exc.orig).lower()
        return any(word in message for word in _DAMAGE_WORDS)

    def heal_index(self, conn: Connection, why: str) -> None:
        """Rebuild the full-text index from the ``texts`` rows (no row is touched), with an
        :class:`~graphmem.errors.IndexRepairedWarning`."""
        warnings.warn(
            f"the full-text index was damaged ({why}); rebuilt it from the stored texts",
            IndexRepairedWarning,
            stacklevel=4,
        )
        conn.exec_driver_sql(_REBUILD_FTS)

    def search(
        self,
        conn: Connection,
        query: str,
        namespaces: Sequence[str],
        tenant: str | None,
        sql_filters: Mapping[str, Any] | None,
        limit: int,
        heads: bool,
    ) -> list[tuple[int, float]]:
        """FTS5's BM25 (porter-stemmed), negated so larger is better, of every matching text
        an item of the search shows (:func:`~graphmem.store.ranking_rows.lexical_hits`)."""
        from ..ranking_rows import Scope, lexical_hits

        fts = fts_query_from_text(query)
        if fts is None:
            return []
        return lexical_hits(conn, fts, Scope.of(namespaces, tenant, sql_filters, heads), limit)

    def next_relation_id(self, conn: Connection) -> int:
        return int(conn.execute(_NEXT_RELATION_ID).scalar_one())

    def after_insert_relations(self, conn: Connection, largest_id: int) -> None:
        """Nothing to do: ``sqlite_sequence`` follows explicit ids by itself."""

    def reset_sequence(self, conn: Connection, table: str, column: str, largest: int) -> None:
        """Raise ``sqlite_sequence``: a sequence already past ``largest`` keeps the ids it
        gave out."""
        if not largest:
            return
        raised = conn.execute(_RAISE_SEQUENCE, {"name": table, "seq": largest})
        if not raised.rowcount:
            conn.execute(_START_SEQUENCE, {"name": table, "seq": largest})

    @contextmanager
    def write_transaction(self, conn: Connection, *, durable: bool) -> Iterator[None]:
        """``durable=False``: ``synchronous=NORMAL`` in WAL mode (no disk flush), set outside
        the transaction (SQLite refuses it inside) on the driver's connection (SQLAlchemy's
        would begin a transaction first)."""
        driver: Any = conn.connection.driver_connection
        relaxed = not durable and driver is not None
        if relaxed:
            driver.execute("PRAGMA synchronous = NORMAL")
        try:
            with conn.begin():
                yield
        finally:
            if relaxed:
                driver.execute("PRAGMA synchronous = FULL")

    def read_isolation(self, conn: Connection) -> Connection:
        """Unchanged: a SQLite read transaction sees one snapshot already."""
        return conn

    def scrub_before_commit(self, conn: Connection) -> None:
        """With FTS5's ``secure-delete`` the forgotten words left the index with their rows:
        nothing to do. Without it (SQLite before 3.42) the index is rebuilt from the rows
        left. Freed pages are zeroed by ``PRAGMA secure_delete``, set on every connection."""
        if not self.has_secure_delete(conn):
            conn.exec_driver_sql(_REBUILD_FTS)

    def scrub_after_commit(self, engine: Engine) -> None:
        """Checkpoint the WAL, which holds the older page images, and truncate it to nothing;
        a reader holding an older snapshot makes it wait (at most ``WAL_SCRUB_WAIT_MS``),
        after which the next checkpoint does it."""
        with engine.connect() as conn:
            driver: Any = conn.connection.driver_connection
            if driver is None:
                return
            driver.execute(_WAL_SCRUB_TIMEOUT)
            try:
                driver.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            finally:
                driver.execute(_BUSY_TIMEOUT)


#: The one SQLite dialect.
SQLITE = SQLiteDialect()
#: What :func:`graphmem.store.dialects.dialect_for` reads.
DIALECT: Dialect = SQLITE
