"""The shape the code keeps (issue 28): no module over 800 lines, no function over 80.

Long modules and functions are where a newcomer gets lost; when one grows past these limits,
split it by topic (see how ``extract/relations/`` or ``index/`` are laid out) rather than raise
the limit.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "graphmem"
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 80


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_the_package_is_where_the_test_looks() -> None:
    assert (PACKAGE / "cortex.py").is_file() and len(_modules()) > 50


def test_no_module_is_over_800_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE)): n
        for path in _modules()
        if (n := len(path.read_text("utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_no_function_is_over_80_lines() -> None:
    long = {}
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(PACKAGE)}:{node.name}"] = length
    assert long == {}
