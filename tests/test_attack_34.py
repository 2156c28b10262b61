"""The twelve breaks of issue 34's attack (on a501c96), each kept by a test."""

from __future__ import annotations

from typing import Any

import pytest

from graphmem.errors import InvalidArgumentError
from graphmem.mcp.reference_graph import ReferenceGraph


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
