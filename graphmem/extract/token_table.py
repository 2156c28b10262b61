"""A parsed doc's token attributes as plain lists, read once per doc.

Extraction reads the same few attributes of the same tokens many times: every mention pair
walks the dependency tree between two heads, every rule looks for a verb's children, and
every feature names a lemma or a label. ``doc[i]``, ``token.head`` and ``span.sent`` each
build a new object on every call; a list index costs nothing. A :class:`TokenTable` holds what
the extractors read (lower-case lemmas, dependency labels, head indices, sentence bounds,
trees) for one doc, each list built on first use, with the walks up the tree remembered.

Example:
    >>> import spacy
    >>> from spacy.tokens import Doc
    >>> doc = Doc(spacy.blank("en").vocab, words=["Ann", "works", "at", "Acme", ".", "Hi"],
    ...           heads=[1, 1, 1, 2, 1, 5], deps=["nsubj", "ROOT", "prep", "pobj", "punct", "ROOT"],
    ...           lemmas=["Ann", "work", "at", "Acme", ".", "hi"],
    ...           sent_starts=[True, False, False, False, False, True])
    >>> table = TokenTable.of(doc)
    >>> table.lemmas[1], table.deps[3], table.heads[3], table.ancestors(3)
    ('work', 'pobj', 2, (3, 2, 1))
    >>> table.sentence_of(3), table.sentence_number(5), table.children(1), table.trees
    ((0, 5), 1, (0, 2, 4), [1, 1, 1, 1, 1, 5])
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cached_property
from typing import cast

import numpy as np
from spacy.attrs import DEP, HEAD, IDX, IS_PUNCT, IS_SPACE, LEMMA
from spacy.tokens import Doc, Span

__all__ = ["TokenTable"]

_COLUMNS: list[int | str] = [LEMMA, DEP, HEAD, IS_SPACE, IS_PUNCT, IDX]

#: String id -> the string as the table holds it: a dict lookup is several times cheaper
#: than the string store's. Ids are hashes of the strings, the same in every vocab.
_LOWER_LEMMAS: dict[int, str] = {}
_LABELS: dict[int, str] = {}
#: Past this many strings a cache starts over (text of any vocabulary passes through).
MAX_CACHED_STRINGS = 200_000


def _strings(
    doc: Doc, ids: list[int], cache: dict[int, str], form: Callable[[str], str]
) -> list[str]:
    """The strings of ``ids`` in ``form``, through ``cache``."""
    if len(cache) > MAX_CACHED_STRINGS:
        cache.clear()
    strings = doc.vocab.strings
    out = []
    for i in ids:
        text = cache.get(i)
        if text is None:
            text = cache[i] = form(strings[i])
        out.append(text)
    return out


class TokenTable:
    """The attributes of one doc's tokens, by token index (see the module docstring)."""

    #: The table last built, per thread: the rules and the learned model read the same doc
    #: one after the other.
    _last = threading.local()

    def __init__(self, doc: Doc) -> None:
        self.doc = doc
        self._length = len(doc)
        self._ancestors: dict[int, tuple[int, ...]] = {}
        self._roots: dict[tuple[int, int], int] = {}
        self._names: dict[tuple[int, int], str] = {}

    @classmethod
    def of(cls, doc: Doc) -> TokenTable:
        """The table of ``doc``: the one last built in this thread when it was this doc's
        (a doc is not re-parsed between the extractors that read it)."""
        last = getattr(cls._last, "table", None)
        if last is None or last.doc is not doc or last._length != len(doc):
            last = cls._last.table = cls(doc)
        return cast(TokenTable, last)

    @cached_property
    def _columns(self) -> np.ndarray:
        return self.doc.to_array(_COLUMNS).reshape(self._length, len(_COLUMNS))

    @cached_property
    def lemmas(self) -> list[str]:
        """``token.lemma_.lower()``."""
        return _strings(self.doc, self._columns[:, 0].tolist(), _LOWER_LEMMAS, str.lower)

    @cached_property
    def deps(self) -> list[str]:
        """``token.dep_``."""
        return _strings(self.doc, self._columns[:, 1].tolist(), _LABELS, str)

    @cached_property
    def heads(self) -> list[int]:
        """``token.head.i`` (a root is its own head)."""
        # HEAD holds each head's offset from its token, as an unsigned integer.
        offsets = self._columns[:, 2].view(np.int64).tolist()
        return [i + offset for i, offset in enumerate(offsets)]

    @cached_property
    def spaces(self) -> list[bool]:
        """``token.is_space``."""
        return [bool(v) for v in self._columns[:, 3].tolist()]

    @cached_property
    def punct(self) -> list[str]:
        """``token.text`` of a punctuation token (``token.is_punct``), ``""`` of the others."""
        doc = self.doc
        return [doc[i].text if p else "" for i, p in enumerate(self._columns[:, 4].tolist())]

    @cached_property
    def _starts(self) -> list[int]:
        return [*self._columns[:, 5].tolist(), len(self.text)]

    @cached_property
    def text(self) -> str:
        """``doc.text``."""
        return self.doc.text

    def chars(self, start: int, end: int) -> str:
        """The text of tokens ``start`` to ``end`` (excluded), each with the whitespace after
        it (``"".join(t.text_with_ws for t in doc[start:end])``)."""
        return self.text[self._starts[start] : self._starts[end]] if start < end else ""

    @cached_property
    def _sentences(self) -> list[tuple[int, int, int]]:
        sentences: list[tuple[int, int, int]] = []
        for number, sentence in enumerate(self.doc.sents if len(self.doc) else ()):
            sentences += [(sentence.start, sentence.end, number)] * len(sentence)
        return sentences

    def sentence_of(self, i: int) -> tuple[int, int]:
        """``(start, end)`` of the sentence of token ``i``, as ``token.sent`` (and ``span.sent``
        of a span that starts there): ``doc.sents``, from a parse or a sentencizer.

        Raises:
            ValueError: the doc has no sentence boundaries (as ``token.sent`` does).
        """
        start, end, _ = self._sentences[i]
        return start, end

    def sentence_number(self, i: int) -> int:
        """The position of token ``i``'s sentence among ``doc.sents`` (0 for the first)."""
        return self._sentences[i][2]

    def ancestors(self, i: int) -> tuple[int, ...]:
        """Token ``i`` and its heads up to the root of its tree, nearest first."""
        chain = self._ancestors.get(i)
        if chain is not None:
            return chain
        heads = self.heads
        path = [i]  # up to the root or to a token whose chain is known
        chain = ()
        while (head := heads[path[-1]]) != path[-1]:
            known = self._ancestors.get(head)
            if known is not None:
                chain = known
                break
            path.append(head)
        for token in reversed(path):
            chain = (token, *chain)
            self._ancestors[token] = chain
        return chain

    @cached_property
    def trees(self) -> list[int]:
        """The root of each token's tree (the last of its :meth:`ancestors`)."""
        heads = self.heads
        roots = [-1] * len(heads)
        for i in range(len(heads)):
            path = []
            t = i
            while roots[t] < 0 and heads[t] != t:
                path.append(t)
                t = heads[t]
            root = t if roots[t] < 0 else roots[t]
            roots[t] = root
            for token in path:
                roots[token] = root
        return roots

    @cached_property
    def _children(self) -> list[tuple[int, ...]]:
        children: list[list[int]] = [[] for _ in self.heads]
        for child, head in enumerate(self.heads):
            if head != child:
                children[head].append(child)
        return [tuple(c) for c in children]

    def children(self, i: int) -> tuple[int, ...]:
        """The tokens whose head is token ``i``, in text order (``token.children``)."""
        return self._children[i]

    def name(self, span: Span) -> str:
        """``span.text.lower()``, remembered per extent (``span.text`` builds a ``Token`` per
        token)."""
        extent = (span.start, span.end)
        name = self._names.get(extent)
        if name is None:
            name = self._names[extent] = span.text.lower()
        return name

    def root(self, span: Span) -> int:
        """``span.root.i``, remembered per extent."""
        extent = (span.start, span.end)
        root = self._roots.get(extent)
        if root is None:
            root = self._roots[extent] = span.root.i
        return root
