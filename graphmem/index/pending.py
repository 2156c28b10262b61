"""The deferred batch: row changes collected while indexing, written with one statement per
kind (:class:`PendingWrites`), and the block that keeps them pending across several
:meth:`~graphmem.index.entity_index.EntityIndex.index` calls (:class:`DeferredWrites`).

Example:
    >>> batch = PendingWrites()
    >>> batch.add_mentions([{"entity_id": 1, "label": "PERSON", "label_source": "model"}])
    >>> bool(batch), batch.entities_in_use
    (True, {1})
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..extract.entity_types import label_weight
from ..graph.records import EntityData, RelationData
from ..store import Connection, graph_rows
from ._shared import TenantState, VoteTable

__all__ = ["DeferredWrites", "PendingWrites"]


#: Relation columns that change after insertion; the view holds their current values.
_RELATION_STATE = ("confidence", "first_seen", "last_seen", "valid_from", "valid_to", "support")


@dataclass
class PendingWrites:
    """Row changes collected while indexing a batch, written with one statement per kind.

    New relations take the ids the database would give them (:func:`graph_rows.next_relation_id`),
    and relations are written with their final values from the view. Mentions wait here too,
    so label votes count the stored mentions (read once per entity and batch) plus the pending
    ones: ``label -> (count, first)``, ``first`` ordering labels by the mention that brought
    them (stored ones before pending ones).
    """

    mentions: list[dict[str, Any]] = field(default_factory=list)
    #: ``(tenant, keep key, merge key)``: entities a text showed to be one ("International
    #: Business Machines (IBM)" when both were known apart), merged once the batch is written.
    merges: list[tuple[str, str, str]] = field(default_factory=list)
    new_relations: dict[int, tuple[dict[str, Any], RelationData]] = field(default_factory=dict)
    relation_updates: dict[int, RelationData] = field(default_factory=dict)
    next_relation_id: int = 0
    evidence: list[dict[str, Any]] = field(default_factory=list)
    #: Entities whose mention count or first/last_seen changed -> their view data (written as is).
    entity_touches: dict[int, EntityData] = field(default_factory=dict)
    entity_labels: dict[int, str] = field(default_factory=dict)
    text_labels: dict[int, str] = field(default_factory=dict)
    stored_votes: VoteTable = field(default_factory=dict)
    pending_votes: VoteTable = field(default_factory=dict)
    #: Texts indexed in this batch, relations with pending evidence, entities of pending
    #: mentions or new relations: what deleting memories before the flush must count.
    text_ids: set[int] = field(default_factory=set)
    relations_with_evidence: set[int] = field(default_factory=set)
    entities_in_use: set[int] = field(default_factory=set)
    #: Entity id -> tenant, for the entities voted on in this batch.
    vote_tenants: dict[int, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(
            self.mentions
            or self.merges
            or self.new_relations
            or self.relation_updates
            or self.evidence
            or self.entity_touches
            or self.entity_labels
            or self.text_labels
        )

    def add_mentions(self, rows: Sequence[dict[str, Any]], tenant: str = "") -> None:
        for row in rows:
            self.vote_tenants[row["entity_id"]] = tenant
            votes = self.pending_votes.setdefault(row["entity_id"], {})
            count, first = votes.get(row["label"], (0.0, (1, len(self.mentions))))
            votes[row["label"]] = (count + label_weight(row["label"], row["label_source"]), first)
            self.mentions.append(row)
            self.entities_in_use.add(row["entity_id"])

    def add_relation(self, conn: Connection, row: dict[str, Any], state: RelationData) -> int:
        """Queue a new relation (``row``: its fixed columns; ``state``: its view data)."""
        if not self.next_relation_id:
            self.next_relation_id = graph_rows.next_relation_id(conn)
        relation_id = self.next_relation_id
        self.next_relation_id += 1
        self.new_relations[relation_id] = (row, state)
        self.entities_in_use.update((row["subject_id"], row["object_id"]))
        return relation_id

    def update_relation(self, data: RelationData) -> None:
        """Queue a relation's current values (``data``: its view data, an edge with a row)."""
        relation_id = data["relation_id"]
        assert relation_id is not None  # the index's edges all have rows
        self.relation_updates[relation_id] = data

    def flush(self, conn: Connection) -> None:
        """Write the batch, one statement per kind of row."""
        graph_rows.write_batch(
            conn,
            new_mentions=self.mentions,
            new_relations=[
                {"id": rid, **row} | _state_columns(state)
                for rid, (row, state) in self.new_relations.items()
            ],
            relation_updates=[
                {"rid": rid} | _state_columns(state)
                for rid, state in self.relation_updates.items()
                if rid not in self.new_relations
            ],
            evidence=self.evidence,
            entity_touches=[
                {
                    "eid": e,
                    "first_seen": node["first_seen"],
                    "last_seen": node["last_seen"],
                    "mentions": node["mentions"],
                }
                for e, node in self.entity_touches.items()
            ],
            entity_labels=[{"eid": e, "label": v} for e, v in self.entity_labels.items()],
            text_labels=[{"tid": t, "labels": v} for t, v in self.text_labels.items()],
        )


