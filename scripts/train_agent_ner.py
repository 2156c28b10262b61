"""Fine-tune spaCy's NER on the agent corpus (``models/agent_ner/``).

The small English model names invented organisations as people ("Tessaly Works"), misses
names written lower-case in a key-value line or after "@", and knows no PROJECT or TEAM. This
script updates its ``ner`` component (nothing else) on the **train** styles of
``tests/data/agent_corpus``: every gold entity name and alias of a record's task and text is
an entity of its gold type; the rest of each text is no name, except what the base model
itself finds there with a label the corpus does not annotate (DATE, MONEY, CARDINAL ...),
which is kept as it found it (rehearsal: the model keeps what it knew). The epoch kept is the one
with the best entity F1 on the **dev** styles; test styles are never read.

Usage (about ten minutes on 2 cores):
    python scripts/train_agent_ner.py             # writes models/agent_ner/ and its hashes
    python scripts/train_agent_ner.py --report    # dev figures only
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from agent_corpus import Style, load_styles  # noqa: E402

from graphmem.extract.pipeline import AGENT_NER_DIR, AGENT_NER_MANIFEST, load_base_pipeline  # noqa: E402

#: Labels the corpus annotates (every other label of the base model is rehearsed).
NAME_LABELS = frozenset(
    {"PERSON", "ORG", "GPE", "LOC", "FAC", "PRODUCT", "EVENT", "NORP", "PROJECT", "TEAM"}
)
MAX_EPOCHS = 5
SEED = 0


def gold_spans(text: str, entities: Sequence[dict[str, Any]]) -> list[tuple[int, int, str]]:
    """Every occurrence in ``text`` of an entity's name or alias (whole words), longest
    first, never overlapping, with the entity's type."""
    forms = sorted(
        ((form, e["type"]) for e in entities for form in (e["name"], *e.get("aliases", []))),
        key=lambda f: -len(f[0]),
    )
    taken: list[tuple[int, int, str]] = []
    for form, label in forms:
        if not form.strip():
            continue
        for m in re.finditer(rf"(?<!\w){re.escape(form)}(?!\w)", text):
            if all(m.end() <= s or m.start() >= e for s, e, _ in taken):
                taken.append((m.start(), m.end(), label))
    return sorted(taken)


def examples(nlp: Any, styles: Iterable[Style]) -> list[Any]:
    """Training examples: gold names plus the base model's own non-name entities."""
    from spacy.training import Example

    texts: list[tuple[str, list[tuple[int, int, str]]]] = []
    for style in styles:
        for record in style.records:
            for text in (record["task"], record["text"]):
                texts.append((text, gold_spans(text, record["entities"])))
    out = []
    for (text, spans), predicted in zip(texts, nlp.pipe(t for t, _ in texts), strict=True):
        kept = list(spans)
        for ent in predicted.ents:
            if ent.label_ in NAME_LABELS:
                continue
            if all(ent.end_char <= s or ent.start_char >= e for s, e, _ in kept):
                kept.append((ent.start_char, ent.end_char, ent.label_))
        doc = nlp.make_doc(text)
        aligned = []
        for s, e, label in sorted(kept):
            span = doc.char_span(s, e, label=label, alignment_mode="contract")
            if span is not None and len(span):
                aligned.append((span.start_char, span.end_char, label))
        out.append(Example.from_dict(doc, {"entities": aligned}))
    return out


def score(nlp: Any, gold: Sequence[Any]) -> dict[str, float]:
    """Entity precision, recall and F1 over the name labels, and the share of gold names
    found with the right type."""
    tp = predicted = actual = 0
    docs = nlp.pipe(eg.reference.text for eg in gold)
    for eg, doc in zip(gold, docs, strict=True):
        want = {
            (e.start_char, e.end_char, e.label_)
            for e in eg.reference.ents
            if e.label_ in NAME_LABELS
        }
        got = {(e.start_char, e.end_char, e.label_) for e in doc.ents if e.label_ in NAME_LABELS}
        tp += len(want & got)
        predicted += len(got)
        actual += len(want)
    p, r = tp / max(1, predicted), tp / max(1, actual)
    return {
        "precision": round(p, 4),
        "recall": round(r, 4),
        "f1": round(2 * p * r / max(1e-9, p + r), 4),
    }


def train(nlp: Any, data: list[Any], dev: list[Any], epochs: int) -> dict[str, float]:
    """Update ``ner`` for ``epochs`` epochs; keep the weights of the epoch with the best dev
    F1 (returned with its figures)."""
    from spacy.util import minibatch

    ner = nlp.get_pipe("ner")
    for label in sorted(NAME_LABELS):
        ner.add_label(label)
    optimizer = nlp.resume_training()
    rng = random.Random(SEED)
    best: tuple[float, bytes, dict[str, float]] | None = None
    with nlp.select_pipes(enable=["ner"]):
        for epoch in range(epochs):
            rng.shuffle(data)
            losses: dict[str, float] = {}
            for batch in minibatch(data, size=16):
                nlp.update(batch, drop=0.2, sgd=optimizer, losses=losses)
            figures = score(nlp, dev)
            print(f"epoch {epoch + 1}: loss {losses.get('ner', 0):.1f}, dev {figures}", flush=True)
            if best is None or figures["f1"] > best[0]:
                best = (figures["f1"], ner.to_bytes(), {**figures, "epoch": epoch + 1})
    assert best is not None
    ner.from_bytes(best[1])
    return best[2]


def write(nlp: Any) -> None:
    nlp.get_pipe("ner").to_disk(AGENT_NER_DIR)
    files = {
        str(p.relative_to(AGENT_NER_DIR)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(AGENT_NER_DIR.rglob("*"))
        if p.is_file()
    }
    AGENT_NER_MANIFEST.write_text(json.dumps({"files": files}, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", action="store_true", help="dev figures only; write nothing")
    parser.add_argument("--epochs", type=int, default=0, help="fixed epochs (default: dev picks)")
    args = parser.parse_args(argv)
    random.seed(SEED)
    nlp = load_base_pipeline()
    train_data = examples(nlp, load_styles(["train"]))
    dev_data = examples(nlp, load_styles(["dev"]))
    print(
        f"examples: train {len(train_data)}, dev {len(dev_data)}; base dev {score(nlp, dev_data)}"
    )
    best = train(nlp, train_data, dev_data, args.epochs or MAX_EPOCHS)
    print(f"kept the weights of epoch {best['epoch']}: dev {best}")
    if not args.report:
        write(nlp)
        print(f"wrote {AGENT_NER_DIR}")


if __name__ == "__main__":
    main()
