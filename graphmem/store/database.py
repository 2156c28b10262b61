"""The :class:`Database`: one SQL database (a SQLite file, in-memory SQLite, or a server URL).

All SQL of graphmem's memory rows lives here and in :mod:`graphmem.store.graph_rows`. Every
public write runs in one transaction; a thread-safe lock serialises writers in one process
and SQLite's busy timeout serialises processes.

Example:
    >>> db = Database()                      # in memory
    >>> with db.write() as conn:
    ...     seq = db.insert_memory(conn, MemoryItem("Alice met Bob"), namespace="notes")
    >>> with db.read() as conn:
    ...     [item.content for _, item in db.list_items(conn, ["notes"])]
    ['Alice met Bob']
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import (
    Connection,
    Engine,
    Integer,
    String,
    and_,
    bindparam,
    cast,
    delete,
    exists,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.exc import OperationalError

from ..errors import DatabaseFileError, InvalidArgumentError, StorageFullError
from ..items import MemoryItem, decode_metadata, encode_metadata, stored_time, time_text
from . import dump, migrations, postgres, schema
from .engine import create_engine_for, is_url
from .vectors import decode_embedding, encode_embedding

__all__ = [
    "Database",
    "MemoryRow",
    "NewItemRow",
    "SQL_FILTER_COLUMNS",
    "TextAnalysis",
    "fts_query_from_text",
    "shown_content",
    "shows_mention",
]

#: MemoryItem attributes that filters may push down into SQL when compared to a plain value.
SQL_FILTER_COLUMNS = (
    "memory_id",
    "memory_type",
    "agent_id",
    "task_id",
    "conversation_id",
    "user_id",
)

_M = schema.memories
_T = schema.texts
_V = TypeVar("_V")
_TOKEN = re.compile(r"\w+", re.UNICODE)
# Words too common to decide whether a memory matches a query. The same list serves the
# lexical ranking (retrieval) so that "matches" means the same everywhere.
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    """.split()
)


@dataclass(frozen=True)
class NewItemRow:
    """A tier item to insert, showing the stored text ``text_id`` (all of it, or with
    ``view="body"`` its body), with the canonical key of who said or did it."""

    item: MemoryItem
    namespace: str
    importance: float | None
    text_id: int
    view: str = "full"
    author_key: str | None = None
    #: The save that wrote it (None: the item's own memory id) and its idempotency key.
    result_id: str | None = None
    dedupe_key: str | None = None


@dataclass(frozen=True)
class TextAnalysis:
    """How a text is indexed (its ``texts`` columns), so ``reanalyse`` can index it again
    the same way: with typed relations or not, the names given in place of extraction
    (Calute's ``entities=``), the tiers whose items list its entities."""

    relations: bool = False
    given_entities: Sequence[str] | None = None
    listed_in: Sequence[str] = ()

    @staticmethod
    def columns_of(analysis: TextAnalysis | None) -> dict[str, Any]:
        """The ``texts`` columns of a text indexed as ``analysis`` (None: not indexed)."""
        if analysis is None:
            return {"analysis": schema.NOT_ANALYSED, "given_entities": None, "listed_in": None}
        return analysis.columns()

    def columns(self) -> dict[str, Any]:
        """The ``texts`` columns of an indexed text."""
        return {
            "analysis": schema.WITH_RELATIONS if self.relations else schema.ENTITIES_ONLY,
            "given_entities": None
            if self.given_entities is None
            else json.dumps(list(self.given_entities), ensure_ascii=False),
            "listed_in": json.dumps(list(self.listed_in)) if self.listed_in else None,
        }


@dataclass(frozen=True)
class MemoryRow:
    """A memory row's position, owner and text, beside the item itself."""

    seq: int
    namespace: str
    tenant: str
    text_id: int = 0
    #: What the item shows of its text: "full", or "body" (the text without its head).
    view: str = "full"
    #: The save that wrote it (every item of one task result shares it), and its key.
    result_id: str | None = None
    dedupe_key: str | None = None


def query_terms(query: str) -> list[str]:
    """Lower-cased word tokens of a query, stop words dropped unless nothing else is left.

    Example:
        >>> query_terms("Who works at the Acme office?")
        ['works', 'acme', 'office']
    """
    tokens = [t for t in _TOKEN.findall(query.lower()) if t]
    kept = [t for t in tokens if t not in STOP_WORDS]
    return list(dict.fromkeys(kept or tokens))


def fts_query_from_text(query: str) -> str | None:
    """An FTS5 query that matches any of the query's terms (each quoted, so no syntax leaks).

    Example:
        >>> fts_query_from_text('Acme "CEO" OR x')
        '"acme" OR "ceo" OR "x"'
    """
    terms = query_terms(query)
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


