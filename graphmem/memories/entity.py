"""Entity memory: memories linked to the people, organisations, places and products in them.

Saving a memory extracts its entities with spaCy, resolves them to the entities already known
(canonical names, aliases, a lone first or last name), links them in the knowledge graph with
``co_occurs`` edges and typed relations (``works_at``, ``cto_of``...), each with its evidence.
The Calute views (``entities``, ``relationships``, ``entity_mentions``) are derived from it.

Example:
    >>> memory = EntityMemory()
    >>> item = memory.save("Alice Johnson joined Acme Corp in Berlin.")
    >>> item.metadata["entities"]
    ['Alice Johnson', 'Acme Corp', 'Berlin']
    >>> sorted(memory.get_related_entities("Alice Johnson"))
    ['Acme Corp', 'Berlin']
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from ..errors import InvalidArgumentError, InvalidArgumentTypeError
from ..index.reanalysis import DEFAULT_BATCH_SIZE, reanalyse
from ..items import (
    MemoryItem,
    check_content,
    check_count,
    check_event_time,
    check_optional_id,
    stored_time,
)
from ._tier import Tier
from .views import RelationshipsView

if TYPE_CHECKING:  # the graph and text analysis load with the first graph question
    import networkx as nx

    from ..graph.knowledge_graph import Edge, EntityInfo, Hop, KnowledgeGraph
    from ..index.entity_index import Extractor, PatternSource

__all__ = ["OBSERVATIONS", "EntityMemory"]

#: The namespace (tier) of the observations stored through the MCP reference tools
#: (``add_observations``): memories about an entity, which the facade's search and context
#: find as well (one memory behind every tool).
OBSERVATIONS = "mcp-memory"

#: How many recent memory snippets ``entities[name]["contexts"]`` keeps.
MAX_CONTEXTS = 10
P = ParamSpec("P")
R = TypeVar("R")


def _reading_graph(method: Callable[P, R]) -> Callable[P, R]:
    """Run a relationship query inside a read of the database: writers of this process hold
    the same lock while they update the graph view, so a query never walks a graph that is
    changing under it."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        memory = args[0]
        assert isinstance(memory, EntityMemory)
        with memory.space.reading():
            return method(*args, **kwargs)

    return wrapper


