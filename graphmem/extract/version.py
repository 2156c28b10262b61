"""The extraction version: which rules, data and code analysed a store's texts.

A store records the version that analysed it (``graphmem reanalyse`` renews it); opening a
store analysed by another version offers a re-analysis. The version is
:data:`PIPELINE_VERSION` (bump it with every change of the extraction code that changes what
it finds) and a hash of the data files under ``models/`` (the rules, patterns, gazetteers and
the learned model's manifest, whose SHA-256 sums cover its weights): editing a rule file
changes it by itself.

Example:
    >>> extraction_version().startswith(f"{PIPELINE_VERSION}.")
    True
"""

from __future__ import annotations

import functools
import hashlib

from .._assets import asset_path

__all__ = ["PIPELINE_VERSION", "extraction_version"]

#: Bumped with each change of the extraction code (extract/, index/) that changes what a
#: stored text yields.
PIPELINE_VERSION = 1
#: The data files of models/ that extraction reads (the weights are covered by their manifest).
_DATA_SUFFIXES = (".json", ".jsonl", ".txt")


@functools.cache
def extraction_version() -> str:
    """``"<PIPELINE_VERSION>.<12 hex digits of the models/ data files' hash>"``."""
    digest = hashlib.sha256()
    folder = asset_path("models")
    for path in sorted(folder.iterdir()):
        if path.suffix in _DATA_SUFFIXES and path.is_file():
            digest.update(path.name.encode("utf-8") + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return f"{PIPELINE_VERSION}.{digest.hexdigest()[:12]}"
