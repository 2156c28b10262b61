"""Re-analysis: index a store's texts again with the current declarations, rules and model.

What a tenant's texts yield depends on what was declared, the rules and the model when each
was saved; :func:`reanalyse` makes the graph what saving them now would give. It drops the
tenant's derived rows (entities, aliases, mentions, relations, evidence, the merges indexing
made), indexes its texts again in their original order, each as it was first indexed
(:class:`~graphmem.store.database.TextAnalysis`: with relations or not, the names given in
place of extraction, the item it was indexed as, the tiers listing its entities), then puts
back what the user made: merges (made again by name where both ends still exist, their undo
snapshots renewed, so ``unmerge`` still restores), hand-added relations and labels set by
``relabel``. Tier items keep their ids and content (only the ``metadata["entities"]`` list of
the entity tier's items is renewed, as saving gives it).

One write transaction per batch; a plan in ``graphmem_meta`` says how far it got, so a
process killed between (or inside) batches leaves a store that opens (with a
:class:`ReanalysisWarning`) and that the next :func:`reanalyse` completes. The store records
the extraction version (:func:`~graphmem.extract.version.extraction_version`) that analysed
it; :func:`check_store`, run when a store opens, warns when it is another.

Example:
    >>> from graphmem.space import MemorySpace
    >>> from graphmem.memories import EntityMemory
    >>> memory = EntityMemory(storage=MemorySpace())
    >>> _ = memory.save("Bob Stone joined Kestrel. Robert Stone signed the renewal.")
    >>> merge_id = memory.merge_entities("Bob Stone", "Robert Stone")
    >>> memory.declare_entities([{"label": "ORG", "pattern": "Kestrel"}])
    1
    >>> reanalyse(memory.space.writer)
    1
    >>> memory.get_entity("Robert Stone").name, memory.find(predicate="works_at")[0].object
    ('Bob Stone', 'Kestrel')
    >>> memory.unmerge(merge_id); memory.get_entity("Robert Stone").name
    'Robert Stone'
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Sequence
from typing import Any

from ..errors import DatabaseFileError, EntityNotFound, InvalidArgumentError
from ..extract.version import extraction_version
from ..items import StoredMemory, check_capacity
from ..store import memory_rows
from ..store import reanalysis_rows as rows
from ..store.database import Database
from ..store.graph_rows import RELABELLED_KEY, read_setting, set_entity_label
from .writer import NewItem, NewText, Writer

__all__ = ["DEFAULT_BATCH_SIZE", "ReanalysisWarning", "check_store", "reanalyse"]

#: Texts analysed and written per transaction.
DEFAULT_BATCH_SIZE = 256


class ReanalysisWarning(UserWarning):
    """The store's texts were analysed by another extraction version than this graphmem's,
    or a re-analysis was interrupted: ``graphmem reanalyse`` reads them again."""


def reanalyse(
    writer: Writer,
    tenant: str | None = None,
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: bool = False,
) -> int:
    """Index the stored texts of ``tenant`` (None: of every tenant) again (see the module
    docstring); a re-analysis left unfinished is completed first. Returns how many texts
    were indexed again."""
    check_capacity(batch_size, "batch_size")
    db = writer.db
    done = 0
    with db.write() as conn:
        plan = _stored_plan(db, conn)
    if plan is not None:
        done += _run(writer, plan, batch_size, progress)
    if plan is None or plan["scope"] not in (None, tenant):
        with db.write() as conn:
            db.bump_generation(conn)  # one plan at a time (it serialises graph writers)
            plan = _stored_plan(db, conn)  # another process's, made meanwhile
            if plan is None or plan["scope"] not in (None, tenant):
                plan = _new_plan(conn, tenant)
        done += _run(writer, plan, batch_size, progress)
    # A store saved with recall by meaning off gets its vectors (what saving now would give).
    writer.backfill_vectors(tenant, batch_size)
    return done


def _new_plan(conn: Any, tenant: str | None) -> dict[str, Any]:
    """A plan to analyse the texts of ``tenant`` (None: of every tenant) again, stored
    unless it has nothing to do (a user with nothing analysed)."""
    tenants = [t for t in rows.analysed_tenants(conn) if tenant in (None, t)]
    # Its id tells it from a later plan that reaches the same state (see _moved_on).
    plan = {"scope": tenant, "tenants": tenants, "current": None, "id": uuid.uuid4().hex}
    if tenants:
        rows.write_plan(conn, plan)
    return plan


def _stored_plan(db: Database, conn: Any) -> dict[str, Any] | None:
    """The stored plan (read in a write transaction). A damaged one is replaced, with a
    warning, by a plan to analyse every tenant again: what it kept (the hand-made rows of a
    tenant half done) is lost, but ``reanalyse`` is never blocked."""
    try:
        return rows.read_plan(conn)
    except DatabaseFileError:
        warnings.warn(
            f"{db.describe()}: its re-analysis plan is damaged; it is discarded and every "
            "user's texts are analysed again",
            ReanalysisWarning,
            stacklevel=3,
        )
        plan = _new_plan(conn, None)
        return plan if plan["tenants"] else None


def _run(writer: Writer, plan: dict[str, Any], batch_size: int, progress: bool) -> int:
    """Carry out ``plan`` (stored), tenant by tenant; returns the texts indexed."""
    db = writer.db
    bar = None
    if progress:
        from tqdm import tqdm

        with db.read() as conn:
            total = sum(_left(conn, plan, tenant) for tenant in plan["tenants"])
        bar = tqdm(total=total, unit="texts", desc="reanalysing")
    done = 0
    try:
        current: dict[str, Any] | None = plan
        while current is not None and current["tenants"]:
            current, indexed = _run_tenant(writer, current, batch_size, bar)
            done += indexed
    finally:
        if bar is not None:
            bar.close()
    return done


def _run_tenant(
    writer: Writer, plan: dict[str, Any], batch_size: int, bar: Any
) -> tuple[dict[str, Any] | None, int]:
    """Carry out ``plan`` for its first tenant; returns the plan to go on with and the texts
    indexed. Runs in other processes may carry out the same plan at once: each step is
    written only while the stored plan is still ``plan`` (:func:`_moved_on`), else the run
    follows the stored one, so no step (dropping rows, putting back merges and hand-added
    relations) is done twice."""
    db, index = writer.db, writer.index
    tenant = plan["tenants"][0]
    if plan["current"] is None:
        with db.write() as conn:
            db.bump_generation(conn)
            if (stored := _moved_on(db, conn, plan)) is not plan:
                return stored, 0
            plan["current"] = {
                "after": 0,
                "through": rows.last_text_id(conn, tenant),
                "manual": rows.manual_relations(conn, tenant),
                "merges": rows.merges_by_hand(conn, tenant),
            }
            rows.drop_derived_rows(conn, tenant)
            rows.write_plan(conn, plan)
        index.invalidate()
    current = plan["current"]
    done = 0
    while True:
        with db.read() as conn:
            batch = rows.texts_to_index(
                conn, tenant, current["after"], current["through"], batch_size
            )
            items = memory_rows.items_of_texts(conn, [t.id for t in batch])
        if not batch:
            break
        indexed, stored = _index_batch(writer, batch, items, plan)
        if stored is not plan:
            return stored, done
        done += indexed
        if bar is not None:
            bar.update(len(batch))
    with db.write() as conn:
        db.bump_generation(conn)
        if (stored := _moved_on(db, conn, plan)) is not plan:
            return stored, done
        _restore(writer, conn, tenant, current)
        plan["tenants"].pop(0)
        plan["current"] = None
        _record_version(conn, tenant, finished=not plan["tenants"], plan=plan)
        rows.write_plan(conn, plan if plan["tenants"] else None)
    index.invalidate()
    return plan, done


def _moved_on(db: Database, conn: Any, plan: dict[str, Any]) -> dict[str, Any] | None:
    """``plan`` itself while it is the stored plan (in a write transaction), else the stored
    one (None: finished), which another run moved on meanwhile."""
    stored = _stored_plan(db, conn)
    return plan if stored == plan else stored


def _left(conn: Any, plan: dict[str, Any], tenant: str) -> int:
    current = plan["current"] if tenant == plan["tenants"][0] else None
    if current is None:
        return rows.count_texts_to_index(conn, tenant, 0, rows.last_text_id(conn, tenant))
    return rows.count_texts_to_index(conn, tenant, current["after"], current["through"])


def _index_batch(
    writer: Writer,
    batch: Sequence[rows.StoredText],
    items: Sequence[tuple[StoredMemory, Any]],
    plan: dict[str, Any],
) -> tuple[int, dict[str, Any] | None]:
    """Index one batch of stored texts again, in one write transaction that also records
    how far the plan got; returns how many were indexed, and ``plan``, or the stored plan
    when another run moved it on (nothing is indexed then)."""
    db, index = writer.db, writer.index
    shown: dict[int, list[tuple[StoredMemory, Any]]] = {}
    for row, item in items:
        shown.setdefault(row.text_id, []).append((row, item))
    work = [
        (text, _new_text(text, shown[text.id]), shown[text.id])
        for text in batch
        if text.id in shown
    ]
    docs = writer.analyse([new for _, new, _ in work])  # outside the database lock
    indexed = 0
    with db.write() as conn:
        if (stored := _moved_on(db, conn, plan)) is not plan:
            return 0, stored
        # A text deleted since is skipped; one rewritten since was indexed by its writer.
        unchanged = rows.unchanged_texts(conn, batch)
        unchanged -= rows.texts_with_index_rows(conn, sorted(unchanged))
        fresh = [
            (text, new, doc, own)
            for (text, new, own), doc in zip(work, docs, strict=True)
            if text.id in unchanged
        ]
        listed: list[tuple[int, dict[str, Any]]] = []
        with index.deferred_writes(conn):
            for text, new, doc, own in fresh:
                found = writer.index_stored(conn, new, text.id, doc)
                for ni, (row, _) in zip(new.items, own, strict=True):
                    if ni.lists_entities:
                        ni.item.metadata["entities"] = found.entity_names
                        listed.append((row.seq, ni.item.metadata))
                indexed += 1
        memory_rows.update_metadata_many(conn, listed)
        plan["current"]["after"] = batch[-1].id
        rows.write_plan(conn, plan)
    return indexed, plan


def _new_text(text: rows.StoredText, own: Sequence[tuple[StoredMemory, Any]]) -> NewText:
    """The stored text as the write path takes it: its items (the first showing all of it
    is the one it is indexed as), its head, and how it was indexed."""
    return NewText(
        head=text.head,
        body=text.body,
        items=[
            NewItem(
                row.namespace, item, view=row.view, lists_entities=row.namespace in text.listed_in
            )
            for row, item in own
        ],
        index=True,
        relations=text.relations,
        given_entities=text.given_entities,
    )


def _restore(writer: Writer, conn: Any, tenant: str, current: dict[str, Any]) -> None:
    """Put back what the user made over the rebuilt rows: merges, hand-added relations,
    labels set by ``relabel``."""
    index = writer.index
    for merge_id in current["merges"]:
        keys = rows.merge_keys(conn, merge_id)
        if keys is None:
            continue  # undone meanwhile
        try:
            again = index.merge(tenant, *keys)
        except (EntityNotFound, InvalidArgumentError):
            rows.retire_merge(conn, merge_id)  # an end is gone, or the rule now refuses it
        else:
            rows.renew_merge(conn, merge_id, again)
    for saved in current["manual"]:
        rows.restore_manual_relation(conn, tenant, saved)
    relabelled = (read_setting(conn, RELABELLED_KEY) or {}).get(tenant, {})
    for key, label in sorted(relabelled.items()):
        entity_id = rows.entity_of_key(conn, tenant, key)
        if entity_id is not None:
            set_entity_label(conn, entity_id, label)


def _record_version(conn: Any, tenant: str, *, finished: bool, plan: dict[str, Any]) -> None:
    """Record that ``tenant`` is analysed by this graphmem's extraction version (the whole
    store, once a re-analysis of every tenant finished)."""
    version = extraction_version()
    if finished and plan["scope"] is None:
        rows.write_versions(conn, {"default": version, "tenants": {}})
        return
    versions = rows.read_versions(conn) or {"default": None, "tenants": {}}
    versions["tenants"][tenant] = version
    rows.write_versions(conn, versions)


def check_store(db: Database) -> str | None:
    """When a store opens: record this graphmem's extraction version in a store that holds
    no analysis yet; warn (:class:`ReanalysisWarning`) and return the message when a
    re-analysis was interrupted, or when a tenant's texts were analysed by another
    extraction version (None otherwise)."""
    version = extraction_version()
    damaged = False
    with db.read() as conn:
        try:
            plan = rows.read_plan(conn)
        except DatabaseFileError:  # reanalyse discards it
            plan, damaged = None, True
        versions = rows.read_versions(conn)
        stale: list[str] = []
        if versions is None:
            if rows.has_graph_rows(conn):
                stale = rows.analysed_tenants(conn)
        elif versions["default"] != version:
            stale = [
                t for t in rows.analysed_tenants(conn) if versions["tenants"].get(t) != version
            ]
    if versions is None and not stale:
        with db.write() as conn:
            rows.record_first_version(conn, {"default": version, "tenants": {}})
    where = db.describe()
    if damaged:
        message = (
            f"{where}: its re-analysis plan is damaged; run `graphmem reanalyse` (or "
            "EntityMemory.reanalyse()) to analyse its texts again"
        )
    elif plan is not None:
        message = (
            f"{where}: a re-analysis of its texts was interrupted; run `graphmem reanalyse` "
            "(or EntityMemory.reanalyse()) to complete it"
        )
    elif stale:
        old = versions["default"] if versions is not None else None
        message = (
            f"{where}: its texts were analysed by "
            f"{'extraction version ' + old if old else 'an older graphmem'}, not by this "
            f"graphmem's ({version}); run `graphmem reanalyse` (or EntityMemory.reanalyse()) "
            "to analyse them again with the current rules and declarations"
        )
    else:
        return None
    warnings.warn(message, ReanalysisWarning, stacklevel=3)
    return message
