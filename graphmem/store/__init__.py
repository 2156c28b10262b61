"""SQL persistence: the schema, engine setup and the only code that writes SQL.

``Connection`` is SQLAlchemy's, re-exported so the layers above name a connection without
importing SQLAlchemy themselves (the layering contracts in pyproject.toml forbid that);
``DriverError`` is the root of the database driver's own errors (a full disk, a lock held
too long), which the command line reports as one line.

Where the SQL is, by topic: :mod:`.database` (the :class:`Database`: transactions, memory rows
of the tiers), :mod:`.memory_rows` and :mod:`.query_text` (their row types and search terms),
:mod:`.graph_rows` (entities, aliases, relations, evidence; it re-exports :mod:`.batch_rows`,
:mod:`.label_rows` and :mod:`.merge_rows`), :mod:`.derived_rows`, :mod:`.ranking_rows`,
:mod:`.reanalysis_rows`, :mod:`.dump`, :mod:`.migrations`; what differs between backends is
in :mod:`.dialects`. Two call styles, one rule: what needs the database object (its
transaction and callbacks, its dialect, scrubbing forgotten text) and the memory rows the
tiers use are :class:`Database` methods; the graph's rows are module functions. Both take
the caller's connection, and a function that needs the backend asks the connection
(:func:`.dialects.dialect_of`), as the database asks its engine.
"""

from sqlalchemy import Connection
from sqlalchemy.exc import SQLAlchemyError as DriverError

from .database import Database

__all__ = ["Connection", "Database", "DriverError"]
