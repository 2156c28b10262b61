"""The one exception hierarchy of graphmem.

Every error graphmem raises on purpose derives from :class:`GraphmemError`. Bad arguments
also derive from the matching built-in (``ValueError`` or ``TypeError``), so callers that
already catch those keep working.

Example:
    >>> try:
    ...     raise InvalidArgumentError("importance must be in [0, 1], got 2")
    ... except ValueError as exc:
    ...     print(exc)
    importance must be in [0, 1], got 2
"""

from __future__ import annotations

__all__ = [
    "AnalysisWorkerError",
    "DatabaseFileError",
    "EntityNotFound",
    "GraphmemError",
    "IndexRepairedWarning",
    "InvalidArgumentError",
    "InvalidArgumentTypeError",
    "MemoryClosedError",
    "MemoryNotFound",
    "SchemaVersionError",
    "StorageFullError",
]


class GraphmemError(Exception):
    """Root of every error graphmem raises on purpose."""


class InvalidArgumentError(GraphmemError, ValueError):
    """An argument has the right type but a value graphmem cannot accept."""


class InvalidArgumentTypeError(GraphmemError, TypeError):
    """An argument has the wrong type."""


class DatabaseFileError(GraphmemError):
    """A database file is not a graphmem database, or cannot be opened safely.

    The message names the file and the reason; the file is left unmodified.
    """


class SchemaVersionError(DatabaseFileError):
    """The database was written by a newer graphmem than this one."""


class AnalysisWorkerError(GraphmemError):
    """A worker process analysing texts ended before it finished (killed by a signal, or by
    the out-of-memory killer); the message says how, and what was stored before it."""


class StorageFullError(GraphmemError):
    """The disk holding the database is full: the write was rolled back, none of it stored.

    Reading still works (searches skip their access counts); free space and write again.
    """


class EntityNotFound(GraphmemError, KeyError):
    """A relationship query named an entity that the memory does not know."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class MemoryNotFound(GraphmemError, KeyError):
    """An id (a result id, a memory id) names nothing the memory holds."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class MemoryClosedError(GraphmemError, RuntimeError):
    """A call reached a memory that was closed (``AsyncCortexMemory.aclose``)."""


class IndexRepairedWarning(UserWarning):
    """A derived index (the full-text index of the stored texts) was found damaged and
    rebuilt from the rows; nothing stored was lost."""
