"""Re-DocRED entity extraction and graph linking quality (text -> graph).

For each of the 500 dev documents (``dev_revised.json``) a fresh entity memory receives the
document one sentence at a time (``--unit sentence``, the default: memories are short) or whole
(``--unit doc``). Sentence text = its tokens joined by single spaces; the document text = the
sentences joined by single spaces (character offsets of every gold mention are kept).

Metrics (micro-averaged over documents):

- Entity precision / recall / F1. Names are normalised (case-folded, possessive 's dropped,
  punctuation -> space, whitespace collapsed, a leading "the" dropped). A system entity (its name
  or any surface form the adapter reports for it) *matches* a gold cluster when its normalised
  form equals the normalised form of any mention of that cluster. Recall = matched gold clusters /
  gold clusters; precision = system entities matching some gold cluster / system entities (unique
  normalised names per document). Reported with all gold clusters, and without TIME and NUM
  clusters (graphmem keeps dates and numbers as attributes, not nodes): there, system entities
  that match only TIME/NUM clusters are left out of the precision denominator.
- Linked-pair recall: the share of gold relation pairs (unordered {head, tail} cluster pairs,
  de-duplicated over relation types) for which some system entity matching the head and a
  different one matching the tail are joined by a graph edge (any predicate, either direction).
  Reported for all edges and for typed edges only (co-occurrence excluded).
- Linked-pair precision: of the system edges whose two ends each match some gold cluster
  (different clusters), the share that join a gold related pair. A graph that joins everything
  gets full recall and low precision here.
- Isolated entities: the share of system entities on no edge at all (micro-averaged).

A random sample (fixed seed) of typed relations of one system, with the sentence whose save
produced each, goes to ``bench/results/relation_sample.jsonl`` plus a markdown table template for
hand-checking (``--sample-md``).

Systems: ``graphmem`` (``graphmem.EntityMemory``: ``save``, ``entities``, ``relationships``) and
``calute`` (calute 0.1.5 ``EntityMemory``: capitalised-word regex ``_extract_entities`` and four
one-word relation regexes, run in its own venv via bench/calute_worker.py).

Example:
    python bench/redocred_entities.py --systems graphmem,calute --sample-system graphmem
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from common import (
    DEFAULT_REDOCRED_DEV,
    RESULTS_DIR,
    CaluteWorker,
    log,
    machine_facts,
    machine_line,
    markdown_table,
    require_file,
    write_results,
)

ALL_SYSTEMS = ("graphmem", "calute")
ATTRIBUTE_TYPES = frozenset({"TIME", "NUM"})
DEFAULT_COOCCURRENCE = "co_occurs,co_occurrence,cooccurs,co_occurs_with,mentioned_with"


# ------------------------------------------------------------------------------------------
# Data
# ------------------------------------------------------------------------------------------


@dataclass
class GoldMention:
    name: str
    sent_id: int
    char_span: tuple[int, int]  # in the document text


@dataclass
class GoldCluster:
    index: int
    type: str
    mentions: list[GoldMention]


@dataclass
class EntityDoc:
    doc_id: int
    title: str
    sentences: list[str]
    text: str
    clusters: list[GoldCluster]
    pairs: set[frozenset[int]]  # unordered gold relation pairs (cluster indices)


def load_redocred_docs(path: Path | str, limit: int = 0) -> list[EntityDoc]:
    """Load dev_revised.json into documents with char-offset mentions and gold pairs."""
    data = json.loads(require_file(path, "redocred").read_text(encoding="utf-8"))
    docs = []
    for di, d in enumerate(data[: limit or None]):
        sentences, tok_starts, sent_starts = [], [], []
        offset = 0
        for toks in d["sents"]:
            sent_starts.append(offset)
            starts, pos = [], 0
            for t in toks:
                starts.append(offset + pos)
                pos += len(t) + 1
            tok_starts.append(starts)
            s = " ".join(toks)
            sentences.append(s)
            offset += len(s) + 1
        text = " ".join(sentences)
        clusters = []
        for ci, vs in enumerate(d["vertexSet"]):
            mentions = []
            for m in vs:
                sid, (a, b) = m["sent_id"], m["pos"]
                start = tok_starts[sid][a]
                end = tok_starts[sid][b - 1] + len(d["sents"][sid][b - 1])
                mentions.append(GoldMention(m["name"], sid, (start, end)))
            types = Counter(m["type"] for m in vs)
            clusters.append(GoldCluster(ci, types.most_common(1)[0][0], mentions))
        pairs = {frozenset((lab["h"], lab["t"])) for lab in d["labels"] if lab["h"] != lab["t"]}
        docs.append(EntityDoc(di, d["title"], sentences, text, clusters, pairs))
    return docs


_POSSESSIVE = re.compile(r"['’]s\b")
_WORD = re.compile(r"\w+")


def normalize_name(name: str) -> str:
    """Case-fold, drop possessive 's and punctuation, collapse spaces, drop a leading "the"."""
    words = _WORD.findall(_POSSESSIVE.sub("", name.casefold()))
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    return " ".join(words)


