"""The entity index: turns saved memories into entities, mentions and relations.

For each memory it finds entity mentions (:mod:`graphmem.extract.entities`), resolves them to
the tenant's entities (canonical key, known aliases, a lone first or last name to a unique full
PERSON name, a lone first word of an organisation's name to the unique ORG it opens), links
entities that share a sentence or a memory (``co_occurs``), adds typed relations from the
dependency rules and the learned model when asked, and writes it all in the caller's
transaction. The tenant's :class:`KnowledgeGraph` view is updated once the transaction
commits; a view whose generation differs from the database's (another process wrote) is rebuilt
from the tables.

Example:
    >>> from graphmem.store.database import Database
    >>> from graphmem.items import MemoryItem
    >>> db = Database(); index = EntityIndex(db)
    >>> item = MemoryItem("Alice Johnson met Bob Stone in Paris.")
    >>> with db.write() as conn:
    ...     [row] = db.insert_memories(conn, [(item, "n", None)])
    ...     _ = index.index(conn, [(row.text_id, item)])
    >>> sorted(index.graph("").neighbors("Alice Johnson"))
    ['Bob Stone', 'Paris']
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..errors import EntityNotFound, InvalidArgumentError, InvalidArgumentTypeError
from ..extract.entities import (
    AliasMatcher,
    Mention,
    acronym_definitions,
    extracted_mentions,
    extraction_doc,
    extraction_of,
    find_mentions,
    relation_spans,
)
from ..extract.entity_patterns import (
    DeclaredNames,
    PatternSource,
    check_entity_label,
    read_entity_patterns,
    try_entity_patterns,
    usable_patterns,
)
from ..extract.entity_types import label_weight, place_kind
from ..extract.extractor import Extractor, checked_extractions
from ..extract.known_names import KnownNames
from ..extract.normalize import (
    PLACE_LABELS,
    UNKNOWN_LABEL,
    canonical_key,
    may_be_one_entity,
    may_shorten,
    name_text,
    why_not_one_entity,
)
from ..extract.pipeline import Analyzer, get_analyzer, named_analyzer
from ..extract.texts import analyse_texts, whole_text
from ..graph.knowledge_graph import CO_OCCURS, Edge, KnowledgeGraph
from ..items import MemoryItem, event_stamp, utc_now
from ..store import Connection, derived_rows, graph_rows
from ..store.database import Database, MemoryRow
from .recompute import recompute_derived
from .sql_graph import SQLGraph

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span

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

#: Entities are looked for in the first this-many characters of a memory (all of it is stored
#: and searchable); analysing megabytes of text on every save would stall the caller.
MAX_INDEXED_CHARS = 200_000
#: Entities of one sentence are linked pairwise, each to the next this-many of the sentence
#: (every pair, unless the sentence lists more names): a list of 200 names would otherwise
#: add 19,900 edges that say nothing about each pair.
SENTENCE_LINK_WINDOW = 32
#: Entities of one memory but of no common sentence are linked (weaker) among the memory's
#: this-many most mentioned entities.
MAX_MEMORY_LINKED_ENTITIES = 12
#: The evidence rule of relations the user's extractor found.
EXTRACTOR_RULE = "extractor"
#: With ``graph_cache="auto"``, tenants with more entities than this are queried in SQL.
SQL_GRAPH_THRESHOLD = 50_000
#: Where relationship queries (``neighbors``, ``paths``) run: the in-process NetworkX view,
#: recursive SQL (:class:`~graphmem.index.sql_graph.SQLGraph`), or SQL for large tenants.
GraphCache = Literal["memory", "sql", "auto"]
#: After these words a lone name NER calls a place stays a place ("lived in Berlin", "met at
#: Berlin"). "From", "to" and "near" come before people too ("a letter from Ayala", "a monument
#: to Piłsudski").
_PLACE_PREPOSITIONS = frozenset({"in", "at", "into"})
_CO_SENTENCE = ("co_sentence", 1.0)
_CO_MEMORY = ("co_memory", 0.5)


def _may_merge(kg: KnowledgeGraph, a: str, b: str) -> bool:
    """Whether the entities of node keys ``a`` and ``b`` (different) may become one."""
    nodes = kg.graph.nodes
    return a != b and may_be_one_entity(nodes[a]["label"], a, nodes[b]["label"], b)


def _shortens_only(kg: KnowledgeGraph, short: str, full: str) -> bool:
    """Whether the entity keyed by the lone word ``short`` may be a short name of the entity
    ``full`` and of no other (:func:`~graphmem.extract.normalize.may_shorten`); True when
    ``short`` is no word of ``full`` (an acronym a definition joins is no short name)."""
    if short not in full.split():
        return True
    nodes = kg.graph.nodes
    name, label = nodes[short]["name"], nodes[short]["label"]
    shortened = {
        node
        for node in kg.name_words.get(short, ())
        if node != short and node in nodes and may_shorten(name, label, node, nodes[node]["label"])
    }
    return shortened == {full}


class RelationSource(Protocol):
    """What the index needs from a typed-relation extractor."""

    def extract(
        self, doc: Doc, entities: Sequence[Span] | None = None, speaker: Span | None = None
    ) -> Sequence[Any]: ...

    def functional_predicates(self) -> frozenset[str]: ...

    def ended_by(
        self,
        predicate: str,
        obj: str,
        open_relations: Iterable[tuple[str, str]],
        ends: bool = False,
    ) -> Sequence[tuple[str, str]]: ...


@dataclass
class IndexedMemory:
    """What indexing found in one text: entity display names, in text order."""

    text_id: int
    entity_names: list[str] = field(default_factory=list)
    #: Entity keys in text order: all of them, and those of the text's body only.
    keys: list[str] = field(default_factory=list)
    body_keys: list[str] = field(default_factory=list)


#: Relation columns that change after insertion; the view holds their current values.
_RELATION_STATE = ("confidence", "first_seen", "last_seen", "valid_from", "valid_to", "support")


@dataclass
class _PendingWrites:
    """Row changes collected while indexing a batch, written with one statement per kind.

    New relations take the ids SQLite would give them (:func:`graph_rows.next_relation_id`),
    and relations are written with their final values from the view. Mentions wait here too,
    so label votes count the stored mentions (read once per entity and batch) plus the pending
    ones: ``label -> (count, first)``, ``first`` ordering labels by the mention that brought
    them (stored ones before pending ones).
    """

    mentions: list[dict[str, Any]] = field(default_factory=list)
    #: ``(tenant, keep key, merge key)``: entities a text showed to be one ("International
    #: Business Machines (IBM)" when both were known apart), merged once the batch is written.
    merges: list[tuple[str, str, str]] = field(default_factory=list)
    new_relations: dict[int, tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=dict)
    relation_updates: dict[int, dict[str, Any]] = field(default_factory=dict)
    next_relation_id: int = 0
    evidence: list[dict[str, Any]] = field(default_factory=list)
    #: Entities whose mention count or first/last_seen changed -> their view data (written as is).
    entity_touches: dict[int, dict[str, Any]] = field(default_factory=dict)
    entity_labels: dict[int, str] = field(default_factory=dict)
    text_labels: dict[int, str] = field(default_factory=dict)
    stored_votes: dict[int, dict[str, tuple[float, tuple[int, int]]]] = field(default_factory=dict)
    pending_votes: dict[int, dict[str, tuple[float, tuple[int, int]]]] = field(default_factory=dict)
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

    def add_relation(self, conn: Connection, row: dict[str, Any], state: dict[str, Any]) -> int:
        """Queue a new relation (``row``: its fixed columns; ``state``: its view data)."""
        if not self.next_relation_id:
            self.next_relation_id = graph_rows.next_relation_id(conn)
        relation_id = self.next_relation_id
        self.next_relation_id += 1
        self.new_relations[relation_id] = (row, state)
        self.entities_in_use.update((row["subject_id"], row["object_id"]))
        return relation_id

    def flush(self, conn: Connection) -> None:
        graph_rows.write_batch(
            conn,
            new_mentions=self.mentions,
            new_relations=[
                {"id": rid, **row} | {k: state[k] for k in _RELATION_STATE}
                for rid, (row, state) in self.new_relations.items()
            ],
            relation_updates=[
                {"rid": rid} | {k: state[k] for k in _RELATION_STATE}
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


@dataclass
class _TenantState:
    graph: KnowledgeGraph
    matcher: AliasMatcher
    generation: int
    #: Stored label votes of entities (as :attr:`_PendingWrites.stored_votes`), kept by the
    #: index across batches so a save does not count a busy entity's mentions again; a path
    #: that changes mentions otherwise drops the state, and with it these.
    votes: dict[int, dict[str, tuple[float, tuple[int, int]]]] = field(default_factory=dict)


class EntityIndex:
    """Entity extraction, resolution and graph maintenance over one :class:`Database`."""

    def __init__(
        self,
        db: Database,
        analyzer: Analyzer | None = None,
        relation_source: RelationSource | None = None,
        graph_cache: GraphCache = "memory",
    ) -> None:
        if graph_cache not in ("memory", "sql", "auto"):
            raise InvalidArgumentError(
                f"graph_cache must be 'memory', 'sql' or 'auto', got {graph_cache!r}"
            )
        self.graph_cache: GraphCache = graph_cache
        self.db = db
        self._analyzer = analyzer
        self._relation_source = relation_source
        self._relation_source_loaded = relation_source is not None
        self._relation_source_given = relation_source is not None
        self._tenants: dict[str, _TenantState] = {}
        self._pending = _PendingWrites()
        #: Inside :meth:`deferred_writes`: :meth:`index` leaves its rows pending.
        self._deferring = False
        #: While deferring: the largest stored mention and evidence ids (None: not read).
        self._newest_ids: tuple[int | None, int | None] | None = None
        #: Past every stored mention id: the first-mention order of votes kept after a flush.
        self._vote_serial = 1 << 62
        self._lock = threading.RLock()
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
        return self._relation_source

    # ------------------------------------------------------------------ graph views
    def graph(self, tenant: str) -> KnowledgeGraph:
        """The tenant's graph, rebuilt from the tables when another writer changed them."""
        # Lock order everywhere: the database's lock first, then this index's. Writers hold
        # the database lock while they update the views; the reverse order deadlocked.
        with self.db.read() as conn, self._lock:
            generation = self.db.generation(conn)
            state = self._tenants.get(tenant)
            # Views only move forward: one newer than this read's snapshot (written by this
            # process since the read began) stays.
            if state is None or state.generation < generation:
                state = self._load(conn, tenant, generation)
            return state.graph

    def queries(self, tenant: str) -> KnowledgeGraph | SQLGraph:
        """What answers the tenant's relationship queries, per :attr:`graph_cache`."""
        if self.graph_cache == "memory":
            return self.graph(tenant)
        sql = SQLGraph(self.db, tenant)
        if self.graph_cache == "auto" and tenant not in self._tenants:
            if len(sql) <= SQL_GRAPH_THRESHOLD:
                return self.graph(tenant)
        elif self.graph_cache == "auto":
            return self.graph(tenant)
        return sql

    def _load(self, conn: Connection, tenant: str, generation: int) -> _TenantState:
        self._flush_deferred(conn)  # the view is read from the tables
        self._read_declarations(conn)
        ents = graph_rows.load_entities(conn, tenant)
        kg = KnowledgeGraph(self._evidence_loader)
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
                self._flush_deferred(conn)
                yield from graph_rows.load_relations(conn, tenant, key_of)

        def neighbours(key: str, n: int) -> list[tuple[int, str]]:
            with self.db.read() as conn:
                self._flush_deferred(conn)
                return graph_rows.strongest_links(conn, kg.nodes[key]["entity_id"], n)

        # The edges load when something needs them (writes, relationship queries); a
        # context's expansion reads its entities' strongest links from SQL meanwhile.
        kg.load_edges_with(edges, neighbours)
        state = _TenantState(kg, matcher, generation)
        self._tenants[tenant] = state
        return state

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
            before, after, state = self._writable_state(conn, tenant)
            self._pending = _PendingWrites()
            keys = []
            for given, label in zip((subject, obj), checked, strict=True):
                name = name_text(given)
                key = self._resolve_named(state.graph, name, label)
                if key is None:
                    key = canonical_key(name)
                    label = label or UNKNOWN_LABEL
                    entity_id = graph_rows.insert_entity(conn, tenant, key, name, label, seen)
                    state.graph.add_entity(
                        key,
                        name=name,
                        label=label,
                        first_seen=seen,
                        last_seen=seen,
                        entity_id=entity_id,
                    )
                    state.matcher.add(name.strip(), label)
                elif seen < state.graph.graph.nodes[key]["first_seen"]:  # known since then
                    node = state.graph.graph.nodes[key]
                    node["first_seen"] = seen
                    self._pending.entity_touches[node["entity_id"]] = node
                keys.append(key)
            data, _ = self._link(
                conn,
                state,
                tenant,
                keys[0],
                key_pred,
                keys[1],
                confidence,
                seen,
                (None, 0, 0, "manual"),
            )
            if valid[0] is not None:
                data["valid_from"] = seen
            if valid[1] is not None:
                data["valid_to"] = event_stamp(valid[1])
            self._flush(conn)
            self._track_transaction({tenant}, before, after)
            data = state.graph.graph.get_edge_data(keys[0], keys[1], key=key_pred)
            return state.graph._edge(keys[0], keys[1], data)

    @staticmethod
    def _resolve_named(kg: KnowledgeGraph, name: str, label: str | None) -> str | None:
        """The entity a name given by hand stands for (None: a new one), by the one label rule."""
        if label is None:
            return kg.resolve(name)
        own = canonical_key(name)
        key = kg.alias_keys.get(own)
        if key is None or key not in kg.graph:
            return kg.of_short_name(name, label)
        node = kg.graph.nodes[key]
        reason = why_not_one_entity(label, own, node["label"], key)
        if reason is not None:
            raise InvalidArgumentError(
                f"{name!r} ({label}) cannot be {node['name']!r} ({node['label']}): {reason}"
            )
        return key

    def _writable_state(self, conn: Connection, tenant: str) -> tuple[int, int, _TenantState]:
        """Count a graph change in this transaction and return the tenant's up-to-date view."""
        before, after = self.db.bump_generation(conn)
        state = self._tenants.get(tenant)
        if state is None or state.generation != before:
            state = self._load(conn, tenant, before)
        return before, after, state

    def merge(self, tenant: str, keep: str, merge: str) -> int:
        """Merge entity ``merge`` into ``keep``: aliases, mentions and relations move over.

        Logged in the ``merges`` table with a snapshot; returns the id :meth:`unmerge` takes.
        """
        with self.db.write() as conn, self._lock:
            self._flush_deferred(conn)
            before, after, state = self._writable_state(conn, tenant)
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
            self._track_transaction({tenant}, before, after)
            return merge_id

    def _merge_rows(
        self,
        conn: Connection,
        tenant: str,
        state: _TenantState,
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
                self._recompute_lost(conn, {tenant}, both, [])
            self._tenants.pop(tenant, None)
            self._track_transaction({tenant}, before, after)

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
            self._track_transaction(touched, before, after)
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
            self._track_transaction(set(), before, after)
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
            before, after, state = self._writable_state(conn, tenant)
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
            self._track_transaction({tenant}, before, after)
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

    def _evidence_loader(self, relation_ids: Sequence[int]) -> dict[int, list[Any]]:
        with self.db.read() as conn:
            return dict(graph_rows.evidence_for(conn, relation_ids))

    def tier_counts(self, tenant: str, namespace: str, keys: Sequence[str]) -> dict[str, int]:
        """Entity key -> how many items of ``namespace`` mention it (keys with none left
        out), kept in the tenant's graph view: counted in SQL once per key, then kept up to
        date by :meth:`count_new_items` and dropped when items of the tier are deleted."""
        with self.db.read() as conn, self._lock:
            kg = self.graph(tenant)
            missing = [key for key in keys if (namespace, key) not in kg.tier_counts]
            if missing:
                self._flush_deferred(conn)
                found = graph_rows.tier_mention_counts(conn, tenant, namespace, missing)
                for key in missing:
                    kg.tier_counts[(namespace, key)] = found.get(key, 0)
            counts = {key: kg.tier_counts[(namespace, key)] for key in keys}
        return {key: n for key, n in counts.items() if n}

    def count_new_items(self, tenant: str, namespace: str, keys: Sequence[str]) -> None:
        """One more item of ``namespace`` mentions each of ``keys`` (in the counts already kept)."""
        state = self._tenants.get(tenant)
        if state is None:
            return
        counts = state.graph.tier_counts
        for key in dict.fromkeys(keys):
            if (namespace, key) in counts:
                counts[(namespace, key)] += 1

    def count_texts(self, tenant: str, delta: int) -> None:
        """``delta`` texts more (or fewer) for ``tenant`` (in its view, when loaded)."""
        state = self._tenants.get(tenant)
        if state is not None:
            state.graph.texts += delta

    def _forget_tier_counts(self, tenant: str, namespaces: set[str]) -> None:
        state = self._tenants.get(tenant)
        if state is not None and state.graph.tier_counts:
            counts = state.graph.tier_counts
            for entry in [e for e in counts if e[0] in namespaces]:
                del counts[entry]

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
            if not self._deferring:
                self._pending = _PendingWrites()
            for (text_id, item), doc in zip(rows, docs, strict=True):
                tenant = item.user_id or ""
                touched.add(tenant)
                state = self._tenants.get(tenant)
                if state is None or state.generation != before:
                    state = self._load(conn, tenant, before)
                given = (given_entities or {}).get(text_id)
                self._pending.text_ids.add(text_id)
                head = (head_chars or {}).get(text_id, 0)
                results.append(
                    self._index_one(conn, state, tenant, text_id, item, doc, relations, given, head)
                )
            merges = self._pending.merges
            if merges or not self._deferring:  # merges read the tables
                self._flush(conn)
            for tenant, keep, merge in merges:
                state = self._tenants.get(tenant) or self._load(conn, tenant, before)
                keep_now, merge_now = (state.graph.alias_keys.get(k) for k in (keep, merge))
                if (
                    keep_now
                    and merge_now
                    and _may_merge(state.graph, keep_now, merge_now)
                    and _shortens_only(state.graph, merge_now, keep_now)
                ):
                    self._merge_rows(conn, tenant, state, keep_now, merge_now)
            self._track_transaction(touched, before, after)
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
            >>> db = Database(); index = EntityIndex(db)
            >>> with db.write() as conn, index.deferred_writes(conn):
            ...     for text in ("Alice Johnson met Bob Stone.", "Bob Stone met Carol Diaz."):
            ...         [row] = db.insert_memories(conn, [(MemoryItem(text), "n", None)])
            ...         _ = index.index(conn, [(row.text_id, MemoryItem(text))])
            >>> sorted(index.graph("").neighbors("Bob Stone"))
            ['Alice Johnson', 'Carol Diaz']
        """
        with self._lock:
            if self._deferring:
                yield
                return
            self._flush(conn)
            self._deferring = True
            try:
                yield
            except BaseException:
                self._pending = _PendingWrites()  # the transaction rolls back
                self._newest_ids = None
                raise
            else:
                self._flush(conn)
            finally:
                self._deferring = False

    def _flush(self, conn: Connection) -> None:
        """Write the pending rows and start a new batch."""
        if self._pending:
            self._pending.flush(conn)
            self._keep_votes(self._pending)
        self._pending = _PendingWrites()
        self._newest_ids = None

    def _flush_deferred(self, conn: Connection) -> None:
        """Before reading or changing the graph tables: write what a deferral holds."""
        if self._deferring:
            self._flush(conn)

    def forget(self, conn: Connection, tenants: set[str]) -> None:
        """After memory rows were deleted: drop what lost its support, refresh the views.

        Deleting a row cascades to its mentions and evidence; relations left without evidence
        and entities left without mentions or relations are deleted here.
        """
        with self._lock:
            self._flush_deferred(conn)
            before, after = self.db.bump_generation(conn)
            for tenant in sorted(tenants):
                graph_rows.prune_unsupported(conn, tenant)
                self._tenants.pop(tenant, None)
            self._track_transaction(set(tenants), before, after)

    def delete_memories(self, conn: Connection, rows: Sequence[MemoryRow]) -> int:
        """Delete tier items; the texts no item shows any more go with their mentions and
        evidence, and what lost all its support goes too. The graph views are updated in
        place (no rebuild)."""
        with self._lock:
            for tenant in {r.tenant for r in rows}:
                self._forget_tier_counts(tenant, {r.namespace for r in rows if r.tenant == tenant})
            deleted, orphans = self.db.delete_items(conn, [r.seq for r in rows])
            if not orphans:
                return deleted
            for tenant, n in graph_rows.texts_by_tenant(conn, orphans).items():
                self.count_texts(tenant, -n)
            self._flush_deferred(conn)  # what is derived is read again from the tables
            lost = graph_rows.index_rows_of(conn, orphans)
            if not lost.mentions and not lost.evidence:
                self.db.delete_texts(conn, orphans)
                return deleted
            ends = derived_rows.relation_ends(conn, lost.evidence)
            self.db.delete_texts(conn, orphans)
            tenants = {t for t, _, _ in lost.mentions.values()} | {
                r[0] for r in lost.evidence.values()
            }
            self._recompute_lost(conn, tenants, {*lost.mentions, *ends}, lost.evidence)
            return deleted

    def _recompute_lost(
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
                source=self.relation_source,
                preferred=None,  # declared types win by their votes' weight
                pinned=self._relabelled.get(tenant, {}),
            )
            derived_rows.forget_merges(conn, tenant)
            self._tenants.pop(tenant, None)
        self._track_transaction(tenants, before, after)

    def replace_text(
        self,
        conn: Connection,
        row: MemoryRow,
        new: MemoryItem,
        *,
        index: bool,
        relations: bool,
    ) -> MemoryRow:
        """Give an item whose content (or owner) changed its new text, re-extracted when
        ``index``; returns its row.

        An item that shares its text with others (a task result the facade stores in several
        tiers) gets a text of its own; the shared one stays as it was for the others.
        """
        self._flush_deferred(conn)
        tenant = new.user_id or ""
        for owner in {row.tenant, tenant}:
            self._forget_tier_counts(owner, {row.namespace})
        if self.db.text_is_shared(conn, row.text_id):
            [text_id] = self.db.insert_texts(conn, [(tenant, "", new.content)])
            self.count_texts(tenant, 1)
            self.db.move_item(conn, row.seq, text_id)
            row = MemoryRow(row.seq, row.namespace, tenant, text_id)
        else:
            lost = graph_rows.index_rows_of(conn, [row.text_id])
            ends = derived_rows.relation_ends(conn, lost.evidence)
            graph_rows.delete_index_rows(conn, row.text_id)
            self.db.rewrite_text(conn, row.text_id, tenant, new.content)
            self._recompute_lost(conn, {row.tenant, tenant}, {*lost.mentions, *ends}, lost.evidence)
        if index:
            self.index(conn, [(row.text_id, new)], relations=relations)
        return row

    def names_in_text(self, conn: Connection, text_id: int) -> list[str]:
        """The names of the entities a stored text mentions, in the order it names them."""
        self._flush_deferred(conn)
        return derived_rows.entity_names_of_text(conn, text_id)

    def _track_transaction(self, touched: set[str], before: int, after: int) -> None:
        """Keep views valid across this transaction's commit, or drop the ones it changed."""

        def committed() -> None:
            with self._lock:
                for state in self._tenants.values():
                    if state.generation == before:
                        state.generation = after

        def rolled_back() -> None:
            with self._lock:
                for tenant in touched:
                    self._tenants.pop(tenant, None)

        self.db.after_commit(committed)
        self.db.after_rollback(rolled_back)

    def _index_one(
        self,
        conn: Connection,
        state: _TenantState,
        tenant: str,
        text_id: int,
        item: MemoryItem,
        doc: Doc,
        relations: bool,
        given: Sequence[str] | None = None,
        head_chars: int = 0,
    ) -> IndexedMemory:
        seen = event_stamp(item.timestamp)
        extracted = extraction_of(doc)
        if given is not None:
            mentions = self._given_mentions(state, doc, given)
        elif extracted is not None:
            mentions = extracted_mentions(doc, extracted)
        else:
            mentions = find_mentions(doc, state.matcher, declared=self._declared)
        if head_chars:
            mentions = _task_names_kept(mentions, head_chars, state.graph.alias_keys)
        mentions = self._with_author(item, doc, mentions)
        mentions = self._with_subject(state, item, doc, mentions)
        labels = sorted({ent.label_ for ent in doc.ents})
        if labels:
            self._pending.text_labels[text_id] = ",".join(labels)
        entity_ids: dict[str, int] = {}
        mention_rows: list[dict[str, Any]] = []
        keys_in_order: list[str] = []
        span_keys: dict[tuple[int, int], str] = {}
        defined = acronym_definitions(mentions)
        for position, mention in enumerate(mentions):
            name = defined.get(position)
            same_as = (
                span_keys[(mentions[name].start, mentions[name].end)] if name is not None else None
            )
            key, label = self._resolve(
                conn, state, tenant, mention, seen, same_as, item.conversation_id
            )
            if same_as is not None and key != same_as:  # both were known apart
                self._pending.merges.append((tenant, same_as, key))
            entity_ids[key] = state.graph.graph.nodes[key]["entity_id"]
            span_keys[(mention.start, mention.end)] = key
            mention_rows.append(
                {
                    "entity_id": entity_ids[key],
                    "text_id": text_id,
                    "start": mention.start,
                    "end": mention.end,
                    "surface": mention.surface,
                    "label": label,
                    "label_source": mention.source if label == mention.label else "frame",
                    "in_head": int(mention.end <= head_chars and mention.end > 0),
                }
            )
            if key not in keys_in_order:
                keys_in_order.append(key)
        self._pending.add_mentions(mention_rows, tenant)
        nodes = state.graph.graph.nodes
        # A mention with the entity's current label cannot change the vote: only count
        # votes when some mention disagrees, or the label was set by hand (an entity made
        # anew under a relabelled name, as re-analysis does, takes it at once).
        pinned = self._relabelled.get(tenant, {})
        disputed = {
            key: entity_ids[key]
            for key in keys_in_order
            if key in pinned
            or any(
                m["label"] != nodes[key]["label"]
                for m in mention_rows
                if m["entity_id"] == entity_ids[key]
            )
        }
        for key, label in self._vote(conn, tenant, disputed).items():
            nodes[key]["label"] = label
        for key in keys_in_order:
            node = nodes[key]
            node["mentions"] += sum(1 for m in mention_rows if m["entity_id"] == entity_ids[key])
            # A text saved later may be older (history recorded after the fact).
            node["first_seen"] = min(node["first_seen"], seen)
            node["last_seen"] = max(node["last_seen"], seen)
            self._pending.entity_touches[entity_ids[key]] = node
        self._link_cooccurring(conn, state, tenant, text_id, mentions, span_keys, seen)
        source = self.relation_source if relations and extracted is None else None
        if relations and extracted is not None and given is None:
            for relation in extracted.relations:
                ends = [
                    span_keys.get((entity.start, entity.end))
                    for entity in (relation.subject, relation.object)
                ]
                if ends[0] is None or ends[1] is None or ends[0] == ends[1]:
                    continue
                start, end = relation.evidence or (0, len(doc.text))
                self._link(
                    conn,
                    state,
                    tenant,
                    ends[0],
                    relation.predicate,
                    ends[1],
                    relation.confidence,
                    seen,
                    (text_id, start, end, EXTRACTOR_RULE),
                )
        if source is not None and doc.has_annotation("DEP"):
            self._add_typed_relations(
                conn, state, tenant, text_id, doc, mentions, span_keys, seen, source, _author(item)
            )
        body_keys = list(
            dict.fromkeys(
                span_keys[(m["start"], m["end"])] for m in mention_rows if not m["in_head"]
            )
        )
        return IndexedMemory(
            text_id, [state.graph.name_of(k) for k in keys_in_order], keys_in_order, body_keys
        )

    def _with_author(self, item: MemoryItem, doc: Doc, mentions: list[Mention]) -> list[Mention]:
        """Link a memory to the person who said it (``speaker``/``author`` metadata)."""
        author = _author(item)
        if author is None:
            return mentions
        key = canonical_key(author)
        if not key or any(m.key == key for m in mentions):
            return mentions
        return [Mention(author, "PERSON", key, 0, 0, 0, len(doc.text), doc[:]), *mentions]

    @staticmethod
    def _with_subject(
        state: _TenantState, item: MemoryItem, doc: Doc, mentions: list[Mention]
    ) -> list[Mention]:
        """Link a memory to the entity it is about (``about`` metadata; a new entity gets the
        label ``about_label``): an MCP observation need not name its entity."""
        about = item.metadata.get("about")
        if not isinstance(about, str):
            return mentions
        key = canonical_key(about)
        if not key or any(m.key == key for m in mentions):
            return mentions
        known = state.graph.resolve(about)
        label = item.metadata.get("about_label")
        if known is not None:
            label = state.graph.graph.nodes[known]["label"]
        elif not isinstance(label, str) or not label:
            label = UNKNOWN_LABEL
        pos = len(doc.text) + 1  # a zero-width span of its own (the author's is at 0)
        return [*mentions, Mention(about.strip(), label, key, pos, pos, 0, len(doc.text), doc[:])]

    def _given_mentions(self, state: _TenantState, doc: Doc, names: Sequence[str]) -> list[Mention]:
        """Mentions of caller-supplied entity names (Calute's ``entities=`` argument)."""
        matcher = AliasMatcher()
        for name in names:
            known = state.graph.resolve(name)
            matcher.add(name, state.graph.graph.nodes[known]["label"] if known else UNKNOWN_LABEL)
        found = find_mentions(doc, matcher, include_ner=False)
        found_keys = {m.key for m in found}
        whole = doc[:]
        for name in names:
            key = canonical_key(name)
            if key and key not in found_keys:
                found_keys.add(key)
                label = matcher.labels.get(name, UNKNOWN_LABEL)
                # A zero-width span of its own past the text: spans key the mentions, so
                # two names absent from the text must not share one (they were not linked).
                pos = len(doc.text) + len(found)
                found.append(Mention(name, label, key, pos, pos, 0, len(doc.text), whole))
        return found

    def _keep_votes(self, pending: _PendingWrites) -> None:
        """After ``pending`` was written: its entities' stored votes now include its
        mentions; the tenant views keep them. A pending label's first mention (its place in
        the batch) becomes an id past every stored one, in the order the rows got theirs."""
        serial = self._vote_serial
        for entity_id, tenant in pending.vote_tenants.items():
            state = self._tenants.get(tenant)
            stored = pending.stored_votes.get(entity_id)
            if state is None or (stored is None and entity_id not in state.votes):
                continue
            votes = dict(stored if stored is not None else state.votes[entity_id])
            for label, (n, (_, position)) in pending.pending_votes.get(entity_id, {}).items():
                count, first = votes.get(label, (0, (0, serial + position)))
                votes[label] = (count + n, first)
            state.votes[entity_id] = votes
        self._vote_serial = serial + len(pending.mentions)

    def _vote(self, conn: Connection, tenant: str, entity_ids: dict[str, int]) -> dict[str, str]:
        """Each entity's label becomes the vote of its mentions, stored and pending (a
        declared type winning), or the label :meth:`relabel` gave it."""
        pending = self._pending
        state = self._tenants.get(tenant)
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
            pinned = self._relabelled.get(tenant, {}).get(key)
            if pinned is not None:
                out[key] = pending.entity_labels[entity_id] = pinned
            elif votes:
                out[key] = pending.entity_labels[entity_id] = graph_rows.pick_label(votes)
        return out

    def _resolve(
        self,
        conn: Connection,
        state: _TenantState,
        tenant: str,
        mention: Mention,
        seen: str,
        same_as: str | None = None,
        conversation_id: str | None = None,
    ) -> tuple[str, str]:
        """The entity key of ``mention`` and the label its mention row gets; ``same_as``: the
        key of a name it stands for ("IBM" in "International Business Machines (IBM)"), used
        when it has none yet; ``conversation_id``: the memory's conversation."""
        kg = state.graph
        key = kg.alias_keys.get(mention.key)
        if key is not None and key not in kg.graph:  # the entity was forgotten
            del kg.alias_keys[mention.key]
            key = None
        if (
            key is None
            and same_as is not None
            and may_be_one_entity(
                mention.label, mention.key, kg.graph.nodes[same_as]["label"], same_as
            )
        ):
            key = same_as
        if " " not in mention.key and (
            key is None
            or not may_be_one_entity(mention.label, mention.key, kg.graph.nodes[key]["label"], key)
        ):
            # A lone word joins the one entity it may be a short name of: a lone first or
            # last name its full PERSON name (a lone "Berlin" NER calls a person is Leslie
            # Berlin, not the city "Berlin"), "Northwind" the ORG Northwind Systems. One NER
            # calls a place joins a person only when the memory or conversation names them.
            if mention.label not in PLACE_LABELS:
                key = kg.of_short_name(mention.surface, mention.label) or key
            else:  # no short name by its label alone (one scan of the people, not two)
                person = self._person_named_nearby(conn, kg, tenant, mention, conversation_id)
                if person is not None:
                    # NER mislabelled this mention; the word becomes no alias of the person.
                    return person, "PERSON"
        if key is not None:
            if mention.key not in kg.alias_keys:
                graph_rows.add_alias(
                    conn, tenant, mention.key, mention.surface, kg.graph.nodes[key]["entity_id"]
                )
                kg.alias_keys[mention.key] = key
                kg.graph.nodes[key]["aliases"].append(mention.surface)
                state.matcher.add(mention.surface, kg.graph.nodes[key]["label"])
            return key, mention.label
        entity_id = graph_rows.insert_entity(
            conn, tenant, mention.key, mention.surface, mention.label, seen
        )
        kg.add_entity(
            mention.key,
            name=mention.surface,
            label=mention.label,
            mentions=0,
            first_seen=seen,
            last_seen=seen,
            entity_id=entity_id,
        )
        state.matcher.add(mention.surface, mention.label)
        if mention.label in ("ORG", "PERSON") and " " in mention.key:
            # A lone word known before the full name it now shortens ("Northwind" before
            # Northwind Systems, "Ravi" before Ravi Mehta) is merged into it once the batch
            # is written, like names an acronym definition joins: only when it names no
            # other entity, and by the one label rule (a lone "Sofia" NER called a place
            # stays apart from Sofia Martin).
            words = mention.key.split() if mention.label == "PERSON" else mention.key.split()[:1]
            for word in dict.fromkeys(words):
                short = kg.alias_keys.get(word)
                if short == word and short in kg.graph and _shortens_only(kg, short, mention.key):
                    self._pending.merges.append((tenant, mention.key, short))
        return mention.key, mention.label

    def _person_named_nearby(
        self,
        conn: Connection,
        kg: KnowledgeGraph,
        tenant: str,
        mention: Mention,
        conversation_id: str | None,
    ) -> str | None:
        """The unique person a lone name NER called a place may stand for, when the person's
        full name is written in the same memory or conversation, or the name is no place the
        gazetteer knows, and no word of place (:data:`_PLACE_PREPOSITIONS`) comes before the
        name, else None.

        "Kiarostami" (GPE) in "Kiarostami won the prize." is Abbas Kiarostami after "Abbas
        Kiarostami was born in Tehran." in the same conversation; "Berlin" in "Leslie Berlin
        lived in Berlin." stays the city, and so does every "Berlin" of other conversations;
        "Kenji" (GPE) in a later memory "Kenji answers to Marisol." is the one Kenji Morimoto.
        """
        person = kg.of_short_name(mention.surface, "PERSON")  # people only
        if person is None:
            return None
        doc = mention.span.doc
        start = mention.span.start
        if start > 0 and doc[start - 1].lower_ in _PLACE_PREPOSITIONS:
            return None
        name = kg.graph.nodes[person]["name"]
        if (
            place_kind(mention.key) is None
            or name in doc.text
            or (
                conversation_id is not None
                and graph_rows.conversation_contains(conn, tenant, conversation_id, name)
            )
        ):
            return person
        return None

    def _link(
        self,
        conn: Connection,
        state: _TenantState,
        tenant: str,
        subject: str,
        predicate: str,
        obj: str,
        confidence: float,
        seen: str,
        evidence: tuple[int | None, int, int, str],
    ) -> tuple[dict[str, Any], bool]:
        """Count one more statement of ``subject -predicate-> obj`` made at ``seen``; returns
        the relation's view data (its row's values, written at the flush) and whether it is new.
        """
        g = state.graph.graph
        data = g.get_edge_data(subject, obj, key=predicate)
        created = data is None
        if data is None:
            state.graph.add_edge(
                subject,
                predicate,
                obj,
                support=1,
                confidence=confidence,
                first_seen=seen,
                last_seen=seen,
                valid_from=seen,
            )
            data = g.get_edge_data(subject, obj, key=predicate)
            fixed = {
                "tenant": tenant,
                "subject_id": g.nodes[subject]["entity_id"],
                "predicate": predicate,
                "object_id": g.nodes[obj]["entity_id"],
            }
            data["relation_id"] = self._pending.add_relation(conn, fixed, data)
        else:
            # The view mirrors the tables inside this write transaction, so the new values
            # are computed here and written in one batch (no read-back per relation).
            state.graph.add_support(subject, predicate, obj, 1)
            data["confidence"] = max(data["confidence"], confidence)
            # A text saved later may be older (history recorded after the fact).
            data["first_seen"] = min(data["first_seen"], seen)
            data["last_seen"] = max(data["last_seen"], seen)
            if predicate == CO_OCCURS and data["valid_from"] and seen < data["valid_from"]:
                data["valid_from"] = seen
            self._pending.relation_updates[data["relation_id"]] = data
        relation_id = data["relation_id"]
        text_id, sent_start, sent_end, rule = evidence
        self._pending.relations_with_evidence.add(relation_id)
        self._pending.evidence.append(
            {
                "relation_id": relation_id,
                "text_id": text_id,
                "sent_start": sent_start,
                "sent_end": sent_end,
                "rule": rule,
            }
        )
        return data, created

    def _link_cooccurring(
        self,
        conn: Connection,
        state: _TenantState,
        tenant: str,
        seq: int,
        mentions: Sequence[Mention],
        span_keys: dict[tuple[int, int], str],
        seen: str,
    ) -> None:
        """Link entities of one sentence (``co_sentence``) and, more weakly, the memory's
        main entities that share no sentence (``co_memory``)."""
        first_sentence: dict[str, tuple[int, int]] = {}
        sentences: dict[tuple[int, int], list[str]] = {}
        for m in mentions:
            key = span_keys[(m.start, m.end)]
            first_sentence.setdefault(key, (m.sent_start, m.sent_end))
            in_sentence = sentences.setdefault((m.sent_start, m.sent_end), [])
            if key not in in_sentence:
                in_sentence.append(key)
        links: dict[tuple[str, str], tuple[tuple[str, float], int, int]] = {}
        for (start, end), keys in sorted(sentences.items()):
            for i, a in enumerate(keys):
                for b in keys[i + 1 : i + SENTENCE_LINK_WINDOW]:
                    links.setdefault((min(a, b), max(a, b)), (_CO_SENTENCE, start, end))
        sentence_count = Counter(key for keys in sentences.values() for key in keys)
        order = {key: position for position, key in enumerate(first_sentence)}
        main = sorted(order, key=lambda k: (-sentence_count[k], order[k]))
        for a, b in itertools.combinations(sorted(main[:MAX_MEMORY_LINKED_ENTITIES]), 2):
            if (a, b) not in links:
                start = min(first_sentence[a][0], first_sentence[b][0])
                end = max(first_sentence[a][1], first_sentence[b][1])
                links[(a, b)] = (_CO_MEMORY, start, end)
        for (a, b), ((rule, confidence), start, end) in sorted(links.items()):
            self._link(
                conn, state, tenant, a, CO_OCCURS, b, confidence, seen, (seq, start, end, rule)
            )

    def _add_typed_relations(
        self,
        conn: Connection,
        state: _TenantState,
        tenant: str,
        seq: int,
        doc: Doc,
        mentions: Sequence[Mention],
        span_keys: dict[tuple[int, int], str],
        seen: str,
        source: RelationSource,
        author: str | None,
    ) -> None:
        # Rules check labels: give each span its entity's voted label, not this sentence's
        # NER guess (the small model calls a lone "Alice" an ORG in "Alice joined Acme").
        nodes = state.graph.graph.nodes
        spans, speaker = relation_spans(
            ((m, nodes[span_keys[(m.start, m.end)]]["label"]) for m in mentions),
            speaker_key=canonical_key(author) if author else None,
        )
        functional = source.functional_predicates()
        g = state.graph.graph
        made_here: set[tuple[str, str, str]] = set()
        stated: list[tuple[str, str, str, dict[str, Any], bool]] = []
        for cand in source.extract(doc, spans, speaker=speaker):
            subject = span_keys.get((cand.subject.start_char, cand.subject.end_char))
            obj = span_keys.get((cand.object.start_char, cand.object.end_char))
            if subject is None or obj is None or subject == obj:
                continue
            # What the statement ends (a departure: the job and its roles; "previously worked
            # at": itself) is the source's call, among the relations that held when it was
            # made; relations this same text states end none another.
            held = [
                (key, other)
                for _, other, key, data in g.out_edges(subject, keys=True, data=True)
                if _holds_at(data, seen) and (subject, key, other) not in made_here
            ]
            ended = source.ended_by(cand.predicate, obj, held, ends=cand.ends)
            if cand.predicate in functional and not cand.ends:
                self._close_older_values(conn, state, subject, cand.predicate, obj, seen)
            data, created = self._link(
                conn,
                state,
                tenant,
                subject,
                cand.predicate,
                obj,
                float(cand.confidence),
                seen,
                (seq, cand.sentence.start_char, cand.sentence.end_char, cand.rule),
            )
            if created:
                made_here.add((subject, cand.predicate, obj))
            if not cand.ends:
                stated.append((subject, cand.predicate, obj, data, created))
            for key, other in ended:
                self._close_value(state, subject, key, other, seen)
        # Once all of the text's relations are in (what ends a job ends its roles too):
        for subject, predicate, obj, data, created in stated:
            self._date_backfilled(state, subject, predicate, obj, data, created, seen)

    def _date_backfilled(
        self,
        state: _TenantState,
        subject: str,
        predicate: str,
        obj: str,
        data: dict[str, Any],
        created: bool,
        seen: str,
    ) -> None:
        """Give a relation stated at ``seen`` the interval the subject's later statements
        leave it, when they were saved first (history recorded out of order): a joining saved
        after the departure ends at the departure; a restatement older than the relation's
        start moves the start back, unless a statement in between ended it (one row keeps
        one interval: the latest)."""
        if not created and not (data["valid_from"] and seen < data["valid_from"]):
            return
        source = self.relation_source
        if source is None:
            return
        ends_at = _ended_later(state.graph.graph, source, subject, predicate, obj, seen)
        if created:
            if ends_at is None or (data["valid_to"] is not None and data["valid_to"] <= ends_at):
                return  # nothing later ends it, or this text itself already did
            data["valid_to"] = ends_at
        elif ends_at is None or ends_at >= data["valid_from"]:
            data["valid_from"] = seen
        else:
            return
        self._pending.relation_updates[data["relation_id"]] = data

    def _close_value(
        self, state: _TenantState, subject: str, predicate: str, obj: str, seen: str
    ) -> None:
        """End ``subject -predicate-> obj`` at ``seen`` if it held then ("Bob left Initech"
        ends his works_at), unless it was stated again since (ending it at ``seen`` when a
        later statement, saved first, ended it later)."""
        data = state.graph.graph.get_edge_data(subject, obj, key=predicate)
        if data is not None and data["last_seen"] <= seen and _holds_at(data, seen):
            data["valid_to"] = seen
            self._pending.relation_updates[data["relation_id"]] = data

    def _close_older_values(
        self,
        conn: Connection,
        state: _TenantState,
        subject: str,
        predicate: str,
        obj: str,
        seen: str,
    ) -> None:
        g = state.graph.graph
        for _, other, key in list(g.out_edges(subject, keys=True)):
            if key == predicate and other != obj:
                self._close_value(state, subject, predicate, other, seen)
        restated = g.get_edge_data(subject, obj, key=predicate)
        if (
            restated is not None
            and restated["valid_to"] is not None
            and restated["valid_to"] <= seen
        ):
            # An older value stated again is current again, from now (one row per triple
            # cannot keep both spells; the earlier one stays in the evidence).
            restated["valid_from"], restated["valid_to"] = seen, None
            self._pending.relation_updates[restated["relation_id"]] = restated


#: What makes a name in a task's wording a name, not a capitalised word of a title ("Weekly
#: Digest", "Q3 Board Prep"): the user declared it, it is shaped like a person's or an
#: organisation's name, or it is a name the memory knows.
_TASK_NAME_SOURCES = frozenset({"declared", "shape", "known"})


def _task_names_kept(
    mentions: Sequence[Mention], head_chars: int, known: Mapping[str, str]
) -> list[Mention]:
    """The mentions of a text whose first ``head_chars`` are its task, less the task's words
    that only the small model took for names: a task mention stays when its result names it
    too, or it is known, declared or shaped like a name (:data:`_TASK_NAME_SOURCES`)."""
    in_body = {m.key for m in mentions if m.start >= head_chars}
    return [
        m
        for m in mentions
        if m.start >= head_chars
        or m.end == 0
        or m.key in in_body
        or m.key in known
        or m.source in _TASK_NAME_SOURCES
    ]


def _holds_at(data: dict[str, Any], when: str) -> bool:
    """Whether a relation (its view data) held at ``when``: begun by then (at that very time
    included: a statement of the same time may end it) and not ended yet."""
    started = data["valid_from"] or data["first_seen"]
    return bool(started <= when and (data["valid_to"] is None or data["valid_to"] > when))


def _ended_later(
    g: Any, source: RelationSource, subject: str, predicate: str, obj: str, after: str
) -> str | None:
    """The earliest time after ``after`` at which one of ``subject``'s stored statements
    ends ``subject -predicate-> obj`` (as :meth:`RelationSource.ended_by` says), or None.

    A stored relation's statements are known by their first and last times (and the time
    it began again, if it did); one recorded closed at the time it began stated its end
    ("previously worked at").
    """
    pairs = [(key, other) for _, other, key in g.out_edges(subject, keys=True) if key != CO_OCCURS]
    held = [*pairs, (predicate, obj)]
    best: str | None = None
    for _, other, key, data in g.out_edges(subject, keys=True, data=True):
        if key == CO_OCCURS or (key == predicate and other == obj):
            continue
        times = [t for t in (data["first_seen"], data["valid_from"], data["last_seen"]) if t]
        later = min((t for t in times if t > after), default=None)
        if later is None or (best is not None and later >= best):
            continue
        ends = data["valid_from"] is not None and data["valid_from"] == data["valid_to"]
        if (predicate, obj) in source.ended_by(key, other, held, ends=ends):
            best = later
    return best


def _author(item: MemoryItem) -> str | None:
    """Who said or wrote ``item``: its ``speaker`` (else ``author``) metadata, if any."""
    return next(
        (
            item.metadata[k].strip()
            for k in ("speaker", "author")
            if isinstance(item.metadata.get(k), str) and item.metadata[k].strip()
        ),
        None,
    )
