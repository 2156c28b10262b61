"""What a team's queries need from the graph: dated hand fixes (``add_relation(...,
valid_from=, valid_to=)``), typed paths before co-occurrence (``typed_only=``,
``graphmem path --typed-only``), and clear errors for an unknown predicate in ``find`` or a
naive datetime in a filter."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from graphmem import CortexMemory, EntityMemory
from graphmem.errors import InvalidArgumentError


def test_a_dated_hand_fix_holds_in_the_past_and_ends() -> None:
    memory = EntityMemory()
    edge = memory.add_relation(
        "Dana Whitfield", "works_at", "Acme Corp", valid_from="2021-02-01", valid_to="2023-06-30"
    )
    assert (edge.valid_from or "").startswith("2021-02-01")
    assert (edge.valid_to or "").startswith("2023-06-30")
    assert edge.validity == "2021-02-01 to 2023-06-30"

    def held(when: str) -> list[str]:
        return [e.object for e in memory.as_of(when).find(predicate="works_at")]

    assert held("2022-01-01") == ["Acme Corp"]
    assert held("2020-01-01") == [] and held("2024-01-01") == []
    assert memory.find(predicate="works_at", current_only=True) == []
    # Without dates: since now, still holding.
    now = memory.add_relation("Dana Whitfield", "lives_in", "Oslo")
    assert now.valid_to is None and held("2022-01-01") == ["Acme Corp"]
    with pytest.raises(InvalidArgumentError, match="valid_to .* must be later than valid_from"):
        memory.add_relation("A B", "met", "C D", valid_from="2024-01-02", valid_to="2024-01-01")
    with pytest.raises(InvalidArgumentError, match="valid_from must be a datetime or an ISO"):
        memory.add_relation("A B", "met", "C D", valid_from="last spring")
    assert memory.get_entity("A B") is None  # nothing written by a refused call


def test_an_entity_known_later_is_dated_back_by_a_fix() -> None:
    memory = EntityMemory()
    memory.save("Priya Nair presented the roadmap.", timestamp="2025-05-01")
    memory.add_relation("Priya Nair", "works_at", "Harbor Analytics", valid_from="2024-01-15")
    assert [e.object for e in memory.as_of("2024-06-01").find(subject="Priya Nair")] == [
        "Harbor Analytics"
    ]


def test_find_names_the_accepted_predicates() -> None:
    memory = EntityMemory()
    memory.save("Maya Lindqvist joined Lumen Robotics in Berlin.")
    memory.add_relation("Maya Lindqvist", "mentors", "Tom Becker")
    with pytest.raises(
        InvalidArgumentError,
        match=r"unknown predicate 'work_at' \(did you mean 'works_at'\?\); accepted: .*works_at",
    ) as raised:
        memory.find(predicate="work_at")
    message = str(raised.value)
    assert "mentors" in message and "co_occurs" in message and "<title>_of" in message
    assert [e.subject for e in memory.find(predicate="works_at")] == ["Maya Lindqvist"]
    assert [e.object for e in memory.find(predicate="mentors")] == ["Tom Becker"]
    assert memory.find(predicate="cto_of") == []  # a role: known, none held
    assert memory.find(predicate="founded") == []


def test_a_naive_datetime_in_a_filter_is_named() -> None:
    memory = CortexMemory()
    memory.save_task_result("Audit", "Acme passed the audit", "QA", importance=0.9)
    assert memory.long_term is not None
    since = datetime(2020, 1, 1, tzinfo=UTC)
    assert memory.long_term.search("Acme", filters={"timestamp": lambda t: t > since})
    naive = datetime(2020, 1, 1)
    with pytest.raises(InvalidArgumentError, match="naive datetime .* give the datetime a tzinfo"):
        memory.long_term.search("Acme", filters={"timestamp": lambda t: t > naive})
    with pytest.raises(InvalidArgumentError, match="naive datetime"):
        memory.long_term.delete(filters={"timestamp": lambda t: t > naive})
    assert memory.long_term.search("Acme")  # the refused delete removed nothing


@pytest.fixture(scope="module")
def linked() -> EntityMemory:
    """Priya and Aurex are mentioned together, and linked by a typed chain through Harbor."""
    memory = EntityMemory()
    memory.save("Priya Nair met Aurex Logistics buyers at the fair in Oslo.")
    memory.add_relation("Priya Nair", "works_at", "Harbor Analytics")
    memory.add_relation("Harbor Analytics", "partnered_with", "Aurex Logistics")
    return memory


def test_typed_paths_come_before_co_occurrence(linked: EntityMemory) -> None:
    paths = linked.paths("Priya Nair", "Aurex Logistics")
    assert paths and all(hop.edge.predicate != "co_occurs" for hops in paths for hop in hops)
    assert [[h.edge.predicate for h in hops] for hops in paths] == [["works_at", "partnered_with"]]
    # Too few hops for the typed chain: the co-occurrence link, unless typed_only.
    one = linked.paths("Priya Nair", "Aurex Logistics", max_hops=1)
    assert [[h.edge.predicate for h in hops] for hops in one] == [["co_occurs"]]
    assert linked.paths("Priya Nair", "Aurex Logistics", max_hops=1, typed_only=True) == []
    assert linked.graph.paths("Priya Nair", "Aurex Logistics", typed_only=True) == paths


def test_the_sql_graph_answers_the_same(linked: EntityMemory) -> None:
    from graphmem.index.sql_graph import SQLGraph

    sql = SQLGraph(linked.space.database, "")
    for hops, typed_only in ((3, False), (1, False), (1, True)):
        mine = [
            [h.edge.predicate for h in p]
            for p in linked.graph.paths(
                "Priya Nair", "Aurex Logistics", hops, typed_only=typed_only
            )
        ]
        theirs = [
            [h.edge.predicate for h in p]
            for p in sql.paths("Priya Nair", "Aurex Logistics", hops, typed_only=typed_only)
        ]
        assert mine == theirs, (hops, typed_only)
