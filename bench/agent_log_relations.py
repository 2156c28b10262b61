"""Typed relations from agent logs: graphmem scored on the hand-written agent-log corpora.

Each corpus (tests/data/agent_logs/*.json, format in that folder's README.md) is saved in
order, in two ways, each into a fresh memory:

- ``facade``: ``CortexMemory().save_task_result(task_description, result, agent_role,
  importance)`` per result, as an agent does (with ``timestamp=`` the event time when the
  signature takes one);
- ``entity``: ``EntityMemory().save(result)`` of the results alone (with ``timestamp=`` when it
  is honoured), for comparison: no task text, no other tiers.

Then, from the memory's knowledge graph (``KnowledgeGraph``: ``resolve``, ``find``, ``as_of``,
and ``graph``, a NetworkX MultiDiGraph whose edges carry ``predicate``, ``valid_from``,
``valid_to``), it reports:

- typed precision: found typed edges (predicate != co_occurs) whose two ends resolve to gold
  entities and whose triple is gold / all found typed edges (an end that is no gold entity
  counts as wrong); symmetric predicates (met, partnered_with, married) match either way;
- recall: gold triples found / gold triples;
- validity among the found gold triples: open/closed state right, and, when the saves were
  dated, valid_from / valid_to on the dates of the gold ``from`` / ``to`` results;
- entity types: each labelled entity's graph label against the corpus's ``labels``;
- junk nodes (no labelled entity, by resolution or by name) and split nodes (a second node
  for a labelled entity, e.g. "Quillmark" beside "Quillmark Software");
- the corpus's relationship questions answered through ``find`` (on ``as_of(date)`` when the
  question has one; with no date, the relations still open); in a corpus with
  ``roles_imply_employment`` a "who works at X" answer includes X's role holders, which
  ``find(predicate="works_at", object=X)`` is meant to return (the flag is reported);
- negatives found (statements that must give no relation);
- every wrong, missed and mis-dated triple, for inspection.

Only graphmem's public API is used, so the script also runs against an older checkout:
``PYTHONPATH=<old checkout> python bench/agent_log_relations.py``.

Example:
    python bench/agent_log_relations.py --corpus tests/data/agent_logs/dev.json --json out.json
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from common import REPO_ROOT, fmt, log, machine_facts, machine_line, markdown_table

import graphmem
from graphmem import CortexMemory, EntityMemory

CORPUS_DIR = REPO_ROOT / "tests" / "data" / "agent_logs"
DEFAULT_CORPORA = (CORPUS_DIR / "dev.json", CORPUS_DIR / "heldout.json")
MODES = ("facade", "entity")
CO_OCCURS = "co_occurs"
#: The corpus format's symmetric predicates (the rules file's, when it can be read, are added).
SYMMETRIC = frozenset({"met", "partnered_with", "married"})
Triple = tuple[str, str, str]


def symmetric_predicates() -> frozenset[str]:
    """The predicates that read the same both ways, from graphmem's rules when it has them."""
    try:
        from graphmem.extract.relations import load_relation_rules
    except ImportError:  # an older checkout
        return SYMMETRIC
    return SYMMETRIC | load_relation_rules().symmetric_predicates()


def normal_form(name: str) -> str:
    """A name compared loosely: case-folded, possessive and punctuation dropped, no leading
    "the" ("Brisa's" -> "brisa", "The Quillmark" -> "quillmark")."""
    text = re.sub(r"['\u2019]s?\b", "", name.casefold())
    text = re.sub(r"[^\w]+", " ", text).strip()
    return re.sub(r"^the ", "", text)


