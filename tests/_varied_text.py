"""Varied, real-looking text at volume for long-run store tests, made offline and seeded.

Words come from the installed spaCy model's vocabulary (about 48,000 English word forms),
drawn with Zipf's law as words of real text are, with capitalised names, numbers and
sentence lengths of real prose. A full-text index of such text has the size and variety that
short synthetic strings never reach (issue 34: SQLite 3.40's FTS5 ``optimize`` damaged an
index of real text after about a thousand deletes; ``"note 17"`` strings never did).

Example:
    >>> texts = varied_texts(seed=1)
    >>> first = next(texts)
    >>> first[0].isupper() and first.endswith(".") and len(first.split()) >= 8
    True
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from functools import cache


@cache
def vocabulary() -> tuple[str, ...]:
    """The model's lower-case alphabetic word forms of 3 to 13 letters, sorted."""
    from graphmem.extract.pipeline import get_analyzer

    strings = get_analyzer().nlp.vocab.strings
    return tuple(sorted({s.lower() for s in strings if s.isalpha() and 2 < len(s) < 14}))


def varied_texts(seed: int = 0) -> Iterator[str]:
    """An endless stream of sentences (8-40 words, a few names and numbers), Zipf-distributed
    over :func:`vocabulary` in an order the seed shuffles."""
    rng = random.Random(seed)
    words = list(vocabulary())
    rng.shuffle(words)
    weights = list(itertools.accumulate(1.0 / rank for rank in range(1, len(words) + 1)))
    while True:
        chosen = rng.choices(words, cum_weights=weights, k=rng.randint(8, 40))
        for i in rng.sample(range(len(chosen)), k=min(3, len(chosen) // 6)):
            chosen[i] = chosen[i].capitalize()
        if rng.random() < 0.3:
            chosen.insert(rng.randrange(len(chosen)), str(rng.randint(2, 99_999)))
        yield " ".join(chosen).capitalize() + "."
