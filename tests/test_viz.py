"""Tests for graphmem.viz: budget and subgraph helpers, the page's safety, and the page itself
drawn by a real headless Chromium with the network switched off (``browser`` marker)."""

from __future__ import annotations

import json
import re
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from _viz_pages import (
    click_canvas,
    drawn_edge,
    drawn_hidden,
    edge_records,
    hover_at,
    hover_node,
    node_dom_position,
    node_id_by_name,
    node_records,
    open_page,
    panel_heading,
    panel_text,
    predicates,
    requested_urls,
    view,
)

from graphmem.errors import EntityNotFound, InvalidArgumentError
from graphmem.viz import (
    VizReport,
    neighbourhood_subgraph,
    node_size,
    path_subgraph,
    render_graph,
    select_visible_nodes,
)

PAYLOADS = (
    '<img src=x onerror="window.pwned=1">',
    "</script><script>window.pwned=2</script>",
    '"><svg onload=window.pwned=3>',
)
#: A URL anywhere in the file, including in-lined scripts and styles.
URL = re.compile(r"https?://|//cdn", re.IGNORECASE)
#: Markup that would fetch or link something (checked outside scripts).
LOADING_MARKUP = re.compile(r"<[^>]*\b(?:src|href|action|srcset|poster|data)\s*=", re.IGNORECASE)
#: CSS that would fetch something (``url(data:...)`` is in-line and fine).
LOADING_CSS = re.compile(r"@import|url\(\s*(?![\"']?data:)", re.IGNORECASE)


# --- graphs built by hand ---------------------------------------------------------------


def add_entity(graph: nx.MultiDiGraph, key: str, name: str, label: str, **attrs: Any) -> None:
    graph.add_node(key, name=name, label=label, **attrs)


def add_relation(
    graph: nx.MultiDiGraph, source: str, target: str, predicate: str, support: int = 1, **attrs: Any
) -> None:
    graph.add_edge(source, target, key=predicate, predicate=predicate, support=support, **attrs)


def work_graph() -> nx.MultiDiGraph:
    """A small work log: people, organisations, projects and places (15 entities)."""
    graph = nx.MultiDiGraph()
    people = {
        "maria garcia": ("Maria Garcia", 14, ["Maria", "M. Garcia"]),
        "ben okafor": ("Ben Okafor", 9, ["Ben"]),
        "priya shah": ("Priya Shah", 7, ["Priya"]),
        "tom lindqvist": ("Tom Lindqvist", 4, ["Tom"]),
        "chen wei": ("Chen Wei", 5, []),
        "sofia rossi": ("Sofia Rossi", 3, []),
    }
    for key, (name, mentions, aliases) in people.items():
        add_entity(graph, key, name, "PERSON", mentions=mentions, aliases=aliases, evidence=[])
    graph.nodes["maria garcia"]["evidence"] = [
        "Maria Garcia presented the Atlas roadmap to the Acme board.",
        "Maria joined Acme Corp as head of data in March.",
    ]
    for key, name, label, mentions, aliases in [
        ("acme", "Acme Corp", "ORG", 21, ["Acme", "ACME Corporation"]),
        ("globex", "Globex", "ORG", 8, ["Globex Inc."]),
        ("initech", "Initech", "ORG", 4, []),
        ("atlas", "Project Atlas", "PRODUCT", 12, ["Atlas"]),
        ("helios", "Helios", "PRODUCT", 6, []),
        ("nimbus", "Nimbus", "PRODUCT", 5, []),
        ("berlin", "Berlin", "GPE", 6, []),
        ("london", "London", "GPE", 3, []),
        ("kickoff", "Atlas Kickoff", "EVENT", 2, []),
    ]:
        evidence = [f"{name} came up in the weekly notes."]
        add_entity(graph, key, name, label, mentions=mentions, aliases=aliases, evidence=evidence)
    for source, target, predicate, support in [
        ("maria garcia", "acme", "works_at", 6),
        ("ben okafor", "acme", "works_at", 3),
        ("priya shah", "globex", "works_at", 2),
        ("tom lindqvist", "acme", "works_at", 1),
        ("chen wei", "globex", "works_at", 2),
        ("sofia rossi", "initech", "works_at", 1),
        ("priya shah", "maria garcia", "met", 2),
        ("sofia rossi", "ben okafor", "met", 1),
        ("maria garcia", "atlas", "leads", 4),
        ("ben okafor", "atlas", "works_on", 3),
        ("chen wei", "nimbus", "leads", 2),
        ("acme", "helios", "co_occurs", 3),
        ("acme", "berlin", "located_in", 2),
        ("globex", "atlas", "co_occurs", 2),
        ("initech", "nimbus", "co_occurs", 1),
        ("tom lindqvist", "helios", "co_occurs", 1),
        ("chen wei", "london", "co_occurs", 1),
        ("kickoff", "berlin", "co_occurs", 1),
        ("kickoff", "atlas", "co_occurs", 2),
        ("maria garcia", "priya shah", "co_occurs", 2),
    ]:
        add_relation(graph, source, target, predicate, support)
    graph.edges["maria garcia", "acme", "works_at"]["evidence"] = [
        "Maria joined Acme Corp as head of data in March."
    ]
    return graph


