"""The :class:`Database`: one SQL database (a SQLite file, in-memory SQLite, or a server URL).

It holds the engine, the transactions (:meth:`Database.write`, :meth:`Database.read`), the
graph generation and the dialect, and the two statements that scrub forgotten words from the
file when their transaction commits (deleting and rewriting texts). Every other statement is a
function of the caller's connection in a topic module (:mod:`~graphmem.store.memory_rows`,
:mod:`~graphmem.store.text_rows`, :mod:`~graphmem.store.kv_rows`,
:mod:`~graphmem.store.graph_rows` ...). Every public write
runs in one transaction; a thread-safe lock serialises writers in one process and SQLite's
busy timeout serialises processes.

Example:
    >>> from graphmem.items import MemoryItem
    >>> from graphmem.store import memory_rows, text_rows
    >>> db = Database()                      # in memory
    >>> with db.write() as conn:
    ...     seq = text_rows.insert_memory(conn, MemoryItem("Alice met Bob"), namespace="notes")
    >>> with db.read() as conn:
    ...     [item.content for _, item in memory_rows.list_items(conn, ["notes"])]
    ['Alice met Bob']
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import partial
from pathlib import Path

from sqlalchemy import (
    Connection,
    Engine,
    Integer,
    String,
    bindparam,
    cast,
    delete,
    insert,
    select,
    update,
)
from sqlalchemy.exc import OperationalError

from ..errors import DatabaseFileError, StorageFullError
from . import dump, migrations, schema
from .dialects import Dialect, dialect_for
from .engine import is_url, open_engine
from .memory_rows import (
    MEMORIES_GENERATION,
    MEMORIES_REWRITES,
    MemoriesStamp,
    chunks,
    count_change,
    memories_stamp,
    touch,
)
from .text_rows import healing
from .transactions import Transaction, is_disk_full
from .vector_windows import VectorWindows

__all__ = ["Database"]


_M = schema.memories
_T = schema.texts
_DELETE_TEXTS = delete(_T).where(_T.c.id.in_(bindparam("ids", expanding=True)))
_GENERATION_ROW = schema.meta.c.key == "graph_generation"
# One atomic increment (see Database.bump_generation); built once, as every statement run
# per save (building one costs more than running it).
_BUMP_GENERATION = (
    update(schema.meta)
    .where(_GENERATION_ROW)
    .values(value=cast(cast(schema.meta.c.value, Integer) + 1, String))
    .returning(schema.meta.c.value)
)
_GENERATION = select(schema.meta.c.value).where(_GENERATION_ROW)


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
        #: The vectors searches compare their queries with, kept between reads.
        self.vector_windows = VectorWindows()
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
            new = migrations.is_new(conn)
            # An older graphmem's tables, rewritten in this transaction.
            upgraded = migrations.upgrade(conn)
            # A new database: every table and index made in one pass, nothing to look up.
            schema.metadata_obj.create_all(conn, checkfirst=not new)
            for table in schema.metadata_obj.sorted_tables if not new else ():
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
            for key in ("graph_generation", MEMORIES_GENERATION, MEMORIES_REWRITES):
                has_generation = conn.execute(
                    select(schema.meta.c.key).where(schema.meta.c.key == key)
                ).first()
                if has_generation is None:
                    # The row exists from the start so that a count is one atomic UPDATE.
                    conn.execute(insert(schema.meta).values(key=key, value="0"))

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
            >>> from graphmem.items import MemoryItem
            >>> from graphmem.store import memory_rows, text_rows
            >>> db = Database()
            >>> with db.write() as conn:
            ...     kept = text_rows.insert_memory(conn, MemoryItem("kept"), namespace="n")
            ...     try:
            ...         with db.write() as inner:
            ...             _ = text_rows.insert_memory(inner, MemoryItem("undone"), namespace="n")
            ...             raise ValueError("inner failure")
            ...     except ValueError:
            ...         pass
            >>> with db.read() as conn:
            ...     [item.content for _, item in memory_rows.list_items(conn, ["n"])]
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
            touch(self._local.tx.conn, seqs, when)
            return True
        try:
            with self.write(durable=False) as conn:
                touch(conn, seqs, when)
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
        after = conn.execute(_BUMP_GENERATION).scalar()
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
        value = conn.execute(_GENERATION).scalar()
        generation = int(value) if value is not None else 0
        if reading:
            self._local.read_generation = generation
        return generation

    def kept_stamp(self, conn: Connection) -> MemoriesStamp | None:
        """The memory rows as ``conn``'s read sees them, for what is kept of them between
        reads (:attr:`vector_windows`); None inside a write transaction, whose rows may never
        be committed."""
        if getattr(self._local, "tx", None) is not None:
            return None
        return memories_stamp(conn)

    @property
    def rows_in_order(self) -> bool:
        """Whether rows become visible in the order of their numbers (one writer at a time:
        SQLite), so that the rows new since a read are those numbered past its newest."""
        return self.dialect.name == "sqlite"

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
    def delete_texts(self, conn: Connection, text_ids: Sequence[int]) -> None:
        """Delete texts (their mentions and evidence cascade); no byte of them stays in the
        file (:meth:`_scrub`)."""
        for chunk in chunks(list(text_ids), 500):
            healing(conn, partial(conn.execute, _DELETE_TEXTS, {"ids": chunk}))
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

    def rewrite_text(self, conn: Connection, text_id: int, tenant: str, content: str) -> None:
        """Replace a text (shown by one item, which then shows all of it) and its owner."""
        conn.execute(
            update(_T).where(_T.c.id == text_id).values(tenant=tenant, head="", body=content)
        )
        conn.execute(update(_M).where(_M.c.text_id == text_id).values(view="full"))
        count_change(conn)
        self._scrub(conn)
