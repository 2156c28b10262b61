"""A unit of work: one transaction of a memory space, with the operations the tiers and the
facade need, so that they never hold a store connection or a row type.

``with space.transaction() as tx:`` is one write transaction (nested blocks join the
outer one); ``with space.reading() as tx:`` one read. Every operation runs in it and
returns :mod:`graphmem.items` records (:class:`~graphmem.items.StoredMemory` beside each
:class:`~graphmem.items.MemoryItem`), as sqlite-utils' ``db.atomic()`` and ``Table``
methods never hand the caller a connection.

Example:
    >>> from graphmem.space import MemorySpace
    >>> space = MemorySpace()
    >>> with space.reading() as tx:
    ...     tx.count(["long_term"]), tx.items(["long_term"])
    (0, [])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..index.writer import NewItem, NewText
from ..items import MemoryItem, StoredMemory
from ..store import Connection, graph_rows, kv_rows, memory_rows, text_rows
from ..store.memory_rows import TextAnalysis

if TYPE_CHECKING:
    from ..extract.texts import Doc
    from ..store.graph_rows import RelationRow
    from . import MemorySpace

__all__ = ["Work"]


class Work:
    """The operations of one transaction (see the module docstring). Made by
    :meth:`MemorySpace.transaction` and :meth:`MemorySpace.reading`, not directly."""

    def __init__(self, space: MemorySpace, conn: Connection) -> None:
        self._space = space
        self._conn = conn

    @property
    def connection(self) -> Connection:
        """The transaction's connection, for the library layers that rank and assemble in
        it (``retrieval/``); the tiers and the facade pass the unit of work itself."""
        return self._conn

    # ------------------------------------------------------------------ reading items
    def items(
        self,
        namespaces: Sequence[str],
        *,
        tenant: str | None = None,
        sql_filters: Mapping[str, Any] | None = None,
        newest_first: bool = False,
        limit: int | None = None,
        before_seq: int | None = None,
        by_time: bool = False,
    ) -> list[tuple[StoredMemory, MemoryItem]]:
        """The items of ``namespaces`` (of ``tenant`` when given) in saving order (or
        event-time order with ``by_time``), with SQL-applicable filters."""
        return memory_rows.list_items(
            self._conn,
            namespaces,
            tenant=tenant,
            sql_filters=sql_filters,
            newest_first=newest_first,
            limit=limit,
            before_seq=before_seq,
            by_time=by_time,
        )

    def find(
        self, memory_id: str, namespaces: Sequence[str]
    ) -> tuple[StoredMemory, MemoryItem] | None:
        """The item ``memory_id`` of ``namespaces``, or None."""
        return memory_rows.find(self._conn, memory_id, namespaces)

    def count(self, namespaces: Sequence[str] | None, tenant: str | None = None) -> int:
        """How many items ``namespaces`` hold (of ``tenant`` when given)."""
        return memory_rows.count(self._conn, namespaces, tenant)

    def counts_by_tenant(self, namespaces: Sequence[str]) -> dict[str, int]:
        """tenant -> how many items of ``namespaces`` it holds."""
        return memory_rows.counts_by_tenant(self._conn, namespaces)

    def eviction_candidates(
        self, namespace: str, tenant: str | None = None
    ) -> list[tuple[StoredMemory, float, int, str]]:
        """Every item of ``namespace`` with what eviction weighs: (item, importance, access
        count, time)."""
        return memory_rows.eviction_candidates(self._conn, namespace, tenant)

    def beyond_newest(
        self, namespaces: Sequence[str], tenant: str | None, keep: int
    ) -> list[StoredMemory]:
        """The items of ``namespaces`` after the newest ``keep`` (by event time)."""
        return memory_rows.rows_beyond_newest(self._conn, namespaces, tenant, keep)

    def result_items(
        self,
        result_ids: Sequence[str],
        namespaces: Sequence[str] | None = None,
        tenant: str | None = None,
    ) -> list[tuple[StoredMemory, MemoryItem]]:
        """The items the saves ``result_ids`` wrote."""
        return memory_rows.result_rows(self._conn, result_ids, namespaces, tenant)

    def matching_results(
        self,
        namespaces: Sequence[str],
        *,
        tenant: str | None = None,
        sql_filters: Mapping[str, Any] | None = None,
        before: datetime | None = None,
    ) -> list[str]:
        """The result ids of the saves whose items match."""
        return memory_rows.matching_results(
            self._conn, namespaces, tenant=tenant, sql_filters=sql_filters, before=before
        )

    def result_id_of(self, seq: int) -> str | None:
        """The save that wrote the item ``seq``."""
        return memory_rows.result_id_of(self._conn, seq)

    def text_parts(self, text_id: int) -> tuple[str, str] | None:
        """A stored text's head and body."""
        return memory_rows.text_parts(self._conn, text_id)

    def shows_text(self, text_id: int, namespace: str) -> bool:
        """Whether an item of ``namespace`` shows the text ``text_id``."""
        return memory_rows.shows_text(self._conn, text_id, namespace)

    def names_in_text(self, text_id: int) -> list[str]:
        """The names of the entities a stored text mentions, in the order it names them."""
        return self._space.entity_index.names_in_text(self._conn, text_id)

    def kv_keys(self, prefix: str | None = None) -> list[str]:
        """The key-value keys starting with ``prefix``."""
        return kv_rows.kv_keys(self._conn, prefix)

    # ------------------------------------------------------------------ writing items
    def write(
        self, texts: Sequence[NewText], docs: Sequence[Doc | None] | None = None
    ) -> list[list[StoredMemory]]:
        """Store and index ``texts`` (``docs``: from the writer's ``analyse``)."""
        return self._space.writer.write(self._conn, texts, docs)

    def add_items(
        self, text_id: int, items: Sequence[NewItem], result_id: str | None = None
    ) -> list[StoredMemory]:
        """Give a stored text more items (of the save ``result_id``)."""
        return self._space.writer.add_items(self._conn, text_id, items, result_id)

    def known_results(
        self, keys: Sequence[tuple[str, str | None, str]], *, writing: bool = True
    ) -> list[str | None]:
        """The result id stored under each save key (None: not saved yet)."""
        return self._space.writer.known_results(self._conn, keys, writing=writing)

    @contextmanager
    def deferred_writes(self) -> Iterator[None]:
        """Index rows written in one batch at the end of the block."""
        with self._space.entity_index.deferred_writes(self._conn):
            yield

    def update(
        self, seq: int, item: MemoryItem, importance: float | None, author_key: str | None
    ) -> None:
        """Store the changed fields of the item ``seq``."""
        memory_rows.update_row(self._conn, seq, item, importance, author_key)

    def update_metadata(self, seq: int, metadata: Mapping[str, Any]) -> None:
        """Replace the metadata of the item ``seq``."""
        memory_rows.update_metadata(self._conn, seq, metadata)

    def replace_text(
        self, stored: StoredMemory, item: MemoryItem, *, index: bool, relations: bool
    ) -> StoredMemory:
        """Give the stored item the changed text of ``item``: stored and indexed again (with
        typed relations when ``relations``; not at all unless ``index``), its analysis
        recorded for ``reanalyse``; returns where the item is stored now."""
        moved = self._space.entity_index.replace_text(
            self._conn, stored, item, index=index, relations=relations
        )
        analysis = TextAnalysis(relations) if index else None
        text_rows.record_analysis(self._conn, moved.text_id, analysis)
        return moved

    def touch(self, seqs: Sequence[int], when: datetime) -> None:
        """Count an access of the items ``seqs`` at ``when``."""
        memory_rows.touch(self._conn, seqs, when)

    def delete(self, stored: Sequence[StoredMemory]) -> int:
        """Delete items; what only they supported in the graph goes too."""
        return self._space.entity_index.delete_memories(self._conn, stored)

    def evict(self, stored: Sequence[StoredMemory]) -> int:
        """:meth:`delete` to make room: eviction is not forgetting (no scrub of the
        write-ahead log)."""
        with self._space.database.evicting():
            return self.delete(stored)

    # ------------------------------------------------------------------ the graph
    def tier_entity_mentions(
        self, namespace: str, graph_tenant: str, tenant: str | None = None, key: str | None = None
    ) -> list[tuple[str, str, str, str, int]]:
        """See :func:`graphmem.store.graph_rows.tier_entity_mentions`."""
        return graph_rows.tier_entity_mentions(self._conn, namespace, graph_tenant, tenant, key)

    def typed_relations_of(
        self, entity_ids: Sequence[int], per_entity: int
    ) -> list[tuple[int, RelationRow]]:
        """See :func:`graphmem.store.graph_rows.typed_relations_of`."""
        return graph_rows.typed_relations_of(self._conn, entity_ids, per_entity)

    def delete_relations(
        self, tenant: str, triples: Sequence[tuple[int, str, int]], *, by_hand_only: bool = False
    ) -> int:
        """Delete graph relations (with ``by_hand_only``, only their hand-added evidence),
        in a new graph generation; the graph views are rebuilt on next use (and again if the
        transaction rolls back)."""
        database, index = self._space.database, self._space.entity_index
        database.bump_generation(self._conn)
        touched = graph_rows.delete_relations(
            self._conn, tenant, triples, by_hand_only=by_hand_only
        )
        index.invalidate()
        database.after_rollback(index.invalidate)
        return touched

    def forget_graph(self, tenant: str) -> None:
        """Delete ``tenant``'s whole graph (hand-added relations and the merge log
        included) and its cached views."""
        graph_rows.delete_tenant_graph(self._conn, tenant)
        self._space.entity_index.forget(self._conn, {tenant})

    def before_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` when this transaction is about to commit; if it raises, the
        transaction rolls back instead."""
        self._space.database.before_commit(callback)

    def after_rollback(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` if this transaction rolls back."""
        self._space.database.after_rollback(callback)
