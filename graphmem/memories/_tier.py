""":class:`Tier`: the shared implementation of graphmem's tiers, and their protocol.

A tier is a *namespace* of rows in a :class:`~graphmem.space.MemorySpace` (Calute's
:class:`~graphmem.compat.storage.SQLiteStorage` is one). Saving validates the input (nothing
is written on error), copies the caller's metadata, analyses the text for entities outside the
database lock, then writes the row, its mentions and relations in one transaction.

The facade (:mod:`graphmem.cortex`), :mod:`graphmem.records` and the tiers that hold other
tiers (contextual memory) drive tiers through this package-internal protocol, and through
nothing private:

- :meth:`Tier.prepare`: ``save`` arguments -> a validated item (nothing written);
- :meth:`Tier.as_new_item` / :meth:`Tier.as_new_text`: an item as this tier writes it;
- :meth:`Tier.write_items` / :meth:`Tier.write_in_batches`: write items (capacity applied);
- :meth:`Tier.select` / :meth:`Tier.find_row`: items of this tier, in the caller's unit of
  work (:meth:`MemorySpace.reading <graphmem.space.MemorySpace.reading>` or
  :meth:`~graphmem.space.MemorySpace.transaction`);
- :meth:`Tier.capacity_room` / :meth:`Tier.evict`: the capacity policy, in the caller's
  transaction;
- :meth:`Tier.recent_items` / :meth:`Tier.all_items`: items without counting an access.

Example:
    >>> from graphmem import LongTermMemory
    >>> tier = LongTermMemory(max_items=2)
    >>> item = tier.prepare("Acme renewed", agent_id="sales", importance=0.9)
    >>> tier.as_new_item(item).namespace, len(tier)
    ('long_term', 0)
    >>> _ = tier.write_items([item])
    >>> [i.content for i in tier.all_items()]
    ['Acme renewed']
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._batches import batched
from ..base import Memory
from ..compat.storage import resolve_storage
from ..errors import InvalidArgumentError, InvalidArgumentTypeError
from ..filters import check_filters, item_matches
from ..index.writer import NewItem, NewText, author_key, embed_items
from ..items import (
    MemoryItem,
    check_content,
    check_event_time,
    check_importance,
    check_limit,
    check_memory_id,
    check_optional_id,
    check_query,
    check_updates,
    decode_metadata,
    encode_metadata,
    utc_now,
)
from ..retrieval.search import Hit, rank
from ..space import MemorySpace, split_filters

if TYPE_CHECKING:
    from ..items import StoredMemory
    from ..space import Work

__all__ = ["Tier"]


class Tier(Memory):
    """Base of graphmem's tiers. Subclasses set the class attributes below."""

    #: Rows of this tier carry this ``memory_type``.
    memory_type = "general"
    #: Default namespace (one per tier kind); instances may be given another.
    default_namespace = "general"
    #: Extract entities from saved text and link them in the knowledge graph.
    index_entities = True
    #: Also extract typed relations (needs the dependency parser; slower).
    extract_relations = False

    def __init__(
        self,
        storage: Any | None = None,
        max_items: int | None = None,
        enable_embeddings: bool = False,
        *,
        namespace: str | None = None,
        tenant: str | None = None,
    ) -> None:
        super().__init__(storage=storage, max_items=max_items, enable_embeddings=enable_embeddings)
        self._space: MemorySpace = resolve_storage(storage)
        self.namespace = namespace or self.default_namespace
        self._tenant = check_optional_id(tenant, "tenant")
        self._write_lock = threading.RLock()

    # ------------------------------------------------------------------ helpers
    @property
    def space(self) -> MemorySpace:
        """The SQL database and entity index this tier lives in."""
        return self._space

    def _namespaces(self) -> list[str]:
        return [self.namespace]

    def _make_item(
        self,
        content: object,
        metadata: object,
        extra: Mapping[str, Any],
        *,
        agent_id: object = None,
        user_id: object = None,
        conversation_id: object = None,
        task_id: object = None,
        memory_type: str | None = None,
        timestamp: object = None,
    ) -> MemoryItem:
        """Validate arguments and build the item; the caller's dicts are copied, not kept.

        ``timestamp``: the event time (see :func:`~graphmem.items.check_event_time`), the
        item's ``timestamp`` and its stored ``created_at``; None: now.
        """
        text = check_content(content)
        when = check_event_time(timestamp)
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidArgumentTypeError(
                f"metadata must be a dict or None, got {type(metadata).__name__}"
            )
        merged = {**(metadata or {}), **extra}
        # A deep copy through the JSON codec: validates and detaches from the caller.
        merged = decode_metadata(encode_metadata(merged))
        uid = check_optional_id(user_id, "user_id")
        if self._tenant is not None:
            if uid is not None and uid != self._tenant:
                raise InvalidArgumentError(
                    f"user_id {uid!r} does not match this memory's user {self._tenant!r}"
                )
            uid = self._tenant
        item = MemoryItem(
            content=text,
            memory_type=memory_type or self.memory_type,
            metadata=merged,
            agent_id=check_optional_id(agent_id, "agent_id"),
            task_id=check_optional_id(task_id, "task_id"),
            conversation_id=check_optional_id(conversation_id, "conversation_id"),
            user_id=uid,
        )
        if when is not None:
            item.timestamp = when
        return item

    def _importance_of(self, item: MemoryItem) -> float | None:
        value = item.metadata.get("importance")
        return (
            float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )

    #: Calute's EntityMemory lists a saved item's entities in ``metadata["entities"]``.
    lists_entities = False
    #: Items show their text whole, head included (the entity tier's "task result"): search
    #: ranks texts by their whole, not their body.
    shows_heads = False

    def as_new_text(self, item: MemoryItem, given: Sequence[str] | None = None) -> NewText:
        """A save of this tier: a text of its own and one item showing it."""
        return NewText(
            body=item.content,
            items=[self.as_new_item(item)],
            index=self.index_entities,
            relations=self.extract_relations,
            given_entities=given,
        )

    def as_new_item(self, item: MemoryItem, view: str = "full") -> NewItem:
        """``item`` as an item of this tier (showing all of its text, or its body)."""
        return NewItem(
            self.namespace,
            item,
            self._importance_of(item),
            view,
            lists_entities=self.lists_entities,
        )

    def write_items(
        self, items: list[MemoryItem], extras: Sequence[Any] | None = None
    ) -> list[int]:
        """Insert items (and index them) in one transaction; applies the capacity policy."""
        texts = [
            self.as_new_text(item, extra)
            for item, extra in zip(items, extras or [None] * len(items), strict=True)
        ]
        writer = self._space.writer
        docs = writer.analyse(texts)  # outside the database lock
        with self._space.transaction() as tx, self._write_lock:
            rows = tx.write(texts, docs)
            self.evict(tx)
        return [text_rows[0].seq for text_rows in rows]

    def prepare(
        self, content: str, metadata: dict[str, Any] | None = None, **kwargs: Any
    ) -> MemoryItem:
        """Validate ``save`` arguments into an item, writing nothing (each tier names its
        keywords: they are those of its :meth:`save`)."""
        raise NotImplementedError

    def _prepared(self, *args: Any, **kwargs: Any) -> tuple[MemoryItem, Any]:
        """``save`` arguments -> the item and what else :meth:`write_items` needs for it
        (the entity tier: the names the caller gave)."""
        return self.prepare(*args, **kwargs), None

    def save(
        self, content: str, metadata: dict[str, Any] | None = None, *args: Any, **kwargs: Any
    ) -> MemoryItem:
        """Save an item and return it: the arguments of the tier's :meth:`prepare` (checked
        first: nothing is written on error), then one write (capacity applied).

        Example:
            >>> from graphmem import ShortTermMemory
            >>> ShortTermMemory().save("Alice met Bob", agent_id="notes").agent_id
            'notes'
        """
        item, extra = self._prepared(content, metadata, *args, **kwargs)
        self.write_items([item], [extra])
        return item

    def save_many(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        batch_size: int = 256,
        progress: bool = False,
    ) -> list[MemoryItem]:
        """Save many items fast: ``records`` are dicts of :meth:`save` keyword arguments.

        Every record is validated first (an invalid one raises and nothing is written); then
        the text is analysed with ``nlp.pipe`` and each batch is written in one transaction.

        Example:
            >>> from graphmem import LongTermMemory
            >>> memory = LongTermMemory()
            >>> len(memory.save_many([{"content": "Alice met Bob"}, {"content": "Bob met Carol"}]))
            2
        """
        batch_size = check_limit(batch_size, "batch_size") or 1
        items: list[MemoryItem] = []
        extras: list[Any] = []
        for position, record in enumerate(records):
            if not isinstance(record, Mapping):
                raise InvalidArgumentTypeError(
                    f"records[{position}] must be a dict, got {type(record).__name__}"
                )
            try:
                item, extra = self._prepared(**record)
            except TypeError as exc:
                if isinstance(exc, InvalidArgumentTypeError):
                    raise
                raise InvalidArgumentTypeError(f"records[{position}]: {exc}") from None
            items.append(item)
            extras.append(extra)
        self.write_in_batches(items, extras, batch_size, progress)
        return items

    def write_in_batches(
        self, items: list[MemoryItem], extras: list[Any], batch_size: int, progress: bool
    ) -> None:
        """:meth:`write_items` validated items ``batch_size`` at a time (a progress bar if
        asked); ``extras``: what :meth:`_prepared` gave with each item."""
        pairs = list(zip(items, extras, strict=True))
        for chunk in batched(pairs, batch_size, progress, f"saving to {self.namespace}"):
            self.write_items([item for item, _ in chunk], [extra for _, extra in chunk])

    def evict(self, tx: Work) -> None:
        """Evict items over ``max_items`` (subclasses choose which), in the caller's write
        transaction ``tx``."""

    def capacity_room(self, tx: Work) -> int | None:
        """How many more items fit before :meth:`evict` evicts (None: no bound),
        in the fullest tenant this memory holds."""
        if self.max_items is None:
            return None
        counts = self._tenant_counts(tx).values()
        return self.max_items - max(counts, default=0)

    def _tenant_counts(self, tx: Work) -> dict[str, int]:
        """How many items each tenant holds here: capacity and eviction act within one
        tenant (a memory of one user holds one; a shared memory holds the items of each
        ``user_id`` its callers gave, and each tenant has the whole capacity)."""
        if self._tenant is not None:
            return {self._tenant: tx.count(self._namespaces(), self._tenant)}
        return tx.counts_by_tenant(self._namespaces())

    def _delete_rows(self, tx: Work, rows: Iterable[StoredMemory]) -> int:
        rows = list(rows)
        if not rows:
            return 0
        return tx.delete(rows)

    def _evict_rows(self, tx: Work, rows: Iterable[StoredMemory]) -> int:
        """:meth:`_delete_rows` to make room: eviction is not forgetting (no scrub of the
        write-ahead log, :meth:`graphmem.space.Work.evict`)."""
        rows = list(rows)
        if not rows:
            return 0
        return tx.evict(rows)

    def select(
        self,
        tx: Work,
        filters: Mapping[str, Any] | None,
        limit: int | None,
        newest_first: bool,
        by_time: bool = False,
    ) -> list[tuple[StoredMemory, MemoryItem]]:
        """Rows matching ``filters`` in order, streaming in pages so limits stay cheap;
        ``by_time``: in event-time order (for bounded tiers: read in one go). Reads in
        ``tx`` and counts no access."""
        sql, rest = split_filters(filters)
        if by_time:
            rows = tx.items(
                self._namespaces(),
                tenant=self._tenant,
                sql_filters=sql,
                newest_first=newest_first,
                limit=None if rest else limit,
                by_time=True,
            )
            return [(row, item) for row, item in rows if item_matches(item, rest)][:limit]
        out: list[tuple[StoredMemory, MemoryItem]] = []
        cursor: int | None = None
        # Column filters are applied by SQL: a page of ``limit`` rows is all that is needed
        # unless a filter SQL cannot apply rejects some.
        page = 200 if limit is None else (limit if not rest else max(limit * 2, 50))
        while limit is None or len(out) < limit:
            batch = tx.items(
                self._namespaces(),
                tenant=self._tenant,
                sql_filters=sql,
                newest_first=newest_first,
                limit=page,
                before_seq=cursor,
            )
            for row, item in batch:
                if item_matches(item, rest):
                    out.append((row, item))
                    if limit is not None and len(out) >= limit:
                        break
            if len(batch) < page:
                break
            cursor = batch[-1][0].seq
        return out

    def _touch(self, seqs: Iterable[int], items: Iterable[MemoryItem]) -> None:
        """Count an access of each returned item (in the database and on the objects)."""
        now = utc_now()
        seqs = list(seqs)
        if not seqs:
            return
        if not self._space.record_access(seqs, now):
            return  # the disk is full: the read still answers, uncounted
        for item in items:
            item.access_count += 1
            item.last_accessed = now

    # ------------------------------------------------------------------ Memory API
    def search(
        self,
        query: str,
        limit: int = 10,
        filters: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[MemoryItem]:
        """Items matching ``query``, best first; a blank query lists items newest first.

        Only items sharing a (stemmed) word with the query, or linked to an entity it names,
        are returned; ``relevance_score`` is set to the item's score in (0, 1].
        """
        return [hit.item for hit in self.search_hits(query, limit=limit, filters=filters)]

    def search_hits(
        self, query: str, limit: int = 10, filters: dict[str, Any] | None = None
    ) -> list[Hit]:
        """Like :meth:`search`, with each item's score and explanation."""
        check_query(query)
        limit = check_limit(limit)
        filters = check_filters(filters)
        if limit == 0:
            return []
        if not query.strip():
            with self._space.reading() as tx:
                rows = self.select(tx, filters, limit, newest_first=True)
            hits = [Hit.listed(row, item) for row, item in rows]
        else:
            sql, rest = split_filters(filters)
            hits = rank(
                self._space,
                self._namespaces(),
                query,
                tenant=self._tenant,
                sql_filters=sql,
                predicate=lambda item: item_matches(item, rest),
                limit=limit,
                heads=self.shows_heads,
            )
        self._touch([h.seq for h in hits], [h.item for h in hits])
        return hits

    def retrieve(
        self,
        memory_id: str | None = None,
        filters: dict[str, Any] | None = None,
        limit: int = 10,
    ) -> MemoryItem | list[MemoryItem] | None:
        """One item by id (None when absent), or up to ``limit`` items matching ``filters``."""
        if memory_id is not None:
            check_memory_id(memory_id)
            with self._space.reading() as tx:
                found = self.find_row(tx, memory_id)
            if found is None:
                return None
            self._touch([found[0].seq], [found[1]])
            return found[1]
        limit = check_limit(limit)
        filters = check_filters(filters)
        with self._space.reading() as tx:
            rows = self.select(tx, filters, limit, newest_first=self._retrieve_newest_first)
        self._touch([r.seq for r, _ in rows], [i for _, i in rows])
        return [item for _, item in rows]

    #: Order of ``retrieve(filters=...)``: Calute's short-term lists newest first.
    _retrieve_newest_first = False

    def find_row(self, tx: Work, memory_id: str) -> tuple[StoredMemory, MemoryItem] | None:
        """Where ``memory_id`` is stored in this tier (of its user) and its item, read in
        ``tx``; None when this tier does not hold it. Counts no access."""
        found = tx.find(memory_id, self._namespaces())
        if found is None or (self._tenant is not None and found[0].tenant != self._tenant):
            return None
        return found

    def update(self, memory_id: str, updates: dict[str, Any]) -> bool:
        """Change fields of an item; a content change re-extracts its entities.

        Unknown field names and invalid values raise; nothing is written then.
        """
        check_memory_id(memory_id)
        updates = check_updates(updates)
        with self._space.transaction() as tx, self._write_lock:
            found = self.find_row(tx, memory_id)
            if found is None:
                return False
            row, item = found
            changed = MemoryItem(**{**item.__dict__})
            for key, value in updates.items():
                setattr(changed, key, value)
            if changed.content != item.content and "embedding" not in updates:
                changed.embedding = None  # it described the old content
                embed_items(self._space.writer.embedder, [(changed.content, [changed])])
            self._check_updated(changed)
            tx.update(row.seq, changed, self._importance_of(changed), author_key(changed))
            if changed.content != item.content or changed.user_id != item.user_id:
                new_row = tx.replace_text(
                    row,
                    changed,
                    index=self.index_entities,
                    relations=self.extract_relations,
                )
                if self.lists_entities and "entities" not in updates.get("metadata", {}):
                    # The names the old text gave are forgotten with it.
                    changed.metadata["entities"] = tx.names_in_text(new_row.text_id)
                    tx.update_metadata(new_row.seq, changed.metadata)
        return True

    def _check_updated(self, item: MemoryItem) -> None:
        """What the updated item must hold beyond each field's own check (check_updates)."""
        if self._tenant is not None and item.user_id != self._tenant:
            raise InvalidArgumentError("user_id of a user's memory cannot change")
        if "importance" in item.metadata:
            check_importance(item.metadata["importance"], "metadata['importance']")

    def delete(self, memory_id: str | None = None, filters: dict[str, Any] | None = None) -> int:
        """Delete one item by id, or every item matching ``filters``; returns the count.

        With neither argument nothing is deleted (use :meth:`clear`).
        """
        filters = check_filters(filters)
        with self._space.transaction() as tx, self._write_lock:
            if memory_id is not None:
                check_memory_id(memory_id)
                found = self.find_row(tx, memory_id)
                return self._delete_rows(tx, [found[0]]) if found else 0
            if not filters:
                return 0
            rows = self.select(tx, filters, None, newest_first=False)
            return self._delete_rows(tx, [r for r, _ in rows])

    def clear(self) -> None:
        """Remove every item of this tier (of this user, for a user's memory)."""
        with self._space.transaction() as tx, self._write_lock:
            rows = tx.items(self._namespaces(), tenant=self._tenant)
            self._delete_rows(tx, [r for r, _ in rows])

    # ------------------------------------------------------------------ listing
    def recent_items(self, limit: int) -> list[MemoryItem]:
        """The ``limit`` latest events (by time, whenever saved), oldest first; counts no
        access."""
        if limit <= 0:
            return []
        with self._space.reading() as tx:
            rows = tx.items(
                self._namespaces(),
                tenant=self._tenant,
                newest_first=True,
                limit=limit,
                by_time=True,  # the most recent events, whenever they were saved
            )
        return [item for _, item in reversed(rows)]

    def all_items(self) -> list[MemoryItem]:
        """Every item of this tier (of its user), in stored order; counts no access."""
        with self._space.reading() as tx:
            rows = tx.items(self._namespaces(), tenant=self._tenant)
        return [item for _, item in rows]

    # :class:`~graphmem.base.Memory`'s hooks (``get_context``, ``get_statistics``).
    def _recent_items(self, limit: int) -> list[MemoryItem]:
        return self.recent_items(limit)

    def _all_items(self) -> list[MemoryItem]:
        return self.all_items()

    def __len__(self) -> int:
        with self._space.reading() as tx:
            return tx.count(self._namespaces(), tenant=self._tenant)

    def __bool__(self) -> bool:
        # An empty tier is still a tier: ``if memory.short_term:`` must not skip it
        # (Calute's facade never wrote to a fresh memory because of this).
        return True
