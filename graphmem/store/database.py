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
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import (
    Connection,
    Engine,
    Integer,
    String,
    bindparam,
    cast,
    delete,
    exists,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import DBAPIError, OperationalError

from ..errors import DatabaseFileError, InvalidArgumentError, StorageFullError
from ..items import MemoryItem, StoredMemory, encode_metadata, time_text
from . import dump, migrations, schema
from .dialects import Dialect, dialect_for
from .dialects.sqlite import WAL_SCRUB_WAIT_MS
from .engine import is_url, open_engine
from .memory_rows import (
    SQL_FILTER_COLUMNS,
    NewItemRow,
    TextAnalysis,
    chunks,
    item_columns,
    item_of_row,
    memory_row_of,
    row_conditions,
    shown_content,
    shows_mention,
)
from .query_text import STOP_WORDS, fts_query_from_text, query_terms
from .transactions import Transaction, is_disk_full

__all__ = [
    "Database",
    "NewItemRow",
    "SQL_FILTER_COLUMNS",
    "STOP_WORDS",
    "TextAnalysis",
    "WAL_SCRUB_WAIT_MS",
    "chunks",
    "fts_query_from_text",
    "query_terms",
    "row_conditions",
    "shown_content",
    "shows_mention",
]


_M = schema.memories
_T = schema.texts
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


_Result = TypeVar("_Result")


class Database:
    """A graphmem database.

    Args:
        target: ``None`` for an ephemeral in-memory database, a file path for SQLite, or a
            SQLAlchemy URL (``sqlite:///x.db``, ``postgresql+psycopg://user@host/db``).
    """

    def __init__(self, target: str | os.PathLike[str] | None = None) -> None:
        self.target = os.fspath(target) if target is not None else None
        self.engine: Engine
        self.engine, self._index_damaged = open_engine(target)
        try:
            #: What this backend does its own way (chosen once, from the engine).
            self.dialect: Dialect = dialect_for(self.engine.dialect.name)
        except NotImplementedError:
            self.engine.dispose()
            raise
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

    def close(self) -> None:
        """Release connections. The object must not be used afterwards."""
        self.engine.dispose()

    def _initialise(self) -> None:
        with self.write() as conn:
            self.dialect.lock_schema(conn)  # other processes may be creating it right now
            # An older graphmem's tables, rewritten in this transaction.
            upgraded = migrations.upgrade(conn)
            schema.metadata_obj.create_all(conn)
            for table in schema.metadata_obj.sorted_tables:
                for index in table.indexes:  # indexes added since the file was made
                    index.create(conn, checkfirst=True)
            self.dialect.create_extras(conn, rebuild=upgraded)
            if self._index_damaged:  # PRAGMA quick_check found it (engine.check_sqlite_file)
                self.dialect.heal_index(conn, "PRAGMA quick_check")
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
        """One write transaction; a nested call in the same thread is a SAVEPOINT of it.

        If the body of a nested call raises, only what it wrote is rolled back (and the
        callbacks it registered are dropped, its :meth:`after_rollback` ones run); the
        exception goes on unchanged, so a caller that catches it keeps the outer
        transaction's other writes. Callbacks registered with :meth:`after_commit` run once
        the outermost transaction has committed; those registered with
        :meth:`after_rollback` run if it rolls back. ``durable=False`` is for bookkeeping
        (access counts): its commit survives a crash of the process but not a power loss
        (SQLite ``synchronous=NORMAL`` in WAL mode, PostgreSQL ``synchronous_commit=off``),
        and costs no disk flush; a nested call keeps the outer one's durability.

        Example:
            >>> db = Database()
            >>> with db.write() as conn:
            ...     kept = db.insert_memory(conn, MemoryItem("kept"), namespace="n")
            ...     try:
            ...         with db.write() as inner:
            ...             _ = db.insert_memory(inner, MemoryItem("undone"), namespace="n")
            ...             raise ValueError("inner failure")
            ...     except ValueError:
            ...         pass
            >>> with db.read() as conn:
            ...     [item.content for _, item in db.list_items(conn, ["n"])]
            ['kept']
        """
        with self._lock:
            current = getattr(self._local, "tx", None)
            if current is not None:
                with current.savepoint():
                    yield current.conn
                return
            with self._disk_full_is_named(), self.engine.connect() as conn:
                conn = conn.execution_options(graphmem_write=True)
                tx = Transaction(conn)
                self._local.tx = tx
                try:
                    with self.dialect.write_transaction(conn, durable=durable):
                        yield conn
                        for callback in tx.before_commit:
                            callback()
                except BaseException:
                    self._local.tx = None
                    for callback in tx.on_rollback:
                        callback()
                    raise
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
            if not is_disk_full(exc):
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
        statement = self.dialect.analyze_statement
        if statement is not None:
            with self.write() as conn:
                conn.exec_driver_sql(statement)

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
                # One snapshot for the whole read (a graph view and its generation agree).
                conn = self.dialect.read_isolation(conn)
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
    ) -> list[StoredMemory]:
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
        return self._healing(
            conn, lambda: [int(i) for i in conn.execute(_INSERT_TEXTS, rows).scalars()]
        )

    def _healing(self, conn: Connection, run: Callable[[], _Result]) -> _Result:
        """``run()`` a statement that reads or writes the full-text index; when the index is
        damaged, rebuild it from the stored texts (a warning says so) and run it again."""
        try:
            return run()
        except DBAPIError as exc:
            if not self.dialect.is_damaged_index(exc):
                raise
            self.dialect.heal_index(conn, str(exc.orig))
            return run()

    def record_analysis(
        self, conn: Connection, text_id: int, analysis: TextAnalysis | None
    ) -> None:
        """Record how the text ``text_id`` is indexed (None: not), after its content changed."""
        columns = TextAnalysis.columns_of(analysis)
        conn.execute(update(_T).where(_T.c.id == text_id).values(**columns))

    def items_of_texts(
        self, conn: Connection, text_ids: Sequence[int]
    ) -> list[tuple[StoredMemory, MemoryItem]]:
        """Every item showing one of ``text_ids``, in insertion order."""
        out: list[tuple[StoredMemory, MemoryItem]] = []
        for chunk in chunks(list(text_ids), 500):
            stmt = _ITEMS.where(_M.c.text_id.in_(chunk)).order_by(_M.c.seq)
            out.extend((memory_row_of(r), item_of_row(r)) for r in conn.execute(stmt))
        out.sort(key=lambda pair: pair[0].seq)
        return out

    def insert_items(self, conn: Connection, rows: Sequence[NewItemRow]) -> list[StoredMemory]:
        """Insert tier items of stored texts (one statement); returns their rows in order."""
        if not rows:
            return []
        values = [
            {
                **item_columns(r.item, r.namespace, r.importance, r.author_key),
                "text_id": r.text_id,
                "view": r.view,
                "result_id": r.result_id or r.item.memory_id,
                "dedupe_key": r.dedupe_key,
            }
            for r in rows
        ]
        seqs = [int(s) for s in conn.execute(_INSERT_ITEMS, values).scalars()]
        return [
            StoredMemory(
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
    ) -> tuple[StoredMemory, MemoryItem] | None:
        """The row and item with ``memory_id`` in one of ``namespaces``, or None."""
        row = conn.execute(
            _ITEMS.where(_M.c.memory_id == memory_id, _M.c.namespace.in_(namespaces))
        ).first()
        if row is None:
            return None
        return memory_row_of(row), item_of_row(row)

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
        if writing and keys:
            self.dialect.lock_dedupe_keys(conn)
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
    ) -> list[tuple[StoredMemory, MemoryItem]]:
        """Every item of the results ``result_ids`` (in ``namespaces``, of ``tenant``, when
        given), in insertion order."""
        out: list[tuple[StoredMemory, MemoryItem]] = []
        for chunk in chunks(list(result_ids), 500):
            stmt = _ITEMS.where(_M.c.result_id.in_(chunk), *row_conditions(tenant, None))
            if namespaces is not None:
                stmt = stmt.where(_M.c.namespace.in_(list(namespaces)))
            out.extend(
                (memory_row_of(r), item_of_row(r)) for r in conn.execute(stmt.order_by(_M.c.seq))
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

    def fetch_rows(
        self, conn: Connection, seqs: Sequence[int]
    ) -> dict[int, tuple[StoredMemory, MemoryItem]]:
        """Rows and items by ``seq`` (missing ones left out)."""
        out: dict[int, tuple[StoredMemory, MemoryItem]] = {}
        for chunk in chunks(list(seqs), 500):
            for row in conn.execute(_ITEMS_BY_SEQ, {"seqs": chunk}).all():
                out[row.seq] = (memory_row_of(row), item_of_row(row))
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
    ) -> list[tuple[StoredMemory, MemoryItem]]:
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
        return [(memory_row_of(r), item_of_row(r)) for r in conn.execute(stmt)]

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
    ) -> list[StoredMemory]:
        """The rows of ``namespaces`` (of ``tenant`` when given) other than the newest
        ``keep`` by event time (``created_at``, then insertion), oldest first: what a
        first-in-first-out capacity of ``keep`` evicts. An item saved with an old event time
        (history recorded after the fact) goes before fresher ones, never instead of them."""
        params: dict[str, Any] = {"namespaces": list(namespaces), "skip": keep}
        stmt = _ROWS_NEWEST_FIRST
        if tenant is not None:
            stmt, params["tenant"] = _ROWS_OF_TENANT_NEWEST_FIRST, tenant
        return [memory_row_of(r) for r in reversed(conn.execute(stmt, params).all())]

    def eviction_candidates(
        self, conn: Connection, namespace: str, tenant: str | None = None
    ) -> list[tuple[StoredMemory, float, int, str]]:
        """``(row, importance, access_count, created_at)`` of every row, for eviction policies."""
        stmt = select(
            _M.c.seq, _M.c.tenant, _M.c.importance, _M.c.access_count, _M.c.created_at, _M.c.text_id
        ).where(_M.c.namespace == namespace)
        if tenant is not None:
            stmt = stmt.where(_M.c.tenant == tenant)
        return [
            (
                StoredMemory(int(r[0]), namespace, r[1], int(r[5])),
                float(r[2] if r[2] is not None else 0.5),
                int(r[3]),
                r[4],
            )
            for r in conn.execute(stmt)
        ]

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
            self._healing(conn, partial(conn.execute, _DELETE_TEXTS, {"ids": chunk}))
        if text_ids:
            self._scrub(conn)

    @contextmanager
    def evicting(self) -> Iterator[None]:
        """Deletes in this block make room (capacity eviction), they do not forget: the
        texts leave the tables and the full-text index, but no scrub of the write-ahead log
        follows (its older pages go at the next checkpoint). Explicit deletes scrub.

        Example:
            >>> db = Database()
            >>> with db.write() as conn, db.evicting():
            ...     db.delete_texts(conn, [])
        """
        before = getattr(self._local, "evicting", False)
        self._local.evicting = True
        try:
            yield
        finally:
            self._local.evicting = before

    def _scrub(self, conn: Connection) -> None:
        """Texts were deleted or rewritten in this transaction: leave none of their words in
        the database (:meth:`Dialect.scrub_before_commit`, :meth:`Dialect.scrub_after_commit`;
        on SQLite freed pages are zeroed too, by ``secure_delete``). Not for eviction
        (:meth:`evicting`)."""
        tx = getattr(self._local, "tx", None)
        if tx is None or tx.forgot_text or getattr(self._local, "evicting", False):
            return
        tx.forgot_text = True
        tx.before_commit.append(lambda: self.dialect.scrub_before_commit(conn))
        tx.on_commit.append(lambda: self.dialect.scrub_after_commit(self.engine))

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
        values = item_columns(item, None, importance, author_key)
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
        (:func:`graphmem.store.dialects.postgresql.search_statement`).
        """
        return self._healing(
            conn,
            lambda: self.dialect.search(conn, query, namespaces, tenant, sql_filters, limit, heads),
        )

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
