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
this process. They end with this process, even when it is killed (SIGKILL): on Linux the
kernel signals them when the thread that made the pool ends (``PR_SET_PDEATHSIG``; a pool is
made and used by one thread), and a thread in each watches that its parent still runs.
A worker that ends before its work is done (killed) raises
:class:`~graphmem.errors.AnalysisWorkerError`, saying how it ended.

Example:
    >>> from graphmem.extract.pipeline import get_analyzer
    >>> with AnalysisPool(get_analyzer(), workers=2) as pool:
    ...     [doc] = pool.submit([("Update the CRM", "Erik Solberg joined Acme.")])()
    >>> [ent.text for ent in doc.ents if ent.label_ == "PERSON"]
    ['Erik Solberg']
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from types import TracebackType
from typing import TYPE_CHECKING

from ..errors import AnalysisWorkerError
from .pipeline import Analyzer
from .texts import analyse_texts

if TYPE_CHECKING:
    from spacy.tokens import Doc

__all__ = ["AnalysisPool", "default_workers", "pool_possible"]

_analyzer: Analyzer | None = None  # a worker's pipeline (inherited when it was forked)
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
#: How often (seconds) a worker's thread checks that its parent still runs.
_WATCH_EVERY = 0.5


def default_workers() -> int:
    """The machine's cores (what ingest uses unless told otherwise)."""
    return os.cpu_count() or 1


def pool_possible() -> bool:
    """True where worker processes can be forked (see the module docstring)."""
    return "fork" in multiprocessing.get_all_start_methods()


def _start_worker(analyzer: Analyzer, parent: int) -> None:
    global _analyzer
    analyzer._lock = threading.Lock()  # a fresh lock: the parent's may have been held
    _analyzer = analyzer
    _die_with(parent)


def _die_with(parent: int) -> None:
    """End this worker when the process ``parent`` ends, however it ends (see the module
    docstring)."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # the watching thread still ends it

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_WATCH_EVERY)
        os._exit(1)

    if os.getppid() != parent:  # gone before the signal was asked for
        os._exit(1)
    threading.Thread(target=watch, name="graphmem-parent-watch", daemon=True).start()


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
            initargs=(analyzer, os.getpid()),
        )
        with analyzer._lock:  # the first task forks every worker
            self._executor.submit(int).result()
        self._processes = list(self._executor._processes.values())

    def submit(
        self, texts: Sequence[tuple[str, str]], relations: bool = False
    ) -> Callable[[], list[Doc]]:
        """Start analysing ``texts`` (split among the workers, in order); the function
        returned waits for them and gives one Doc per text, as ``analyse_texts`` would."""
        relations = relations and self.analyzer.has_parser
        size = -(-len(texts) // self.workers) if texts else 1
        try:
            futures: list[Future[list[bytes]]] = [
                self._executor.submit(_analyse_chunk, list(texts[i : i + size]), relations)
                for i in range(0, len(texts), size)
            ]
        except BrokenProcessPool:  # a worker ended since the last batch
            raise AnalysisWorkerError(self._how_it_ended()) from None
        vocab = self.analyzer.nlp.vocab

        def result() -> list[Doc]:
            from spacy.tokens import Doc

            try:
                analysed = [f.result() for f in futures]
            except BrokenProcessPool:
                raise AnalysisWorkerError(self._how_it_ended()) from None
            return [Doc(vocab).from_bytes(data) for chunk in analysed for data in chunk]

        return result

    def _how_it_ended(self) -> str:
        """What ended the pool: its worker processes that ended early, and how."""
        ends = []
        for process in self._processes:
            process.join(1)
            code = process.exitcode
            if code is not None and code < 0:
                ends.append(f"process {process.pid} was killed by {signal.Signals(-code).name}")
            elif code:
                ends.append(f"process {process.pid} exited with status {code}")
        how = "; ".join(ends) or "it ended early"
        return f"an analysis worker process ended before its texts were analysed ({how})"

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
