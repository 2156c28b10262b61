"""A real `graphmem mcp --transport http` subprocess for the tests that need one."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

GRAPHMEM = [sys.executable, "-c", "from graphmem.cli import main; raise SystemExit(main())"]


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on at ``host``."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@contextmanager
def mcp_http_server(folder: Path, host: str = "127.0.0.1", *extra: str) -> Iterator[str]:
    """Serve ``folder/m.db`` over HTTP on ``host`` (with ``extra`` options) until the block
    ends; yields the server's ``/mcp`` URL. Its output goes to ``folder/server.log``."""
    port = free_port(host)
    log = (folder / "server.log").open("wb")
    proc = subprocess.Popen(
        [*GRAPHMEM, "--db", str(folder / "m.db"), "mcp", "--transport", "http"]
        + ["--host", host, "--port", str(port), *extra],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, (folder / "server.log").read_text()
            try:
                socket.create_connection((host, port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not start listening"
                time.sleep(0.2)
        bracketed = f"[{host}]" if ":" in host else host
        yield f"http://{bracketed}:{port}/mcp"
        assert proc.poll() is None, "the server stopped serving"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
