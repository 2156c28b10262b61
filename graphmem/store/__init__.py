"""SQL persistence: the schema, engine setup and the only code that writes SQL.

``Connection`` is SQLAlchemy's, re-exported so the layers above name a connection without
importing SQLAlchemy themselves (the layering contracts in pyproject.toml forbid that).
"""

from sqlalchemy import Connection

from .database import Database, MemoryRow

__all__ = ["Connection", "Database", "MemoryRow"]
