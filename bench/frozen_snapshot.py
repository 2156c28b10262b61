"""A frozen-clock snapshot of what graphmem answers: searches with their scores, contexts,
graph reads, statistics and the reference MCP tools, printed as text.

A refactor that changes no behaviour leaves this output byte-identical: run it before and
after and compare the files (the clock is frozen, so recency cannot differ between runs).

Example:
    python bench/frozen_snapshot.py --turns 300 > /tmp/before.txt
    # ... change the code ...
    python bench/frozen_snapshot.py --turns 300 > /tmp/after.txt
    cmp /tmp/before.txt /tmp/after.txt
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import io
import itertools
import json
import sys
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from common import DEFAULT_LOCOMO, load_locomo

FROZEN = _dt.datetime(2026, 1, 15, 12, 0, tzinfo=_dt.UTC)


class _FrozenDatetime(_dt.datetime):
    """``datetime`` whose ``now`` is always :data:`FROZEN`."""

    @classmethod
    def now(cls, tz: _dt.tzinfo | None = None) -> _FrozenDatetime:  # type: ignore[override]
        moment = FROZEN if tz is None else FROZEN.astimezone(tz)
        return cls.fromtimestamp(moment.timestamp(), tz=moment.tzinfo)


def freeze_clock() -> None:
    """Every ``utc_now()`` of graphmem answers :data:`FROZEN`, and ids are a count (uuid4
    is replaced before graphmem is imported)."""
    counter = itertools.count(1)
    uuid.uuid4 = lambda: uuid.UUID(int=next(counter))  # type: ignore[assignment]
    import graphmem.items

    graphmem.items.datetime = _FrozenDatetime  # type: ignore[misc]


def _score(value: float) -> str:
    return f"{value:.10f}"


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, float):
        return _score(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = [_plain(v) for v in value]
        return sorted(items, key=str) if isinstance(value, set | frozenset) else items
    return value if isinstance(value, str | int | bool | None) else str(value)


def _json(value: Any) -> str:
    return json.dumps(_plain(value), sort_keys=True)


def _hits(hits: Iterable[Any]) -> list[str]:
    return [_json(hit) for hit in hits]


def _emit(out: list[str], title: str, lines: Iterable[str]) -> None:
    out.append(f"## {title}")
    out.extend(lines)


def _report(report: Any) -> list[str]:
    lines = [report.text]
    for section in report.sections:
        lines.append(f"[{section.title}]")
        lines.extend(f"  {_json(entry)}" for entry in section.entries)
    lines.append(f"entities {_json(report.entities)}")
    return lines


def snapshot(turns: int, questions: int, locomo: Path = DEFAULT_LOCOMO) -> str:
    freeze_clock()
    from graphmem import CortexMemory, EntityMemory, LongTermMemory, ShortTermMemory

    try:
        from graphmem.reference import ReferenceGraph
    except ImportError:  # before issue 37 it lived in mcp/
        from graphmem.mcp.reference_graph import ReferenceGraph  # type: ignore[no-redef]
    from graphmem.stats import stats

    conversation = load_locomo(locomo)[0]
    records = conversation.records[:turns]
    queries = [q.question for q in conversation.queries[:questions]]
    out: list[str] = []

    # The facade: every turn a task result; a small long-term capacity, so eviction runs.
    cortex = CortexMemory(short_term_capacity=20, long_term_capacity=max(turns // 2, 10))
    cortex.save_task_results(
        {
            "task_description": "Conversation turn",
            "result": r.content,
            "agent_role": r.metadata["speaker"],
            "importance": 0.4 + 0.5 * ((i * 7) % 10) / 10,
            "task_metadata": {**r.metadata, "record_id": r.id},
        }
        for i, r in enumerate(records)
    )
    for i, r in enumerate(records[:10]):
        cortex.save_agent_interaction(
            r.metadata["speaker"], "reply", r.content, 0.3 + 0.07 * i, timestamp=FROZEN
        )
    speakers = sorted({r.metadata["speaker"] for r in records})
    for q in queries:
        _emit(out, f"cortex.search_hits {q!r}", _hits(cortex.search_hits(q, limit=8)))
        role = speakers[len(q) % len(speakers)]
        _emit(out, f"cortex.search_hits role={role}", _hits(cortex.search_hits(q, 5, role)))
    for q in queries[: max(questions // 4, 1)]:
        _emit(out, f"cortex.context {q!r}", _report(cortex.build_context_report(q, max_items=6)))
        _emit(
            out,
            f"cortex.context team {q!r}",
            _report(cortex.build_context_report(q, speakers[0], knowledge_scope="team")),
        )
    for role in speakers:
        _emit(out, f"history {role}", cortex.get_agent_history(role, limit=15))
    _emit(out, "summary", [cortex.get_summary()])
    _emit(out, "stats", [_json(stats(cortex.space))])
    listed = cortex.search_hits(queries[0], limit=8)
    if len(listed) > 1:
        cortex.update(listed[0].result_id, result=listed[0].item.content + " (edited)")
        cortex.delete(listed[-1].result_id)
    _emit(out, "after update/delete", _hits(cortex.search_hits(queries[0], limit=8)))
    _emit(out, "stats after", [_json(stats(cortex.space))])

    # The long-term tier alone, timestamps given.
    long_term = LongTermMemory(max_items=max(turns // 3, 10))
    for i, r in enumerate(records):
        long_term.save(
            r.content,
            metadata=r.metadata,
            importance=0.3 + 0.6 * ((i * 3) % 10) / 10,
            timestamp=FROZEN - _dt.timedelta(minutes=turns - i),
        )
    for q in queries[: max(questions // 3, 1)]:
        _emit(out, f"long_term.search {q!r}", _hits(long_term.search_hits(q, limit=8)))
    _emit(out, "long_term.consolidate", [long_term.consolidate()])
    short = ShortTermMemory(capacity=15)
    for r in records[:40]:
        short.save(r.content, metadata=r.metadata)
    _emit(out, "short_term.retrieve", [i.content for i in short.retrieve(limit=20)])

    # The graph.
    entities = EntityMemory()
    for r in records:
        entities.save(r.content)
    names = sorted(entities.entities)
    _emit(out, "entities", [_json(entities.entities)])
    for name in names[:25]:
        _emit(out, f"entity {name}", [_json(entities.get_entity_info(name))])
        _emit(out, f"neighbors {name}", [_json(entities.neighbors(name, depth=2))])
    for q in queries[:20]:
        _emit(out, f"entity.search {q!r}", _hits(entities.search_hits(q, limit=5)))
    _emit(out, "entity stats", [_json(stats(entities.space))])

    # The reference MCP tools.
    graph = ReferenceGraph(None)
    graph.create_entities(
        [
            {"name": name, "entityType": "person", "observations": [r.content]}
            for name, r in zip(names[:15], records, strict=False)
        ]
    )
    graph.create_relations(
        [
            {"from": a, "to": b, "relationType": "knows"}
            for a, b in zip(names[:14], names[1:15], strict=False)
        ]
    )
    graph.add_observations([{"entityName": names[0], "contents": ["Likes painting"]}])
    _emit(out, "mcp read_graph", [_json(graph.read_graph())])
    for q in queries[:15]:
        found = graph.search_nodes(q.split()[0] if q.split() else q, limit=5)
        _emit(out, f"mcp search_nodes {q!r}", [_json(found)])
    graph.delete_relations([{"from": names[0], "to": names[1], "relationType": "knows"}])
    graph.delete_entities([names[2]])
    _emit(out, "mcp open_nodes", [_json(graph.open_nodes(names[:5]))])
    exported = io.StringIO()
    graph.export_jsonl(exported)
    _emit(out, "mcp export", [exported.getvalue()])
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--questions", type=int, default=120)
    parser.add_argument("--output", type=Path)
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    args = parser.parse_args(argv)
    text = snapshot(args.turns, args.questions, args.locomo)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
