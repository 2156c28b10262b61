"""The stored vectors a search compares its query with, kept between searches.

Recall by meaning compares every query with the vectors of the newest memories of its scope
(and of the memories of the entities it names): reading those rows and decoding their vectors
was most of what it cost, and it was the same work for every query of a scope. A
:class:`VectorWindows` (one per database) keeps each such window, its rows and their decoded
vectors, with the :class:`~graphmem.store.memory_rows.MemoriesStamp` of the read it came from:
every transaction that writes memory rows counts the change, whichever process it runs in. A
window is used as kept while the count stays; when only new rows came since (and rows become
visible in the order of their numbers, as on SQLite) the new ones are read and put in front;
after any other change it is read again. A read inside a write transaction (which may see
its own uncommitted rows) keeps nothing.

Example:
    >>> windows = VectorWindows(max_bytes=1 << 20)
    >>> rows = [(2, 20, "f32:AAAAPwAAgL8AAIA+"), (1, 10, "[0.1]")]
    >>> read = lambda after: [row for row in rows if row[0] > after]
    >>> window = windows.kept(MemoriesStamp(7, 1, 2), "recent", read, 2, 3, in_order=True)
    >>> window.seqs, window.text_ids, window.matrix.shape
    ([2, 1], [20, 10], (2, 3))
    >>> windows.kept(MemoriesStamp(7, 1, 2), "recent", read, 2, 3) is window  # unchanged
    True
    >>> rows.insert(0, (3, 30, "[0.2]"))  # a new row: only it is read
    >>> windows.kept(MemoriesStamp(8, 1, 3), "recent", read, 2, 3, in_order=True).seqs
    [3, 2]
    >>> del rows[1]  # any other change: read again
    >>> windows.kept(MemoriesStamp(9, 2, 3), "recent", read, 2, 3, in_order=True).seqs
    [3, 1]
    >>> other = VectorWindow.of([(4, 40, "f32:AAAAPwAAgL8AAIA+")], 3)
    >>> VectorWindow.newest([window, other], 2, 3).seqs  # one statement's newest two
    [4, 2]
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from . import ranking_rows
from .memory_rows import MemoriesStamp
from .ranking_rows import Scope
from .vectors import vector_matrix

if TYPE_CHECKING:
    import numpy as np

    from .database import Database

__all__ = ["VectorWindow", "VectorWindows", "semantic_pools"]

#: What the kept windows' vectors may take in all (the least recently used go first): the
#: newest 2,000 memories of 16 scopes at WordLlama's 256 dimensions.
MAX_BYTES = 32 << 20


@dataclass(frozen=True)
class VectorWindow:
    """Rows ``(seq, text id)`` in the order read, and their vectors, one normalised float32
    row each (:func:`~graphmem.store.vectors.vector_matrix`)."""

    seqs: list[int]
    text_ids: list[int]
    matrix: np.ndarray

    @classmethod
    def of(cls, rows: Sequence[tuple[int, int, str]], dim: int) -> VectorWindow:
        """The window of ``(seq, text id, stored vector)`` rows."""
        return cls(
            [int(seq) for seq, _, _ in rows],
            [int(text_id) for _, text_id, _ in rows],
            vector_matrix([stored for _, _, stored in rows], dim),
        )

    def before(self, older: VectorWindow, limit: int) -> VectorWindow:
        """This window of newer rows followed by ``older``'s, the newest ``limit`` in all."""
        import numpy as np

        if not self.seqs:
            return older
        kept = max(0, limit - len(self.seqs))
        return VectorWindow(
            (self.seqs + older.seqs[:kept])[:limit],
            (self.text_ids + older.text_ids[:kept])[:limit],
            np.concatenate([self.matrix, older.matrix[:kept]])[:limit],
        )

    @classmethod
    def newest(cls, windows: Sequence[VectorWindow], limit: int, dim: int) -> VectorWindow:
        """The newest ``limit`` distinct rows of ``windows``, newest first: as one statement
        would read the newest ``limit`` rows matching any of theirs (each holds the newest
        ``limit`` of its own, so none of those is missing)."""
        import numpy as np

        if len(windows) == 1 and len(windows[0].seqs) <= limit:
            return windows[0]
        if not windows:
            return cls([], [], np.zeros((0, dim), dtype=np.float32))
        # Each row number once (from the first window holding it), the largest first.
        every = np.concatenate([np.asarray(w.seqs, dtype=np.int64) for w in windows])
        numbers, first = np.unique(every, return_index=True)
        taken = first[::-1][:limit]
        starts = np.cumsum([0, *(len(w.seqs) for w in windows)])
        owner = np.searchsorted(starts, taken, side="right") - 1
        matrix = np.zeros((len(taken), dim), dtype=np.float32)
        for w, window in enumerate(windows):
            into = np.flatnonzero(owner == w)
            if len(into):
                matrix[into] = window.matrix[taken[into] - starts[w]]
        text_ids = np.concatenate([np.asarray(w.text_ids, dtype=np.int64) for w in windows])
        seqs = numbers[::-1][:limit].tolist()
        return cls(seqs, text_ids[taken].tolist(), matrix)


