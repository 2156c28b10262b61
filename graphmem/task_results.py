"""Task results: the checked record of one, and how the facade writes it to its tiers.

:class:`TaskWriter` is :class:`~graphmem.cortex.CortexMemory`'s write path for task
results: one text per result shown by every tier that keeps it, analysed once, and the
tiers' capacity policies applied in the same transaction.

Example:
    >>> task = task_record({"task_description": "Audit", "result": "Acme passed",
    ...                     "agent_role": "QA", "importance": 0.9})
    >>> task.long_term()["content"], task.short_term()["content"]
    ('Acme passed', 'Task completed: Audit - Result: Acme passed')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from .errors import InvalidArgumentError, InvalidArgumentTypeError, MemoryNotFound
from .index.writer import NewItem, NewText, new_result_id
from .items import (
    MemoryItem,
    check_content,
    check_event_time,
    check_importance,
    check_optional_id,
    encode_metadata,
)
from .memories import ContextualMemory, EntityMemory, LongTermMemory, ShortTermMemory, Tier
from .space import MemorySpace

if TYPE_CHECKING:
    from .extract.texts import Doc
    from .extract.workers import AnalysisPool
    from .items import StoredMemory
    from .space import Work

__all__ = [
    "Facade",
    "PreparedTasks",
    "TaskRecord",
    "TaskWriter",
    "check_dedupe_key",
    "result_keys",
    "task_record",
    "task_results_list",
]

#: Importance from which a task result is also kept in long-term memory.
_LONG_TERM_TASK_THRESHOLD = 0.7


class Facade(Protocol):
    """What :class:`TaskWriter` reads of its facade (:class:`~graphmem.cortex.CortexMemory`):
    its user and tiers, and the memory space they live in."""

    user_id: str | None
    short_term: ShortTermMemory | None
    long_term: LongTermMemory | None
    entity_memory: EntityMemory | None
    contextual: ContextualMemory

    @property
    def space(self) -> MemorySpace: ...


@dataclass
class PreparedTasks:
    """Task results ready to write: their ids, those not stored yet (``pending``, by
    position) with their texts, and the texts' analysis (a function that waits for it)."""

    tasks: list[TaskRecord]
    ids: list[str]
    pending: list[int]
    pairs: dict[int, list[NewText]]
    flat: list[NewText]
    docs: Callable[[], list[Doc | None]]


@dataclass(frozen=True)
class TaskRecord:
    """A validated task result, and what each tier stores of it (``save`` keyword arguments)."""

    task: str
    result: str
    agent: str
    importance: float
    metadata: dict[str, Any]
    #: ``task_metadata["conversation_id"]``, stored in the items' own column so that search
    #: can filter by it and rank a turn's neighbours (as every tier does for its own saves).
    conversation_id: str | None
    #: When the task was done (None: now), every item's ``timestamp``.
    timestamp: datetime | None = None
    #: Saving again with this key changes nothing (see :meth:`CortexMemory.save_task_result`).
    dedupe_key: str | None = None
    #: ``task_metadata["task_id"]``, likewise every item's ``task_id`` (``forget`` filters by it).
    task_id: str | None = None

    def _fields(self) -> dict[str, Any]:
        return {
            "metadata": self.metadata,
            "agent_id": self.agent,
            "conversation_id": self.conversation_id,
            "task_id": self.task_id,
            "timestamp": self.timestamp,
        }

    def short_term(self) -> dict[str, Any]:
        """Calute's short-term line (a text of its own)."""
        content = f"Task completed: {self.task[:100]} - Result: {self.result[:200]}"
        return {"content": content, **self._fields()}

    def long_term(self) -> dict[str, Any] | None:
        """None below the long-term threshold."""
        if self.importance < _LONG_TERM_TASK_THRESHOLD:
            return None
        return self.contextual()

    def entity(self) -> dict[str, Any]:
        """Calute's entity-tier content, ``"{task} {result}"``: the whole of the result's text."""
        return {"content": f"{self.task} {self.result}", **self._fields()}

    def contextual(self) -> dict[str, Any]:
        return {"content": self.result, **self._fields(), "importance": self.importance}


_TASK_FIELDS = (
    "task_description",
    "result",
    "agent_role",
    "importance",
    "task_metadata",
    "timestamp",
    "dedupe_key",
)
#: Longest ``dedupe_key`` (its column holds 512 characters).
_MAX_KEY_CHARS = 512