class Database:
    """A graphmem database.

    Args:
        target: ``None`` for an ephemeral in-memory database, a file path for SQLite, or a
            SQLAlchemy URL (``sqlite:///x.db``, ``postgresql+psycopg://user@host/db``).
    """

    def __init__(self, target: str | os.PathLike[str] | None = None) -> None:
        self.target = os.fspath(target) if target is not None else None
        self.engine: Engine = create_engine_for(target)
        self.dialect = self.engine.dialect.name
        self._lock = threading.RLock()
        self._local = threading.local()
        try:
            self._initialise()
        except OperationalError as exc:
            self.engine.dispose()
            raise DatabaseFileError(f"{self.describe()}: cannot be opened ({exc.orig})") from None

    # ------------------------------------------------------------------ lifecycle
    def describe(self) -> str:
        """Where the data lives, for messages: a file path, a URL without password, or memory."""
        if self.target is None:
            return "in-memory database"
        if is_url(self.target):
            return self.engine.url.render_as_string(hide_password=True)
        return str(Path(self.target))

    @property
    def persistent(self) -> bool:
        """False for the ephemeral in-memory database."""
        return self.target is not None

    def close(self) -> None:
        """Release connections. The object must not be used afterwards."""
        self.engine.dispose()

    def _initialise(self) -> None:
        with self.write() as conn:
            if self.dialect == "postgresql":
                postgres.lock_schema(conn)  # other processes may be creating it right now
            # An older graphmem's tables, rewritten in this transaction.
            upgraded = migrations.upgrade(conn)
            schema.metadata_obj.create_all(conn)
            for table in schema.metadata_obj.sorted_tables:
                for index in table.indexes:  # indexes added since the file was made
                    index.create(conn, checkfirst=True)
            if self.dialect == "postgresql":
                postgres.create_extras(conn)
            if self.dialect == "sqlite":
                conn.exec_driver_sql(f"PRAGMA application_id = {schema.APPLICATION_ID}")
                conn.exec_driver_sql(
                    "CREATE VIRTUAL TABLE IF NOT EXISTS texts_fts USING fts5("
                    "head, body, content='texts', content_rowid='id', "
                    "tokenize='porter unicode61 remove_diacritics 2')"
                )
                for sql in _SQLITE_FTS_TRIGGERS:
                    conn.exec_driver_sql(sql)
                if upgraded:  # the texts were copied before the index existed
                    conn.exec_driver_sql("INSERT INTO texts_fts(texts_fts) VALUES ('rebuild')")
            if upgraded:
                dump.reset_sequences(conn)
            version = conn.execute(
                select(schema.meta.c.value).where(schema.meta.c.key == "schema_version")
            ).scalar()
            if version is None:
                conn.execute(
                    insert(schema.meta).values(
                        key="schema_version", value=str(schema.SCHEMA_VERSION)
                    )
                )
            has_generation = conn.execute(
                select(schema.meta.c.key).where(schema.meta.c.key == "graph_generation")
            ).first()
            if has_generation is None:
                # The row exists from the start so that bump_generation is one atomic UPDATE.
                conn.execute(insert(schema.meta).values(key="graph_generation", value="0"))

    @contextmanager
    def write(self, durable: bool = True) -> Iterator[Connection]:
        """One write transaction; nested calls in the same thread join the outer one.

        Callbacks registered with :meth:`after_commit` run once the outermost transaction
        has committed; those registered with :meth:`after_rollback` run if it rolls back.
        ``durable=False`` is for bookkeeping (access counts): its commit survives a crash of
        the process but not a power loss (SQLite ``synchronous=NORMAL`` in WAL mode,
        PostgreSQL ``synchronous_commit=off``), and costs no disk flush.
        """
        with self._lock:
            current = getattr(self._local, "tx", None)
            if current is not None:
                yield current.conn
                return
            with self._disk_full_is_named(), self.engine.connect() as conn:
                conn = conn.execution_options(graphmem_write=True)
                tx = _Transaction(conn)
                self._local.tx = tx
                # Set outside the transaction (SQLite refuses it inside), on the driver's
                # connection (SQLAlchemy's would begin one first).
                driver: Any = conn.connection.driver_connection
                relaxed = not durable and self.dialect == "sqlite" and driver is not None
                if relaxed:
                    driver.execute("PRAGMA synchronous = NORMAL")
                try:
                    with conn.begin():
                        if not durable and self.dialect == "postgresql":
                            conn.exec_driver_sql("SET LOCAL synchronous_commit TO OFF")
                        yield conn
                        for callback in tx.before_commit:
                            callback()
                except BaseException:
                    self._local.tx = None
                    for callback in tx.on_rollback:
                        callback()
                    raise
                finally:
                    if relaxed:
                        driver.execute("PRAGMA synchronous = FULL")
                self._local.tx = None
            for callback in tx.on_commit:
                callback()

    @contextmanager
    def _disk_full_is_named(self) -> Iterator[None]:
        """A write that failed for want of disk space raises :class:`StorageFullError` (the
        transaction was rolled back, so none of it is stored)."""
        try:
            yield
        except OperationalError as exc:
            if not _is_disk_full(exc):
                raise
            raise StorageFullError(
                f"{self.describe()}: the disk is full; nothing of this write was stored "
                f"({exc.orig})"
            ) from None

    def record_access(self, seqs: Sequence[int], when: datetime) -> bool:
        """Count one access of each row in a transaction of its own (bookkeeping: no disk
        flush); False when the disk is full, which a read must not fail for. Inside an open
        write transaction it joins it (and a full disk fails that transaction)."""
        if getattr(self._local, "tx", None) is not None:
            self.touch(self._local.tx.conn, seqs, when)
            return True
        try:
            with self.write(durable=False) as conn:
                self.touch(conn, seqs, when)
        except StorageFullError:
            return False
        return True

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` when the current write transaction commits (now if none is open)."""
        tx = getattr(self._local, "tx", None)
        if tx is None:
            callback()
        else:
            tx.on_commit.append(callback)

    def before_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` when the current write transaction is about to commit; if it
        raises, the transaction rolls back instead (now if none is open)."""
        tx = getattr(self._local, "tx", None)
        if tx is None:
            callback()
        else:
            tx.before_commit.append(callback)

    def after_rollback(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` if the current write transaction rolls back."""
        tx = getattr(self._local, "tx", None)
        if tx is not None:
            tx.on_rollback.append(callback)

    def bump_generation(self, conn: Connection) -> tuple[int, int]:
        """Count one change of the entity graph in this transaction; returns ``(before, after)``.

        Graph views compare the stored generation with theirs to notice writes made by
        other processes sharing the database. A transaction bumps it at most once.
        """
        tx = getattr(self._local, "tx", None)
        if tx is not None and tx.generation is not None:
            return tx.generation
        # One atomic increment: on a server its row lock also serialises graph writers of
        # all processes until commit, as SQLite's BEGIN IMMEDIATE does.
        value = schema.meta.c.value
        after = conn.execute(
            update(schema.meta)
            .where(schema.meta.c.key == "graph_generation")
            .values(value=cast(cast(value, Integer) + 1, String))
            .returning(value)
        ).scalar()
        if after is None:
            conn.execute(insert(schema.meta).values(key="graph_generation", value="1"))
            after = "1"
        generation = (int(after) - 1, int(after))
        if tx is not None:
            tx.generation = generation
        return generation

    def refresh_statistics(self) -> None:
        """After a bulk load: PostgreSQL's planner statistics of the graphmem tables made
        again (``ANALYZE``), so the first queries on a fresh store plan with its real sizes,
        not autovacuum's later guess. SQLite keeps none (its plans rely on the indexes)."""
        if self.dialect == "postgresql":
            with self.write() as conn:
                conn.exec_driver_sql(_ANALYZE_TABLES)

    def generation(self, conn: Connection) -> int:
        """The stored graph generation (0 for a new database); read once per read transaction
        (its snapshot cannot change)."""
        reading = getattr(self._local, "tx", None) is None and conn is getattr(
            self._local, "read_conn", None
        )
        if reading and getattr(self._local, "read_generation", None) is not None:
            return int(self._local.read_generation)
        value = conn.execute(
            select(schema.meta.c.value).where(schema.meta.c.key == "graph_generation")
        ).scalar()
        generation = int(value) if value is not None else 0
        if reading:
            self._local.read_generation = generation
        return generation

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read transaction (joins a write transaction already open in this thread)."""
        with self._lock:
            current = getattr(self._local, "tx", None)
            if current is not None:
                yield current.conn
                return
            reading = getattr(self._local, "read_conn", None)
            if reading is not None:  # nested read in the same thread: join it
                yield reading
                return
            with self.engine.connect() as conn:
                if self.dialect == "postgresql":
                    # One snapshot for the whole read (a graph view and its generation agree).
                    conn = conn.execution_options(isolation_level="REPEATABLE READ")
                with conn.begin():
                    self._local.read_conn = conn
                    try:
                        yield conn
                    finally:
                        self._local.read_conn = None
                        self._local.read_generation = None

    # ------------------------------------------------------------------ memory rows
    def insert_memory(
        self,
        conn: Connection,
        item: MemoryItem,
        *,
        namespace: str,
        importance: float | None = None,
    ) -> int:
        """Insert ``item`` (its own text) and return its row number (``seq``)."""
        return self.insert_memories(conn, [(item, namespace, importance)])[0].seq

    def insert_memories(
        self, conn: Connection, rows: Sequence[tuple[MemoryItem, str, float | None]]
    ) -> list[MemoryRow]:
        """Insert items, each with a text of its own, in the caller's transaction; returns
        their rows in order."""
        text_ids = self.insert_texts(
            conn, [(item.user_id or "", "", item.content) for item, _, _ in rows]
        )
        return self.insert_items(
            conn,
            [
                NewItemRow(item, namespace, importance, text_id)
                for (item, namespace, importance), text_id in zip(rows, text_ids, strict=True)
            ],
        )

    def insert_texts(
        self,
        conn: Connection,
        texts: Sequence[tuple[str, str, str]],
        analyses: Sequence[TextAnalysis | None] | None = None,
    ) -> list[int]:
        """Insert ``(tenant, head, body)`` texts (one statement), indexed as ``analyses``
        say (None, or a None in it: not indexed); returns their ids in order."""
        if not texts:
            return []
        marks = analyses if analyses is not None else [None] * len(texts)
        rows = [
            {"tenant": tenant, "head": head, "body": body, **TextAnalysis.columns_of(analysis)}
            for (tenant, head, body), analysis in zip(texts, marks, strict=True)
        ]
        return [int(i) for i in conn.execute(_INSERT_TEXTS, rows).scalars()]

    def record_analysis(
        self, conn: Connection, text_id: int, analysis: TextAnalysis | None
    ) -> None:
        """Record how the text ``text_id`` is indexed (None: not), after its content changed."""
        columns = TextAnalysis.columns_of(analysis)
        conn.execute(update(_T).where(_T.c.id == text_id).values(**columns))

    def items_of_texts(
        self, conn: Connection, text_ids: Sequence[int]
    ) -> list[tuple[MemoryRow, MemoryItem]]:
        """Every item showing one of ``text_ids``, in insertion order."""
        out: list[tuple[MemoryRow, MemoryItem]] = []
        for chunk in chunks(list(text_ids), 500):
            stmt = _ITEMS.where(_M.c.text_id.in_(chunk)).order_by(_M.c.seq)
            out.extend((_row_key(r), _row_to_item(r)) for r in conn.execute(stmt))
        out.sort(key=lambda pair: pair[0].seq)
        return out

    def insert_items(self, conn: Connection, rows: Sequence[NewItemRow]) -> list[MemoryRow]:
        """Insert tier items of stored texts (one statement); returns their rows in order."""
        if not rows:
            return []
        values = [
            {
                **_item_values(r.item, r.namespace, r.importance, r.author_key),
                "text_id": r.text_id,
                "view": r.view,
                "result_id": r.result_id or r.item.memory_id,
                "dedupe_key": r.dedupe_key,
            }
            for r in rows
        ]
        seqs = [int(s) for s in conn.execute(_INSERT_ITEMS, values).scalars()]
        return [
            MemoryRow(
                seq, r.namespace, r.item.user_id or "", r.text_id, r.view,
                r.result_id or r.item.memory_id,
            )
            for seq, r in zip(seqs, rows, strict=True)
        ]  # fmt: skip

    def update_metadata_many(
        self, conn: Connection, rows: Sequence[tuple[int, Mapping[str, Any]]]
    ) -> None:
        """Rewrite the metadata of several rows ``(seq, metadata)`` (one statement)."""
        if rows:
            conn.execute(
                _UPDATE_METADATA,
                [{"row_seq": seq, "metadata": encode_metadata(dict(m))} for seq, m in rows],
            )

    def find(
        self, conn: Connection, memory_id: str, namespaces: Sequence[str]
    ) -> tuple[MemoryRow, MemoryItem] | None:
        """The row and item with ``memory_id`` in one of ``namespaces``, or None."""
        row = conn.execute(
            _ITEMS.where(_M.c.memory_id == memory_id, _M.c.namespace.in_(namespaces))
        ).first()
        if row is None:
            return None
        return _row_key(row), _row_to_item(row)

    def results_with_keys(
        self, conn: Connection, tenant: str, keys: Sequence[str], *, writing: bool = False
    ) -> dict[str, str]:
        """The stored result id of each of ``keys`` (``dedupe_key`` values) that ``tenant``
        already has (keys no item carries are left out). ``writing``: the caller stores the
        missing ones in this transaction (other writers of keys wait until it ends).

        Example:
            >>> db = Database()
            >>> with db.write() as conn:
            ...     [text] = db.insert_texts(conn, [("", "", "Alice met Bob")])
            ...     _ = db.insert_items(conn, [NewItemRow(MemoryItem("Alice met Bob"), "notes",
            ...                                           None, text, result_id="r1", dedupe_key="k1")])
            ...     db.results_with_keys(conn, "", ["k1", "k2"])
            {'k1': 'r1'}
        """
        if writing and keys and self.dialect == "postgresql":
            postgres.lock_dedupe_keys(conn)
        found: dict[str, str] = {}
        for chunk in chunks(list(keys), 500):
            stmt = select(_M.c.dedupe_key, _M.c.result_id).where(
                _M.c.tenant == tenant, _M.c.dedupe_key.in_(chunk)
            )
            for key, result in conn.execute(stmt):
                found.setdefault(str(key), str(result))
        return found

    def result_rows(
        self,
        conn: Connection,
        result_ids: Sequence[str],
        namespaces: Sequence[str] | None = None,
        tenant: str | None = None,
    ) -> list[tuple[MemoryRow, MemoryItem]]:
        """Every item of the results ``result_ids`` (in ``namespaces``, of ``tenant``, when
        given), in insertion order."""
        out: list[tuple[MemoryRow, MemoryItem]] = []
        for chunk in chunks(list(result_ids), 500):
            stmt = _ITEMS.where(_M.c.result_id.in_(chunk), *row_conditions(tenant, None))
            if namespaces is not None:
                stmt = stmt.where(_M.c.namespace.in_(list(namespaces)))
            out.extend(
                (_row_key(r), _row_to_item(r)) for r in conn.execute(stmt.order_by(_M.c.seq))
            )
        return out

    def matching_results(
        self,
        conn: Connection,
        namespaces: Sequence[str],
        *,
        tenant: str | None = None,
        sql_filters: Mapping[str, Any] | None = None,
        before: datetime | None = None,
    ) -> list[str]:
        """The ids of the results with an item in ``namespaces`` that matches: of ``tenant``,
        with column filters, saved (event time) before ``before``; oldest first."""
        stmt = select(_M.c.result_id).where(
            _M.c.namespace.in_(list(namespaces)), *row_conditions(tenant, sql_filters)
        )
        if before is not None:
            stmt = stmt.where(_M.c.created_at < time_text(before))  # the stored form
        ids = conn.execute(stmt.order_by(_M.c.seq)).scalars()
        return list(dict.fromkeys(str(i) for i in ids if i is not None))

    def result_id_of(self, conn: Connection, seq: int) -> str | None:
        """The result id of the item ``seq`` (None when it is gone)."""
        return conn.execute(select(_M.c.result_id).where(_M.c.seq == seq)).scalar()

    def text_parts(self, conn: Connection, text_id: int) -> tuple[str, str] | None:
        """A stored text's ``(head, body)`` (None when it is gone)."""
        row = conn.execute(select(_T.c.head, _T.c.body).where(_T.c.id == text_id)).first()
        return (str(row[0]), str(row[1])) if row is not None else None

    def existing_ids(
        self, conn: Connection, memory_ids: Sequence[str], namespaces: Sequence[str]
    ) -> set[str]:
        """Which of ``memory_ids`` are in ``namespaces``."""
        if not memory_ids:
            return set()
        stmt = select(_M.c.memory_id).where(
            _M.c.memory_id.in_(list(memory_ids)), _M.c.namespace.in_(list(namespaces))
        )
        return {str(m) for m in conn.execute(stmt).scalars()}

    def fetch(self, conn: Connection, seqs: Sequence[int]) -> dict[int, MemoryItem]:
        """Items by ``seq`` (missing ones left out)."""
        return {seq: item for seq, (_, item) in self.fetch_rows(conn, seqs).items()}

    def fetch_rows(
        self, conn: Connection, seqs: Sequence[int]
    ) -> dict[int, tuple[MemoryRow, MemoryItem]]:
        """Rows and items by ``seq`` (missing ones left out)."""
        out: dict[int, tuple[MemoryRow, MemoryItem]] = {}
        for chunk in chunks(list(seqs), 500):
            for row in conn.execute(_ITEMS_BY_SEQ, {"seqs": chunk}).all():
                out[row.seq] = (_row_key(row), _row_to_item(row))
        return out

    def list_items(
        self,
        conn: Connection,
        namespaces: Sequence[str],
        *,
        tenant: str | None = None,
        sql_filters: Mapping[str, Any] | None = None,
        newest_first: bool = False,
        limit: int | None = None,
        before_seq: int | None = None,
        by_time: bool = False,
    ) -> list[tuple[MemoryRow, MemoryItem]]:
        """Items of ``namespaces`` in insertion order (or newest first); ``by_time``: in the
        order of their event times (``created_at``, then insertion), without ``before_seq``."""
        stmt = _ITEMS.where(_M.c.namespace.in_(namespaces), *row_conditions(tenant, sql_filters))
        if before_seq is not None:
            if by_time:
                raise InvalidArgumentError("before_seq pages in insertion order, not by_time")
            stmt = stmt.where(_M.c.seq < before_seq if newest_first else _M.c.seq > before_seq)
        order = [_M.c.created_at, _M.c.seq] if by_time else [_M.c.seq]
        stmt = stmt.order_by(*(c.desc() if newest_first else c.asc() for c in order))
        if limit is not None:
            stmt = stmt.limit(limit)
        return [(_row_key(r), _row_to_item(r)) for r in conn.execute(stmt)]

    def count(
        self, conn: Connection, namespaces: Sequence[str] | None, tenant: str | None = None
    ) -> int:
        """Number of items in ``namespaces`` (all when None; of one tenant when given)."""
        if namespaces is not None:  # once per save (capacity checks): prebuilt statements
            if tenant is None:
                found = conn.execute(_COUNT, {"namespaces": list(namespaces)})
            else:
                found = conn.execute(
                    _COUNT_OF_TENANT, {"namespaces": list(namespaces), "tenant": tenant}
                )
            return int(found.scalar() or 0)
        stmt = select(func.count()).select_from(_M)
        if tenant is not None:
            stmt = stmt.where(_M.c.tenant == tenant)
        return int(conn.execute(stmt).scalar() or 0)

    def counts_by_tenant(self, conn: Connection, namespaces: Sequence[str]) -> dict[str, int]:
        """Number of items in ``namespaces`` of each tenant that has some (capacity is per
        tenant: one user's saves never evict another's)."""
        stmt = (
            select(_M.c.tenant, func.count())
            .where(_M.c.namespace.in_(list(namespaces)))
            .group_by(_M.c.tenant)
        )
        return {str(tenant): int(n) for tenant, n in conn.execute(stmt)}

    def rows_beyond_newest(
        self, conn: Connection, namespaces: Sequence[str], tenant: str | None, keep: int
    ) -> list[MemoryRow]:
        """The rows of ``namespaces`` (of ``tenant`` when given) other than the newest
        ``keep`` by event time (``created_at``, then insertion), oldest first: what a
        first-in-first-out capacity of ``keep`` evicts. An item saved with an old event time
        (history recorded after the fact) goes before fresher ones, never instead of them."""
        params: dict[str, Any] = {"namespaces": list(namespaces), "skip": keep}
        stmt = _ROWS_NEWEST_FIRST
        if tenant is not None:
            stmt, params["tenant"] = _ROWS_OF_TENANT_NEWEST_FIRST, tenant
        return [_row_key(r) for r in reversed(conn.execute(stmt, params).all())]

    def eviction_candidates(
        self, conn: Connection, namespace: str, tenant: str | None = None
    ) -> list[tuple[MemoryRow, float, int, str]]:
        """``(row, importance, access_count, created_at)`` of every row, for eviction policies."""
        stmt = select(
            _M.c.seq, _M.c.tenant, _M.c.importance, _M.c.access_count, _M.c.created_at, _M.c.text_id
        ).where(_M.c.namespace == namespace)
        if tenant is not None:
            stmt = stmt.where(_M.c.tenant == tenant)
        return [
            (
                MemoryRow(int(r[0]), namespace, r[1], int(r[5])),
                float(r[2] if r[2] is not None else 0.5),
                int(r[3]),
                r[4],
            )
            for r in conn.execute(stmt)
        ]

    def delete_rows(self, conn: Connection, seqs: Sequence[int]) -> int:
        """Delete tier items, and the texts no item shows any more (their mentions and
        evidence cascade). Returns the number of items deleted."""
        deleted, orphans = self.delete_items(conn, seqs)
        self.delete_texts(conn, orphans)
        return deleted

    def delete_items(self, conn: Connection, seqs: Sequence[int]) -> tuple[int, list[int]]:
        """Delete tier items; returns how many, and the ids of the texts that no item shows
        any more (still stored: :meth:`delete_texts` deletes them)."""
        deleted = 0
        texts: set[int] = set()
        for chunk in chunks(list(seqs), 500):
            texts.update(conn.execute(_TEXTS_OF_ITEMS, {"seqs": chunk}).scalars())
            deleted += conn.execute(_DELETE_ROWS, {"seqs": chunk}).rowcount or 0
        orphans: list[int] = []
        for chunk in chunks(sorted(texts), 500):
            orphans.extend(int(t) for t in conn.execute(_UNSHOWN_TEXTS, {"ids": chunk}).scalars())
        return deleted, orphans

    def delete_texts(self, conn: Connection, text_ids: Sequence[int]) -> None:
        """Delete texts (their mentions and evidence cascade); no byte of them stays in the
        file (:meth:`_scrub`)."""
        for chunk in chunks(list(text_ids), 500):
            conn.execute(_DELETE_TEXTS, {"ids": chunk})
        if text_ids:
            self._scrub(conn)

    def _scrub(self, conn: Connection) -> None:
        """Texts were deleted or rewritten in this transaction: leave none of their words in
        the SQLite file. Freed pages are zeroed (``secure_delete``, set on every connection);
        before the commit, FTS5's ``optimize`` rewrites the full-text index into one segment
        without them (a deleted row otherwise stays in its segment, marked deleted, until a
        merge); after it, the WAL, which holds the older page images, is checkpointed and
        truncated. PostgreSQL deletes the rows and their ``tsvector`` index entries in the
        transaction (its space is reused; ``VACUUM`` returns it)."""
        tx = getattr(self._local, "tx", None)
        if self.dialect != "sqlite" or tx is None or tx.forgot_text:
            return
        tx.forgot_text = True
        tx.before_commit.append(
            lambda: conn.exec_driver_sql("INSERT INTO texts_fts(texts_fts) VALUES ('optimize')")
        )
        tx.on_commit.append(self._empty_wal)

    def _empty_wal(self) -> None:
        """Checkpoint the WAL and truncate it to nothing; a reader holding an older snapshot
        makes it wait (at most ``WAL_SCRUB_WAIT_MS``), after which the next checkpoint does it."""
        with self.engine.connect() as conn:
            driver: Any = conn.connection.driver_connection
            if driver is None:
                return
            driver.execute(_WAL_SCRUB_TIMEOUT)
            try:
                driver.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            finally:
                driver.execute(_BUSY_TIMEOUT)

    def shows_text(self, conn: Connection, text_id: int, namespace: str) -> bool:
        """Whether an item of ``namespace`` already shows the text ``text_id`` (a promotion's
        idempotency key: read inside the write transaction that would add one)."""
        found = conn.execute(
            select(_M.c.seq).where(_M.c.text_id == text_id, _M.c.namespace == namespace).limit(1)
        ).first()
        return found is not None

    def text_is_shared(self, conn: Connection, text_id: int) -> bool:
        """Whether more than one tier item shows the text."""
        return int(conn.execute(_ITEMS_OF_TEXT, {"text_id": text_id}).scalar() or 0) > 1

    def update_row(
        self,
        conn: Connection,
        seq: int,
        item: MemoryItem,
        importance: float | None,
        author_key: str | None = None,
    ) -> None:
        """Rewrite a row's fields from ``item`` (same seq, namespace and text)."""
        values = _item_values(item, None, importance, author_key)
        values.pop("namespace")
        conn.execute(update(_M).where(_M.c.seq == seq).values(**values))

    def move_item(self, conn: Connection, seq: int, text_id: int) -> None:
        """Make the item ``seq`` show all of the text ``text_id``."""
        conn.execute(update(_M).where(_M.c.seq == seq).values(text_id=text_id, view="full"))

    def rewrite_text(self, conn: Connection, text_id: int, tenant: str, content: str) -> None:
        """Replace a text (shown by one item, which then shows all of it) and its owner."""
        conn.execute(
            update(_T).where(_T.c.id == text_id).values(tenant=tenant, head="", body=content)
        )
        conn.execute(update(_M).where(_M.c.text_id == text_id).values(view="full"))
        self._scrub(conn)

    def update_metadata(self, conn: Connection, seq: int, metadata: Mapping[str, Any]) -> None:
        """Rewrite a row's metadata."""
        conn.execute(
            _UPDATE_METADATA, {"row_seq": seq, "metadata": encode_metadata(dict(metadata))}
        )

    def touch(self, conn: Connection, seqs: Sequence[int], when: datetime) -> None:
        """Count one access of each row."""
        for chunk in chunks(list(seqs), 500):
            conn.execute(_TOUCH, {"seqs": chunk, "when": time_text(when)})

    def search_text(
        self,
        conn: Connection,
        query: str,
        namespaces: Sequence[str],
        *,
        tenant: str | None = None,
        sql_filters: Mapping[str, Any] | None = None,
        limit: int = 100,
        heads: bool = False,
    ) -> list[tuple[int, float]]:
        """Full-text hits ``(seq, score)``, best first; only items whose text's body (whole
        text, with ``heads``: the searched tiers show texts whole) matches a query term.

        On SQLite the score is FTS5's BM25 (porter-stemmed), negated so larger is better,
        of every matching text an item of the search shows (:func:`ranking_rows.lexical_hits`); on
        PostgreSQL an IDF-weighted ``ts_rank`` over the english tsvector columns
        (:func:`graphmem.store.postgres.search_statement`).
        """
        fts = fts_query_from_text(query)
        if fts is None:
            return []
        conds = [_M.c.namespace.in_(namespaces), *row_conditions(tenant, sql_filters)]
        if self.dialect == "postgresql":
            pg_stmt, params = postgres.search_statement(query_terms(query), conds, limit, heads)
            return [(int(seq), float(score)) for seq, score in conn.execute(pg_stmt, params)]
        if self.dialect == "sqlite":
            from .ranking_rows import Scope, lexical_hits

            scope = Scope.of(namespaces, tenant, sql_filters, heads)
            return lexical_hits(conn, fts, scope, limit)
        raise NotImplementedError(f"full-text search is not implemented for {self.dialect}")

    # ------------------------------------------------------------------ key-value
    def kv_get(self, conn: Connection, key: str) -> Any | None:
        """JSON value stored under ``key`` (None when absent)."""
        value = conn.execute(select(schema.kv.c.value).where(schema.kv.c.key == key)).scalar()
        return None if value is None else json.loads(value)

    def kv_set(self, conn: Connection, key: str, value: Any) -> None:
        """Store a JSON-serialisable value under ``key``."""
        payload = json.dumps(value, ensure_ascii=False, allow_nan=False)
        # Update first: delete-then-insert races into a duplicate key between server sessions.
        updated = conn.execute(
            update(schema.kv).where(schema.kv.c.key == key).values(value=payload)
        ).rowcount
        if not updated:
            conn.execute(insert(schema.kv).values(key=key, value=payload))

    def kv_delete(self, conn: Connection, key: str) -> bool:
        """Remove ``key``; True when it existed."""
        return bool(conn.execute(delete(schema.kv).where(schema.kv.c.key == key)).rowcount)

    def kv_keys(self, conn: Connection, prefix: str | None = None) -> list[str]:
        """Keys in order, optionally those starting with ``prefix``."""
        stmt = select(schema.kv.c.key).order_by(schema.kv.c.key)
        keys = [str(k) for k in conn.execute(stmt).scalars()]
        return [k for k in keys if prefix is None or k.startswith(prefix)]


