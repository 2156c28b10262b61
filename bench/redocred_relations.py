"""Re-DocRED typed relations: the learned extractor with gold entities and end to end.

The split (also used by scripts/train_relations.py, which imports it from here): the 500
documents of ``dev_revised.json`` in file order; documents whose index ``i`` has ``i % 5 == 4``
(100 documents: 4, 9, ..., 499) are held out; the other 400 train the model. Every figure here is
on the held-out documents only.

Matching: a Wikidata property maps to a graphmem predicate and a direction
(``models/learned_predicates.json``; P112 founded by (org, person) -> person ``founded`` org). A
predicted ``(subject, predicate, object)`` between clusters is correct when some gold triple of
the document maps to it (either order for symmetric predicates); a gold triple is recalled when
its mapped triple was predicted. Recall counts ALL gold triples of the held-out documents
(unmapped properties and pairs never in one sentence included).

1. Gold entities: each gold mention becomes a span of the parsed document (label: the spaCy
   entity that overlaps it most, else the gold type mapped to a spaCy label); the learned
   extractor scores every mention pair of a sentence; an entity pair takes the best of its
   mention pairs. P/R/F1 overall and per property.
2. End to end: one fresh ``EntityMemory`` per held-out abstract, one ``save`` of the whole text,
   with the learned extractor on and off (``GRAPHMEM_LEARNED_RELATIONS=0``). Typed precision:
   typed edges with a mapped predicate whose two ends match different gold clusters, correct when
   the mapped gold triple exists; typed linked-pair share: gold (head, tail) pairs joined by a
   typed edge (bench/redocred_entities.py's score); typed relations per abstract; ingest CPU time.

Example:
    python bench/redocred_relations.py --data ../shared/data/redocred/dev_revised.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    DEFAULT_REDOCRED_DEV,
    log,
    machine_line,
    markdown_table,
    require_file,
    write_results,
)
from redocred_entities import (
    EntityDoc,
    GraphmemEntitySystem,
    load_redocred_docs,
    normalize_name,
    score_system,
)
from spacy.tokens import Doc, Span

from graphmem.extract.learned import PredicateMap, load_predicate_map

HELD_OUT_EVERY = 5
#: spaCy-style labels for gold types with no overlapping spaCy entity.
GOLD_TO_SPACY = {
    "PER": "PERSON",
    "ORG": "ORG",
    "LOC": "GPE",
    "TIME": "DATE",
    "NUM": "CARDINAL",
    "MISC": "MISC",
}


@dataclass
class RelationDoc:
    """A Re-DocRED document with its gold triples ``(head cluster, property, tail cluster)``."""

    entity: EntityDoc
    triples: list[tuple[int, str, int, tuple[int, ...]]]  # (h, property, t, evidence sentences)


#: The fold the shipped model holds out; folds 0-3 give the cross-validated estimate
#: (scripts/train_relations.py --fold K, then this script's --fold K on that model).
HELD_OUT_FOLD = HELD_OUT_EVERY - 1


def is_held_out(index: int, fold: int = HELD_OUT_FOLD) -> bool:
    """The split: document ``index`` (file order) is held out when ``index % 5 == fold``
    (4 for the shipped model)."""
    return index % HELD_OUT_EVERY == fold


def load_relation_docs(
    path: Path | str, fold: int = HELD_OUT_FOLD
) -> tuple[list[RelationDoc], list[RelationDoc]]:
    """``(training documents, held-out documents)`` of ``dev_revised.json``."""
    raw = json.loads(require_file(path, "redocred").read_text(encoding="utf-8"))
    docs = [
        RelationDoc(
            e, [(lab["h"], lab["r"], lab["t"], tuple(lab["evidence"])) for lab in d["labels"]]
        )
        for e, d in zip(load_redocred_docs(path), raw, strict=True)
    ]
    return (
        [d for i, d in enumerate(docs) if not is_held_out(i, fold)],
        [d for i, d in enumerate(docs) if is_held_out(i, fold)],
    )


def parse(docs: Sequence[RelationDoc]) -> list[Doc]:
    """Each document's text through graphmem's own pipeline, in relation mode (as on save)."""
    from graphmem.extract.pipeline import get_analyzer

    return get_analyzer().analyse([d.entity.text for d in docs], relations=True)


def gold_spans(doc: RelationDoc, parsed: Doc) -> list[tuple[int, Span]]:
    """``(cluster index, span)`` for each gold mention, labelled as at inference time."""
    out = []
    for cluster in doc.entity.clusters:
        for m in cluster.mentions:
            span = parsed.char_span(*m.char_span, alignment_mode="expand")
            if span is None or not len(span):
                continue
            overlap = Counter(
                {
                    e.label_: min(e.end, span.end) - max(e.start, span.start)
                    for e in parsed.ents
                    if e.start < span.end and span.start < e.end
                }
            )
            label = overlap.most_common(1)[0][0] if overlap else GOLD_TO_SPACY[cluster.type]
            out.append((cluster.index, Span(parsed, span.start, span.end, label=label)))
    return out


def mapped_triple(pmap: PredicateMap, h: int, prop: str, t: int) -> tuple[int, str, int] | None:
    """The graphmem triple a gold triple stands for (symmetric ones in sorted order)."""
    if prop not in pmap.properties:
        return None
    predicate, inverse = pmap.properties[prop]
    s, o = (t, h) if inverse else (h, t)
    if predicate in pmap.symmetric_predicates():
        s, o = min(s, o), max(s, o)
    return s, predicate, o


# ------------------------------------------------------------------------ gold-entity scoring


def predicted_cluster_triples(
    extractor: Any, parsed: Doc, spans: Sequence[tuple[int, Span]], pmap: PredicateMap
) -> dict[tuple[int, str, int], float]:
    """Entity-level triples of the learned extractor: best confidence over mention pairs."""
    cluster_of = {(s.start, s.end): c for c, s in spans}
    out: dict[tuple[int, str, int], float] = {}
    for cand in extractor.extract(parsed, [s for _, s in spans]):
        h = cluster_of[(cand.subject.start, cand.subject.end)]
        t = cluster_of[(cand.object.start, cand.object.end)]
        if h == t:
            continue
        if cand.predicate in pmap.symmetric_predicates():
            h, t = min(h, t), max(h, t)
        key = (h, cand.predicate, t)
        out[key] = max(out.get(key, 0.0), cand.confidence)
    return out


def prf(ok_pred: int, n_pred: int, ok_gold: int, n_gold: int) -> dict[str, float]:
    p = ok_pred / n_pred if n_pred else 0.0
    r = ok_gold / n_gold if n_gold else 0.0
    return {
        "P": p,
        "R": r,
        "F1": 2 * p * r / (p + r) if p + r else 0.0,
        "n_pred": n_pred,
        "n_gold": n_gold,
    }


def score_gold_entities(
    docs: Sequence[RelationDoc], parsed: Sequence[Doc], extractor: Any, pmap: PredicateMap
) -> dict[str, Any]:
    """Typed-triple P/R/F1 with gold entities, overall, per predicate (P) and property (R)."""
    n_pred = ok_pred = n_gold = ok_gold = 0
    pred_by: Counter[str] = Counter()
    ok_by_pred: Counter[str] = Counter()
    gold_by: Counter[str] = Counter()
    ok_by_prop: Counter[str] = Counter()
    for doc, pdoc in zip(docs, parsed, strict=True):
        predicted = predicted_cluster_triples(extractor, pdoc, gold_spans(doc, pdoc), pmap)
        gold_mapped = {mapped_triple(pmap, h, r, t) for h, r, t, _ in doc.triples} - {None}
        for key in predicted:
            n_pred += 1
            pred_by[key[1]] += 1
            if key in gold_mapped:
                ok_pred += 1
                ok_by_pred[key[1]] += 1
        for h, r, t, _ in doc.triples:
            n_gold += 1
            gold_by[r] += 1
            if mapped_triple(pmap, h, r, t) in predicted:
                ok_gold += 1
                ok_by_prop[r] += 1
    return {
        "overall": prf(ok_pred, n_pred, ok_gold, n_gold),
        "precision_by_predicate": {
            p: {"P": ok_by_pred[p] / n, "n_pred": n} for p, n in pred_by.most_common()
        },
        "recall_by_property": {
            r: {"R": ok_by_prop[r] / n, "n_gold": n} for r, n in gold_by.most_common()
        },
    }


# ------------------------------------------------------------------------ end to end


def typed_precision(
    docs: Sequence[RelationDoc], graphs: Sequence[Any], pmap: PredicateMap
) -> dict[str, float]:
    """Typed edges of mapped predicates between two gold clusters: share that is a gold triple."""
    judged = ok = unjudged = 0
    for doc, graph in zip(docs, graphs, strict=True):
        norm: dict[str, set[int]] = defaultdict(set)
        for c in doc.entity.clusters:
            for m in c.mentions:
                norm[normalize_name(m.name)].add(c.index)

        def clusters(name: str, forms: Iterable[str], norm: dict[str, set[int]] = norm) -> set[int]:
            return set().union(*(norm.get(normalize_name(f), set()) for f in {name, *forms}))

        gold = {mapped_triple(pmap, h, r, t) for h, r, t, _ in doc.triples} - {None}
        for s, pred, o, _unit in graph.edges:
            if pred == "co_occurs":
                continue
            hs = clusters(s, graph.entities.get(s, []))
            ts = clusters(o, graph.entities.get(o, []))
            pairs = {(h, t) for h in hs for t in ts if h != t}
            if pred not in pmap.predicates or not pairs:
                unjudged += 1
                continue
            judged += 1
            sym = pred in pmap.symmetric_predicates()
            ok += any(
                ((min(h, t), pred, max(h, t)) if sym else (h, pred, t)) in gold for h, t in pairs
            )
    return {
        "typed_precision": ok / judged if judged else 0.0,
        "judged": judged,
        "correct": ok,
        "unjudged": unjudged,
    }


def end_to_end(
    docs: Sequence[RelationDoc], learned: bool, pmap: PredicateMap, document: bool = True
) -> dict[str, Any]:
    """Ingest each abstract into a fresh EntityMemory; score typed edges; time the CPU."""

    os.environ["GRAPHMEM_LEARNED_RELATIONS"] = "1" if learned else "0"
    os.environ["GRAPHMEM_LEARNED_DOCUMENT"] = "1" if document else "0"
    entity_docs = [d.entity for d in docs]
    cpu = time.process_time()
    run = GraphmemEntitySystem().run(entity_docs, "doc")
    cpu = time.process_time() - cpu
    scores = score_system(entity_docs, run, lambda p: p == "co_occurs")
    return {
        "learned": learned,
        "document": learned and document,
        "cpu_seconds": cpu,
        "wall_seconds": run.seconds,
        "typed_per_abstract": scores["edges_per_doc"]["typed"],
        "typed_linked_pair_share": scores["linked_pair_recall"]["typed_all"] / 100,
        "any_linked_pair_share": scores["linked_pair_recall"]["any_all"] / 100,
        **typed_precision(docs, run.graphs, pmap),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", default=str(DEFAULT_REDOCRED_DEV), help="path to dev_revised.json")
    ap.add_argument("--skip-end-to-end", action="store_true")
    ap.add_argument("--out", default="redocred_relations", help="results file stem")
    ap.add_argument(
        "--fold",
        type=int,
        choices=range(HELD_OUT_EVERY),
        default=HELD_OUT_FOLD,
        help="held-out fold (index %% 5); other than 4 only with a model trained without it",
    )
    args = ap.parse_args(argv)

    from graphmem.extract.learned import (
        InferenceRules,
        LearnedRelationExtractor,
        load_learned_model,
    )

    pmap = load_predicate_map()
    _, held_out = load_relation_docs(args.data, args.fold)
    log(f"held-out: {len(held_out)} docs, {sum(len(d.triples) for d in held_out)} gold triples")
    parsed = parse(held_out)
    gold = score_gold_entities(held_out, parsed, LearnedRelationExtractor(), pmap)
    # Ablation, stage by stage: the first stage alone, then with the inference rules.
    model = load_learned_model()
    direct_only = replace(model, predicates=replace(pmap, inference=InferenceRules((), ())))
    no_inference = score_gold_entities(
        held_out, parsed, LearnedRelationExtractor(direct_only, document_stage=False), pmap
    )["overall"]
    no_document = score_gold_entities(
        held_out, parsed, LearnedRelationExtractor(document_stage=False), pmap
    )["overall"]
    payload: dict[str, Any] = {"machine": machine_line(), "data": args.data, "gold_entities": gold}
    print(f"## Typed relations, held-out docs ({len(held_out)})\n\n{machine_line()}\n")
    stages = [
        ("first stage (mention pairs)", no_inference),
        ("+ inference rules", no_document),
        ("+ document stage (all)", gold["overall"]),
    ]
    rows = [
        [name, f"{s['P']:.3f}", f"{s['R']:.3f}", f"{s['F1']:.3f}", s["n_pred"]]
        for name, s in stages
    ]
    print(f"Gold entities ({gold['overall']['n_gold']} gold triples):\n")
    print(markdown_table(["stages", "P", "R", "F1", "predicted"], rows) + "\n")
    payload["gold_entities_no_inference"] = no_inference
    payload["gold_entities_no_document"] = no_document
    rows = [
        [r, v["n_gold"], f"{v['R']:.3f}"] for r, v in list(gold["recall_by_property"].items())[:15]
    ]
    print(markdown_table(["property", "gold", "R"], rows) + "\n")
    rows = [[p, v["n_pred"], f"{v['P']:.3f}"] for p, v in gold["precision_by_predicate"].items()]
    print(markdown_table(["predicate", "predicted", "P"], rows) + "\n")
    if not args.skip_end_to_end:
        runs = [
            end_to_end(held_out, learned, pmap, document)
            for learned, document in ((False, False), (True, False), (True, True))
        ]
        payload["end_to_end"] = runs
        rows = [
            [
                "on, document stage" if r["document"] else "on" if r["learned"] else "off",
                f"{r['typed_precision']:.3f}",
                f"{r['judged']}",
                f"{100 * r['typed_linked_pair_share']:.1f}",
                f"{r['typed_per_abstract']:.2f}",
                f"{r['cpu_seconds']:.1f}",
            ]
            for r in runs
        ]
        print(
            markdown_table(
                [
                    "learned",
                    "typed P",
                    "judged edges",
                    "typed linked pairs %",
                    "typed / abstract",
                    "ingest CPU s",
                ],
                rows,
            )
        )
        off, first, on = runs
        print(
            f"\nIngest CPU time vs learned off: +{100 * (on['cpu_seconds'] / off['cpu_seconds'] - 1):.1f}% "
            f"(without the document stage +{100 * (first['cpu_seconds'] / off['cpu_seconds'] - 1):.1f}%)"
        )
    log(f"results: {write_results(args.out, payload)}")


if __name__ == "__main__":
    main()
