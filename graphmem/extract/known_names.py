"""The names a memory already knows, found again in any text, without a language model.

A name of several words, or one with capitals inside ("OpenAI"), matches case-insensitively; a
one-word name matches as written, and in capitals for anything but a person ("ACME" is Acme; a
person called "Will" never matches the verb "will"). Words are the ones :func:`name_tokens`
cuts, for the names and the texts alike, so a query needs no spaCy pipeline.

Example:
    >>> names = KnownNames()
    >>> names.add("Acme Corp", "ORG"); names.add("Alice Johnson", "PERSON")
    >>> text = "Did alice johnson sign with ACME Corp.?"
    >>> [(text[s:e], label) for s, e, label in names.find(text)]
    [('alice johnson', 'PERSON'), ('ACME Corp', 'ORG'), ('ACME', 'ORG')]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .normalize import CORPORATE_SUFFIXES, is_valid_entity_text

__all__ = ["MAX_NAME_WORDS", "KnownNames", "name_tokens"]

#: Longest known name matched, in words.
MAX_NAME_WORDS = 8
# A dotted acronym ("U.S."), a run of letters and digits, or one other character.
_TOKEN = re.compile(r"(?:[^\W\d_]\.){2,}|\w+|[^\w\s]", re.UNICODE)


def name_tokens(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` character offsets of the words of ``text``.

    Example:
        >>> text = "Acme's U.S. office"
        >>> [text[s:e] for s, e in name_tokens(text)]
        ['Acme', "'", 's', 'U.S.', 'office']
    """
    return [(m.start(), m.end()) for m in _TOKEN.finditer(text)]


@dataclass
class KnownNames:
    """A set of known names with their labels; :meth:`find` lists where they occur."""

    #: Lower-cased word sequences of names matched case-insensitively -> label.
    _folded: dict[tuple[str, ...], str] = field(default_factory=dict)
    #: One-word names as they must be written -> label.
    _exact: dict[str, str] = field(default_factory=dict)
    _known: set[str] = field(default_factory=set)
    #: label of each name taught, by the name and its lower-case form.
    labels: dict[str, str] = field(default_factory=dict)

    def add(self, surface: str, label: str) -> None:
        """Teach one name (and its form without a legal suffix: "Acme Corp." -> "Acme")."""
        if surface in self._known or not is_valid_entity_text(surface):
            return
        self._known.add(surface)
        words = [surface[s:e] for s, e in name_tokens(surface)]
        if not words or len(words) > MAX_NAME_WORDS:
            return
        self.labels[surface.lower()] = label
        self.labels[surface] = label
        if len(words) > 1 or any(ch.isupper() for ch in surface[1:]):
            self._folded.setdefault(tuple(w.lower() for w in words), label)
        else:
            self._exact.setdefault(surface, label)
            if label != "PERSON" and surface.upper() != surface:
                # "ACME" is the company "Acme"; capitals alone never make a common word a name.
                self._exact.setdefault(surface.upper(), label)
        short = _without_legal_form(surface, words)
        if short is not None:
            self.add(short, label)

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """Every occurrence of a known name in ``text``, as ``(start, end, label)``, in text
        order (an occurrence may lie inside a longer one)."""
        tokens = name_tokens(text)
        words = [text[s:e] for s, e in tokens]
        folded = [w.lower() for w in words]
        out: list[tuple[int, int, str]] = []
        for i in range(len(tokens)):
            for n in range(min(MAX_NAME_WORDS, len(tokens) - i), 0, -1):
                label = self._folded.get(tuple(folded[i : i + n]))
                if label is None and n == 1:
                    label = self._exact.get(words[i])
                if label is not None:
                    out.append((tokens[i][0], tokens[i + n - 1][1], label))
        return out

    def __contains__(self, surface: object) -> bool:
        return surface in self._known


def _without_legal_form(surface: str, words: list[str]) -> str | None:
    """``surface`` without its trailing legal form ("Acme Corp." -> "Acme"), or None."""
    tokens = name_tokens(surface)
    end = len(words)
    while end > 1 and (
        not words[end - 1][:1].isalnum()
        or words[end - 1].lower() in {"&", "and"}
        or words[end - 1].lower().replace(".", "") in CORPORATE_SUFFIXES
    ):
        end -= 1
    return surface[: tokens[end - 1][1]] if end < len(words) else None
