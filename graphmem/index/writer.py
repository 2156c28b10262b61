"""Writing a text and the tier items that show it: the one write path of every save.

A tier's ``save`` is one text with one item; the facade's ``save_task_result`` is one text
("task result": the head is the task) with an item in each tier that keeps it (the entity
tier shows all of it, long-term and contextual memory the result only) and Calute's
short-term line as a text of its own. Each text is analysed once (:func:`analyse_texts`, head
and body apart), its entities, mentions and relations are indexed once, then its items are
inserted: a statement is counted once however many tiers show it.

Every item records the save that wrote it (``result_id``: one id for all the items of a task
result, which ``CortexMemory.delete`` and ``update`` take) and, when the save has one, its
idempotency key (``dedupe_key``): :meth:`Writer.known_results` finds the results already
stored under the keys of a batch, inside its write transaction, so a retried save or a rerun
ingest writes nothing twice.

Example:
    >>> from graphmem.store.database import Database
    >>> from graphmem.items import MemoryItem
    >>> from graphmem.index.entity_index import EntityIndex
    >>> db = Database(); index = EntityIndex(db); writer = Writer(db, index)
    >>> text = NewText(
    ...     head="Record the new hire",
    ...     body="Maya Lindqvist started at Lumen Robotics.",
    ...     items=[
    ...         NewItem("entity", MemoryItem("Record the new hire Maya Lindqvist started at Lumen Robotics."), lists_entities=True),
    ...         NewItem("long_term", MemoryItem("Maya Lindqvist started at Lumen Robotics."), view="body"),
    ...     ],
    ...     relations=True,
    ... )
    >>> with db.write() as conn:
    ...     [rows] = writer.write(conn, [text])
    >>> len({row.text_id for row in rows}), text.items[0].item.metadata["entities"]
    (1, ['Maya Lindqvist', 'Lumen Robotics'])
    >>> [(e.subject, e.predicate, e.object, e.support) for e in index.graph("").find(predicate="works_at")]
    [('Maya Lindqvist', 'works_at', 'Lumen Robotics', 1)]
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import date
from typing import TYPE_CHECKING, Any

from ..errors import InvalidArgumentError, InvalidArgumentTypeError
from ..extract.embeddings import Embedder, get_embedder
from ..extract.normalize import canonical_key
from ..extract.texts import whole_text
from ..items import MemoryItem, StoredMemory, author_of
from ..store import Connection, memory_rows, ranking_rows, text_rows
from ..store.database import Database
from ..store.memory_rows import NewItemRow, TextAnalysis
from ..store.vectors import encode_embedding, quantised

if TYPE_CHECKING:  # the NLP side loads with the first text indexed, not with the store
    from ..extract.texts import Doc
    from ..extract.workers import AnalysisPool
    from .entity_index import EntityIndex, IndexedMemory

__all__ = [
    "NewItem",
    "NewText",
    "Writer",
    "author_key",
    "embed_items",
    "fingerprint",
    "new_result_id",
]

#: Fewer texts than this are analysed in the calling process (forking costs more than it saves).
_MIN_POOLED_TEXTS = 64
#: A load of this many texts or more refreshes the planner's statistics when it ends.
_STATISTICS_AFTER = 500


def new_result_id() -> str:
    """A fresh result id (a uuid4 string, like a memory id)."""
    return str(uuid.uuid4())


def fingerprint(record: Mapping[str, Any]) -> str:
    """The content fingerprint of a record (``save`` keyword arguments): a dedupe key equal
    for equal records, whatever the order of their keys; ``graphmem ingest`` and
    ``graphmem import`` skip what a tenant already holds by it.

    Example:
        >>> a = fingerprint({"content": "Alice met Bob", "importance": 0.5})
        >>> a == fingerprint({"importance": 0.5, "content": "Alice met Bob"}), a[:7]
        (True, 'sha256:')
        >>> a == fingerprint({"content": "Alice met Bob", "importance": 0.9})
        False
    """
    canonical = json.dumps(
        record, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=_json_value
    )
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _json_value(value: object) -> str:
    if isinstance(value, date):  # a datetime too
        return value.isoformat()
    raise InvalidArgumentTypeError(f"cannot fingerprint a {type(value).__name__}")


@dataclass
class NewItem:
    """A tier item to insert: its namespace (tier), the item, and which part of the text it
    shows (``"full"``, or ``"body"``: the text without its head)."""

    namespace: str
    item: MemoryItem
    importance: float | None = None
    view: str = "full"
    #: Calute's EntityMemory: ``metadata["entities"]`` gets the names the text mentions.
    lists_entities: bool = False

    def row(
        self, text_id: int, result_id: str | None = None, dedupe_key: str | None = None
    ) -> NewItemRow:
        """The row that stores this item as one showing ``text_id``, written by the save
        ``result_id`` (None: the item's own memory id) with its ``dedupe_key``."""
        return NewItemRow(
            self.item,
            self.namespace,
            self.importance,
            text_id,
            self.view,
            author_key(self.item),
            result_id,
            dedupe_key,
        )


def author_key(item: MemoryItem) -> str | None:
    """The canonical key of who said or did ``item`` (its speaker or author, else its agent),
    by which a search favours the memories of a person the query names.

    Example:
        >>> author_key(MemoryItem("Hi", metadata={"speaker": "Alice Johnson"}))
        'alice johnson'
    """
    author = author_of(item)
    return canonical_key(author) or None if author else None


@dataclass
class NewText:
    """A text to store once and the items that show it (all of one tenant)."""

    body: str
    items: list[NewItem]
    #: Shown by "full" items only, before the body: a task before its result.
    head: str = ""
    #: Extract entities (and, with ``relations``, typed relations) from it.
    index: bool = True
    relations: bool = False
    #: Names to link instead of extracting them (Calute's ``entities=`` argument).
    given_entities: Sequence[str] | None = None
    #: The save it belongs to (None: each item is a save of its own, named by its memory id)
    #: and the key that makes saving it again a no-op (see :func:`fingerprint`).
    result_id: str | None = None
    dedupe_key: str | None = None
    tenant: str = field(init=False)

    def __post_init__(self) -> None:
        if not self.items:
            raise InvalidArgumentError("a text needs at least one item")
        tenants = {ni.item.user_id or "" for ni in self.items}
        if len(tenants) != 1:
            raise InvalidArgumentError("the items of one text belong to one user")
        self.tenant = tenants.pop()

    @property
    def whole(self) -> str:
        """What a "full" item shows."""
        return whole_text(self.head, self.body)

    @property
    def analysis(self) -> TextAnalysis | None:
        """How it is indexed (None: not), recorded with it for ``reanalyse``."""
        if not self.index:
            return None
        listed = dict.fromkeys(ni.namespace for ni in self.items if ni.lists_entities)
        return TextAnalysis(self.relations, self.given_entities, tuple(listed))


def embed_items(
    embedder: Embedder | None, texts: Sequence[tuple[str, Sequence[MemoryItem]]]
) -> None:
    """Give the items of each ``(text, items)`` that have no embedding the vector of the text
    (what the result says, without its task), one batch for all (a model of static word
    vectors takes microseconds a text, cheap enough inside the write)."""
    if embedder is None:
        return
    wanted = [(text, items) for text, items in texts if any(i.embedding is None for i in items)]
    if not wanted:
        return
    vectors = embedder.embed([text for text, _ in wanted])
    for (_, items), vector in zip(wanted, vectors, strict=True):
        values = quantised(vector)
        for item in items:
            if item.embedding is None:
                item.embedding = list(values)


class Writer:
    """Stores texts and their items, indexing each text once (see the module docstring)."""

    def __init__(self, db: Database, index: EntityIndex) -> None:
        self.db = db
        self.index = index

    @property
    def embedder(self) -> Embedder | None:
        """The model that embeds each text for recall by meaning (None: off), loaded when
        first written with (opening a store does not load it)."""
        return get_embedder()

    def backfill_vectors(self, tenant: str | None = None, batch_size: int = 256) -> int:
        """Give every item (of ``tenant``; None: of every tenant) that has no embedding the
        vector of its text, ``batch_size`` items a transaction (a store saved with recall by
        meaning off; ``reanalyse`` runs it); returns how many were given one. A search of a
        store without vectors ranks without meaning for those items.

        Example:
            >>> from graphmem.space import MemorySpace
            >>> space = MemorySpace()
            >>> space.writer.backfill_vectors()
            0
        """
        embedder = self.embedder
        if embedder is None:
            return 0
        done, after = 0, 0
        while True:
            with self.db.read() as conn:
                batch = ranking_rows.missing_vectors(conn, tenant, after, batch_size)
            if not batch:
                return done
            vectors = embedder.embed([body for _, body in batch])
            encoded = [
                (seq, encode_embedding(quantised(vector)))
                for (seq, _), vector in zip(batch, vectors, strict=True)
            ]
            with self.db.write() as conn:
                ranking_rows.store_vectors(conn, encoded)
            done += len(batch)
            after = batch[-1][0]

    def analyse(
        self, texts: Sequence[NewText], pool: AnalysisPool | None = None
    ) -> list[Doc | None]:
        """The analysis of each text to index (None for the others), batched with
        ``nlp.pipe``; run it before the write transaction, outside the database lock."""
        return self.analyse_later(texts, pool)()

    def analyse_later(
        self, texts: Sequence[NewText], pool: AnalysisPool | None = None
    ) -> Callable[[], list[Doc | None]]:
        """Start :meth:`analyse` in ``pool``'s worker processes (from :meth:`bulk`;
        without one, the texts are analysed here and now); the function returned gives what
        :meth:`analyse` gives, waiting for the workers."""
        out: list[Doc | None] = [None] * len(texts)
        analyzer = self.index.analyzer
        if pool is not None and (self.index.extractor is not None or pool.analyzer is not analyzer):
            pool = None  # the user's extractor, or another pipeline since the pool started
        waiting: list[tuple[list[int], Callable[[], list[Doc]]]] = []
        for relations in (False, True):
            chosen = [
                i
                for i, t in enumerate(texts)
                if t.index and (t.relations and analyzer.has_parser) == relations
            ]
            if not chosen:
                continue
            pairs = [(texts[i].head, texts[i].body) for i in chosen]
            if pool is not None:
                waiting.append((chosen, pool.submit(pairs, relations)))
            else:
                for i, doc in zip(chosen, self.index.analyse_texts(pairs, relations), strict=True):
                    out[i] = doc

        # The texts' vectors, here while the workers analyse them (before the write
        # transaction, not while it holds the database; in batches of bounded memory).
        embed_items(self.embedder, [(t.body, [ni.item for ni in t.items]) for t in texts])

        def result() -> list[Doc | None]:
            for chosen, docs in waiting:
                for i, doc in zip(chosen, docs(), strict=True):
                    out[i] = doc
            return out

        return result

    @contextmanager
    def bulk(self, workers: int | None, texts: int) -> Iterator[AnalysisPool | None]:
        """A bulk load of ``texts`` texts: yields worker processes to analyse them with
        (``workers``: how many, None: the machine's cores), or None when one process does
        it as fast: one worker, few texts, the user's extractor, or no way to fork (see
        :mod:`graphmem.extract.workers`); analysed by workers or not, the same rows are
        stored. After a large load, the planner's statistics are refreshed."""
        from ..extract.workers import AnalysisPool, default_workers, pool_possible

        count = default_workers() if workers is None else workers
        if count <= 1 or texts < _MIN_POOLED_TEXTS or self.index.extractor is not None:
            yield None
        elif not pool_possible():
            yield None
        else:
            with AnalysisPool(self.index.analyzer, count) as pool:
                yield pool
        if texts >= _STATISTICS_AFTER:
            self.db.refresh_statistics()

    def write(
        self,
        conn: Connection,
        texts: Sequence[NewText],
        docs: Sequence[Doc | None] | None = None,
    ) -> list[list[StoredMemory]]:
        """Store ``texts`` in the caller's transaction, in order; returns each text's item
        rows (in the order of its items). ``docs``: from :meth:`analyse` (made here if None)."""
        if docs is None:
            docs = self.analyse(texts)
        embed_items(self.embedder, [(t.body, [ni.item for ni in t.items]) for t in texts])
        text_ids = text_rows.insert_texts(
            conn, [(t.tenant, t.head, t.body) for t in texts], [t.analysis for t in texts]
        )
        for tenant in {t.tenant for t in texts}:
            self.index.count_texts(tenant, sum(1 for t in texts if t.tenant == tenant))
        rows = memory_rows.insert_items(
            conn,
            [
                ni.row(text_id, text.result_id, text.dedupe_key)
                for text, text_id in zip(texts, text_ids, strict=True)
                for ni in text.items
            ],
        )
        by_text: list[list[StoredMemory]] = []
        listed: list[tuple[int, dict[str, Any]]] = []
        position = 0
        with self.index.deferred_writes(conn):
            for text, text_id, doc in zip(texts, text_ids, docs, strict=True):
                own = rows[position : position + len(text.items)]
                position += len(text.items)
                by_text.append(own)
                if not text.index:
                    continue
                found = self._index(conn, text, text_id, doc)
                for ni, row in zip(text.items, own, strict=True):
                    keys = found.keys if ni.view == "full" else found.body_keys
                    self.index.count_new_items(text.tenant, ni.namespace, keys)
                    if ni.lists_entities:
                        ni.item.metadata["entities"] = found.entity_names
                        listed.append((row.seq, ni.item.metadata))
        memory_rows.update_metadata_many(conn, listed)
        return by_text

    def add_items(
        self,
        conn: Connection,
        text_id: int,
        items: Sequence[NewItem],
        result_id: str | None = None,
    ) -> list[StoredMemory]:
        """Give a stored text more items (a contextual item promoted to long-term memory),
        of the save ``result_id`` (deleting that result deletes them too)."""
        return memory_rows.insert_items(conn, [ni.row(text_id, result_id) for ni in items])

    def known_results(
        self,
        conn: Connection,
        keys: Sequence[tuple[str, str | None, str]],
        *,
        writing: bool = True,
    ) -> list[str | None]:
        """For each new result ``(tenant, dedupe_key, result_id)``: the id of the stored
        result with its key, or of an earlier one in ``keys`` (which then is the one to
        write); None: write it (a new key, or none). Run it in the write transaction that
        writes them, so that two writers cannot both store one key (``writing=False``: a
        check in a read transaction, to skip analysing what is stored already)."""
        stored: dict[tuple[str, str], str] = {}
        for tenant in {t for t, key, _ in keys if key is not None}:
            wanted = sorted({key for t, key, _ in keys if t == tenant and key is not None})
            stored_keys = memory_rows.results_with_keys(conn, tenant, wanted, writing=writing)
            for found, result in stored_keys.items():
                stored[(tenant, found)] = result
        out: list[str | None] = []
        for tenant, key, result_id in keys:
            if key is None:
                out.append(None)
                continue
            known = stored.get((tenant, key))
            out.append(known)
            if known is None:
                stored[(tenant, key)] = result_id
        return out

    def index_stored(
        self, conn: Connection, text: NewText, text_id: int, doc: Doc | None
    ) -> IndexedMemory:
        """Index the stored text ``text_id`` (whose rows ``text`` describes) again, as
        :meth:`write` indexed it (re-analysis: :mod:`graphmem.index.reanalysis`)."""
        return self._index(conn, text, text_id, doc)

    def _index(
        self, conn: Connection, text: NewText, text_id: int, doc: Doc | None
    ) -> IndexedMemory:
        # The item the text is indexed as (its time, owner, speaker, conversation): the one
        # showing all of it, else the first.
        shown = next((ni for ni in text.items if ni.view == "full"), text.items[0])
        subject = replace(shown.item, content=text.whole)
        [found] = self.index.index(
            conn,
            [(text_id, subject)],
            relations=text.relations,
            docs=[doc] if doc is not None else None,
            given_entities={text_id: text.given_entities}
            if text.given_entities is not None
            else None,
            head_chars={text_id: len(text.head) + 1} if text.head else None,
        )
        return found
