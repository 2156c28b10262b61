"""Analysing texts on every core: worker processes run the pipeline, one writer stores.

spaCy spends one core per process. :class:`AnalysisPool` forks worker processes that hold the
pipeline as the calling process has it (the patterns added to it included) and analyse
``(head, body)`` texts exactly as :func:`~graphmem.extract.texts.analyse_texts` does here; each
Doc comes back as spaCy's own bytes (``Doc.to_bytes``: tokens, parse, entities and tensor), so
what the writer indexes from it is what it would index from a Doc made in this process.
:meth:`AnalysisPool.submit` returns at once: a batch loop analyses the next batch while it
writes this one.

Workers are forked (the pipeline is shared with this process, not loaded again), all at
once while the pipeline's lock is held, so no thread of this process is midway through an
analysis then; where ``fork`` is not available there is no pool, and texts are analysed in
this process.

Example:
    >>> from graphmem.extract.pipeline import get_analyzer
    >>> with AnalysisPool(get_analyzer(), workers=2) as pool:
    ...     [doc] = pool.submit([("Update the CRM", "Erik Solberg joined Acme.")])()
    >>> [ent.text for ent in doc.ents if ent.label_ == "PERSON"]
    ['Erik Solberg']
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from types import TracebackType
from typing import TYPE_CHECKING

from .pipeline import Analyzer
from .texts import analyse_texts

if TYPE_CHECKING:
    from spacy.tokens import Doc

__all__ = ["AnalysisPool", "default_workers", "pool_possible"]

_analyzer: Analyzer | None = None  # a worker's pipeline (inherited when it was forked)


def default_workers() -> int:
    """The machine's cores (what ingest uses unless told otherwise)."""
    return os.cpu_count() or 1


def pool_possible() -> bool:
    """True where worker processes can be forked (see the module docstring)."""
    return "fork" in multiprocessing.get_all_start_methods()


def _start_worker(analyzer: Analyzer) -> None:
    global _analyzer
    analyzer._lock = threading.Lock()  # a fresh lock: the parent's may have been held
    _analyzer = analyzer


def _analyse_chunk(texts: list[tuple[str, str]], relations: bool) -> list[bytes]:
    assert _analyzer is not None, "not a worker process"
    return [doc.to_bytes() for doc in analyse_texts(_analyzer, texts, relations)]


class AnalysisPool:
    """``workers`` processes analysing texts with ``analyzer``'s pipeline (see the module
    docstring); a context manager (:meth:`close` ends the processes)."""

    def __init__(self, analyzer: Analyzer, workers: int) -> None:
        self.analyzer = analyzer
        self.workers = max(1, workers)
        self._executor = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_start_worker,
            initargs=(analyzer,),
        )
        with analyzer._lock:  # the first task forks every worker
            self._executor.submit(int).result()

    def submit(
        self, texts: Sequence[tuple[str, str]], relations: bool = False
    ) -> Callable[[], list[Doc]]:
        """Start analysing ``texts`` (split among the workers, in order); the function
        returned waits for them and gives one Doc per text, as ``analyse_texts`` would."""
        relations = relations and self.analyzer.has_parser
        size = -(-len(texts) // self.workers) if texts else 1
        futures: list[Future[list[bytes]]] = [
            self._executor.submit(_analyse_chunk, list(texts[i : i + size]), relations)
            for i in range(0, len(texts), size)
        ]
        vocab = self.analyzer.nlp.vocab

        def result() -> list[Doc]:
            from spacy.tokens import Doc

            return [Doc(vocab).from_bytes(data) for f in futures for data in f.result()]

        return result

    def close(self) -> None:
        """End the worker processes."""
        self._executor.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> AnalysisPool:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
