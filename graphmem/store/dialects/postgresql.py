"""PostgreSQL specifics: schema extras, the start-up lock, full-text search and sequences.

The tables are the same SQLAlchemy schema as on SQLite. PostgreSQL adds:

- stored generated columns ``texts.full_tsv`` (``to_tsvector('english', head || ' ' || body)``)
  and ``texts.body_tsv`` (the body only, what a ``"body"`` tier item shows) with GIN indexes,
  the counterpart of SQLite's FTS5 table (English stemming like FTS5's porter tokenizer; the
  english configuration also drops its own stop words);
- a transaction-level advisory lock held while the schema is created, so several processes
  opening a new database at once do not race on ``CREATE TABLE``;
- :func:`search_statement`: an OR of the query's terms (``to_tsquery`` over quoted lexemes,
  bound parameters only), keeping only matching rows, scored like BM25: the sum over matched
  terms of the term's IDF times its ``ts_rank`` (length-normalised frequency).

Example:
    >>> tsquery_terms(["acme", "o'brien"])
    ["'acme'", "'o''brien'"]
    >>> POSTGRESQL.name
    'postgresql'
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    Float,
    Select,
    bindparam,
    cast,
    create_engine,
    func,
    literal_column,
    select,
    text,
    true,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.schema import CreateSchema, DropSchema

from .. import schema
from ..memory_rows import row_conditions
from ..query_text import query_terms
from . import Dialect

__all__ = [
    "DIALECT",
    "POSTGRESQL",
    "PostgreSQLDialect",
    "FTS_CONFIG",
    "DEDUPE_LOCK_KEY",
    "INIT_LOCK_KEY",
    "create_extras",
    "lock_dedupe_keys",
    "lock_schema",
    "search_statement",
    "temporary_schema",
    "tsquery_terms",
]

# The typed-relation indexes are partial here too (schema.TYPED_RELATION_INDEXES says why
# this is done on load), before any schema is created.
for _index in schema.TYPED_RELATION_INDEXES:
    _index.dialect_kwargs["postgresql_where"] = schema.TYPED_RELATION

#: Text-search configuration of the tsvector column and of queries.
FTS_CONFIG = "english"
#: Advisory lock id held while a process creates or checks the schema ("grmm").
INIT_LOCK_KEY = schema.APPLICATION_ID
#: The advisory lock key of :func:`lock_dedupe_keys`.
DEDUPE_LOCK_KEY = schema.APPLICATION_ID + 1
#: Generated tsvector columns of ``texts`` -> the statements adding the column and its index.
_TSV_COLUMNS = {
    "full_tsv": (
        "ALTER TABLE texts ADD COLUMN full_tsv tsvector "
        "GENERATED ALWAYS AS (to_tsvector('english', head || ' ' || body)) STORED",
        "CREATE INDEX ix_texts_full_tsv ON texts USING GIN (full_tsv)",
    ),
    "body_tsv": (
        "ALTER TABLE texts ADD COLUMN body_tsv tsvector "
        "GENERATED ALWAYS AS (to_tsvector('english', body)) STORED",
        "CREATE INDEX ix_texts_body_tsv ON texts USING GIN (body_tsv)",
    ),
}
# A constant, never user input: safe to inline.
_CONFIG: Any = literal_column(f"'{FTS_CONFIG}'::regconfig")


def lock_schema(conn: Connection) -> None:
    """Serialise schema creation between processes (released when the transaction ends)."""
    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": INIT_LOCK_KEY})


def lock_dedupe_keys(conn: Connection) -> None:
    """Serialise the writers that check and store dedupe keys (until the transaction ends),
    so that two processes cannot both store one key (SQLite's BEGIN IMMEDIATE does it there)."""
    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": DEDUPE_LOCK_KEY})


def create_extras(conn: Connection) -> None:
    """Add the tsvector columns and their GIN indexes when missing.

    Checked first, so that opening an existing database takes no ``ACCESS EXCLUSIVE`` lock.
    """
    for column, (add_column, add_index) in _TSV_COLUMNS.items():
        has_column = conn.execute(
            text(
                "SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('texts') "
                "AND attname = :col AND NOT attisdropped"
            ),
            {"col": column},
        ).first()
        if has_column is None:
            conn.exec_driver_sql(add_column)
        index = f"ix_texts_{column}"
        if conn.execute(text("SELECT to_regclass(:name)"), {"name": index}).scalar() is None:
            conn.exec_driver_sql(add_index)


def tsquery_terms(terms: Sequence[str]) -> list[str]:
    """Each term as a quoted ``to_tsquery`` operand, so no tsquery syntax can leak in."""
    return ["'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in terms if t]


def search_statement(
    terms: Sequence[str], conditions: Sequence[Any], limit: int, heads: bool = False
) -> tuple[Select[Any], dict[str, str]]:
    """The ranked full-text query and its parameters; rows are ``(seq, score)``, best first.

    ``conditions`` are SQLAlchemy expressions over :data:`schema.memories` (namespace,
    tenant, filters). Term statistics come from the rows searched (those conditions), so a
    small tier is not ranked against the whole table; FTS5 uses whole-table statistics. Texts
    are matched and ranked by their body, or by their whole with ``heads`` (the searched
    tiers show texts whole), as on SQLite.
    """
    operands = tsquery_terms(terms)
    params = {f"gm_t{i}": op for i, op in enumerate(operands)}
    params["gm_any"] = " | ".join(operands)
    m, t = schema.memories, schema.texts
    tsv: Any = literal_column("texts.full_tsv" if heads else "texts.body_tsv")
    any_query = func.to_tsquery(_CONFIG, bindparam("gm_any"))
    term_queries = [
        func.to_tsquery(_CONFIG, bindparam(name)) for name in params if name != "gm_any"
    ]
    matching = (
        select(m.c.seq, tsv.label("tsv"))
        .select_from(m.join(t, t.c.id == m.c.text_id))
        .where(tsv.op("@@")(any_query), *conditions)
        .cte("gm_matching")
    )
    searched = select(func.count()).select_from(m).where(*conditions).scalar_subquery()
    frequencies = (
        select(
            searched.label("total"),
            *[
                func.count().filter(matching.c.tsv.op("@@")(q)).label(f"df{i}")
                for i, q in enumerate(term_queries)
            ],
        )
        .select_from(matching)
        .cte("gm_df")
    )
    score: Any = literal_column("0.0")
    for i, q in enumerate(term_queries):
        df = cast(frequencies.c[f"df{i}"], Float)
        idf = func.ln(1.0 + (cast(frequencies.c.total, Float) - df + 0.5) / (df + 0.5))
        score = score + idf * cast(func.ts_rank(matching.c.tsv, q, 1), Float)
    stmt = (
        select(matching.c.seq, score.label("score"))
        .select_from(matching)
        .join(frequencies, true())
        .order_by(literal_column("score").desc(), matching.c.seq)
        .limit(limit)
    )
    return stmt, params


@contextmanager
def temporary_schema(server_url: str, prefix: str = "graphmem_tmp") -> Iterator[str]:
    """A URL whose connections work in a new, empty schema of the server at ``server_url``;
    the schema and everything in it are dropped on exit (for tests and benchmarks sharing one
    server)."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(CreateSchema(name))
    url = make_url(server_url).update_query_dict({"options": f"-csearch_path={name}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(DropSchema(name, cascade=True))
        admin.dispose()


# Past the largest id ever given out (the serial sequence), not only the largest in use.
_NEXT_RELATION_ID = text(
    "SELECT GREATEST(COALESCE((SELECT max(id) FROM relations), 0), COALESCE("
    "pg_sequence_last_value(pg_get_serial_sequence('relations', 'id')::regclass), 0)) + 1"
)
# Relations inserted under ids of their own do not move the sequence: moved here, so that a
# relation inserted without an id (a merge's) does not collide.
_PAST_RELATION_IDS = text(
    "SELECT setval(pg_get_serial_sequence('relations', 'id'), GREATEST(:largest, COALESCE("
    "pg_sequence_last_value(pg_get_serial_sequence('relations', 'id')::regclass), 0)))"
)


class PostgreSQLDialect:
    """The :class:`~graphmem.store.dialects.Dialect` of a PostgreSQL server."""

    name: str = "postgresql"
    drop_v1_tables: Sequence[str] = (
        "DROP TABLE relation_evidence CASCADE",
        "DROP TABLE mentions CASCADE",
        "DROP TABLE memories CASCADE",
    )
    rebuilds_pre_v4_ids: bool = False
    #: Every table a save writes (a fixed statement: SQL is never assembled at run time).
    analyze_statement: str | None = (
        "ANALYZE texts, memories, entities, aliases, mentions, relations, relation_evidence"
    )

    def lock_schema(self, conn: Connection) -> None:
        lock_schema(conn)

    def lock_dedupe_keys(self, conn: Connection) -> None:
        lock_dedupe_keys(conn)

    def create_extras(self, conn: Connection, *, rebuild: bool) -> None:
        """The tsvector columns and their GIN indexes (generated: nothing to rebuild)."""
        create_extras(conn)

    def search(
        self,
        conn: Connection,
        query: str,
        namespaces: Sequence[str],
        tenant: str | None,
        sql_filters: Mapping[str, Any] | None,
        limit: int,
        heads: bool,
    ) -> list[tuple[int, float]]:
        """An IDF-weighted ``ts_rank`` over the english tsvector columns
        (:func:`search_statement`)."""
        terms = query_terms(query)
        if not terms:
            return []
        conds = [schema.memories.c.namespace.in_(namespaces), *row_conditions(tenant, sql_filters)]
        stmt, params = search_statement(terms, conds, limit, heads)
        return [(int(seq), float(score)) for seq, score in conn.execute(stmt, params)]

    def next_relation_id(self, conn: Connection) -> int:
        return int(conn.execute(_NEXT_RELATION_ID).scalar_one())

    def after_insert_relations(self, conn: Connection, largest_id: int) -> None:
        """Move the relations' sequence past ``largest_id``."""
        conn.execute(_PAST_RELATION_IDS, {"largest": largest_id})

    def reset_sequence(self, conn: Connection, table: str, column: str, largest: int) -> None:
        conn.execute(
            select(func.setval(func.pg_get_serial_sequence(table, column), largest + 1, False))
        )

    @contextmanager
    def write_transaction(self, conn: Connection, *, durable: bool) -> Iterator[None]:
        """``durable=False``: ``synchronous_commit=off`` for this transaction only."""
        with conn.begin():
            if not durable:
                conn.exec_driver_sql("SET LOCAL synchronous_commit TO OFF")
            yield

    def read_isolation(self, conn: Connection) -> Connection:
        """``REPEATABLE READ``: one snapshot for the whole read (a graph view and its
        generation agree)."""
        return conn.execution_options(isolation_level="REPEATABLE READ")

    def scrub_before_commit(self, conn: Connection) -> None:
        """Nothing to do: deleting the rows deletes their ``tsvector`` index entries in the
        transaction (the space is reused; ``VACUUM`` returns it)."""

    def scrub_after_commit(self, engine: Engine) -> None:
        """Nothing to do (see :meth:`scrub_before_commit`)."""

    def is_damaged_index(self, exc: DBAPIError) -> bool:
        """Never: the ``tsvector`` column and its GIN index are PostgreSQL's own."""
        return False

    def heal_index(self, conn: Connection, why: str) -> None:
        """Nothing to heal (see :meth:`is_damaged_index`)."""


#: The one PostgreSQL dialect.
POSTGRESQL = PostgreSQLDialect()
#: What :func:`graphmem.store.dialects.dialect_for` reads.
DIALECT: Dialect = POSTGRESQL