# ---------------------------------------------------------------------------------- corpus
@dataclass(frozen=True)
class Corpus:
    """An agent-log corpus as written (see tests/data/agent_logs/README.md)."""

    name: str
    results: list[dict[str, Any]]
    triples: list[dict[str, Any]]
    labels: dict[str, str]
    aliases: dict[str, list[str]]
    negatives: list[dict[str, Any]]
    questions: list[dict[str, Any]]
    symmetric: frozenset[str]
    #: "Who works at X" answers include X's role holders (see the corpus README).
    roles_imply_employment: bool = False

    @classmethod
    def load(cls, path: Path | str) -> Corpus:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(
            name=Path(path).stem,
            results=data["results"],
            triples=data["triples"],
            labels=data["labels"],
            aliases=data.get("aliases", {}),
            negatives=data.get("negatives", []),
            questions=data.get("questions", []),
            symmetric=symmetric_predicates(),
            roles_imply_employment=bool(data.get("roles_imply_employment", False)),
        )

    def key(self, subject: str, predicate: str, obj: str) -> Triple:
        """The triple as matched: a symmetric predicate's ends in a fixed order."""
        if predicate in self.symmetric:
            subject, obj = sorted((subject, obj))
        return subject, predicate, obj

    def gold(self) -> dict[Triple, dict[str, Any]]:
        return {self.key(t["subject"], t["predicate"], t["object"]): t for t in self.triples}

    def date_of(self, result_id: str | None) -> str | None:
        """The date (YYYY-MM-DD) of a result, None for None."""
        if result_id is None:
            return None
        return next(r["timestamp"][:10] for r in self.results if r["id"] == result_id)

    def forms(self) -> dict[str, str]:
        """Normal form of each labelled name, alias and unambiguous short form (a word of a
        person's name, the first word of an organisation's) -> the labelled name."""
        out = {normal_form(name): name for name in self.labels}
        for name, aliases in self.aliases.items():
            for alias in aliases:
                out.setdefault(normal_form(alias), name)
        short: dict[str, set[str]] = {}
        for name, label in self.labels.items():
            words = normal_form(name).split()
            for word in words if label == "PERSON" else words[:1] if label == "ORG" else ():
                short.setdefault(word, set()).add(name)
        for word, names in short.items():
            if len(names) == 1:
                out.setdefault(word, names.pop())
        return out


# ----------------------------------------------------------------------------------- saving
def _event_time(result: Mapping[str, Any]) -> datetime:
    return datetime.fromisoformat(result["timestamp"])


def save_through_facade(corpus: Corpus) -> tuple[Any, bool]:
    """The corpus saved through ``CortexMemory.save_task_result``: (graph, dated)."""
    memory = CortexMemory()
    dated = "timestamp" in inspect.signature(memory.save_task_result).parameters
    for r in corpus.results:
        extra = {"timestamp": _event_time(r)} if dated else {}
        memory.save_task_result(
            r["task_description"], r["result"], r["agent_role"], r["importance"], **extra
        )
    return memory.entity_memory.graph, dated


def _entity_memory_takes_timestamp() -> bool:
    """Whether ``EntityMemory.save(content, timestamp=...)`` dates the memory (a keyword it
    declares, or one its ``**kwargs`` honours: tried on a throwaway memory)."""
    parameters = inspect.signature(EntityMemory.save).parameters
    if "timestamp" in parameters:
        return True
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return False
    when = datetime(2001, 2, 3, 4, 5, 6)
    try:
        item = EntityMemory().save("A dated probe.", timestamp=when)
    except (TypeError, ValueError):  # an older checkout that rejects the keyword
        return False
    return getattr(item, "timestamp", None) == when


def save_through_entity_memory(corpus: Corpus) -> tuple[Any, bool]:
    """The results alone saved through ``EntityMemory.save``: (graph, dated)."""
    dated = _entity_memory_takes_timestamp()
    memory = EntityMemory()
    for r in corpus.results:
        if dated:
            memory.save(r["result"], timestamp=_event_time(r))
        else:
            memory.save(r["result"])
    return memory.graph, dated


SAVERS: dict[str, Callable[[Corpus], tuple[Any, bool]]] = {
    "facade": save_through_facade,
    "entity": save_through_entity_memory,
}


# ---------------------------------------------------------------------------------- scoring
@dataclass
class Score:
    """What one corpus saved one way gives."""

    corpus: str
    mode: str
    dated: bool
    seconds: float
    figures: dict[str, Any] = field(default_factory=dict)
    wrong: list[dict[str, Any]] = field(default_factory=list)
    missed: list[dict[str, Any]] = field(default_factory=list)
    invalid: list[dict[str, Any]] = field(default_factory=list)
    types: list[dict[str, Any]] = field(default_factory=list)
    junk: list[str] = field(default_factory=list)
    split: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    questions: list[dict[str, Any]] = field(default_factory=list)
    negatives: list[dict[str, Any]] = field(default_factory=list)


