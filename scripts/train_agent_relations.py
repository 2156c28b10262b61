"""Train the agent-text relation model (``models/agent_relations.*``) from the agent corpus.

The model types entity pairs of agent text (``works_at``, ``visited``, a role at an
organisation ...), beside the dependency rules and the encyclopaedia-trained model
(:mod:`graphmem.extract.learned`). It learns from the **train** styles of
``tests/data/agent_corpus`` (``bench/agent_corpus.py``); its regularisation and class
thresholds are chosen on the **dev** styles; the test styles are never read here.

What it sees is what graphmem gives the relation source at run time: each style's records
are saved through ``CortexMemory.save_task_result`` into a fresh memory whose relation source
records every ``(doc, entity spans)`` it is handed. A span is matched to a gold entity by
its name, an alias, or a unique first or last word; a pair of spans is labelled with every gold
triple between their entities (``works_at>``: the first span is the subject, ``works_at<``:
the second; every ``{role}_of`` is the one class ``role``), else none.

Features are those of :meth:`graphmem.extract.learned.AgentCandidate.features`; the model is
one logistic regression per class (one vs the rest: a pair can be both ``works_at>`` and
``role>``; scikit-learn's ``lbfgs``), stored as data
(JSON + ``.npy``, hashed in ``models/learned_relations_manifest.json``) and applied with
numpy at run time.

Usage (about two minutes on 2 cores):
    python scripts/train_agent_relations.py            # writes models/agent_relations.*
    python scripts/train_agent_relations.py --report   # dev figures only, writes nothing
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from agent_corpus import PREDICATES, Style, load_styles  # noqa: E402

from graphmem import CortexMemory  # noqa: E402
from graphmem.extract.learned import (  # noqa: E402
    AGENT_CLASSES,
    AGENT_FILES,
    ROLE_CLASS,
    agent_candidates,
)
from graphmem.extract.token_table import TokenTable  # noqa: E402

MODELS = ROOT / "models"
SYMMETRIC = frozenset({"met", "partnered_with", "married"})
MANIFEST = MODELS / "learned_relations_manifest.json"
#: Regularisation strengths tried (dev styles choose).
C_GRID = (1.0, 3.0, 10.0)
#: The least precision a class threshold must reach on dev to be kept below 0.5.
MIN_PRECISION = 0.8


@dataclass
class Pair:
    features: list[str]
    #: The classes the pair has (a pair can be both ``works_at>`` and ``role>``); none: NA.
    labels: list[str]
    style: str


class _Recorder:
    """A relation source that records what it is given and answers as the real one."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.calls: list[tuple[Any, list[Any]]] = []

    def extract(self, doc: Any, entities: Any = None, speaker: Any = None) -> Any:
        self.calls.append((doc, list(entities or [])))
        return self.real.extract(doc, entities, speaker=speaker)


def _normal(name: str) -> str:
    return re.sub(r"[^\w]+", " ", name.lower()).strip()


def _forms(record: Mapping[str, Any]) -> dict[str, str]:
    """Normal form of each name, alias and unique short form of a record -> entity name."""
    out: dict[str, str] = {}
    short: dict[str, set[str]] = {}
    for entity in record["entities"]:
        name = entity["name"]
        for form in (name, *entity.get("aliases", [])):
            out.setdefault(_normal(form), name)
        words = _normal(name).split()
        picks = (words[:1] + words[-1:]) if entity["type"] == "PERSON" else words[:1]
        for word in picks:
            short.setdefault(word, set()).add(name)
    for word, names in short.items():
        if len(names) == 1 and len(word) > 2:
            out.setdefault(word, next(iter(names)))
    return out


def _gold(record: Mapping[str, Any]) -> dict[tuple[str, str], set[str]]:
    """(subject, object) -> its predicates (``role`` for any ``{role}_of``)."""
    out: dict[tuple[str, str], set[str]] = {}
    for t in record["triples"]:
        predicate = t["predicate"] if t["predicate"] in PREDICATES else ROLE_CLASS
        out.setdefault((t["subject"], t["object"]), set()).add(predicate)
    return out


