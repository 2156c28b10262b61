"""The stored vectors a search compares its query with, kept between searches.

Recall by meaning compares every query with the vectors of the newest memories of its scope
(and of the memories of the entities it names): reading those rows and decoding their vectors
was most of what it cost, and it was the same work for every query of a scope. A
:class:`VectorWindows` (one per database) keeps each such window, its rows and their decoded
vectors, for as long as the memory rows do not change: every transaction that writes them
counts the change (:func:`~graphmem.store.memory_rows.memories_generation`), whichever process
it runs in, and a window read at another count is read again. A read inside a write
transaction (which may see its own uncommitted rows) keeps nothing.

Example:
    >>> windows = VectorWindows(max_bytes=1 << 20)
    >>> rows = [(2, 20, "f32:AAAAPwAAgL8AAIA+"), (1, 10, "[0.1]")]
    >>> window = windows.kept(7, "recent", lambda: VectorWindow.of(rows, 3))
    >>> window.seqs, window.text_ids, window.matrix.shape
    ([2, 1], [20, 10], (2, 3))
    >>> windows.kept(7, "recent", lambda: VectorWindow.of([], 3)) is window  # the same count
    True
    >>> windows.kept(8, "recent", lambda: VectorWindow.of([], 3)).seqs  # rows changed since
    []
    >>> other = VectorWindow.of([(3, 30, "f32:AAAAPwAAgL8AAIA+")], 3)
    >>> VectorWindow.newest([window, other], 2, 3).seqs  # one statement's newest two
    [3, 2]
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from . import ranking_rows
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

    @classmethod
    def newest(cls, windows: Sequence[VectorWindow], limit: int, dim: int) -> VectorWindow:
        """The newest ``limit`` distinct rows of ``windows``, newest first: as one statement
        would read the newest ``limit`` rows matching any of theirs (each holds the newest
        ``limit`` of its own, so none of those is missing)."""
        import numpy as np

        if len(windows) == 1 and len(windows[0].seqs) <= limit:
            return windows[0]
        where: dict[int, tuple[int, int]] = {}
        for w, window in enumerate(windows):
            for row, seq in enumerate(window.seqs):
                where.setdefault(seq, (w, row))
        seqs = sorted(where, reverse=True)[:limit]
        matrix = np.zeros((len(seqs), dim), dtype=np.float32)
        text_ids = [0] * len(seqs)
        taken: dict[int, tuple[list[int], list[int]]] = {}  # window -> (into, its rows)
        for i, seq in enumerate(seqs):
            w, row = where[seq]
            text_ids[i] = windows[w].text_ids[row]
            into, rows = taken.setdefault(w, ([], []))
            into.append(i)
            rows.append(row)
        for w, (into, rows) in taken.items():
            matrix[into] = windows[w].matrix[rows]
        return cls(seqs, text_ids, matrix)


class VectorWindows:
    """The windows read at one count of memory-row changes, by key (thread-safe)."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self._max_bytes = max_bytes
        self._lock = threading.Lock()
        self._generation: int | None = None
        self._kept: OrderedDict[Hashable, VectorWindow] = OrderedDict()
        self._bytes = 0

    def kept(
        self, generation: int | None, key: Hashable, make: Callable[[], VectorWindow]
    ) -> VectorWindow:
        """The window ``key`` as of ``generation`` (the memory-row count the caller's read
        sees; None: keep nothing), made by ``make()`` when not kept."""
        with self._lock:
            found = self._kept.get(key) if generation == self._generation else None
            if found is not None:
                self._kept.move_to_end(key)
                return found
        window = make()
        if generation is None:
            return window
        with self._lock:
            if self._generation is None or generation > self._generation:
                self._kept.clear()
                self._bytes = 0
                self._generation = generation
            if generation == self._generation and key not in self._kept:
                self._kept[key] = window
                self._bytes += window.matrix.nbytes
                while self._bytes > self._max_bytes and self._kept:
                    _, dropped = self._kept.popitem(last=False)
                    self._bytes -= dropped.matrix.nbytes
        return window

    def clear(self) -> None:
        """Forget every kept window."""
        with self._lock:
            self._kept.clear()
            self._bytes = 0
            self._generation = None


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
    windows, generation = db.vector_windows, db.kept_generation(conn)

    def kept(key: tuple[Any, ...], read: Callable[[], Sequence[tuple[int, int, str]]]) -> Any:
        return windows.kept(
            generation, (*key, scope, limit, dim), lambda: VectorWindow.of(read(), dim)
        )

    recent = kept(("recent",), lambda: ranking_rows.recent_vectors(conn, scope, limit))
    parts = [
        *(
            kept(
                ("mentions", e),
                lambda e=e: ranking_rows.scoped_vectors(conn, scope, [e], [], limit),
            )
            for e in sorted(set(entity_ids))
        ),
        *(
            kept(
                ("author", a), lambda a=a: ranking_rows.scoped_vectors(conn, scope, [], [a], limit)
            )
            for a in sorted(set(author_keys))
        ),
    ]
    return recent, VectorWindow.newest(parts, limit, dim)