# ------------------------------------------------------------------------------------------
# Systems
# ------------------------------------------------------------------------------------------


@dataclass
class DocGraph:
    """What a system built from one document."""

    entities: dict[str, list[str]]  # entity name -> surface forms (the name included)
    edges: list[tuple[str, str, str, int | None]]  # (subject, predicate, object, unit index)


@dataclass
class SystemRun:
    name: str
    graphs: list[DocGraph] = field(default_factory=list)
    seconds: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)


class EntityGraphSystem(Protocol):
    name: str

    def run(self, docs: Sequence[EntityDoc], unit: str) -> SystemRun: ...


def doc_units(doc: EntityDoc, unit: str) -> list[str]:
    return list(doc.sentences) if unit == "sentence" else [doc.text]


def relationship_triples(relationships: Any) -> Counter[tuple[str, str, str]]:
    """``{predicate: [(subject, object), ...]}`` -> counts of (subject, predicate, object)."""
    out: Counter[tuple[str, str, str]] = Counter()
    for pred, pairs in dict(relationships).items():
        for s, o in pairs:
            out[(str(s), str(pred), str(o))] += 1
    return out


class GraphmemEntitySystem:
    """graphmem.EntityMemory: one fresh memory per document, one ``save`` per unit.

    Needs ``EntityMemory().save(text)``, ``.entities`` (name -> info) and ``.relationships``
    (predicate -> list of (subject, object)). Optional: ``get_entity_info(name)["aliases"]``
    (surface forms resolved to the entity), used for matching when present.
    """

    name = "graphmem"

    def __init__(self) -> None:
        from graphmem import EntityMemory

        self._cls = EntityMemory

    def run(self, docs: Sequence[EntityDoc], unit: str) -> SystemRun:
        out = SystemRun(self.name)
        t0 = time.perf_counter()
        for i, doc in enumerate(docs):
            em = self._cls()
            seen: Counter[tuple[str, str, str]] = Counter()
            edges: list[tuple[str, str, str, int | None]] = []
            for ui, text in enumerate(doc_units(doc, unit)):
                em.save(text)
                now = relationship_triples(em.relationships)
                for key, c in now.items():
                    if c > seen.get(key, 0):
                        edges.append((key[0], key[1], key[2], ui))
                seen = now
            entities: dict[str, list[str]] = {}
            for name in list(em.entities):
                forms = [str(name)]
                info_fn = getattr(em, "get_entity_info", None)
                if callable(info_fn):
                    info = info_fn(name) or {}
                    forms += [str(a) for a in info.get("aliases", []) or []]
                entities[str(name)] = forms
            out.graphs.append(DocGraph(entities, edges))
            close = getattr(em, "close", None)
            if callable(close):
                close()
            if (i + 1) % 100 == 0:
                log(f"graphmem: {i + 1}/{len(docs)} docs")
        out.seconds = time.perf_counter() - t0
        return out


class CaluteEntitySystem:
    """calute 0.1.5 EntityMemory as shipped, in its venv worker."""

    name = "calute"

    def __init__(self, venv: str | None = None) -> None:
        self.worker = CaluteWorker(venv) if venv else CaluteWorker()

    def run(self, docs: Sequence[EntityDoc], unit: str) -> SystemRun:
        out = SystemRun(self.name, info=dict(self.worker.info))
        for start in range(0, len(docs), 100):
            batch = docs[start : start + 100]
            reply = self.worker.call(
                "entity_docs",
                docs=[{"doc_id": d.doc_id, "units": doc_units(d, unit)} for d in batch],
            )
            out.seconds += reply["seconds"]
            for g in reply["docs"]:
                out.graphs.append(
                    DocGraph({e: [e] for e in g["entities"]}, [tuple(e) for e in g["edges"]])
                )
            log(f"calute: {start + len(batch)}/{len(docs)} docs")
        self.worker.close()
        return out


