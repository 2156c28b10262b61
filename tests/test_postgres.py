"""The same memory on SQLite and on a PostgreSQL server.

Every test here takes ``storage_url`` (see ``tests/conftest.py``) and runs once on a fresh
SQLite file and once on a fresh schema of the real server named by GRAPHMEM_TEST_PG_URL:
search, filters and deletes; the entity graph across reopen; typed relations; paths with
evidence; tenant isolation; recursive-SQL relationship queries checked against NetworkX; and
several processes sharing one database (schema creation, graph writers, fresh views).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphmem import CortexMemory, EntityMemory, LongTermMemory, SQLStorage
from graphmem.errors import EntityNotFound
from graphmem.graph.knowledge_graph import Hop
from graphmem.index.entity_index import EntityIndex
from graphmem.index.sql_graph import SQLGraph
from graphmem.items import MemoryItem
from graphmem.store import memory_rows, text_rows
from graphmem.store.database import Database

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def storage(storage_url: str) -> Iterator[SQLStorage]:
    space = SQLStorage(storage_url)
    yield space
    space.close()


def _contents(items: list[MemoryItem]) -> list[str]:
    return [item.content for item in items]


# ------------------------------------------------------------------------- full-text search
class TestSearch:
    def _db(self, storage: SQLStorage) -> Database:
        db = storage.database
        rows = [
            (MemoryItem("Alice works at Acme in Berlin", agent_id="a1", user_id="u1"), "n"),
            (MemoryItem("The common room is common", agent_id="a1", user_id="u1"), "n"),
            (MemoryItem("A common alpha release", agent_id="a2", user_id="u2"), "n"),
            (MemoryItem("common ground", agent_id="a2", user_id="u1"), "n"),
            (MemoryItem("Alice lives elsewhere", agent_id="a1", user_id="u1"), "other"),
        ]
        with db.write() as conn:
            text_rows.insert_memories(conn, [(item, ns, None) for item, ns in rows])
        return db

    def _search(self, db: Database, query: str, **kwargs: object) -> list[str]:
        namespaces = kwargs.pop("namespaces", ["n"])
        with db.read() as conn:
            hits = text_rows.search_text(conn, query, namespaces, **kwargs)  # type: ignore[arg-type]
            items = {
                seq: item
                for seq, (_, item) in memory_rows.fetch_rows(conn, [s for s, _ in hits]).items()
            }
        scores = [score for _, score in hits]
        assert scores == sorted(scores, reverse=True)
        return [items[seq].content for seq, _ in hits]

    def test_only_matching_rows_with_stemming(self, storage: SQLStorage) -> None:
        db = self._db(storage)
        assert self._search(db, "who is working?") == ["Alice works at Acme in Berlin"]
        assert self._search(db, "zebra") == []
        assert self._search(db, "the") == [] or db.dialect.name == "sqlite"

    def test_rare_term_ranks_first(self, storage: SQLStorage) -> None:
        db = self._db(storage)
        found = self._search(db, "alpha common")
        assert found[0] == "A common alpha release"
        assert set(found) == {
            "A common alpha release",
            "The common room is common",
            "common ground",
        }

    def test_namespace_tenant_and_column_filters(self, storage: SQLStorage) -> None:
        db = self._db(storage)
        assert self._search(db, "alice", namespaces=["other"]) == ["Alice lives elsewhere"]
        assert sorted(self._search(db, "alice", namespaces=["n", "other"])) == [
            "Alice lives elsewhere",
            "Alice works at Acme in Berlin",
        ]
        assert self._search(db, "common", tenant="u2") == ["A common alpha release"]
        assert self._search(db, "common", sql_filters={"agent_id": "a2", "user_id": "u1"}) == [
            "common ground"
        ]
        assert self._search(db, "common", limit=1) == ["The common room is common"] or (
            len(self._search(db, "common", limit=1)) == 1
        )

    @pytest.mark.parametrize(
        "query",
        ["'; DROP TABLE memories; --", 'acme & | ! ( ) : * <-> \\ "', "o'brien's acme", "ACME!!"],
    )
    def test_query_syntax_never_leaks(self, storage: SQLStorage, query: str) -> None:
        db = self._db(storage)
        found = self._search(db, query)
        assert found == (["Alice works at Acme in Berlin"] if "acme" in query.lower() else [])
        with db.read() as conn:
            assert memory_rows.count(conn, ["n", "other"]) == 5

    def test_update_and_delete_reach_the_index(self, storage: SQLStorage) -> None:
        db = self._db(storage)
        with db.read() as conn:
            seq = text_rows.search_text(conn, "berlin", ["n"])[0][0]
            [row] = [row for row, _ in memory_rows.list_items(conn, ["n"]) if row.seq == seq]
        with db.write() as conn:
            db.rewrite_text(conn, row.text_id, "", "Alice moved to Munich")
        assert self._search(db, "berlin") == []
        assert self._search(db, "munich") == ["Alice moved to Munich"]
        with db.write() as conn:
            deleted, orphans = memory_rows.delete_items(conn, [seq])
            db.delete_texts(conn, orphans)
            assert deleted == 1
        assert self._search(db, "munich") == []


class TestTiers:
    def test_save_search_filter_delete(self, storage: SQLStorage) -> None:
        memory = LongTermMemory(storage=storage)
        kept = memory.save("Quarterly sales grew in Berlin", agent_id="analyst")
        memory.save("Sales meeting moved to Friday", agent_id="planner")
        memory.save("Lunch was good")
        assert set(_contents(memory.search("sales"))) == {
            "Quarterly sales grew in Berlin",
            "Sales meeting moved to Friday",
        }
        assert _contents(memory.search("sales", filters={"agent_id": "planner"})) == [
            "Sales meeting moved to Friday"
        ]
        assert memory.delete(kept.memory_id) == 1
        assert _contents(memory.search("sales")) == ["Sales meeting moved to Friday"]
        assert len(memory) == 2

    def test_tenant_isolation(self, storage: SQLStorage) -> None:
        alice = EntityMemory(storage=storage, tenant="alice")
        bob = EntityMemory(storage=storage, tenant="bob")
        alice.save("Carol Smith works at Initech.", user_id="alice")
        bob.save("Dave Jones works at Globex.", user_id="bob")
        assert "Carol Smith" in alice.graph and "Carol Smith" not in bob.graph
        assert "Dave Jones" in bob.graph and "Dave Jones" not in alice.graph
        assert _contents(bob.search("Initech")) == []
        assert _contents(alice.search("Initech")) == ["Carol Smith works at Initech."]
        with pytest.raises(EntityNotFound):
            SQLGraph(storage.database, "bob").neighbors("Carol Smith")

    def test_cortex_persists_across_reopen(
        self, storage_url: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("WRITE_MEMORY", "1")
        first = CortexMemory(persistence_path=storage_url)
        first.save_task_result(
            "Review vendors", "Initech quoted the lowest price", "Buyer", importance=0.9
        )
        assert first.storage is not None
        first.storage.close()
        second = CortexMemory(persistence_path=storage_url)
        context = second.build_context_for_task("Which vendor quoted the lowest price?")
        assert "Initech quoted the lowest price" in context
        assert second.entity_memory is not None and "Initech" in second.entity_memory.graph
        assert second.storage is not None
        second.storage.close()


# ------------------------------------------------------------------------- the entity graph
class TestEntityGraph:
    def test_build_reload_typed_relations_and_paths(self, storage_url: str) -> None:
        space = SQLStorage(storage_url)
        memory = EntityMemory(storage=space)
        memory.save("Alice Johnson works at Acme Corp.")
        memory.save("Bob Stone works at Acme Corp in Berlin.")
        memory.add_relation("Bob Stone", "mentors", "Carol Smith")
        before = memory.graph
        nodes = sorted(before.graph.nodes)
        edges = sorted(before.graph.edges(keys=True))
        space.close()

        space = SQLStorage(storage_url)
        memory = EntityMemory(storage=space)
        after = memory.graph
        assert sorted(after.graph.nodes) == nodes
        assert sorted(after.graph.edges(keys=True)) == edges
        works = memory.find(predicate="works_at", object="Acme")
        assert sorted(e.subject for e in works) == ["Alice Johnson", "Bob Stone"]
        assert all(e.evidence and e.evidence[0].sentence.endswith(".") for e in works)

        paths = memory.paths("Alice", "Carol Smith", max_hops=3)
        assert [[(h.source, h.target) for h in p] for p in paths] == [
            [
                ("Alice Johnson", "Acme Corp."),
                ("Acme Corp.", "Bob Stone"),
                ("Bob Stone", "Carol Smith"),
            ]
        ]
        hops = paths[0]
        assert hops[0].edge.predicate == "works_at" and not hops[0].reversed
        assert hops[1].edge.predicate == "works_at" and hops[1].reversed
        assert hops[0].edge.evidence[0].sentence == "Alice Johnson works at Acme Corp."
        assert hops[2].edge.evidence[0].rule == "manual"
        assert memory.paths("Alice", "Carol Smith", max_hops=2) == []
        space.close()


def _random_graph(db: Database, seed: int) -> list[str]:
    """A tenant graph with hubs, cycles, both directions and several predicates."""
    rng = random.Random(seed)
    names = [f"Node {chr(65 + i // 6)}{i % 6}" for i in range(30)] + ["Isolated Island"]
    index = EntityIndex(db)
    for _ in range(70):
        a, b = rng.sample(names[:30], 2)
        index.add_relation("t", a, rng.choice(["knows", "works_at", "co_occurs"]), b)
    for name in names[1:6]:
        index.add_relation("t", "Node A0", "knows", name)  # a hub
    index.add_relation("t", "Isolated Island", "knows", "Lonely Rock")
    index.add_relation("other", "Node A0", "knows", "Node F5")  # another tenant's edge
    return names + ["Lonely Rock"]


def _hop_view(hops: list[Hop]) -> tuple[tuple[object, ...], ...]:
    return tuple(
        (
            h.source,
            h.target,
            h.reversed,
            h.edge.subject,
            h.edge.predicate,
            h.edge.object,
            h.edge.support,
            h.edge.relation_id,
            tuple(ev.rule for ev in h.edge.evidence),
        )
        for h in hops
    )


class TestRecursiveSQLMatchesNetworkX:
    def test_neighbors(self, storage: SQLStorage) -> None:
        names = _random_graph(storage.database, seed=7)
        view = EntityIndex(storage.database).graph("t")
        sql = SQLGraph(storage.database, "t")
        compared = 0
        for name in names:
            if name not in view:
                with pytest.raises(EntityNotFound):
                    sql.neighbors(name)
                continue
            for depth in (1, 2, 3):
                for predicate in (None, "knows", "works_at"):
                    expected = view.neighbors(name, depth=depth, predicate=predicate)
                    got = sql.neighbors(name, depth=depth, predicate=predicate)
                    assert got == expected, (name, depth, predicate)
                    assert list(got) == list(expected)  # same order: nearest, then key
                    compared += bool(expected)
        assert compared > 150
        assert SQLGraph(storage.database, "other").neighbors("Node A0", depth=3) == {"Node F5": 1}
        assert sql.neighbors("Isolated Island") == {"Lonely Rock": 1}

    def test_paths(self, storage: SQLStorage) -> None:
        names = _random_graph(storage.database, seed=11)
        view = EntityIndex(storage.database).graph("t")
        sql = SQLGraph(storage.database, "t")
        rng = random.Random(3)
        known = [n for n in names if n in view]
        pairs = [tuple(rng.sample(known, 2)) for _ in range(60)] + [("Node A0", "Lonely Rock")]
        nonempty = 0
        for a, b in pairs:
            for max_hops in (1, 2, 4):
                expected = view.paths(a, b, max_hops=max_hops, limit=50)
                got = sql.paths(a, b, max_hops=max_hops, limit=50)
                assert len(got) == len(expected), (a, b, max_hops)
                assert {_hop_view(p) for p in got} == {_hop_view(p) for p in expected}
                nonempty += bool(expected)
        assert nonempty > 40
        assert sql.paths("Node A0", "Lonely Rock") == []

    def test_entity_memory_switch(self, storage_url: str) -> None:
        in_memory = SQLStorage(storage_url)
        _random_graph(in_memory.database, seed=5)
        in_sql = SQLStorage(storage_url, graph_cache="sql")
        a = EntityMemory(storage=in_memory, tenant="t")
        b = EntityMemory(storage=in_sql, tenant="t")
        assert b.neighbors("Node A0", depth=2) == a.neighbors("Node A0", depth=2)
        assert b.get_related_entities("Node B1") == a.get_related_entities("Node B1")
        assert [_hop_view(p) for p in b.paths("Node A1", "Node E4")] != [] or not a.paths(
            "Node A1", "Node E4"
        )
        # The SQL answers never built the tenant's NetworkX view.
        assert "t" not in in_sql.entity_index._tenants
        with pytest.raises(EntityNotFound, match="'Nobody' is not in the graph"):
            b.neighbors("Nobody")
        in_memory.close()
        in_sql.close()


# ------------------------------------------------------------------------- several processes
def _run_children(script: str, args: list[list[str]], start_flag: Path) -> list[str]:
    """Start one process per argument list; they begin together once ``start_flag`` exists."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(script), *a],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for a in args
    ]
    time.sleep(0.5)
    start_flag.touch()
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-3000:]
        outputs.append(out)
    return outputs


