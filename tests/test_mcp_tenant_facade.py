"""CortexMemory(storage=, user_id=): the facade of one user, which the MCP server builds
for each tenant. Nothing it does reaches another user's memory."""

from __future__ import annotations

import pytest

from graphmem import CortexMemory, InvalidArgumentError, SQLiteStorage

HIRE = "Maya Lindqvist joined Lumen Robotics in Berlin."


@pytest.fixture
def shared() -> SQLiteStorage:
    return SQLiteStorage()


def test_each_user_reads_writes_and_forgets_only_their_own(shared: SQLiteStorage) -> None:
    alice = CortexMemory(storage=shared, user_id="alice")
    bob = CortexMemory(storage=shared, user_id="bob")
    mine = alice.save_task_result("Record the hire", HIRE, "HR", importance=0.9)
    bob.save_task_result("Record the hire", "Tom Becker joined Lumen Robotics.", "HR")
    assert [i.content for i in alice.search("Lumen Robotics")] == [HIRE]
    assert "Maya" not in bob.build_context_for_task("Lumen Robotics")
    assert bob.entity_memory is not None and bob.entity_memory.get_entity("Maya") is None
    assert {i.user_id for i in alice.search("Lumen")} == {"alice"}
    # Another user's result id, filters, or user id: nothing of alice's goes.
    assert bob.delete(mine) is False
    assert bob.forget(agent_role="HR") == 1
    with pytest.raises(InvalidArgumentError, match="not this memory's user"):
        bob.forget(user_id="alice")
    assert [i.content for i in alice.search("Lumen Robotics")] == [HIRE]
    # A dedupe key is the user's own: the same key of two users names two results.
    a_key = alice.save_task_result("Sync", "Acme renewed.", "CRM", dedupe_key="crm-1")
    b_key = bob.save_task_result("Sync", "Acme renewed.", "CRM", dedupe_key="crm-1")
    assert a_key != b_key
    assert alice.save_task_result("Sync", "Acme renewed.", "CRM", dedupe_key="crm-1") == a_key
    bob.reset_all()
    assert [i.content for i in alice.search("Lumen Robotics")] == [HIRE]
    assert alice.delete(mine) is True and alice.search("Lumen Robotics") == []


def test_storage_and_persistence_path_are_exclusive(tmp_path: object) -> None:
    with pytest.raises(InvalidArgumentError, match="not both"):
        CortexMemory(persistence_path="m.db", storage=SQLiteStorage())
    with pytest.raises(TypeError, match="storage must be a SQLiteStorage"):
        CortexMemory(storage="m.db")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="user_id must be a str"):
        CortexMemory(user_id=7)  # type: ignore[arg-type]
