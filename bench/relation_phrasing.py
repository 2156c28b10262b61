"""Typed relations from agent-log and conversational phrasing: how many come out, and which.

Three measurements, each through graphmem's public API only (so the script also runs against
an older checkout for a before/after comparison, e.g. with ``PYTHONPATH=<old checkout>``):

1. ``paragraph``: the hand-written paragraph of ``tests/data/agent_log_paragraph.json`` and
   its 20 expected relations: found and wrong, (a) with the paragraph's entity labels given to
   the rules (the rules alone) and (b) end to end through ``EntityMemory`` (the small model's
   own entity labels);
2. ``locomo``: LoCoMo conversations (one memory per turn, ``"<speaker>: <text>"`` with
   ``speaker`` metadata, as ``locomo_retrieval.py`` saves them): typed relations per
   conversation, each listed with its evidence for checking by hand;
3. ``demo``: the ``graphmem demo`` corpus: typed relations, listed likewise;
4. ``cost``: over the demo corpus and the LoCoMo turns, relation extraction alone on parsed docs
   (best of 3) and ``EntityMemory.save_many`` of the same texts (best of 2);
5. ``agent-log``: the rules alone on an agent-log corpus (``tests/data/agent_logs/dev.json`` by
   default, the format of ``tests/data/agent_logs/README.md``) with its gold labels given, each
   task result analysed as the engine does (task and result as two docs, ``Doc.from_docs``):
   gold triples found and wrong, listed (validity and entity types: ``agent_log_relations.py``).

Example:
    python bench/relation_phrasing.py --locomo ../shared/data/locomo/locomo_dev.json \
        --conversations conv-26
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path

from common import DEFAULT_LOCOMO, REPO_ROOT, load_locomo, log, machine_line
from spacy.tokens import Doc, Span

from graphmem.extract.pipeline import get_analyzer
from graphmem.extract.relations import RelationExtractor
from graphmem.memories.entity import EntityMemory
from graphmem.records import read_records

PARAGRAPH = REPO_ROOT / "tests" / "data" / "agent_log_paragraph.json"
AGENT_LOG = REPO_ROOT / "tests" / "data" / "agent_logs" / "dev.json"
SYMMETRIC = ("met", "partnered_with", "married")
CO_OCCURS = "co_occurs"


def _typed(memory: EntityMemory) -> list[tuple[str, str, str, str]]:
    """(subject, predicate, object, first evidence sentence) of each typed relation."""
    out = []
    for edge in memory.graph.find(evidence=True):
        if edge.predicate == CO_OCCURS:
            continue
        sentence = " ".join(str(edge.evidence[0].sentence).split()) if edge.evidence else ""
        out.append((edge.subject, edge.predicate, edge.object, sentence))
    return sorted(out)


def _score(found: set[tuple[str, str, str]], expected: set[tuple[str, str, str]]) -> str:
    wrong = sorted(found - expected)
    missed = sorted(expected - found)
    return (
        f"{len(found & expected)}/{len(expected)} found, {len(wrong)} wrong"
        + (f"\n    wrong: {wrong}" if wrong else "")
        + (f"\n    missed: {missed}" if missed else "")
    )


def paragraph() -> None:
    data = json.loads(PARAGRAPH.read_text(encoding="utf-8"))
    text, expected = data["text"], {tuple(t) for t in data["expected"]}
    nlp = get_analyzer().nlp
    doc = nlp(text)
    spans = [
        doc.char_span(m.start(), m.end(), label=label)
        for name, label in data["entities"].items()
        for m in re.finditer(re.escape(name), text)
    ]
    given = {c.triple for c in RelationExtractor(nlp).extract(doc, [s for s in spans if s])}
    print(f"Paragraph, rules with the given entity labels: {_score(given, expected)}")
    memory = EntityMemory()
    memory.save(text)
    end_to_end = {(s, p, o) for s, p, o, _ in _typed(memory)}
    print(f"Paragraph, end to end (EntityMemory, NER labels): {_score(end_to_end, expected)}")


def agent_log(path: str) -> None:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    labels: dict[str, str] = data["labels"]
    canonical = {name: name for name in labels}
    canonical.update({a: name for name, forms in data.get("aliases", {}).items() for a in forms})

    def key(s: str, p: str, o: str) -> tuple[str, str, str]:
        return (min(s, o), p, max(s, o)) if p in SYMMETRIC else (s, p, o)

    gold = {key(t["subject"], t["predicate"], t["object"]) for t in data["triples"]}
    nlp = get_analyzer().nlp
    extractor = RelationExtractor(nlp)
    found: set[tuple[str, str, str]] = set()
    wrong: list[tuple[str, tuple[str, str, str]]] = []
    for result in data["results"]:
        doc = Doc.from_docs([nlp(result["task_description"]), nlp(result["result"])])
        spans: list[Span] = []
        for form in sorted(canonical, key=len, reverse=True):
            for m in re.finditer(r"(?<!\w)" + re.escape(form) + r"(?!\w)", doc.text):
                span = doc.char_span(m.start(), m.end(), label=labels[canonical[form]])
                if span is not None and not any(
                    s.start < span.end and span.start < s.end for s in spans
                ):
                    spans.append(span)
        for c in extractor.extract(doc, spans):
            triple = key(canonical[c.subject.text], c.predicate, canonical[c.object.text])
            found.add(triple)
            if triple not in gold:
                wrong.append((result["id"], triple))
    print(
        f"Agent log {Path(path).name}, rules with the gold labels: {len(found & gold)}/"
        f"{len(gold)} gold triples found, {len(found - gold)} wrong"
    )
    for rid, triple in wrong:
        print(f"    wrong ({rid}): {triple}")
    for triple in sorted(gold - found):
        print(f"    missed: {triple}")


def _report(what: str, memory: EntityMemory) -> None:
    """Print how many typed relations of each predicate ``memory`` holds, then list them."""
    typed = _typed(memory)
    counts = Counter(p for _, p, _, _ in typed)
    print(f"{what}, {len(typed)} typed relations {dict(sorted(counts.items()))}")
    _listing(typed)


def _listing(typed: list[tuple[str, str, str, str]]) -> None:
    for subject, predicate, obj, sentence in typed:
        print(f"    {subject} --{predicate}--> {obj}    \u201c{sentence[:160]}\u201d")


def locomo(path: str, conversations: list[str]) -> None:
    for conv in load_locomo(path):
        if conversations and conv.sample_id not in conversations:
            continue
        log(f"LoCoMo {conv.sample_id}: {len(conv.records)} turns")
        memory = EntityMemory()
        memory.save_many(
            [
                {
                    "content": r.content,
                    "metadata": dict(r.metadata),
                    "conversation_id": r.conversation_id,
                }
                for r in conv.records
            ]
        )
        _report(f"LoCoMo {conv.sample_id}: {len(conv.records)} turns", memory)


def demo() -> None:
    # The records `graphmem demo` ingests (timestamps included: they order the closings).
    records = read_records(str(files("graphmem.demo_data").joinpath("team_memories.jsonl")))
    memory = EntityMemory()
    memory.save_many(records)
    _report(f"Demo corpus: {len(records)} memories", memory)


def cost(path: str) -> None:
    corpus = str(files("graphmem.demo_data").joinpath("team_memories.jsonl"))
    records = [{"content": r["content"]} for r in read_records(corpus)]
    records += [
        {"content": r.content, "metadata": dict(r.metadata)}
        for conv in load_locomo(path)
        for r in conv.records
    ]
    analyzer = get_analyzer()
    docs = analyzer.analyse([r["content"] for r in records], relations=True)
    extractor = RelationExtractor(analyzer.nlp)
    extract = min(_timed(lambda: [extractor.extract(doc) for doc in docs]) for _ in range(3))
    save = min(_timed(lambda: EntityMemory().save_many(records)) for _ in range(2))
    print(
        f"Cost over {len(records)} texts: extraction {extract / len(docs) * 1e6:.0f} us per "
        f"parsed doc; EntityMemory.save_many {save:.1f} s ({save / len(records) * 1e6:.0f} us "
        "per memory)"
    )


def _timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", default=str(DEFAULT_LOCOMO), help="locomo_dev.json")
    parser.add_argument(
        "--conversations",
        nargs="*",
        default=["conv-26"],
        help="LoCoMo sample ids (default conv-26; none given: all)",
    )
    parser.add_argument(
        "--agent-log", default=str(AGENT_LOG), help="an agent-log corpus (tests/data/agent_logs)"
    )
    parser.add_argument(
        "--skip",
        nargs="*",
        default=[],
        choices=["paragraph", "locomo", "demo", "cost", "agent-log"],
        help="parts to leave out",
    )
    args = parser.parse_args(argv)
    print(machine_line())
    if "paragraph" not in args.skip:
        paragraph()
    if "locomo" not in args.skip:
        locomo(args.locomo, args.conversations)
    if "demo" not in args.skip:
        demo()
    if "cost" not in args.skip:
        cost(args.locomo)
    if "agent-log" not in args.skip:
        if Path(args.agent_log).exists():
            agent_log(args.agent_log)
        else:
            log(f"no agent-log corpus at {args.agent_log}: part skipped")


if __name__ == "__main__":
    main()