_WAIT_FOR_FLAG = """
import os, sys, time
flag = sys.argv[2]
while not os.path.exists(flag):
    time.sleep(0.01)
"""


class TestSeveralProcesses:
    @pytest.mark.slow  # process stress: four processes racing to open and write one store
    def test_concurrent_first_open_and_graph_writers(
        self, storage_url: str, tmp_path: Path
    ) -> None:
        script = (
            "from graphmem import EntityMemory, SQLStorage\n"
            "from graphmem.extract.pipeline import get_analyzer\n"
            "get_analyzer()\n"  # load spaCy before the race
            + _WAIT_FOR_FLAG
            + """
space = SQLStorage(sys.argv[1])
memory = EntityMemory(storage=space)
worker = sys.argv[3]
for i in range(8):
    memory.add_relation("Hub Entity", "knows", f"Person {worker}{i}")
    memory.save(f"Shared Corp hired Person {worker}{i}.", entities=["Shared Corp"])
print(len(memory.graph))
"""
        )
        flag = tmp_path / "go"
        workers = ["A", "B", "C", "D"]
        _run_children(script, [[storage_url, str(flag), w] for w in workers], flag)
        space = SQLStorage(storage_url)
        memory = EntityMemory(storage=space)
        neighbours = memory.neighbors("Hub Entity")
        assert len(neighbours) == 4 * 8
        assert len([k for k in memory.graph.graph.nodes if k == "hub entity"]) == 1
        assert memory.get_entity("Shared Corp") is not None
        assert memory.get_entity("Shared Corp").mentions == 4 * 8  # type: ignore[union-attr]
        with space.database.read() as conn:
            assert space.database.generation(conn) == 4 * 8 * 2
        space.close()

    def test_other_process_writes_are_seen_without_restart(
        self, storage_url: str, tmp_path: Path
    ) -> None:
        space = SQLStorage(storage_url)
        entities = EntityMemory(storage=space)
        notes = LongTermMemory(storage=space)
        entities.save("Alice Johnson works at Acme Corp.")
        assert notes.search("zebras") == []
        assert entities.get_entity("Zed Zulu") is None  # the view is loaded now
        script = (
            _WAIT_FOR_FLAG
            + """
from graphmem import EntityMemory, LongTermMemory, SQLStorage
space = SQLStorage(sys.argv[1])
EntityMemory(storage=space).add_relation("Zed Zulu", "works_at", "Acme Corp")
LongTermMemory(storage=space).save("Zebras graze near the quarry.")
"""
        )
        flag = tmp_path / "go"
        _run_children(script, [[storage_url, str(flag)]], flag)
        assert _contents(notes.search("zebras")) == ["Zebras graze near the quarry."]
        assert [e.subject for e in entities.find(predicate="works_at", object="Acme")] == [
            "Alice Johnson",
            "Zed Zulu",
        ]
        assert entities.paths("Alice Johnson", "Zed Zulu")[0][1].edge.evidence[0].rule == "manual"
        space.close()


