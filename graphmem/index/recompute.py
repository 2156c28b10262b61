"""Recompute what the graph derives from evidence, after some of it went.

Deleting (or re-analysing) a text takes its mentions and evidence away; :func:`recompute_derived`
then reads everything the text could have given again from the rows left: an entity's mention
count, first/last seen, name, aliases and label, and a relation's support, first/last seen and
validity interval. Nothing is subtracted, so what only the forgotten text said is gone: a
departure it stated no longer ends the job, a full name only it gave is no longer the entity's.

An open relation begun by one of its remaining statements keeps its interval; any other
relation of an affected subject (one that lost statements, or that had ended) has its interval
read again from the subject's remaining statements with the rule the index applies to history
recorded out of order (:meth:`~graphmem.extract.predicates.PredicateCatalogue.ended_by`): a relation begins at its first
statement and ends at the first later statement that ends it; a functional one stated again
after it ended begins again.

Example (a delete calls it):
    >>> from graphmem.memories.entity import EntityMemory
    >>> memory = EntityMemory()
    >>> first = memory.save("Maya Lindqvist joined Lumen Robotics.")
    >>> _ = memory.save("Maya presented the roadmap.")
    >>> memory.get_entity("Maya").name
    'Maya Lindqvist'
    >>> memory.delete(first.memory_id)
    1
    >>> memory.get_entity("Maya").name
    'Maya'
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING

from ..extract.entity_types import label_weight
from ..extract.normalize import canonical_key
from ..extract.predicates import PredicateCatalogue
from ..items import CO_OCCURS
from ..store import Connection, derived_rows
from ..store.derived_rows import RelationTimes
from .linking import ended_later

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["recompute_derived"]


def recompute_derived(
    conn: Connection,
    tenant: str,
    entity_ids: Collection[int],
    relation_ids: Collection[int] = (),
    *,
    predicates: PredicateCatalogue | None,
    preferred: Callable[[str], bool] | None,
    pinned: Mapping[str, str],
) -> dict[int, str]:
    """Set the derived fields of ``entity_ids`` (their relations as subject included) and of
    ``relation_ids`` from their remaining mentions and evidence, in ``tenant``; returns
    ``entity id -> new key`` of the entities renamed. The caller prunes what has no support
    left first, and drops the tenant's graph view after (it is read again from the tables).

    ``predicates`` answers what a statement ends (None: intervals start at the first statement
    and only a remaining bound is kept); ``preferred``: the labels that win a vote (declared
    types); ``pinned``: ``entity key -> label`` of relabelled entities.
    """
    renamed = derived_rows.recount_entities(
        conn,
        tenant,
        entity_ids,
        preferred=preferred,
        pinned=pinned,
        canonical=canonical_key,
        weight=label_weight,
    )
    rows = derived_rows.recount_relations(conn, tenant, relation_ids, subject_ids=entity_ids)
    derived_rows.write_validity(conn, _intervals(rows, set(relation_ids), predicates))
    return renamed


def _intervals(
    rows: list[RelationTimes], lost: set[int], predicates: PredicateCatalogue | None
) -> dict[int, tuple[str | None, str | None]]:
    """The validity intervals to store: of the relations whose bounds no remaining statement
    explains, or that lost statements."""
    import networkx as nx

    by_subject: dict[int, list[RelationTimes]] = {}
    for r in rows:
        by_subject.setdefault(r.subject_id, []).append(r)
    out: dict[int, tuple[str | None, str | None]] = {}
    functional = predicates.functional if predicates is not None else frozenset()
    for subject, rels in by_subject.items():
        g = nx.MultiDiGraph()  # the subject's statements, as the index's rule reads them
        node = str(subject)
        for r in rels:
            g.add_edge(
                node,
                str(r.object_id),
                key=r.predicate,
                first_seen=r.first_seen,
                last_seen=r.last_seen,
                valid_from=r.valid_from,
                valid_to=r.valid_to,
            )
        for r in sorted(rels, key=lambda r: (r.first_seen, r.id)):
            # An open relation begun by a remaining statement keeps its interval; an ended
            # one is read again (what ended it may be gone).
            if r.manual or not r.times or (r.valid_to is None and r.id not in lost):
                continue
            if r.predicate == CO_OCCURS or predicates is None:
                interval: tuple[str | None, str | None] = (r.times[0], None)
            elif r.valid_from is not None and r.valid_from == r.valid_to:
                interval = (r.times[0], r.times[0])  # stated as ended ("previously worked at")
            else:
                interval = _stated_interval(g, predicates, node, r, r.predicate in functional)
            out[r.id] = interval
            edge = g[node][str(r.object_id)][r.predicate]
            edge.update(valid_from=interval[0], valid_to=interval[1])
    return out


def _stated_interval(
    g: nx.MultiDiGraph,
    predicates: PredicateCatalogue,
    subject: str,
    r: RelationTimes,
    reopens: bool,
) -> tuple[str | None, str | None]:
    """From the first statement to the first later one of the subject's that ends it (the
    index's one rule: :func:`~graphmem.index.linking.ended_later`); a functional relation
    stated again at or after its end begins again then."""
    obj = str(r.object_id)
    start = r.times[0]
    end = ended_later(g, predicates, subject, r.predicate, obj, start)
    while end is not None and reopens:
        again = [t for t in r.times if t >= end]
        if not again:
            break
        start = again[0]
        end = ended_later(g, predicates, subject, r.predicate, obj, start)
    return start, end