def hostile_graph() -> nx.MultiDiGraph:
    """Every text field holds markup that would run script if it were parsed as HTML."""
    graph = nx.MultiDiGraph()
    img, script, svg = PAYLOADS
    add_entity(
        graph, "evil", img, script, mentions=3, aliases=[script, svg], evidence=[svg, img, script]
    )
    add_entity(graph, "victim", svg, "PERSON", mentions=1, aliases=[img], evidence=[script])
    add_relation(graph, "evil", "victim", script, support=2, evidence=[img, svg])
    graph.add_edge("victim", "evil", key=svg, predicate=img, support=1, evidence=[script])
    return graph


def hub_graph() -> nx.MultiDiGraph:
    """Five hubs joined to each other and to 30 leaves; ten isolated entities (45 in all)."""
    graph = nx.MultiDiGraph()
    hubs = [f"hub{i}" for i in range(5)]
    for hub in hubs:
        add_entity(graph, hub, hub.title(), "ORG", mentions=2)
    for i, source in enumerate(hubs):
        for target in hubs[i + 1 :]:
            add_relation(graph, source, target, "partners_with")
    for leaf in range(30):
        key = f"leaf{leaf:02d}"
        add_entity(graph, key, f"Leaf {leaf:02d}", "PERSON", mentions=1)
        add_relation(graph, key, hubs[leaf % 5], "works_at")
    for lonely in range(10):
        # Many mentions but no relations: mentions only break ties in degree.
        add_entity(graph, f"lonely{lonely}", f"Lonely {lonely}", "GPE", mentions=50)
    return graph


# --- pure graph operations --------------------------------------------------------------


class TestSelectVisibleNodes:
    def test_keeps_the_most_connected(self) -> None:
        kept = select_visible_nodes(hub_graph(), max_nodes=5)
        assert sorted(map(str, kept)) == [f"hub{i}" for i in range(5)]

    def test_mentions_break_ties_in_degree(self) -> None:
        graph = nx.MultiDiGraph()
        for key, mentions in [("a", 1), ("b", 9), ("c", 5)]:
            graph.add_node(key, mentions=mentions)
        assert select_visible_nodes(graph, max_nodes=2) == ["b", "c"]

    def test_focus_nodes_come_first(self) -> None:
        kept = select_visible_nodes(hub_graph(), max_nodes=3, focus=["lonely3", "leaf07"])
        assert kept[:2] == ["lonely3", "leaf07"]
        assert kept[2].startswith("hub")

    def test_a_string_focus_is_one_node(self) -> None:
        assert select_visible_nodes(hub_graph(), max_nodes=1, focus="lonely3") == ["lonely3"]

    def test_unknown_focus_names_the_node(self) -> None:
        with pytest.raises(EntityNotFound, match="Focus entity 'nobody' is not in the graph"):
            select_visible_nodes(hub_graph(), focus=["hub0", "nobody"])

    @pytest.mark.parametrize("max_nodes", [0, -3, 2.5, True])
    def test_rejects_a_bad_budget(self, max_nodes: Any) -> None:
        with pytest.raises(InvalidArgumentError, match="max_nodes must be an integer"):
            select_visible_nodes(hub_graph(), max_nodes=max_nodes)