@pytest.mark.slow
@pytest.mark.postgres
def test_the_postgres_bench_runs_on_both_backends(pg_server_url: str, tmp_path: Path) -> None:
    """bench/postgres.py end to end at a tiny size: every measurement, both backends."""
    bench = Path(__file__).resolve().parents[1] / "bench" / "postgres.py"
    out = tmp_path / "postgres.json"
    args = ["--size", "80", "--raw-size", "200", "--queries", "3", "--per-call", "2"]
    args += ["--workers", "2", "--writers", "2", "--concurrent-size", "24", "--json", str(out)]
    done = subprocess.run(
        [sys.executable, str(bench), "--pg-url", pg_server_url, *args],
        capture_output=True,
        text=True,
        timeout=800,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(out.read_text())
    rows = {(r["backend"], r["items"]): r for r in found["single"]}
    assert set(rows) == {(b, n) for b in ("sqlite", "postgresql") for n in (80, 200)}
    for backend in ("sqlite", "postgresql"):
        assert rows[(backend, 80)]["context_median_ms"] > 0
        assert rows[(backend, 80)]["per_call_p50_ms"] > 0
    assert {r["backend"]: r["items"] for r in found["concurrent"]} == {
        "sqlite": 24,
        "postgresql": 24,
    }
    assert "| postgresql | facade batch, 2 workers | 80 |" in done.stdout
