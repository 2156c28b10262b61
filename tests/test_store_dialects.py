"""The backend dialects (graphmem/store/dialects/): one module per backend, found by name."""

from __future__ import annotations

import pytest

from graphmem.store import Database
from graphmem.store.dialects import dialect_for, dialect_of, postgresql, sqlite


def test_each_backend_is_the_module_of_its_name() -> None:
    assert dialect_for("sqlite") is sqlite.DIALECT
    assert dialect_for("postgresql") is postgresql.DIALECT
    assert {d.name for d in (sqlite.DIALECT, postgresql.DIALECT)} == {"sqlite", "postgresql"}


@pytest.mark.parametrize("name", ["mysql", "oracle", "sqlite.x", ""])
def test_an_unknown_backend_is_named(name: str) -> None:
    with pytest.raises(NotImplementedError, match="does not support"):
        dialect_for(name)


def test_the_database_picks_its_dialect_once(storage_url: str) -> None:
    db = Database(storage_url)
    try:
        with db.read() as conn:
            assert dialect_of(conn) is db.dialect
        assert db.dialect.name == db.engine.dialect.name
    finally:
        db.close()


def test_the_old_postgres_module_still_has_its_names() -> None:
    from graphmem.store import postgres

    assert postgres.temporary_schema is postgresql.temporary_schema
    assert postgres.tsquery_terms(["o'brien"]) == ["'o''brien'"]
