"""SQL for whole-database dumps: every row of every table, in an order that can be re-inserted.

:mod:`graphmem.transfer` turns these rows into JSONL and back; this module only reads and
writes rows. Rows are copied verbatim (primary keys included), so an import into an empty
database reproduces the original exactly: ids, timestamps, access counts, merges and all.

Example:
    >>> from graphmem.store.database import Database
    >>> db = Database()
    >>> with db.read() as conn:
    ...     is_empty(conn)
    True
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, Table, func, insert, select
from sqlalchemy.exc import IntegrityError, StatementError

from . import schema
from .dialects import dialect_of
from .memory_rows import MEMORIES_GENERATION, MEMORIES_REWRITES, count_change

__all__ = [
    "DUMP_TABLES",
    "INTERNAL_META_KEYS",
    "ROW_ERRORS",
    "held_rows",
    "insert_rows",
    "is_empty",
    "iter_rows",
    "namespace_counts",
    "reset_sequences",
    "table_counts",
]

#: What :func:`insert_rows` raises for rows that do not fit the schema (a missing column, a
#: broken reference, a value of the wrong type), for callers that turn it into their own error.
ROW_ERRORS: tuple[type[Exception], ...] = (IntegrityError, StatementError)

#: Tables in dump order: a table comes after every table its foreign keys point to.
DUMP_TABLES: dict[str, Table] = {
    "graphmem_meta": schema.meta,
    "kv": schema.kv,
    "texts": schema.texts,
    "memories": schema.memories,
    "entities": schema.entities,
    "aliases": schema.aliases,
    "mentions": schema.mentions,
    "relations": schema.relations,
    "relation_evidence": schema.relation_evidence,
    "merges": schema.merges,
    "mcp_entities": schema.mcp_entities,
    "mcp_observations": schema.mcp_observations,
    "mcp_relations": schema.mcp_relations,
}

#: ``graphmem_meta`` keys that describe the database file itself, not its content: the
#: schema version travels in the export header, and the graph and memories generations are
#: counted on import.
INTERNAL_META_KEYS = frozenset(
    {"schema_version", "graph_generation", MEMORIES_GENERATION, MEMORIES_REWRITES}
)

_CONTENT_TABLES = (
    "memories",
    "entities",
    "relations",
    "merges",
    "kv",
    "mcp_entities",
    "mcp_relations",
)


def _primary_key(table: Table) -> list[Any]:
    return list(table.primary_key.columns)


def iter_rows(conn: Connection, table_name: str, page: int = 1000) -> Iterator[dict[str, Any]]:
    """Every row of a dump table as a dict, in primary-key order (streamed in pages)."""
    table = DUMP_TABLES[table_name]
    columns = [c.name for c in table.columns]
    (pk,) = _primary_key(table)
    last: Any = None
    while True:
        stmt = select(*table.columns).order_by(pk).limit(page)
        if last is not None:
            stmt = stmt.where(pk > last)
        rows = conn.execute(stmt).all()
        for row in rows:
            record = dict(zip(columns, row, strict=True))
            if table_name == "graphmem_meta" and record["key"] in INTERNAL_META_KEYS:
                continue
            yield record
        if len(rows) < page:
            return
        last = rows[-1][columns.index(pk.name)]


def table_counts(conn: Connection) -> dict[str, int]:
    """Row count of each dump table."""
    return {
        name: int(conn.execute(select(func.count()).select_from(table)).scalar() or 0)
        for name, table in DUMP_TABLES.items()
    }


def namespace_counts(conn: Connection, tenant: str | None = None) -> dict[str, int]:
    """Memory rows per namespace (tier), by namespace name (of ``tenant`` when given;
    ``""``: the memories saved without a user)."""
    m = schema.memories
    stmt = select(m.c.namespace, func.count()).group_by(m.c.namespace).order_by(m.c.namespace)
    if tenant is not None:
        stmt = stmt.where(m.c.tenant == tenant)
    return {str(ns): int(n) for ns, n in conn.execute(stmt)}


def tenant_counts(conn: Connection, tenant: str) -> dict[str, int]:
    """Rows of one tenant's graph and merge log (``""``: the shared one), by table.

    Example:
        >>> from graphmem.store.database import Database
        >>> with Database().read() as conn:
        ...     tenant_counts(conn, "alice")["merges"]
        0
    """
    e, r = schema.entities, schema.relations
    counts = {
        name: int(
            conn.execute(
                select(func.count()).select_from(table).where(table.c.tenant == tenant)
            ).scalar()
            or 0
        )
        for name, table in (("entities", e), ("aliases", schema.aliases), ("relations", r))
    }
    counts["merges"] = int(
        conn.execute(
            select(func.count()).select_from(schema.merges).where(schema.merges.c.tenant == tenant)
        ).scalar()
        or 0
    )
    mentions, evidence = schema.mentions, schema.relation_evidence
    counts["mentions"] = int(
        conn.execute(
            select(func.count())
            .select_from(mentions.join(e, e.c.id == mentions.c.entity_id))
            .where(e.c.tenant == tenant)
        ).scalar()
        or 0
    )
    counts["relation_evidence"] = int(
        conn.execute(
            select(func.count())
            .select_from(evidence.join(r, r.c.id == evidence.c.relation_id))
            .where(r.c.tenant == tenant)
        ).scalar()
        or 0
    )
    return counts


def tenant_names(conn: Connection) -> list[str]:
    """The users (tenants) that own memories, ``""`` (shared) included when it does."""
    m = schema.memories
    return [
        str(t) for t in conn.execute(select(m.c.tenant).distinct().order_by(m.c.tenant)).scalars()
    ]


def is_empty(conn: Connection) -> bool:
    """True when no memory, entity, relation, merge or key-value row exists."""
    for name in _CONTENT_TABLES:
        table = DUMP_TABLES[name]
        if conn.execute(select(func.count()).select_from(table)).scalar():
            return False
    return True


def held_rows(
    conn: Connection, memories: Sequence[Mapping[str, Any]], kv: Sequence[Mapping[str, Any]]
) -> tuple[int, int]:
    """How many of the (exported) ``memories`` rows the database holds (the same memory id
    in the same tier of the same tenant), and of the ``kv`` rows (same key and value)."""
    m, k = schema.memories, schema.kv
    held_memories = 0
    for start in range(0, len(memories), 500):
        chunk = memories[start : start + 500]
        wanted = {(r.get("memory_id"), r.get("namespace"), r.get("tenant", "")) for r in chunk}
        stmt = select(m.c.memory_id, m.c.namespace, m.c.tenant).where(
            m.c.memory_id.in_([r.get("memory_id") for r in chunk])
        )
        held_memories += sum(1 for row in conn.execute(stmt) if tuple(row) in wanted)
    held_kv = 0
    for start in range(0, len(kv), 500):
        chunk = kv[start : start + 500]
        stored = dict(
            conn.execute(
                select(k.c.key, k.c.value).where(k.c.key.in_([r.get("key") for r in chunk]))
            ).all()
        )
        held_kv += sum(1 for r in chunk if stored.get(r.get("key")) == r.get("value"))
    return held_memories, held_kv


def insert_rows(
    conn: Connection, table_name: str, rows: Sequence[Mapping[str, Any]], batch: int = 500
) -> None:
    """Insert rows verbatim (primary keys included) in the caller's transaction.

    Meta rows replace the target's value of the same key.
    """
    table = DUMP_TABLES[table_name]
    if table_name == "graphmem_meta":
        for row in rows:
            conn.execute(table.delete().where(table.c.key == row["key"]))
    for start in range(0, len(rows), batch):
        chunk = [dict(r) for r in rows[start : start + batch]]
        if chunk:
            conn.execute(insert(table), chunk)
    if table_name == "memories" and rows:
        count_change(conn)  # rows of any number: not only newer ones


def reset_sequences(conn: Connection) -> None:
    """After inserting explicit ids (an import, a schema upgrade), move each id sequence past
    the largest id in use and past every id a pending merge's undo snapshot holds (rows the
    merge deleted, which ``unmerge`` re-inserts under their own ids): no id is handed out twice.

    SQLite keeps these sequences in ``sqlite_sequence`` (``AUTOINCREMENT`` tables), PostgreSQL
    in one sequence per serial column.
    """
    held = _ids_held_by_pending_merges(conn)
    dialect = dialect_of(conn)
    for name, table in DUMP_TABLES.items():
        (pk,) = _primary_key(table)
        if pk.type.python_type is not int:
            continue  # text keys (graphmem_meta, kv) have no sequence
        largest = max(int(conn.execute(select(func.max(pk))).scalar() or 0), held.get(name, 0))
        dialect.reset_sequence(conn, name, pk.name, largest)


def _ids_held_by_pending_merges(conn: Connection) -> dict[str, int]:
    """The largest id, by table, of the rows that not yet undone merges deleted and keep in
    their snapshots (see :func:`graphmem.store.graph_rows.merge_entity_rows`)."""
    held = {"entities": 0, "relations": 0, "relation_evidence": 0}
    merges = schema.merges
    for (snapshot,) in conn.execute(select(merges.c.snapshot).where(merges.c.undone_at.is_(None))):
        rows = json.loads(snapshot)
        for table, ids in (
            ("entities", [rows["merged_entity"]["id"]]),
            ("relations", [row["id"] for row in rows.get("relations", ())]),
            ("relation_evidence", [row["id"] for row in rows.get("evidence", ())]),
        ):
            held[table] = max([held[table], *(int(i) for i in ids)])
    return held
