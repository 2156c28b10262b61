"""The agent-text corpus (tests/data/agent_corpus/): reading it, its split by style, and
graphmem scored on it per style through the facade.

Each file holds one agent style's records (task, text, gold entities, triples and forbidden
readings; format in tests/data/agent_corpus/README.md). ``MANIFEST.json`` freezes each file by
SHA-256 and gives its split: **train** styles teach the models, **dev** styles are for
choosing between them, **test** styles are read only to report (never tuned on). A style is in
one split whole, so the test half measures text in styles the models never saw.

Scoring: each style's records are saved, in order, through ``CortexMemory.save_task_result``
into one fresh memory (an agent of that style accumulating them) and scored with
``agent_log_relations.score_graph``: typed precision and recall, entity types, forbidden
readings produced. The totals are micro-averaged over the styles of a split.

Example:
    python bench/agent_corpus.py --split test --json bench/results/agent_corpus_test.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from common import REPO_ROOT, log, machine_line

from graphmem.extract.learned import AGENT_PREDICATES

CORPUS_DIR = REPO_ROOT / "tests" / "data" / "agent_corpus"
MANIFEST = CORPUS_DIR / "MANIFEST.json"
SPLITS = ("train", "dev", "test")

# ------------------------------------------------------------------------------- structure
TYPES = frozenset(
    {"PERSON", "ORG", "GPE", "LOC", "FAC", "PRODUCT", "EVENT", "NORP", "PROJECT", "TEAM"}
)
#: The public predicate vocabulary (models/relation_rules.json), besides ``{role}_of``.
PREDICATES = frozenset(AGENT_PREDICATES)
ROLE = re.compile(r"^[a-z][a-z0-9_]*_of$")
#: Why a reading is forbidden.
WHY = frozenset(
    {"negated", "hedged", "future", "conditional", "rumoured", "question", "planned", "denied"}
)


def style_problems(data: Mapping[str, Any]) -> list[str]:
    """What is wrong with one style file's structure (empty: sound): every entity (or alias)
    occurs in its record, every triple's ends are listed entities, predicates are in the
    vocabulary, states and reasons are known ones.

    Example:
        >>> style_problems({"style": "s", "style_description": "d", "domain": "x",
        ...                 "writer": "W", "records": []})
        []
    """
    problems = [
        f"missing top-level key {k!r}"
        for k in ("style", "style_description", "domain", "writer", "records")
        if k not in data
    ]
    ids: set[str] = set()
    for i, rec in enumerate(data.get("records", [])):
        where = f"record {rec.get('id', i)}"
        problems += [
            f"{where}: missing {k!r}"
            for k in ("id", "task", "text", "agent_role", "entities", "triples", "negatives")
            if k not in rec
        ]
        if rec.get("id") in ids:
            problems.append(f"{where}: duplicate id")
        ids.add(rec.get("id"))
        body = rec.get("task", "") + "\n" + rec.get("text", "")
        names = set()
        for ent in rec.get("entities", []):
            name = ent.get("name", "")
            if ent.get("type") not in TYPES:
                problems.append(f"{where}: entity {name!r} has type {ent.get('type')!r}")
            if not any(f and f in body for f in [name, *ent.get("aliases", [])]):
                problems.append(f"{where}: entity {name!r} does not occur in task or text")
            problems += [
                f"{where}: alias {a!r} not in task or text"
                for a in ent.get("aliases", [])
                if a not in body
            ]
            names.add(name)
        for kind in ("triples", "negatives"):
            for t in rec.get(kind, []):
                predicate = t.get("predicate", "")
                if predicate not in PREDICATES and not ROLE.match(predicate):
                    problems.append(f"{where}: predicate {predicate!r} not in the vocabulary")
                problems += [
                    f"{where}: {kind} {end} {t.get(end)!r} is no listed entity"
                    for end in ("subject", "object")
                    if t.get(end) not in names
                ]
                if kind == "triples" and t.get("state") not in ("current", "ended"):
                    problems.append(f"{where}: triple state {t.get('state')!r}")
                if kind == "negatives" and t.get("why") not in WHY:
                    problems.append(f"{where}: negative reason {t.get('why')!r}")
    return problems


def freeze(sources: Iterable[Path], directory: Path = CORPUS_DIR) -> dict[str, Any]:
    """Copy sound style files into ``directory`` (bytes unchanged) and write the manifest:
    each file's SHA-256, split (:func:`split_of`), writer and record count. A file with
    problems is refused whole."""
    files = {}
    for source in sorted(sources, key=lambda p: p.name):
        raw = source.read_bytes()
        data = json.loads(raw)
        problems = style_problems(data)
        if problems:
            raise ValueError(f"{source}: {problems[:3]}")
        (directory / source.name).write_bytes(raw)
        files[source.name] = {
            "sha256": hashlib.sha256(raw).hexdigest(),
            "split": split_of(data["style"]),
            "writer": data["writer"],
            "records": len(data["records"]),
        }
    manifest = {"files": files}
    (directory / "MANIFEST.json").write_text(
        json.dumps(manifest, indent=1) + "\n", encoding="utf-8"
    )
    return manifest


def split_of(style: str) -> str:
    """The split of a style, from a hash of its name alone (fixed before any text was read):
    18% test, 18% dev, the rest train.

    Example:
        >>> split_of("crm-account-notes") in SPLITS
        True
    """
    bucket = int(hashlib.sha256(style.encode()).hexdigest(), 16) % 100
    return "test" if bucket < 18 else "dev" if bucket < 36 else "train"


@dataclass(frozen=True)
class Style:
    """One style file: its name, split and records."""

    name: str
    split: str
    description: str
    records: list[dict[str, Any]]


def load_styles(splits: Iterable[str] = SPLITS, directory: Path = CORPUS_DIR) -> list[Style]:
    """The styles of ``splits``, checked against the manifest's SHA-256 (a changed file is an
    error: the corpus is frozen)."""
    manifest = json.loads((directory / "MANIFEST.json").read_text(encoding="utf-8"))
    wanted = set(splits)
    out = []
    for name, entry in sorted(manifest["files"].items()):
        if entry["split"] not in wanted:
            continue
        raw = (directory / name).read_bytes()
        if hashlib.sha256(raw).hexdigest() != entry["sha256"]:
            raise ValueError(f"{name}: changed since it was frozen (SHA-256 differs)")
        data = json.loads(raw)
        out.append(Style(data["style"], entry["split"], data["style_description"], data["records"]))
    return out


def as_agent_log(style: Style, start: datetime = datetime(2025, 1, 6, 9)) -> dict[str, Any]:
    """The style in the agent-log corpus format of ``agent_log_relations.py`` (results dated
    one hour apart; a triple from its record, an ``ended`` one closed by it)."""
    labels: dict[str, str] = {}
    aliases: dict[str, list[str]] = {}
    results, triples, negatives = [], [], []
    for n, record in enumerate(style.records):
        rid = record["id"]
        results.append(
            {
                "id": rid,
                "timestamp": (start + timedelta(hours=n)).isoformat(),
                "agent_role": record["agent_role"],
                "task_description": record["task"],
                "result": record["text"],
                "importance": 0.7,
            }
        )
        for entity in record["entities"]:
            labels.setdefault(entity["name"], entity["type"])
            known = aliases.setdefault(entity["name"], [])
            known += [a for a in entity.get("aliases", []) if a not in known]
        for t in record["triples"]:
            ended = t["state"] == "ended"
            triples.append(
                {
                    "subject": t["subject"],
                    "predicate": t["predicate"],
                    "object": t["object"],
                    "from": rid,
                    "to": rid if ended else None,
                }
            )
        for neg in record["negatives"]:
            negatives.append({**neg, "result": rid})
    seen: set[tuple[str, str, str]] = set()
    unique = []
    for t in triples:  # a triple stated again in a later record keeps its first statement
        key = (t["subject"], t["predicate"], t["object"])
        if key not in seen:
            seen.add(key)
            unique.append(t)
    return {
        "description": f"{style.name} ({style.split}): {style.description}",
        "roles_imply_employment": True,
        "labels": labels,
        "aliases": {k: v for k, v in aliases.items() if v},
        "results": results,
        "triples": unique,
        "negatives": negatives,
        "questions": [],
    }


def score_styles(styles: Iterable[Style]) -> list[dict[str, Any]]:
    """Each style saved through the facade and scored (figures of ``score_graph``)."""
    from agent_log_relations import (
        Corpus,
        Score,
        save_through_facade,
        score_graph,
        symmetric_predicates,
    )

    rows = []
    for style in styles:
        data = as_agent_log(style)
        corpus = Corpus(
            name=style.name,
            results=data["results"],
            triples=data["triples"],
            labels=data["labels"],
            aliases=data["aliases"],
            negatives=data["negatives"],
            questions=[],
            symmetric=symmetric_predicates(),
            roles_imply_employment=True,
        )
        started = time.perf_counter()
        kg, dated = save_through_facade(corpus)
        scored = score_graph(kg, corpus, Score(style.name, "facade", dated, 0.0))
        scored.seconds = time.perf_counter() - started
        log(
            f"{style.split} {style.name}: P {scored.figures['precision']} R {scored.figures['recall']}"
        )
        rows.append(
            {
                "style": style.name,
                "split": style.split,
                "labels": len(corpus.labels),
                **scored.figures,
                "missed": scored.missed,
                "wrong": scored.wrong,
            }
        )
    return rows


def totals(rows: list[Mapping[str, Any]]) -> dict[str, float | int | None]:
    """Micro-averaged figures over ``rows`` (typed precision and recall, entity types)."""
    typed = sum(r["typed_edges"] for r in rows)
    correct = sum(r["correct_edges"] for r in rows)
    gold = sum(r["gold_triples"] for r in rows)
    found = sum(r["found_gold"] for r in rows)
    negatives = sum(r["negatives_found"] for r in rows)
    labels = sum(r.get("labels", 0) for r in rows)
    types = sum(r.get("labels", 0) * (r["entity_types"] or 0) for r in rows)
    return {
        "styles": len(rows),
        "gold_triples": gold,
        "precision": correct / typed if typed else None,
        "recall": found / gold if gold else None,
        "entity_types": types / labels if labels else None,
        "forbidden_produced": negatives,
    }


def table(rows: list[Mapping[str, Any]]) -> str:
    """A markdown table: one line per style, then the total."""

    def cell(x: Any) -> str:
        return "-" if x is None else f"{x:.2f}" if isinstance(x, float) else str(x)

    lines = [
        "| style | split | gold | P | R | types | forbidden |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['style']} | {r['split']} | {r['gold_triples']} | {cell(r['precision'])} | "
            f"{cell(r['recall'])} | {cell(r['entity_types'])} | {r['negatives_found']} |"
        )
    t = totals(rows)
    lines.append(
        f"| **all {t['styles']}** | | {t['gold_triples']} | {cell(t['precision'])} | "
        f"{cell(t['recall'])} | {cell(t['entity_types'])} | {t['forbidden_produced']} |"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=SPLITS, action="append", help="default: dev")
    parser.add_argument("--style", action="append", help="only these styles")
    parser.add_argument("--json", help="write per-style figures (and misses) here")
    parser.add_argument("--freeze", nargs="+", type=Path, help="style files to freeze in")
    args = parser.parse_args(argv)
    if args.freeze:
        manifest = freeze(args.freeze)
        print(f"froze {len(manifest['files'])} style files into {CORPUS_DIR}")
        return
    styles = load_styles(args.split or ["dev"])
    if args.style:
        styles = [s for s in styles if s.name in set(args.style)]
    rows = score_styles(styles)
    print(machine_line())
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
