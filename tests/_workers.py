"""Helpers of the reliability tests: subprocess workers and checks of a database file.

Run as a script, this module is a worker process:

``python tests/_workers.py write PATH TAG COUNT GO_FILE``
    Load spaCy, wait until ``GO_FILE`` exists (so that all writers start together), then save
    ``COUNT`` memories into ``PATH`` (single saves, a ``save_many`` batch and entity memories)
    and print ``S <memory_id>`` after each save returned, flushed.

``python tests/_workers.py zygote``
    Load spaCy once, print ``ready``, then for each ``run KIND PATH SEED COUNT`` line on stdin
    fork a child that writes into ``PATH``: ``save`` (printing ``S <id>`` after each save
    returned, ``d <id>`` before and ``D <id>`` after each delete), ``ingest``, ``merge``,
    ``import`` or ``export`` (see :data:`CHILDREN`), unbuffered. The zygote prints ``pid <pid>`` before the child starts
    and ``exit <pid> <status>`` once it is gone (the test kills it with SIGKILL). Forking from a
    warm process keeps each crash trial short; the children are still real processes.

Imported by the tests, it offers :func:`check_database` (integrity, support counting, and the
graph rebuilt on open equal to the tables) and :func:`graph_snapshot`.
"""

from __future__ import annotations

import faulthandler
import os
import random
import sys
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphmem.store.engine import SQLITE_MODULE as sqlite3  # the SQLite graphmem runs on

if __name__ == "__main__":  # make the checkout importable when run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PEOPLE = ["Alice Johnson", "Bob Stone", "Carol Diaz", "Dan Wu", "Eve Martin", "Farid Khan"]
ORGS = ["Acme Corp", "Initech", "Globex", "Umbrella Labs"]
PLACES = ["Paris", "Berlin", "Tokyo", "Lagos"]
#: Section headings of ``build_context_for_task``, in the seed's order (docs/contract.md §1).
HEADINGS = [
    "Background:",
    "Recent context:",
    "Relevant knowledge:",
    "Known entities:",
    "Related memories:",
]


def sentence(rng: random.Random, tag: str) -> tuple[str, list[str]]:
    """A short memory naming two people, an organisation and a place, and those names."""
    a, b = rng.sample(PEOPLE, 2)
    org, place = rng.choice(ORGS), rng.choice(PLACES)
    return f"{a} of {org} met {b} in {place} ({tag}).", [a, b, org, place]