# ------------------------------------------------------------------------------------------
# Scoring
# ------------------------------------------------------------------------------------------


def prf(tp_p: int, n_pred: int, tp_r: int, n_gold: int) -> dict[str, float]:
    p = tp_p / n_pred if n_pred else 0.0
    r = tp_r / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"P": 100 * p, "R": 100 * r, "F1": 100 * f, "n_pred": n_pred, "n_gold": n_gold}


def score_system(docs: Sequence[EntityDoc], run: SystemRun, is_cooccurrence: Any) -> dict[str, Any]:
    """Entity P/R/F1 (with and without TIME/NUM), per-type recall, linked-pair recall/precision."""
    counts: Counter[str] = Counter()
    type_found: Counter[str] = Counter()
    type_total: Counter[str] = Counter()
    for doc, graph in zip(docs, run.graphs, strict=True):
        norm_to_clusters: dict[str, set[int]] = defaultdict(set)
        for c in doc.clusters:
            for m in c.mentions:
                n = normalize_name(m.name)
                if n:
                    norm_to_clusters[n].add(c.index)
        ctype = {c.index: c.type for c in doc.clusters}
        attr = {i for i, t in ctype.items() if t in ATTRIBUTE_TYPES}

        # entity -> matched clusters (via its name or any reported surface form)
        ent_match: dict[str, set[int]] = {}
        unique_norm: dict[str, set[int]] = {}
        for name, forms in graph.entities.items():
            matched: set[int] = set()
            for f in {name, *forms}:
                matched |= norm_to_clusters.get(normalize_name(f), set())
            ent_match[name] = matched
            n = normalize_name(name)
            if n:
                unique_norm.setdefault(n, set()).update(matched)
        found = set().union(*ent_match.values()) if ent_match else set()

        counts["pred_all"] += len(unique_norm)
        counts["tp_pred_all"] += sum(1 for m in unique_norm.values() if m)
        counts["gold_all"] += len(doc.clusters)
        counts["tp_gold_all"] += len(found)
        kept = [m for m in unique_norm.values() if not (m and m <= attr)]
        counts["pred_noattr"] += len(kept)
        counts["tp_pred_noattr"] += sum(1 for m in kept if m - attr)
        counts["gold_noattr"] += len(doc.clusters) - len(attr)
        counts["tp_gold_noattr"] += len(found - attr)
        for c in doc.clusters:
            type_total[c.type] += 1
            type_found[c.type] += c.index in found
        ends = {e[0] for e in graph.edges} | {e[2] for e in graph.edges}
        counts["entities"] += len(graph.entities)
        counts["isolated"] += sum(1 for name in graph.entities if name not in ends)

        # linked pairs
        for kind in ("any", "typed"):
            linked: set[frozenset[int]] = set()
            edge_ok = edge_judged = 0
            for s, pred, o, _ui in graph.edges:
                if kind == "typed" and is_cooccurrence(pred):
                    continue
                ms, mo = ent_match.get(s, set()), ent_match.get(o, set())
                cand = {frozenset((a, b)) for a in ms for b in mo if a != b}
                linked |= cand & doc.pairs
                if cand:
                    edge_judged += 1
                    edge_ok += bool(cand & doc.pairs)
            for suffix, pairs in (
                ("all", doc.pairs),
                ("noattr", {p for p in doc.pairs if not (p & attr)}),
            ):
                if kind == "any":  # the gold pairs once per document, not once per edge kind
                    counts[f"pairs_{suffix}"] += len(pairs)
                counts[f"linked_{kind}_{suffix}"] += len(linked & pairs)
            counts[f"edges_{kind}"] += sum(
                1 for e in graph.edges if kind == "any" or not is_cooccurrence(e[1])
            )
            counts[f"edges_judged_{kind}"] += edge_judged
            counts[f"edges_ok_{kind}"] += edge_ok

    def pct(a: str, b: str) -> float:
        return 100.0 * counts[a] / counts[b] if counts[b] else 0.0

    return {
        "entities_all": prf(
            counts["tp_pred_all"], counts["pred_all"], counts["tp_gold_all"], counts["gold_all"]
        ),
        "entities_no_time_num": prf(
            counts["tp_pred_noattr"],
            counts["pred_noattr"],
            counts["tp_gold_noattr"],
            counts["gold_noattr"],
        ),
        "recall_by_type": {t: 100.0 * type_found[t] / type_total[t] for t in sorted(type_total)},
        "linked_pair_recall": {
            "any_all": pct("linked_any_all", "pairs_all"),
            "any_no_time_num": pct("linked_any_noattr", "pairs_noattr"),
            "typed_all": pct("linked_typed_all", "pairs_all"),
            "typed_no_time_num": pct("linked_typed_noattr", "pairs_noattr"),
        },
        "linked_pair_precision": {
            "any": pct("edges_ok_any", "edges_judged_any"),
            "typed": pct("edges_ok_typed", "edges_judged_typed"),
        },
        "edges_per_doc": {
            "any": counts["edges_any"] / max(1, len(docs)),
            "typed": counts["edges_typed"] / max(1, len(docs)),
        },
        "isolated_entities_pct": pct("isolated", "entities"),
        "counts": dict(counts),
        "seconds": run.seconds,
    }


