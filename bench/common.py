"""Shared pieces of the graphmem benchmarks: data loading, scoring, baselines, reporting.

Everything here is plain Python + numpy (+ rank_bm25 for the BM25 baseline) so that the
benchmark scripts run against any system that implements the small adapter protocols below.

Adapter protocols (what a system under test must provide)
---------------------------------------------------------
Retrieval (``locomo_retrieval.py``, ``redocred_retrieval.py``): a :class:`RetrievalSystem`:

- ``reset()``: start a new, empty memory;
- ``ingest(records)``: save each :class:`Record` (id, content, metadata, conversation_id);
- ``search_many(queries, k)``: for each query, the ids of the top-``k`` records, best first.

Entity graphs (``redocred_entities.py``): see ``EntityGraphSystem`` in that script.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import re
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
# Data lives outside the repository, beside it: <repo>/../shared/data (never copied in).
DATA_DIR = (REPO_ROOT / ".." / "shared" / "data").resolve()
RESULTS_DIR = BENCH_DIR / "results"
DEFAULT_LOCOMO = DATA_DIR / "locomo" / "locomo_dev.json"
DEFAULT_REDOCRED_RETRIEVAL = DATA_DIR / "redocred" / "retrieval_dev.json"
DEFAULT_REDOCRED_DEV = DATA_DIR / "redocred" / "dev_revised.json"
DEFAULT_CALUTE_VENV = BENCH_DIR / ".venvs" / "calute-0.1.5"
CALUTE_VERSION = "0.1.5"

DOWNLOAD_HINTS = {
    "locomo": (
        "LoCoMo: download locomo10.json from https://github.com/snap-research/locomo "
        "(data/locomo10.json) and keep its first 5 samples (conv-26, conv-30, conv-41, conv-42, "
        "conv-43) as locomo_dev.json, or pass --locomo PATH."
    ),
    "redocred": (
        "Re-DocRED: download dev_revised.json from https://github.com/tonytan48/Re-DocRED "
        "(data/dev_revised.json), or pass the path explicitly."
    ),
    "redocred_retrieval": (
        "retrieval_dev.json is built from Re-DocRED dev_revised.json (see shared/data/README.md); "
        "it is provided in ../shared/data/redocred/. Pass --data PATH if it lives elsewhere."
    ),
}


def require_file(path: Path | str, dataset: str) -> Path:
    """Return ``path`` if it exists, else exit with a message saying what to download."""
    p = Path(path)
    if not p.is_file():
        hint = DOWNLOAD_HINTS.get(dataset, "")
        sys.exit(f"error: data file not found: {p}\n{hint}")
    return p


def log(msg: str) -> None:
    """Progress output goes to stderr so stdout stays clean for tables."""
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Records and the retrieval adapter protocol
# --------------------------------------------------------------------------------------------


@dataclass
class Record:
    """One item to save into the memory under test."""

    id: str
    content: str
    metadata: dict[str, Any] = field(default_factory=dict)
    conversation_id: str | None = None
    agent_id: str | None = None


@dataclass
class Query:
    """One retrieval question with its gold record ids and tags used for breakdowns."""

    qid: str
    question: str
    gold: list[str]
    tags: dict[str, Any] = field(default_factory=dict)


class RetrievalSystem(Protocol):
    """What a retrieval benchmark needs from a system under test."""

    name: str

    def reset(self) -> None: ...

    def ingest(self, records: Sequence[Record]) -> None: ...

    def search_many(self, queries: Sequence[str], k: int) -> list[list[str]]: ...

    def close(self) -> None: ...


# --------------------------------------------------------------------------------------------
# LoCoMo
# --------------------------------------------------------------------------------------------

LOCOMO_CATEGORIES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
_EVIDENCE_RE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


def normalize_evidence_id(raw: str) -> list[str]:
    """Normalise one LoCoMo evidence string to zero or more ``D<int>:<int>`` ids.

    >>> normalize_evidence_id("D8:6; D9:17")
    ['D8:6', 'D9:17']
    >>> normalize_evidence_id("D:11:26"), normalize_evidence_id("D30:05"), normalize_evidence_id("D")
    (['D11:26'], ['D30:5'], [])
    """
    return [f"D{int(a)}:{int(b)}" for a, b in _EVIDENCE_RE.findall(raw)]


def normalize_evidence(raw_ids: Iterable[str], valid_ids: set[str] | None = None) -> list[str]:
    """Normalise a question's evidence list; drop duplicates and ids not in ``valid_ids``."""
    out: list[str] = []
    for raw in raw_ids:
        for eid in normalize_evidence_id(str(raw)):
            if (valid_ids is None or eid in valid_ids) and eid not in out:
                out.append(eid)
    return out