class NodeMap:
    """Which labelled entity each graph node is: the node a labelled name resolves to
    (``entity``). A node no labelled name resolves to, whose own name is a labelled name,
    alias or short form, is a split (``split_of``): a second node for that entity, which
    ``find`` on the entity's name does not reach."""

    def __init__(self, kg: Any, corpus: Corpus) -> None:
        self.kg = kg
        self.of_node: dict[str, str] = {}
        self.node_of: dict[str, str | None] = {}
        self.merged: dict[str, set[str]] = {}
        for name in corpus.labels:
            key = kg.resolve(name)
            self.node_of[name] = key
            if key is None:
                continue
            if key in self.of_node and self.of_node[key] != name:
                self.merged.setdefault(key, {self.of_node[key]}).add(name)
                continue
            self.of_node[key] = name
        forms = corpus.forms()
        self.split_of: dict[str, str] = {}
        for key, data in kg.graph.nodes(data=True):
            if key in self.of_node:
                continue
            names = [data.get("name", key), *data.get("aliases", ())]
            found = next((forms[f] for f in map(normal_form, names) if f in forms), None)
            if found is not None:
                self.split_of[key] = found

    def name(self, key: str) -> str:
        return str(self.kg.graph.nodes[key].get("name", key))

    def entity(self, key: str) -> str | None:
        return self.of_node.get(key)

    def entity_of_name(self, name: str) -> str | None:
        key = self.kg.resolve(name)
        return self.of_node.get(key) if key is not None else None


def _evidence(kg: Any) -> dict[int, str]:
    """relation id -> "sentence [rule]" of its first evidence, when the graph gives it."""
    try:
        edges = kg.find(evidence=True)
    except TypeError:  # an older find() without evidence
        return {}
    out = {}
    for edge in edges:
        if getattr(edge, "relation_id", None) is None or not edge.evidence:
            continue
        first = edge.evidence[0]
        sentence = " ".join(str(getattr(first, "sentence", first)).split())
        rule = getattr(first, "rule", "")
        out[edge.relation_id] = f"{sentence} [{rule}]" if rule else sentence
    return out


def _typed_edges(kg: Any) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (u, v, data)
        for u, v, data in kg.graph.edges(data=True)
        if data.get("predicate", CO_OCCURS) != CO_OCCURS
    ]


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def score(corpus: Corpus, mode: str) -> Score:
    """Save ``corpus`` the ``mode`` way into a fresh memory and score its graph."""
    started = time.perf_counter()
    kg, dated = SAVERS[mode](corpus)
    return score_graph(kg, corpus, Score(corpus.name, mode, dated, time.perf_counter() - started))


