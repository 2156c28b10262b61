"""GraphML and GEXF exports (graphmem.viz.export_graph, ``graphmem export-graph``): read back
with NetworkX, an export holds the same nodes, relations and attributes as the graph."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from _stores import copy_database

from graphmem.cli import main
from graphmem.compat.storage import SQLiteStorage
from graphmem.errors import EntityNotFound, InvalidArgumentError
from graphmem.memories import EntityMemory
from graphmem.viz import drawable_graph, export_graph

#: Attributes exported as JSON text.
JSON_ATTRIBUTES = {"aliases", "evidence"}


def read_back(path: Path) -> nx.MultiDiGraph:
    if path.suffix == ".gexf":
        graph: nx.MultiDiGraph = nx.read_gexf(path)
    else:
        graph = nx.read_graphml(path, force_multigraph=True)
    return graph


def decoded(attrs: dict[str, Any], *, gexf: bool) -> dict[str, Any]:
    """An exported record as the graph held it: JSON text decoded, GEXF's renames undone."""
    out = {k: json.loads(v) if k in JSON_ATTRIBUTES else v for k, v in attrs.items()}
    if gexf:
        out.pop("id", None)  # GEXF's own edge id
        out.pop("weight", None)  # checked apart: it is the support
        if "entity_label" in out:
            out["label"] = out.pop("entity_label")
    return out


def expected(attrs: dict[str, Any]) -> dict[str, Any]:
    """A graph record as an export keeps it: missing values (None) are left out."""
    return {k: v for k, v in attrs.items() if v is not None}


def assert_same_graph(graph: nx.MultiDiGraph, back: nx.MultiDiGraph, *, gexf: bool) -> None:
    assert set(back.nodes) == set(graph.nodes)
    assert sorted(back.edges(keys=True)) == sorted(graph.edges(keys=True))
    for node, attrs in graph.nodes(data=True):
        assert decoded(back.nodes[node], gexf=gexf) == expected(attrs), node
        if gexf:
            assert back.nodes[node]["label"] == attrs["name"]  # what Gephi shows
    for u, v, key, attrs in graph.edges(keys=True, data=True):
        assert decoded(back.edges[u, v, key], gexf=gexf) == expected(attrs), (u, v, key)
        if gexf:
            assert back.edges[u, v, key]["weight"] == attrs["support"]


@pytest.fixture(scope="module")
def memory() -> EntityMemory:
    memory = EntityMemory()
    memory.save("Maria Garcia works at Acme Corp in Berlin.", timestamp="2026-03-02")
    memory.save("Maria met Ben Okafor of Globex in London.", timestamp="2026-03-05")
    memory.save('Ben Okafor, also "Benny", leads Project <Atlas> & more.', timestamp="2026-04-01")
    memory.save("Maria Garcia left Acme Corp.", timestamp="2026-05-01")
    return memory


