""":class:`SQLMemory`: the shared implementation of the SQL-backed tiers.

A tier is a *namespace* of rows in a :class:`~graphmem.storage.SQLiteStorage`. Saving validates
the input (nothing is written on error), copies the caller's metadata, analyses the text for
entities outside the database lock, then writes the row, its mentions and relations in one
transaction.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..base import Memory
from ..compat.storage import SQLiteStorage, resolve_storage
from ..errors import InvalidArgumentError, InvalidArgumentTypeError
from ..filters import check_filters, item_matches
from ..index.writer import NewItem, NewText, author_key, embed_items
from ..items import (
    MemoryItem,
    check_content,
    check_event_time,
    check_importance,
    check_optional_id,
    check_query,
    check_updates,
    decode_metadata,
    encode_metadata,
    utc_now,
)
from ..retrieval.search import Hit, rank
from ..store import Connection
from ..store.database import SQL_FILTER_COLUMNS, MemoryRow, TextAnalysis

__all__ = ["SQLMemory", "check_limit", "split_filters"]


def check_limit(limit: object, name: str = "limit") -> int:
    """A non-negative int limit."""
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise InvalidArgumentTypeError(f"{name} must be an int, got {type(limit).__name__}")
    if limit < 0:
        raise InvalidArgumentError(f"{name} must be >= 0, got {limit}")
    return limit


def split_filters(filters: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split filters into those SQL can apply (column == plain value) and the rest."""
    sql: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for key, value in (filters or {}).items():
        if key in SQL_FILTER_COLUMNS and (value is None or isinstance(value, str)):
            sql[key] = value
        else:
            rest[key] = value
    return sql, rest


