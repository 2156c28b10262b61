"""AsyncCortexMemory mirrors CortexMemory: every public method has a coroutine twin with the
same signature, and the arguments the twins once lacked do what the facade's do."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Sequence

import pytest

from graphmem.aio import AsyncCortexMemory
from graphmem.cortex import CortexMemory
from graphmem.extract.extractor import ExtractedEntity, ExtractedRelation, Extraction

pytestmark = pytest.mark.timeout(600)

#: The async facade's own methods: running calls and closing (no twin in CortexMemory).
ASYNC_ONLY = {"aclose", "read", "write", "warm_up"}


def _public_methods(cls: type) -> dict[str, Callable[..., object]]:
    return {
        name: member
        for name, member in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_")
    }


def test_every_public_method_has_a_coroutine_twin_with_the_same_signature() -> None:
    sync, asynchronous = _public_methods(CortexMemory), _public_methods(AsyncCortexMemory)
    assert sorted(set(sync) - set(asynchronous)) == []
    assert sorted(set(asynchronous) - set(sync)) == sorted(ASYNC_ONLY)
    for name, method in sync.items():
        twin = asynchronous[name]
        assert inspect.iscoroutinefunction(twin), name
        assert inspect.signature(twin) == inspect.signature(method), name


def test_save_task_results_takes_progress_and_workers() -> None:
    records = [
        {"task_description": "Audit", "result": f"Acme audit step {n} passed", "agent_role": "QA"}
        for n in range(3)
    ]

    async def main() -> tuple[list[str], int]:
        async with AsyncCortexMemory() as memory:
            ids = await memory.save_task_results(records, batch_size=2, progress=True, workers=1)
            return ids, len(memory.sync.contextual)

    ids, stored = asyncio.run(main())
    assert len(set(ids)) == 3 and stored == 3


class _LeadsExtractor:
    """Finds one statement, ``Mira Solano leads Kestrel``, wherever a text holds it."""

    def extract(self, texts: Sequence[str]) -> list[Extraction]:
        out = []
        for text in texts:
            start = text.find("Mira Solano leads Kestrel")
            if start < 0:
                out.append(Extraction([]))
                continue
            subject = ExtractedEntity(start, start + 11, "PERSON")
            obj = ExtractedEntity(start + 18, start + 25, "PROJECT")
            relation = ExtractedRelation(subject, "leads", obj, (start, start + 25))
            out.append(Extraction([subject, obj], [relation]))
        return out


def test_use_extraction_applies_to_the_saves_awaited_after_it() -> None:
    async def main() -> list[tuple[str, str, str]]:
        async with AsyncCortexMemory() as memory:
            await memory.use_extraction(extractor=_LeadsExtractor())
            await memory.save_task_result("Plan", "Mira Solano leads Kestrel.", "PM")
            entity = memory.sync.entity_memory
            assert entity is not None
            edges = await memory.read(lambda m: entity.find(predicate="leads"))
            return [(e.subject, e.predicate, e.object) for e in edges]

    assert asyncio.run(main()) == [("Mira Solano", "leads", "Kestrel")]
