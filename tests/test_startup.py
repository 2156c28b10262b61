"""Start at once (issue 36): what analyses no text loads no spaCy, and the MCP server answers
before its models have loaded. The times themselves are bench/startup.py's, not a test's.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from graphmem import CortexMemory, SQLiteStorage


def _loaded_after(code: str) -> list[str]:
    """The heavy modules a fresh interpreter holds after running ``code``."""
    probe = textwrap.dedent(code) + textwrap.dedent(
        """
        import sys
        print(" ".join(m for m in ("spacy", "networkx", "numpy") if m in sys.modules))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return out.split()


def test_import_and_a_new_memory_load_no_spacy() -> None:
    loaded = _loaded_after(
        """
        import graphmem
        from graphmem import CortexMemory, SQLiteStorage
        memory = CortexMemory()
        memory.search("Acme")
        memory.build_context_for_task("Review Acme's contract")
        """
    )
    assert "spacy" not in loaded


@pytest.fixture(scope="module")
def small_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("startup") / "small.db"
    storage = SQLiteStorage(str(path))
    try:
        CortexMemory(storage=storage).save_task_result(
            "Record the hire", "Grace Liu joined Harbor Analytics in Boston.", "HR", importance=0.8
        )
    finally:
        storage.close()
    return path


def test_commands_that_analyse_no_text_load_no_spacy(small_db: Path) -> None:
    """Each command in turn, in one process: none of them loads spaCy (nor, for ``stats``,
    the graph library or numpy)."""
    commands = [
        ["stats"],
        ["search", "Harbor Analytics"],
        ["relations", "Grace Liu"],
        ["entities"],
        ["context", "Call Grace Liu"],
        ["path", "Grace Liu", "Boston"],
    ]
    code = f"""
        import contextlib, io, sys
        from graphmem.cli import main
        for argv in {commands!r}:
            with contextlib.redirect_stdout(io.StringIO()):
                main(["--db", {str(small_db)!r}, *argv])
            if argv == ["stats"]:
                print("after-stats:", *[m for m in ("networkx", "numpy") if m in sys.modules])
            assert "spacy" not in sys.modules, f"graphmem {{argv[0]}} loaded spaCy"
        """
    loaded = _loaded_after(code)
    stats_line = loaded[: loaded.index("after-stats:") + 1]
    assert stats_line == ["after-stats:"], loaded
    assert "spacy" not in loaded


def test_the_mcp_server_answers_while_its_models_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """``build_server(warm=True)`` (what ``graphmem mcp`` runs) loads the models in its writer
    thread: tools are listed and reads answered meanwhile; a write waits for the load."""
    from mcp import Client

    from graphmem.mcp import server as mcp_server

    loading, release = threading.Event(), threading.Event()

    def slow_warm_up() -> None:
        loading.set()
        assert release.wait(30)

    monkeypatch.setattr(mcp_server, "warm_up", slow_warm_up)

    async def main() -> None:
        server = mcp_server.build_server(None, warm=True)
        assert loading.wait(10)
        async with Client(server) as client:
            assert "remember" in {t.name for t in (await client.list_tools()).tools}
            found = await client.call_tool("recall", {"query": "Harbor"})
            assert found.structured_content["results"] == []
            remember = asyncio.ensure_future(
                client.call_tool("remember", {"content": "Grace Liu joined Harbor Analytics."})
            )
            await asyncio.sleep(0.2)
            assert not remember.done()  # queued behind the models' load
            release.set()
            await remember
            found = await client.call_tool("recall", {"query": "Harbor"})
            assert len(found.structured_content["results"]) == 1

    try:
        asyncio.run(main())
    finally:
        release.set()