# ---------------------------------------------------------------------- helpers
# Statements run once per row, built once (building one costs ~200 us, more than running it).
_INSERT_ITEMS = insert(_M).returning(_M.c.seq, sort_by_parameter_order=True)
_INSERT_TEXTS = insert(_T).returning(_T.c.id, sort_by_parameter_order=True)
_ITEMS = select(_M, _T.c.head, _T.c.body).join(_T, _T.c.id == _M.c.text_id)
_ITEMS_BY_SEQ = _ITEMS.where(_M.c.seq.in_(bindparam("seqs", expanding=True)))
_TOUCH = (
    update(_M)
    .where(_M.c.seq.in_(bindparam("seqs", expanding=True)))
    .values(access_count=_M.c.access_count + 1, last_accessed=bindparam("when"))
)
_TEXTS_OF_ITEMS = select(_M.c.text_id).where(_M.c.seq.in_(bindparam("seqs", expanding=True)))
_UNSHOWN_TEXTS = select(_T.c.id).where(
    _T.c.id.in_(bindparam("ids", expanding=True)),
    ~exists().where(_M.c.text_id == _T.c.id),
)
_DELETE_TEXTS = delete(_T).where(_T.c.id.in_(bindparam("ids", expanding=True)))
_ITEMS_OF_TEXT = select(func.count()).select_from(_M).where(_M.c.text_id == bindparam("text_id"))
_UPDATE_METADATA = update(_M).where(_M.c.seq == bindparam("row_seq"))
_IN_NAMESPACES = _M.c.namespace.in_(bindparam("namespaces", expanding=True))
_OF_TENANT = _M.c.tenant == bindparam("tenant")
_COUNT = select(func.count()).select_from(_M).where(_IN_NAMESPACES)
_COUNT_OF_TENANT = _COUNT.where(_OF_TENANT)
_ROWS_NEWEST_FIRST = (
    select(_M.c.seq, _M.c.namespace, _M.c.tenant, _M.c.text_id)
    .where(_IN_NAMESPACES)
    .order_by(_M.c.created_at.desc(), _M.c.seq.desc())
    .offset(bindparam("skip"))
)
_ROWS_OF_TENANT_NEWEST_FIRST = _ROWS_NEWEST_FIRST.where(_OF_TENANT)
_DELETE_ROWS = delete(_M).where(_M.c.seq.in_(bindparam("seqs", expanding=True)))