class TestSubgraphs:
    def test_neighbourhood_follows_edges_both_ways(self) -> None:
        graph = work_graph()
        assert set(neighbourhood_subgraph(graph, "atlas", depth=1)) == {
            "atlas",
            "maria garcia",
            "ben okafor",
            "globex",
            "kickoff",
        }

    def test_neighbourhood_keeps_attributes_and_parallel_edges(self) -> None:
        sub = neighbourhood_subgraph(work_graph(), "maria garcia", depth=1)
        assert isinstance(sub, nx.MultiDiGraph)
        assert sub.nodes["acme"]["name"] == "Acme Corp"
        assert sub.number_of_edges("maria garcia", "priya shah") == 1
        assert sub.number_of_edges("priya shah", "maria garcia") == 1

    def test_depth_zero_is_the_entity_alone(self) -> None:
        assert list(neighbourhood_subgraph(work_graph(), "acme", depth=0)) == ["acme"]

    def test_path_keeps_only_consecutive_relations(self) -> None:
        sub = path_subgraph(work_graph(), ["priya shah", "maria garcia", "acme"])
        assert sorted(sub.edges(keys=True)) == [
            ("maria garcia", "acme", "works_at"),
            ("maria garcia", "priya shah", "co_occurs"),
            ("priya shah", "maria garcia", "met"),
        ]

    @pytest.mark.parametrize(
        "call",
        [
            lambda g: neighbourhood_subgraph(g, "nobody"),
            lambda g: path_subgraph(g, ["acme", "nobody"]),
        ],
    )
    def test_unknown_entity_names_the_node(self, call: Any) -> None:
        with pytest.raises(EntityNotFound, match="Entity 'nobody' is not in the graph"):
            call(work_graph())


# --- the written page, without a browser ------------------------------------------------


def page_data(html: str) -> dict[str, Any]:
    match = re.search(r'<script type="application/json" id="graphmem-data">(.*?)</script>', html)
    assert match, "no data block in the page"
    data: dict[str, Any] = json.loads(match.group(1))
    return data


