"""Tenant isolation: two users with the same entity names never see each other's data.

Users ``alice`` and ``bob`` each hold 1,000 memories in one file (the same people, companies
and places in both, each user's text carrying a marker word of its own). No search, context,
entity, relation, path or visualisation of one user contains the other's data (a property
test with generated queries), and clearing one user leaves the other's rows byte-for-byte
intact. Agents are isolated wherever the API filters by agent.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from _workers import ORGS, PEOPLE, PLACES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem import CortexMemory, SQLiteStorage, UserMemory
from graphmem.store.engine import SQLITE_MODULE as sqlite3  # the SQLite graphmem runs on
from graphmem.viz import render_graph

USERS = {"alice": "amberfox", "bob": "bluewhale"}  # user -> marker word in all their text
PER_USER = 1000


def _records(user: str) -> list[dict[str, object]]:
    rng = random.Random(user)
    marker = USERS[user]
    records: list[dict[str, object]] = []
    for i in range(PER_USER):
        if i % 5 == 0:  # entity-rich
            a, b = rng.sample(PEOPLE, 2)
            text = f"{a} of {rng.choice(ORGS)} met {b} in {rng.choice(PLACES)} ({marker} {i})."
        else:
            text = f"{marker} note {i} about the quarterly budget review"
        records.append({"content": text, "agent_id": f"{user}-agent-{i % 3}"})
    return records


def _dump(path: Path, user: str) -> list[tuple[object, ...]]:
    """Every row that belongs to ``user``, in a stable order."""
    conn = sqlite3.connect(path)
    try:
        rows: list[tuple[object, ...]] = []
        for sql in (
            "SELECT * FROM memories WHERE tenant = ? ORDER BY seq",
            "SELECT * FROM entities WHERE tenant = ? ORDER BY id",
            "SELECT * FROM aliases WHERE tenant = ? ORDER BY id",
            "SELECT * FROM relations WHERE tenant = ? ORDER BY id",
            "SELECT m.* FROM mentions m JOIN entities e ON e.id = m.entity_id "
            "WHERE e.tenant = ? ORDER BY m.id",
            "SELECT v.* FROM relation_evidence v JOIN relations r ON r.id = v.relation_id "
            "WHERE r.tenant = ? ORDER BY v.id",
            "SELECT * FROM kv WHERE key = 'user_preferences:' || ? ORDER BY key",
        ):
            rows.append((sql,))
            rows.extend(conn.execute(sql, (user,)).fetchall())
        return rows
    finally:
        conn.close()


@pytest.fixture(scope="module")
def users(tmp_path_factory):
    path = tmp_path_factory.mktemp("tenants") / "users.db"
    storage = SQLiteStorage(path)
    memory = UserMemory(storage=storage)
    ids: dict[str, set[str]] = {}
    for user in USERS:
        contextual = memory.get_or_create_user_memory(user)
        saved = contextual.long_term.save_many(_records(user)[: PER_USER - 50])
        entity_saved = memory.user_entities[user].save_many(_records(user)[PER_USER - 50 :])
        memory.update_user_preferences(user, {"response_style": f"{USERS[user]} style"})
        ids[user] = {item.memory_id for item in [*saved, *entity_saved]}
    yield path, storage, memory, ids
    storage.close()


def _other(user: str) -> str:
    return next(u for u in USERS if u != user)


QUERIES = st.one_of(
    st.sampled_from(PEOPLE + ORGS + PLACES + list(USERS.values()) + ["budget review", "note"]),
    st.builds(
        lambda a, b: f"How is {a} connected to {b}?",
        st.sampled_from(PEOPLE),
        st.sampled_from(ORGS + PLACES),
    ),
    st.text(max_size=30),
)


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(user=st.sampled_from(sorted(USERS)), query=QUERIES)
def test_no_query_of_one_user_reaches_the_other(users, user, query):
    _, _, memory, ids = users
    other = _other(user)
    foreign_marker, foreign_ids = USERS[other], ids[other]

    for item in memory.search_user_memory(user, query, limit=50):
        assert item.user_id == user and item.memory_id not in foreign_ids
        assert foreign_marker not in item.content
    context = memory.get_user_context(user)
    assert foreign_marker not in context

    entity = memory.user_entities[user]
    for item in entity.search(query, limit=50):
        assert item.memory_id not in foreign_ids
    for name in PEOPLE[:3]:
        info = entity.get_entity_info(name)
        assert not set(info["mentions"]) & foreign_ids
        assert all(foreign_marker not in c for c in info.get("contexts", []))
        for edge in entity.relations(name):
            for evidence in edge.evidence:
                assert evidence.memory_id not in foreign_ids
                assert foreign_marker not in evidence.sentence
    for hops in entity.paths(PEOPLE[0], PLACES[0]):
        for hop in hops:
            assert all(e.memory_id not in foreign_ids for e in hop.edge.evidence)


@pytest.mark.slow
def test_visualisation_of_a_users_subgraph_holds_only_their_data(users, tmp_path):
    _, _, memory, ids = users
    for user in USERS:
        entity = memory.user_entities[user]
        graph = entity.subgraph([PEOPLE[0], ORGS[0]], depth=2)
        assert graph.number_of_nodes() >= 3
        page = (render_graph(graph, tmp_path / f"{user}.html").path).read_text(encoding="utf-8")
        assert USERS[_other(user)] not in page
        assert not any(memory_id in page for memory_id in ids[_other(user)])
        # Tooltips carry this user's evidence, so the check above looks at real text.
        edge_ids = {d.get("relation_id") for *_, d in graph.edges(data=True)}
        assert edge_ids and None not in edge_ids


@pytest.mark.slow
def test_users_have_separate_entities_with_the_same_names(users):
    path, _, memory, _ = users
    alice, bob = memory.user_entities["alice"], memory.user_entities["bob"]
    a_info, b_info = alice.get_entity("Alice Johnson"), bob.get_entity("Alice Johnson")
    assert a_info is not None and b_info is not None
    conn = sqlite3.connect(path)
    try:
        tenants = conn.execute(
            "SELECT tenant, count(*) FROM entities WHERE key = 'alice johnson' GROUP BY tenant"
        ).fetchall()
    finally:
        conn.close()
    assert sorted(tenants) == [("alice", 1), ("bob", 1)]
    stats = {u: memory.get_user_statistics(u) for u in USERS}
    assert stats["alice"]["total_memories"] == PER_USER - 50
    assert stats["bob"]["total_memories"] == PER_USER - 50


@pytest.mark.slow
def test_clearing_one_user_leaves_the_other_byte_for_byte(users):
    path, storage, memory, ids = users
    bob_before = _dump(path, "bob")
    assert len(bob_before) > PER_USER
    memory.clear_user_memory("alice")
    assert _dump(path, "bob") == bob_before
    assert [row for row in _dump(path, "alice") if len(row) > 1] == []
    fresh = UserMemory(storage=SQLiteStorage(path))
    assert fresh.search_user_memory("alice", "budget review") == []
    assert len(fresh.search_user_memory("bob", "budget review", limit=5)) == 5


def test_agents_are_isolated_where_the_api_filters_by_agent(tmp_path, monkeypatch):
    monkeypatch.setenv("WRITE_MEMORY", "1")
    memory = CortexMemory(persistence_path=str(tmp_path / "agents.db"))
    for agent, marker in (("researcher", "amberfox"), ("writer", "bluewhale")):
        for i in range(5):
            memory.save_task_result(
                f"Survey Acme Corp {i}", f"Alice Johnson reviewed {marker} {i}", agent, 0.8
            )
            memory.save_agent_interaction(agent, "noted", f"{marker} detail {i}", 0.7)
    context = memory.build_context_for_task("Alice Johnson review", agent_role="researcher")
    assert "amberfox" in context and "bluewhale" not in context
    history = memory.get_agent_history("researcher", limit=50)
    assert history and all("bluewhale" not in line for line in history)
    assert memory.long_term is not None
    found = memory.long_term.search("detail", filters={"agent_id": "writer"}, limit=50)
    assert found and all(item.agent_id == "writer" for item in found)
