"""SQL persistence: the schema, engine setup and the only code that writes SQL.

``Connection`` is SQLAlchemy's, re-exported so the layers above name a connection without
importing SQLAlchemy themselves (the layering contracts in pyproject.toml forbid that);
``DriverError`` is the root of the database driver's own errors (a full disk, a lock held
too long), which the command line reports as one line.
"""

from sqlalchemy import Connection
from sqlalchemy.exc import SQLAlchemyError as DriverError

from .database import Database, MemoryRow

__all__ = ["Connection", "Database", "DriverError", "MemoryRow"]
