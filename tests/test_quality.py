"""Lint and type checks run as part of the test suite, so CI runs them with the tests."""

import subprocess
import sys
import tomllib
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


def test_the_contracts_count_type_only_imports_and_cover_mcp_and_stats() -> None:
    """A layer may not name a store type even under ``TYPE_CHECKING`` (issue 37), and the MCP
    server and the statistics go through the library APIs like the facade."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["importlinter"]
    assert not config.get("exclude_type_checking_imports", False)
    facade = next(c for c in config["contracts"] if c["name"].startswith("The facade"))
    assert {"graphmem.mcp", "graphmem.stats"} <= set(facade["source_modules"])
    layers = next(c for c in config["contracts"] if c["type"] == "layers")["layers"]
    assert {"graphmem.mcp", "graphmem.stats", "graphmem.reference"} <= set(layers)
