"""SQL persistence: the schema, engine setup and the only code that writes SQL."""

from .database import Database, MemoryRow

__all__ = ["Database", "MemoryRow"]
