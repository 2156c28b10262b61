"""``CortexMemory``: the facade that saves what agents do and builds the context for a task.

Drop-in for Calute's ``calute.cortex.memory_integration.CortexMemory``: same constructor,
methods and context format, without its bugs (a fresh memory writes every tier; short-term
memory persists; users are isolated; the context lists each save once).

Example:
    >>> memory = CortexMemory()
    >>> result_id = memory.save_task_result("Analyze sales data",
    ...     "Sales increased 15% this quarter", agent_role="Data Analyst", importance=0.8)
    >>> print(memory.build_context_for_task("Summarize sales", agent_role="Data Analyst"))
    Recent context:
      • Task completed: Analyze sales data - Result: Sales increased 15% this quarter

The result shows once: its long-term copy is the same save as the short-term line.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ._batches import batched, one_ahead
from .compat.storage import SQLiteStorage
from .errors import InvalidArgumentError, InvalidArgumentTypeError, MemoryNotFound
from .extract.entity_patterns import PatternSource
from .extract.extractor import Extractor
from .index.writer import NewItem, NewText, new_result_id
from .items import (
    MemoryItem,
    check_capacity,
    check_content,
    check_event_time,
    check_importance,
    check_limit,
    check_optional_id,
    check_query,
    check_workers,
)
from .memories import (
    ContextualMemory,
    EntityMemory,
    LongTermMemory,
    ShortTermMemory,
    Tier,
    UserMemory,
)
from .memories.contextual import one_per_text
from .memories.entity import OBSERVATIONS
from .memories.user import USER_NAMESPACES
from .retrieval.context import ContextReport, ContextSources, assemble_context, context_ranking
from .retrieval.search import Hit, Ranking
from .task_results import TaskWriter, task_record, task_results_list

if TYPE_CHECKING:
    from .space import Work

__all__ = [
    "KNOWLEDGE_SCOPES",
    "CortexMemory",
    "PersistenceDisabledWarning",
    "check_knowledge_scope",
    "task_results_list",
]

#: Whose memories a context for an agent draws knowledge from: the agent's own ("agent",
#: Calute's rule) or every agent's of the memory ("team").
KNOWLEDGE_SCOPES = ("agent", "team")

_LONG_TERM_INTERACTION_THRESHOLD = 0.6


def check_knowledge_scope(value: object) -> str:
    """``value`` if it is one of :data:`KNOWLEDGE_SCOPES`, else a named error.

    Example:
        >>> check_knowledge_scope("team")
        'team'
    """
    if value not in KNOWLEDGE_SCOPES:
        raise InvalidArgumentError(
            f"knowledge_scope must be one of {', '.join(map(repr, KNOWLEDGE_SCOPES))}, "
            f"got {value!r}"
        )
    return str(value)


def _recent_context(
    tier: ShortTermMemory, tx: Work, agent_role: str | None, n: int
) -> tuple[list[MemoryItem], list[Hit]]:
    """A context's "Recent context": the ``n`` newest items of ``tier``, oldest first (those
    of ``agent_role`` when given, read as hits: they count as accessed)."""
    if not agent_role:
        return tier.get_recent(n=n), []
    rows = tier.select(tx, {"agent_id": agent_role}, n, newest_first=True, by_time=True)
    hits = [Hit.listed(row, item) for row, item in reversed(rows)]
    return [hit.item for hit in hits], hits


class PersistenceDisabledWarning(UserWarning):
    """A ``persistence_path`` was given but ``WRITE_MEMORY`` is not ``"1"``: nothing is saved."""


class CortexMemory:
    """Unified memory for agents and tasks: short-term, long-term, entity, user, contextual.

    Args:
        enable_short_term, enable_long_term, enable_entity, enable_user: which tiers exist
            (a disabled tier is ``None``; ``contextual`` always exists).
        persistence_path: a SQLite file (or database URL). Used only when the environment
            variable ``WRITE_MEMORY`` is ``"1"``; otherwise the memory is ephemeral and a
            :class:`PersistenceDisabledWarning` says so.
        short_term_capacity: items kept in short-term memory.
        long_term_capacity: items kept in long-term memory before eviction.
        storage: a :class:`SQLiteStorage` to live in (persisted whatever ``WRITE_MEMORY``
            says, as a tier given a storage is), e.g. one shared by the facades of several
            users; not with ``persistence_path``.
        user_id: the user (tenant) this facade serves: everything it saves is theirs, and it
            reads only their memories, entities and relations. None: Calute's facade, whose
            reads are not scoped to a user.

    The constructor is Calute's, exactly (``storage`` and ``user_id`` are keyword-only
    additions):

        >>> shared = SQLiteStorage()
        >>> alice = CortexMemory(storage=shared, user_id="alice")
        >>> _ = alice.save_task_result("Audit", "Acme passed the audit", "QA")
        >>> [i.content for i in CortexMemory(storage=shared, user_id="bob").search("Acme")]
        []

    :meth:`use_extraction` chooses a bigger spaCy
    pipeline or your own extractor, :meth:`declare_entities` your entity types.
    """

    def __init__(
        self,
        enable_short_term: bool = True,
        enable_long_term: bool = True,
        enable_entity: bool = True,
        enable_user: bool = False,
        persistence_path: str | None = None,
        short_term_capacity: int = 50,
        long_term_capacity: int = 5000,
        *,
        storage: SQLiteStorage | None = None,
        user_id: str | None = None,
        knowledge_scope: str = "agent",
    ) -> None:
        #: Whose memories a context with an ``agent_role`` draws knowledge from by default
        #: (:data:`KNOWLEDGE_SCOPES`; "agent": Calute's rule, the role's own only).
        self.knowledge_scope = check_knowledge_scope(knowledge_scope)
        if storage is not None and persistence_path is not None:
            raise InvalidArgumentError("give persistence_path or storage, not both")
        if storage is not None and not isinstance(storage, SQLiteStorage):
            raise InvalidArgumentTypeError(
                f"storage must be a SQLiteStorage or None, got {type(storage).__name__}"
            )
        self.user_id = check_optional_id(user_id, "user_id")
        if persistence_path is not None and not isinstance(persistence_path, str | os.PathLike):
            raise InvalidArgumentTypeError(
                f"persistence_path must be a str or None, got {type(persistence_path).__name__}"
            )
        check_capacity(short_term_capacity, "short_term_capacity")
        check_capacity(long_term_capacity, "long_term_capacity")
        write_memory = os.environ.get("WRITE_MEMORY", "0") == "1"
        if persistence_path and not write_memory:
            warnings.warn(
                f"persistence_path={os.fspath(persistence_path)!r} is ignored because the environment "
                "variable WRITE_MEMORY is not '1'; this memory is ephemeral. Set WRITE_MEMORY=1 to persist.",
                PersistenceDisabledWarning,
                stacklevel=2,
            )
        self.storage: SQLiteStorage | None = (
            SQLiteStorage(persistence_path) if persistence_path and write_memory else storage
        )
        space = self.storage if self.storage is not None else SQLiteStorage()
        self._space = space
        tenant = self.user_id
        self.short_term = (
            ShortTermMemory(capacity=short_term_capacity, storage=space, tenant=tenant)
            if enable_short_term
            else None
        )
        self.long_term = (
            LongTermMemory(storage=space, max_items=long_term_capacity, tenant=tenant)
            if enable_long_term
            else None
        )
        self.entity_memory = EntityMemory(storage=space, tenant=tenant) if enable_entity else None
        self.user_memory = UserMemory(storage=space) if enable_user else None
        self.contextual = ContextualMemory(
            short_term_capacity=short_term_capacity, long_term_storage=space, tenant=tenant
        )
        self._tasks = TaskWriter(self)

    def __repr__(self) -> str:
        return f"CortexMemory({self._space.describe()!r})"

    @property
    def space(self) -> SQLiteStorage:
        """The memory space every tier of this facade lives in (``storage`` when one was
        given or persisted, else its in-memory database).

        Example:
            >>> CortexMemory().space.describe()
            'in-memory database'
        """
        return self._space

    # ------------------------------------------------------------------ entity types
    def use_extraction(
        self, *, spacy_model: str | None = None, extractor: Extractor | None = None
    ) -> None:
        """Extract entities and relations of what is saved from now on with a bigger spaCy
        pipeline you installed (``spacy_model="en_core_web_md"``; nothing is downloaded) or
        with your own :class:`~graphmem.extract.extractor.Extractor`, instead of the default
        ``en_core_web_sm`` rules; see :class:`EntityMemory`.

        Raises:
            PipelineNotInstalledError: ``spacy_model`` is not installed.
            InvalidArgumentTypeError: ``extractor`` has no ``extract`` method.
        """
        self._space.entity_index.use_extraction(spacy_model=spacy_model, extractor=extractor)

    def declare_entities(self, patterns: PatternSource) -> int:
        """Declare entity types (PROJECT, TEAM ...) with spaCy ``EntityRuler`` patterns, stored
        with the memory; see :meth:`EntityMemory.declare_entities`. Returns how many were new.
        :meth:`EntityMemory.reanalyse` reads the texts already stored with them.

        Example:
            >>> memory = CortexMemory()
            >>> memory.declare_entities(['{"label": "PROJECT", "pattern": "Orion"}'])
            1
            >>> _ = memory.save_task_result("Plan Orion", "Jake Morrison won Orion.", "Sales")
            >>> memory.entity_memory.get_entity("Orion").label
            'PROJECT'
        """
        return self._space.entity_index.declare(patterns)

    def relabel(self, name: str, label: str) -> str:
        """Give an entity a label for good; see :meth:`EntityMemory.relabel` (and
        :meth:`EntityMemory.reanalyse`, which reads stored texts with it)."""
        check_content(name, "name")
        return self._space.entity_index.relabel(self.user_id or "", name, label)

    # ------------------------------------------------------------------ saving
    def save_task_result(
        self,
        task_description: str,
        result: str,
        agent_role: str,
        importance: float = 0.5,
        task_metadata: dict[str, Any] | None = None,
        *,
        timestamp: datetime | str | None = None,
        dedupe_key: str | None = None,
    ) -> str:
        """Record a task's result: short-term always, long-term when ``importance >= 0.7``,
        entity and contextual memory always. All of it in one transaction.

        Returns the result's id: one id naming everything this save wrote, in every tier,
        for :meth:`delete` and :meth:`update`.

        ``dedupe_key``: your key for this result (a str). Saving again with a key the memory
        already holds changes nothing and returns the stored result's id, so a retried save
        stores it once. Without a key every save stores a result, as Calute's does (two saves
        of the same text store two).

        ``task_metadata["conversation_id"]`` (a str), when given, is also every stored item's
        ``conversation_id``: search can filter by it, and neighbouring turns rank together;
        ``task_metadata["task_id"]`` likewise every item's ``task_id``.

        ``timestamp``: when the task was done (a datetime or an ISO 8601 string; default
        now), to record history after the fact. It is every stored item's ``timestamp``
        (their order, recency and eviction follow it: an old result is the first to go, never
        a fresher one) and the time of what the result states: entities' ``first_seen`` /
        ``last_seen``, relations' ``valid_from`` / ``valid_to`` (``as_of`` reads them),
        whatever order results are saved in.

        Example:
            >>> memory = CortexMemory()
            >>> hire = memory.save_task_result("Record the new hire", "Samir Haddad joined "
            ...     "Kestrel Automation.", "HR Agent", timestamp="2025-03-03T09:00:00+00:00")
            >>> [e.valid_from for e in memory.entity_memory.find(predicate="works_at")]
            ['2025-03-03T09:00:00+00:00']
            >>> again = memory.save_task_result("Sync the CRM", "Acme renewed.", "Sales",
            ...                                 dedupe_key="crm-1")
            >>> memory.save_task_result("Sync the CRM", "Acme renewed.", "Sales",
            ...                         dedupe_key="crm-1") == again
            True
        """
        task = task_record(
            {
                "task_description": task_description,
                "result": result,
                "agent_role": agent_role,
                "importance": importance,
                "task_metadata": task_metadata,
                "timestamp": timestamp,
                "dedupe_key": dedupe_key,
            }
        )
        return self._tasks.write([task])[0]

    def save_task_results(
        self,
        results: Iterable[Mapping[str, Any]],
        *,
        batch_size: int = 256,
        progress: bool = False,
        workers: int | None = None,
    ) -> list[str]:
        """Save many task results fast: each a dict of :meth:`save_task_result` arguments
        (``timestamp`` and ``dedupe_key`` included).

        The same tiers and thresholds as :meth:`save_task_result`; every record is validated
        first (nothing is written if one is invalid); text is analysed with ``nlp.pipe`` and
        each batch is written in one transaction. Returns each result's id, in order (a
        record whose ``dedupe_key`` is already stored, or repeats an earlier record's, gets
        that result's id and is not stored again).

        ``workers``: processes analysing the text (default: the machine's cores), the next
        batch while this one is written; the rows stored are the same with one or many
        (:mod:`graphmem.extract.workers`).

        Example:
            >>> memory = CortexMemory()
            >>> ids = memory.save_task_results([
            ...     {"task_description": "Audit", "result": "Acme passed the audit", "agent_role": "QA"},
            ... ])
            >>> len(ids), len(memory.contextual)
            (1, 1)
        """
        records = task_results_list(results)
        batch_size = check_capacity(batch_size, "batch_size")
        tasks = [task_record(r, f"results[{i}].") for i, r in enumerate(records)]
        workers = check_workers(workers)
        chunks = batched(tasks, batch_size, progress, "saving task results", unit="results")
        ids: list[str] = []
        with self._space.writer.bulk(workers, len(tasks)) as pool:
            prepared = (self._tasks.prepare(list(chunk), pool=pool) for chunk in chunks)
            # The next batch is analysed (by the workers) while this one is written.
            for current in one_ahead(prepared):
                ids.extend(self._tasks.store(current))
        return ids

    def save_agent_interaction(
        self,
        agent_role: str,
        action: str,
        content: str,
        importance: float = 0.3,
        *,
        timestamp: datetime | str | None = None,
    ) -> str:
        """Record ``"[agent_role] action: content"`` in short-term, and long-term when
        ``importance >= 0.6``; ``timestamp`` as in :meth:`save_task_result`. Returns the
        interaction's result id (one for both tiers; it names nothing when short-term memory
        is disabled and the importance is below 0.6)."""
        for name, value in (("agent_role", agent_role), ("action", action), ("content", content)):
            check_content(value, name)
        importance = check_importance(importance)
        when = check_event_time(timestamp)
        interaction = f"[{agent_role}] {action}: {content}"
        items: list[NewItem] = []
        if self.short_term is not None:
            item = self.short_term.prepare(
                interaction, metadata={"action": action}, agent_id=agent_role, timestamp=when
            )
            items.append(self.short_term.as_new_item(item))
        if self.long_term is not None and importance >= _LONG_TERM_INTERACTION_THRESHOLD:
            item = self.long_term.prepare(
                interaction, agent_id=agent_role, importance=importance, timestamp=when
            )
            items.append(self.long_term.as_new_item(item))
        return self._write_shared(items)

    def _write_shared(self, items: list[NewItem], relations: bool = False) -> str:
        """One text shown by ``items`` (all of it), indexed when one of their tiers indexes
        entities; then each tier's capacity policy. Returns its result id."""
        result_id = new_result_id()
        if not items:
            return result_id
        tiers = {ni.namespace: self._tasks.tier_of(ni.namespace) for ni in items}
        text = NewText(
            body=items[0].item.content,
            items=items,
            index=any(tier.index_entities for tier in tiers.values()),
            relations=relations,
            result_id=result_id,
        )
        writer = self._space.writer
        docs = writer.analyse([text])
        with self._space.transaction() as tx:
            tx.write([text], docs)
            for tier in tiers.values():
                tier.evict(tx)
        return result_id

    def _tiers(self) -> dict[str, Tier]:
        """The facade's own tiers (those that exist), by namespace, in the seed's order."""
        return self._tasks.tiers()

    def save_cortex_decision(
        self,
        decision: str,
        context: str,
        outcome: str | None = None,
        importance: float = 0.7,
        *,
        timestamp: datetime | str | None = None,
    ) -> str:
        """Record an orchestration decision in long-term (agent ``cortex_manager``) and
        contextual memory; ``timestamp`` as in :meth:`save_task_result`. Returns its result
        id (one for both tiers)."""
        check_content(decision, "decision")
        check_content(context, "context")
        if outcome is not None:
            check_content(outcome, "outcome")
        importance = check_importance(importance)
        when = check_event_time(timestamp)
        content = f"Decision: {decision}\nContext: {context}"
        if outcome:
            content += f"\nOutcome: {outcome}"
        metadata = {"type": "cortex_decision", "has_outcome": outcome is not None}
        items: list[NewItem] = []
        if self.long_term is not None:
            item = self.long_term.prepare(
                content,
                metadata=metadata,
                importance=importance,
                agent_id="cortex_manager",
                timestamp=when,
            )
            items.append(self.long_term.as_new_item(item))
        part, item = self.contextual.routed_item(
            {"content": content, "metadata": metadata, "importance": importance, "timestamp": when}
        )
        items.append(part.as_new_item(item))
        return self._write_shared(items)

    # ------------------------------------------------------------------ forgetting
    def _namespaces(self) -> list[str]:
        """The tiers of this facade (user memory's included), as stored namespaces."""
        names = list(self._tiers())
        if self.user_memory is not None:
            names += list(USER_NAMESPACES)
        return names

    def delete(self, result_id: str) -> bool:
        """Forget one saved result (an id a save returned) in every tier it landed in; True
        if something was removed, False for an id the memory does not hold.

        The knowledge graph is cleaned by support counting: an entity or relation that only
        this result stated disappears; one that another text still supports stays, with that
        text's evidence only. A memory id of a tier's own save works too (that save's id).

        Example:
            >>> memory = CortexMemory()
            >>> hire = memory.save_task_result("Record the new hire",
            ...     "Maya Lindqvist joined Lumen Robotics.", "HR", importance=0.9)
            >>> memory.delete(hire), memory.delete(hire)
            (True, False)
            >>> len(memory.long_term), memory.entity_memory.get_entity("Lumen Robotics")
            (0, None)
        """
        check_content(result_id, "result_id")
        with self._space.transaction() as tx:
            return self._delete_results(tx, [result_id]) > 0

    def _delete_results(self, tx: Work, result_ids: list[str]) -> int:
        """Delete every item of the results (and what lost its support); returns how many
        results had items."""
        rows = tx.result_items(result_ids, self._namespaces(), tenant=self.user_id)
        if rows:
            tx.delete([row for row, _ in rows])
        return len({row.result_id for row, _ in rows})

    def forget(
        self,
        *,
        agent_role: str | None = None,
        user_id: str | None = None,
        before: datetime | str | None = None,
        conversation_id: str | None = None,
        task_id: str | None = None,
    ) -> int:
        """Forget every result that matches all the filters given, in every tier; returns
        how many results were removed. At least one filter is required (:meth:`reset_all`
        clears everything).

        Args:
            agent_role: results saved by this agent (``agent_id``).
            user_id: one user's memories (user memory).
            before: results whose time (``timestamp``) is earlier (a datetime or ISO 8601).
            conversation_id, task_id: results of this conversation or task
                (``task_metadata["conversation_id"]`` / ``["task_id"]`` for task results).

        The graph is cleaned as by :meth:`delete`.

        Example:
            >>> memory = CortexMemory()
            >>> for n in range(3):
            ...     _ = memory.save_task_result("Audit", f"Acme audit step {n} passed", "QA")
            >>> _ = memory.save_task_result("Plan", "Initech signed.", "Sales")
            >>> memory.forget(agent_role="QA"), [i.agent_id for i in memory.contextual.search("")]
            (3, ['Sales'])
        """
        filters = {
            "agent_id": check_optional_id(agent_role, "agent_role"),
            "conversation_id": check_optional_id(conversation_id, "conversation_id"),
            "task_id": check_optional_id(task_id, "task_id"),
        }
        sql_filters = {k: v for k, v in filters.items() if v is not None}
        tenant = check_optional_id(user_id, "user_id")
        when = check_event_time(before, "before")
        if not sql_filters and tenant is None and when is None:
            raise InvalidArgumentError(
                "forget needs at least one filter (agent_role, user_id, before, "
                "conversation_id, task_id); reset_all() clears everything"
            )
        if self.user_id is not None:  # a facade of one user forgets only that user's
            if tenant is not None and tenant != self.user_id:
                raise InvalidArgumentError(
                    f"user_id {tenant!r} is not this memory's user {self.user_id!r}"
                )
            tenant = self.user_id
        with self._space.transaction() as tx:
            ids = tx.matching_results(
                self._namespaces(), tenant=tenant, sql_filters=sql_filters, before=when
            )
            return self._delete_results(tx, ids)

    def update(
        self,
        result_id: str,
        *,
        result: str | None = None,
        task_description: str | None = None,
        importance: float | None = None,
        task_metadata: dict[str, Any] | None = None,
    ) -> str:
        """Change a saved task result; returns its id, which stays the same (so do the memory
        ids of the tiers that keep it, and its time).

        What is not given keeps its stored value (``task_metadata`` replaces the whole dict).
        The result is stored again as :meth:`save_task_result` would store it now, in one
        transaction: re-analysed, its old evidence in the graph replaced by the new (what
        only the old text supported disappears), in the tiers its new importance puts it in.
        Access counts start again from zero.

        Raises:
            MemoryNotFound: no result has this id.
            InvalidArgumentError: the id names something other than a task result (an
                interaction, a decision, a tier's own save: update those with their tier's
                ``update``), or one whose result text no tier keeps any more.

        Example:
            >>> memory = CortexMemory()
            >>> hire = memory.save_task_result("Record the new hire",
            ...     "Maya Lindqvist joined Lumen Robotics.", "HR", importance=0.9)
            >>> memory.update(hire, result="Maya Lindqvist joined Harbor Bank.") == hire
            True
            >>> [(e.subject, e.object) for e in memory.entity_memory.find(predicate="works_at")]
            [('Maya Lindqvist', 'Harbor Bank')]
        """
        check_content(result_id, "result_id")
        with self._space.reading() as tx:
            stored = self._stored_task(tx, result_id)
        changed = {
            **stored,
            **{
                name: value
                for name, value in (
                    ("result", result),
                    ("task_description", task_description),
                    ("importance", importance),
                    ("task_metadata", task_metadata),
                )
                if value is not None
            },
        }
        task = task_record(changed)

        def replace_old(tx: Work) -> dict[str, str]:
            rows = tx.result_items([result_id], self._namespaces(), tenant=self.user_id)
            if not rows:
                raise MemoryNotFound(f"no result {result_id!r} (deleted meanwhile?)")
            tx.delete([row for row, _ in rows])
            return {row.namespace: item.memory_id for row, item in rows}

        return self._tasks.write([task], [result_id], before=replace_old)[0]

    def _stored_task(self, tx: Work, result_id: str) -> dict[str, Any]:
        """The :meth:`save_task_result` arguments a stored task result was saved with."""
        return self._tasks.stored(tx, result_id, self._namespaces())

    # ------------------------------------------------------------------ context
    def search(
        self, query: str, limit: int = 10, agent_role: str | None = None
    ) -> list[MemoryItem]:
        """The facade's contextual search, best first: what "Related memories" lists.

        Example:
            >>> memory = CortexMemory()
            >>> _ = memory.save_task_result("Audit", "Acme passed the audit", agent_role="QA")
            >>> [item.content for item in memory.search("Did Acme pass?")]
            ['Acme passed the audit']
        """
        return [hit.item for hit in self.search_hits(query, limit, agent_role)]

    def search_hits(self, query: str, limit: int = 10, agent_role: str | None = None) -> list[Hit]:
        """Like :meth:`search`, with each item's score and explanation."""
        check_query(query)
        check_optional_id(agent_role, "agent_role")
        limit = check_limit(limit)
        if not query.strip():
            return self.contextual.search_hits(
                query, limit=limit, filters={"agent_id": agent_role} if agent_role else None
            )
        with self._space.reading() as tx:
            ranking = self._ranking(tx, query, agent_role, limit)
            # A promoted text has an item in both contextual parts: it is shown once.
            hits = ranking.take(tx, limit * 2, namespaces=self._related_namespaces())
        return self.contextual.shown(one_per_text(hits, limit))

    def _contextual_namespaces(self) -> set[str]:
        return {self.contextual.short_term.namespace, self.contextual.long_term.namespace}

    def _related_namespaces(self) -> set[str]:
        """What search and "Related memories" show: contextual memory, and the observations
        stored through the MCP reference tools (one memory behind every tool)."""
        return {*self._contextual_namespaces(), OBSERVATIONS}

    def _ranking(self, tx: Work, query: str, agent_role: str | None, shown: int) -> Ranking:
        """One ranking of ``query`` over every tier a context searches (long-term and
        contextual memory), to be split into its sections; ``shown``: how many items the
        sections show at most."""
        namespaces = [*self._related_namespaces()]
        if self.long_term is not None:
            namespaces.insert(0, self.long_term.namespace)
        return context_ranking(
            tx,
            self._space,
            sorted(namespaces),
            query,
            tenant=self.user_id,
            agent_role=agent_role,
            shown=shown,
        )

    def build_context_report(
        self,
        task_description: str,
        agent_role: str | None = None,
        additional_context: str | None = None,
        max_items: int = 10,
        *,
        knowledge_scope: str | None = None,
    ) -> ContextReport:
        """The context for a task as a structured report (items, scores, explanations, subgraph).

        ``build_context_for_task`` returns ``report.text`` of this report. The task is
        analysed once and ranked once over long-term and contextual memory; the ranking is
        split into "Relevant knowledge" (the best five long-term items) and "Related
        memories" (the best ``max_items`` contextual items not shown in an earlier section,
        each text once; the text lists the first three of them, as Calute does). Reading
        writes one batched access-count update.

        ``agent_role`` always picks the role's own "Recent context". With the knowledge scope
        "agent" (Calute's behaviour, the default) it also limits "Relevant knowledge" and
        "Related memories" to the role's own memories; with "team" they come from every
        agent's memories (what another agent found answers this one's task too).
        ``knowledge_scope`` (None: the facade's :attr:`knowledge_scope`) chooses per call.

        Example:
            >>> memory = CortexMemory(enable_short_term=False)
            >>> for n in range(5):
            ...     _ = memory.save_task_result("Audit", f"Acme audit step {n} passed", agent_role="QA")
            >>> report = memory.build_context_report("Acme audit", max_items=4)
            >>> related = report.sections[-1]
            >>> len(related.entries), len(related.visible)
            (4, 3)
        """
        return self._context(
            task_description, agent_role, additional_context, max_items, knowledge_scope, True
        )

    def _context(
        self,
        task_description: str,
        agent_role: str | None,
        additional_context: str | None,
        max_items: int,
        knowledge_scope: str | None,
        explain: bool,
    ) -> ContextReport:
        """:meth:`build_context_report`; ``explain=False``: no explanations (the text has none)."""
        check_query(task_description, "task_description")
        check_optional_id(agent_role, "agent_role")
        if knowledge_scope is not None:
            knowledge_scope = check_knowledge_scope(knowledge_scope)
        max_items = check_limit(max_items, "max_items")
        if additional_context is not None and not isinstance(additional_context, str):
            raise InvalidArgumentTypeError("additional_context must be a str or None")
        role = agent_role if (knowledge_scope or self.knowledge_scope) == "agent" else None
        short_term = self.short_term
        sources = ContextSources(
            recent=(
                None
                if short_term is None
                else lambda tx, n: _recent_context(short_term, tx, agent_role, n)
            ),
            ranking=(
                (lambda tx, shown: self._ranking(tx, task_description, role, shown))
                if task_description.strip()
                else None
            ),
            knowledge=self.long_term.namespace if self.long_term is not None else None,
            entities=self.entity_memory,
            related=self._related_namespaces(),
            shown=self.contextual.shown,
        )
        return assemble_context(
            self._space, sources, task_description, additional_context, max_items, explain=explain
        )

    def build_context_for_task(
        self,
        task_description: str,
        agent_role: str | None = None,
        additional_context: str | None = None,
        max_items: int = 10,
        *,
        knowledge_scope: str | None = None,
    ) -> str:
        """Context for a task: background, recent context, relevant knowledge, known entities
        and related memories (each section only when it has content; "" when none has).
        ``agent_role`` and ``knowledge_scope``: see :meth:`build_context_report`."""
        return self._context(
            task_description, agent_role, additional_context, max_items, knowledge_scope, False
        ).text

    # ------------------------------------------------------------------ reading
    def get_agent_history(self, agent_role: str, limit: int = 20) -> list[str]:
        """An agent's history: short-term items newest first, then long-term items newest first."""
        check_content(agent_role, "agent_role")
        history: list[str] = []
        if self.short_term is not None:
            found = self.short_term.retrieve(filters={"agent_id": agent_role}, limit=limit)
            history.extend(item.content for item in (found if isinstance(found, list) else []))
        if self.long_term is not None and len(history) < limit:
            rows = self.long_term.search(
                "", limit=limit - len(history), filters={"agent_id": agent_role}
            )
            history.extend(item.content for item in rows)
        return history[:limit]

    def get_user_context(self, user_id: str) -> str:
        """A user's context ("" when user memory is disabled)."""
        return self.user_memory.get_user_context(user_id) if self.user_memory is not None else ""

    def get_summary(self) -> str:
        """Summaries of short-term and long-term memory, and how many entities are tracked."""
        parts: list[str] = []
        if self.short_term is not None:
            parts.append(self.short_term.summarize())
        if self.long_term is not None:
            parts.append(self.long_term.consolidate())
        if self.entity_memory is not None and len(self.entity_memory) > 0:
            parts.append(f"Tracking {len(self.entity_memory.entities)} entities")
        return "\n\n".join(parts)

    # ------------------------------------------------------------------ resetting
    def reset_short_term(self) -> None:
        """Clear short-term memory only."""
        if self.short_term is not None:
            self.short_term.clear()

    def reset_all(self) -> None:
        """Clear every tier (user memory included), the entity graph and the persisted rows."""
        with self._space.transaction() as tx:
            for tier in (self.short_term, self.long_term, self.entity_memory, self.contextual):
                if tier is not None:
                    tier.clear()
            if self.user_memory is not None:
                # Every stored user, not only those this process has touched.
                stored = set(self.user_memory.user_ids())
                users = stored | set(self.user_memory.user_memories)
                for user_id in sorted(users) if self.user_id is None else [self.user_id]:
                    self.user_memory.clear_user_memory(user_id)
            # Hand-added relations and the merge log have no memory row to clear.
            tx.forget_graph(self.user_id or "")