def start_tags(html: str) -> list[str]:
    """Return the start tags an HTML parser finds, in order (script bodies are not markup)."""

    class TagCollector(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tags: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.tags.append(tag)

    collector = TagCollector()
    collector.feed(html)
    collector.close()
    return collector.tags


class TestPageFile:
    def test_report_counts(self, tmp_path: Path) -> None:
        report = render_graph(hub_graph(), tmp_path / "deep" / "er" / "g.html", max_nodes=12)
        assert report == VizReport(
            path=tmp_path / "deep" / "er" / "g.html",
            nodes_drawn=12,
            edges_drawn=10 + 7,
            nodes_omitted=33,
            edges_omitted=23,
            nodes_held=6,
        )
        assert report.path.is_file()

    @pytest.mark.parametrize("graph", [work_graph(), hostile_graph(), nx.MultiDiGraph()])
    def test_holds_no_external_url(self, tmp_path: Path, graph: nx.MultiDiGraph) -> None:
        html = render_graph(graph, tmp_path / "g.html").path.read_text(encoding="utf-8")
        assert URL.findall(html) == []
        markup = re.sub(r"(?s)(<script\b[^>]*>).*?(</script>)", r"\1\2", html)
        assert LOADING_MARKUP.findall(markup) == []
        styles = re.findall(r"(?s)<style>(.*?)</style>", html)
        assert len(styles) == 1 and LOADING_CSS.findall(styles[0]) == []

    def test_hostile_text_cannot_leave_the_data_block(self, tmp_path: Path) -> None:
        html = render_graph(hostile_graph(), tmp_path / "g.html", title=PAYLOADS[1]).path
        text = html.read_text(encoding="utf-8")
        # An HTML parser sees three scripts (data, vis-network, page) and no injected element.
        tags = start_tags(text)
        assert tags.count("script") == 3
        assert not {"img", "svg", "iframe", "object"} & set(tags)
        assert "<title>&lt;/script&gt;&lt;script&gt;window.pwned=2&lt;/script&gt;</title>" in text
        assert page_data(text)["nodes"][0]["tooltip"]["heading"] == PAYLOADS[0]

    def test_only_the_pages_own_scripts_may_run(self, tmp_path: Path) -> None:
        text = render_graph(work_graph(), tmp_path / "g.html").path.read_text(encoding="utf-8")
        csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', text)
        assert csp, "no Content-Security-Policy"
        assert "default-src 'none'" in csp.group(1)
        assert len(re.findall(r"'sha256-[A-Za-z0-9+/=]+'", csp.group(1))) == 2
        assert "unsafe-inline" not in csp.group(1).split("script-src")[1].split(";")[0]

    def test_summary_states_what_was_left_out(self, tmp_path: Path) -> None:
        text = render_graph(hub_graph(), tmp_path / "g.html", max_nodes=12).path.read_text()
        assert page_data(text)["summary"]["text"] == (
            "Showing 12 of 45 entities (the most connected) and 17 relations among them; "
            "33 left out, 6 of them held on the page: double-click an entity to draw its "
            "neighbours. To draw more: a larger max_nodes (--max-nodes), or one entity's page "
            "(--entity)."
        )

    def test_long_and_odd_attributes_are_tamed(self, tmp_path: Path) -> None:
        graph = nx.MultiDiGraph()
        graph.add_node(("tuple", 1), name="x" * 500, mentions="many", aliases="Solo", evidence=None)
        graph.add_edge(("tuple", 1), ("tuple", 1), key=7, support=float("nan"))
        data = page_data(render_graph(graph, tmp_path / "g.html").path.read_text())
        (node,) = data["nodes"]
        assert len(node["label"]) == 32 and node["label"].endswith("…")
        assert node["group_label"] == "UNLABELLED"
        assert node["tooltip"]["sections"][0]["items"] == ["Solo"]
        (edge,) = data["edges"]
        assert edge["relations"][0]["predicate"] == "" and edge["relations"][0]["support"] == 1


# --- the page in a real browser, offline ------------------------------------------------


@pytest.mark.browser
class TestPageInBrowser:
    def test_draws_every_node_and_edge(self, browser: Any, tmp_path: Path) -> None:
        report = render_graph(work_graph(), tmp_path / "g.html")
        stats = open_page(browser, report.path)
        assert (stats["nodes"], stats["edges"], stats["edgesOnPage"]) == (15, 12, 20)
        assert (report.nodes_drawn, report.edges_drawn) == (15, 20)
        positions = browser.execute_script("return Object.keys(graphmemNetwork.getPositions())")
        assert len(positions) == 15
        summary = browser.find_element("id", "graphmem-summary").text
        # Co-occurrence starts hidden: 12 typed relations are drawn of the 20.
        assert summary == "15 entities, 20 relations. Shown: 15 entities, 12 typed relations."

    def test_loads_nothing_from_the_network(self, browser: Any, tmp_path: Path) -> None:
        report = render_graph(work_graph(), tmp_path / "g.html")
        open_page(browser, report.path)
        urls = requested_urls(browser)
        assert urls, "the performance log recorded no request at all"
        assert [url for url in urls if not url.startswith(("file:", "data:", "about:"))] == []
        errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
        assert errors == []

    def test_legend_lists_each_label_present(self, browser: Any, tmp_path: Path) -> None:
        stats = open_page(browser, render_graph(work_graph(), tmp_path / "g.html").path)
        rows = browser.find_elements("css selector", "#graphmem-legend-labels li")
        legend = {row.get_attribute("data-label"): row.text.split() for row in rows}
        assert legend == {
            "PERSON": ["PERSON", "6"],
            "ORG": ["ORG", "3"],
            "PRODUCT": ["PRODUCT", "3"],
            "GPE": ["GPE", "2"],
            "EVENT": ["EVENT", "1"],
        }
        assert stats["labels"] == ["PERSON", "ORG", "PRODUCT", "GPE", "EVENT"]

    def test_hover_shows_aliases_and_recent_evidence(self, browser: Any, tmp_path: Path) -> None:
        open_page(browser, render_graph(work_graph(), tmp_path / "g.html").path)
        tooltip = hover_node(browser, node_id_by_name(browser, "Maria Garcia"))
        assert "Maria Garcia" in tooltip
        assert "PERSON · 14 mentions" in tooltip
        assert "M. Garcia" in tooltip
        assert "Maria Garcia presented the Atlas roadmap to the Acme board." in tooltip
        (mx, my), (ax, ay) = (
            node_dom_position(browser, node_id_by_name(browser, name))
            for name in ("Maria Garcia", "Acme Corp")
        )
        edge_tip = hover_at(browser, mx + (ax - mx) / 2.5, my + (ay - my) / 2.5)
        assert "Maria Garcia → Acme Corp" in edge_tip and "works_at · support 6" in edge_tip
        assert "Maria joined Acme Corp as head of data in March." in edge_tip

    @pytest.mark.parametrize("with_csp", [True, False], ids=["with-csp", "escaping-alone"])
    def test_hostile_memory_runs_nothing_and_reads_literally(
        self, browser: Any, tmp_path: Path, with_csp: bool
    ) -> None:
        path = render_graph(hostile_graph(), tmp_path / "g.html", title=PAYLOADS[2]).path
        if not with_csp:
            # Prove the escaping holds on its own, without the policy as a safety net.
            page = path.read_text(encoding="utf-8")
            path.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page))
        stats = open_page(browser, path)
        assert stats["nodes"] == 2 and stats["edges"] == 2
        tooltip = hover_node(browser, node_id_by_name(browser, PAYLOADS[0]))
        time.sleep(0.2)  # give any injected handler the chance to fire
        assert browser.execute_script("return typeof window.pwned") == "undefined"
        for payload in PAYLOADS:
            assert payload in tooltip
        assert browser.find_element("css selector", "h1").text == PAYLOADS[2]
        assert browser.title == PAYLOADS[2]
        legend = [
            row.get_attribute("data-label")
            for row in browser.find_elements("css selector", "#graphmem-legend-labels li")
        ]
        assert sorted(legend) == sorted(["PERSON", PAYLOADS[1]])
        assert (
            browser.execute_script(
                "return document.querySelectorAll('img, svg, iframe, object').length"
            )
            == 0
        )
        assert len(browser.find_elements("css selector", "script")) == 3

    def test_budget_keeps_the_most_connected(self, browser: Any, tmp_path: Path) -> None:
        report = render_graph(hub_graph(), tmp_path / "g.html", max_nodes=12, focus="lonely0")
        stats = open_page(browser, report.path)
        assert (stats["nodes"], stats["nodesTotal"], stats["nodesOmitted"]) == (12, 45, 33)
        labels = set(
            browser.execute_script("return graphmemNodes.map(function (n) { return n.label; })")
        )
        hubs = {f"Hub{i}" for i in range(5)}
        assert hubs | {"Lonely 0"} <= labels
        assert not any(label.startswith("Lonely") for label in labels - {"Lonely 0"})
        summary = browser.find_element("id", "graphmem-summary").text
        assert summary.startswith("Showing 12 of 45 entities (the most connected)")
        assert "33 left out, 6 of them held on the page" in summary


