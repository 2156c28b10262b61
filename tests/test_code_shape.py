"""The shape the code keeps (issue 28): no module over 800 lines, no function over 80, and
no underscore name imported from another module (issue 37).

Long modules and functions are where a newcomer gets lost; when one grows past these limits,
split it by topic (see how ``extract/relations/`` or ``index/`` are laid out) rather than raise
the limit. A helper another module uses is public inside its package (no underscore): a name
with one is the defining module's own, which it may change without looking further.
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


def _private_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            source = "." * node.level + (node.module or "")
            found.extend(
                f"{path.relative_to(PACKAGE)}:{node.lineno}: from {source} import {alias.name}"
                for alias in node.names
                if alias.name.startswith("_") and not alias.name.startswith("__")
            )
    return found


def test_no_module_imports_an_underscore_name_of_another() -> None:
    """``from .variants import _requirements`` reaches into another module's private names;
    a helper used across modules drops its underscore instead."""
    assert [line for path in _modules() for line in _private_imports(path)] == []


def test_the_underscore_check_sees_a_private_import(tmp_path: Path) -> None:
    module = PACKAGE / "extract" / "relations" / "variants.py"
    assert _private_imports(module) == []
    probe = PACKAGE / "_probe_for_the_shape_test.py"
    try:
        probe.write_text("from .items import _private\nfrom __future__ import annotations\n")
        assert _private_imports(probe) == [
            "_probe_for_the_shape_test.py:1: from .items import _private"
        ]
    finally:
        probe.unlink()


#: The tiers, the facade, the MCP server and the statistics work through the memory space's
#: unit of work (issue 37): they hold neither its database nor a connection.
_ABOVE_THE_SPACE = ("memories", "cortex.py", "task_results.py", "records.py", "aio.py", "stats.py")


def test_the_tiers_and_the_facade_hold_no_database_nor_connection() -> None:
    modules = [
        path
        for name in (*_ABOVE_THE_SPACE, "mcp")
        for path in (
            [PACKAGE / name] if name.endswith(".py") else sorted((PACKAGE / name).glob("*.py"))
        )
    ]
    assert len(modules) > 10
    found = [
        f"{path.relative_to(PACKAGE)}:{node.lineno}: .{node.attr}"
        for path in modules
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.Attribute) and node.attr in ("database", "connection")
    ]
    assert found == []