class EntityMemory(Tier):
    """Tracks entities and their relationships across memories (a knowledge graph).

    Args:
        storage: a :class:`~graphmem.compat.storage.SQLiteStorage` to persist in (else in memory).
        max_items: accepted for Calute compatibility (entity memories are not evicted).
        enable_embeddings: accepted for Calute compatibility; unused.
        spacy_model: a bigger spaCy pipeline you installed (``"en_core_web_md"``, a package
            name or a folder) to extract with instead of the default ``en_core_web_sm``;
            nothing is downloaded (:class:`~graphmem.extract.pipeline.PipelineNotInstalledError`
            when it is not installed).
        extractor: your own extractor (:class:`~graphmem.extract.extractor.Extractor`), used
            instead of spaCy's rules for every text saved from now on.

    Both apply to every tier that shares ``storage``.
    """

    memory_type = "entity"
    default_namespace = "entity"
    extract_relations = True
    lists_entities = True
    shows_heads = True

    def __init__(
        self,
        storage: Any | None = None,
        max_items: int | None = 5000,
        enable_embeddings: bool = False,
        *,
        namespace: str | None = None,
        tenant: str | None = None,
        spacy_model: str | None = None,
        extractor: Extractor | None = None,
    ) -> None:
        super().__init__(
            storage=storage,
            max_items=max_items,
            enable_embeddings=enable_embeddings,
            namespace=namespace,
            tenant=tenant,
        )
        if spacy_model is not None or extractor is not None:
            self.space.entity_index.use_extraction(spacy_model=spacy_model, extractor=extractor)

    # ------------------------------------------------------------------ writing
    def prepare(
        self,
        content: str,
        metadata: dict[str, Any] | None = None,
        entities: list[str] | None = None,
        *,
        timestamp: datetime | str | None = None,
        **kwargs: Any,
    ) -> MemoryItem:
        """The item :meth:`save` stores: a memory whose entities are linked, and listed in
        ``metadata["entities"]``.

        Args:
            entities: names to link instead of extracting them.
            timestamp: when it happened (a datetime or an ISO 8601 string; default now): the
                time of its mentions and statements (``first_seen``, ``valid_from`` ...).
        """
        if entities is not None:
            if not isinstance(entities, list | tuple) or not all(
                isinstance(e, str) for e in entities
            ):
                raise InvalidArgumentTypeError("entities must be a list of str or None")
            for name in entities:
                check_content(name, "entities[]")
        fields = {
            k: kwargs.pop(k, None) for k in ("agent_id", "user_id", "conversation_id", "task_id")
        }
        return self._make_item(content, metadata, kwargs, timestamp=timestamp, **fields)

    def _prepared(
        self,
        content: str,
        metadata: dict[str, Any] | None = None,
        entities: list[str] | None = None,
        **kwargs: Any,
    ) -> tuple[MemoryItem, Any]:
        return self.prepare(content, metadata, entities, **kwargs), entities

    def add_relation(
        self,
        subject: str,
        predicate: str,
        obj: str,
        *,
        confidence: float = 1.0,
        subject_label: str | None = None,
        object_label: str | None = None,
        valid_from: datetime | str | None = None,
        valid_to: datetime | str | None = None,
    ) -> Edge:
        """Record a relation by hand (rule ``manual``); both entities are created if new.

        With ``subject_label`` / ``object_label``, a new entity gets that label and a name is
        only resolved to an entity it may be one with (the rule of :meth:`merge_entities`).
        ``valid_from`` / ``valid_to`` (a datetime or ISO 8601; default: from now, still
        holding) date it, so :meth:`as_of` of the past sees it: "Dana works_at Acme from
        2021 to 2023".

        Example:
            >>> memory = EntityMemory()
            >>> memory.add_relation("Alice Johnson", "mentors", "Bob Stone").predicate
            'mentors'
            >>> edge = memory.add_relation("Karin Vogel", "cto_of", "Lumen Robotics",
            ...                            subject_label="PERSON", object_label="ORG")
            >>> memory.get_entity("Lumen Robotics").label
            'ORG'
        """
        for name, value in (("subject", subject), ("predicate", predicate), ("object", obj)):
            check_content(value, name)
        began = check_event_time(valid_from, "valid_from")
        ended = check_event_time(valid_to, "valid_to")
        if began is not None and ended is not None and ended <= began:
            raise InvalidArgumentError(
                f"valid_to ({ended.isoformat()}) must be later than valid_from "
                f"({began.isoformat()})"
            )
        return self.space.entity_index.add_relation(
            self._graph_tenant,
            subject,
            predicate,
            obj,
            confidence,
            labels=(subject_label, object_label),
            valid=(began, ended),
        )

    def merge_entities(self, keep: str, merge: str) -> int:
        """Merge entity ``merge`` into ``keep`` (logged); returns the merge id for :meth:`unmerge`.

        Refused, with the reason, when the two cannot be one entity by their labels
        (:func:`~graphmem.extract.normalize.why_not_one_entity`): a person is not a place, a
        place and an organisation are one only under one name. When NER mislabelled one of
        them, :meth:`relabel` it first.

        Example:
            >>> memory = EntityMemory()
            >>> _ = memory.save("Aisha Bello joined Lumen Robotics in Oslo.")
            >>> memory.merge_entities("Oslo", "Lumen Robotics")
            Traceback (most recent call last):
            ...
            graphmem.errors.InvalidArgumentError: 'Oslo' (GPE) and 'Lumen Robotics' (ORG) cannot be one entity: a place and an organisation are one entity only under one name (if one of them is mislabelled, relabel it first: relabel('Lumen Robotics', 'GPE'))
        """
        return self.space.entity_index.merge(self._graph_tenant, keep, merge)

    def relabel(self, name: str, label: str) -> str:
        """Give the entity ``name`` the label ``label`` for good (persisted; later mentions do
        not vote it back); returns its previous label. The relations the new label lets the
        rules find in texts already stored come with :meth:`reanalyse`.

        Raises:
            EntityNotFound: no entity has that name.
            InvalidArgumentError: a malformed label (not upper case, or a value label such as
                DATE), or one the entity's other names cannot share (unmerge them first).

        Example:
            >>> memory = EntityMemory()
            >>> _ = memory.save("Atlas shipped the dashboard for Aurex Logistics in Berlin.")
            >>> memory.relabel("Atlas", "PRODUCT"), memory.get_entity("Atlas").label
            ('PERSON', 'PRODUCT')
        """
        check_content(name, "name")
        return self.space.entity_index.relabel(self._graph_tenant, name, label)

    def declare_entities(self, patterns: PatternSource) -> int:
        """Declare your own entity types (PROJECT, TEAM ...) or fix the model's, with spaCy
        ``EntityRuler`` patterns: a JSONL file, or a list of pattern dicts or JSONL lines.
        Returns how many patterns were new.

        The patterns are stored in the database (a reopened memory knows them) and apply to
        every tier and user of the storage. A name they find keeps their label, whatever the
        model says, and a declared label wins its entity's label vote; entities already known
        under a phrase pattern's name are relabelled now. Texts already stored are read with
        the declarations (names NER missed, the relations of the declared types) by
        :meth:`reanalyse`.

        Raises:
            EntityPatternsError: a malformed pattern (the message names where; nothing is
                declared).

        Example:
            >>> memory = EntityMemory()
            >>> memory.declare_entities([{"label": "PROJECT", "pattern": "Atlas"}])
            1
            >>> _ = memory.save("Priya Nair reviewed Atlas with Tom Becker.")
            >>> memory.get_entity("Atlas").label
            'PROJECT'
        """
        return self.space.entity_index.declare(patterns)

    def reanalyse(
        self,
        *,
        user_id: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        progress: bool = False,
    ) -> int:
        """Analyse the stored texts again with the current declarations, rules and model, as
        saving them now would (:mod:`graphmem.index.reanalysis`); returns how many texts were
        analysed. Of the user ``user_id`` (``""``: the shared memories), else of every user
        (a user's memory: of its user only). Memory and result ids, merges (made again where
        both names remain; ``unmerge`` still undoes them), hand-added relations and labels
        set by :meth:`relabel` are kept; one transaction per ``batch_size`` texts, and an
        interrupted run is completed by the next one.

        Raises:
            InvalidArgumentError: ``user_id`` is not this memory's user, or ``batch_size``
                is below 1 (or too large to store).

        Example:
            >>> memory = EntityMemory()
            >>> _ = memory.save("Mira Solano joined Kestrel.")
            >>> memory.declare_entities([{"label": "ORG", "pattern": "Kestrel"}])
            1
            >>> memory.reanalyse()
            1
            >>> [(e.subject, e.predicate, e.object) for e in memory.find(predicate="works_at")]
            [('Mira Solano', 'works_at', 'Kestrel')]
        """
        uid = check_optional_id(user_id, "user_id")
        if self._tenant is not None:
            if uid is not None and uid != self._tenant:
                raise InvalidArgumentError(
                    f"user_id {uid!r} does not match this memory's user {self._tenant!r}"
                )
            uid = self._tenant
        return reanalyse(self.space.writer, uid, batch_size=batch_size, progress=progress)

    def undeclare_entities(self, label: str, pattern: str | list[Any] | None = None) -> int:
        """Remove what :meth:`declare_entities` stored: every pattern of ``label``, or only
        the one whose ``pattern`` is this phrase or token list. Returns how many went.

        Example:
            >>> memory = EntityMemory()
            >>> memory.declare_entities([{"label": "PROJECT", "pattern": "Atlas"}])
            1
            >>> memory.undeclare_entities("PROJECT"), memory.declared_entities()
            (1, [])
        """
        return self.space.entity_index.undeclare(label, pattern)

    def declared_entities(self) -> list[dict[str, Any]]:
        """The patterns :meth:`declare_entities` stored, oldest first."""
        return self.space.entity_index.declared_patterns()

    def unmerge(self, merge_id: int) -> None:
        """Undo a merge exactly."""
        self.space.entity_index.unmerge(self._graph_tenant, check_count(merge_id, "merge_id"))

    # ------------------------------------------------------------------ the graph
    @property
    def _graph_tenant(self) -> str:
        return self._tenant or ""

    @property
    def graph(self) -> KnowledgeGraph:
        """This memory's knowledge graph (its user's, for a user's memory)."""
        return self.space.entity_index.graph(self._graph_tenant)

    @_reading_graph
    def get_entity(self, name: str) -> EntityInfo | None:
        """The entity ``name`` resolves to, or None."""
        return self.graph.get_entity(name)

    @_reading_graph
    def neighbors(self, name: str, depth: int = 1, predicate: str | None = None) -> dict[str, int]:
        """Entities within ``depth`` hops -> distance (see :meth:`KnowledgeGraph.neighbors`)."""
        queries = self.space.entity_index.queries(self._graph_tenant)
        return queries.neighbors(name, depth=depth, predicate=predicate)

    @_reading_graph
    def relations(self, name: str, predicate: str | None = None) -> list[Edge]:
        """Typed and co-occurrence relations of an entity, with evidence."""
        return self.graph.relations(name, predicate=predicate)

    @_reading_graph
    def find(
        self,
        *,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,  # noqa: A002
        current_only: bool = False,
    ) -> list[Edge]:
        """Relations matching a pattern, e.g. ``find(predicate="works_at", object="Acme")``."""
        return self.graph.find(
            subject=subject,
            predicate=predicate,
            object=object,
            current_only=current_only,
            evidence=True,
        )

    @_reading_graph
    def paths(
        self, a: str, b: str, max_hops: int = 3, *, typed_only: bool = False
    ) -> list[list[Hop]]:
        """How ``a`` connects to ``b``: shortest paths, each hop with its evidence; paths
        over typed relations first, co-occurrence only when there is none within
        ``max_hops`` (never with ``typed_only``)."""
        queries = self.space.entity_index.queries(self._graph_tenant)
        return queries.paths(a, b, max_hops=max_hops, typed_only=typed_only)

    @_reading_graph
    def subgraph(self, names: Iterable[str], depth: int = 1) -> nx.MultiDiGraph:
        """The named entities and their neighbourhood, as a NetworkX graph."""
        return self.graph.subgraph(names, depth=depth)

    @_reading_graph
    def as_of(self, when: datetime | str) -> KnowledgeGraph:
        """The graph as it stood at ``when``."""
        return self.graph.as_of(when)

    # ------------------------------------------------------------------ Calute views
    def _entity_rows(self, key: str | None = None) -> dict[str, dict[str, Any]]:
        """name -> first_seen, last_seen, frequency, contexts, mentions, over this tier's rows
        (of one entity when ``key`` is given)."""
        out: dict[str, dict[str, Any]] = {}
        seen_rows: dict[str, set[int]] = {}
        with self.space.reading() as tx:
            rows = tx.tier_entity_mentions(self.namespace, self._graph_tenant, self._tenant, key)
        for name, memory_id, content, created, seq in rows:
            if seq in seen_rows.setdefault(name, set()):
                continue
            seen_rows[name].add(seq)
            when = stored_time(created)
            info = out.setdefault(
                name,
                {
                    "first_seen": when,
                    "last_seen": when,
                    "frequency": 0,
                    "contexts": [],
                    "mentions": [],
                },
            )
            info["frequency"] += 1
            # Items are listed as saved; a later save may be of an older event.
            info["first_seen"] = min(info["first_seen"], when)
            info["last_seen"] = max(info["last_seen"], when)
            info["contexts"] = [*info["contexts"], content[:100]][-MAX_CONTEXTS:]
            info["mentions"].append(memory_id)
        return out

    def frequency(self, name: str) -> int:
        """How many memories of this tier mention the entity ``name`` resolves to (0 if unknown).

        Example:
            >>> memory = EntityMemory()
            >>> _ = memory.save("Alice Johnson joined Acme Corp.")
            >>> memory.frequency("Alice"), memory.frequency("Zed")
            (1, 0)
        """
        key = self.graph.resolve(name)
        return 0 if key is None else self.mention_counts([key]).get(key, 0)

    def known_relations(self, keys: Iterable[str], per_entity: int = 3) -> dict[str, list[Edge]]:
        """Entity key -> its ``per_entity`` strongest typed relations (either end; current
        ones before ended ones, weak ones (confidence under 0.5) after the others, then by
        support, then newest first), each with its validity
        (``Edge.validity``), for the keys that have any. Read from the tables: the graph's
        edges need not be loaded.

        Example:
            >>> memory = EntityMemory()
            >>> _ = memory.save("Samir Haddad joined Kestrel Automation.", timestamp="2025-03-03")
            >>> [(e.predicate, e.object, e.validity) for e in memory.known_relations(["samir haddad"])["samir haddad"]]
            [('works_at', 'Kestrel Automation', 'since 2025-03-03')]
        """
        from ..graph.knowledge_graph import Edge

        kg = self.graph
        nodes = kg.nodes
        wanted = {nodes[key]["entity_id"]: key for key in keys if key in nodes}
        with self.space.reading() as tx:
            rows = tx.typed_relations_of(list(wanted), per_entity)
        out: dict[str, list[Edge]] = {}
        for entity_id, r in rows:
            if r.subject_key in nodes and r.object_key in nodes:
                out.setdefault(wanted[entity_id], []).append(
                    Edge(
                        kg.name_of(r.subject_key),
                        r.predicate,
                        kg.name_of(r.object_key),
                        r.support,
                        r.confidence,
                        r.first_seen,
                        r.last_seen,
                        r.valid_from,
                        r.valid_to,
                        r.id,
                    )
                )
        return {key: out[key] for key in wanted.values() if key in out}

    def mention_counts(self, keys: Iterable[str]) -> dict[str, int]:
        """Entity key -> how many memories of this tier mention it (keys with none left out).

        The counts are kept in the graph view (counted once, then kept up to date by writes).
        """
        keys = list(keys)
        if not keys:
            return {}
        return self.space.entity_index.tier_counts(self._graph_tenant, self.namespace, keys)

    @property
    def entities(self) -> dict[str, dict[str, Any]]:
        """name -> ``{first_seen, last_seen, frequency, contexts}`` (a read-only snapshot)."""
        return {
            name: {k: v for k, v in info.items() if k != "mentions"}
            for name, info in self._entity_rows().items()
        }

    @property
    def entity_mentions(self) -> dict[str, list[str]]:
        """name -> ids of the memories that mention it (a read-only snapshot)."""
        return {name: info["mentions"] for name, info in self._entity_rows().items()}

    @property
    def relationships(self) -> RelationshipsView:
        """predicate -> ``(subject, object)`` pairs, each once: a live view of the graph that
        can be changed in place as Calute's dict is (see :mod:`graphmem.memories.views`).

        Example:
            >>> memory = EntityMemory()
            >>> memory.relationships["knows"].append(("Alice Johnson", "Bob Stone"))
            >>> dict(memory.relationships)
            {'knows': [('Alice Johnson', 'Bob Stone')]}
        """
        return RelationshipsView(self)

    @_reading_graph
    def relation_pairs_by_predicate(self) -> dict[str, list[tuple[str, str]]]:
        """predicate -> ``(subject, object)`` names, in the graph's order (a snapshot)."""
        kg = self.graph
        out: dict[str, list[tuple[str, str]]] = {}
        for u, v, key in sorted(kg.graph.edges(keys=True)):
            out.setdefault(key, []).append((kg.name_of(u), kg.name_of(v)))
        return out

    def relation_pairs(self, predicate: str) -> list[tuple[str, str]]:
        """The ``(subject, object)`` names of one predicate (a snapshot)."""
        return self.relation_pairs_by_predicate().get(predicate, [])

    def remove_relation(self, subject: str, predicate: str, obj: str) -> bool:
        """Delete the relation ``subject -predicate-> obj`` and its evidence (entities left
        with no mention and no relation go too); False when there is no such relation.

        Example:
            >>> memory = EntityMemory()
            >>> _ = memory.add_relation("Alice Johnson", "mentors", "Bob Stone")
            >>> memory.remove_relation("Alice Johnson", "mentors", "Bob Stone"), memory.find(subject="Alice Johnson")
            (True, [])
        """
        return self.remove_relations([(subject, predicate, obj)]) > 0

    def remove_relations(
        self, triples: Iterable[tuple[str, str, str]], *, by_hand_only: bool = False
    ) -> int:
        """Delete the relations ``(subject, predicate, object)`` as :meth:`remove_relation`
        does, or with ``by_hand_only`` only what :meth:`add_relation` added to them (what
        texts gave stays), in one transaction; returns how many relations were touched."""
        wanted = list(triples)
        for triple in wanted:
            for name, value in zip(("subject", "predicate", "object"), triple, strict=True):
                check_content(value, name)
        with self.space.transaction() as tx:
            kg = self.graph  # one view for every relation
            found = []
            for subject, predicate, obj in wanted:
                ends = [kg.resolve(subject), kg.resolve(obj)]
                if None not in ends and kg.graph.has_edge(ends[0], ends[1], key=predicate):
                    ids = [kg.graph.nodes[key]["entity_id"] for key in ends]
                    found.append((ids[0], predicate, ids[1]))
            if not found:
                return 0
            # The views are rebuilt from the tables on next use, and again if this rolls back.
            return tx.delete_relations(
                self._graph_tenant, list(dict.fromkeys(found)), by_hand_only=by_hand_only
            )

    @_reading_graph
    def get_entity_info(self, entity: str) -> dict[str, Any]:
        """What is known of an entity: Calute's keys plus ``label`` and ``aliases``.

        An unknown entity gives ``{"mentions": [], "relationships": []}``.
        """
        if not isinstance(entity, str):
            raise InvalidArgumentTypeError(f"entity must be a str, got {type(entity).__name__}")
        kg = self.graph
        info = kg.get_entity(entity)
        if info is None:
            return {"mentions": [], "relationships": []}
        rows = self._entity_rows(info.key).get(
            info.name, {"frequency": 0, "contexts": [], "mentions": []}
        )
        relationships = [
            {"relation": e.predicate, "target": e.object}
            if e.subject == info.name
            else {"relation": f"inverse_{e.predicate}", "target": e.subject}
            for e in kg.relations(info.name, evidence=False)
        ]
        return {
            "first_seen": rows.get("first_seen", stored_time(info.first_seen)),
            "last_seen": rows.get("last_seen", stored_time(info.last_seen)),
            "frequency": rows["frequency"],
            "contexts": rows["contexts"],
            "mentions": rows["mentions"],
            "relationships": relationships,
            "label": info.label,
            "aliases": list(info.aliases),
        }

    @_reading_graph
    def get_related_entities(self, entity: str, max_depth: int = 2) -> set[str]:
        """Names of the entities within ``max_depth`` hops (the entity itself excluded)."""
        if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0:
            raise InvalidArgumentError(f"max_depth must be a non-negative int, got {max_depth!r}")
        queries = self.space.entity_index.queries(self._graph_tenant)
        if max_depth == 0 or entity not in queries:
            return set()
        return set(queries.neighbors(entity, depth=max_depth))

    @_reading_graph
    def extract_entities(self, text: str) -> list[str]:
        """Entity names in ``text`` (known ones by their canonical name), in text order."""
        from ..space.analysis import names_in_text

        check_content(text, "text")
        return names_in_text(self.space, self._graph_tenant, text)

    def _extract_relationships(self, text: str, entities: list[str]) -> list[tuple[str, str, str]]:
        """Typed relations in ``text`` between the given entities, as Calute's method returns
        them: ``(entity1, relation, entity2)`` triples, each end named as in ``entities``.

        Unlike Calute's four one-word regexes, this is graphmem's dependency-rule extractor
        (``models/relation_rules.json``): multi-word names, text order, no duplicate triple.
        An entity is matched by its name or an alias the graph resolves to it. Nothing is
        stored. Without a parser in the pipeline there are no typed relations: ``[]``.

        Example:
            >>> memory = EntityMemory()
            >>> memory._extract_relationships("Alice Johnson works at Acme Corp.", ["Alice Johnson", "Acme Corp"])
            [('Alice Johnson', 'works_at', 'Acme Corp')]
        """
        if not isinstance(text, str):
            raise InvalidArgumentTypeError(f"text must be a str, got {type(text).__name__}")
        if not isinstance(entities, list | tuple) or not all(isinstance(e, str) for e in entities):
            raise InvalidArgumentTypeError("entities must be a list of str")
        if not text.strip() or not entities or self.space.entity_index.relation_source is None:
            return []
        from ..space.analysis import relations_between

        check_content(text, "text")
        return relations_between(self.space, self._graph_tenant, text, entities)

    def known_entities_in(self, text: str) -> list[tuple[str, int]]:
        """The known entities ``text`` names, in text order, with how many memories of this
        tier mention each (found without a language model: see :mod:`graphmem.extract.query`).

        Example:
            >>> memory = EntityMemory()
            >>> _ = memory.save("Alice Johnson joined Acme Corp in Berlin.")
            >>> memory.known_entities_in("Ask Alice about Acme and Zed")
            [('Alice Johnson', 1), ('Acme Corp', 1)]
        """
        from ..space.analysis import known_keys_in

        check_content(text, "text")
        with self.space.reading():  # one view and its matcher, of the same generation
            kg = self.graph
            keys = known_keys_in(self.space, self._graph_tenant, text)
        counts = self.mention_counts(keys)
        return [(kg.name_of(key), counts[key]) for key in keys if counts.get(key)]

    # Calute's private name, used by code that called it directly.
    _extract_entities = extract_entities

    def search(
        self,
        query: str,
        limit: int = 10,
        filters: dict[str, Any] | None = None,
        entity_filter: list[str] | None = None,
        **kwargs: Any,
    ) -> list[MemoryItem]:
        """Memories matching ``query`` (words or entities); ``entity_filter`` keeps those
        mentioning one of the given entities."""
        if entity_filter is not None:
            keys = {self.graph.resolve(name) for name in entity_filter}
            names = {self.graph.name_of(k) for k in keys if k is not None}
            combined = dict(filters or {})
            combined["entities"] = lambda found: bool(names & set(found or []))
            filters = combined
        return super().search(query, limit=limit, filters=filters)
