"""The first stage's features of a mention pair of one sentence (dependency path, words
between, labels, distance) and the pairs it scores.

Each feature reads a doc through a :class:`~graphmem.extract.token_table.TokenTable` (lemmas,
labels and heads as lists, read once per doc): the public functions build one for their doc;
the extractor builds one per doc and shares it between all the pairs.

Example:
    >>> _bucket(7)
    '6-10'
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from spacy.tokens import Span, Token

from ..token_table import TokenTable

#: Mentions further apart than this many tokens are not paired (few relations span more).
MAX_TOKEN_DISTANCE = 40
#: Dependency paths longer than this many edges are summarised as ``long``.
MAX_PATH_EDGES = 6


def dependency_path(a: Token, b: Token) -> tuple[str, str]:
    """The path from ``a`` up to the common ancestor and down to ``b``: ``(with lemmas,
    labels only)``.

    Example:
        >>> import spacy
        >>> from spacy.tokens import Doc
        >>> doc = Doc(spacy.blank("en").vocab, words=["Ann", "works", "at", "Acme"],
        ...           heads=[1, 1, 1, 2], deps=["nsubj", "ROOT", "prep", "pobj"],
        ...           lemmas=["Ann", "work", "at", "Acme"])
        >>> dependency_path(doc[0], doc[3])
        ('nsubj^ work prep_ at pobj_', 'nsubj^ prep_ pobj_')
    """
    return _dependency_path(TokenTable.of(a.doc), a.i, b.i)


def _dependency_path(table: TokenTable, a: int, b: int) -> tuple[str, str]:
    up, down = table.ancestors(a), table.ancestors(b)
    down_ids = {t: n for n, t in enumerate(down)}
    n_up = next((n for n, t in enumerate(up) if t in down_ids), None)
    if n_up is None:  # not one tree: a span across a sentence boundary
        return "none", "none"
    n_down = down_ids[up[n_up]]
    if n_up + n_down > MAX_PATH_EDGES:
        return "long", "long"
    deps, lemmas, heads = table.deps, table.lemmas, table.heads
    words: list[str] = []
    labels: list[str] = []
    for t in up[:n_up]:
        labels.append(f"{deps[t]}^")
        words += [f"{deps[t]}^", lemmas[heads[t]]]
    for t in reversed(down[:n_down]):
        labels.append(f"{deps[t]}_")
        words += [f"{deps[t]}_", lemmas[t]]
    if words:
        words.pop()  # b itself is named by its label, not its lemma
    return " ".join(words), " ".join(labels)


def path_tokens(a: Token, b: Token) -> list[Token]:
    """The tokens on the dependency path from ``a`` to ``b``, both ends excluded.

    Example:
        >>> import spacy
        >>> from spacy.tokens import Doc
        >>> doc = Doc(spacy.blank("en").vocab, words=["Ann", "works", "at", "Acme"],
        ...           heads=[1, 1, 1, 2], deps=["nsubj", "ROOT", "prep", "pobj"])
        >>> [t.text for t in path_tokens(doc[0], doc[3])]
        ['works', 'at']
    """
    return [a.doc[i] for i in path_between(TokenTable.of(a.doc), a.i, b.i)]


def path_between(table: TokenTable, a: int, b: int) -> list[int]:
    """The indices of :func:`path_tokens`, in text order."""
    up, down = table.ancestors(a), table.ancestors(b)
    down_ids = set(down)
    n_up = next((n for n, t in enumerate(up) if t in down_ids), len(up))
    common = up[n_up] if n_up < len(up) else None
    n_down = next((n for n, t in enumerate(down) if t == common), len(down))
    inner = up[1 : n_up + 1] + down[1:n_down]
    return sorted(t for t in inner if t not in (a, b))


def _bucket(distance: int) -> str:
    for limit, name in ((0, "0"), (1, "1"), (2, "2"), (5, "3-5"), (10, "6-10"), (20, "11-20")):
        if distance <= limit:
            return name
    return "21+"


def pair_features(a: Span, b: Span, entities_between: int = 0) -> list[str]:
    """Feature names of the mention pair ``a``, ``b`` (``a`` starts first, same sentence).

    Example:
        >>> import spacy
        >>> from spacy.tokens import Doc, Span
        >>> doc = Doc(spacy.blank("en").vocab, words=["Ann", "works", "at", "Acme"],
        ...           heads=[1, 1, 1, 2], deps=["nsubj", "ROOT", "prep", "pobj"],
        ...           lemmas=["Ann", "work", "at", "Acme"])
        >>> features = pair_features(Span(doc, 0, 1, "PERSON"), Span(doc, 3, 4, "ORG"))
        >>> [f for f in features if f.startswith(("types=", "path="))]
        ['types=PERSON|ORG', 'path=nsubj^ work prep_ at pobj_']
    """
    return table_pair_features(TokenTable.of(a.doc), a, b, entities_between)


def table_pair_features(table: TokenTable, a: Span, b: Span, entities_between: int) -> list[str]:
    lemmas, deps, heads = table.lemmas, table.deps, table.heads
    types = f"{a.label_}|{b.label_}"
    root1, root2 = table.root(a), table.root(b)
    path, labels = _dependency_path(table, root1, root2)
    between = [lemmas[i] for i in range(a.end, b.start) if not table.spaces[i]]
    sentence_start, sentence_end = table.sentence_of(a.start)
    features = [
        f"types={types}",
        f"path={path}",
        f"tpath={types}|{path}",
        f"dpath={labels}",
        f"tdpath={types}|{labels}",
        f"dist={_bucket(len(between))}",
        f"tdist={types}|{_bucket(len(between))}",
        f"between_ents={min(entities_between, 3)}",
        f"head1={lemmas[root1]}",
        f"head2={lemmas[root2]}",
        f"gov1={deps[root1]}:{lemmas[heads[root1]]}",
        f"gov2={deps[root2]}:{lemmas[heads[root2]]}",
        f"before1={lemmas[a.start - 1] if a.start > sentence_start else '<s>'}",
        f"after2={lemmas[b.end] if b.end < sentence_end else '</s>'}",
    ]
    if len(between) <= 4:
        features.append(f"tbetween={types}|{' '.join(between)}")
    if len(between) <= 10:
        features += [f"bw={w}" for w in dict.fromkeys(between)]
    return features


#: Dependencies by which a word on the path between two mentions takes its own argument.
ARGUMENT_DEPS = frozenset({"nsubj", "nsubjpass", "dobj"})


def _nearness(table: TokenTable, x: Span, y: Span) -> tuple[int, int]:
    """How near ``x`` is to ``y``: dependency edges between their roots, then tokens between."""
    gap = y.start - x.end if x.start < y.start else x.start - y.end
    return len(path_between(table, table.root(x), table.root(y))) + 1, gap


def competing_mention(a: Span, b: Span, roots: Mapping[int, Span]) -> Span | None:
    """Another mention, labelled like one end, that is the subject or object of a word on the
    dependency path between ``a`` and ``b`` and nearer the other end (dependency edges, then
    tokens): that word relates it, not the far end. "Priya met Tom Becker from Aurex": ``met``
    takes Tom Becker as its object, nearer Aurex than Priya, so Priya and Aurex are no
    candidate; "Lena is leaving for Harbor; Dana agreed": ``leaving`` has Lena as subject, so
    Dana and Harbor are none. ``roots``: root token index -> mention, for the doc's mentions.

    Example:
        >>> import spacy
        >>> from spacy.tokens import Doc, Span
        >>> doc = Doc(spacy.blank("en").vocab, words=["Ann", "met", "Bob", "from", "Acme"],
        ...           heads=[1, 1, 1, 1, 3], deps=["nsubj", "ROOT", "dobj", "prep", "pobj"])
        >>> ann, bob = Span(doc, 0, 1, "PERSON"), Span(doc, 2, 3, "PERSON")
        >>> acme = Span(doc, 4, 5, "ORG")
        >>> roots = {0: ann, 2: bob, 4: acme}
        >>> competing_mention(ann, acme, roots).text
        'Bob'
        >>> competing_mention(bob, acme, roots) is None
        True
    """
    return _competing_mention(TokenTable.of(a.doc), a, b, roots)


def _competing_mention(
    table: TokenTable, a: Span, b: Span, roots: Mapping[int, Span]
) -> Span | None:
    root1, root2 = table.root(a), table.root(b)
    inner = path_between(table, root1, root2)
    on_path = {*inner, root1, root2}
    for token in inner:
        for child in table.children(token):
            other = roots.get(child)
            if other is None or table.deps[child] not in ARGUMENT_DEPS or child in on_path:
                continue
            if table.name(other) in (table.name(a), table.name(b)):
                continue
            for end, far in ((a, b), (b, a)):
                if other.label_ == end.label_ and _nearness(table, other, far) < _nearness(
                    table, end, far
                ):
                    return other
    return None


def mention_pairs(spans: Sequence[Span]) -> Iterator[tuple[Span, Span, int]]:
    """``(a, b, entities between)`` for each two non-overlapping spans of one sentence, ``a``
    first, at most :data:`MAX_TOKEN_DISTANCE` tokens apart, and no :func:`competing_mention`
    between them (with a parse); in text order."""
    if spans:
        yield from table_mention_pairs(TokenTable.of(spans[0].doc), spans)


def table_mention_pairs(
    table: TokenTable, spans: Sequence[Span]
) -> Iterator[tuple[Span, Span, int]]:
    ordered = sorted(spans, key=lambda s: (s.start, s.end))
    parsed = table.doc.has_annotation("DEP")
    roots = {table.root(s): s for s in ordered} if parsed else {}
    for i, a in enumerate(ordered):
        sentence_end = table.sentence_of(a.start)[1]
        for j in range(i + 1, len(ordered)):
            b = ordered[j]
            if b.start - a.end > MAX_TOKEN_DISTANCE or b.end > sentence_end:
                break
            if b.start < a.end:
                continue  # overlapping or nested: not two things
            if parsed and _competing_mention(table, a, b, roots) is not None:
                continue
            between = sum(1 for s in ordered[i + 1 : j] if s.start >= a.end and s.end <= b.start)
            yield a, b, between
