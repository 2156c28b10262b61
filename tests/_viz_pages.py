"""Driving a graphmem page in a real headless Chromium with the network switched off: the
session's browser (a fixture, registered in conftest.py) and what tests read from the page."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium for the session, with every network request made impossible."""
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if missing:
        pytest.fail(
            f"browser tests need {' and '.join(missing)}; install them with "
            "`apt-get install -y chromium chromium-driver` (.ci/run does)",
            pytrace=False,
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="graphmem-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,900",
        # Anything that still tried the network would hit a closed local port.
        "--proxy-server=127.0.0.1:9",
        "--proxy-bypass-list=<-loopback>",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd(
            "Network.emulateNetworkConditions",
            {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0},
        )
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def open_page(driver: Any, path: Path) -> dict[str, Any]:
    """Load ``path`` from disk, wait for the network to settle and return its stats."""
    driver.get_log("performance")  # drop earlier pages' entries
    driver.get(path.as_uri())
    deadline = time.monotonic() + 20
    while not driver.execute_script("return window.graphmemReady === true"):
        if time.monotonic() > deadline:
            messages = [entry["message"] for entry in driver.get_log("browser")]
            pytest.fail(f"page never reported ready; first browser messages: {messages[:3]}")
        time.sleep(0.05)
    stats: dict[str, Any] = driver.execute_script("return window.graphmemStats")
    return stats


def requested_urls(driver: Any) -> list[str]:
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def hover_node(driver: Any, node_id: int) -> str:
    """Move the real mouse onto a node and return the tooltip's text once it shows."""
    x, y = driver.execute_script(
        "var p = graphmemNetwork.canvasToDOM(graphmemNetwork.getPosition(arguments[0]));"
        "return [p.x, p.y];",
        node_id,
    )
    return hover_at(driver, x, y)


def hover_at(driver: Any, x: float, y: float) -> str:
    """Move the real mouse to (x, y) of the network's DOM; return the tooltip's text."""
    from selenium.webdriver.common.action_chains import ActionChains

    canvas = driver.find_element("css selector", "#graphmem-network canvas")
    size = canvas.size
    actions = ActionChains(driver)
    actions.move_to_element_with_offset(canvas, 0, 0).perform()  # leave any earlier hover
    actions.move_to_element_with_offset(
        canvas, round(x - size["width"] / 2), round(y - size["height"] / 2)
    ).perform()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        text = driver.execute_script(
            "var tip = document.querySelector('div.vis-tooltip');"
            "return tip && tip.style.visibility === 'visible' ? tip.textContent : null;"
        )
        if text:
            return str(text)
        time.sleep(0.05)
    pytest.fail(f"no tooltip appeared at {x:.0f}, {y:.0f}")


def node_id_by_name(driver: Any, name: str) -> int:
    """Return the page's id of the node whose tooltip heading (its full name) is ``name``."""
    ids = driver.execute_script(
        "var wanted = arguments[0];"
        "return graphmemData.nodes.filter(function (n) { return n.name === wanted; })"
        ".map(function (n) { return n.id; });",
        name,
    )
    assert len(ids) == 1, f"expected one node named {name!r}, got {ids}"
    return int(ids[0])


def view(driver: Any) -> dict[str, list[int]]:
    """What the page draws now: the ids of the shown nodes and edges."""
    shown: dict[str, list[int]] = driver.execute_script("return graphmemView()")
    return shown


def edge_records(driver: Any, ids: list[int]) -> list[dict[str, Any]]:
    """The page's data of these edges (as embedded in the page)."""
    records: list[dict[str, Any]] = driver.execute_script(
        "var ids = arguments[0];"
        "return graphmemData.edges.filter(function (e) { return ids.indexOf(e.id) >= 0; });",
        ids,
    )
    return records


def predicates(edges: list[dict[str, Any]]) -> list[str]:
    """The predicates of the relations these edges hold, in order."""
    return [relation["predicate"] for edge in edges for relation in edge["relations"]]


def drawn_edge(driver: Any, edge_id: int | str) -> dict[str, Any]:
    """What vis-network is told to draw for an edge (its label, colour, dashes)."""
    record: dict[str, Any] = driver.execute_script(
        "var e = graphmemEdges.get(arguments[0]);"
        "return {label: e.label, dashes: e.dashes, color: e.color, width: e.width};",
        edge_id,
    )
    return record


def node_records(driver: Any, ids: list[int]) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = driver.execute_script(
        "var ids = arguments[0];"
        "return graphmemData.nodes.filter(function (n) { return ids.indexOf(n.id) >= 0; });",
        ids,
    )
    return records


def drawn_hidden(driver: Any) -> dict[str, list[int]]:
    """The ids vis-network itself is told to hide (the data sets, not the page's record)."""
    hidden: dict[str, list[int]] = driver.execute_script(
        "function ids(set) { return set.getIds({filter: function (i) { return i.hidden; }}); }"
        "return {nodes: ids(graphmemNodes), edges: ids(graphmemEdges)};"
    )
    return hidden


def click_canvas(driver: Any, x: float, y: float) -> None:
    """A real mouse click at page-canvas coordinates (x, y) of the network's DOM."""
    from selenium.webdriver.common.action_chains import ActionChains

    canvas = driver.find_element("css selector", "#graphmem-network canvas")
    size = canvas.size
    ActionChains(driver).move_to_element_with_offset(
        canvas, round(x - size["width"] / 2), round(y - size["height"] / 2)
    ).click().perform()


def node_dom_position(driver: Any, node_id: int) -> tuple[float, float]:
    x, y = driver.execute_script(
        "var p = graphmemNetwork.canvasToDOM(graphmemNetwork.getPosition(arguments[0]));"
        "return [p.x, p.y];",
        node_id,
    )
    return float(x), float(y)


def panel_text(driver: Any) -> str:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        text = driver.execute_script(
            "var p = document.getElementById('gm-panel'); return p.hidden ? null : p.textContent;"
        )
        if text:
            return str(text)
        time.sleep(0.05)
    pytest.fail("the side panel did not open")


def panel_heading(driver: Any, wanted: str) -> str:
    """The side panel's heading once it reads ``wanted`` (a click is handled a moment after
    it lands), or as it stands after 5 s."""
    deadline = time.monotonic() + 5
    heading = ""
    while time.monotonic() < deadline:
        heading = str(driver.find_element("id", "gm-panel-heading").text)
        if heading == wanted:
            break
        time.sleep(0.05)
    return heading