class TestExportedFile:
    @pytest.mark.parametrize("suffix", [".graphml", ".gexf"])
    def test_round_trips_through_networkx(
        self, memory: EntityMemory, tmp_path: Path, suffix: str
    ) -> None:
        written = export_graph(memory, tmp_path / f"kg{suffix}")
        graph = drawable_graph(memory)
        assert graph.number_of_edges() >= 4 and any(
            d["evidence"] for *_, d in graph.edges(data=True)
        )
        assert (written.nodes, written.edges) == (len(graph), graph.number_of_edges())
        assert_same_graph(graph, read_back(written.path), gexf=suffix == ".gexf")

    def test_mentions_are_the_context_count(self, memory: EntityMemory, tmp_path: Path) -> None:
        back = read_back(export_graph(memory, tmp_path / "kg.graphml").path)
        key = memory.graph.resolve("Maria Garcia")
        assert key is not None
        assert back.nodes[key]["mentions"] == memory.frequency("Maria Garcia") == 3
        assert back.graph["mentions_counted"] == "memories of the entity tier that name it"

    def test_evidence_names_memory_rule_and_date(
        self, memory: EntityMemory, tmp_path: Path
    ) -> None:
        back = read_back(export_graph(memory, tmp_path / "kg.gexf").path)
        records = [r for *_, d in back.edges(data=True) for r in json.loads(d["evidence"])]
        saved = {item.memory_id for item in memory.retrieve(limit=100)}
        assert records and {r["memory_id"] for r in records} <= saved
        assert all(r["rule"] and r["date"][:4] == "2026" for r in records)

    def test_a_part_of_the_graph(self, memory: EntityMemory, tmp_path: Path) -> None:
        written = export_graph(memory, tmp_path / "ben.graphml", entities=["Ben Okafor"], depth=0)
        back = read_back(written.path)
        assert [back.nodes[n]["name"] for n in back] == ["Ben Okafor"]
        whole = export_graph(memory, tmp_path / "near.graphml", entities="Ben Okafor", depth=1)
        assert whole.nodes > 1 and "maria garcia" in read_back(whole.path)

    def test_a_hand_built_graph_with_odd_values(self, tmp_path: Path) -> None:
        graph = nx.MultiDiGraph()
        graph.add_node("a", name="A", tags={"y", "x"}, score=1, extra=None)
        graph.add_node("b", name="B", score=2.5, when=("2026", 1))
        graph.add_node(3, name="C", score="high")  # mixed types: text throughout
        graph.add_edge("a", "b", key="k", support=True, meta={"k": [1, 2]})
        back = read_back(export_graph(graph, tmp_path / "odd.graphml").path)
        assert back.nodes["a"] == {"name": "A", "tags": '["x", "y"]', "score": "1"}
        assert back.nodes["b"]["when"] == '["2026", 1]' and back.nodes["3"]["score"] == "high"
        assert back.edges["a", "b", "k"] == {"support": True, "meta": '{"k": [1, 2]}'}

    @pytest.mark.parametrize(
        ("name", "fmt", "error", "fragment"),
        [
            ("kg.json", None, InvalidArgumentError, "end the name in .graphml or .gexf"),
            ("kg.graphml", "dot", InvalidArgumentError, "unknown graph format 'dot'"),
        ],
    )
    def test_bad_format_writes_nothing(
        self, memory: EntityMemory, tmp_path: Path, name: str, fmt: Any, error: Any, fragment: str
    ) -> None:
        with pytest.raises(error, match=fragment):
            export_graph(memory, tmp_path / name, format=fmt)
        assert list(tmp_path.iterdir()) == []

    def test_a_source_that_is_no_graph_is_named(self, tmp_path: Path) -> None:
        from graphmem import CortexMemory
        from graphmem.errors import InvalidArgumentTypeError
        from graphmem.viz import render_graph

        with pytest.raises(InvalidArgumentTypeError, match=r"got CortexMemory"):
            export_graph(CortexMemory(), tmp_path / "x.graphml")  # type: ignore[arg-type]
        with pytest.raises(InvalidArgumentTypeError, match=r"memory\.entity_memory"):
            render_graph([("a", "b")], tmp_path / "x.html")  # type: ignore[arg-type]
        assert list(tmp_path.iterdir()) == []

    def test_unknown_entity_writes_nothing(self, memory: EntityMemory, tmp_path: Path) -> None:
        with pytest.raises(EntityNotFound, match="unknown entity 'Nobody'"):
            export_graph(memory, tmp_path / "x.gexf", entities=["Nobody"])
        assert list(tmp_path.iterdir()) == []


# --- the demo, through the command line --------------------------------------------------


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory, demo_database: Path) -> Iterator[Path]:
    """A copy of the demo's database (``demo_database`` in conftest.py)."""
    yield copy_database(demo_database, tmp_path_factory.mktemp("demo") / "demo.db")


def graphmem(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the command line in-process: (status, stdout, stderr)."""
    try:
        status = main(list(args))
    except SystemExit as exc:  # a usage error
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".graphml", ".gexf"])
def test_the_demo_exports_open_in_networkx(
    demo_db: Path, tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / f"demo{suffix}"
    status, stdout, stderr = graphmem(capsys, "--db", str(demo_db), "export-graph", str(out))
    assert status == 0, stderr
    storage = SQLiteStorage(demo_db)
    try:
        memory = EntityMemory(storage=storage, max_items=None)
        graph = drawable_graph(memory)
        atlas = memory.frequency("Atlas")
    finally:
        storage.close()
    assert f": {len(graph)} entities, {graph.number_of_edges()} relations)" in stdout
    back = read_back(out)
    assert_same_graph(graph, back, gexf=suffix == ".gexf")
    assert back.nodes["atlas"]["mentions"] == atlas > 50


@pytest.mark.slow
def test_the_command_exports_a_neighbourhood_and_refuses_mistakes(
    demo_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "dana.xml"
    db = ("--db", str(demo_db), "export-graph")
    status, _, stderr = graphmem(capsys, *db, str(out), "--format", "gexf", "--entity", "Dana")
    assert status == 0, stderr
    back = nx.read_gexf(out)
    names = {d["name"] for _, d in back.nodes(data=True)}
    assert "Dana Whitfield" in names and "Harbor Analytics" in names and len(names) < 40
    status, _, stderr = graphmem(capsys, *db, str(out), "--format", "gexf")
    assert status == 1 and "--force" in stderr
    status, _, stderr = graphmem(capsys, *db, str(tmp_path / "x.json"))
    assert status == 2 and "end the name in .graphml or .gexf" in stderr
    status, _, stderr = graphmem(capsys, *db, str(tmp_path / "x.gexf"), "--entity", "Nobody")
    assert status == 1 and "unknown entity 'Nobody'" in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dana.xml"]
