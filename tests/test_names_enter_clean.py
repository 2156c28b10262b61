"""Issue 25.12: names are checked where they enter the graph (one rule: control characters,
surrogates and noncharacters become spaces), and graph exports hold only what XML can."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest

from graphmem.memories.entity import EntityMemory
from graphmem.viz import export_graph


@pytest.mark.parametrize("bad", ["\x0b", "\uffff", "\x1f", "\x85"])
@pytest.mark.parametrize("suffix", [".graphml", ".gexf"])
def test_names_with_control_characters_export_readable_graphs(
    tmp_path: Path, bad: str, suffix: str
) -> None:
    memory = EntityMemory()
    memory.save(f"Maya{bad}Lindqvist joined Lumen Robotics.", entities=[f"Maya{bad}Lindqvist"])
    memory.add_relation(f"Dana{bad}Scott", "mentors", "Maya Lindqvist")
    memory.save(f"Tom Becker met Ana{bad} Costa in Oslo{bad}.")
    names = {str(data["name"]) for _, data in memory.graph.graph.nodes(data=True)}
    assert not any(bad in name for name in names), names
    assert {"Maya Lindqvist", "Dana Scott"} <= names
    dana = memory.get_entity("Dana Scott")
    assert dana is not None and dana.aliases == ("Dana Scott",)
    written = export_graph(memory, tmp_path / f"kg{suffix}")
    read = nx.read_gexf if suffix == ".gexf" else nx.read_graphml
    back = read(written.path)  # raised: not well-formed (invalid token)
    assert back.number_of_nodes() == written.nodes


def test_evidence_text_with_control_characters_exports(tmp_path: Path) -> None:
    memory = EntityMemory()
    memory.save("Erik Lund joined Lumen Robotics.\x0b\uffff")
    written = export_graph(memory, tmp_path / "kg.graphml")
    back = nx.read_graphml(written.path)
    assert back.number_of_edges() == written.edges > 0