def score_graph(kg: Any, corpus: Corpus, out: Score) -> Score:
    """Fill ``out`` with the figures and listings of ``kg`` (a ``KnowledgeGraph``) against
    ``corpus``'s gold; dates are compared when ``out.dated``."""
    dated = out.dated
    nodes = NodeMap(kg, corpus)
    gold = corpus.gold()
    evidence = _evidence(kg)
    typed = _typed_edges(kg)

    found: dict[Triple, dict[str, Any]] = {}
    correct = gold_on_split = 0
    for u, v, data in typed:
        predicate = data["predicate"]
        s, o = nodes.entity(u), nodes.entity(v)
        triple = corpus.key(s, predicate, o) if s and o else None
        if triple in gold:
            correct += 1
            found.setdefault(triple, data)
            continue
        # Right but for a split end ("Brennan" beside "Aoife Brennan"): still wrong, since
        # the entity's relations do not show it, but counted apart.
        s_split, o_split = s or nodes.split_of.get(u), o or nodes.split_of.get(v)
        on_split = bool(s_split and o_split and corpus.key(s_split, predicate, o_split) in gold)
        gold_on_split += on_split
        out.wrong.append(
            {
                "subject": s or f"<{nodes.name(u)}>",
                "predicate": predicate,
                "object": o or f"<{nodes.name(v)}>",
                "valid": [data.get("valid_from"), data.get("valid_to")],
                "evidence": evidence.get(data.get("relation_id"), ""),
                "gold_but_split": on_split,
            }
        )

    state_right = dates_right = 0
    for triple, data in found.items():
        t = gold[triple]
        state = (data.get("valid_to") is None) == (t["to"] is None)
        got = [(data.get(k) or "")[:10] or None for k in ("valid_from", "valid_to")]
        want = [corpus.date_of(t["from"]), corpus.date_of(t["to"])]
        state_right += state
        dates_right += dated and got == want
        if not state or (dated and got != want):
            out.invalid.append({"triple": list(triple), "got": got, "gold": want})

    for triple, t in gold.items():
        if triple in found:
            continue
        out.missed.append({"triple": list(triple), "from": t["from"], "hint": _hint(t, nodes)})

    types_right = 0
    for name, label in corpus.labels.items():
        key = nodes.node_of[name]
        got = kg.graph.nodes[key].get("label") if key is not None else None
        types_right += got == label
        if got != label:
            out.types.append({"entity": name, "label": label, "got": got or "<not in graph>"})

    out.junk = sorted(
        f"{nodes.name(k)} ({d.get('label')})"
        for k, d in kg.graph.nodes(data=True)
        if nodes.entity(k) is None and k not in nodes.split_of
    )
    out.split = sorted(f"{nodes.name(k)} -> {e}" for k, e in nodes.split_of.items())
    out.merged = sorted(" + ".join(sorted(names)) for names in nodes.merged.values())

    verdicts = {"right": 0, "partly": 0, "wrong": 0}
    for q in corpus.questions:
        got_names = answer(kg, q, corpus.symmetric, nodes)
        want = set(q["answer"])
        verdict = "right" if got_names == want else "partly" if got_names & want else "wrong"
        verdicts[verdict] += 1
        out.questions.append(
            {"id": q["id"], "question": q["question"], "verdict": verdict, "got": sorted(got_names)}
        )

    for n in corpus.negatives:
        triple = corpus.key(n["subject"], n["predicate"], n["object"])
        for u, v, data in typed:
            s, o = nodes.entity(u), nodes.entity(v)
            if s and o and corpus.key(s, data["predicate"], o) == triple:
                out.negatives.append({**n, "evidence": evidence.get(data.get("relation_id"), "")})
                break

    out.figures = {
        "results": len(corpus.results),
        "gold_triples": len(gold),
        "typed_edges": len(typed),
        "correct_edges": correct,
        "gold_on_split_node": gold_on_split,
        "precision": _ratio(correct, len(typed)),
        "recall": _ratio(len(found), len(gold)),
        "found_gold": len(found),
        "validity_state": _ratio(state_right, len(found)),
        "validity_dates": _ratio(dates_right, len(found)) if dated else None,
        "entity_types": _ratio(types_right, len(corpus.labels)),
        "junk_nodes": len(out.junk),
        "split_nodes": len(out.split),
        "merged_nodes": len(out.merged),
        "questions": verdicts,
        "roles_imply_employment": corpus.roles_imply_employment,
        "negatives_found": len(out.negatives),
        "negatives": len(corpus.negatives),
    }
    return out


def _hint(t: Mapping[str, Any], nodes: NodeMap) -> str:
    """Why a gold triple may be missing: an end not in the graph, or the pair's other edges."""
    absent = [n for n in (t["subject"], t["object"]) if nodes.node_of.get(n) is None]
    if absent:
        return "not in graph: " + ", ".join(absent)
    u, v = nodes.node_of[t["subject"]], nodes.node_of[t["object"]]
    others = sorted(
        f"{p}{'' if a == u else ' (reversed)'}"
        for a, b in ((u, v), (v, u))
        for p in (nodes.kg.graph.get_edge_data(a, b) or {})
        if p != CO_OCCURS
    )
    return "found as " + ", ".join(others) if others else "no typed edge between them"


def answer(
    kg: Any, question: Mapping[str, Any], symmetric: Iterable[str], nodes: NodeMap
) -> set[str]:
    """The labelled entities ``find`` gives for a question (the other end of ``via``);
    names that are no labelled entity come back as ``<name>``."""
    via, when = question["via"], question.get("as_of")
    view = kg.as_of(when) if when else kg
    predicate = via["predicate"]
    ends: list[tuple[Any, str]] = []
    # (edge, which end answers): subject given -> objects; object given -> subjects.
    if "subject" in via:
        ends += [(e, "object") for e in view.find(subject=via["subject"], predicate=predicate)]
        if predicate in symmetric:
            ends += [(e, "subject") for e in view.find(object=via["subject"], predicate=predicate)]
    else:
        ends += [(e, "subject") for e in view.find(object=via["object"], predicate=predicate)]
        if predicate in symmetric:
            ends += [(e, "object") for e in view.find(subject=via["object"], predicate=predicate)]
    names = set()
    for edge, end in ends:
        if when is None and edge.valid_to is not None:
            continue  # no date: what holds now
        name = getattr(edge, end)
        names.add(nodes.entity_of_name(name) or f"<{name}>")
    return names


