"""``AsyncCortexMemory``: the facade for asyncio code, without blocking its event loop.

Each method is a coroutine twin of :class:`~graphmem.cortex.CortexMemory`'s method of the same
name and arguments. The synchronous engine does the work in worker threads (it is thread-safe:
see docs/reliability.md): reads run in a small thread pool, so several go on at once; writes
(saves, deletes, declarations, resets) go one at a time, in the order they were awaited, to
one writer thread, which several ``AsyncCortexMemory`` of one storage may share
(``writer=``). The event loop only waits.

Example:
    >>> import asyncio
    >>> async def main():
    ...     async with AsyncCortexMemory() as memory:
    ...         await memory.save_task_result("Audit", "Acme passed the audit", "QA")
    ...         return [item.content for item in await memory.search("Did Acme pass?")]
    >>> asyncio.run(main())
    ['Acme passed the audit']
"""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from .errors import InvalidArgumentTypeError, MemoryClosedError

if TYPE_CHECKING:  # the engine loads with the first memory (an MCP server answers sooner)
    from .cortex import CortexMemory
    from .extract.entity_patterns import PatternSource
    from .extract.extractor import Extractor
    from .items import MemoryItem
    from .retrieval.context import ContextReport
    from .retrieval.search import Hit

__all__ = ["AsyncCortexMemory", "warm_up", "writer_thread"]

T = TypeVar("T")

#: Reads that may run at once for one memory (the engine serialises what must be).
READ_THREADS = 4


def writer_thread() -> ThreadPoolExecutor:
    """A one-thread executor: the writes given to it run one at a time, in order.

    Example:
        >>> writer = writer_thread()
        >>> writer.submit(sum, [1, 2]).result()
        3
        >>> writer.shutdown()
    """
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphmem-writer")


def warm_up() -> None:
    """Load the NLP models every memory shares (spaCy, the relation models) by analysing one
    text in a throwaway in-memory facade; then move every object alive (the models' millions
    among them) out of the garbage collector's way (:func:`gc.freeze`): a full collection,
    which holds the GIL and so stops the event loop too, walked them for up to 0.7 s here.
    """
    from .cortex import CortexMemory

    CortexMemory().save_task_result(
        "Warm up", "Alice Johnson, the CTO of Acme Corp, moved to Berlin in May.", "graphmem"
    )
    gc.collect()
    gc.freeze()


class _Cancelled(Exception):
    """Rolls back a write whose caller was cancelled (never seen by callers)."""


def _roll_back_if(cancelled: threading.Event) -> None:
    if cancelled.is_set():
        raise _Cancelled


