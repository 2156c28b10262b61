"""Lint and type checks run as part of the test suite, so CI runs them with the tests."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_lint_is_clean() -> None:
    result = _run("ruff", "check", "graphmem", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    result = _run("ruff", "format", "--check", "graphmem", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_clean() -> None:
    result = _run("mypy", "graphmem")
    assert result.returncode == 0, result.stdout + result.stderr


def test_layering_contracts_are_kept() -> None:
    """The import-linter contracts of pyproject.toml (layers, NLP only in extract/, SQL only in
    store/) hold: a module importing across them fails this test."""
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint_imports), "--no-logo", "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for contract in (
        "Layers:",
        "Only extract/ runs NLP",
        "Only store/ speaks SQL",
        "The tiers are policy only",
        "The facade goes through the library APIs",
        "The CLI calls the library, never the store",
    ):
        # A long contract name wraps onto the next line of the report.
        kept = [line for line in " ".join(result.stdout.split()).split(" KEPT") if contract in line]
        assert kept, result.stdout
    assert "0 broken" in result.stdout, result.stdout