def task_results_list(results: object) -> list[Any]:
    """The records of :meth:`CortexMemory.save_task_results` as a list; anything but an
    iterable of them (a number, None, a string, a single dict) is refused by name."""
    if isinstance(results, str | bytes | Mapping) or not isinstance(results, Iterable):
        raise InvalidArgumentTypeError(
            f"results must be an iterable of dicts, got {type(results).__name__}"
        )
    return list(results)


def task_record(record: object, where: str = "") -> TaskRecord:
    """Validate the arguments of one task result (``where`` prefixes the names in errors:
    ``"results[3]."`` for :meth:`CortexMemory.save_task_results`)."""
    if not isinstance(record, Mapping):
        raise InvalidArgumentTypeError(
            f"{where.rstrip('.')} must be a dict, got {type(record).__name__}"
        )
    unknown = sorted(set(record) - set(_TASK_FIELDS))
    if unknown:
        raise InvalidArgumentError(f"{where.rstrip('.')}: unknown key(s) {', '.join(unknown)}")
    task = check_content(record.get("task_description"), f"{where}task_description")
    result = check_content(record.get("result"), f"{where}result")
    agent = check_content(record.get("agent_role"), f"{where}agent_role")
    importance = check_importance(record.get("importance", 0.5), f"{where}importance")
    extra = record.get("task_metadata")
    if extra is not None and not isinstance(extra, dict):
        raise InvalidArgumentTypeError(
            f"{where}task_metadata must be a dict or None, got {type(extra).__name__}"
        )
    encode_metadata(extra or {}, f"{where}task_metadata")
    conversation = check_optional_id(
        (extra or {}).get("conversation_id"), f"{where}task_metadata['conversation_id']"
    )
    task_id = check_optional_id((extra or {}).get("task_id"), f"{where}task_metadata['task_id']")
    when = check_event_time(record.get("timestamp"), f"{where}timestamp")
    key = check_dedupe_key(record.get("dedupe_key"), f"{where}dedupe_key")
    metadata = {**(extra or {}), "task": task[:100], "agent_role": agent}
    return TaskRecord(task, result, agent, importance, metadata, conversation, when, key, task_id)


def check_dedupe_key(value: object, name: str = "dedupe_key") -> str | None:
    """A caller's idempotency key: None, or a non-blank str of at most 512 characters.

    Example:
        >>> check_dedupe_key("crm-sync-2025-03-03")
        'crm-sync-2025-03-03'
    """
    if value is None:
        return None
    key = check_content(value, name)
    if len(key) > _MAX_KEY_CHARS:
        raise InvalidArgumentError(f"{name} is {len(key):,} characters; the limit is 512")
    return key


def result_keys(
    tenant: str, tasks: list[TaskRecord], ids: list[str]
) -> list[tuple[str, str | None, str]]:
    """``(tenant, dedupe_key, result id)`` of each task result."""
    return [(tenant, task.dedupe_key, rid) for task, rid in zip(tasks, ids, strict=True)]


#: The namespace of the facade's short-term lines ("Task completed: ..."), and the metadata
#: keys tiers add to a task result's (entity names, importance, context, promotion mark).
_SHORT_TERM = ShortTermMemory.default_namespace
_TIER_METADATA = ("entities", "importance", "context", "promoted", "source")


