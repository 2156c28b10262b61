"""Canonical keys for entity names and the junk-span filter."""

from __future__ import annotations

import doctest

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.extract import normalize
from graphmem.extract.normalize import canonical_key, is_valid_entity_text


class TestCanonicalKey:
    @pytest.mark.parametrize(
        ("surface", "key"),
        [
            ("Acme Corp.", "acme"),
            ("Acme Corporation", "acme"),
            ("Acme, Inc.", "acme"),
            ("ACME INC", "acme"),
            ("Acme Ltd", "acme"),
            ("Acme LLC", "acme"),
            ("Acme GmbH", "acme"),
            ("Acme PLC", "acme"),
            ("Acme Co.", "acme"),
            ("Acme S.A.", "acme"),
            ("Acme AG", "acme"),
            ("Samsung Electronics Co., Ltd.", "samsung electronics"),
            ("The Walt Disney Company", "walt disney company"),
            ("the Sierra Club", "sierra club"),
            ("Alice's", "alice"),
            ("Alice\u2019s", "alice"),
            ("ALICE  johnson", "alice johnson"),
            ("  Alice\tJohnson\n", "alice johnson"),
            ("Coca-Cola", "coca cola"),
            ("U.S. Steel", "us steel"),
            ("Johnson & Johnson", "johnson and johnson"),
            ("\uff21\uff43\uff4d\uff45", "acme"),  # full-width letters, NFKC
            ("STRASSE", "strasse"),
            ("Stra\u00dfe", "strasse"),  # case folding, not just lowering
            ("Nestl\u00e9", "nestl\u00e9"),  # accents are kept
        ],
    )
    def test_examples(self, surface: str, key: str) -> None:
        assert canonical_key(surface) == key

    @pytest.mark.parametrize("surface", ["Inc.", "The", "Co", "The Inc"])
    def test_never_empty_when_there_are_letters(self, surface: str) -> None:
        assert canonical_key(surface) != ""

    def test_the_alone_is_kept(self) -> None:
        assert canonical_key("The") == "the"

    def test_variants_share_a_key(self) -> None:
        variants = ["Initech", "Initech, Inc.", "INITECH Corp", "the Initech", "Initech's"]
        assert {canonical_key(v) for v in variants} == {"initech"}

    @given(st.text(min_size=1, max_size=40))
    def test_non_empty_for_any_text_with_letters(self, surface: str) -> None:
        key = canonical_key(surface)
        if any(ch.isalpha() for ch in surface):
            assert key != ""
        assert key == key.strip()
        assert "  " not in key

    @given(st.text(max_size=40))
    def test_idempotent_on_its_output(self, surface: str) -> None:
        key = canonical_key(surface)
        if key and all(word not in {"the", *normalize.CORPORATE_SUFFIXES} for word in key.split()):
            assert canonical_key(key) == key


class TestIsValidEntityText:
    @pytest.mark.parametrize("text", ["Alice", "Acme Corp.", "3M", "IBM", "New York", "Zo\u00eb"])
    def test_accepts_names(self, text: str) -> None:
        assert is_valid_entity_text(text)

    @pytest.mark.parametrize(
        "text",
        [
            "",
            "   ",
            "--",
            "1999",
            "42.5",
            "X",
            "x.",
            "She",
            "they",
            "The",
            "https://acme.example/about",
            "www.acme.example",
            "alice@acme.example",
        ],
    )
    def test_rejects_junk(self, text: str) -> None:
        assert not is_valid_entity_text(text)


def test_doctests() -> None:
    result = doctest.testmod(normalize)
    assert result.failed == 0
    assert result.attempted > 0
