"""Canonical keys for entity names and the junk-span filter."""

from __future__ import annotations

import doctest
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem._assets import asset_path
from graphmem.extract import normalize
from graphmem.extract.normalize import canonical_key, is_valid_entity_text, may_be_one_entity


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


class TestWellKnownAliases:
    @pytest.mark.parametrize(
        "surface",
        [
            "U.S.",
            "US",
            "USA",
            "U.S.A.",
            "United States",
            "the United States of America",
            "the U.S.",
        ],
    )
    def test_names_of_the_united_states_share_a_key(self, surface: str) -> None:
        assert canonical_key(surface) == "united states"

    @pytest.mark.parametrize(
        ("surface", "key"), [("us", "us"), ("Us", "us"), ("U.S. Steel", "us steel")]
    )
    def test_capital_aliases_need_capitals(self, surface: str, key: str) -> None:
        assert canonical_key(surface) == key

    def test_capitals_make_a_pronoun_a_name(self) -> None:
        assert is_valid_entity_text("US") and is_valid_entity_text("WHO")
        assert not is_valid_entity_text("us") and not is_valid_entity_text("Who")

    def test_every_alias_of_the_data_file_keys_as_its_name(self) -> None:
        table = json.loads(asset_path("models", "well_known_aliases.json").read_text("utf-8"))
        names = {name: aliases for name, aliases in table.items() if not name.startswith("_")}
        assert len(names) >= 10
        for name, aliases in names.items():
            for alias in aliases:
                assert canonical_key(alias) == canonical_key(name), alias


class TestMayBeOneEntity:
    @pytest.mark.parametrize(
        ("a", "b", "expected"),
        [
            (("GPE", "berlin"), ("PERSON", "leslie berlin"), False),
            (("PERSON", "leslie berlin"), ("LOC", "berlin"), False),
            (("PERSON", "berlin"), ("GPE", "berlin"), False),
            (("FAC", "stone"), ("PERSON", "bob stone"), False),
            (("ORG", "stone"), ("PERSON", "bob stone"), True),  # NER's lone-name guess
            (("NORP", "alice"), ("PERSON", "alice johnson"), True),
            (("ORG", "acme"), ("PERSON", "alice johnson"), False),
            (("ORG", "stone labs"), ("PERSON", "bob stone"), False),
            (("ORG", "apple"), ("GPE", "apple"), True),
            (("PERSON", "alice"), ("PERSON", "alice johnson"), True),
            (("ENTITY", "atlas"), ("PERSON", "atlas"), True),
        ],
    )
    def test_pairs(self, a: tuple[str, str], b: tuple[str, str], expected: bool) -> None:
        assert may_be_one_entity(*a, *b) is expected
        assert may_be_one_entity(*b, *a) is expected  # symmetric
