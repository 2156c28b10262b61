"""The entity index: turns saved memories into entities, mentions and relations.

For each memory it finds entity mentions (:mod:`graphmem.extract.entities`), resolves them to
the tenant's entities (:mod:`graphmem.extract.resolution`: canonical key, known aliases, a lone
first or last name to a unique full PERSON name, a lone first word of an organisation's name to
the unique ORG it opens), links entities that share a sentence or a memory (``co_occurs``),
adds typed relations from the dependency rules and the learned model when asked
(:mod:`graphmem.index.linking`), and writes it all in the caller's transaction. The tenant's
:class:`KnowledgeGraph` view is updated once the transaction commits; a view whose generation
differs from the database's (another process wrote) is rebuilt from the tables
(:mod:`graphmem.index.views`). Deleting memories is :mod:`graphmem.index.support`'s, and the
deferred batch :mod:`graphmem.index.pending`'s; :class:`EntityIndex` is their one facade.

Example:
    >>> from graphmem.store.database import Database
    >>> from graphmem.store.text_rows import insert_memories
    >>> from graphmem.items import MemoryItem
    >>> db = Database(); index = EntityIndex(db)
    >>> item = MemoryItem("Alice Johnson met Bob Stone in Paris.")
    >>> with db.write() as conn:
    ...     [row] = insert_memories(conn, [(item, "n", None)])
    ...     _ = index.index(conn, [(row.text_id, item)])
    >>> sorted(index.graph("").neighbors("Alice Johnson"))
    ['Bob Stone', 'Paris']
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import EntityNotFound, InvalidArgumentError, InvalidArgumentTypeError
from ..extract.entities import AliasMatcher, extraction_doc
from ..extract.entity_patterns import (
    DeclaredNames,
    PatternSource,
    check_entity_label,
    read_entity_patterns,
    try_entity_patterns,
    usable_patterns,
)
from ..extract.entity_types import label_weight
from ..extract.extractor import Extractor, checked_extractions
from ..extract.known_names import KnownNames
from ..extract.normalize import UNKNOWN_LABEL, canonical_key, name_text, why_not_one_entity
from ..extract.pipeline import Analyzer, get_analyzer, named_analyzer
from ..extract.predicates import PredicateCatalogue, default_catalogue
from ..extract.resolution import may_merge, resolve_named, shortens_only
from ..extract.texts import analyse_texts, whole_text
from ..graph.knowledge_graph import Edge, KnowledgeGraph
from ..graph.records import RelationshipQueries
from ..items import MemoryItem, StoredMemory, event_stamp, utc_now
from ..store import Connection, derived_rows, graph_rows
from ..store.database import Database
from ._shared import (
    MAX_INDEXED_CHARS,
    MAX_MEMORY_LINKED_ENTITIES,
    SENTENCE_LINK_WINDOW,
    SQL_GRAPH_THRESHOLD,
    GraphCache,
    IndexedMemory,
    RelationSource,
    TenantState,
    check_graph_cache,
)
from .indexing import IndexingWay, index_text
from .linking import TextContext, link
from .pending import DeferredWrites, PendingWrites
from .support import Support
from .views import TenantViews

if TYPE_CHECKING:
    from ..extract.texts import Doc

__all__ = [
    "MAX_INDEXED_CHARS",
    "MAX_MEMORY_LINKED_ENTITIES",
    "SENTENCE_LINK_WINDOW",
    "SQL_GRAPH_THRESHOLD",
    "EntityIndex",
    "GraphCache",
    "IndexedMemory",
    "RelationSource",
]


class EntityIndex:
    """Entity extraction, resolution and graph maintenance over one :class:`Database`.

    ``predicates`` is what the relations' predicates mean (default: the bundled rules' and
    the learned model's, :func:`~graphmem.extract.predicates.default_catalogue`).
    """

    def __init__(
        self,
        db: Database,
        analyzer: Analyzer | None = None,
        relation_source: RelationSource | None = None,
        graph_cache: GraphCache = "memory",
        predicates: PredicateCatalogue | None = None,
    ) -> None:
        self.graph_cache: GraphCache = check_graph_cache(graph_cache)
        self.db = db
        self._analyzer = analyzer
        self._relation_source = relation_source
        self._relation_source_loaded = relation_source is not None
        self._relation_source_given = relation_source is not None
        self._predicates = predicates
        self._predicates_given = predicates is not None
        self._lock = threading.RLock()
        #: The tenants' views (shared by the parts below).
        self._tenants: dict[str, TenantState] = {}
        self._writes = DeferredWrites(self._tenants)
        self._views = TenantViews(
            db, self._lock, self._tenants, self._writes.flush_deferred, self._read_declarations
        )
        self._support = Support(
            db,
            self._lock,
            self._views,
            self._writes,
            lambda: self.predicates,
            lambda tenant: self._relabelled.get(tenant, {}),
        )
        #: What the user declared (read from the database whenever a view is rebuilt):
        #: entity-ruler patterns, and labels set by :meth:`relabel` (tenant -> key -> label).
        self._declared_patterns: list[dict[str, Any]] = []
        self._declared: DeclaredNames | None = None
        self._relabelled: dict[str, dict[str, str]] = {}
        #: The user's extractor, used instead of spaCy's rules (:meth:`use_extraction`).
        self.extractor: Extractor | None = None

    @property
    def analyzer(self) -> Analyzer:
        """The spaCy analyzer (loaded on first use)."""
        if self._analyzer is None:
            self._analyzer = get_analyzer()
        return self._analyzer

    @property
    def relation_source(self) -> RelationSource | None:
        """The typed-relation extractor, or None when the pipeline has no parser."""
        if not self._relation_source_loaded:
            self._relation_source_loaded = True
            if self.analyzer.has_parser:
                from ..extract.learned import default_relation_source

                self._relation_source = default_relation_source(self.analyzer.nlp)
                if not self._predicates_given:  # read as the source was made
                    self._predicates = default_catalogue()
        return self._relation_source

    @property
    def predicates(self) -> PredicateCatalogue | None:
        """What the predicates mean (which hold one value at a time, what a statement ends),
        or None when no typed relations are read (no :attr:`relation_source`)."""
        if self.relation_source is None:
            return None
        if self._predicates is None:
            self._predicates = default_catalogue()
        return self._predicates

    @property
    def _pending(self) -> PendingWrites:
        """The batch being collected (see :meth:`deferred_writes`)."""
        return self._writes.batch

    def _flush_deferred(self, conn: Connection) -> None:
        """Before reading or changing the graph tables: write what a deferral holds."""
        self._writes.flush_deferred(conn)

    # ------------------------------------------------------------------ graph views
    def graph(self, tenant: str) -> KnowledgeGraph:
        """The tenant's graph, rebuilt from the tables when another writer changed them."""
        return self._views.graph(tenant)

    def queries(self, tenant: str) -> RelationshipQueries:
        """What answers the tenant's relationship queries, per :attr:`graph_cache`: the
        :class:`KnowledgeGraph` view or a :class:`~graphmem.index.sql_graph.SQLGraph`."""
        return self._views.queries(tenant, self.graph_cache)

    @property
    def declared_names(self) -> DeclaredNames | None:
        """The names the user declared (as of the last view read)."""
        return self._declared

    def known_names(self, tenant: str) -> KnownNames:
        """The names the tenant's memory knows (fresh, like :meth:`graph`)."""
        return self.matcher(tenant).names

    def matcher(self, tenant: str) -> AliasMatcher:
        """The tenant's matcher of known names (fresh, like :meth:`graph`)."""
        with self.db.read(), self._lock:
            self.graph(tenant)
            return self._tenants[tenant].matcher

    def add_relation(
        self,
        tenant: str,
        subject: str,
        predicate: str,
        obj: str,
        confidence: float = 1.0,
        labels: tuple[str | None, str | None] = (None, None),
        valid: tuple[datetime | None, datetime | None] = (None, None),
    ) -> Edge:
        """Record ``subject -predicate-> obj`` by hand (rule ``manual``); unknown names become
        entities (of ``labels``, else :data:`UNKNOWN_LABEL`). ``valid``: when it began and
        ended (UTC; None: since now, and still holds); a relation already known takes them.

        A name resolves as in extraction: its own entity, else the one entity it may be a
        short name of. With a label, a short name only resolves to an entity that label may
        be one with (:func:`~graphmem.extract.normalize.may_be_one_entity`), and a name whose
        own entity has an incompatible label is refused.

        Raises:
            InvalidArgumentError: a label is malformed, or names an entity the name cannot be.
        """
        key_pred = predicate.strip().lower().replace(" ", "_")
        seen = event_stamp(valid[0] if valid[0] is not None else utc_now())
        checked = [None if label is None else check_entity_label(label) for label in labels]
        with self.db.write() as conn, self._lock:
            self._flush_deferred(conn)
            before, after, state = self._views.writable(conn, tenant)
            self._writes.batch = PendingWrites()
            ctx = TextContext(conn, state, tenant, None, seen, self._writes)
            keys = [
                self._named_entity(ctx, name_text(given), label)
                for given, label in zip((subject, obj), checked, strict=True)
            ]
            data, _ = link(ctx, keys[0], key_pred, keys[1], confidence, (0, 0, "manual"))
            if valid[0] is not None:
                data["valid_from"] = seen
            if valid[1] is not None:
                data["valid_to"] = event_stamp(valid[1])
            self._writes.flush(conn)
            self._views.track_transaction({tenant}, before, after)
            data = state.graph.graph.get_edge_data(keys[0], keys[1], key=key_pred)
            return state.graph._edge(keys[0], keys[1], data)

    @staticmethod
    def _named_entity(ctx: TextContext, name: str, label: str | None) -> str:
        """The key of the entity a name given by hand stands for, made when it is new."""
        kg = ctx.state.graph
        key = resolve_named(kg, name, label)
        if key is None:
            key = canonical_key(name)
            label = label or UNKNOWN_LABEL
            entity_id = graph_rows.insert_entity(ctx.conn, ctx.tenant, key, name, label, ctx.seen)
            kg.add_entity(
                key,
                name=name,
                label=label,
                first_seen=ctx.seen,
                last_seen=ctx.seen,
                entity_id=entity_id,
            )
            ctx.state.matcher.add(name.strip(), label)
        elif ctx.seen < kg.graph.nodes[key]["first_seen"]:  # known since then
            node = kg.graph.nodes[key]
            node["first_seen"] = ctx.seen
            ctx.pending.entity_touches[node["entity_id"]] = node
        return key

    def merge(self, tenant: str, keep: str, merge: str) -> int:
        """Merge entity ``merge`` into ``keep``: aliases, mentions and relations move over.

        Logged in the ``merges`` table with a snapshot; returns the id :meth:`unmerge` takes.
        """
        with self.db.write() as conn, self._lock:
            self._flush_deferred(conn)
            before, after, state = self._views.writable(conn, tenant)
            keys = []
            for name in (keep, merge):
                key = state.graph.resolve(name)
                if key is None:
                    raise EntityNotFound(f"entity {name!r} is not in the graph")
                keys.append(key)
            if keys[0] == keys[1]:
                raise InvalidArgumentError(f"{keep!r} and {merge!r} are already the same entity")
            nodes = state.graph.graph.nodes
            labels = [nodes[k]["label"] for k in keys]
            reason = why_not_one_entity(labels[0], keys[0], labels[1], keys[1])
            if reason is not None:
                raise InvalidArgumentError(
                    f"{keep!r} ({labels[0]}) and {merge!r} ({labels[1]}) cannot be one entity: "
                    f"{reason} (if one of them is mislabelled, relabel it first: "
                    f"relabel({merge!r}, {labels[0]!r}))"
                )
            merge_id = self._merge_rows(conn, tenant, state, keys[0], keys[1], by_hand=True)
            self._views.track_transaction({tenant}, before, after)
            return merge_id

    def _merge_rows(
        self,
        conn: Connection,
        tenant: str,
        state: TenantState,
        keep: str,
        merge: str,
        by_hand: bool = False,
    ) -> int:
        """Fold entity ``merge`` into ``keep`` (node keys) in the tables, log it for
        :meth:`unmerge` (``by_hand``: the user asked for it), and drop the tenant's view (it
        is rebuilt on next use)."""
        nodes = state.graph.graph.nodes
        keep_id = nodes[keep]["entity_id"]
        snapshot = graph_rows.merge_entity_rows(
            conn, tenant, keep_id, nodes[merge]["entity_id"], weight=label_weight
        )
        pinned = self._relabelled.get(tenant, {}).get(keep)
        if pinned is not None:
            graph_rows.write_batch(conn, entity_labels=[{"eid": keep_id, "label": pinned}])
        merge_id = graph_rows.log_merge(conn, tenant, keep, merge, snapshot, by_hand)
        self._tenants.pop(tenant, None)
        return merge_id

    def unmerge(self, tenant: str, merge_id: int) -> None:
        """Undo a merge, restoring the rows it changed. Later merges of the same entities
        must be undone first."""
        with self.db.write() as conn, self._lock:
            self._flush_deferred(conn)
            before, after = self.db.bump_generation(conn)
            snapshot = graph_rows.take_merge(conn, tenant, merge_id)
            if graph_rows.unmerge_entity_rows(conn, snapshot):  # some rows were forgotten
                both = {snapshot["kept_entity"]["id"], snapshot["merged_entity"]["id"]}
                self._support.recompute_lost(conn, {tenant}, both, [])
            self._tenants.pop(tenant, None)
            self._views.track_transaction({tenant}, before, after)

    # ------------------------------------------------------------------ declared types
    def declare(self, patterns: PatternSource) -> int:
        """Declare entity types by entity-ruler patterns, for every tenant of the database;
        returns how many patterns were new.

        The patterns are stored in the database (a reopened memory knows them) and run beside
        the shared pipeline on every text indexed from now on; a name they find keeps their
        label, and a declared label wins its entity's label vote. Entities already known
        under a phrase pattern's name take its label now.

        Raises:
            EntityPatternsError: a pattern is malformed (nothing is declared).
        """
        checked = read_entity_patterns(patterns)
        try_entity_patterns(checked, self.analyzer.nlp.make_doc)  # built and run before stored
        with self.db.write() as conn, self._lock:
            self._flush_deferred(conn)
            before, after = self.db.bump_generation(conn)
            stored = list(graph_rows.read_setting(conn, graph_rows.DECLARED_PATTERNS_KEY) or [])
            signatures = {json.dumps(p, sort_keys=True) for p in stored}
            fresh: list[dict[str, Any]] = []
            for pattern in checked:
                signature = json.dumps(pattern, sort_keys=True)
                if signature not in signatures:
                    signatures.add(signature)
                    fresh.append(pattern)
            if not fresh:
                return 0
            graph_rows.write_setting(conn, graph_rows.DECLARED_PATTERNS_KEY, stored + fresh)
            phrases = {
                canonical_key(p["pattern"]): p["label"]
                for p in fresh
                if isinstance(p["pattern"], str)
            }
            touched = set()
            for tenant, key, entity_id in graph_rows.entity_ids_named(conn, list(phrases)):
                graph_rows.set_entity_label(conn, entity_id, phrases[key])
                touched.add(tenant)
            self._read_declarations(conn)
            self._tenants.clear()  # views are rebuilt with the new labels
            self._views.track_transaction(touched, before, after)
            return len(fresh)

    def undeclare(self, label: str, pattern: str | list[Any] | None = None) -> int:
        """Remove declared patterns: every one of ``label``, or only the one whose
        ``pattern`` is this phrase or token list; returns how many went. Names they labelled
        keep their label until their texts are analysed again.

        Raises:
            InvalidArgumentTypeError: ``label`` is not a string.
        """
        if not isinstance(label, str):
            raise InvalidArgumentTypeError(f"label must be a str, got {type(label).__name__}")
        with self.db.write() as conn, self._lock:
            self._flush_deferred(conn)
            stored = list(graph_rows.read_setting(conn, graph_rows.DECLARED_PATTERNS_KEY) or [])
            kept = [
                p
                for p in stored
                if not (
                    p.get("label") == label and (pattern is None or p.get("pattern") == pattern)
                )
            ]
            if len(kept) == len(stored):
                return 0
            before, after = self.db.bump_generation(conn)
            graph_rows.write_setting(conn, graph_rows.DECLARED_PATTERNS_KEY, kept)
            self._read_declarations(conn)
            self._tenants.clear()
            self._views.track_transaction(set(), before, after)
            return len(stored) - len(kept)

    def declared_patterns(self) -> list[dict[str, Any]]:
        """The entity-ruler patterns declared in this database, oldest first."""
        with self.db.read() as conn:
            return list(graph_rows.read_setting(conn, graph_rows.DECLARED_PATTERNS_KEY) or [])

    def relabel(self, tenant: str, name: str, label: str) -> str:
        """Give the entity ``name`` resolves to the label ``label``, for good: its mentions
        are relabelled and later mentions do not vote it back. Returns the previous label.

        The entity's other names must be allowed to be one entity with it under the new
        label (the one rule of :func:`~graphmem.extract.normalize.may_be_one_entity`):
        relabelling Bob Stone a place while "Robert Stone" was merged into him is refused.

        Raises:
            EntityNotFound: no entity has that name.
            InvalidArgumentError: the label is malformed, or the rule refuses it.
        """
        label = check_entity_label(label)
        with self.db.write() as conn, self._lock:
            self._flush_deferred(conn)
            before, after, state = self._views.writable(conn, tenant)
            key = state.graph.resolve(name)
            if key is None:
                raise EntityNotFound(f"entity {name!r} is not in the graph")
            node = state.graph.graph.nodes[key]
            for surface, other in sorted(graph_rows.alias_labels(conn, node["entity_id"]).items()):
                other_key = canonical_key(surface)
                reason = (
                    why_not_one_entity(label, key, other, other_key) if other_key != key else None
                )
                if reason is not None:
                    raise InvalidArgumentError(
                        f"{node['name']!r} cannot be {label}: it is also named {surface!r} "
                        f"({other}), and {reason} (unmerge that name first)"
                    )
            previous = str(node["label"])
            graph_rows.set_entity_label(conn, node["entity_id"], label)
            relabelled = graph_rows.read_setting(conn, graph_rows.RELABELLED_KEY) or {}
            relabelled.setdefault(tenant, {})[key] = label
            graph_rows.write_setting(conn, graph_rows.RELABELLED_KEY, relabelled)
            self._relabelled = relabelled
            self._tenants.pop(tenant, None)
            self._views.track_transaction({tenant}, before, after)
            return previous

    def _read_declarations(self, conn: Connection) -> None:
        """Read what the user declared, rebuilding the declared names when it changed."""
        patterns = graph_rows.read_setting(conn, graph_rows.DECLARED_PATTERNS_KEY) or []
        if patterns != self._declared_patterns or self._declared is None:
            self._declared_patterns = patterns

            def make_doc(text: str) -> Doc:  # the pipeline loads when a pattern needs it
                return self.analyzer.nlp.make_doc(text)

            self._declared = DeclaredNames(usable_patterns(patterns, make_doc), make_doc)
        self._relabelled = graph_rows.read_setting(conn, graph_rows.RELABELLED_KEY) or {}

    def tier_counts(self, tenant: str, namespace: str, keys: Sequence[str]) -> dict[str, int]:
        """Entity key -> how many items of ``namespace`` mention it (keys with none left
        out), kept in the tenant's graph view: counted in SQL once per key, then kept up to
        date by :meth:`count_new_items` and dropped when items of the tier are deleted."""
        return self._views.tier_counts(tenant, namespace, keys)

    def count_new_items(self, tenant: str, namespace: str, keys: Sequence[str]) -> None:
        """One more item of ``namespace`` mentions each of ``keys`` (in the counts already kept)."""
        self._views.count_new_items(tenant, namespace, keys)

    def count_texts(self, tenant: str, delta: int) -> None:
        """``delta`` texts more (or fewer) for ``tenant`` (in its view, when loaded)."""
        self._views.count_texts(tenant, delta)

    def invalidate(self) -> None:
        """Drop every cached view (they are rebuilt on next use)."""
        with self._lock:
            self._tenants.clear()

    # ------------------------------------------------------------------ indexing
    def use_extraction(
        self, *, spacy_model: str | None = None, extractor: Extractor | None = None
    ) -> None:
        """Extract with the spaCy pipeline ``spacy_model`` (installed by the user), or with
        the user's ``extractor`` instead of spaCy's rules; None leaves each as it is. Applies
        to every text this index analyses from now on (every tier of the storage).

        Raises:
            PipelineNotInstalledError: ``spacy_model`` is not installed.
            InvalidArgumentTypeError: ``extractor`` has no ``extract`` method.
        """
        if extractor is not None and not isinstance(extractor, Extractor):
            raise InvalidArgumentTypeError(
                f"extractor must have an extract(texts) method, got {type(extractor).__name__}"
            )
        analyzer = named_analyzer(spacy_model) if spacy_model is not None else None
        with self._lock:
            if analyzer is not None and analyzer is not self._analyzer:
                self._analyzer = analyzer  # declared phrases are tokenized again by it
                if not self._relation_source_given:  # the rules read the new pipeline's parse
                    self._relation_source_loaded, self._relation_source = False, None
                    if not self._predicates_given:
                        self._predicates = None
            if extractor is not None:
                self.extractor = extractor

    def analyse(self, items: Sequence[MemoryItem], relations: bool) -> list[Doc]:
        """Run the pipeline (or the user's extractor) over the items' text (batched)."""
        return self.analyse_texts([("", item.content) for item in items], relations)

    def analyse_texts(self, texts: Sequence[tuple[str, str]], relations: bool) -> list[Doc]:
        """One Doc per ``(head, body)`` text (:func:`~graphmem.extract.texts.analyse_texts`),
        or, with the user's extractor, per whole text, carrying its checked extraction."""
        if self.extractor is None:
            return analyse_texts(self.analyzer, texts, relations and self.analyzer.has_parser)
        wholes = [whole_text(head, body)[:MAX_INDEXED_CHARS] for head, body in texts]
        extractions = checked_extractions(self.extractor, wholes)
        return [
            extraction_doc(self.analyzer.nlp, whole, extraction)
            for whole, extraction in zip(wholes, extractions, strict=True)
        ]

    def index(
        self,
        conn: Connection,
        rows: Sequence[tuple[int, MemoryItem]],
        *,
        relations: bool = False,
        docs: Sequence[Doc] | None = None,
        given_entities: Mapping[int, Sequence[str]] | None = None,
        head_chars: Mapping[int, int] | None = None,
    ) -> list[IndexedMemory]:
        """Index saved rows in the caller's write transaction.

        ``rows`` are ``(text_id, item)``: a stored text and an item showing it all (its
        content, owner, time and metadata are read). ``given_entities`` (text id -> names)
        replaces extraction for those texts: the names are linked where they occur in the
        text (or to the whole text when they do not). ``head_chars`` (text id -> length of
        its head and the space after it) marks the mentions of a text's head.
        """
        if not rows:
            return []
        if docs is None:
            docs = self.analyse([item for _, item in rows], relations)
        with self._lock:
            before, after = self.db.bump_generation(conn)
            results: list[IndexedMemory] = []
            touched: set[str] = set()
            self._writes.start()
            for (text_id, item), doc in zip(rows, docs, strict=True):
                tenant = item.user_id or ""
                touched.add(tenant)
                state = self._views.current(conn, tenant, before)
                given = (given_entities or {}).get(text_id)
                self._pending.text_ids.add(text_id)
                head = (head_chars or {}).get(text_id, 0)
                seen = event_stamp(item.timestamp)
                ctx = TextContext(conn, state, tenant, text_id, seen, self._writes)
                results.append(self._index_one(ctx, item, doc, relations, given, head))
            merges = self._pending.merges
            if merges or not self._writes.deferring:  # merges read the tables
                self._writes.flush(conn)
            for tenant, keep, merge in merges:
                state = self._tenants.get(tenant) or self._views.load(conn, tenant, before)
                keep_now, merge_now = (state.graph.alias_keys.get(k) for k in (keep, merge))
                if (
                    keep_now
                    and merge_now
                    and may_merge(state.graph, keep_now, merge_now)
                    and shortens_only(state.graph, merge_now, keep_now)
                ):
                    self._merge_rows(conn, tenant, state, keep_now, merge_now)
            self._views.track_transaction(touched, before, after)
            return results

    @contextmanager
    def deferred_writes(self, conn: Connection) -> Iterator[None]:
        """Within this block, :meth:`index` keeps the rows it would write (mentions,
        relations, evidence, label and timestamp updates) pending, and they are written in
        one batch when the block ends, or earlier, before anything reads the graph tables
        (deleting memories, merging, adding a relation by hand, rebuilding a view).

        The tables end up exactly as with one write per :meth:`index` call: nothing between
        two flushes reads these rows but the index itself, which counts the pending ones
        (label votes, the next relation id). Use it inside the write transaction ``conn``
        belongs to; if the block raises, the pending rows are dropped with the transaction.
        Nested blocks join the outer one.

        Example:
            >>> from graphmem.store.database import Database
            >>> from graphmem.store.text_rows import insert_memories
            >>> db = Database(); index = EntityIndex(db)
            >>> with db.write() as conn, index.deferred_writes(conn):
            ...     for text in ("Alice Johnson met Bob Stone.", "Bob Stone met Carol Diaz."):
            ...         [row] = insert_memories(conn, [(MemoryItem(text), "n", None)])
            ...         _ = index.index(conn, [(row.text_id, MemoryItem(text))])
            >>> sorted(index.graph("").neighbors("Bob Stone"))
            ['Alice Johnson', 'Carol Diaz']
        """
        with self._lock, self._writes.deferred(conn):
            yield

    # ------------------------------------------------------------------ support
    def forget(self, conn: Connection, tenants: set[str]) -> None:
        """After memory rows were deleted: drop what lost its support, refresh the views.

        Deleting a row cascades to its mentions and evidence; relations left without evidence
        and entities left without mentions or relations are deleted here.
        """
        self._support.forget(conn, tenants)

    def delete_memories(self, conn: Connection, rows: Sequence[StoredMemory]) -> int:
        """Delete tier items; the texts no item shows any more go with their mentions and
        evidence, and what lost all its support goes too. The graph views are updated in
        place (no rebuild)."""
        return self._support.delete_memories(conn, rows)

    def replace_text(
        self,
        conn: Connection,
        row: StoredMemory,
        new: MemoryItem,
        *,
        index: bool,
        relations: bool,
    ) -> StoredMemory:
        """Give an item whose content (or owner) changed its new text, re-extracted when
        ``index``; returns its row.

        An item that shares its text with others (a task result the facade stores in several
        tiers) gets a text of its own; the shared one stays as it was for the others.
        """
        row = self._support.replace_text(conn, row, new)
        if index:
            self.index(conn, [(row.text_id, new)], relations=relations)
        return row

    def names_in_text(self, conn: Connection, text_id: int) -> list[str]:
        """The names of the entities a stored text mentions, in the order it names them."""
        self._flush_deferred(conn)
        return derived_rows.entity_names_of_text(conn, text_id)

    def _index_one(
        self,
        ctx: TextContext,
        item: MemoryItem,
        doc: Doc,
        relations: bool,
        given: Sequence[str] | None = None,
        head_chars: int = 0,
    ) -> IndexedMemory:
        pinned = self._relabelled.get(ctx.tenant, {})
        way = IndexingWay(relations, self._declared, pinned, self._typed_relations)
        return index_text(ctx, item, doc, way, given, head_chars)

    def _typed_relations(self) -> tuple[RelationSource, PredicateCatalogue] | None:
        """The relation source and what its predicates mean (None: no parser)."""
        source = self.relation_source
        if source is None:
            return None
        predicates = self.predicates
        assert predicates is not None  # there is a relation source
        return source, predicates