def _state_columns(state: Mapping[str, Any]) -> dict[str, Any]:
    """The columns of a relation that change after insertion, from its view data."""
    return {k: state[k] for k in _RELATION_STATE}


class DeferredWrites:
    """The index's pending batch, and whether :meth:`deferred` keeps it pending.

    ``states`` are the index's tenant views (the same dict): their stored label votes are
    kept up to date as batches are written.
    """

    def __init__(self, states: Mapping[str, TenantState]) -> None:
        self.states = states
        self.batch = PendingWrites()
        #: Inside :meth:`deferred`: the index leaves its rows pending.
        self.deferring = False
        #: Past every stored mention id: the first-mention order of votes kept after a flush.
        self._vote_serial = 1 << 62

    def start(self) -> None:
        """Begin an index call's batch (a deferred block's goes on)."""
        if not self.deferring:
            self.batch = PendingWrites()

    def flush(self, conn: Connection) -> None:
        """Write the pending rows and start a new batch."""
        if self.batch:
            self.batch.flush(conn)
            self._keep_votes(self.batch)
        self.batch = PendingWrites()

    def flush_deferred(self, conn: Connection) -> None:
        """Before reading or changing the graph tables: write what a deferral holds."""
        if self.deferring:
            self.flush(conn)

    @contextmanager
    def deferred(self, conn: Connection) -> Iterator[None]:
        """Keep the batch pending until the block ends (nested blocks join the outer one);
        if it raises, the rows are dropped with the transaction."""
        if self.deferring:
            yield
            return
        self.flush(conn)
        self.deferring = True
        try:
            yield
        except BaseException:
            self.batch = PendingWrites()  # the transaction rolls back
            raise
        else:
            self.flush(conn)
        finally:
            self.deferring = False

    def _keep_votes(self, pending: PendingWrites) -> None:
        """After ``pending`` was written: its entities' stored votes now include its
        mentions; the tenant views keep them. A pending label's first mention (its place in
        the batch) becomes an id past every stored one, in the order the rows got theirs."""
        serial = self._vote_serial
        for entity_id, tenant in pending.vote_tenants.items():
            state = self.states.get(tenant)
            stored = pending.stored_votes.get(entity_id)
            if state is None or (stored is None and entity_id not in state.votes):
                continue
            votes = dict(stored if stored is not None else state.votes[entity_id])
            for label, (n, (_, position)) in pending.pending_votes.get(entity_id, {}).items():
                count, first = votes.get(label, (0, (0, serial + position)))
                votes[label] = (count + n, first)
            state.votes[entity_id] = votes
        self._vote_serial = serial + len(pending.mentions)

    def vote(
        self,
        conn: Connection,
        tenant: str,
        entity_ids: dict[str, int],
        pinned: Mapping[str, str],
    ) -> dict[str, str]:
        """Each entity's label (entity key -> id) becomes the vote of its mentions, stored
        and pending (a declared type winning), or the label it was ``pinned`` to by hand
        (key -> label); returns the labels voted."""
        pending = self.batch
        state = self.states.get(tenant)
        kept = state.votes if state is not None else {}
        for entity_id in entity_ids.values():
            pending.vote_tenants[entity_id] = tenant
            if entity_id not in pending.stored_votes and entity_id in kept:
                pending.stored_votes[entity_id] = kept[entity_id]
        unread = [i for i in entity_ids.values() if i not in pending.stored_votes]
        if unread:
            counts = graph_rows.mention_label_counts(conn, unread, label_weight)
            for entity_id in unread:
                pending.stored_votes[entity_id] = {
                    label: (n, (0, first_id))
                    for label, (n, first_id) in counts.get(entity_id, {}).items()
                }
        out: dict[str, str] = {}
        for key, entity_id in entity_ids.items():
            votes = dict(pending.stored_votes[entity_id])
            for label, (n, first) in pending.pending_votes.get(entity_id, {}).items():
                stored_n, stored_first = votes.get(label, (0, first))
                votes[label] = (stored_n + n, stored_first)
            by_hand = pinned.get(key)
            if by_hand is not None:
                out[key] = pending.entity_labels[entity_id] = by_hand
            elif votes:
                out[key] = pending.entity_labels[entity_id] = graph_rows.pick_label(votes)
        return out