@dataclass
class Conversation:
    sample_id: str
    records: list[Record]
    queries: list[Query]
    skipped_questions: int = 0
    dropped_evidence: int = 0


def load_locomo(path: Path | str) -> list[Conversation]:
    """Load LoCoMo samples as records (one per turn) and queries (evidence normalised)."""
    data = json.loads(require_file(path, "locomo").read_text(encoding="utf-8"))
    conversations = []
    for sample in data:
        conv = sample["conversation"]
        sample_id = sample["sample_id"]
        records: list[Record] = []
        sessions = sorted(
            (int(m.group(1)), key)
            for key in conv
            if (m := re.fullmatch(r"session_(\d+)", key)) is not None
        )
        for num, key in sessions:
            date = conv.get(f"session_{num}_date_time", "")
            for turn in conv[key]:
                dia_id = turn["dia_id"]
                records.append(
                    Record(
                        id=dia_id,
                        content=f"{turn['speaker']}: {turn['text']}",
                        metadata={
                            "dia_id": dia_id,
                            "session": num,
                            "session_date": date,
                            "speaker": turn["speaker"],
                        },
                        conversation_id=sample_id,
                    )
                )
        valid = {r.id for r in records}
        queries: list[Query] = []
        skipped = dropped = 0
        for i, qa in enumerate(sample["qa"]):
            raw = qa.get("evidence", [])
            gold = normalize_evidence(raw, valid)
            dropped += max(0, len(normalize_evidence(raw)) - len(gold))
            if not gold:
                skipped += 1
                continue
            cat = int(qa["category"])
            queries.append(
                Query(
                    qid=f"{sample_id}:{i}",
                    question=qa["question"],
                    gold=gold,
                    tags={"category": cat, "category_name": LOCOMO_CATEGORIES.get(cat, str(cat))},
                )
            )
        conversations.append(Conversation(sample_id, records, queries, skipped, dropped))
    return conversations


# --------------------------------------------------------------------------------------------
# Re-DocRED retrieval
# --------------------------------------------------------------------------------------------


def load_redocred_retrieval(path: Path | str) -> tuple[list[Record], list[Query]]:
    """Load retrieval_dev.json: 4,110 sentence records and templated queries with tags."""
    data = json.loads(require_file(path, "redocred_retrieval").read_text(encoding="utf-8"))
    records = [
        Record(
            id=it["id"],
            content=it["content"],
            metadata=dict(it.get("metadata", {})),
            conversation_id=it.get("metadata", {}).get("title"),
        )
        for it in data["items"]
    ]
    queries = []
    for q in data["queries"]:
        lex = q.get("lex")
        tags = {
            "variant": q.get("variant"),
            "lex": lex,
            "evid": q.get("evid"),
            "needs_resolution": lex in ("alias", "pronoun", "bridge"),
            "shared_name": q.get("shared_name"),
        }
        queries.append(Query(qid=q["qid"], question=q["question"], gold=list(q["gold"]), tags=tags))
    return records, queries


# --------------------------------------------------------------------------------------------
# Scoring
# --------------------------------------------------------------------------------------------


