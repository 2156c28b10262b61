"""Issue 25.9: capacity and eviction act within one tenant only."""

from __future__ import annotations

from pathlib import Path

from graphmem import CortexMemory
from graphmem.compat.storage import SQLiteStorage
from graphmem.memories.long_term import LongTermMemory
from graphmem.memories.short_term import ShortTermMemory


def _contents(tier: object) -> list[str]:
    return sorted(i.content for i in tier._all_items())  # type: ignore[attr-defined]


def test_a_shared_facades_saves_never_evict_another_users_rows(tmp_path: Path) -> None:
    storage = SQLiteStorage(tmp_path / "shared.db")
    bob = CortexMemory(storage=storage, user_id="bob", short_term_capacity=10)
    for n in range(10):
        bob.save_task_result(f"Bob task {n}", f"Bob result {n}", "Ops")
    shared = CortexMemory(storage=storage, short_term_capacity=10)
    for n in range(12):
        shared.save_task_result(f"Shared task {n}", f"Shared result {n}", "Ops")
    assert bob.short_term is not None and shared.short_term is not None
    assert len(_contents(bob.short_term)) == 10
    assert all("Bob result" in c for c in _contents(bob.short_term))
    assert len(_contents(bob.contextual.short_term)) == 10
    shared_lines = [c for c in _contents(shared.short_term) if "Shared result" in c]
    assert len(shared_lines) == 10
    assert not any(c.endswith(("Shared result 0", "Shared result 1")) for c in shared_lines)
    storage.close()


def test_each_tenant_of_an_unbound_tier_has_the_whole_capacity() -> None:
    short = ShortTermMemory(capacity=2)
    for n in range(3):
        short.save(f"a{n}", user_id="ann")
    for n in range(3):
        short.save(f"b{n}", user_id="ben")
    assert _contents(short) == ["a1", "a2", "b1", "b2"]
    long = LongTermMemory(max_items=3)
    for n in range(3):
        long.save(f"ann fact {n}", user_id="ann")
    for n in range(5):
        long.save(f"ben fact {n}", user_id="ben")
    assert [c for c in _contents(long) if c.startswith("ann")] == [
        f"ann fact {n}" for n in range(3)
    ]
    assert len([c for c in _contents(long) if c.startswith("ben")]) <= 3
