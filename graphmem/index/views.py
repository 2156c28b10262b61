"""The per-tenant graph views of one database, kept valid across transactions.

A view (:class:`~graphmem.index._shared.TenantState`) is read from the tables when first
needed and updated in place by the index's writes; its generation says which database
generation it reflects, and a view older than the database's (another process wrote) is read
again. Relationship queries run on the view or in SQL (:meth:`TenantViews.queries`).

Example:
    >>> import threading
    >>> from graphmem.store.database import Database
    >>> views = TenantViews(Database(), threading.RLock(), {}, lambda conn: None, lambda conn: None)
    >>> len(views.graph("")), type(views.queries("", "sql")).__name__
    (0, 'SQLGraph')
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..extract.entities import AliasMatcher
from ..graph.knowledge_graph import KnowledgeGraph
from ..graph.records import RelationshipQueries
from ..store import Connection, graph_rows
from ..store.database import Database
from ._shared import SQL_GRAPH_THRESHOLD, GraphCache, TenantState
from .sql_graph import SQLGraph

__all__ = ["TenantViews"]


class TenantViews:
    """The tenants' views (``states``, shared with the index) over ``db``.

    ``flush(conn)`` writes what the index keeps pending before the tables are read;
    ``on_load(conn)`` runs before a view is read (the index reads the user's declarations).
    """

    def __init__(
        self,
        db: Database,
        lock: threading.RLock,
        states: dict[str, TenantState],
        flush: Callable[[Connection], None],
        on_load: Callable[[Connection], None],
    ) -> None:
        self.db = db
        self.lock = lock
        self.states = states
        self._flush = flush
        self._on_load = on_load

    def graph(self, tenant: str) -> KnowledgeGraph:
        """The tenant's graph, rebuilt from the tables when another writer changed them."""
        # Lock order everywhere: the database's lock first, then this index's. Writers hold
        # the database lock while they update the views; the reverse order deadlocked.
        with self.db.read() as conn, self.lock:
            generation = self.db.generation(conn)
            state = self.states.get(tenant)
            # Views only move forward: one newer than this read's snapshot (written by this
            # process since the read began) stays.
            if state is None or state.generation < generation:
                state = self.load(conn, tenant, generation)
            return state.graph

    def queries(self, tenant: str, graph_cache: GraphCache) -> RelationshipQueries:
        """What answers the tenant's relationship queries, per ``graph_cache``."""
        if graph_cache == "memory":
            return self.graph(tenant)
        sql = SQLGraph(self.db, tenant)
        if graph_cache == "auto" and tenant not in self.states:
            if len(sql) <= SQL_GRAPH_THRESHOLD:
                return self.graph(tenant)
        elif graph_cache == "auto":
            return self.graph(tenant)
        return sql

    def current(self, conn: Connection, tenant: str, generation: int) -> TenantState:
        """The tenant's view as of ``generation`` (read again unless it is that one)."""
        state = self.states.get(tenant)
        if state is None or state.generation != generation:
            state = self.load(conn, tenant, generation)
        return state

    def writable(self, conn: Connection, tenant: str) -> tuple[int, int, TenantState]:
        """Count a graph change in this transaction and return the tenant's up-to-date view."""
        before, after = self.db.bump_generation(conn)
        return before, after, self.current(conn, tenant, before)

    def load(self, conn: Connection, tenant: str, generation: int) -> TenantState:
        """Read the tenant's view from the tables (its edges when first needed)."""
        self._flush(conn)  # the view is read from the tables
        self._on_load(conn)
        ents = graph_rows.load_entities(conn, tenant)
        kg = KnowledgeGraph(self._evidence)
        kg.texts = graph_rows.count_texts(conn, tenant)
        matcher = AliasMatcher()
        for e in ents:
            kg.add_entity(
                e.key,
                name=e.name,
                label=e.label,
                mentions=e.mentions,
                aliases=e.aliases,
                first_seen=e.first_seen,
                last_seen=e.last_seen,
                entity_id=e.id,
            )
            for alias in e.aliases:
                matcher.add(alias, e.label)
        key_of = {e.id: e.key for e in ents}

        def edges() -> Iterator[tuple[str, str, str, dict[str, Any]]]:
            with self.db.read() as conn:
                self._flush(conn)
                yield from graph_rows.load_relations(conn, tenant, key_of)

        def neighbours(key: str, n: int | None, predicate: str | None) -> list[tuple[int, str]]:
            with self.db.read() as conn:
                self._flush(conn)
                return graph_rows.strongest_links(conn, kg.nodes[key]["entity_id"], n, predicate)

        # The edges load when something needs them (writes, relationship queries); a
        # context's expansion reads its entities' strongest links from SQL meanwhile.
        kg.load_edges_with(edges, neighbours)
        state = TenantState(kg, matcher, generation)
        self.states[tenant] = state
        return state

    def _evidence(self, relation_ids: Sequence[int]) -> dict[int, list[Any]]:
        with self.db.read() as conn:
            return dict(graph_rows.evidence_for(conn, relation_ids))

    def track_transaction(self, touched: set[str], before: int, after: int) -> None:
        """Keep views valid across this transaction's commit, or drop the ones it changed."""

        def committed() -> None:
            with self.lock:
                for state in self.states.values():
                    if state.generation == before:
                        state.generation = after

        def rolled_back() -> None:
            with self.lock:
                for tenant in touched:
                    self.states.pop(tenant, None)

        self.db.after_commit(committed)
        self.db.after_rollback(rolled_back)

    # ------------------------------------------------------------------ tier counts
    def tier_counts(self, tenant: str, namespace: str, keys: Sequence[str]) -> dict[str, int]:
        """Entity key -> how many items of ``namespace`` mention it (see
        :meth:`~graphmem.index.entity_index.EntityIndex.tier_counts`)."""
        with self.db.read() as conn, self.lock:
            kg = self.graph(tenant)
            missing = [key for key in keys if (namespace, key) not in kg.tier_counts]
            if missing:
                self._flush(conn)
                found = graph_rows.tier_mention_counts(conn, tenant, namespace, missing)
                for key in missing:
                    kg.tier_counts[(namespace, key)] = found.get(key, 0)
            counts = {key: kg.tier_counts[(namespace, key)] for key in keys}
        return {key: n for key, n in counts.items() if n}

    def count_new_items(self, tenant: str, namespace: str, keys: Sequence[str]) -> None:
        """One more item of ``namespace`` mentions each of ``keys`` (in the counts already kept)."""
        state = self.states.get(tenant)
        if state is None:
            return
        counts = state.graph.tier_counts
        for key in dict.fromkeys(keys):
            if (namespace, key) in counts:
                counts[(namespace, key)] += 1

    def count_texts(self, tenant: str, delta: int) -> None:
        """``delta`` texts more (or fewer) for ``tenant`` (in its view, when loaded)."""
        state = self.states.get(tenant)
        if state is not None:
            state.graph.texts += delta

    def forget_tier_counts(self, tenant: str, namespaces: set[str]) -> None:
        """Drop the tier counts of ``namespaces`` (items of them were deleted)."""
        state = self.states.get(tenant)
        if state is not None and state.graph.tier_counts:
            counts = state.graph.tier_counts
            for entry in [e for e in counts if e[0] in namespaces]:
                del counts[entry]
