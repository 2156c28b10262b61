"""The twelve breaks of issue 34's attack (on a501c96), each kept by a test."""

from __future__ import annotations

from typing import Any

from graphmem.mcp.reference_graph import ReferenceGraph


def _entity(name: str, kind: str, *observations: str) -> dict[str, Any]:
    return {"name": name, "entityType": kind, "observations": list(observations)}


def test_a_nul_in_a_search_nodes_query_matches_only_what_contains_it() -> None:
    graph = ReferenceGraph(None)
    graph.create_entities(
        [_entity("Ada", "person", "Writes Rust"), _entity("Bob", "person", "Likes tea\x00x")]
    )
    assert graph.search_nodes("\x00")["entities"] == [_entity("Bob", "person", "Likes tea\x00x")]
