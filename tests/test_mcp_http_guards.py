"""Issue 25.6-8: the HTTP server checks Host/Origin on every loopback address, refuses an
empty tokens file, and caps the sessions of each user (real `graphmem mcp` subprocesses)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx2
import pytest
from _mcp_server import GRAPHMEM, free_port, mcp_http_server

pytest.importorskip("mcp")
pytestmark = pytest.mark.timeout(300)

ALICE, BOB = "alice-token-for-tests-0001", "bob-token-for-tests-00002"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _open_session(url: str, **headers: str) -> httpx2.Response:
    return httpx2.post(url, json=INITIALIZE, headers={**ACCEPT, **headers}, timeout=30)


@pytest.mark.slow
@pytest.mark.parametrize("host", ["127.0.0.2", "0:0:0:0:0:0:0:1"])
def test_every_loopback_address_refuses_another_sites_host_and_origin(
    tmp_path: Path, host: str
) -> None:
    if ":" in host:
        try:
            free_port(host)
        except OSError:
            pytest.skip("no IPv6 loopback on this machine")
    with mcp_http_server(tmp_path, host) as url:
        rebound = _open_session(url, Host="evil.example:80", Origin="http://evil.example")
        assert rebound.status_code in (403, 421), rebound.text  # was 200
        foreign_origin = _open_session(url, Origin="http://evil.example")
        assert foreign_origin.status_code in (403, 421), foreign_origin.text
        own = _open_session(url)
        assert own.status_code == 200, own.text


def test_an_empty_tokens_file_is_refused_at_start(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.json"
    tokens.write_text("{}", encoding="utf-8")
    done = subprocess.run(
        [*GRAPHMEM, "--db", str(tmp_path / "m.db"), "mcp", "--transport", "http"]
        + ["--port", str(free_port("127.0.0.1")), "--tokens", str(tokens)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr  # served without a token before
    assert "holds no token" in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_one_token_holder_cannot_take_every_session(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({ALICE: "alice", BOB: "bob"}), encoding="utf-8")
    with mcp_http_server(
        tmp_path, "127.0.0.1", "--tokens", str(tokens), "--sessions-per-user", "3"
    ) as url:
        alice = {"Authorization": f"Bearer {ALICE}"}
        opened = [_open_session(url, **alice).status_code for _ in range(5)]
        assert opened == [200, 200, 200, 503, 503]
        assert _open_session(url, Authorization=f"Bearer {BOB}").status_code == 200


def test_session_options_are_checked(tmp_path: Path) -> None:
    done = subprocess.run(
        [*GRAPHMEM, "--db", str(tmp_path / "m.db"), "mcp", "--transport", "http"]
        + ["--sessions-per-user", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "--sessions-per-user must be a positive number" in done.stderr