@dataclass
class _Transaction:
    conn: Connection
    on_commit: list[Callable[[], None]] = field(default_factory=list)
    on_rollback: list[Callable[[], None]] = field(default_factory=list)
    before_commit: list[Callable[[], None]] = field(default_factory=list)
    generation: tuple[int, int] | None = None
    #: Texts were deleted or rewritten: their words are scrubbed (:meth:`Database._scrub`).
    forgot_text: bool = False


#: How long emptying the WAL after a forgetting commit waits for readers of older snapshots.
WAL_SCRUB_WAIT_MS = 2_000
#: The statements that set those waits (fixed text: SQL is never assembled from values).
_WAL_SCRUB_TIMEOUT = "PRAGMA busy_timeout = 2000"
_BUSY_TIMEOUT = "PRAGMA busy_timeout = 60000"  # engine.BUSY_TIMEOUT_MS, restored

#: Every table a save writes (a fixed statement: SQL text is never assembled at run time).
_ANALYZE_TABLES = (
    "ANALYZE texts, memories, entities, aliases, mentions, relations, relation_evidence"
)
_SQLITE_FTS_TRIGGERS = (
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


def row_conditions(tenant: str | None, sql_filters: Mapping[str, Any] | None) -> list[Any]:
    """SQL conditions on ``memories`` rows: of ``tenant`` (when given), with column filters."""
    conds: list[Any] = []
    if tenant is not None:
        conds.append(_M.c.tenant == tenant)
    for key, value in (sql_filters or {}).items():
        column = _M.c[key]
        conds.append(column.is_(None) if value is None else column == value)
    return [and_(*conds)] if conds else []


def _item_values(
    item: MemoryItem, namespace: str | None, importance: float | None, author_key: str | None
) -> dict[str, Any]:
    return {
        "memory_id": item.memory_id,
        "namespace": namespace,
        "tenant": item.user_id or "",
        "memory_type": item.memory_type,
        "metadata": encode_metadata(item.metadata),
        "agent_id": item.agent_id,
        "task_id": item.task_id,
        "conversation_id": item.conversation_id,
        "user_id": item.user_id,
        "importance": importance,
        "relevance_score": float(item.relevance_score),
        "access_count": int(item.access_count),
        "created_at": time_text(item.timestamp),
        "last_accessed": time_text(item.last_accessed) if item.last_accessed else None,
        "embedding": encode_embedding(item.embedding) if item.embedding is not None else None,
        "author_key": author_key,
    }


def _row_key(row: Any) -> MemoryRow:
    return MemoryRow(
        seq=int(row.seq),
        namespace=row.namespace,
        tenant=row.tenant,
        text_id=int(row.text_id),
        view=getattr(row, "view", "full"),
        result_id=getattr(row, "result_id", None),
        dedupe_key=getattr(row, "dedupe_key", None),
    )


def shown_content(head: str, body: str, view: str) -> str:
    """The content a tier item shows of its text: the body, or head and body ("task result").

    Example:
        >>> shown_content("Audit Acme", "Acme passed", "full"), shown_content("Audit Acme", "Acme passed", "body")
        ('Audit Acme Acme passed', 'Acme passed')
    """
    return f"{head} {body}" if head and view != "body" else body


def shows_mention(items: Any, mentions: Any) -> Any:
    """SQL condition: the item (a ``memories`` row) shows the mention (a ``mentions`` row of
    its text): a "body" item does not show its text's head."""
    return or_(mentions.c.in_head == 0, items.c.view == "full")


def _row_to_item(row: Any) -> MemoryItem:
    return MemoryItem(
        content=shown_content(row.head, row.body, row.view),
        memory_type=row.memory_type,
        timestamp=stored_time(row.created_at),
        metadata=decode_metadata(row.metadata),
        agent_id=row.agent_id,
        task_id=row.task_id,
        conversation_id=row.conversation_id,
        user_id=row.user_id,
        relevance_score=float(row.relevance_score),
        access_count=int(row.access_count),
        last_accessed=stored_time(row.last_accessed) if row.last_accessed else None,
        embedding=decode_embedding(row.embedding) if row.embedding is not None else None,
        memory_id=row.memory_id,
    )


#: SQLite's result codes for a write that found no space: SQLITE_FULL, and SQLITE_IOERR_WRITE
#: / SQLITE_IOERR_SHMSIZE, which a full file system gives when the WAL or its index grows.
_DISK_FULL_CODES = frozenset({13, 778, 4874})


def _is_disk_full(exc: OperationalError) -> bool:
    code = getattr(exc.orig, "sqlite_errorcode", None)
    return code in _DISK_FULL_CODES or "disk is full" in str(exc.orig)


def chunks(values: list[_V], size: int) -> Iterator[list[_V]]:
    """``values`` in consecutive pieces of at most ``size`` (for bounded ``IN`` lists)."""
    for start in range(0, len(values), size):
        yield values[start : start + size]
