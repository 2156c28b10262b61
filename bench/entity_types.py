"""Entity types (issue 16): are the names right, and is each of the right kind?

Parts (``--parts``, comma-separated; all by default):

- ``redocred``: every dev document of Re-DocRED (sentence tokens joined by spaces) is analysed
  as graphmem analyses memories (``--mode relations``: parser + NER, the engine's mode;
  ``entities``: NER only), and its mentions (``find_mentions``, no known names) are compared
  with the gold mentions by character span. *Span P*: the share of mentions whose span equals
  a gold mention's (TIME and NUM mentions are never graph nodes and are left out of both
  sides); *span R*: the share of gold mentions found with their exact span; *label accuracy*:
  of the exact matches, the share whose label has the gold type (PERSON -> PER, ORG -> ORG,
  GPE/LOC/FAC -> LOC, the rest -> MISC). ``--reference model`` scores the model's own entity
  spans instead (``doc.ents`` of graph labels), the baseline of what find_mentions adds.
- ``demo``: the demo corpus saved with ``EntityMemory.save_many``; each graph node is looked
  up in the hand-written labels of ``tests/data/demo_entity_labels.json``: right label, wrong
  label, or junk (not a name a reader lists). With ``--declare`` the demo's declared types
  (its projects as PROJECT) are added as entity patterns first, as the engine will.
- ``agentlogs``: the same for an agent-log corpus (``--agent-logs PATH``, the format of
  tests/data/agent_logs; its ``labels`` and ``declared_types``), each result saved with
  ``EntityMemory.save`` as "task. result".
- ``cost``: CPU seconds (process time) of ``EntityMemory.save_many`` over the demo records,
  best of ``--repeat`` runs, each into a fresh in-memory EntityMemory with the analyser's
  cache of recent texts emptied (pipeline and data files loaded first).

Example:
    python bench/entity_types.py --parts redocred,demo,cost --declare
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from importlib.resources import files
from pathlib import Path
from typing import Any

from common import DEFAULT_REDOCRED_DEV, REPO_ROOT, log, machine_line, markdown_table, require_file

DEMO_LABELS = REPO_ROOT / "tests" / "data" / "demo_entity_labels.json"
_GOLD_TYPE = {"PERSON": "PER", "ORG": "ORG", "GPE": "LOC", "LOC": "LOC", "FAC": "LOC"}


def _document(doc: dict[str, Any]) -> tuple[str, list[tuple[int, int, str]]]:
    """The text of a Re-DocRED document and its gold mentions as (start, end, type) chars."""
    offsets: list[list[tuple[int, int]]] = []
    pieces: list[str] = []
    position = 0
    for sent in doc["sents"]:
        row = []
        for token in sent:
            if pieces:
                position += 1
            row.append((position, position + len(token)))
            pieces.append(token)
            position += len(token)
        offsets.append(row)
    text = " ".join(pieces)
    gold = []
    for cluster in doc["vertexSet"]:
        for m in cluster:
            if m["type"] in ("TIME", "NUM"):
                continue
            a, b = m["pos"]
            row = offsets[m["sent_id"]]
            gold.append((row[a][0], row[b - 1][1], m["type"]))
    return text, gold


def part_redocred(args: argparse.Namespace) -> dict[str, Any]:
    from graphmem.extract.entities import GRAPH_LABELS, find_mentions
    from graphmem.extract.pipeline import get_analyzer

    try:
        from graphmem.extract.entities import is_graph_label
    except ImportError:  # graphmem before issue 16 (a "before" run)
        is_graph_label = GRAPH_LABELS.__contains__

    docs = json.loads(require_file(args.data, "redocred").read_text(encoding="utf-8"))
    if args.limit:
        docs = docs[: args.limit]
    analyzer = get_analyzer()
    texts, golds = zip(*(_document(d) for d in docs), strict=True)
    found = exact = right = gold_total = 0
    confusion: Counter[tuple[str, str]] = Counter()
    started = time.process_time()
    analysed = analyzer.analyse(list(texts), relations=args.mode == "relations")
    for doc, gold in zip(analysed, golds, strict=True):
        gold_spans = {(a, b): t for a, b, t in gold}
        gold_total += len(gold_spans)
        if args.reference == "model":
            spans = [
                (e.start_char, e.end_char, e.label_) for e in doc.ents if is_graph_label(e.label_)
            ]
        else:
            spans = [(m.start, m.end, m.label) for m in find_mentions(doc)]
        for a, b, label in spans:
            found += 1
            gold_type = gold_spans.get((a, b))
            if gold_type is None:
                continue
            exact += 1
            mine = _GOLD_TYPE.get(label, "MISC")
            confusion[(gold_type, mine)] += 1
            right += mine == gold_type
    seconds = time.process_time() - started
    result = {
        "documents": len(docs),
        "mode": args.mode,
        "reference": args.reference,
        "mentions": found,
        "gold_mentions": gold_total,
        "span_p": 100 * exact / max(found, 1),
        "span_r": 100 * exact / max(gold_total, 1),
        "label_accuracy": 100 * right / max(exact, 1),
        "exact": exact,
        "cpu_s": seconds,
        "confusion": {f"{g}->{m}": n for (g, m), n in sorted(confusion.items())},
    }
    print(f"\n## Re-DocRED mentions ({len(docs)} documents, mode {args.mode}, {args.reference})\n")
    print(
        markdown_table(
            ["mentions", "span P", "span R", "label accuracy", "exact matches", "CPU s"],
            [[found, result["span_p"], result["span_r"], result["label_accuracy"], exact, seconds]],
        )
    )
    types = ("PER", "ORG", "LOC", "MISC")
    print("\nConfusion (rows gold, columns graphmem):\n")
    print(
        markdown_table(["gold", *types], [[g, *(confusion[(g, m)] for m in types)] for g in types])
    )
    return result


def _declare(declared: dict[str, list[str]]) -> None:
    from graphmem.extract.pipeline import get_analyzer

    patterns = [
        {"label": label, "pattern": name} for label, names in declared.items() for name in names
    ]
    get_analyzer().add_entity_patterns(patterns)


def _grade_graph(title: str, nodes: list[tuple[str, str]], gold: dict[str, Any]) -> dict[str, Any]:
    labels: dict[str, str] = gold["labels"]
    ungraded = set(gold.get("ungraded", ()))
    right, wrong, junk = [], [], []
    for name, label in nodes:
        if name in ungraded:
            continue
        if name not in labels:
            junk.append(f"{name} ({label})")
        elif labels[name] == label:
            right.append(name)
        else:
            wrong.append(f"{name} ({label}, gold {labels[name]})")
    graded = len(right) + len(wrong)
    print(f"\n## {title}\n")
    print(
        markdown_table(
            ["nodes", "known names", "right label", "label accuracy", "junk nodes"],
            [[len(nodes), graded, len(right), 100 * len(right) / max(graded, 1), len(junk)]],
        )
    )
    print(f"\nWrong labels ({len(wrong)}): {', '.join(wrong) or '-'}")
    print(f"Junk nodes ({len(junk)}): {', '.join(junk) or '-'}")
    return {
        "nodes": len(nodes),
        "graded": graded,
        "right": len(right),
        "label_accuracy": 100 * len(right) / max(graded, 1),
        "wrong": wrong,
        "junk": junk,
    }


def _demo_records() -> list[dict[str, Any]]:
    text = files("graphmem.demo_data").joinpath("team_memories.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [
        {"content": r["content"], "metadata": r["metadata"], "agent_id": r["agent_id"]}
        for r in rows
    ]


def _nodes(memory: Any) -> list[tuple[str, str]]:
    return sorted((d["name"], d["label"]) for _, d in memory.graph.graph.nodes(data=True))


def part_demo(args: argparse.Namespace) -> dict[str, Any]:
    from graphmem.memories.entity import EntityMemory

    gold = json.loads(DEMO_LABELS.read_text(encoding="utf-8"))
    if args.declare:
        _declare(gold["declared_types"])
    memory = EntityMemory()
    memory.save_many(_demo_records())
    title = "Demo graph" + (" (projects declared)" if args.declare else "")
    return _grade_graph(title, _nodes(memory), gold)


def part_agentlogs(args: argparse.Namespace) -> dict[str, Any]:
    from graphmem.memories.entity import EntityMemory

    if not args.agent_logs:
        sys.exit("error: --agent-logs PATH is needed for the agentlogs part")
    corpus = json.loads(Path(args.agent_logs).read_text(encoding="utf-8"))
    gold = {"labels": dict(corpus["labels"]), "ungraded": []}
    if args.declare:
        _declare(corpus.get("declared_types", {}))
    memory = EntityMemory()
    for result in corpus["results"]:
        memory.save(f"{result['task_description']}. {result['result']}")
    return _grade_graph(f"Agent logs ({args.agent_logs})", _nodes(memory), gold)


def part_cost(args: argparse.Namespace) -> dict[str, Any]:
    from graphmem.extract.pipeline import get_analyzer
    from graphmem.memories.entity import EntityMemory

    records = _demo_records()
    get_analyzer()
    warm_up = EntityMemory()  # loads the pipeline and every lazily read data file
    warm_up.save("Robert Alvarez visited Rotterdam and joined Kestrel Automation for EUR 5k.")
    times = []
    for _ in range(args.repeat):
        memory = EntityMemory()
        started = time.process_time()
        memory.save_many(records)
        times.append(time.process_time() - started)
    print(f"\n## Ingest cost: EntityMemory.save_many, {len(records)} demo records\n")
    print(f"CPU seconds per run: {', '.join(f'{t:.2f}' for t in times)}; best {min(times):.2f}")
    return {"runs": times, "best": min(times)}


PARTS = {
    "redocred": part_redocred,
    "demo": part_demo,
    "agentlogs": part_agentlogs,
    "cost": part_cost,
}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--parts", default="redocred,demo,cost")
    ap.add_argument("--data", default=str(DEFAULT_REDOCRED_DEV), help="Re-DocRED dev_revised.json")
    ap.add_argument("--limit", type=int, default=0, help="first N Re-DocRED documents (0 = all)")
    ap.add_argument("--mode", choices=("relations", "entities"), default="relations")
    ap.add_argument("--reference", choices=("graphmem", "model"), default="graphmem")
    ap.add_argument("--declare", action="store_true", help="add the corpus's declared types")
    ap.add_argument("--agent-logs", default="", help="an agent-log corpus (tests/data format)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", default="", help="write the results here")
    args = ap.parse_args(argv)
    print(machine_line())
    results = {}
    for name in args.parts.split(","):
        log(f"part {name}")
        results[name] = PARTS[name](args)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
