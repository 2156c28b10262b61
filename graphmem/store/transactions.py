"""The write transaction open in a thread: its connection, callbacks and savepoints.

:meth:`graphmem.store.Database.write` opens one per outermost call and a savepoint
(:meth:`Transaction.savepoint`) per nested call.

Example:
    >>> from graphmem.store import Database
    >>> db = Database()
    >>> with db.write() as conn:
    ...     db.after_commit(lambda: print("committed"))
    committed
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

from sqlalchemy import Connection
from sqlalchemy.exc import OperationalError

__all__ = ["Transaction", "is_disk_full"]


@dataclass
class Transaction:
    """The write transaction open in a thread, with what runs when it ends."""

    conn: Connection
    on_commit: list[Callable[[], None]] = field(default_factory=list)
    on_rollback: list[Callable[[], None]] = field(default_factory=list)
    before_commit: list[Callable[[], None]] = field(default_factory=list)
    generation: tuple[int, int] | None = None
    #: Texts were deleted or rewritten: their words are scrubbed (:meth:`Database._scrub`).
    forgot_text: bool = False

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """A nested write: ``SAVEPOINT``, released when the body returns. When it raises,
        ``ROLLBACK TO`` it, forget what the body registered (its after-rollback callbacks
        run now) and re-raise the body's exception unchanged."""
        marks = (len(self.on_commit), len(self.on_rollback), len(self.before_commit))
        state = (self.generation, self.forgot_text)
        nested = self.conn.begin_nested()
        try:
            yield
        except BaseException:
            # If the whole transaction is gone already (the outer one then fails too), the
            # body's exception says why: rolling back to the savepoint must not replace it.
            with suppress(Exception):
                if nested.is_active:
                    nested.rollback()
            undone = self.on_rollback[marks[1] :]
            del self.on_commit[marks[0] :], self.on_rollback[marks[1] :]
            del self.before_commit[marks[2] :]
            self.generation, self.forgot_text = state
            for callback in undone:
                callback()
            raise
        nested.commit()


#: SQLite's result codes for a write that found no space: SQLITE_FULL, and SQLITE_IOERR_WRITE
#: / SQLITE_IOERR_SHMSIZE, which a full file system gives when the WAL or its index grows.
_DISK_FULL_CODES = frozenset({13, 778, 4874})


def is_disk_full(exc: OperationalError) -> bool:
    """Whether a write failed for want of disk space."""
    code = getattr(exc.orig, "sqlite_errorcode", None)
    return code in _DISK_FULL_CODES or "disk is full" in str(exc.orig)