# ------------------------------------------------------------------------------------------
# Relation sample for hand-checking
# ------------------------------------------------------------------------------------------


def relation_sample(
    docs: Sequence[EntityDoc], run: SystemRun, unit: str, is_cooccurrence: Any, n: int, seed: int
) -> list[dict[str, Any]]:
    pool = []
    for doc, graph in zip(docs, run.graphs, strict=True):
        units = doc_units(doc, unit)
        for s, pred, o, ui in graph.edges:
            if is_cooccurrence(pred):
                continue
            pool.append(
                {
                    "system": run.name,
                    "doc": doc.doc_id,
                    "title": doc.title,
                    "subject": s,
                    "predicate": pred,
                    "object": o,
                    "unit": ui,
                    "evidence": units[ui] if ui is not None and 0 <= ui < len(units) else None,
                }
            )
    rng = random.Random(seed)
    picked = sorted(rng.sample(pool, min(n, len(pool))), key=lambda r: (r["doc"], r["unit"] or 0))
    for r in picked:
        r["pool"] = len(pool)
    return picked


def sample_markdown(rows: Sequence[dict[str, Any]], system: str, seed: int) -> str:
    head = (
        f"# Relation sample for hand-checking ({system}, seed {seed}, {len(rows)} typed relations)\n"
        "\nMark `correct` yes/no: yes when the evidence sentence states that relation between "
        "the two entities (direction included).\n\n"
    )
    lines = [
        "| # | doc | subject | predicate | object | evidence | correct (yes/no) |",
        "| ---: | ---: | --- | --- | --- | --- | --- |",
    ]
    for i, r in enumerate(rows, 1):
        ev = (r["evidence"] or "").replace("|", "\\|")
        cells = [str(i), str(r["doc"]), r["subject"], r["predicate"], r["object"], ev, ""]
        lines.append(
            "| " + " | ".join(c.replace("|", "\\|") if c is not ev else c for c in cells) + " |"
        )
    return head + "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", default=str(DEFAULT_REDOCRED_DEV), help="path to dev_revised.json")
    ap.add_argument(
        "--systems",
        default=",".join(ALL_SYSTEMS),
        help=f"comma-separated subset of {','.join(ALL_SYSTEMS)}",
    )
    ap.add_argument(
        "--unit",
        choices=("sentence", "doc"),
        default="sentence",
        help="save one memory per sentence (default) or per document",
    )
    ap.add_argument("--limit", type=int, default=0, help="first N documents only (0 = all 500)")
    ap.add_argument(
        "--cooccurrence-predicates",
        default=DEFAULT_COOCCURRENCE,
        help="predicates counted as co-occurrence, not typed relations",
    )
    ap.add_argument(
        "--sample-system",
        default="",
        help="system whose typed relations are sampled (default: graphmem if it ran, else calute)",
    )
    ap.add_argument("--sample-size", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sample-jsonl", default=str(RESULTS_DIR / "relation_sample.jsonl"))
    ap.add_argument(
        "--sample-md",
        default=str(RESULTS_DIR / "relation_sample.md"),
        help="markdown template for hand-checking (copy to docs/ when filled in)",
    )
    ap.add_argument("--calute-venv", default=None)
    ap.add_argument("--out", default="redocred_entities", help="results file stem")
    args = ap.parse_args(argv)

    cooc = {p.strip() for p in args.cooccurrence_predicates.split(",") if p.strip()}

    def is_cooccurrence(pred: str) -> bool:
        return pred in cooc

    docs = load_redocred_docs(args.data, args.limit)
    log(
        f"Re-DocRED: {len(docs)} docs, {sum(len(d.clusters) for d in docs)} gold clusters, "
        f"{sum(len(d.pairs) for d in docs)} gold relation pairs; unit = {args.unit}"
    )

    runs: dict[str, SystemRun] = {}
    for name in [s.strip() for s in args.systems.split(",") if s.strip()]:
        system: EntityGraphSystem
        if name == "graphmem":
            try:
                system = GraphmemEntitySystem()
            except ImportError as exc:
                log(f"graphmem skipped: cannot import EntityMemory from graphmem yet ({exc})")
                continue
        elif name == "calute":
            system = CaluteEntitySystem(args.calute_venv)
        else:
            raise SystemExit(f"unknown system {name!r}; choose from {', '.join(ALL_SYSTEMS)}")
        log(f"running {name}")
        runs[name] = system.run(docs, args.unit)

    scores = {name: score_system(docs, run, is_cooccurrence) for name, run in runs.items()}

    print(
        f"## Re-DocRED entities and links ({args.data}, unit = {args.unit})\n\n{machine_line()}\n"
    )
    rows = []
    for name, s in scores.items():
        a, b = s["entities_all"], s["entities_no_time_num"]
        lp, pp = s["linked_pair_recall"], s["linked_pair_precision"]
        rows.append(
            [
                name,
                a["P"],
                a["R"],
                a["F1"],
                b["P"],
                b["R"],
                b["F1"],
                lp["any_no_time_num"],
                lp["typed_no_time_num"],
                pp["any"],
                pp["typed"],
                s["edges_per_doc"]["any"],
                s["edges_per_doc"]["typed"],
                s["isolated_entities_pct"],
                s["seconds"],
            ]
        )
    print(
        markdown_table(
            [
                "system",
                "P",
                "R",
                "F1",
                "P -T/N",
                "R -T/N",
                "F1 -T/N",
                "linked R (any)",
                "linked R (typed)",
                "edge P (any)",
                "edge P (typed)",
                "edges/doc",
                "typed/doc",
                "isolated %",
                "s",
            ],
            rows,
        )
    )
    print(
        "\n-T/N: gold TIME and NUM clusters excluded. Linked R: share of gold {head, tail} "
        "pairs (TIME/NUM excluded) joined by an edge. Edge P: share of edges between matched "
        "gold clusters that join a gold pair. Isolated: share of system entities on no edge.\n"
    )
    types = sorted({t for s in scores.values() for t in s["recall_by_type"]})
    print(
        markdown_table(
            ["system"] + [f"R {t}" for t in types],
            [[n] + [s["recall_by_type"].get(t, 0.0) for t in types] for n, s in scores.items()],
        )
    )

    sample_name = args.sample_system or ("graphmem" if "graphmem" in runs else "calute")
    sample: list[dict[str, Any]] = []
    pool_size = 0
    if sample_name in runs:
        sample = relation_sample(
            docs, runs[sample_name], args.unit, is_cooccurrence, args.sample_size, args.seed
        )
        pool_size = sample[0]["pool"] if sample else 0
        Path(args.sample_jsonl).parent.mkdir(parents=True, exist_ok=True)
        with open(args.sample_jsonl, "w", encoding="utf-8") as fh:
            for r in sample:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
        Path(args.sample_md).write_text(
            sample_markdown(sample, sample_name, args.seed), encoding="utf-8"
        )
        log(
            f"relation sample: {len(sample)} of {pool_size} typed relations of {sample_name} -> "
            f"{args.sample_jsonl}, {args.sample_md}"
        )

    path = write_results(
        args.out,
        {
            "benchmark": "redocred_entities",
            "data": args.data,
            "unit": args.unit,
            "machine": machine_facts(),
            "cooccurrence_predicates": sorted(cooc),
            "info": {n: r.info for n, r in runs.items()},
            "scores": scores,
            "relation_sample": {
                "system": sample_name,
                "n": len(sample),
                "pool": pool_size,
                "seed": args.seed,
            },
        },
    )
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
