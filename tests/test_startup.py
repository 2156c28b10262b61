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

#: What a start that analyses no text must not load: spaCy, the graph library, numpy, recall
#: by meaning's model, graphmem's extraction code (the entity index, the mention finder).
HEAVY = (
    "spacy",
    "networkx",
    "numpy",
    "wordllama",
    "graphmem.index.entity_index",
    "graphmem.extract.entities",
)


def _loaded_after(
    code: str, watched: tuple[str, ...] = ("spacy", "networkx", "numpy")
) -> list[str]:
    """The ``watched`` modules a fresh interpreter holds after running ``code`` (after
    whatever ``code`` prints)."""
    probe = textwrap.dedent(code) + textwrap.dedent(
        f"""
        import sys
        print(" ".join(m for m in {watched!r} if m in sys.modules))
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


def test_a_new_memory_opens_its_database_only() -> None:
    """``CortexMemory()`` in memory loads SQLAlchemy and the tiers, none of :data:`HEAVY`
    (the entity index and writer are made on first use)."""
    assert _loaded_after("from graphmem import CortexMemory\nCortexMemory()", HEAVY) == []


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
    any of :data:`HEAVY`)."""
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
                print("after-stats:" + ",".join(m for m in {HEAVY!r} if m in sys.modules))
            assert "spacy" not in sys.modules, f"graphmem {{argv[0]}} loaded spaCy"
        """
    loaded = _loaded_after(code)
    assert "after-stats:" in loaded, loaded  # one word: what follows it is what stats loaded
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


def test_a_command_leaves_its_objects_to_the_os_at_exit(small_db: Path) -> None:
    """``graphmem`` (its process) freezes its objects out of the interpreter's last garbage
    collection, which would walk them all at exit (0.05 s with SQLAlchemy loaded)."""
    code = f"""
        import atexit, gc, sys
        atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count() > 0))  # runs last
        from graphmem.cli import main
        sys.argv = ["graphmem", "--db", {str(small_db)!r}, "stats"]
        assert main() == 0
        print("frozen before exit:", gc.get_freeze_count() > 0)
        """
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True
    ).stdout
    assert out.splitlines()[-2:] == ["frozen before exit: False", "frozen at exit: True"], out


def test_the_mcp_server_lists_its_tools_before_loading_the_engine() -> None:
    """Over stdio the server is built with what opens its database: listing the tools opens
    nothing and loads neither SQLAlchemy nor the facade (the SDK's own import is the rest of
    a start: bench/startup.py)."""
    code = """
        import asyncio
        from mcp import Client
        from graphmem.mcp.server import build_server

        opened = []

        async def main():
            async with Client(build_server(lambda: opened.append(1))) as client:
                return {t.name for t in (await client.list_tools()).tools}

        assert "remember" in asyncio.run(main())
        print("opened", len(opened))
        """
    assert _loaded_after(code, ("sqlalchemy", "graphmem.cortex", "graphmem.space")) == [
        "opened",
        "0",
    ]


def test_the_database_opens_once_the_client_has_listed_the_tools(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``warm=True`` opens the database in the background once the tools are listed (the
    start-up exchange has the interpreter to itself until then); calls then use it."""
    from mcp import Client

    from graphmem.mcp import server as mcp_server

    monkeypatch.setattr(mcp_server, "QUIET_START", 60.0)
    monkeypatch.setattr(mcp_server, "warm_up", lambda: None)  # the models are not the point
    opened = threading.Event()

    def open_storage() -> SQLiteStorage:
        opened.set()
        return SQLiteStorage(str(tmp_path / "m.db"))

    async def main() -> None:
        async with Client(mcp_server.build_server(open_storage, warm=True)) as client:
            await asyncio.sleep(0.2)
            assert not opened.is_set()  # initialised, not yet listed
            await client.list_tools()
            assert await asyncio.to_thread(opened.wait, 10)
            found = await client.call_tool("recall", {"query": "Harbor"})
            assert found.structured_content["results"] == []

    asyncio.run(main())


def test_a_database_that_cannot_be_opened_fails_each_call(tmp_path: Path) -> None:
    """A file that is not a database: the server still answers, each call's error names the
    file; a directory is refused before the server starts."""
    from mcp import Client

    from graphmem.cli import main as cli_main
    from graphmem.mcp.server import build_server

    bad = tmp_path / "notes.db"
    bad.write_text("not a database", encoding="utf-8")

    async def main() -> list[str]:
        async with Client(build_server(lambda: SQLiteStorage(str(bad)))) as client:
            assert "recall" in {t.name for t in (await client.list_tools()).tools}
            errors = []
            for name, arguments in [("recall", {"query": "x"}), ("remember", {"content": "x"})]:
                result = await client.call_tool(name, arguments)
                assert result.is_error
                errors.append(result.content[0].text)  # type: ignore[union-attr]
            return errors

    for error in asyncio.run(main()):
        assert f"DatabaseFileError: {bad}: not a SQLite database" in error
    assert cli_main(["--db", str(tmp_path), "mcp"]) == 1