@dataclass(frozen=True)
class _Kept:
    stamp: MemoriesStamp
    window: VectorWindow


class VectorWindows:
    """Windows by key, each with the :class:`MemoriesStamp` of the read it is as of
    (thread-safe)."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self._max_bytes = max_bytes
        self._lock = threading.Lock()
        self._kept: OrderedDict[Hashable, _Kept] = OrderedDict()
        self._bytes = 0

    def kept(
        self,
        stamp: MemoriesStamp | None,
        key: Hashable,
        read: Callable[[int], Sequence[tuple[int, int, str]]],
        limit: int,
        dim: int,
        in_order: bool = False,
    ) -> VectorWindow:
        """The window ``key`` (its newest ``limit`` rows, ``dim`` values a vector) as of
        ``stamp`` (the caller's read; None: keep nothing). ``read(after)`` reads its rows
        numbered past ``after``, newest first: all of them (``after`` 0), or, with
        ``in_order`` (rows become visible in the order of their numbers) when only new rows
        came since the window was kept, those new ones."""
        with self._lock:
            found = self._kept.get(key)
        if stamp is not None and found is not None:
            if found.stamp.generation == stamp.generation:
                with self._lock:
                    if key in self._kept:
                        self._kept.move_to_end(key)
                return found.window
            newer = found.stamp.generation < stamp.generation
            if newer and in_order and found.stamp.rewrites == stamp.rewrites:
                new = VectorWindow.of(read(found.stamp.newest), dim)
                return self._keep(key, stamp, new.before(found.window, limit))
        window = VectorWindow.of(read(0), dim)
        return window if stamp is None else self._keep(key, stamp, window)

    def _keep(self, key: Hashable, stamp: MemoriesStamp, window: VectorWindow) -> VectorWindow:
        with self._lock:
            found = self._kept.get(key)
            if found is not None and found.stamp.generation > stamp.generation:
                return window  # a newer read kept a newer window: this one is older
            if found is not None:
                self._bytes -= found.window.matrix.nbytes
            self._kept[key] = _Kept(stamp, window)
            self._kept.move_to_end(key)
            self._bytes += window.matrix.nbytes
            while self._bytes > self._max_bytes and self._kept:
                _, dropped = self._kept.popitem(last=False)
                self._bytes -= dropped.window.matrix.nbytes
        return window

    def clear(self) -> None:
        """Forget every kept window."""
        with self._lock:
            self._kept.clear()
            self._bytes = 0


def semantic_pools(
    db: Database,
    conn: Connection,
    scope: Scope,
    entity_ids: Sequence[int],
    author_keys: Sequence[str],
    limit: int,
    dim: int,
) -> tuple[VectorWindow, VectorWindow]:
    """What a query's meaning is compared with (``dim`` values a vector): the newest ``limit``
    memories of ``scope`` that have a vector (:func:`ranking_rows.recent_vectors`), and the
    newest ``limit`` of those that mention one of ``entity_ids`` or were said by one of
    ``author_keys`` (:func:`ranking_rows.scoped_vectors`), the latter merged from each
    entity's and each author's own window (which later queries naming them share)."""
    windows, stamp, in_order = db.vector_windows, db.kept_stamp(conn), db.rows_in_order

    def kept(key: tuple[Any, ...], read: Callable[[int], Any]) -> VectorWindow:
        return windows.kept(stamp, (*key, scope, limit, dim), read, limit, dim, in_order)

    def mentioning(entity: int) -> Callable[[int], Any]:
        return lambda after: ranking_rows.scoped_vectors(conn, scope, [entity], [], limit, after)

    def said_by(author: str) -> Callable[[int], Any]:
        return lambda after: ranking_rows.scoped_vectors(conn, scope, [], [author], limit, after)

    recent = kept(("recent",), lambda after: ranking_rows.recent_vectors(conn, scope, limit, after))
    parts = [
        *(kept(("mentions", e), mentioning(e)) for e in sorted(set(entity_ids))),
        *(kept(("author", a), said_by(a)) for a in sorted(set(author_keys))),
    ]
    return recent, VectorWindow.newest(parts, limit, dim)
