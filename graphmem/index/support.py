"""Support: what deleting memories, forgetting and rewriting a text take away.

Deleting a text removes its mentions and evidence; what lost all its support goes, and what
the rest derives (names, labels, counts, validity) is read again from the rows left
(:func:`~graphmem.index.recompute.recompute_derived`). The tenants' views are dropped and read
again from the tables.

Example:
    >>> from graphmem.memories.entity import EntityMemory
    >>> memory = EntityMemory()
    >>> item = memory.save("Alice Johnson met Bob Stone.")
    >>> memory.delete(item.memory_id), len(memory.graph)
    (1, 0)
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from ..extract.predicates import PredicateCatalogue
from ..items import MemoryItem, StoredMemory
from ..store import Connection, derived_rows, graph_rows, memory_rows, text_rows
from ..store.database import Database
from .pending import DeferredWrites
from .recompute import recompute_derived
from .views import TenantViews

__all__ = ["Support"]


class Support:
    """Deletion and support counting over the index's ``views`` and pending ``writes``;
    ``predicates()`` is the catalogue validity is read again with (None: no typed
    relations are read), ``pinned(tenant)`` the labels set by hand."""

    def __init__(
        self,
        db: Database,
        lock: threading.RLock,
        views: TenantViews,
        writes: DeferredWrites,
        predicates: Callable[[], PredicateCatalogue | None],
        pinned: Callable[[str], Mapping[str, str]],
    ) -> None:
        self.db = db
        self.lock = lock
        self.views = views
        self.writes = writes
        self._predicates = predicates
        self._pinned = pinned

    def forget(self, conn: Connection, tenants: set[str]) -> None:
        """After memory rows were deleted: drop what lost its support, refresh the views."""
        with self.lock:
            self.writes.flush_deferred(conn)
            before, after = self.db.bump_generation(conn)
            for tenant in sorted(tenants):
                graph_rows.prune_unsupported(conn, tenant)
                self.views.states.pop(tenant, None)
            self.views.track_transaction(set(tenants), before, after)

    def delete_memories(self, conn: Connection, rows: Sequence[StoredMemory]) -> int:
        """Delete tier items, the texts no item shows any more, and what lost its support."""
        with self.lock:
            for tenant in {r.tenant for r in rows}:
                namespaces = {r.namespace for r in rows if r.tenant == tenant}
                self.views.forget_tier_counts(tenant, namespaces)
            deleted, orphans = memory_rows.delete_items_of_texts(conn, [r.seq for r in rows])
            if not orphans:
                return deleted
            for tenant, n in Counter(orphan.tenant for orphan in orphans).items():
                self.views.count_texts(tenant, -n)
            gone = [orphan.text_id for orphan in orphans]
            indexed = [orphan.text_id for orphan in orphans if orphan.indexed]
            if not indexed:  # no mentions or evidence go with them (a short-term line)
                self.db.delete_texts(conn, gone)
                return deleted
            self.writes.flush_deferred(conn)  # what is derived is read again from the tables
            lost = graph_rows.index_rows_of(conn, indexed)
            if not lost.mentions and not lost.evidence:
                self.db.delete_texts(conn, gone)
                return deleted
            ends = derived_rows.relation_ends(conn, lost.evidence)
            self.db.delete_texts(conn, gone)
            tenants = {t for t, _, _ in lost.mentions.values()} | {
                r[0] for r in lost.evidence.values()
            }
            self.recompute_lost(conn, tenants, {*lost.mentions, *ends}, lost.evidence)
            return deleted

    def recompute_lost(
        self,
        conn: Connection,
        tenants: set[str],
        entity_ids: set[int],
        relation_ids: Iterable[int],
    ) -> None:
        """After texts' mentions and evidence went: delete what lost all its support, read
        what the rest derives again from the rows left (:func:`recompute_derived`), and drop
        the tenants' views (read again from the tables)."""
        before, after = self.db.bump_generation(conn)
        gone_relations, gone_entities = graph_rows.prune_candidates(conn, relation_ids, entity_ids)
        kept = entity_ids - gone_entities
        for tenant in sorted(tenants):
            recompute_derived(
                conn,
                tenant,
                kept,
                [r for r in relation_ids if r not in gone_relations],
                predicates=self._predicates(),
                preferred=None,  # declared types win by their votes' weight
                pinned=self._pinned(tenant),
            )
            derived_rows.forget_merges(conn, tenant)
            self.views.states.pop(tenant, None)
        self.views.track_transaction(tenants, before, after)

    def replace_text(self, conn: Connection, row: StoredMemory, new: MemoryItem) -> StoredMemory:
        """Give an item whose content (or owner) changed its new text (not indexed yet);
        returns its row. An item that shares its text with others gets a text of its own."""
        self.writes.flush_deferred(conn)
        tenant = new.user_id or ""
        for owner in {row.tenant, tenant}:
            self.views.forget_tier_counts(owner, {row.namespace})
        if memory_rows.text_is_shared(conn, row.text_id):
            [text_id] = text_rows.insert_texts(conn, [(tenant, "", new.content)])
            self.views.count_texts(tenant, 1)
            memory_rows.move_item(conn, row.seq, text_id)
            return StoredMemory(row.seq, row.namespace, tenant, text_id)
        lost = graph_rows.index_rows_of(conn, [row.text_id])
        ends = derived_rows.relation_ends(conn, lost.evidence)
        graph_rows.delete_index_rows(conn, row.text_id)
        self.db.rewrite_text(conn, row.text_id, tenant, new.content)
        self.recompute_lost(conn, {row.tenant, tenant}, {*lost.mentions, *ends}, lost.evidence)
        return row
