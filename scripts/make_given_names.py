"""Write models/given_names.json and models/surnames.json: common given names and surnames,
for the name-shape votes on entity types.

A name of two to four capitalised words whose first word is a common given name and whose
last is no organisation or place noun is shaped like a person's ("Amara Okoye", "Benedikt
Kraus"), whatever label the small model gave it; a name the model calls a person whose
first word is no given name and whose last is no surname is shaped like an organisation's
("Castellan Cycles", "Oriel Freightworks") (graphmem.extract.entity_types).

Sources (both MIT-licensed packages; the lists are name frequencies, no personal data):
- names 0.3.0: the 1990 US census first-name lists;
- Faker: the first names of its person providers of every locale written in the Latin
  alphabet (Benedikt, Tomasz, Arjun, Aoife, Kwame ...).

Words that are also English function words ("will", "may") are left out. Keys are lower case.
``female`` and ``male`` list the names of one gender's lists only (what "she" or "he" may
refer to; graphmem.extract.relations resolves pronouns with them).
The file's SHA-256 goes into models/gazetteer_manifest.json, checked at load.

Example:
    pip install -e '.[gazetteers]' && python scripts/make_given_names.py
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.metadata
import json
import pkgutil
import unicodedata
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "models" / "given_names.json"
SURNAMES_OUT = ROOT / "models" / "surnames.json"
MANIFEST = ROOT / "models" / "gazetteer_manifest.json"
_FAKER_ATTRIBUTES = (
    "first_names",
    "first_names_male",
    "first_names_female",
    "first_names_nonbinary",
    "first_romanized_names",
)


def _latin(word: str) -> bool:
    """Whether ``word`` is written in (extended) Latin letters, hyphens and apostrophes."""
    return bool(word) and all(
        ch in "-'" or (unicodedata.category(ch).startswith("L") and ord(ch) < 0x250) for ch in word
    )


def census_names() -> dict[str, set[str]]:
    """The census first names by gender: ``{"female": {...}, "male": {...}}``."""
    import names

    folder = Path(names.__file__).parent
    out: dict[str, set[str]] = {"female": set(), "male": set()}
    for gender in out:
        path = folder / f"dist.{gender}.first"
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out[gender].add(line.split()[0].lower())
    return out


def _values(value: object) -> Iterable[object]:
    if isinstance(value, dict):
        return value.keys()
    if isinstance(value, list | tuple | set | frozenset):
        return value
    return ()


def faker_names() -> dict[str, set[str]]:
    """Faker's first names of its Latin-script locales: ``"any"`` (every list), ``"female"``
    and ``"male"`` (the gendered lists)."""
    import faker.providers.person as person

    out: dict[str, set[str]] = {"any": set(), "female": set(), "male": set()}
    for module in pkgutil.iter_modules(person.__path__):
        provider = importlib.import_module(f"{person.__name__}.{module.name}").Provider
        for attribute in _FAKER_ATTRIBUTES:
            for name in _values(provider.__dict__.get(attribute)):
                if isinstance(name, str) and " " not in name and _latin(name):
                    out["any"].add(name.lower())
                    for gender in ("female", "male"):
                        if attribute.endswith(f"_{gender}"):
                            out[gender].add(name.lower())
    return out


def census_surnames() -> set[str]:
    import names

    path = Path(names.__file__).parent / "dist.all.last"
    return {
        line.split()[0].lower() for line in path.read_text(encoding="utf-8").splitlines() if line
    }


def faker_surnames() -> set[str]:
    import faker.providers.person as person

    out: set[str] = set()
    for module in pkgutil.iter_modules(person.__path__):
        provider = importlib.import_module(f"{person.__name__}.{module.name}").Provider
        for attribute in (
            "last_names",
            "last_names_male",
            "last_names_female",
            "last_romanized_names",
        ):
            for name in _values(provider.__dict__.get(attribute)):
                if isinstance(name, str) and " " not in name and _latin(name):
                    out.add(name.lower())
    return out


def _write(path: Path, payload: dict[str, object], manifest: dict[str, dict[str, str]]) -> None:
    text = json.dumps(payload, indent=0, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")
    manifest["files"][path.name] = hashlib.sha256(text.encode("utf-8")).hexdigest()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--surnames-out", type=Path, default=SURNAMES_OUT)
    ap.add_argument("--manifest", type=Path, default=MANIFEST)
    args = ap.parse_args(argv)
    from spacy.lang.en.stop_words import STOP_WORDS

    census, fake = census_names(), faker_names()
    every = census["female"] | census["male"] | fake["any"]
    found = {n for n in every if len(n) > 1 and n not in STOP_WORDS}
    gendered = {g: (census[g] | fake[g]) & found for g in ("female", "male")}
    # A name of one gender's lists only: what "she" or "he" may refer to.
    only = {
        "female": gendered["female"] - gendered["male"],
        "male": gendered["male"] - gendered["female"],
    }
    versions = {p: importlib.metadata.version(p) for p in ("names", "faker")}
    payload = {
        "description": "Common given names (lower case), generated by scripts/make_given_names.py "
        f"from names {versions['names']} (US census first names) and Faker {versions['faker']} "
        "(first names of its Latin-script locales), English stop words left out",
        "given_names": sorted(found),
        "female": sorted(only["female"]),
        "male": sorted(only["male"]),
    }
    manifest = json.loads(args.manifest.read_text(encoding="utf-8"))
    _write(args.out, payload, manifest)
    surnames = {n for n in census_surnames() | faker_surnames() if len(n) > 1} - STOP_WORDS
    _write(
        args.surnames_out,
        {
            "description": "Common surnames (lower case), generated by "
            f"scripts/make_given_names.py from names {versions['names']} (US census surnames) "
            f"and Faker {versions['faker']} (last names of its Latin-script locales)",
            "surnames": sorted(surnames),
        },
        manifest,
    )
    args.manifest.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    print(
        f"{len(found)} given names -> {args.out}; {len(surnames)} surnames -> {args.surnames_out}"
    )


if __name__ == "__main__":
    main()