class TaskWriter:
    """Writes the task results of one facade (its tiers are read from it at each call)."""

    def __init__(self, facade: Facade) -> None:
        self._facade = facade

    def tiers(self) -> dict[str, Tier]:
        """The facade's own tiers (those that exist), by namespace, in the seed's order."""
        facade = self._facade
        tiers = [
            facade.short_term,
            facade.long_term,
            facade.entity_memory,
            facade.contextual.short_term,
            facade.contextual.long_term,
        ]
        return {t.namespace: t for t in tiers if t is not None}

    def tier_of(self, namespace: str) -> Tier:
        """The facade's tier of ``namespace``."""
        return self.tiers()[namespace]

    def write(
        self,
        tasks: list[TaskRecord],
        result_ids: list[str] | None = None,
        before: Callable[[Work], dict[str, str]] | None = None,
    ) -> list[str]:
        """Write task results in one transaction: each one text ("task result", analysed
        once, task and result apart) shown by every tier that keeps it, and Calute's
        short-term line as a text of its own.

        The rows are exactly those of one ``save_task_result`` after another: texts are
        indexed in order (names one result makes known are recognised in the next), and a
        tier that evicts by value does so right after the result that fills it. Texts and
        items go in with one statement per kind for each run of results between two such
        evictions; first-in-first-out tiers evict once at the end, which leaves the same rows.

        Returns the result ids (``result_ids``, else new ones; a result whose dedupe key is
        stored already, or repeats an earlier one's, is not written: its id is the stored
        one). ``before`` runs first in the transaction (:meth:`CortexMemory.update` deletes the old
        version there) and returns memory ids to keep, by tier namespace.
        """
        return self.store(self.prepare(tasks, result_ids, before), before)

    def prepare(
        self,
        tasks: list[TaskRecord],
        result_ids: list[str] | None = None,
        before: Callable[[Work], dict[str, str]] | None = None,
        pool: AnalysisPool | None = None,
    ) -> PreparedTasks:
        """The first half of :meth:`write`: the texts of the results not stored yet,
        their analysis started (in ``pool``'s workers when given)."""
        writer = self._facade.space.writer
        ids = list(result_ids) if result_ids is not None else [new_result_id() for _ in tasks]
        known: list[str | None] = [None] * len(tasks)
        # (an update's old version still holds its key until ``before``; without keys, one
        # transaction per call)
        if before is None and any(task.dedupe_key is not None for task in tasks):
            with self._facade.space.reading() as tx:  # no analysis of what is stored already
                keys = result_keys(self._facade.user_id or "", tasks, ids)
                known = tx.known_results(keys, writing=False)
        pending = [i for i, k in enumerate(known) if k is None]
        for i, k in enumerate(known):
            ids[i] = k or ids[i]
        pairs = {i: self._texts(tasks[i], ids[i]) for i in pending}
        flat = [text for i in pending for text in pairs[i]]
        # outside the database lock, in nlp.pipe batches
        return PreparedTasks(tasks, ids, pending, pairs, flat, writer.analyse_later(flat, pool))

    def store(
        self,
        prepared: PreparedTasks,
        before: Callable[[Work], dict[str, str]] | None = None,
    ) -> list[str]:
        """The second half of :meth:`write`: the one write transaction."""
        tasks, ids, pending, pairs = prepared.tasks, prepared.ids, prepared.pending, prepared.pairs
        analysed = iter(prepared.docs())
        docs = {id(text): next(analysed) for text in prepared.flat}
        at_end, at_once = self._capacity_policies()
        with self._facade.space.transaction() as tx, tx.deferred_writes():
            kept = before(tx) if before is not None else {}
            for text in prepared.flat:
                for ni in text.items:
                    ni.item.memory_id = kept.get(ni.namespace, ni.item.memory_id)
            known = tx.known_results(result_keys(self._facade.user_id or "",
                [tasks[i] for i in pending], [ids[i] for i in pending]))  # fmt: skip
            for i, k in zip(list(pending), known, strict=True):
                if k is not None:  # another writer stored it meanwhile
                    ids[i] = k
                    pending.remove(i)
            room = self._rooms(tx, at_once)
            run: list[NewText] = []
            for pair in (pairs[i] for i in pending):
                run.extend(pair)
                full = []
                for tier in {self.tier_of(ni.namespace) for t in pair for ni in t.items}:
                    if tier in room:
                        room[tier] -= 1
                        if room[tier] < 0:
                            full.append(tier)
                if full:
                    tx.write(run, [docs[id(t)] for t in run])
                    run = []
                    for tier in full:
                        tier.evict(tx)
                    room.update(self._rooms(tx, full))
            tx.write(run, [docs[id(t)] for t in run])
            for tier in at_end:
                tier.evict(tx)
        return ids

    @staticmethod
    def _rooms(tx: Work, tiers: list[Tier]) -> dict[Tier, int]:
        """How many more items each bounded tier holds before it evicts."""
        rooms = {tier: tier.capacity_room(tx) for tier in tiers}
        return {tier: room for tier, room in rooms.items() if room is not None}

    def _capacity_policies(self) -> tuple[list[Tier], list[Tier]]:
        """The bounded tiers a batch evicts from once, at its end (first in, first out, and
        no eviction can take a text another result of the batch still needs: the short-term
        lines, contextual items whose text the entity tier keeps), and those that must evict
        as soon as they are full (by value: long-term memory; first in, first out otherwise)."""
        at_end: list[Tier] = []
        at_once: list[Tier] = []
        if self._facade.short_term is not None:
            at_end.append(self._facade.short_term)
        if self._facade.entity_memory is not None:
            at_end.append(self._facade.contextual.short_term)
        else:
            at_once.append(self._facade.contextual.short_term)
        for tier in (self._facade.long_term, self._facade.contextual.long_term):
            if tier is not None:
                at_once.append(tier)
        return at_end, at_once

    def _texts(self, task: TaskRecord, result_id: str) -> list[NewText]:
        """The texts of one task result (all of the save ``result_id``): the short-term line
        (when that tier exists) and the result, whose head is the task when the entity tier
        shows it."""
        out: list[NewText] = []
        if self._facade.short_term is not None:
            item = self._facade.short_term.prepare(**task.short_term())
            line = self._facade.short_term.as_new_text(item)
            line.result_id, line.dedupe_key = result_id, task.dedupe_key
            out.append(line)
        items: list[NewItem] = []
        long_term = task.long_term()
        if self._facade.long_term is not None and long_term is not None:
            items.append(
                self._facade.long_term.as_new_item(
                    self._facade.long_term.prepare(**long_term), "body"
                )
            )
        entity = self._facade.entity_memory
        if entity is not None:
            items.append(entity.as_new_item(entity.prepare(**task.entity())))
        part, item = self._facade.contextual.routed_item(task.contextual())
        items.append(part.as_new_item(item, "body"))
        out.append(
            NewText(
                head=task.task if entity is not None else "",
                body=task.result,
                items=items,
                index=True,
                relations=entity is not None and entity.extract_relations,
                result_id=result_id,
                dedupe_key=task.dedupe_key,
            )
        )
        return out

    def stored(self, tx: Work, result_id: str, namespaces: list[str]) -> dict[str, Any]:
        """The :meth:`~CortexMemory.save_task_result` arguments a stored task result was
        saved with (its items in ``namespaces``, the facade's)."""
        rows = tx.result_items([result_id], namespaces, tenant=self._facade.user_id)
        if not rows:
            raise MemoryNotFound(f"no result {result_id!r} in this memory")
        first = rows[0][1].metadata
        if "task" not in first or "agent_role" not in first:
            raise InvalidArgumentError(
                f"{result_id!r} is not a task result; update it with its tier's update()"
            )
        line = (
            self._facade.short_term.namespace
            if self._facade.short_term is not None
            else _SHORT_TERM
        )
        texts = [(row, item) for row, item in rows if row.namespace != line]
        if not texts:
            raise InvalidArgumentError(
                f"{result_id!r}: only its short-term line is left (its result text was "
                "evicted); save it again"
            )
        row, item = texts[0]
        head, body = tx.text_parts(row.text_id) or ("", item.content)
        # The task metadata as given: the short-term line keeps it as it is; the other tiers
        # add keys of their own.
        lines = [i for r, i in rows if r.namespace == line]
        metadata = dict(lines[0].metadata) if lines else self._given_metadata(texts)
        metadata.pop("task", None)
        metadata.pop("agent_role", None)
        importances = [
            i.metadata["importance"]
            for r, i in texts
            if r.view == "body" and isinstance(i.metadata.get("importance"), int | float)
        ]
        return {
            "task_description": head or first["task"],
            "result": body,
            "agent_role": first["agent_role"],
            # Kept by long-term and contextual memory; when neither has it any more, the default.
            "importance": importances[0] if importances else 0.5,
            "task_metadata": metadata or None,
            "timestamp": item.timestamp,
            "dedupe_key": row.dedupe_key,
        }

    def _given_metadata(self, items: list[tuple[StoredMemory, MemoryItem]]) -> dict[str, Any]:
        """The task metadata as the caller gave it, from the tier items of one result: each
        key from an item of a tier that adds no key of that name (the caller's own
        ``entities`` from the long-term item, its ``importance`` from the entity item)."""
        adds: dict[str, set[str]] = {}
        if self._facade.entity_memory is not None:
            adds[self._facade.entity_memory.namespace] = {"entities"}
        if self._facade.long_term is not None:
            adds[self._facade.long_term.namespace] = {"importance"}
        for tier in (self._facade.contextual.short_term, self._facade.contextual.long_term):
            adds[tier.namespace] = {"context", "importance", "promoted", "source"}
        metadata: dict[str, Any] = {}
        for row, item in items:
            added = adds.get(row.namespace, set(_TIER_METADATA))
            for key, value in item.metadata.items():
                if key not in added:
                    metadata.setdefault(key, value)
        return metadata