def pairs_of(styles: Iterable[Style]) -> list[Pair]:
    """The labelled span pairs of the styles' records, as graphmem's relation source sees
    them."""
    out: list[Pair] = []
    for style in styles:
        memory = CortexMemory()
        index = memory.space.entity_index
        recorder = _Recorder(index.relation_source)
        index._relation_source = recorder  # noqa: SLF001 - training reads what it is given
        for record in style.records:
            before = len(recorder.calls)
            memory.save_task_result(record["task"], record["text"], record["agent_role"], 0.7)
            forms, gold = _forms(record), _gold(record)
            for doc, spans in recorder.calls[before:]:
                out += _labelled(doc, spans, forms, gold, style.name)
        recorder.calls.clear()
    return out


def _labelled(
    doc: Any,
    spans: Sequence[Any],
    forms: Mapping[str, str],
    gold: Mapping[tuple[str, str], set[str]],
    style: str,
) -> list[Pair]:
    if len(spans) < 2 or not doc.has_annotation("DEP"):
        return []
    table = TokenTable.of(doc)
    out = []
    for c in agent_candidates(table, spans):
        x, y = forms.get(_normal(c.first_entity.text)), forms.get(_normal(c.second_entity.text))
        labels: set[str] = set()
        if x and y and x != y:
            labels |= {f"{p}>" for p in gold.get((x, y), ())}
            labels |= {f"{p}<" for p in gold.get((y, x), ())}
        # symmetric predicates: one class, ">"
        labels = {f"{label[:-1]}>" if label[:-1] in SYMMETRIC else label for label in labels}
        out.append(Pair(c.features(table), sorted(labels & set(AGENT_CLASSES)), style))
    return out


