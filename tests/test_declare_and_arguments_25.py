"""Issue 25.5, 25.13, 25.14: declared patterns are built and tried before they are stored (and
can be removed); bad arguments of the batch save, the async facade after ``aclose`` and
``declare`` get named errors."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli

from graphmem import CortexMemory
from graphmem.aio import AsyncCortexMemory
from graphmem.compat.storage import SQLiteStorage
from graphmem.errors import (
    GraphmemError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    MemoryClosedError,
)
from graphmem.extract.entity_patterns import EntityPatternsError
from graphmem.memories.entity import EntityMemory
from graphmem.store import graph_rows

HOSTILE: list[tuple[dict[str, Any], str]] = [
    ({"label": "X", "pattern": [{"TEXT": {"REGEX": "(ab"}}]}, "does not compile"),
    ({"label": "X", "pattern": [{"TEXT": "a", "OP": "{2,1}"}]}, "spaCy cannot use it"),
    ({"label": "X", "pattern": [{"_": {"not_registered": True}}]}, "spaCy cannot use it"),
    ({"label": "X", "pattern": "Al\udc00ce"}, "not valid Unicode text"),
    ({"label": "X", "pattern": [{"TEXT": {"REGEX": "(a+)+$"}}]}, "repeats a repeat"),
    ({"label": "X", "pattern": [{"LOWER": {"REGEX": "(?:x*)*y"}}]}, "repeats a repeat"),
]


@pytest.mark.parametrize(("pattern", "named"), HOSTILE)
def test_a_pattern_spacy_cannot_use_is_refused_and_saves_keep_working(
    tmp_path: Path, pattern: dict[str, Any], named: str
) -> None:
    path = tmp_path / "d.db"
    memory = EntityMemory(storage=SQLiteStorage(path))
    with pytest.raises(EntityPatternsError, match=named):
        memory.declare_entities([pattern])
    assert memory.declared_entities() == []
    started = time.perf_counter()
    memory.save("Alice Johnson joined Acme Corp. " + "a" * 40 + "!")
    assert time.perf_counter() - started < 5  # (a+)+$ took 16 s before
    memory.space.close()
    reopened = EntityMemory(storage=SQLiteStorage(path))
    reopened.save("Bob Stone joined Initech.")
    assert reopened.get_entity("Bob Stone") is not None


def test_a_bad_pattern_stored_by_an_older_graphmem_fails_no_save_and_can_be_removed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    storage = SQLiteStorage(path)
    with storage.database.write() as conn:  # what d9cf6ae stored without trying it
        graph_rows.write_setting(
            conn,
            graph_rows.DECLARED_PATTERNS_KEY,
            [{"label": "BAD", "pattern": [{"_": {"nope": 1}}], "id": "declared"}],
        )
    storage.close()
    memory = EntityMemory(storage=SQLiteStorage(path))
    with pytest.warns(UserWarning, match="graphmem undeclare BAD"):
        memory.save("Alice Johnson joined Acme Corp.")
    assert memory.get_entity("Acme Corp") is not None
    assert memory.undeclare_entities("BAD") == 1
    assert memory.declared_entities() == []
    memory.space.close()


def test_undeclare_removes_one_pattern_or_every_one_of_a_label() -> None:
    memory = EntityMemory()
    memory.declare_entities(
        [
            {"label": "PROJECT", "pattern": "Atlas"},
            {"label": "PROJECT", "pattern": "Compass"},
            {"label": "TEAM", "pattern": "Platform"},
        ]
    )
    assert memory.undeclare_entities("PROJECT", "Atlas") == 1
    assert [p["pattern"] for p in memory.declared_entities()] == ["Compass", "Platform"]
    assert memory.undeclare_entities("PROJECT") == 1
    assert memory.undeclare_entities("PROJECT") == 0
    memory.save("Priya Nair reviewed Atlas.")
    atlas = memory.get_entity("Atlas")
    assert atlas is None or atlas.label != "PROJECT"
    with pytest.raises(InvalidArgumentTypeError, match="label must be a str"):
        memory.undeclare_entities(5)  # type: ignore[arg-type]


def test_graphmem_undeclare_and_declare_errors(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    patterns = tmp_path / "types.jsonl"
    patterns.write_text('{"label": "PROJECT", "pattern": "Atlas"}\n', encoding="utf-8")
    run = lambda *a: run_cli("--db", db, *a)  # noqa: E731  (in this process, tests/_cli.py)
    assert run("declare", str(patterns)).returncode == 0
    done = run("undeclare", "PROJECT", "--pattern", '"Atlas"')
    assert (done.returncode, done.stdout.strip()) == (0, "Removed 1 pattern of PROJECT.")
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes('{"label": "PROJECT", "pattern": "Caf\xe9"}\n'.encode("latin-1"))
    done = run("declare", str(latin))
    assert done.returncode == 1 and "not UTF-8 text" in done.stderr  # was 3
    done = run("declare", str(tmp_path))
    assert done.returncode == 1 and "is a directory" in done.stderr  # said "no such file"


def test_declare_entities_of_a_directory_is_named(tmp_path: Path) -> None:
    with pytest.raises(EntityPatternsError, match="is a directory"):
        EntityMemory().declare_entities(tmp_path)


BAD_BATCHES: list[tuple[Any, dict[str, Any], type[Exception], str]] = [
    (5, {}, InvalidArgumentTypeError, "results must be an iterable of dicts, got int"),
    (None, {}, InvalidArgumentTypeError, "got NoneType"),
    ("text", {}, InvalidArgumentTypeError, "got str"),
    ([], {"batch_size": "x"}, InvalidArgumentTypeError, "batch_size must be a positive int"),
    ([], {"batch_size": 1.5}, InvalidArgumentTypeError, "batch_size must be a positive int"),
    ([], {"batch_size": 0}, InvalidArgumentError, "batch_size must be in"),
]


@pytest.mark.parametrize(("results", "kwargs", "error", "named"), BAD_BATCHES)
def test_bad_batches_are_named_sync_and_async(
    results: Any, kwargs: dict[str, Any], error: type[Exception], named: str
) -> None:
    memory = CortexMemory()
    with pytest.raises(error, match=named):
        memory.save_task_results(results, **kwargs)

    async def main() -> None:
        async with AsyncCortexMemory(memory) as aio:
            with pytest.raises(error, match=named):
                await aio.save_task_results(results, **kwargs)

    asyncio.run(main())
    assert len(memory.contextual) == 0


def test_calls_after_aclose_are_named() -> None:
    async def main() -> None:
        memory = AsyncCortexMemory()
        await memory.save_task_result("Note", "Ana Costa founded Vela Labs.", "QA")
        await memory.aclose()
        for call in (
            memory.save_task_result("Note", "x", "QA"),
            memory.build_context_for_task("Vela"),
            memory.read(lambda m: m.get_summary()),
        ):
            with pytest.raises(MemoryClosedError, match="was closed"):
                await call
        assert issubclass(MemoryClosedError, GraphmemError)

    asyncio.run(main())


def test_update_keeps_the_callers_own_metadata_keys_after_the_line_is_evicted() -> None:
    memory = CortexMemory(short_term_capacity=1)
    given = {"source": "crm", "context": "q3", "entities": ["mine"], "importance": "high"}
    given |= {"promoted": "no", "ticket": 7}
    hire = memory.save_task_result(
        "Record", "Maya Lindqvist joined Lumen Robotics.", "HR", importance=0.9, task_metadata=given
    )
    memory.save_task_result("Other", "Tom Becker left.", "HR")  # evicts hire's short-term line
    memory.update(hire, result="Maya Lindqvist joined Harbor Bank.")
    with memory.space.reading() as tx:
        stored = memory._stored_task(tx, hire)
    assert stored["result"] == "Maya Lindqvist joined Harbor Bank."
    assert stored["task_metadata"] == given  # five of its keys were dropped


def test_a_save_cancelled_by_wait_for_is_rolled_back(tmp_path: Path) -> None:
    async def main() -> tuple[set[str], set[str]]:
        async with AsyncCortexMemory(
            persistence_path=None, storage=SQLiteStorage(tmp_path / "c.db")
        ) as memory:
            await memory.warm_up()
            acknowledged: set[str] = set()
            for n in range(10):
                text = f"Result {n}: Maya Lindqvist met Tom Becker of Lumen Robotics in Oslo."
                try:
                    await asyncio.wait_for(
                        memory.save_task_result(f"Task {n}", text, "QA"), timeout=0.005
                    )
                    acknowledged.add(text)
                except TimeoutError:
                    pass
            await memory.write(lambda m: None)  # the writer is done with every call
            stored = {i.content for i in await memory.read(lambda m: m.contextual._all_items())}
            return acknowledged, stored

    acknowledged, stored = asyncio.run(main())
    assert stored == acknowledged  # 7 of 10 timed-out saves were stored
