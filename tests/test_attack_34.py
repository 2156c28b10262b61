"""The twelve breaks of issue 34's attack (on a501c96), each kept by a test."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import tracemalloc
from contextlib import closing
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _workers import children_of, processes_ending

from graphmem.cli import main
from graphmem.compat.storage import SQLiteStorage
from graphmem.errors import AnalysisWorkerError, InvalidArgumentError
from graphmem.extract import workers
from graphmem.extract.embeddings import StaticEmbedder
from graphmem.index.reanalysis import reanalyse
from graphmem.index.views import TenantViews
from graphmem.memories import EntityMemory
from graphmem.records import ingest_records
from graphmem.reference import ReferenceGraph
from graphmem.store import reanalysis_rows

real_analyse_chunk = workers._analyse_chunk


def _entity(name: str, kind: str, *observations: str) -> dict[str, Any]:
    return {"name": name, "entityType": kind, "observations": list(observations)}


def test_a_nul_in_a_search_nodes_query_matches_only_what_contains_it() -> None:
    graph = ReferenceGraph(None)
    graph.create_entities(
        [_entity("Ada", "person", "Writes Rust"), _entity("Bob", "person", "Likes tea\x00x")]
    )
    assert graph.search_nodes("\x00")["entities"] == [_entity("Bob", "person", "Likes tea\x00x")]


@pytest.mark.parametrize("cursor", ["e²", "e" + "9" * 20, "r٣", "s" + "1" * 30])
def test_a_read_graph_cursor_it_never_gave_is_a_clear_error(cursor: str) -> None:
    graph = ReferenceGraph(None)
    graph.create_entities([_entity("Ada", "person", "Writes Rust")])
    with pytest.raises(InvalidArgumentError, match="not a cursor this tool gave"):
        if cursor[0] == "s":
            graph.search_nodes("rust", 1, cursor)
        else:
            graph.read_graph(1, cursor)


def _new_db(folder: Path) -> str:
    path = folder / "memory.db"
    SQLiteStorage(str(path)).close()
    return str(path)


def test_an_mcp_memory_file_that_is_not_utf8_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "memory.jsonl"
    line = '{"type":"entity","name":"Ada","entityType":"person","observations":["caf\xe9"]}'
    source.write_bytes(line.encode("latin-1"))
    assert main(["--db", str(tmp_path / "m.db"), "import-mcp-memory", str(source)]) == 1
    assert "line 1: not UTF-8 text" in capsys.readouterr().err


def test_a_lone_surrogate_in_an_entity_type_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "memory.jsonl"
    source.write_text(
        '{"type":"entity","name":"Ada","entityType":"\\ud800","observations":["x"]}',
        encoding="utf-8",
    )
    assert main(["--db", str(tmp_path / "m.db"), "import-mcp-memory", str(source)]) == 1
    assert "line 1: the entity.entityType is not valid Unicode" in capsys.readouterr().err
    with pytest.raises(InvalidArgumentError, match="entityType is not valid Unicode"):
        ReferenceGraph(None).create_entities([_entity("Ada", "\ud800", "x")])


def test_undeclare_of_a_pattern_nested_too_deeply_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _new_db(tmp_path)
    deep = "[" * 5000 + "]" * 5000
    assert main(["--db", db, "undeclare", "PROJECT", "--pattern", deep]) == 2
    assert "--pattern nests too deeply" in capsys.readouterr().err
    patterns = tmp_path / "types.jsonl"
    patterns.write_text('{"label": "PROJECT", "pattern": ' + deep + "}\n", encoding="utf-8")
    assert main(["--db", db, "declare", str(patterns)]) == 1
    assert ":1: nests too deeply" in capsys.readouterr().err
    source = tmp_path / "memory.jsonl"
    source.write_text('{"type": "entity", "name": ' + deep + "}\n", encoding="utf-8")
    assert main(["--db", db, "import-mcp-memory", str(source)]) == 1
    assert "line 1: nests too deeply" in capsys.readouterr().err


def _damaged(folder: Path, key: str) -> str:
    """A database with a saved text, a relabel, a declared pattern and ``key``'s
    graphmem_meta value damaged."""
    db = _new_db(folder)
    storage = SQLiteStorage(db)
    memory = EntityMemory(storage=storage)
    memory.save("Bob Stone joined Kestrel in Paris.")
    memory.declare_entities([{"label": "PROJECT", "pattern": "Atlas"}])
    memory.relabel("Kestrel", "PRODUCT")
    storage.close()
    with closing(sqlite3.connect(db)) as con, con:
        con.execute("INSERT OR REPLACE INTO graphmem_meta VALUES (?, '{damaged')", (key,))
    return db


@pytest.mark.parametrize("key", ["entity_patterns", "entity_labels", "extraction_version"])
def test_a_damaged_meta_value_is_refused_by_name(
    tmp_path: Path, key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _damaged(tmp_path, key)
    assert main(["--db", db, "search", "Bob"]) == 1
    assert f"graphmem_meta value {key!r} is damaged" in capsys.readouterr().err


def test_a_damaged_reanalysis_plan_is_discarded_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _damaged(tmp_path, "reanalysis")
    assert main(["--db", db, "reanalyse"]) == 0
    assert "re-analysis plan is damaged" in capsys.readouterr().err
    assert main(["--db", db, "search", "Bob"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_two_reanalyses_at_once_keep_a_merge_and_count_a_hand_added_relation_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _new_db(tmp_path)
    first = EntityMemory(storage=SQLiteStorage(db))
    for text in (
        "Bob Stone joined Kestrel in Paris.",
        "Robert Stone signed the Kestrel renewal.",
        "Ada Lovelace visited Kestrel in Lyon.",
    ):
        first.save(text)
    merge_id = first.merge_entities("Bob Stone", "Robert Stone")
    first.add_relation("Bob Stone", "mentors", "Ada Lovelace")
    second = EntityMemory(storage=SQLiteStorage(db))
    real, calls = reanalysis_rows.texts_to_index, []

    def between_batches(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:  # the first run is between its batches: the second runs whole
            reanalyse(second.space.writer, batch_size=1)
        return real(*args, **kwargs)

    monkeypatch.setattr(reanalysis_rows, "texts_to_index", between_batches)
    reanalyse(first.space.writer, batch_size=1)
    monkeypatch.undo()
    check = EntityMemory(storage=SQLiteStorage(db))
    assert check.get_entity("Robert Stone").name == "Bob Stone"
    assert [e.support for e in check.find(predicate="mentors")] == [1]
    check.unmerge(merge_id)  # the merge is still in effect, so it can be undone
    assert check.get_entity("Robert Stone").name == "Robert Stone"


def _reference_over_a_saved_text(folder: Path) -> tuple[EntityMemory, ReferenceGraph]:
    """graphmem's works_at relation found in a saved text, and the reference graph's own."""
    storage = SQLiteStorage(_new_db(folder))
    memory = EntityMemory(storage=storage)
    memory.save("Bob Stone joined Kestrel in Paris.")
    graph = ReferenceGraph(storage)
    graph.create_entities([_entity("Bob Stone", "person"), _entity("Kestrel", "organization")])
    graph.create_relations([{"from": "Bob Stone", "to": "Kestrel", "relationType": "works_at"}])
    assert [e.support for e in memory.find(predicate="works_at")] == [2]
    return memory, graph


def test_deleting_a_reference_relation_removes_only_its_hand_added_evidence(
    tmp_path: Path,
) -> None:
    memory, graph = _reference_over_a_saved_text(tmp_path)
    graph.delete_relations([{"from": "Bob Stone", "to": "Kestrel", "relationType": "works_at"}])
    assert [(e.object, e.support) for e in memory.find(predicate="works_at")] == [("Kestrel", 1)]
    assert graph.read_graph()["relations"] == []


def test_deleting_a_reference_entity_keeps_graphmem_s_relation_from_its_texts(
    tmp_path: Path,
) -> None:
    memory, graph = _reference_over_a_saved_text(tmp_path)
    graph.delete_entities(["Bob Stone"])
    assert [(e.object, e.support) for e in memory.find(predicate="works_at")] == [("Kestrel", 1)]


def test_one_delete_relations_call_rebuilds_the_graph_view_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    graph = ReferenceGraph(None)
    names = [f"Person {i:03d}" for i in range(40)]
    graph.create_entities([_entity(n, "person") for n in names])
    relations = [{"from": a, "to": b, "relationType": "knows"} for a, b in pairwise(names)]
    graph.create_relations(relations)
    loads = []
    real = TenantViews.load
    monkeypatch.setattr(TenantViews, "load", lambda *a, **k: loads.append(1) or real(*a, **k))
    graph.delete_relations(relations)
    assert len(loads) <= 1
    graph.create_relations(relations)
    loads.clear()
    graph.delete_entities(names)
    assert len(loads) <= 1
    assert graph.read_graph() == {"entities": [], "relations": []}


def test_a_relabel_goes_with_the_last_memory_naming_its_entity(tmp_path: Path) -> None:
    db = _new_db(tmp_path)
    memory = EntityMemory(storage=SQLiteStorage(db))
    saved = memory.save("Bob Stone joined Kestrel in Paris.")
    memory.relabel("Kestrel", "PRODUCT")
    assert memory.delete(saved.memory_id) == 1
    with closing(sqlite3.connect(db)) as con:
        kept = con.execute("SELECT value FROM graphmem_meta WHERE key = 'entity_labels'").fetchall()
    assert "kestrel" not in str(kept)
    memory.save("Kestrel opened an office in Lyon.")
    assert memory.get_entity("Kestrel").label != "PRODUCT"


def test_a_static_embedding_batch_is_not_padded_to_its_longest_text() -> None:
    pytest.importorskip("wordllama")
    embedder = StaticEmbedder()
    short = [f"Note {i}: Ada met Bob about the Kestrel renewal." for i in range(63)]
    long = " ".join(f"word{i % 997} Kestrel" for i in range(1500))  # ~ 15,000 characters
    tracemalloc.start()
    try:
        vectors = embedder.embed([long, *short])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 * 2**20, f"{peak / 2**20:.0f} MiB"
    alone = embedder.embed([long, short[5]])
    assert np.allclose(vectors[[0, 6]], alone, atol=1e-6)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_analysis_workers_die_with_their_parent(how: signal.Signals) -> None:
    code = (
        "from graphmem.extract.pipeline import get_analyzer\n"
        "from graphmem.extract.workers import AnalysisPool\n"
        "pool = AnalysisPool(get_analyzer(), workers=2)\n"
        "print('ready', flush=True)\n"
        "import time; time.sleep(300)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    with processes_ending(parent) as workers:
        assert parent.stdout is not None and parent.stdout.readline() == "ready\n"
        workers.update(children_of(parent.pid))
        assert len(workers) == 2
        parent.send_signal(how)
        parent.wait(30)


def _poisoned_chunk(texts: list[tuple[str, str]], relations: bool) -> list[bytes]:
    """A worker's task that kills its worker when a text says so."""
    if any("POISON" in body for _, body in texts):
        os.kill(os.getpid(), signal.SIGKILL)
    return real_analyse_chunk(texts, relations)


def test_a_killed_analysis_worker_ends_an_ingest_saying_what_was_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [{"content": f"Person {i} joined Kestrel in Paris."} for i in range(200)]
    records[150]["content"] = "POISON ends the worker."
    monkeypatch.setattr(workers, "_analyse_chunk", _poisoned_chunk)  # (forked: inherited)
    db = _new_db(tmp_path)
    storage = SQLiteStorage(db)
    try:
        with pytest.raises(AnalysisWorkerError) as caught:
            ingest_records(storage, records, batch_size=20, workers=2)
    finally:
        storage.close()
    message = str(caught.value)
    with closing(sqlite3.connect(db)) as con:
        (stored,) = con.execute("SELECT count(*) FROM texts").fetchone()
    assert 0 < stored < 150
    assert "killed by SIGKILL" in message, message
    assert f"{stored} of the 200 records were stored" in message, message