def _matrix(pairs: Sequence[Pair], vocabulary: Mapping[str, int]) -> Any:
    from scipy.sparse import csr_matrix

    rows, cols = [], []
    for i, pair in enumerate(pairs):
        for name in set(pair.features):
            j = vocabulary.get(name)
            if j is not None:
                rows.append(i)
                cols.append(j)
    return csr_matrix(
        (np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(len(pairs), len(vocabulary))
    )


def fit(train: Sequence[Pair], c: float, min_count: int = 2) -> tuple[dict[str, int], Any]:
    """One logistic regression per class (one vs the rest: a pair can have several);
    returns the feature vocabulary and ``(weights, intercepts)`` with a column per class
    (column 0, NA, unused)."""
    from sklearn.linear_model import LogisticRegression

    counts = Counter(name for pair in train for name in set(pair.features))
    vocabulary = {
        name: i for i, name in enumerate(sorted(n for n, k in counts.items() if k >= min_count))
    }
    x = _matrix(train, vocabulary)
    weights = np.zeros((len(vocabulary), len(AGENT_CLASSES)))
    intercepts = np.full(len(AGENT_CLASSES), -30.0)
    for j, cls in enumerate(AGENT_CLASSES[1:], start=1):
        y = np.asarray([cls in p.labels for p in train])
        if y.sum() < 3:
            continue  # too rare to learn: never fires
        model = LogisticRegression(C=c, max_iter=2000).fit(x, y)
        weights[:, j], intercepts[j] = model.coef_[0], model.intercept_[0]
    return vocabulary, (weights, intercepts)


def _probabilities(model: Any, x: Any) -> np.ndarray:
    """Per-class sigmoid scores, as graphmem computes them."""
    weights, intercepts = model
    return 1.0 / (1.0 + np.exp(-(x @ weights + intercepts)))


def _gold_matrix(pairs: Sequence[Pair]) -> np.ndarray:
    return np.asarray([[cls in p.labels for cls in AGENT_CLASSES] for p in pairs])


def thresholds_on(
    probs: np.ndarray, gold: np.ndarray, min_precision: float = MIN_PRECISION
) -> np.ndarray:
    """Per class, the lowest threshold (of 0.2 .. 0.9) whose dev precision reaches
    ``min_precision`` (at least 3 firings), else 0.95."""
    out = np.full(probs.shape[1], 0.95)
    for j in range(1, probs.shape[1]):
        for t in np.arange(0.2, 0.91, 0.05):
            fired = probs[:, j] >= t
            if fired.sum() >= 3 and gold[fired, j].mean() >= min_precision:
                out[j] = round(float(t), 2)
                break
    return out


def scores(probs: np.ndarray, gold: np.ndarray, thresholds: np.ndarray) -> dict[str, float]:
    """Precision and recall over (pair, class) decisions."""
    fired = probs[:, 1:] >= thresholds[1:]
    want = gold[:, 1:]
    tp = int((fired & want).sum())
    return {
        "precision": tp / max(1, int(fired.sum())),
        "recall": tp / max(1, int(want.sum())),
        "pairs": len(gold),
        "positives": int(want.sum()),
    }


def write(
    vocabulary: Mapping[str, int], model: Any, thresholds: np.ndarray, meta: dict[str, Any]
) -> None:
    weights, intercepts = model
    weights = weights.astype(np.float32)
    meta_name, weights_name = AGENT_FILES
    np.save(MODELS / weights_name, weights, allow_pickle=False)
    data = {
        **meta,
        "classes": list(AGENT_CLASSES),
        "features": sorted(vocabulary, key=vocabulary.__getitem__),
        "intercepts": [round(float(x), 6) for x in intercepts],
        "thresholds": {c: float(t) for c, t in zip(AGENT_CLASSES, thresholds, strict=True)},
    }
    (MODELS / meta_name).write_text(json.dumps(data, indent=0) + "\n", encoding="utf-8")
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    for name in AGENT_FILES:
        manifest["files"][name] = hashlib.sha256((MODELS / name).read_bytes()).hexdigest()
    MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", action="store_true", help="dev figures only; write nothing")
    parser.add_argument("--cache", type=Path, help="keep the collected pairs in this JSON file")
    parser.add_argument(
        "--min-precision", type=float, default=MIN_PRECISION, help="per-class dev precision"
    )
    parser.add_argument("--c", type=float, action="append", help="regularisation to try")
    args = parser.parse_args(argv)
    train_styles, dev_styles = load_styles(["train"]), load_styles(["dev"])
    if args.cache and args.cache.exists():
        cached = json.loads(args.cache.read_text(encoding="utf-8"))
        train, dev = ([Pair(**p) for p in cached[k]] for k in ("train", "dev"))
    else:
        train, dev = pairs_of(train_styles), pairs_of(dev_styles)
        if args.cache:
            args.cache.write_text(
                json.dumps({"train": [vars(p) for p in train], "dev": [vars(p) for p in dev]}),
                encoding="utf-8",
            )
    print(
        f"pairs: train {len(train)} ({sum(bool(p.labels) for p in train)} related), "
        f"dev {len(dev)}; labels {Counter(x for p in train for x in p.labels).most_common()}"
    )
    dev_gold = _gold_matrix(dev)
    chosen = None
    for c in args.c or C_GRID:
        vocabulary, model = fit(train, c)
        probs = _probabilities(model, _matrix(dev, vocabulary))
        thresholds = thresholds_on(probs, dev_gold, args.min_precision)
        figures = scores(probs, dev_gold, thresholds)
        print(f"C={c}: dev {figures}")
        f1 = (
            2
            * figures["precision"]
            * figures["recall"]
            / max(1e-9, figures["precision"] + figures["recall"])
        )
        if chosen is None or f1 > chosen[0]:
            chosen = (f1, c, thresholds, figures)
    assert chosen is not None
    _, c, thresholds, figures = chosen
    if args.report:
        return
    # The shipped model learns from the train styles only: dev stays a fair measure.
    vocabulary, model = fit(train, c)
    write(
        vocabulary,
        model,
        thresholds,
        {
            "version": 1,
            "description": (
                "Agent-text relation model (scripts/train_agent_relations.py): one "
                "logistic regression per class (one vs the rest) over agent_pair_features of entity-span pairs, trained on "
                f"the {len(train_styles)} train styles of tests/data/agent_corpus, C={c} and "
                f"thresholds (dev precision >= {args.min_precision}) chosen on its "
                f"{len(dev_styles)} dev styles "
                f"(dev P {figures['precision']:.3f} R {figures['recall']:.3f} over pairs)."
            ),
        },
    )
    print(f"wrote {', '.join(AGENT_FILES)} (C={c}, {len(vocabulary)} features)")


if __name__ == "__main__":
    main()