class SQLMemory(Memory):
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
        self._space: SQLiteStorage = resolve_storage(storage)
        self.namespace = namespace or self.default_namespace
        self._tenant = check_optional_id(tenant, "tenant")
        self._write_lock = threading.RLock()

    # ------------------------------------------------------------------ helpers
    @property
    def space(self) -> SQLiteStorage:
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

    def _new_text(self, item: MemoryItem, given: Sequence[str] | None = None) -> NewText:
        """A save of this tier: a text of its own and one item showing it."""
        return NewText(
            body=item.content,
            items=[self._new_item(item)],
            index=self.index_entities,
            relations=self.extract_relations,
            given_entities=given,
        )

    def _new_item(self, item: MemoryItem, view: str = "full") -> NewItem:
        """``item`` as an item of this tier (showing all of its text, or its body)."""
        return NewItem(
            self.namespace,
            item,
            self._importance_of(item),
            view,
            lists_entities=self.lists_entities,
        )

    def _write(self, items: list[MemoryItem], extras: Sequence[Any] | None = None) -> list[int]:
        """Insert items (and index them) in one transaction; applies the capacity policy."""
        texts = [
            self._new_text(item, extra)
            for item, extra in zip(items, extras or [None] * len(items), strict=True)
        ]
        writer = self._space.writer
        docs = writer.analyse(texts)  # outside the database lock
        with self._space.database.write() as conn, self._write_lock:
            rows = writer.write(conn, texts, docs)
            self._enforce_capacity(conn)
        return [text_rows[0].seq for text_rows in rows]

    def _build(
        self, content: str, metadata: dict[str, Any] | None = None, **kwargs: Any
    ) -> MemoryItem:
        """Validate ``save`` arguments into an item (subclasses define the keywords)."""
        raise NotImplementedError

    def _from_record(self, record: dict[str, Any]) -> tuple[MemoryItem, Any]:
        """A ``save_many`` record -> the item and whatever else ``_write`` needs for it."""
        return self._build(**record), None

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
                item, extra = self._from_record(dict(record))
            except TypeError as exc:
                if isinstance(exc, InvalidArgumentTypeError):
                    raise
                raise InvalidArgumentTypeError(f"records[{position}]: {exc}") from None
            items.append(item)
            extras.append(extra)
        self._write_in_batches(items, extras, batch_size, progress)
        return items

    def _write_in_batches(
        self, items: list[MemoryItem], extras: list[Any], batch_size: int, progress: bool
    ) -> None:
        """:meth:`_write` validated items ``batch_size`` at a time (a progress bar if asked)."""
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=len(items), unit="memories", desc=f"saving to {self.namespace}")
        for start in range(0, len(items), max(1, batch_size)):
            chunk = items[start : start + max(1, batch_size)]
            self._write(chunk, extras[start : start + max(1, batch_size)])
            if bar is not None:
                bar.update(len(chunk))
        if bar is not None:
            bar.close()

    def _enforce_capacity(self, conn: Connection) -> None:
        """Evict items over ``max_items`` (subclasses choose which)."""

    def _capacity_room(self, conn: Connection) -> int | None:
        """How many more items fit before :meth:`_enforce_capacity` evicts (None: no bound),
        in the fullest tenant this memory holds."""
        if self.max_items is None:
            return None
        counts = self._tenant_counts(conn).values()
        return self.max_items - max(counts, default=0)

    def _tenant_counts(self, conn: Connection) -> dict[str, int]:
        """How many items each tenant holds here: capacity and eviction act within one
        tenant (a memory of one user holds one; a shared memory holds the items of each
        ``user_id`` its callers gave, and each tenant has the whole capacity)."""
        db = self._space.database
        if self._tenant is not None:
            return {self._tenant: db.count(conn, self._namespaces(), self._tenant)}
        return db.counts_by_tenant(conn, self._namespaces())

    def _delete_rows(self, conn: Connection, rows: Iterable[MemoryRow]) -> int:
        rows = list(rows)
        if not rows:
            return 0
        return self._space.entity_index.delete_memories(conn, rows)

    def _tenant_filter(self, filters: Mapping[str, Any] | None) -> str | None:
        return self._tenant

    def _select(
        self,
        conn: Connection,
        filters: Mapping[str, Any] | None,
        limit: int | None,
        newest_first: bool,
        by_time: bool = False,
    ) -> list[tuple[MemoryRow, MemoryItem]]:
        """Rows matching ``filters`` in order, streaming in pages so limits stay cheap;
        ``by_time``: in event-time order (for bounded tiers: read in one go)."""
        sql, rest = split_filters(filters)
        db = self._space.database
        if by_time:
            rows = db.list_items(
                conn,
                self._namespaces(),
                tenant=self._tenant,
                sql_filters=sql,
                newest_first=newest_first,
                limit=None if rest else limit,
                by_time=True,
            )
            return [(row, item) for row, item in rows if item_matches(item, rest)][:limit]
        out: list[tuple[MemoryRow, MemoryItem]] = []
        cursor: int | None = None
        # Column filters are applied by SQL: a page of ``limit`` rows is all that is needed
        # unless a filter SQL cannot apply rejects some.
        page = 200 if limit is None else (limit if not rest else max(limit * 2, 50))
        while limit is None or len(out) < limit:
            batch = db.list_items(
                conn,
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

    def _touch(self, rows: Iterable[MemoryRow], items: Iterable[MemoryItem]) -> None:
        """Count an access of each returned item (in the database and on the objects)."""
        now = utc_now()
        rows = list(rows)
        if not rows:
            return
        if not self._space.database.record_access([r.seq for r in rows], now):
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
            with self._space.database.read() as conn:
                rows = self._select(conn, filters, limit, newest_first=True)
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
        self._touch([MemoryRow(h.seq, self.namespace, "") for h in hits], [h.item for h in hits])
        return hits

    def retrieve(
        self,
        memory_id: str | None = None,
        filters: dict[str, Any] | None = None,
        limit: int = 10,
    ) -> MemoryItem | list[MemoryItem] | None:
        """One item by id (None when absent), or up to ``limit`` items matching ``filters``."""
        if memory_id is not None:
            if not isinstance(memory_id, str):
                raise InvalidArgumentTypeError(
                    f"memory_id must be a str, got {type(memory_id).__name__}"
                )
            with self._space.database.read() as conn:
                found = self._find(conn, memory_id)
            if found is None:
                return None
            self._touch([found[0]], [found[1]])
            return found[1]
        limit = check_limit(limit)
        filters = check_filters(filters)
        with self._space.database.read() as conn:
            rows = self._select(conn, filters, limit, newest_first=self._retrieve_newest_first)
        self._touch([r for r, _ in rows], [i for _, i in rows])
        return [item for _, item in rows]

    #: Order of ``retrieve(filters=...)``: Calute's short-term lists newest first.
    _retrieve_newest_first = False

    def _find(self, conn: Connection, memory_id: str) -> tuple[MemoryRow, MemoryItem] | None:
        found = self._space.database.find(conn, memory_id, self._namespaces())
        if found is None or (self._tenant is not None and found[0].tenant != self._tenant):
            return None
        return found

    def update(self, memory_id: str, updates: dict[str, Any]) -> bool:
        """Change fields of an item; a content change re-extracts its entities.

        Unknown field names and invalid values raise; nothing is written then.
        """
        if not isinstance(memory_id, str):
            raise InvalidArgumentTypeError(
                f"memory_id must be a str, got {type(memory_id).__name__}"
            )
        updates = check_updates(updates)
        db = self._space.database
        with db.write() as conn, self._write_lock:
            found = self._find(conn, memory_id)
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
            db.update_row(conn, row.seq, changed, self._importance_of(changed), author_key(changed))
            if changed.content != item.content or changed.user_id != item.user_id:
                new_row = self._space.entity_index.replace_text(
                    conn,
                    row,
                    changed,
                    index=self.index_entities,
                    relations=self.extract_relations,
                )
                analysis = TextAnalysis(self.extract_relations) if self.index_entities else None
                db.record_analysis(conn, new_row.text_id, analysis)
                if self.lists_entities and "entities" not in updates.get("metadata", {}):
                    # The names the old text gave are forgotten with it.
                    changed.metadata["entities"] = self._space.entity_index.names_in_text(
                        conn, new_row.text_id
                    )
                    db.update_metadata(conn, new_row.seq, changed.metadata)
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
        db = self._space.database
        with db.write() as conn, self._write_lock:
            if memory_id is not None:
                if not isinstance(memory_id, str):
                    raise InvalidArgumentTypeError(
                        f"memory_id must be a str, got {type(memory_id).__name__}"
                    )
                found = self._find(conn, memory_id)
                return self._delete_rows(conn, [found[0]]) if found else 0
            if not filters:
                return 0
            rows = self._select(conn, filters, None, newest_first=False)
            return self._delete_rows(conn, [r for r, _ in rows])

    def clear(self) -> None:
        """Remove every item of this tier (of this user, for a user's memory)."""
        db = self._space.database
        with db.write() as conn, self._write_lock:
            rows = db.list_items(conn, self._namespaces(), tenant=self._tenant)
            self._delete_rows(conn, [r for r, _ in rows])

    # ------------------------------------------------------------------ base hooks
    def _recent_items(self, limit: int) -> list[MemoryItem]:
        if limit <= 0:
            return []
        with self._space.database.read() as conn:
            rows = self._space.database.list_items(
                conn,
                self._namespaces(),
                tenant=self._tenant,
                newest_first=True,
                limit=limit,
                by_time=True,  # the most recent events, whenever they were saved
            )
        return [item for _, item in reversed(rows)]

    def _all_items(self) -> Iterable[MemoryItem]:
        with self._space.database.read() as conn:
            rows = self._space.database.list_items(conn, self._namespaces(), tenant=self._tenant)
        return [item for _, item in rows]

    def __len__(self) -> int:
        with self._space.database.read() as conn:
            return self._space.database.count(conn, self._namespaces(), tenant=self._tenant)

    def __bool__(self) -> bool:
        # An empty tier is still a tier: ``if memory.short_term:`` must not skip it
        # (Calute's facade never wrote to a fresh memory because of this).
        return True