# ---------------------------------------------------------------------- checks
def children_of(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (Linux: read from /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, or no such process: no)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@contextmanager
def processes_ending(parent: Any, within: float = 10.0) -> Iterator[set[int]]:
    """A set to put the child processes of ``parent`` (a Popen) in: when the block ends
    they must all end within ``within`` seconds (those that do not are killed, and the
    test fails); ``parent`` is killed if it still runs."""
    children: set[int] = set()
    try:
        yield children
    finally:
        if parent.poll() is None:
            parent.kill()
        parent.wait()
        deadline = time.monotonic() + within
        while any(_running(p) for p in children) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [p for p in children if _running(p)]
        for pid in left:
            os.kill(pid, 9)
    assert not left, f"child processes {left} outlived their parent"


def graph_snapshot(kg: Any) -> tuple[dict[str, tuple[Any, ...]], dict[tuple[str, str, str], Any]]:
    """Nodes and edges of a KnowledgeGraph in a comparable form."""
    g = kg.graph
    nodes = {
        key: (
            d["name"],
            d["label"],
            d["mentions"],
            tuple(sorted(d["aliases"])),
            d["first_seen"],
            d["last_seen"],
            d["entity_id"],
        )
        for key, d in g.nodes(data=True)
    }
    edges = {
        (u, v, k): (d["support"], d["confidence"], d["relation_id"], d["valid_to"])
        for u, v, k, d in g.edges(keys=True, data=True)
    }
    return nodes, edges


def table_graph(path: Path | str, tenant: str) -> tuple[dict[str, tuple[Any, ...]], dict[Any, Any]]:
    """What the tables say a tenant's graph is, by plain SQL (independent of graphmem)."""
    conn = sqlite3.connect(path)
    try:
        nodes = {}
        for eid, key, name, label in conn.execute(
            "SELECT id, key, name, label FROM entities WHERE tenant = ?", (tenant,)
        ):
            (mentions,) = conn.execute(
                "SELECT count(*) FROM mentions WHERE entity_id = ?", (eid,)
            ).fetchone()
            nodes[key] = (name, label, mentions, eid)
        edges = {}
        for rid, s_key, pred, o_key in conn.execute(
            "SELECT r.id, s.key, r.predicate, o.key FROM relations r "
            "JOIN entities s ON s.id = r.subject_id JOIN entities o ON o.id = r.object_id "
            "WHERE r.tenant = ?",
            (tenant,),
        ):
            (support,) = conn.execute(
                "SELECT count(*) FROM relation_evidence WHERE relation_id = ?", (rid,)
            ).fetchone()
            edges[(s_key, o_key, pred)] = (support, rid)
        return nodes, edges
    finally:
        conn.close()


def check_database(path: Path | str) -> dict[str, Any]:
    """Assert a graphmem file is sound; returns per-tenant graph sizes.

    - ``PRAGMA integrity_check`` is ``ok`` and ``PRAGMA foreign_key_check`` finds nothing;
    - support counting holds: every relation has evidence, every entity has a mention or a
      relation, every entity mentioned by a memory belongs to that memory's tenant;
    - the graph a fresh :class:`SQLiteStorage` builds on open equals the tables.
    """
    from graphmem import SQLiteStorage

    SQLiteStorage(path).close()  # the file reopens (a kill before the schema existed is fine)
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        orphan_relations = conn.execute(
            "SELECT count(*) FROM relations WHERE id NOT IN "
            "(SELECT relation_id FROM relation_evidence)"
        ).fetchone()[0]
        assert orphan_relations == 0, f"{orphan_relations} relations without evidence"
        orphan_entities = conn.execute(
            "SELECT count(*) FROM entities WHERE id NOT IN (SELECT entity_id FROM mentions) "
            "AND id NOT IN (SELECT subject_id FROM relations) "
            "AND id NOT IN (SELECT object_id FROM relations)"
        ).fetchone()[0]
        assert orphan_entities == 0, f"{orphan_entities} entities without support"
        cross_tenant = conn.execute(
            "SELECT count(*) FROM mentions m JOIN entities e ON e.id = m.entity_id "
            "JOIN texts t ON t.id = m.text_id WHERE e.tenant != t.tenant"
        ).fetchone()[0]
        assert cross_tenant == 0, f"{cross_tenant} mentions cross tenants"
        unshown_texts = conn.execute(
            "SELECT count(*) FROM texts WHERE id NOT IN (SELECT text_id FROM memories)"
        ).fetchone()[0]
        assert unshown_texts == 0, f"{unshown_texts} texts no memory shows"
        miscounted = conn.execute(
            "SELECT count(*) FROM entities e WHERE e.mentions != "
            "(SELECT count(*) FROM mentions m WHERE m.entity_id = e.id)"
        ).fetchone()[0]
        assert miscounted == 0, f"{miscounted} entities with a wrong stored mention count"
        unsupported = conn.execute(
            "SELECT count(*) FROM relations r WHERE r.support != "
            "(SELECT count(*) FROM relation_evidence v WHERE v.relation_id = r.id)"
        ).fetchone()[0]
        assert unsupported == 0, f"{unsupported} relations with a wrong stored support"
        tenants = [t for (t,) in conn.execute("SELECT DISTINCT tenant FROM entities")]
    finally:
        conn.close()
    storage = SQLiteStorage(path)
    sizes = {}
    try:
        for tenant in tenants:
            nodes, edges = graph_snapshot(storage.entity_index.graph(tenant))
            t_nodes, t_edges = table_graph(path, tenant)
            assert {k: (v[0], v[1], v[2], v[6]) for k, v in nodes.items()} == t_nodes
            assert {k: (v[0], v[2]) for k, v in edges.items()} == t_edges
            sizes[tenant] = (len(nodes), len(edges))
    finally:
        storage.close()
    return sizes


def pending_merges(path: Path | str) -> list[int]:
    """Ids of the default tenant's merges of "Robert Stone" into "Bob Stone" not undone,
    oldest first (other merges, made by indexing, are not the merge child's)."""
    conn = sqlite3.connect(path)
    try:
        return [
            int(i)
            for (i,) in conn.execute(
                "SELECT id FROM merges WHERE tenant = '' AND undone_at IS NULL "
                "AND kept_key = 'bob stone' AND merged_key = 'robert stone' ORDER BY id"
            )
        ]
    finally:
        conn.close()


# ---------------------------------------------------------------------- the zygote, from tests
class Zygote:
    """The ``zygote`` worker as a test drives it: :meth:`trial` forks a child, kills it with
    SIGKILL after ``delay`` seconds (unless it finished first) and returns what it printed.

    Example (in a fixture): ``with Zygote.started() as zygote: yield zygote``.
    """

    def __init__(self) -> None:
        import subprocess

        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "zygote"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            # Unbuffered: a buffered reader could hold lines that select() no longer sees.
            bufsize=0,
        )
        assert self.read_line(120) == "ready"

    @classmethod
    @contextmanager
    def started(cls) -> Iterator[Zygote]:
        zygote = cls()
        try:
            yield zygote
        finally:
            zygote.close()

    def read_line(self, timeout: float) -> str:
        import select

        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, f"no output from the worker in {timeout} s"
        line = self.proc.stdout.readline().decode()
        assert line, "the worker closed its output"
        return line.strip()

    def trial(self, kind: str, path: Path | str, seed: int, count: int, delay: float) -> Trial:
        """Run one child of ``kind`` and kill it after ``delay`` seconds."""
        import signal

        assert self.proc.stdin is not None
        self.proc.stdin.write(f"run {kind} {path} {seed} {count}\n".encode())
        self.proc.stdin.flush()
        first = self.read_line(30)
        assert first.startswith("pid "), first
        pid = int(first.split()[1])
        time.sleep(delay)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # it finished (and was reaped) first: its exit status says how
        lines = []
        while True:
            line = self.read_line(60)
            if line.startswith("exit "):
                status = int(line.split()[2])
                break
            lines.append(line)
        if os.WIFSIGNALED(status):
            assert os.WTERMSIG(status) == signal.SIGKILL
            return Trial(lines, killed=True)
        assert os.WEXITSTATUS(status) == 0, f"the {kind} child failed on its own: {lines[-3:]}"
        return Trial(lines, killed=False)

    def whole_run_seconds(self, kind: str, path: Path | str, seed: int, count: int) -> float:
        """Run one child of ``kind`` to its end, unkilled: the seconds from its start to its
        exit (what a kill's delay is drawn against)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"run {kind} {path} {seed} {count}\n".encode())
        self.proc.stdin.flush()
        first = self.read_line(30)
        assert first.startswith("pid "), first
        started = time.perf_counter()
        while not (line := self.read_line(120)).startswith("exit "):
            pass
        assert os.WIFEXITED(int(line.split()[2])), line
        return time.perf_counter() - started

    def close(self) -> None:
        import subprocess

        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.write(b"quit\n")
            self.proc.stdin.flush()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@dataclass
class Trial:
    """What a killed (or finished) child printed, line by line."""

    lines: list[str]
    killed: bool

    def said(self, kind: str) -> list[str]:
        """The arguments of the lines starting with ``kind`` ("S", "m" ...), in order."""
        return [line[len(kind) + 1 :] for line in self.lines if line.split(" ", 1)[0] == kind]


# ---------------------------------------------------------------------- workers
def _say(line: str) -> None:
    os.write(1, (line + "\n").encode())  # unbuffered: a SIGKILL loses nothing printed


def write_worker(path: str, tag: str, count: int, go_file: str) -> None:
    """Save ``count`` memories (see the module docstring)."""
    from graphmem import EntityMemory, LongTermMemory, SQLiteStorage
    from graphmem.extract.pipeline import get_analyzer

    get_analyzer().analyse(["Alice Johnson met Bob Stone in Paris."], relations=True)
    storage = SQLiteStorage(path)
    long_term = LongTermMemory(storage=storage, max_items=None)
    entities = EntityMemory(storage=storage)
    rng = random.Random(tag)
    while not os.path.exists(go_file):
        time.sleep(0.01)
    n = 0
    while n < count:
        kind = n % 5
        if kind == 4 and count - n >= 3:
            records = [{"content": sentence(rng, f"{tag} batch {n + i}")[0]} for i in range(3)]
            for item in long_term.save_many(records):
                _say(f"S {item.memory_id}")
            n += 3
            continue
        text, names = sentence(rng, f"{tag} note {n}")
        if kind == 3:
            item = entities.save(text, entities=names)
        else:
            item = long_term.save(text, agent_id=tag)
        _say(f"S {item.memory_id}")
        n += 1
    storage.close()


def crash_child(path: str, seed: int, count: int) -> None:
    """Ingest until killed: single saves, batches, entity memories and deletes."""
    from graphmem import EntityMemory, LongTermMemory, SQLiteStorage

    rng = random.Random(seed)
    storage = SQLiteStorage(path)
    long_term = LongTermMemory(storage=storage, max_items=None)
    entities = EntityMemory(storage=storage)
    saved: list[tuple[str, Any]] = []
    for n in range(count):
        roll = rng.random()
        tag = f"trial {seed} item {n}"
        if roll < 0.1 and saved:
            memory_id, tier = saved.pop(rng.randrange(len(saved)))
            _say(f"d {memory_id}")  # a delete begins: if killed now, it may or may not commit
            if tier.delete(memory_id):
                _say(f"D {memory_id}")
        elif roll < 0.2:
            records = [{"content": sentence(rng, f"{tag}.{i}")[0]} for i in range(4)]
            for item in long_term.save_many(records):
                _say(f"S {item.memory_id}")
                saved.append((item.memory_id, long_term))
        elif roll < 0.6:
            text, names = sentence(rng, tag)
            item = entities.save(text, entities=names)
            _say(f"S {item.memory_id}")
            saved.append((item.memory_id, entities))
        else:
            item = long_term.save(sentence(rng, tag)[0], agent_id=f"agent-{seed % 3}")
            _say(f"S {item.memory_id}")
            saved.append((item.memory_id, long_term))
    _say("done")


def ingest_child(path: str, seed: int, count: int) -> None:
    """Ingest records in batches of 2 (each batch one ``ingest_records`` call, as the CLI
    makes them); print ``S <content>`` for each record of a batch that returned."""
    from graphmem import SQLiteStorage
    from graphmem.records import ingest_records

    rng = random.Random(seed)
    storage = SQLiteStorage(path)
    for start in range(0, count, 2):
        records = [
            {"content": sentence(rng, f"ingest {seed}.{n}")[0]} for n in range(start, start + 2)
        ]
        ingest_records(storage, records, batch_size=2)
        for record in records:
            _say(f"S {record['content']}")
    _say("done")


def merge_child(path: str, seed: int, count: int) -> None:
    """Merge "Robert Stone" into "Bob Stone" and undo it, over and over: ``m <id>`` after a
    merge returned, ``u <id>`` before and ``U <id>`` after an unmerge returned."""
    from graphmem import EntityMemory, SQLiteStorage

    rng = random.Random(seed)
    storage = SQLiteStorage(path)
    memory = EntityMemory(storage=storage)
    if memory.get_entity("Robert Stone") is None or memory.get_entity("Bob Stone") is None:
        memory.save("Bob Stone works at Initech in Paris.")
        memory.save("Robert Stone met Carol Diaz at Globex.")
    pending = pending_merges(path)  # an earlier child's merge, not undone
    for n in range(count):
        if pending:
            merge_id = pending.pop()
            _say(f"u {merge_id}")
            memory.unmerge(merge_id)
            _say(f"U {merge_id}")
        else:
            merge_id = memory.merge_entities("Bob Stone", "Robert Stone")
            _say(f"m {merge_id}")
            pending.append(merge_id)
        if rng.random() < 0.3:  # another tenant's writes between (this tenant's saves can
            # merge names by themselves, and such a merge must be undone first: test_merge.py)
            EntityMemory(storage=storage, tenant="u2").save(sentence(rng, f"merge {seed}.{n}")[0])
    _say("done")


def import_child(path: str, seed: int, count: int) -> None:
    """Import the export ``<path>.source.jsonl`` into the new database ``path``; ``I`` after
    it returned."""
    from graphmem import SQLiteStorage
    from graphmem.transfer import import_jsonl

    storage = SQLiteStorage(path)
    import_jsonl(storage.database, f"{path}.source.jsonl")
    _say("I")
    storage.close()
    _say("done")


def export_child(path: str, seed: int, count: int) -> None:
    """Export ``path`` to ``<path>.jsonl`` ``count`` times; ``E`` after each returned."""
    from graphmem import SQLiteStorage
    from graphmem.transfer import export_jsonl

    storage = SQLiteStorage(path)
    for _ in range(count):
        export_jsonl(storage.database, f"{path}.jsonl")
        _say("E")
    _say("done")


#: What a crash child does, by the name the ``run`` command gives.
CHILDREN = {
    "save": crash_child,
    "ingest": ingest_child,
    "merge": merge_child,
    "import": import_child,
    "export": export_child,
}


def zygote() -> None:
    """Load spaCy, the tiers and the relation models once (an in-memory save warms every
    lazily loaded part); fork a crash child per ``run`` command (see the module docstring)."""
    from graphmem import (  # noqa: F401  (warm imports, inherited by every child)
        EntityMemory,
        LongTermMemory,
        SQLiteStorage,
        records,
        transfer,
    )
    from graphmem.extract.embeddings import get_embedder

    EntityMemory().save("Alice Johnson met Bob Stone in Paris.")
    embedder = get_embedder()  # recall by meaning's vectors (on by default), loaded once too
    if embedder is not None:
        embedder.embed(["Alice Johnson met Bob Stone in Paris."])
    _say("ready")
    for line in sys.stdin:
        parts = line.split()
        if not parts or parts[0] == "quit":
            break
        _, kind, path, seed, count = parts
        gate_r, gate_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(gate_w)
            os.read(gate_r, 1)  # start only after the zygote announced our pid
            # A child stuck for good says where (on stderr) and ends, instead of hanging the test.
            faulthandler.dump_traceback_later(
                float(os.environ.get("GM_CHILD_TIMEOUT", 50)), exit=True
            )
            try:
                CHILDREN[kind](path, int(seed), int(count))
            except BaseException:
                traceback.print_exc()  # on stderr; the exit status tells the test
                os._exit(1)
            os._exit(0)
        os.close(gate_r)
        _say(f"pid {pid}")
        os.write(gate_w, b"g")
        os.close(gate_w)
        _, status = os.waitpid(pid, 0)
        _say(f"exit {pid} {status}")


if __name__ == "__main__":
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    command = sys.argv[1]
    if command == "write":
        write_worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    elif command == "zygote":
        zygote()
    else:
        raise SystemExit(f"unknown command {command!r}")
