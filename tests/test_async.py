"""AsyncCortexMemory: concurrent saves and reads on one memory never block the event loop."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from graphmem import CortexMemory, InvalidArgumentTypeError, SQLiteStorage
from graphmem.aio import AsyncCortexMemory, writer_thread

pytestmark = pytest.mark.timeout(600)

TASKS = 50
#: The loop's timer asks to wake every TICK seconds; a blocked loop wakes late.
TICK = 0.01
#: The longest late wake-up tolerated (a save holds the loop for none of its ~50 ms; a
#: blocked loop would be late by whole saves, 50 x 50 ms). Generous: the machine is shared.
MAX_GAP = 0.5


async def _ticker(stop: asyncio.Event, gaps: list[float]) -> None:
    last = time.perf_counter()
    while not stop.is_set():
        await asyncio.sleep(TICK)
        now = time.perf_counter()
        gaps.append(now - last - TICK)
        last = now


@pytest.mark.slow
def test_fifty_concurrent_tasks_save_and_read_while_the_loop_keeps_ticking(tmp_path: Path) -> None:
    storage = SQLiteStorage(str(tmp_path / "m.db"))

    async def agent(memory: AsyncCortexMemory, n: int) -> tuple[str, list[str], str]:
        word = f"zq{n}x"  # one word only this task's result holds
        result = f"Audit {word} of Lumen Robotics passed; Maya Lindqvist signed it."
        await memory.save_task_result(f"Audit {n}", result, f"Auditor {n % 5}", importance=0.8)
        found = [item.content for item in await memory.search(word, limit=5)]
        context = await memory.build_context_for_task(f"Summarise audit {word}")
        return result, found, context

    async def main() -> tuple[list[tuple[str, list[str], str]], list[float], float]:
        stop, gaps = asyncio.Event(), []
        async with AsyncCortexMemory(storage=storage, user_id="alice") as memory:
            await memory.warm_up()
            ticking = asyncio.create_task(_ticker(stop, gaps))
            started = time.perf_counter()
            outcomes = await asyncio.gather(*(agent(memory, n) for n in range(TASKS)))
            elapsed = time.perf_counter() - started
            stop.set()
            await ticking
        return outcomes, gaps, elapsed

    try:
        outcomes, gaps, elapsed = asyncio.run(main())
        for result, found, context in outcomes:
            # Its own save is read back first, once (meaning adds the other, alike audits).
            assert found[0] == result and found.count(result) == 1
            assert result[:150] in context
        assert max(gaps) < MAX_GAP, f"the loop was blocked for {max(gaps):.3f} s"
        # It ticked all along the run, not only before or after it.
        assert len(gaps) >= 0.3 * elapsed / TICK, (len(gaps), elapsed)
        print(
            f"\n{TASKS} tasks in {elapsed:.2f} s; {len(gaps)} ticks, max gap {max(gaps) * 1000:.1f} ms"
        )
        assert len(CortexMemory(storage=storage, user_id="alice").long_term or []) == TASKS
        assert CortexMemory(storage=storage, user_id="bob").search("Lumen Robotics") == []
    finally:
        storage.close()


def test_writes_of_several_memories_share_one_writer_in_order() -> None:
    storage = SQLiteStorage()
    writer = writer_thread()

    async def main() -> list[str]:
        memories = [
            AsyncCortexMemory(storage=storage, user_id=user, writer=writer) for user in "ab"
        ]
        await asyncio.gather(
            *(
                memories[n % 2].save_agent_interaction("Bot", "noted", f"step {n}", importance=0.9)
                for n in range(10)
            )
        )
        history = await memories[0].get_agent_history("Bot", limit=50)
        for memory in memories:
            await memory.aclose()
        return history

    try:
        history = asyncio.run(main())
        # Short-term newest first, then long-term newest first: in the order awaited.
        steps = [f"[Bot] noted: step {n}" for n in range(8, -1, -2)]
        assert history == steps + steps
        assert writer.submit(lambda: "still running").result() == "still running"
    finally:
        writer.shutdown()
        storage.close()


def test_entity_queries_run_through_read() -> None:
    async def main() -> list[str]:
        async with AsyncCortexMemory() as memory:
            await memory.save_task_result("Hire", "Maya Lindqvist joined Lumen Robotics.", "HR")
            edges = await memory.read(lambda m: m.entity_memory.find(predicate="works_at"))  # type: ignore[union-attr]
            return [f"{e.subject} {e.predicate} {e.object}" for e in edges]

    assert asyncio.run(main()) == ["Maya Lindqvist works_at Lumen Robotics"]


def test_bad_arguments_raise_the_facades_errors() -> None:
    with pytest.raises(InvalidArgumentTypeError, match="not both"):
        AsyncCortexMemory(CortexMemory(), user_id="alice")
    with pytest.raises(InvalidArgumentTypeError, match="memory must be a CortexMemory"):
        AsyncCortexMemory("memory.db")  # type: ignore[arg-type]

    async def main() -> None:
        async with AsyncCortexMemory() as memory:
            with pytest.raises(InvalidArgumentTypeError, match="query must be a str"):
                await memory.search(42)  # type: ignore[arg-type]
            await memory.save_task_result("Audit", "Acme passed", "QA")  # still serving
            assert [i.content for i in await memory.search("Acme")] == ["Acme passed"]

    asyncio.run(main())
