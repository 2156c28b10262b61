"""Pictures that stay readable (issue 30): one edge per pair and direction, ego pages that draw
the ego's relations, overviews that draw each entity's strongest, communities drawn as one
node, entities held on the page and drawn on a click, labels that do not collide. The page
is driven in a real headless Chromium (``browser`` marker); the plan behind it in Python."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from _viz_pages import (
    click_canvas,
    drawn_edge,
    edge_records,
    node_dom_position,
    node_id_by_name,
    open_page,
    panel_heading,
    panel_text,
    view,
)

from graphmem.errors import EntityNotFound, InvalidArgumentError
from graphmem.viz import render_graph
from graphmem.viz._views import (
    CO_OCCURS_PER_ENTITY,
    STRONGEST_PER_ENTITY,
    Link,
    PagePlan,
    communities,
    core_relations,
    links_on_page,
    plan_nodes,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))


def relate(
    graph: nx.MultiDiGraph, source: str, target: str, predicate: str, support: int = 1
) -> None:
    for node in (source, target):
        if node not in graph:
            graph.add_node(node, name=node.title(), label="PERSON", mentions=1)
    graph.add_edge(
        source,
        target,
        key=predicate,
        predicate=predicate,
        support=support,
        evidence=[f"{source.title()} {predicate} {target.title()} (support {support})."],
    )


def pair_graph() -> nx.MultiDiGraph:
    """Ada has three relations to Acme, Acme one back to Ada, and Bob one to Acme."""
    graph = nx.MultiDiGraph()
    relate(graph, "ada", "acme", "works_at", 3)
    relate(graph, "ada", "acme", "founded", 2)
    relate(graph, "ada", "acme", "advises", 1)
    relate(graph, "acme", "ada", "employs", 1)
    relate(graph, "bob", "acme", "works_at", 1)
    return graph


def ego_graph() -> nx.MultiDiGraph:
    """The ego knows five people, who know each other in a ring; the first of them also knows
    two people further out."""
    graph = nx.MultiDiGraph()
    near = [f"near {i}" for i in range(5)]
    for i, person in enumerate(near):
        relate(graph, "ego", person, "knows", 2)
        relate(graph, person, near[(i + 1) % 5], "met")
    relate(graph, "near 0", "far 0", "met")
    relate(graph, "near 0", "far 1", "met")
    return graph


def dense_graph(size: int = 10) -> nx.MultiDiGraph:
    """Every pair of ``size`` people related once, with support by how far apart they are."""
    graph = nx.MultiDiGraph()
    for i in range(size):
        for j in range(i + 1, size):
            relate(graph, f"p{i:02d}", f"p{j:02d}", "met", support=1 + (i + j) % 4)
    return graph


def two_teams() -> nx.MultiDiGraph:
    """Two teams of five, everyone related to their team mates; one relation between teams."""
    graph = nx.MultiDiGraph()
    for team in ("red", "blue"):
        members = [f"{team} {i}" for i in range(5)]
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                relate(graph, a, b, "works_with", 3)
    relate(graph, "red 0", "blue 0", "met", 5)
    return graph


# --- the plan, in Python ----------------------------------------------------------------


class TestPlan:
    def test_an_ego_page_draws_the_neighbourhood_and_holds_the_next_hop(self) -> None:
        plan = plan_nodes(ego_graph(), max_nodes=10, ego="ego", depth=1)
        assert plan.drawn[0] == "ego" and set(plan.drawn) == {"ego"} | {
            f"near {i}" for i in range(5)
        }
        assert plan.held == ["far 0", "far 1"]
        assert plan.hops is not None and plan.hops["far 1"] == 2

    def test_an_overview_holds_the_next_most_connected(self) -> None:
        graph = ego_graph()
        plan = plan_nodes(graph, max_nodes=4)
        assert plan.drawn == ["ego", "near 0", "near 1", "near 2"]
        assert plan.held == ["near 3", "near 4"]  # half as many as drawn

    @pytest.mark.parametrize("depth", [0, -1, 1.5, True])
    def test_rejects_a_bad_depth(self, depth: Any) -> None:
        with pytest.raises(InvalidArgumentError, match="depth must be an integer of at least 1"):
            plan_nodes(ego_graph(), max_nodes=5, ego="ego", depth=depth)

    def test_an_unknown_ego_names_it(self) -> None:
        with pytest.raises(EntityNotFound, match="Entity 'nobody' is not in the graph"):
            plan_nodes(ego_graph(), max_nodes=5, ego="nobody")

    def test_the_ego_relations_are_core_and_the_ring_is_not(self) -> None:
        plan = PagePlan(["ego", "a", "b"], ["far"], {"ego": 0, "a": 1, "b": 1, "far": 2})
        links = [
            Link("ego", "a", True, 1),
            Link("a", "b", True, 9),
            Link("b", "ego", False, 1),
            Link("a", "far", True, 1),
        ]
        assert core_relations(links, plan) == {0, 2}

    def test_an_overview_keeps_each_entitys_strongest(self) -> None:
        nodes = [f"n{i}" for i in range(4)]
        plan = PagePlan(nodes, [])
        # 6 relations among 4 entities: no more than 2 each on average, so all are core.
        everything = [Link(a, b, True, 1) for i, a in enumerate(nodes) for b in nodes[i + 1 :]]
        assert core_relations(everything, plan) == set(range(6))
        nodes = [f"n{i}" for i in range(6)]
        links = [
            Link(a, b, True, i + j)
            for i, a in enumerate(nodes)
            for j, b in enumerate(nodes)
            if i < j
        ]
        core = core_relations(links, PagePlan(nodes, []))
        assert len(core) <= STRONGEST_PER_ENTITY * len(nodes) and len(core) < len(links)
        strongest_of_n0 = sorted(
            (i for i, link in enumerate(links) if "n0" in (link.source, link.target)),
            key=lambda i: -links[i].support,
        )[:STRONGEST_PER_ENTITY]
        assert set(strongest_of_n0) <= core

    def test_the_page_holds_each_entitys_strongest_co_occurrence(self) -> None:
        hub_links = [Link("hub", f"x{i}", False, i) for i in range(8)]
        plan = PagePlan(["hub"] + [f"x{i}" for i in range(8)], [])
        kept = links_on_page(hub_links, plan)
        # Each x has one link (its strongest), so all stay; the hub alone would keep 3.
        assert kept == list(range(8))
        plan = PagePlan(["hub"], [f"x{i}" for i in range(8)])
        kept = links_on_page(hub_links, plan)
        assert kept == list(range(8))  # each held x still has its one link to a drawn entity
        far = [Link("x0", "x1", False, 5), Link("x0", "x1", True, 1)]
        assert links_on_page(far, plan) == []  # both ends held: nothing to expand from
        # Six entities that all co-occur: the weakest link of both its ends is left out,
        # while typed relations all stay.
        nodes = list("abcdef")
        clique = [
            Link(a, b, False, i + j)
            for i, a in enumerate(nodes)
            for j, b in enumerate(nodes)
            if i < j
        ]
        kept = links_on_page([*clique, Link("a", "b", True, 1)], PagePlan(nodes, []))
        assert 0 not in kept and len(clique) in kept  # (a, b) co-occurs with support 1
        per_entity = {
            node: sum(node in (clique[i].source, clique[i].target) for i in kept if i < len(clique))
            for node in nodes
        }
        assert min(per_entity.values()) >= CO_OCCURS_PER_ENTITY

    def test_communities_split_two_teams(self) -> None:
        graph = two_teams()
        links = [Link(u, v, True, d["support"]) for u, v, d in graph.edges(data=True)]
        found = communities(list(graph), links)
        assert sorted(map(sorted, found)) == [
            [f"blue {i}" for i in range(5)],
            [f"red {i}" for i in range(5)],
        ]


# --- the page, in a browser -------------------------------------------------------------


def panel_rows(driver: Any) -> list[str]:
    rows = driver.find_elements("css selector", "#gm-panel-relations li.gm-relation")
    return [str(row.find_element("css selector", ".gm-relation-heading").text) for row in rows]


def edge_between(driver: Any, source: str, target: str) -> dict[str, Any]:
    ids = [node_id_by_name(driver, name) for name in (source, target)]
    edges = driver.execute_script(
        "var ids = arguments[0]; return graphmemData.edges.filter(function (e) {"
        "  return e.from === ids[0] && e.to === ids[1] && e.typed; });",
        ids,
    )
    assert len(edges) == 1, edges
    edge: dict[str, Any] = edges[0]
    return edge


def click_edge(driver: Any, source: str, target: str) -> None:
    """Click a third of the way along the line from ``source`` to ``target``."""
    (sx, sy), (tx, ty) = (
        node_dom_position(driver, node_id_by_name(driver, name)) for name in (source, target)
    )
    click_canvas(driver, sx + (tx - sx) / 3, sy + (ty - sy) / 3)


def double_click_node(driver: Any, name: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    canvas = driver.find_element("css selector", "#graphmem-network canvas")
    x, y = node_dom_position(driver, node_id_by_name(driver, name))
    size = canvas.size
    ActionChains(driver).move_to_element_with_offset(
        canvas, round(x - size["width"] / 2), round(y - size["height"] / 2)
    ).double_click().perform()


def names_shown(driver: Any) -> set[str]:
    ids = view(driver)["nodes"]
    names: list[str] = driver.execute_script(
        "var ids = arguments[0]; return graphmemData.nodes.filter(function (n) {"
        "  return ids.indexOf(n.id) >= 0; }).map(function (n) { return n.name; });",
        ids,
    )
    return set(names)


@pytest.mark.browser
class TestPairsInBrowser:
    def test_a_pair_with_three_predicates_is_one_edge_and_three_panel_rows(
        self, browser: Any, tmp_path: Path
    ) -> None:
        open_page(browser, render_graph(pair_graph(), tmp_path / "p.html").path)
        shown = edge_records(browser, view(browser)["edges"])
        # Ada -> Acme (3 relations), Acme -> Ada (1), Bob -> Acme (1): three edges.
        assert len(shown) == 3
        edge = edge_between(browser, "Ada", "Acme")
        assert [r["predicate"] for r in edge["relations"]] == ["works_at", "founded", "advises"]
        assert edge["support"] == 6
        # Few edges: labels show; three predicates read as a count.
        assert drawn_edge(browser, edge["id"])["label"] == "3 relations"
        back = edge_between(browser, "Acme", "Ada")
        assert drawn_edge(browser, back["id"])["label"] == "employs"
        # Width by total support: wider than a lone relation of support 1.
        assert drawn_edge(browser, edge["id"])["width"] > drawn_edge(browser, back["id"])["width"]
        click_edge(browser, "Ada", "Acme")
        assert panel_heading(browser, "Ada → Acme") == "Ada → Acme"
        assert panel_rows(browser) == ["works_at", "founded", "advises"]
        text = panel_text(browser)
        assert "3 relations · support 6" in text
        for support in (3, 2, 1):
            assert f"(support {support})." in text  # each relation's own evidence

    def test_a_filtered_predicate_leaves_the_rest_of_the_pair(
        self, browser: Any, tmp_path: Path
    ) -> None:
        open_page(browser, render_graph(pair_graph(), tmp_path / "p.html").path)
        edge = edge_between(browser, "Ada", "Acme")
        browser.find_element("css selector", "#gm-predicates summary").click()
        for predicate in ("founded", "advises"):
            browser.find_element(
                "css selector", f"input.gm-predicate-filter[data-predicate='{predicate}']"
            ).click()
        assert drawn_edge(browser, edge["id"])["label"] == "works_at"
        browser.find_element(
            "css selector", "input.gm-predicate-filter[data-predicate='works_at']"
        ).click()
        assert edge["id"] not in view(browser)["edges"]

    def test_support_threshold_and_neighbour_range(self, browser: Any, tmp_path: Path) -> None:
        open_page(browser, render_graph(pair_graph(), tmp_path / "p.html").path)
        edge = edge_between(browser, "Ada", "Acme")

        def type_into(element_id: str, value: int) -> None:
            box = browser.find_element("id", element_id)
            box.clear()
            box.send_keys(str(value))

        type_into("gm-min-support", 2)
        assert view(browser)["edges"] == [edge["id"]]  # total support 6; the others have 1
        type_into("gm-min-support", 1)
        type_into("gm-degree-min", 2)  # Acme alone has two neighbours
        assert names_shown(browser) == {"Acme"}
        type_into("gm-degree-min", 0)
        type_into("gm-degree-max", 1)
        assert names_shown(browser) == {"Ada", "Bob"}


@pytest.mark.browser
class TestEgoPageInBrowser:
    def page(self, browser: Any, tmp_path: Path) -> None:
        graph = ego_graph()
        open_page(browser, render_graph(graph, tmp_path / "e.html", ego="ego").path)

    def test_draws_the_egos_relations_and_the_rest_behind_a_toggle(
        self, browser: Any, tmp_path: Path
    ) -> None:
        self.page(browser, tmp_path)
        assert names_shown(browser) == {"Ego"} | {f"Near {i}" for i in range(5)}
        ego = node_id_by_name(browser, "Ego")
        shown = edge_records(browser, view(browser)["edges"])
        assert len(shown) == 5 and all(ego in (e["from"], e["to"]) for e in shown)
        toggle = browser.find_element("id", "gm-all-relations")
        assert browser.find_element("id", "gm-all-relations-label").text == (
            "Relations among neighbours"
        )
        summary = browser.find_element("id", "graphmem-summary").text
        assert "5 more edges behind “Relations among neighbours”" in summary
        toggle.click()
        assert len(view(browser)["edges"]) == 10  # and the ring among the neighbours
        toggle.click()
        assert len(view(browser)["edges"]) == 5

    def test_a_double_click_draws_the_held_neighbours(self, browser: Any, tmp_path: Path) -> None:
        self.page(browser, tmp_path)
        stats = browser.execute_script("return graphmemStats")
        assert (stats["nodes"], stats["nodesHeld"]) == (6, 2)
        assert not {"Far 0", "Far 1"} & names_shown(browser)
        double_click_node(browser, "Near 0")
        shown = names_shown(browser)
        assert {"Far 0", "Far 1"} <= shown
        near = node_id_by_name(browser, "Near 0")
        drawn = edge_records(browser, view(browser)["edges"])
        # All of Near 0's relations: to the ego, both ring neighbours and the two far away.
        assert sum(near in (e["from"], e["to"]) for e in drawn) == 5
        # The new entities are drawn in the window, next to the one expanded.
        width, height = browser.execute_script(
            "var c = document.getElementById('graphmem-network');"
            "return [c.clientWidth, c.clientHeight];"
        )
        for name in ("Far 0", "Far 1"):
            x, y = node_dom_position(browser, node_id_by_name(browser, name))
            assert 0 <= x <= width and 0 <= y <= height

    def test_the_panel_button_expands_too(self, browser: Any, tmp_path: Path) -> None:
        self.page(browser, tmp_path)
        click_canvas(browser, *node_dom_position(browser, node_id_by_name(browser, "Near 0")))
        assert panel_heading(browser, "Near 0") == "Near 0"
        button = browser.find_element("id", "gm-panel-expand")
        assert button.text == "Expand: draw 2 more neighbours and all its relations"
        button.click()
        assert {"Far 0", "Far 1"} <= names_shown(browser)
        assert not browser.find_element("id", "gm-panel-expand").is_displayed()


@pytest.mark.browser
class TestOverviewInBrowser:
    def test_each_entitys_strongest_relations_by_default(
        self, browser: Any, tmp_path: Path
    ) -> None:
        open_page(browser, render_graph(dense_graph(), tmp_path / "d.html").path)
        shown = view(browser)
        assert len(shown["nodes"]) == 10
        assert len(shown["edges"]) <= STRONGEST_PER_ENTITY * 10
        # Every entity keeps its strongest relation.
        drawn = edge_records(browser, shown["edges"])
        everything: list[dict[str, Any]] = browser.execute_script("return graphmemData.edges")
        for node in shown["nodes"]:
            best = max(e["support"] for e in everything if node in (e["from"], e["to"]))
            assert any(e["support"] == best for e in drawn if node in (e["from"], e["to"])), node
        browser.find_element("id", "gm-all-relations").click()
        assert len(view(browser)["edges"]) == 45

    def test_communities_are_drawn_as_one_node_and_open_on_click(
        self, browser: Any, tmp_path: Path
    ) -> None:
        open_page(browser, render_graph(two_teams(), tmp_path / "t.html").path)
        browser.find_element("id", "gm-communities").click()
        shown = view(browser)
        assert shown["nodes"] == [] and len(shown["groups"]) == 2
        assert [len(group["members"]) for group in shown["groups"]] == [5, 5]
        assert len(shown["links"]) == 1  # the one relation between the teams
        labels = browser.execute_script(
            "return graphmemData.communities.map(function (c) { return c.label; })"
        )
        assert len(labels) == 2 and all(label.endswith(" +4") for label in labels)
        first = shown["groups"][0]
        x, y = browser.execute_script(
            "var p = graphmemNetwork.canvasToDOM(graphmemNetwork.getPosition(arguments[0]));"
            "return [p.x, p.y];",
            first["id"],
        )
        click_canvas(browser, x, y)
        after = view(browser)
        assert sorted(after["nodes"]) == sorted(first["members"])
        assert [group["id"] for group in after["groups"]] != [first["id"]]
        assert len(after["groups"]) == 1
        summary = browser.find_element("id", "graphmem-summary").text
        assert "Shown: 10 entities (1 communities drawn as one node each" in summary
        browser.find_element("id", "gm-communities").click()
        assert len(view(browser)["nodes"]) == 10 and view(browser)["groups"] == []


# --- the 3,000-result store of the issue -------------------------------------------------


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bench/speed.py's 3,000 generated task results in a store (minutes to build)."""
    from viz_readability import build_store

    os.environ.setdefault("WRITE_MEMORY", "1")
    return build_store(tmp_path_factory.mktemp("store") / "big.db")


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.timeout(1800)  # building the store takes minutes on a busy machine
@pytest.mark.parametrize("page", ["overview", "ego"])
def test_the_big_stores_pages_are_readable(
    browser: Any, big_store: Path, tmp_path: Path, page: str
) -> None:
    """At most 3 edges per entity drawn, under 5% of drawn labels overlapping another, from
    vis-network's own label boxes at the default zoom (bench/viz_readability.py measures the
    same)."""
    from viz_readability import draw_pages, most_connected_person, readability

    person = most_connected_person(big_store)
    pages = draw_pages(big_store, tmp_path, person)
    seen = readability(browser, pages[page])
    assert seen["nodes_drawn"] >= 50
    assert seen["edges_per_node"] <= 3, seen
    assert seen["labels_drawn"] >= 20, seen  # the largest entities are named
    assert seen["label_overlap_share"] < 0.05, seen
