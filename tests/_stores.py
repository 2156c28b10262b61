"""Stores built once and copied: a test that needs a store like another's copies the file."""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = ["copy_database"]


def copy_database(source: Path, target: Path) -> Path:
    """Copy the SQLite file ``source`` (closed) with its WAL files, if any, to ``target``."""
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{source}{suffix}").exists():
            shutil.copyfile(f"{source}{suffix}", f"{target}{suffix}")
    return target