def recall_at_k(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """|gold ∩ top-k| / |gold| (0 when there is no gold)."""
    g = set(gold)
    if not g:
        return 0.0
    return len(g.intersection(ranked[:k])) / len(g)


def all_gold_at_k(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1.0 when every gold id is in the top-k, else 0.0."""
    g = set(gold)
    return float(bool(g) and g.issubset(ranked[:k]))


def reciprocal_rank(ranked: Sequence[str], gold: Iterable[str]) -> float:
    """1 / rank of the first gold id in ``ranked`` (1-based); 0 when none is returned."""
    g = set(gold)
    for i, rid in enumerate(ranked):
        if rid in g:
            return 1.0 / (i + 1)
    return 0.0


DEFAULT_KS = (5, 10, 20)


def score_ranking(
    ranked: Sequence[str], gold: Sequence[str], ks: Sequence[int] = DEFAULT_KS
) -> dict[str, float]:
    """Per-question metrics: ``R@k`` for each k, ``all@10`` and ``MRR``."""
    out = {f"R@{k}": recall_at_k(ranked, gold, k) for k in ks}
    out["all@10"] = all_gold_at_k(ranked, gold, 10)
    out["MRR"] = reciprocal_rank(ranked, gold)
    return out


def mean_metrics(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Average each metric over rows (as percentages), plus ``n``."""
    if not rows:
        return {"n": 0}
    keys = [k for k in rows[0] if isinstance(rows[0][k], int | float)]
    out: dict[str, float] = {k: 100.0 * float(np.mean([r[k] for r in rows])) for k in keys}
    out["n"] = len(rows)
    return out


def group_metrics(
    per_question: Sequence[Mapping[str, Any]],
    groups: Mapping[str, Callable[[Mapping[str, Any]], bool]],
) -> dict[str, dict[str, float]]:
    """Average ``per_question[i]["metrics"]`` over each named subset (predicate on the row)."""
    return {
        name: mean_metrics([row["metrics"] for row in per_question if pred(row)])
        for name, pred in groups.items()
    }


def paired_bootstrap(
    a: Sequence[float], b: Sequence[float], n_resamples: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """Mean of ``a - b`` and its 95% percentile interval from a paired bootstrap over questions.

    ``a`` and ``b`` are the per-question scores of two systems on the same questions, in the same
    order. Fixed seed, ``n_resamples`` resamples of question indices with replacement.
    """
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size == 0:
        raise ValueError("paired_bootstrap needs two equally long, non-empty score lists")
    d = x - y
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, d.size, size=(n_resamples, d.size))
    means = d[idx].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(d.mean()), float(lo), float(hi)


# --------------------------------------------------------------------------------------------
# BM25 baseline (the README's protocol)
# --------------------------------------------------------------------------------------------

# The Glasgow IR group's English stop-word list, as shipped by scikit-learn (ENGLISH_STOP_WORDS),
# written out so that the benchmarks do not depend on scikit-learn.
ENGLISH_STOP_WORDS: frozenset[str] = frozenset(
    """
    a about above across after afterwards again against all almost alone along already also
    although always am among amongst amoungst amount an and another any anyhow anyone anything
    anyway anywhere are around as at back be became because become becomes becoming been before
    beforehand behind being below beside besides between beyond bill both bottom but by call can
    cannot cant co con could couldnt cry de describe detail do done down due during each eg eight
    either eleven else elsewhere empty enough etc even ever every everyone everything everywhere
    except few fifteen fifty fill find fire first five for former formerly forty found four from
    front full further get give go had has hasnt have he hence her here hereafter hereby herein
    hereupon hers herself him himself his how however hundred i ie if in inc indeed interest into
    is it its itself keep last latter latterly least less ltd made many may me meanwhile might
    mill mine more moreover most mostly move much must my myself name namely neither never
    nevertheless next nine no nobody none noone nor not nothing now nowhere of off often on once
    one only onto or other others otherwise our ours ourselves out over own part per perhaps
    please put rather re same see seem seemed seeming seems serious several she should show side
    since sincere six sixty so some somehow someone something sometime sometimes somewhere still
    such system take ten than that the their them themselves then thence there thereafter thereby
    therefore therein thereupon these they thick thin third this those though three through
    throughout thru thus to together too top toward towards twelve twenty two un under until up
    upon us very via was we well were what whatever when whence whenever where whereafter whereas
    whereby wherein whereupon wherever whether which while whither who whoever whole whom whose
    why will with within without would yet you your yours yourself yourselves
    """.split()
)
_TOKEN_RE = re.compile(r"[a-z0-9]+")


def bm25_tokens(text: str, stop_words: frozenset[str] = ENGLISH_STOP_WORDS) -> list[str]:
    """Lower-cased alphanumeric tokens with English stop words removed."""
    return [t for t in _TOKEN_RE.findall(text.lower()) if t not in stop_words]


class BM25System:
    """BM25 (rank_bm25.BM25Okapi, k1=1.5, b=0.75) over the ingested records.

    Ranking: all records by descending score, ties broken by ingest order (a stable sort), so
    records with score 0 still fill the list after the matching ones (this is what the README's
    reference figures used; see ``--help`` of the retrieval scripts).
    """

    name = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75, only_matching: bool = False) -> None:
        self.k1, self.b, self.only_matching = k1, b, only_matching
        self.reset()

    def reset(self) -> None:
        self._ids: list[str] = []
        self._docs: list[list[str]] = []
        self._index: Any = None

    def ingest(self, records: Sequence[Record]) -> None:
        for r in records:
            self._ids.append(r.id)
            self._docs.append(bm25_tokens(r.content))
        self._index = None

    def _bm25(self) -> Any:
        if self._index is None:
            from rank_bm25 import BM25Okapi

            # rank_bm25 divides by the corpus size; an empty document list is not indexable.
            self._index = BM25Okapi(self._docs or [[]], k1=self.k1, b=self.b)
        return self._index

    def scores(self, query: str) -> np.ndarray:
        toks = bm25_tokens(query)
        if not self._docs:
            return np.zeros(0)
        return np.asarray(self._bm25().get_scores(toks), dtype=float)

    def search_many(self, queries: Sequence[str], k: int) -> list[list[str]]:
        out = []
        for q in queries:
            s = self.scores(q)
            order = np.argsort(-s, kind="stable")[:k]
            if self.only_matching:
                order = [i for i in order if s[i] > 0]
            out.append([self._ids[i] for i in order])
        return out

    def close(self) -> None:
        pass


# --------------------------------------------------------------------------------------------
# graphmem retrieval adapter
# --------------------------------------------------------------------------------------------


class GraphmemLongTermSystem:
    """Adapter over ``graphmem.LongTermMemory`` (SPEC.md API, calute-compatible).

    Uses ``save_many(records)`` when the library has it (a list of dicts with the same keyword
    arguments as ``save``), else one ``save`` per record. Maps returned ``memory_id`` values back
    to record ids.
    """

    name = "graphmem"

    def __init__(self, use_batch: bool = True, **memory_kwargs: Any) -> None:
        import graphmem  # noqa: F401  (ImportError here is reported by the caller)

        self._memory_kwargs = memory_kwargs
        self._use_batch = use_batch
        self.reset()

    def reset(self) -> None:
        from graphmem import LongTermMemory

        self.memory: Any = LongTermMemory(**self._memory_kwargs)
        self._id_of: dict[str, str] = {}

    def ingest(self, records: Sequence[Record]) -> None:
        kwargs_list = [
            {
                "content": r.content,
                "metadata": dict(r.metadata),
                "conversation_id": r.conversation_id,
                "agent_id": r.agent_id,
            }
            for r in records
        ]
        if self._use_batch and hasattr(self.memory, "save_many"):
            items = list(self.memory.save_many(kwargs_list))
        else:
            items = [self.memory.save(**kw) for kw in kwargs_list]
        for r, item in zip(records, items, strict=True):
            self._id_of[item.memory_id] = r.id

    def search_many(self, queries: Sequence[str], k: int) -> list[list[str]]:
        out = []
        for q in queries:
            hits = self.memory.search(q, limit=k)
            out.append([self._id_of[h.memory_id] for h in hits if h.memory_id in self._id_of])
        return out

    def close(self) -> None:
        close = getattr(self.memory, "close", None)
        if callable(close):
            close()


class GraphmemCortexSystem:
    """Adapter over the ``graphmem.CortexMemory`` facade, as a Calute user would drive it.

    Each record is one task result, ``save_task_results`` in one call: ``result`` = the
    record's content, ``agent_role`` = its speaker (else its agent, else ``"assistant"``),
    ``task_metadata`` = its metadata plus ``conversation_id``, ``importance`` = ``importance``
    (0.7 by default: the facade's long-term threshold, so every turn is kept; below it a
    result lives only in capacity-bounded short-term memory). Ranks with
    ``CortexMemory.search`` (the ranking of the context's "Related memories").
    """

    name = "graphmem-cortex"
    TASK = "Conversation turn"

    def __init__(self, importance: float = 0.7, **memory_kwargs: Any) -> None:
        import graphmem  # noqa: F401  (ImportError here is reported by the caller)

        self._importance = importance
        self._memory_kwargs = memory_kwargs
        self.reset()

    def reset(self) -> None:
        from graphmem import CortexMemory

        self.memory: Any = CortexMemory(**self._memory_kwargs)

    def ingest(self, records: Sequence[Record]) -> None:
        self.memory.save_task_results(
            {
                "task_description": self.TASK,
                "result": r.content,
                "agent_role": r.metadata.get("speaker") or r.agent_id or "assistant",
                "importance": self._importance,
                # The record id rides in the metadata: the facade returns no items.
                "task_metadata": {
                    **r.metadata,
                    "conversation_id": r.conversation_id,
                    "record_id": r.id,
                },
            }
            for r in records
        )

    def search_many(self, queries: Sequence[str], k: int) -> list[list[str]]:
        return [
            [str(item.metadata["record_id"]) for item in self.memory.search(q, limit=k)]
            for q in queries
        ]

    def close(self) -> None:
        pass


def try_graphmem_system(**kwargs: Any) -> GraphmemLongTermSystem | None:
    """The graphmem adapter, or ``None`` (with a message) while graphmem cannot be imported."""
    try:
        return GraphmemLongTermSystem(**kwargs)
    except ImportError as exc:
        log(f"graphmem skipped: cannot import LongTermMemory from graphmem yet ({exc})")
        return None


# --------------------------------------------------------------------------------------------
# calute 0.1.5 baseline: a separate virtual environment and a JSON-lines worker
# --------------------------------------------------------------------------------------------


def ensure_calute_venv(
    venv: Path | str = DEFAULT_CALUTE_VENV, version: str = CALUTE_VERSION
) -> Path:
    """Create ``venv`` with ``pip install calute==version`` if needed; return its python.

    calute is never a graphmem dependency: it lives only in this benchmark venv (gitignored).
    """
    venv = Path(venv)
    py = venv / "bin" / "python"
    marker = venv / f".calute-{version}-ok"
    if py.exists() and marker.exists():
        return py
    if not py.exists():
        log(f"creating calute venv at {venv} (one-off, about a minute)")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    log(f"installing calute=={version} into {venv}")
    subprocess.run(
        [
            str(py),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            f"calute=={version}",
        ],
        check=True,
    )
    check = subprocess.run(
        [str(py), "-c", "import calute.memory, calute.cortex.memory_integration"],
        capture_output=True,
        text=True,
    )
    if check.returncode != 0:
        log(
            "warning: `import calute.memory` failed in the venv; the worker will load the memory "
            "modules by file path instead:\n" + check.stderr[-2000:]
        )
    marker.write_text(version)
    return py


class CaluteWorker:
    """A subprocess running ``bench/calute_worker.py`` in the calute venv (JSON lines).

    Each request is one JSON object per line on stdin (``{"cmd": ..., ...}``); each reply is one
    JSON object per line on stdout (``{"ok": true, ...}`` or ``{"ok": false, "error": ...}``).
    """

    def __init__(
        self,
        venv: Path | str = DEFAULT_CALUTE_VENV,
        env: Mapping[str, str] | None = None,
        cwd: Path | str | None = None,
    ):
        py = ensure_calute_venv(venv)
        full_env = dict(os.environ)
        full_env.update(env or {})
        full_env.setdefault("PYTHONWARNINGS", "ignore")
        self.proc = subprocess.Popen(
            [str(py), str(BENCH_DIR / "calute_worker.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,
            text=True,
            env=full_env,
            cwd=str(cwd) if cwd else None,
            bufsize=1,
        )
        self.info = self.call("hello")

    def call(self, cmd: str, **payload: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"cmd": cmd, **payload}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"calute worker died during {cmd!r} (exit {self.proc.poll()})")
        reply = json.loads(line)
        if not reply.get("ok"):
            raise RuntimeError(f"calute worker error in {cmd!r}: {reply.get('error')}")
        return reply

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.call("quit")
            except (RuntimeError, BrokenPipeError, OSError):
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class CaluteLongTermSystem:
    """calute 0.1.5 ``LongTermMemory()`` as shipped, searched in the worker.

    ``mode="semantic"`` is the default call ``search(query, limit)``: with the default
    ``enable_embeddings=True`` it ranks by cosine over SHA-256 bytes of ``str(item.to_dict())``
    (random with respect to meaning, and different every run because the dict holds a uuid4 and a
    timestamp). ``mode="keyword"`` is ``search(query, limit, use_semantic=False)``: substring
    keyword overlap plus recency/importance, returning non-matching items too.
    """

    def __init__(self, mode: str = "semantic", worker: CaluteWorker | None = None) -> None:
        if mode not in ("semantic", "keyword"):
            raise ValueError(f"unknown calute search mode {mode!r}")
        self.mode = mode
        self.name = f"calute-{mode}"
        self._own_worker = worker is None
        self.worker = worker or CaluteWorker()
        self.timings: dict[str, float] = defaultdict(float)
        self.reset()

    def reset(self) -> None:
        self.worker.call("ltm_new")

    def ingest(self, records: Sequence[Record]) -> None:
        payload = [
            {
                "id": r.id,
                "content": r.content,
                "metadata": r.metadata,
                "conversation_id": r.conversation_id,
                "agent_id": r.agent_id,
            }
            for r in records
        ]
        reply = self.worker.call("ltm_save_many", records=payload)
        self.timings["save_s"] += reply["seconds"]

    def search_many(self, queries: Sequence[str], k: int) -> list[list[str]]:
        reply = self.worker.call(
            "ltm_search_many", queries=list(queries), k=k, use_semantic=self.mode == "semantic"
        )
        self.timings["search_s"] += reply["seconds"]
        return reply["results"]

    def close(self) -> None:
        if self._own_worker:
            self.worker.close()


# --------------------------------------------------------------------------------------------
# Running a retrieval benchmark
# --------------------------------------------------------------------------------------------


def run_retrieval(
    system: RetrievalSystem,
    groups: Sequence[tuple[Sequence[Record], Sequence[Query]]],
    depth: int,
    ks: Sequence[int] = DEFAULT_KS,
    label: str = "",
) -> dict[str, Any]:
    """Ingest each group of records into a fresh memory, ask its queries, score the rankings.

    Returns ``{"system", "per_question": [{qid, tags, gold, ranked, metrics}], "seconds"}``.
    """
    per_question: list[dict[str, Any]] = []
    t_ingest = t_search = 0.0
    for gi, (records, queries) in enumerate(groups):
        system.reset()
        t0 = time.perf_counter()
        system.ingest(records)
        t1 = time.perf_counter()
        rankings = system.search_many([q.question for q in queries], depth)
        t2 = time.perf_counter()
        t_ingest += t1 - t0
        t_search += t2 - t1
        for q, ranked in zip(queries, rankings, strict=True):
            per_question.append(
                {
                    "qid": q.qid,
                    "tags": q.tags,
                    "gold": q.gold,
                    "ranked": list(ranked[:depth]),
                    "metrics": score_ranking(ranked, q.gold, ks),
                }
            )
        log(
            f"{system.name}{label}: group {gi + 1}/{len(groups)} "
            f"({len(records)} records, {len(queries)} queries) "
            f"ingest {t1 - t0:.1f}s search {t2 - t1:.1f}s"
        )
    return {
        "system": system.name,
        "per_question": per_question,
        "seconds": {"ingest": t_ingest, "search": t_search},
    }


def bootstrap_vs(
    results: Mapping[str, Mapping[str, Any]],
    baseline: str,
    metric: str,
    subset: Callable[[Mapping[str, Any]], bool] = lambda row: True,
) -> dict[str, tuple[float, float, float]]:
    """Paired bootstrap of each system minus ``baseline`` on ``metric`` (in points)."""
    out = {}
    base = {r["qid"]: r for r in results[baseline]["per_question"] if subset(r)}
    for name, res in results.items():
        if name == baseline:
            continue
        rows = [r for r in res["per_question"] if r["qid"] in base]
        if not rows:
            continue
        a = [100 * r["metrics"][metric] for r in rows]
        b = [100 * base[r["qid"]]["metrics"][metric] for r in rows]
        out[name] = paired_bootstrap(a, b)
    return out


# --------------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------------


def fmt(x: Any, digits: int = 1) -> str:
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-flavoured markdown table; floats to one decimal."""
    lines = [
        "| " + " | ".join(headers) + " |",
        "| " + " | ".join("---" if i == 0 else "---:" for i in range(len(headers))) + " |",
    ]
    for row in rows:
        lines.append("| " + " | ".join(fmt(c) for c in row) + " |")
    return "\n".join(lines)


def machine_facts() -> dict[str, Any]:
    """CPU model, cores, RAM, Python and date, for the benchmark report."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram_gb: float | None = None
    try:
        import psutil

        ram_gb = round(psutil.virtual_memory().total / 2**30, 1)
    except ImportError:
        try:
            pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
            ram_gb = round(pages / 2**30, 1)
        except (ValueError, OSError):
            pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gb": ram_gb,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date": _dt.datetime.now().isoformat(timespec="seconds"),
    }


def machine_line() -> str:
    f = machine_facts()
    return (
        f"Machine: {f['cpu']}, {f['cores']} cores, {f['ram_gb']} GiB RAM, "
        f"Python {f['python']}, {f['date']}"
    )


def write_results(name: str, payload: Mapping[str, Any], out_dir: Path | str = RESULTS_DIR) -> Path:
    """Write ``payload`` as JSON to ``<out_dir>/<name>.json`` and return the path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    path.write_text(json.dumps(payload, indent=1, default=str), encoding="utf-8")
    return path