# --------------------------------------------------------------------------------- reporting
def _cell(x: float | None) -> str:
    """A ratio to three decimals; "-" when there was nothing to measure."""
    return "-" if x is None else fmt(x, 3)


def summary_table(scores: list[Score]) -> str:
    rows = []
    for s in scores:
        f = s.figures
        q = f["questions"]
        rows.append(
            [
                s.corpus,
                s.mode,
                "yes" if s.dated else "no",
                f["results"],
                f["gold_triples"],
                f["typed_edges"],
                _cell(f["precision"]),
                _cell(f["recall"]),
                _cell(f["validity_state"]),
                _cell(f["validity_dates"]),
                _cell(f["entity_types"]),
                f["junk_nodes"],
                f["split_nodes"],
                f"{q['right']}/{q['partly']}/{q['wrong']}",
                f"{f['negatives_found']}/{f['negatives']}",
                f"{s.seconds:.1f}",
            ]
        )
    headers = [
        "corpus",
        "saved via",
        "dated",
        "results",
        "gold",
        "typed edges",
        "precision",
        "recall",
        "validity state",
        "validity dates",
        "entity types",
        "junk nodes",
        "split nodes",
        "questions right/partly/wrong",
        "negatives found",
        "save s",
    ]
    return markdown_table(headers, rows)


def details(s: Score) -> str:
    lines = [f"### {s.corpus}, saved via {s.mode}"]

    def section(title: str, items: list[str]) -> None:
        lines.append(f"\n{title} ({len(items)}):")
        lines.extend(f"- {item}" for item in items)

    section(
        "Wrong typed edges",
        [
            f"{w['subject']} --{w['predicate']}--> {w['object']} {w['valid']}"
            + (" (gold but for a split node)" if w["gold_but_split"] else "")
            + f"  \u201c{w['evidence']}\u201d"
            for w in s.wrong
        ],
    )
    section(
        "Missed gold triples",
        [f"{' '.join(m['triple'])} ({m['from']}): {m['hint']}" for m in s.missed],
    )
    section(
        "Found with the wrong validity (got [from, to] vs gold)",
        [f"{' '.join(i['triple'])}: {i['got']} vs {i['gold']}" for i in s.invalid],
    )
    section("Entity types wrong", [f"{t['entity']}: {t['got']}, not {t['label']}" for t in s.types])
    section("Junk nodes", s.junk)
    section("Split nodes (a second node for a labelled entity)", s.split)
    section("Merged nodes (labelled entities sharing a node)", s.merged)
    section(
        "Questions",
        [
            f"{q['id']} {q['verdict']}: {q['question']} -> {', '.join(q['got']) or 'nothing'}"
            for q in s.questions
        ],
    )
    section(
        "Negatives found",
        [
            f"{n['subject']} {n['predicate']} {n['object']} ({n['result']}: {n['why']})"
            for n in s.negatives
        ],
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus",
        action="append",
        help="a corpus file (repeatable; default: dev.json and heldout.json)",
    )
    parser.add_argument("--mode", choices=(*MODES, "both"), default="both")
    parser.add_argument("--json", help="write the figures and listings to this file")
    parser.add_argument("--quiet", action="store_true", help="the summary table only")
    args = parser.parse_args(argv)

    paths = args.corpus or [str(p) for p in DEFAULT_CORPORA]
    modes = MODES if args.mode == "both" else (args.mode,)
    scores = []
    for path in paths:
        corpus = Corpus.load(path)
        for mode in modes:
            log(f"{corpus.name}: saving {len(corpus.results)} results via {mode}")
            scores.append(score(corpus, mode))
    print(machine_line())
    print(f"graphmem from {Path(graphmem.__file__).parent}\n")
    print(summary_table(scores))
    if not args.quiet:
        for s in scores:
            print("\n" + details(s))
    if args.json:
        payload = {"machine": machine_facts(), "scores": [vars(s) for s in scores]}
        Path(args.json).write_text(json.dumps(payload, indent=1, default=str), encoding="utf-8")
        log(f"wrote {args.json}")


if __name__ == "__main__":
    main()
