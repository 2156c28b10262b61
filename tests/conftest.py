"""Shared fixtures: small on purpose (other test modules add their own)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def db_file(tmp_path: Path) -> str:
    """Path of a SQLite file (not yet created) in this test's temporary directory."""
    return str(tmp_path / "memory.db")


@pytest.fixture
def write_memory_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Persistence allowed: ``WRITE_MEMORY=1`` for this test only."""
    monkeypatch.setenv("WRITE_MEMORY", "1")


@pytest.fixture
def write_memory_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Persistence not allowed: ``WRITE_MEMORY`` unset for this test only."""
    monkeypatch.delenv("WRITE_MEMORY", raising=False)
