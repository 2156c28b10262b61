"""Work in batches: slices of a list with an optional progress bar, and look-ahead.

Example:
    >>> [len(b) for b in batched(list(range(5)), 2)]
    [2, 2, 1]
    >>> made = []
    >>> [(n, list(made)) for n in one_ahead(made.append(n) or n for n in (1, 2, 3))]
    [(1, [1, 2]), (2, [1, 2, 3]), (3, [1, 2, 3])]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TypeVar

__all__ = ["batched", "one_ahead"]

T = TypeVar("T")


def batched(
    items: Sequence[T],
    size: int,
    progress: bool = False,
    desc: str = "",
    unit: str = "memories",
) -> Iterator[Sequence[T]]:
    """``items`` in slices of ``size`` (at least 1); ``progress``: a tqdm bar named ``desc``
    counts the items of each slice once the caller is done with it (asks for the next)."""
    step = max(1, size)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(items), unit=unit, desc=desc)
    try:
        for start in range(0, len(items), step):
            chunk = items[start : start + step]
            yield chunk
            if bar is not None:
                bar.update(len(chunk))
    finally:
        if bar is not None:
            bar.close()


def one_ahead(values: Iterable[T]) -> Iterator[T]:
    """``values`` in order, each handed over only once the next one has been made: with a
    generator that starts a batch's analysis, the next batch is analysed while the caller
    writes this one."""
    iterator = iter(values)
    for current in iterator:
        for after in iterator:
            yield current
            current = after
        yield current
