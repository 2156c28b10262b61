"""Threads sharing one persistent CortexMemory: no exception, nothing lost, graph == tables.

Eight threads each make 500 saves (``save_task_result`` and ``save_agent_interaction``, some
important enough for long-term memory) on ONE ``CortexMemory`` backed by a file, and search
and build contexts as they go, while two more threads read the entity graph (related entities,
paths, relationships, subgraphs) the whole time. Calute crashed here with "dictionary changed
size during iteration". Afterwards all 4,000 items are present, and the process's in-memory
graph equals the graph a fresh ``SQLiteStorage`` builds from the same file.
"""

from __future__ import annotations

import random
import threading
import traceback

import pytest
from _workers import PEOPLE, check_database, graph_snapshot, sentence

from graphmem import CortexMemory, SQLiteStorage

THREADS = 8
PER_THREAD = 500


def _plan(thread: int) -> list[tuple[str, str, str, float]]:
    """(kind, first text, second text, importance) of one thread's saves."""
    rng = random.Random(thread)
    plan = []
    for i in range(PER_THREAD):
        if i % 20 == 0:
            text = sentence(rng, f"t{thread} task {i}")[0]
            plan.append(("task", f"t{thread} task {i}", text, 0.8 if i % 40 == 0 else 0.5))
        elif i % 20 == 10:
            text = sentence(rng, f"t{thread} call {i}")[0]
            plan.append(("interaction", "reported", text, 0.65))
        else:
            plan.append(("interaction", "pinged", f"status t{thread} n{i} nominal", 0.3))
    return plan


@pytest.mark.slow
def test_eight_threads_share_one_persistent_cortex_memory(tmp_path, monkeypatch):
    monkeypatch.setenv("WRITE_MEMORY", "1")
    path = tmp_path / "cortex.db"
    memory = CortexMemory(
        persistence_path=str(path), short_term_capacity=10_000, long_term_capacity=10_000
    )
    assert memory.storage is not None
    plans = {t: _plan(t) for t in range(THREADS)}
    errors: list[str] = []
    writers_done = threading.Event()
    reads = [0]

    def writer(thread: int) -> None:
        role = f"agent-{thread}"
        try:
            for i, (kind, first, second, importance) in enumerate(plans[thread]):
                if kind == "task":
                    memory.save_task_result(first, second, role, importance=importance)
                else:
                    memory.save_agent_interaction(role, first, second, importance=importance)
                if i % 50 == 25:
                    memory.build_context_for_task(f"What did {PEOPLE[thread % 6]} do?", role)
                    memory.contextual.search("Acme Corp Paris", limit=5)
                    assert memory.long_term is not None
                    memory.long_term.search("Initech", limit=5, filters={"agent_id": role})
        except Exception:
            errors.append(traceback.format_exc())

    def reader() -> None:
        assert memory.entity_memory is not None
        entity = memory.entity_memory
        try:
            while not writers_done.is_set():
                entity.get_related_entities("Alice Johnson", max_depth=2)
                if "Bob Stone" in entity.graph and "Tokyo" in entity.graph:
                    entity.paths("Bob Stone", "Tokyo")
                entity.relationships  # noqa: B018 - iterates every edge
                entity.subgraph(["Carol Diaz"], depth=2)
                entity.get_entity_info("Globex")
                memory.build_context_for_task("Who met Alice Johnson in Berlin?")
                reads[0] += 1
        except Exception:
            errors.append(traceback.format_exc())

    writers = [threading.Thread(target=writer, args=(t,)) for t in range(THREADS)]
    readers = [threading.Thread(target=reader) for _ in range(2)]
    for thread in [*writers, *readers]:
        thread.start()
    for thread in writers:
        thread.join()
    writers_done.set()
    for thread in readers:
        thread.join()
    assert not errors, errors[0]
    assert reads[0] > 0

    # All 4,000 saves are in short-term memory, each exactly once.
    assert memory.short_term is not None and memory.long_term is not None
    expected_short = sorted(
        f"Task completed: {first} - Result: {second}"
        if kind == "task"
        else f"[agent-{t}] {first}: {second}"
        for t, plan in plans.items()
        for kind, first, second, _ in plan
    )
    stored_short = sorted(item.content for item in memory.short_term._all_items())
    assert len(stored_short) == THREADS * PER_THREAD
    assert stored_short == expected_short
    expected_long = sorted(
        second if kind == "task" else f"[agent-{t}] {first}: {second}"
        for t, plan in plans.items()
        for kind, first, second, importance in plan
        if (kind == "task" and importance >= 0.7) or (kind != "task" and importance >= 0.6)
    )
    assert sorted(item.content for item in memory.long_term._all_items()) == expected_long
    tasks = sum(1 for plan in plans.values() for p in plan if p[0] == "task")
    assert memory.entity_memory is not None and len(memory.entity_memory) == tasks

    # The graph this process kept up to date in place equals the one rebuilt from the file.
    live = graph_snapshot(memory.storage.entity_index.graph(""))
    fresh_storage = SQLiteStorage(path)
    try:
        fresh = graph_snapshot(fresh_storage.entity_index.graph(""))
    finally:
        fresh_storage.close()
    assert live[0] == fresh[0]
    assert live[1] == fresh[1]
    assert len(live[0]) >= 10 and len(live[1]) >= 10
    check_database(path)
