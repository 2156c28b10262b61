"""Locate the data files kept in the project's top-level ``models/`` and ``viz/`` folders.

A built wheel carries them under ``graphmem/_data/`` (see ``pyproject.toml``); a source
checkout or editable install reads them in place.

Example:
    >>> asset_path("models", "README.md").name
    'README.md'
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["asset_path"]

_PACKAGE_DIR = Path(__file__).resolve().parent


def asset_path(*parts: str) -> Path:
    """Return the path of a bundled asset such as ``asset_path("viz", "graph.html")``.

    Raises:
        FileNotFoundError: when the asset is neither in the wheel nor in the checkout.
    """
    for base in (_PACKAGE_DIR / "_data", _PACKAGE_DIR.parent):
        candidate = base.joinpath(*parts)
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"graphmem asset {'/'.join(parts)!r} is missing from this install")
