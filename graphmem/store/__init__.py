"""SQL persistence: the schema, engine setup and the only code that writes SQL.

``Connection`` is SQLAlchemy's, re-exported so the layers above name a connection without
importing SQLAlchemy themselves (the layering contracts in pyproject.toml forbid that);
``DriverError`` is the root of the database driver's own errors (a full disk, a lock held
too long), which the command line reports as one line.

Where the SQL is, by topic: :mod:`.database` (the :class:`Database`: the engine, transactions
and their callbacks, the graph generation, the dialect, and the two statements whose forgotten
words it scrubs at commit: deleting and rewriting texts), :mod:`.memory_rows` (tier items:
inserting, finding, listing, counting, updating), :mod:`.text_rows` (texts and the full-text
search), :mod:`.kv_rows` (key-value rows), :mod:`.query_text` (search terms),
:mod:`.graph_rows` (entities, aliases, relations, evidence; it re-exports :mod:`.batch_rows`,
:mod:`.label_rows` and :mod:`.merge_rows`), :mod:`.derived_rows`, :mod:`.ranking_rows`,
:mod:`.reanalysis_rows`, :mod:`.mcp_rows`, :mod:`.dump`, :mod:`.migrations`; what differs
between backends is in :mod:`.dialects`. One call style: a statement is a function of the
caller's connection (``memory_rows.count(conn, ["long_term"])``), and a function that needs
the backend asks the connection (:func:`.dialects.dialect_of`), as the database asks its
engine.
"""

from sqlalchemy import Connection
from sqlalchemy.exc import SQLAlchemyError as DriverError

from .database import Database

__all__ = ["Connection", "Database", "DriverError"]
