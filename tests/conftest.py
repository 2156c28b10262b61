"""Shared fixtures: small on purpose (other test modules add their own)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _viz_pages import browser as browser  # the session's headless Chromium (viz tests)


@pytest.fixture
def db_file(tmp_path: Path) -> str:
    """Path of a SQLite file (not yet created) in this test's temporary directory."""
    return str(tmp_path / "memory.db")


@pytest.fixture(scope="session")
def demo_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The database ``graphmem demo`` builds (``build_demo_database``), built once per test
    process and closed; a test copies it (``_stores.copy_database``) rather than write to it."""
    from graphmem.demo import build_demo_database

    db = tmp_path_factory.mktemp("demo-once") / "demo.db"
    storage, count = build_demo_database(db)
    storage.close()
    assert count > 250
    return db


@pytest.fixture
def write_memory_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Persistence allowed: ``WRITE_MEMORY=1`` for this test only."""
    monkeypatch.setenv("WRITE_MEMORY", "1")


@pytest.fixture
def write_memory_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Persistence not allowed: ``WRITE_MEMORY`` unset for this test only."""
    monkeypatch.delenv("WRITE_MEMORY", raising=False)


# ---------------------------------------------------------------------------------------------
# Database backends (PostgreSQL). Owned by the PostgreSQL work; keep other fixtures above.
#
# ``storage_url`` runs a test once per backend: a fresh SQLite file, and a fresh schema on the
# PostgreSQL server named by GRAPHMEM_TEST_PG_URL (those runs carry the ``postgres`` marker).
# Without the URL the PostgreSQL runs skip locally and FAIL when ``CI`` is set, so CI never
# passes by skipping. ``--backend sqlite|postgresql`` keeps one backend; ``-m postgres`` too.
# ---------------------------------------------------------------------------------------------
PG_URL_ENV = "GRAPHMEM_TEST_PG_URL"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend",
        choices=("all", "sqlite", "postgresql"),
        default="all",
        help="database backend of the storage_url tests (default: all)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    backend = config.getoption("--backend")
    if backend == "all":
        return
    keep, drop = [], []
    for item in items:
        on_pg = item.get_closest_marker("postgres") is not None
        uses_backend = on_pg or "storage_url" in getattr(item, "fixturenames", ())
        if uses_backend and on_pg != (backend == "postgresql"):
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(scope="session")
def pg_server_url() -> str:
    """GRAPHMEM_TEST_PG_URL; fails under CI when missing, skips otherwise."""
    import os

    url = os.environ.get(PG_URL_ENV, "")
    if not url:
        message = f"{PG_URL_ENV} is not set (start a server: scripts/pg_test_server.sh start DIR)"
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but {message}", pytrace=False)
        pytest.skip(message)
    return url


@pytest.fixture
def pg_url(pg_server_url: str) -> Iterator[str]:
    """A URL whose connections work in a new, empty schema (dropped after the test)."""
    from graphmem.store.postgres import temporary_schema

    with temporary_schema(pg_server_url, "gm_test") as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def storage_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty database: a SQLite file path, or a PostgreSQL URL (fresh schema)."""
    if request.param == "sqlite":
        return str(tmp_path / "backend.db")
    return str(request.getfixturevalue("pg_url"))