def test_a_knowledge_graph_is_drawn_with_its_evidence(tmp_path: Path) -> None:
    """``render_graph(memory.graph, ...)`` called from the library shows each relation's
    evidence sentence, as the CLI's page does."""
    from graphmem import EntityMemory

    memory = EntityMemory()
    memory.save("Alice Johnson joined Acme Corp in Berlin.")
    out = tmp_path / "g.html"
    render_graph(memory.graph, out)
    data = json.dumps(page_data(out.read_text(encoding="utf-8")))
    assert "Alice Johnson joined Acme Corp in Berlin." in data


# --- the page's controls, driven in the browser ------------------------------------------


def timeline_graph() -> nx.MultiDiGraph:
    """Samir worked at Kestrel (March to April 2025), then at Lumen (from June); Lumen was
    first mentioned in May. Evidence records name their memory, rule and date."""
    graph = nx.MultiDiGraph()
    add_entity(graph, "samir", "Samir Haddad", "PERSON", mentions=4, first_seen="2025-03-03")
    add_entity(graph, "kestrel", "Kestrel Automation", "ORG", mentions=2, first_seen="2025-03-03")
    add_entity(graph, "lumen", "Lumen Robotics", "ORG", mentions=2, first_seen="2025-05-10")
    kestrel = {
        "sentence": "Samir Haddad joined Kestrel Automation as CTO.",
        "memory_id": "mem-kestrel-1",
        "rule": "svo:join",
        "date": "2025-03-03T09:12:00",
    }
    add_relation(
        graph,
        "samir",
        "kestrel",
        "works_at",
        support=2,
        confidence=0.92,
        first_seen="2025-03-03T09:12:00",
        valid_from="2025-03-03T09:12:00",
        valid_to="2025-04-21T10:00:00",
        evidence=[kestrel],
    )
    add_relation(
        graph,
        "samir",
        "lumen",
        "works_at",
        first_seen="2025-06-02T08:00:00",
        valid_from="2025-06-02T08:00:00",
        evidence=[
            {
                "sentence": "Samir Haddad started at Lumen Robotics.",
                "memory_id": "mem-lumen-1",
                "rule": "svo:start",
                "date": "2025-06-02T08:00:00",
            }
        ],
    )
    add_relation(graph, "kestrel", "lumen", "co_occurs", first_seen="2025-05-10T08:00:00")
    return graph