class AsyncCortexMemory:
    """:class:`~graphmem.cortex.CortexMemory` with coroutine methods.

    Args:
        memory: the facade to serve; else one is built from ``**options`` (the
            ``CortexMemory`` constructor's arguments: ``persistence_path``, ``storage``,
            ``user_id``...).
        writer: the executor writes run in (default: a thread of this memory's own, see
            :func:`writer_thread`); pass one to serialise the writes of several memories.
        readers: the executor reads run in (default: :data:`READ_THREADS` threads of its own).

    ``sync`` is the facade itself; :meth:`read` and :meth:`write` run any call of it (an
    entity query, say) in the right thread: ``await memory.read(lambda m:
    m.entity_memory.find(predicate="works_at"))``. Close it (or use ``async with``) to stop
    its threads; executors passed in are left running.
    """

    def __init__(
        self,
        memory: CortexMemory | None = None,
        *,
        writer: ThreadPoolExecutor | None = None,
        readers: ThreadPoolExecutor | None = None,
        **options: Any,
    ) -> None:
        from .cortex import CortexMemory

        if memory is not None and options:
            raise InvalidArgumentTypeError(
                f"give a CortexMemory or its options, not both ({', '.join(sorted(options))})"
            )
        if memory is not None and not isinstance(memory, CortexMemory):
            raise InvalidArgumentTypeError(
                f"memory must be a CortexMemory or None, got {type(memory).__name__}"
            )
        self.sync: CortexMemory = memory if memory is not None else CortexMemory(**options)
        self._writer = writer if writer is not None else writer_thread()
        self._readers = (
            readers
            if readers is not None
            else ThreadPoolExecutor(max_workers=READ_THREADS, thread_name_prefix="graphmem-reader")
        )
        self._own = [
            executor
            for executor, given in ((self._writer, writer), (self._readers, readers))
            if given is None
        ]
        self._closed = False

    def __repr__(self) -> str:
        return f"Async{self.sync!r}"

    async def __aenter__(self) -> AsyncCortexMemory:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Wait for the calls under way, then stop the threads this memory started; a
        later call raises :class:`~graphmem.errors.MemoryClosedError`."""
        self._closed = True
        for executor in self._own:
            await asyncio.get_running_loop().run_in_executor(None, executor.shutdown)

    async def warm_up(self) -> None:
        """Load the NLP models now (in the writer thread), not at the first save.

        Loading spaCy and the relation models takes a second or two, and holds the GIL for
        parts of it, which no thread can hand back to the event loop: call this at startup,
        before serving, so that no request waits for it. Writes nothing to this memory; see
        :func:`warm_up` (it also freezes the objects loaded out of the garbage collector).
        """
        await self.write(lambda m: warm_up())

    # ------------------------------------------------------------------ running calls
    def _check_open(self) -> None:
        if self._closed:
            raise MemoryClosedError(f"{self!r} was closed (aclose); open a new one")

    async def read(self, call: Callable[[CortexMemory], T]) -> T:
        """``call(self.sync)`` in a reader thread (several at once)."""
        self._check_open()
        return await asyncio.get_running_loop().run_in_executor(self._readers, call, self.sync)

    async def write(self, call: Callable[[CortexMemory], T]) -> T:
        """``call(self.sync)`` in the writer thread (one at a time, in order), in one
        transaction. Cancelled (``asyncio.wait_for`` timing out, a task cancelled), the call
        is rolled back unless it had committed already: a caller that got no id finds its
        save stored only if it was acknowledged in the same instant (save with a
        ``dedupe_key`` to find it again: saving it once more returns the stored id)."""
        self._check_open()
        cancelled = threading.Event()
        space = self.sync.space

        def guarded(memory: CortexMemory) -> T:
            if cancelled.is_set():
                raise _Cancelled
            with space.transaction() as tx:
                tx.before_commit(lambda: _roll_back_if(cancelled))
                return call(memory)

        try:
            return await asyncio.get_running_loop().run_in_executor(
                self._writer, guarded, self.sync
            )
        except asyncio.CancelledError:
            cancelled.set()
            raise

    # ------------------------------------------------------------------ saving
    async def save_task_result(
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
        """See :meth:`CortexMemory.save_task_result`."""
        return await self.write(
            lambda m: m.save_task_result(
                task_description,
                result,
                agent_role,
                importance,
                task_metadata,
                timestamp=timestamp,
                dedupe_key=dedupe_key,
            )
        )

    async def save_task_results(
        self,
        results: Iterable[Mapping[str, Any]],
        *,
        batch_size: int = 256,
        progress: bool = False,
        workers: int | None = None,
    ) -> list[str]:
        """See :meth:`CortexMemory.save_task_results` (the whole call is one write)."""
        from .cortex import task_results_list

        records = task_results_list(results)
        return await self.write(
            lambda m: m.save_task_results(
                records, batch_size=batch_size, progress=progress, workers=workers
            )
        )

    async def save_agent_interaction(
        self,
        agent_role: str,
        action: str,
        content: str,
        importance: float = 0.3,
        *,
        timestamp: datetime | str | None = None,
    ) -> str:
        """See :meth:`CortexMemory.save_agent_interaction`."""
        return await self.write(
            lambda m: m.save_agent_interaction(
                agent_role, action, content, importance, timestamp=timestamp
            )
        )

    async def save_cortex_decision(
        self,
        decision: str,
        context: str,
        outcome: str | None = None,
        importance: float = 0.7,
        *,
        timestamp: datetime | str | None = None,
    ) -> str:
        """See :meth:`CortexMemory.save_cortex_decision`."""
        return await self.write(
            lambda m: m.save_cortex_decision(
                decision, context, outcome, importance, timestamp=timestamp
            )
        )

    # ------------------------------------------------------------------ forgetting
    async def delete(self, result_id: str) -> bool:
        """See :meth:`CortexMemory.delete`."""
        return await self.write(lambda m: m.delete(result_id))

    async def forget(
        self,
        *,
        agent_role: str | None = None,
        user_id: str | None = None,
        before: datetime | str | None = None,
        conversation_id: str | None = None,
        task_id: str | None = None,
    ) -> int:
        """See :meth:`CortexMemory.forget`."""
        return await self.write(
            lambda m: m.forget(
                agent_role=agent_role,
                user_id=user_id,
                before=before,
                conversation_id=conversation_id,
                task_id=task_id,
            )
        )

    async def update(
        self,
        result_id: str,
        *,
        result: str | None = None,
        task_description: str | None = None,
        importance: float | None = None,
        task_metadata: dict[str, Any] | None = None,
    ) -> str:
        """See :meth:`CortexMemory.update`."""
        return await self.write(
            lambda m: m.update(
                result_id,
                result=result,
                task_description=task_description,
                importance=importance,
                task_metadata=task_metadata,
            )
        )

    # ------------------------------------------------------------------ entity types
    async def use_extraction(
        self, *, spacy_model: str | None = None, extractor: Extractor | None = None
    ) -> None:
        """See :meth:`CortexMemory.use_extraction`. It runs in the writer thread, so the saves
        awaited before it analyse with the old extraction and those awaited after it with
        the new, but outside a transaction: loading a pipeline takes seconds and stores
        nothing."""
        self._check_open()
        await asyncio.get_running_loop().run_in_executor(
            self._writer,
            lambda: self.sync.use_extraction(spacy_model=spacy_model, extractor=extractor),
        )

    async def declare_entities(self, patterns: PatternSource) -> int:
        """See :meth:`CortexMemory.declare_entities`."""
        return await self.write(lambda m: m.declare_entities(patterns))

    async def relabel(self, name: str, label: str) -> str:
        """See :meth:`CortexMemory.relabel`."""
        return await self.write(lambda m: m.relabel(name, label))

    async def reset_short_term(self) -> None:
        """See :meth:`CortexMemory.reset_short_term`."""
        await self.write(lambda m: m.reset_short_term())

    async def reset_all(self) -> None:
        """See :meth:`CortexMemory.reset_all`."""
        await self.write(lambda m: m.reset_all())

    # ------------------------------------------------------------------ reading
    async def search(
        self, query: str, limit: int = 10, agent_role: str | None = None
    ) -> list[MemoryItem]:
        """See :meth:`CortexMemory.search`."""
        return await self.read(lambda m: m.search(query, limit, agent_role))

    async def search_hits(
        self, query: str, limit: int = 10, agent_role: str | None = None
    ) -> list[Hit]:
        """See :meth:`CortexMemory.search_hits`."""
        return await self.read(lambda m: m.search_hits(query, limit, agent_role))

    async def build_context_report(
        self,
        task_description: str,
        agent_role: str | None = None,
        additional_context: str | None = None,
        max_items: int = 10,
        *,
        knowledge_scope: str | None = None,
    ) -> ContextReport:
        """See :meth:`CortexMemory.build_context_report`."""
        return await self.read(
            lambda m: m.build_context_report(
                task_description,
                agent_role,
                additional_context,
                max_items,
                knowledge_scope=knowledge_scope,
            )
        )

    async def build_context_for_task(
        self,
        task_description: str,
        agent_role: str | None = None,
        additional_context: str | None = None,
        max_items: int = 10,
        *,
        knowledge_scope: str | None = None,
    ) -> str:
        """See :meth:`CortexMemory.build_context_for_task`."""
        return await self.read(
            lambda m: m.build_context_for_task(
                task_description,
                agent_role,
                additional_context,
                max_items,
                knowledge_scope=knowledge_scope,
            )
        )

    async def get_agent_history(self, agent_role: str, limit: int = 20) -> list[str]:
        """See :meth:`CortexMemory.get_agent_history`."""
        return await self.read(lambda m: m.get_agent_history(agent_role, limit))

    async def get_user_context(self, user_id: str) -> str:
        """See :meth:`CortexMemory.get_user_context`."""
        return await self.read(lambda m: m.get_user_context(user_id))

    async def get_summary(self) -> str:
        """See :meth:`CortexMemory.get_summary`."""
        return await self.read(lambda m: m.get_summary())
