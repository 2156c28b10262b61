"""Output files written whole or not at all: a temporary file beside the target, renamed.

A writer killed mid-way (even by SIGKILL, which runs no cleanup) leaves only its temporary
``.<name>.<random>.partial`` file, which the next write of the same target removes: each
writer holds a lock on its temporary file while it writes, so a file whose lock can be taken
belongs to a writer that is gone.

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> with replacing(folder / "out.txt") as partial:
    ...     _ = partial.write_text("all of it")
    >>> sorted(p.name for p in folder.iterdir())
    ['out.txt']
"""

from __future__ import annotations

import fcntl
import glob
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["PARTIAL_SUFFIX", "remove_abandoned_partials", "replacing"]

PARTIAL_SUFFIX = ".partial"


@contextmanager
def replacing(out: Path) -> Iterator[Path]:
    """A new temporary file beside ``out`` that replaces ``out`` when the block succeeds.

    On any error, Ctrl-C included, it is removed and ``out`` is left as it was: no half
    written output and no ``.partial`` file remain. One left by a killed writer is removed
    by the next :func:`replacing` of the same ``out``.
    """
    out = Path(out)
    remove_abandoned_partials(out)
    fd, partial = _new_locked_partial(out)
    try:
        yield partial
        umask = os.umask(0)
        os.umask(umask)
        partial.chmod(0o666 & ~umask)  # the mode a plain new file gets, not mkstemp's 0600
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)
        os.close(fd)


def _new_locked_partial(out: Path) -> tuple[int, Path]:
    """A new ``.partial`` file beside ``out``, locked by this process (its open descriptor).

    Another writer's :func:`remove_abandoned_partials` may take a new file's lock and remove it
    in the moment before it is locked here: then this makes another one.
    """
    while True:
        fd, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=PARTIAL_SUFFIX, dir=out.parent)
        fcntl.flock(fd, fcntl.LOCK_EX)  # released when the process ends, however it ends
        try:
            still_ours = os.stat(name).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            still_ours = False
        if still_ours:
            return fd, Path(name)
        os.close(fd)


def remove_abandoned_partials(out: Path) -> list[Path]:
    """Remove the temporary files of writers of ``out`` that are gone; returns them."""
    removed = []
    out = Path(out)
    for candidate in out.parent.glob(f".{glob.escape(out.name)}.*{PARTIAL_SUFFIX}"):
        try:
            fd = os.open(candidate, os.O_RDONLY)
        except OSError:
            continue  # removed meanwhile
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # its writer is still at work
        else:
            candidate.unlink(missing_ok=True)
            removed.append(candidate)
        finally:
            os.close(fd)
    return removed