def set_as_of(driver: Any, day: str | None) -> None:
    """Move the "as of" slider to ``day`` (None: all time) as a user would, with events."""
    driver.execute_script(
        "var on = document.getElementById('gm-asof-on'), range = document.getElementById('gm-asof');"
        "var day = arguments[0];"
        "if (day === null) { on.checked = false; on.dispatchEvent(new Event('change')); return; }"
        "if (!on.checked) { on.checked = true; on.dispatchEvent(new Event('change')); }"
        "var first = Date.UTC(2025, 2, 3) / 86400000;"  # the graph's first day, 2025-03-03
        "var parts = day.split('-');"
        "range.value = String(Date.UTC(+parts[0], +parts[1] - 1, +parts[2]) / 86400000 - first);"
        "range.dispatchEvent(new Event('input'));",
        day,
    )


@pytest.mark.browser
class TestControlsInBrowser:
    def test_co_occurrence_is_hidden_until_toggled(self, browser: Any, tmp_path: Path) -> None:
        open_page(browser, render_graph(work_graph(), tmp_path / "g.html").path)
        shown = edge_records(browser, view(browser)["edges"])
        assert len(shown) == 12 and all(e["typed"] for e in shown)
        assert len(drawn_hidden(browser)["edges"]) == 8
        browser.find_element("id", "gm-show-cooccurs").click()
        shown = edge_records(browser, view(browser)["edges"])
        assert len(shown) == 20 and sum(not e["typed"] for e in shown) == 8
        assert drawn_hidden(browser)["edges"] == []
        co_occurs = [e for e in shown if not e["typed"]]
        assert all(drawn_edge(browser, e["id"])["label"] == "" for e in co_occurs)
        assert all(e["dashes"] is True for e in co_occurs)
        assert all(e["color"]["opacity"] < 0.5 for e in co_occurs)  # faint
        browser.find_element("id", "gm-show-cooccurs").click()
        assert len(view(browser)["edges"]) == 12

    def test_entity_type_filter(self, browser: Any, tmp_path: Path) -> None:
        open_page(browser, render_graph(work_graph(), tmp_path / "g.html").path)
        browser.find_element("css selector", "input.gm-type-filter[data-label='PERSON']").click()
        shown = view(browser)
        assert {n["group_label"] for n in node_records(browser, shown["nodes"])} == {
            "ORG",
            "PRODUCT",
            "GPE",
            "EVENT",
        }
        # Only acme -located_in-> berlin is left among the typed relations.
        assert predicates(edge_records(browser, shown["edges"])) == ["located_in"]
        assert len(drawn_hidden(browser)["nodes"]) == 6
        summary = browser.find_element("id", "graphmem-summary").text
        assert summary.endswith("Shown: 9 entities, 1 typed relations.")

    def test_predicate_filter(self, browser: Any, tmp_path: Path) -> None:
        open_page(browser, render_graph(work_graph(), tmp_path / "g.html").path)
        browser.find_element("css selector", "#gm-predicates summary").click()
        browser.find_element(
            "css selector", "input.gm-predicate-filter[data-predicate='works_at']"
        ).click()
        shown = predicates(edge_records(browser, view(browser)["edges"]))
        assert len(shown) == 6 and "works_at" not in shown
        browser.find_element("id", "gm-predicates-none").click()
        assert view(browser)["edges"] == []
        assert len(view(browser)["nodes"]) == 15  # entities stay; only relations go
        browser.find_element("id", "gm-predicates-all").click()
        assert len(view(browser)["edges"]) == 12

    def test_current_and_ended_relations(self, browser: Any, tmp_path: Path) -> None:
        open_page(browser, render_graph(timeline_graph(), tmp_path / "t.html").path)
        from selenium.webdriver.support.ui import Select

        status = Select(browser.find_element("id", "gm-status"))
        status.select_by_value("ended")
        ended = edge_records(browser, view(browser)["edges"])
        assert [(r["predicate"], r["valid_to"]) for e in ended for r in e["relations"]] == [
            ("works_at", "2025-04-21T10:00:00")
        ]
        assert drawn_edge(browser, ended[0]["id"])["label"] == "works_at (ended)"
        status.select_by_value("current")
        current = edge_records(browser, view(browser)["edges"])
        assert [(r["predicate"], r["valid_to"]) for e in current for r in e["relations"]] == [
            ("works_at", None)
        ]

    @pytest.mark.parametrize(
        ("day", "names", "relations"),
        [
            ("2025-03-03", ["Kestrel Automation", "Samir Haddad"], ["Kestrel Automation"]),
            ("2025-04-20", ["Kestrel Automation", "Samir Haddad"], ["Kestrel Automation"]),
            ("2025-04-21", ["Kestrel Automation", "Samir Haddad"], []),
            ("2025-05-31", ["Kestrel Automation", "Lumen Robotics", "Samir Haddad"], []),
            (
                "2025-06-02",
                ["Kestrel Automation", "Lumen Robotics", "Samir Haddad"],
                ["Lumen Robotics"],
            ),
        ],
    )
    def test_time_slider_shows_the_graph_as_of_a_day(
        self, browser: Any, tmp_path: Path, day: str, names: list[str], relations: list[str]
    ) -> None:
        open_page(browser, render_graph(timeline_graph(), tmp_path / "t.html").path)
        set_as_of(browser, day)
        shown = view(browser)
        assert sorted(n["name"] for n in node_records(browser, shown["nodes"])) == names
        by_id = {n["id"]: n["name"] for n in browser.execute_script("return graphmemData.nodes")}
        assert [by_id[e["to"]] for e in edge_records(browser, shown["edges"])] == relations
        assert browser.find_element("id", "gm-asof-label").text == day
        set_as_of(browser, None)
        assert len(view(browser)["edges"]) == 2
        assert browser.find_element("id", "gm-asof-label").text == "all time"

    def test_search_focuses_and_explains_a_node(self, browser: Any, tmp_path: Path) -> None:
        from selenium.webdriver.common.keys import Keys

        open_page(browser, render_graph(work_graph(), tmp_path / "g.html").path)
        maria = node_id_by_name(browser, "Maria Garcia")
        browser.find_element("css selector", "input.gm-type-filter[data-label='PERSON']").click()
        assert maria not in view(browser)["nodes"]
        search = browser.find_element("id", "gm-search")
        search.send_keys("M. Garcia", Keys.ENTER)  # an alias
        assert browser.execute_script("return window.graphmemFocused") == maria
        assert browser.execute_script("return graphmemNetwork.getSelectedNodes()") == [maria]
        assert maria in view(browser)["nodes"]  # its type was filtered out: shown again
        x, y = node_dom_position(browser, maria)
        width, height, panel = browser.execute_script(
            "var c = document.getElementById('graphmem-network');"
            "return [c.clientWidth, c.clientHeight, document.getElementById('gm-panel').offsetWidth];"
        )
        # Centred in what the side panel leaves visible.
        assert panel > 0 and abs(x - (width - panel - 14) / 2) < 2 and abs(y - height / 2) < 2
        assert "Maria Garcia" in panel_text(browser)
        search.clear()
        search.send_keys("nobody at all", Keys.ENTER)
        assert "gm-not-found" in search.get_attribute("class")
        assert browser.execute_script("return window.graphmemFocused") == maria

    def test_clicking_a_relation_opens_its_evidence_with_dates(
        self, browser: Any, tmp_path: Path
    ) -> None:
        open_page(browser, render_graph(timeline_graph(), tmp_path / "t.html").path)
        samir = node_id_by_name(browser, "Samir Haddad")
        kestrel = node_id_by_name(browser, "Kestrel Automation")
        (sx, sy), (kx, ky) = node_dom_position(browser, samir), node_dom_position(browser, kestrel)
        # A point on the line, a third of the way, clear of the nodes and of the label.
        click_canvas(browser, sx + (kx - sx) / 3, sy + (ky - sy) / 3)
        text = panel_text(browser)
        assert "Samir Haddad works_at Kestrel Automation" in text
        assert "ended · 2025-03-03 to 2025-04-21" in text
        for fragment in (
            "Confidence0.92",
            "Support2",
            "Valid from2025-03-03",
            "Valid to2025-04-21",
            "Samir Haddad joined Kestrel Automation as CTO.",
            "2025-03-03 09:12 · memory mem-kestrel-1 · rule svo:join",
        ):
            assert fragment in text
        browser.find_element("id", "gm-panel-close").click()  # it may cover the node
        click_canvas(browser, *node_dom_position(browser, samir))
        assert panel_heading(browser, "Samir Haddad") == "Samir Haddad"
        text = " ".join(panel_text(browser).split())
        assert "PERSON Mentions4First seen2025-03-03Typed relations2" in text
        assert "Samir Haddad started at Lumen Robotics." not in text  # no node evidence given

    def test_hostile_memory_in_the_panel_and_search_runs_nothing(
        self, browser: Any, tmp_path: Path
    ) -> None:
        from selenium.webdriver.common.keys import Keys

        graph = hostile_graph()
        graph.nodes["evil"]["evidence"] = [
            {"sentence": PAYLOADS[1], "memory_id": PAYLOADS[0], "rule": PAYLOADS[2], "date": "x"}
        ]
        open_page(browser, render_graph(graph, tmp_path / "h.html").path)
        browser.find_element("id", "gm-search").send_keys(PAYLOADS[0], Keys.ENTER)
        text = panel_text(browser)
        time.sleep(0.2)
        assert browser.execute_script("return typeof window.pwned") == "undefined"
        assert PAYLOADS[1] in text and f"memory {PAYLOADS[0]}" in text
        assert f"rule {PAYLOADS[2]}" in text
        assert (
            browser.execute_script(
                "return document.querySelectorAll('img, svg, iframe, object').length"
            )
            == 0
        )
        names = browser.execute_script(
            "return Array.from(document.querySelectorAll('#gm-names option'))"
            ".map(function (o) { return o.value; })"
        )
        assert sorted(names) == sorted([PAYLOADS[0], PAYLOADS[2]])

    def test_layout_fits_settles_and_stops(self, browser: Any, tmp_path: Path) -> None:
        stats = open_page(browser, render_graph(work_graph(), tmp_path / "g.html").path)
        before = browser.execute_script("return graphmemNetwork.getPositions()")
        time.sleep(0.6)
        assert browser.execute_script("return graphmemNetwork.getPositions()") == before
        assert browser.execute_script("return graphmemNetwork.physics.physicsEnabled") is False
        width, height = browser.execute_script(
            "var c = document.getElementById('graphmem-network');"
            "return [c.clientWidth, c.clientHeight];"
        )
        for node_id in before:
            x, y = node_dom_position(browser, int(node_id))
            assert 0 <= x <= width and 0 <= y <= height, node_id
        font = browser.execute_script("return graphmemData.options.nodes.font.size")
        assert font * stats["scale"] >= 12  # node labels of at least 12 px on screen

    def test_legend_samples_match_what_is_drawn(self, browser: Any, tmp_path: Path) -> None:
        stats = open_page(browser, render_graph(work_graph(), tmp_path / "g.html").path)
        samples = browser.execute_script(
            "return Array.from(document.querySelectorAll('.gm-size-dot')).map(function (d) {"
            "  return [Number(d.getAttribute('data-size')), d.getBoundingClientRect().width]; })"
        )
        assert [size for size, _ in samples] == [node_size(1), node_size(10), node_size(100)]
        for size, width in samples:
            assert width == pytest.approx(2 * size * stats["scale"], abs=0.6)
        maria = node_id_by_name(browser, "Maria Garcia")
        drawn = browser.execute_script(
            "return graphmemNetwork.body.nodes[arguments[0]].options.size", maria
        )
        assert drawn == node_size(14)
        browser.execute_script("graphmemNetwork.moveTo({scale: 2})")
        browser.execute_script("graphmemNetwork.emit('zoom', {scale: 2})")
        width = browser.execute_script(
            "return document.querySelector('.gm-size-dot').getBoundingClientRect().width"
        )
        assert width == pytest.approx(2 * 10.0 * 2, abs=0.6)

    def test_a_hostile_context_page_runs_nothing(self, browser: Any, tmp_path: Path) -> None:
        from graphmem import CortexMemory
        from graphmem.viz import render_context

        cortex = CortexMemory()
        for payload in PAYLOADS:
            cortex.save_task_result(
                "Acme audit", f"Maria Garcia audited Acme Corp. {payload}", "QA", importance=0.9
            )
        report = cortex.build_context_report(f"Acme Corp audit {PAYLOADS[1]}")
        assert cortex.entity_memory is not None
        page = render_context(report, cortex.entity_memory, tmp_path / "c.html").path
        open_page(browser, page)
        time.sleep(0.2)
        assert browser.execute_script("return typeof window.pwned") == "undefined"
        context = browser.execute_script("return document.getElementById('gm-context').textContent")
        assert PAYLOADS[1] in context and PAYLOADS[0] in context
        assert "Relevant knowledge:" in context and "long_term · score" in context
        assert len(browser.find_elements("css selector", "script")) == 3
        assert (
            browser.execute_script(
                "return document.querySelectorAll('img, svg, iframe, object').length"
            )
            == 0
        )
