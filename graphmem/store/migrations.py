"""Schema upgrades: an older graphmem's tables rewritten to this release's, in place.

:func:`upgrade` runs when a database opens, inside the opening transaction, before the tables
are created: a crash halfway leaves the file as it was. It is also how an export of an older
release is imported (:mod:`graphmem.transfer` loads its rows with :func:`load_v1_copies` and
converts them with the same statements).

Schema 1 -> 2: a memory row held its own text; now a text is stored once (``texts``) and tier
items (``memories``) show it, so one task result the facade stores in four tiers is one text
analysed once. Each schema-1 memory becomes a text of its own (same id as its ``seq``) and an
item showing all of it; mentions and evidence point at the text; entities and relations get
their stored mention and support counts.

Schema 2 -> 3: tier items carry the id of the save that wrote them (``result_id``: one id for
a task result in every tier it landed in) and an optional idempotency key (``dedupe_key``).
The items of one text saved before share the first one's memory id as their result id
(:func:`fill_result_ids`); they have no key.

Schema 3 -> 4: on SQLite every integer id becomes ``AUTOINCREMENT`` (an id freed by a delete
or a merge is never handed out again, so ``unmerge`` can re-insert what a merge took under its
own id). SQLite cannot change a table's key in place: the tables with integer ids are copied
aside, dropped (children first, so no cascade fires), created anew and filled from the copies,
ids included. Their id sequences then start past every id a pending merge's snapshot holds
(:func:`graphmem.store.dump.reset_sequences`). PostgreSQL's sequences never reuse an id:
nothing to rewrite there.

Schema 4 -> 5: a text records how it was indexed (``analysis``, ``given_entities``,
``listed_in``), a merge whether the user asked for it (``by_hand``), for ``reanalyse``. Older
texts get what their rows show (:func:`infer_text_analysis`): indexed when they have mentions
or an item of a tier that indexes (every tier but Calute's short-term one), with relations
when they have typed evidence or an item listing its entities (the entity tier's); the names
a caller gave in place of extraction were not recorded (they are extracted again). Older
merges are taken for the user's (``by_hand`` NULL). A mention keeps what gave its label
(``label_source``, added empty: old mentions count as the model's vote, or as declared when
their label is none of the model's).

Example:
    >>> from graphmem.store.database import Database
    >>> db = Database()                  # a new database has nothing to upgrade
    >>> with db.write() as conn:
    ...     upgrade(conn)
    False
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Column, Connection, MetaData, Table, inspect, select, text, update

from . import schema
from .dialects import dialect_of

__all__ = [
    "V1_COPIED_TABLES",
    "fill_from_v1_copies",
    "fill_result_ids",
    "infer_text_analysis",
    "load_v1_copies",
    "stored_version",
    "upgrade",
]

#: Schema-1 tables whose rows change shape, and their columns: while the new tables are made
#: their rows wait in temporary copies ``gm_v1_<name>`` (the statements below spell them out:
#: SQL text is never assembled at run time).
V1_COPIED_TABLES: dict[str, tuple[str, ...]] = {
    "memories": (
        "seq",
        "memory_id",
        "namespace",
        "tenant",
        "memory_type",
        "content",
        "metadata",
        "agent_id",
        "task_id",
        "conversation_id",
        "user_id",
        "importance",
        "relevance_score",
        "access_count",
        "created_at",
        "last_accessed",
        "embedding",
        "author_key",
        "entity_labels",
    ),
    "mentions": ("id", "entity_id", "memory_seq", "start", "end", "surface", "label"),
    "relation_evidence": ("id", "relation_id", "memory_seq", "sent_start", "sent_end", "rule"),
}
_CREATE_V1_COPIES = (
    "CREATE TEMPORARY TABLE gm_v1_memories (seq INTEGER, memory_id TEXT, namespace TEXT, "
    "tenant TEXT, memory_type TEXT, content TEXT, metadata TEXT, agent_id TEXT, task_id TEXT, "
    "conversation_id TEXT, user_id TEXT, importance FLOAT, relevance_score FLOAT, "
    "access_count INTEGER, created_at TEXT, last_accessed TEXT, embedding TEXT, "
    "author_key TEXT, entity_labels TEXT)",
    "CREATE TEMPORARY TABLE gm_v1_mentions (id INTEGER, entity_id INTEGER, memory_seq INTEGER, "
    'start INTEGER, "end" INTEGER, surface TEXT, label TEXT)',
    "CREATE TEMPORARY TABLE gm_v1_relation_evidence (id INTEGER, relation_id INTEGER, "
    "memory_seq INTEGER, sent_start INTEGER, sent_end INTEGER, rule TEXT)",
)
_COPY_V1_TABLES = (
    "INSERT INTO gm_v1_memories SELECT seq, memory_id, namespace, tenant, memory_type, "
    "content, metadata, agent_id, task_id, conversation_id, user_id, importance, "
    "relevance_score, access_count, created_at, last_accessed, embedding, author_key, "
    "entity_labels FROM memories",
    'INSERT INTO gm_v1_mentions SELECT id, entity_id, memory_seq, start, "end", surface, label '
    "FROM mentions",
    "INSERT INTO gm_v1_relation_evidence SELECT id, relation_id, memory_seq, sent_start, "
    "sent_end, rule FROM relation_evidence",
)
_INSERT_V1_ROWS = {
    "memories": "INSERT INTO gm_v1_memories VALUES (:seq, :memory_id, :namespace, :tenant, "
    ":memory_type, :content, :metadata, :agent_id, :task_id, :conversation_id, :user_id, "
    ":importance, :relevance_score, :access_count, :created_at, :last_accessed, :embedding, "
    ":author_key, :entity_labels)",
    "mentions": "INSERT INTO gm_v1_mentions VALUES (:id, :entity_id, :memory_seq, :start, :end, "
    ":surface, :label)",
    "relation_evidence": "INSERT INTO gm_v1_relation_evidence VALUES (:id, :relation_id, "
    ":memory_seq, :sent_start, :sent_end, :rule)",
}
_ADD_COUNT_COLUMNS = (
    "ALTER TABLE entities ADD COLUMN mentions INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE relations ADD COLUMN support INTEGER NOT NULL DEFAULT 0",
)
_FILL_FROM_V1_COPIES = (
    "INSERT INTO texts (id, tenant, head, body, entity_labels) "
    "SELECT seq, tenant, '', content, entity_labels FROM gm_v1_memories",
    "INSERT INTO memories (seq, memory_id, namespace, tenant, memory_type, text_id, view, "
    "metadata, agent_id, task_id, conversation_id, user_id, importance, relevance_score, "
    "access_count, created_at, last_accessed, embedding, author_key) "
    "SELECT seq, memory_id, namespace, tenant, memory_type, seq, 'full', metadata, agent_id, "
    "task_id, conversation_id, user_id, importance, relevance_score, access_count, created_at, "
    "last_accessed, embedding, author_key FROM gm_v1_memories",
    'INSERT INTO mentions (id, entity_id, text_id, start, "end", surface, label, in_head) '
    'SELECT id, entity_id, memory_seq, start, "end", surface, label, 0 FROM gm_v1_mentions',
    "INSERT INTO relation_evidence (id, relation_id, text_id, sent_start, sent_end, rule) "
    "SELECT id, relation_id, memory_seq, sent_start, sent_end, rule "
    "FROM gm_v1_relation_evidence",
    "UPDATE entities SET mentions = "
    "(SELECT count(*) FROM mentions WHERE mentions.entity_id = entities.id)",
    "UPDATE relations SET support = "
    "(SELECT count(*) FROM relation_evidence WHERE relation_evidence.relation_id = relations.id)",
    "DROP TABLE gm_v1_memories",
    "DROP TABLE gm_v1_mentions",
    "DROP TABLE gm_v1_relation_evidence",
)


_ADD_RESULT_COLUMNS = (
    "ALTER TABLE memories ADD COLUMN result_id VARCHAR(64)",
    "ALTER TABLE memories ADD COLUMN dedupe_key VARCHAR(512)",
)
#: Schema 5's new columns, by table and name (added where missing: schema 1's upgrade makes
#: ``texts`` anew with them).
_SCHEMA_5_COLUMNS = {
    "texts": {
        "analysis": "ALTER TABLE texts ADD COLUMN analysis INTEGER NOT NULL DEFAULT 0",
        "given_entities": "ALTER TABLE texts ADD COLUMN given_entities TEXT",
        "listed_in": "ALTER TABLE texts ADD COLUMN listed_in TEXT",
    },
    "merges": {"by_hand": "ALTER TABLE merges ADD COLUMN by_hand INTEGER"},
}
#: The evidence rules that say nothing about typed relations having been looked for.
_UNTYPED_RULES = ("co_sentence", "co_memory", "manual")
#: The tier whose items are not indexed (Calute's short-term memory).
_UNINDEXED_NAMESPACES = ("short_term",)


def infer_text_analysis(conn: Connection) -> None:
    """Fill the analysis columns of texts written before schema 5 (``analysis`` 0 and no
    ``listed_in``) from what their rows show (see the module docstring)."""
    t, m = schema.texts, schema.memories
    listed: dict[int, list[str]] = {}
    rows = conn.execute(
        select(m.c.text_id, m.c.namespace, m.c.metadata)
        .where(m.c.metadata.like('%"entities"%'))
        .order_by(m.c.seq)
    )
    for text_id, namespace, metadata in rows:
        try:
            value = json.loads(metadata).get("entities")
        except (ValueError, AttributeError):
            continue
        if isinstance(value, list) and namespace not in listed.setdefault(int(text_id), []):
            listed[int(text_id)].append(str(namespace))
    for text_id, namespaces in listed.items():
        if namespaces:
            conn.execute(
                update(t)
                .where(t.c.id == text_id, t.c.analysis == schema.NOT_ANALYSED)
                .values(listed_in=json.dumps(namespaces))
            )
    ev = schema.relation_evidence
    typed = select(ev.c.id).where(ev.c.text_id == t.c.id, ev.c.rule.not_in(_UNTYPED_RULES))
    mentioned = select(schema.mentions.c.id).where(schema.mentions.c.text_id == t.c.id)
    indexing_item = select(m.c.seq).where(
        m.c.text_id == t.c.id, m.c.namespace.not_in(_UNINDEXED_NAMESPACES)
    )
    unknown = t.c.analysis == schema.NOT_ANALYSED
    conn.execute(
        update(t)
        .where(unknown, t.c.listed_in.is_not(None) | typed.exists())
        .values(analysis=schema.WITH_RELATIONS)
    )
    conn.execute(
        update(t)
        .where(unknown, mentioned.exists() | indexing_item.exists())
        .values(analysis=schema.ENTITIES_ONLY)
    )


def fill_result_ids(conn: Connection) -> None:
    """Give every item saved before schema 3 (no ``result_id``) a result id: the memory id
    of the first item showing its text, since the items of one text were written by one
    save (a task result in the entity, long-term and contextual tiers); rows of an older
    export, once imported, too."""
    items, first = schema.memories, schema.memories.alias("first_item")
    first_of_text = (
        select(first.c.memory_id)
        .where(first.c.text_id == items.c.text_id)
        .order_by(first.c.seq)
        .limit(1)
        .scalar_subquery()
    )
    conn.execute(update(items).where(items.c.result_id.is_(None)).values(result_id=first_of_text))


def is_new(conn: Connection) -> bool:
    """True when the database holds no graphmem tables yet."""
    return not inspect(conn).has_table(schema.meta.name)


def stored_version(conn: Connection) -> int | None:
    """The schema version a database holds (None: no graphmem tables yet)."""
    if is_new(conn):
        return None
    value = conn.execute(
        select(schema.meta.c.value).where(schema.meta.c.key == "schema_version")
    ).scalar()
    return schema.parse_schema_version(value, "the database") if value is not None else None


def upgrade(conn: Connection) -> bool:
    """Rewrite an older schema's tables to the current one; True when something changed.

    The caller creates what is missing afterwards (new tables, indexes, the full-text index,
    which it rebuilds when this returns True).
    """
    version = stored_version(conn)
    if version is None or version >= schema.SCHEMA_VERSION:
        return False
    if version == 1:
        _v1_to_v2(conn)  # makes the changed tables anew: schema 5's columns included
    elif version == 2:
        _run(conn, _ADD_RESULT_COLUMNS)
    for name, columns in _SCHEMA_5_COLUMNS.items():
        present = {c["name"] for c in inspect(conn).get_columns(name)}
        _run(conn, (sql for column, sql in columns.items() if column not in present))
    if version < 4 and dialect_of(conn).rebuilds_pre_v4_ids:
        _rebuild_with_ids_never_reused(conn)  # also the tables schema 1 -> 2 kept
    _add_missing_columns(conn)
    existing = set(inspect(conn).get_table_names())
    for table in schema.metadata_obj.sorted_tables:  # indexes added since (PostgreSQL keeps
        if table.name not in existing:  # a table new since: the caller makes it, indexed
            continue
        for index in table.indexes:  # its tables: the rebuild makes SQLite's)
            index.create(conn, checkfirst=True)
    fill_result_ids(conn)
    infer_text_analysis(conn)
    conn.execute(
        update(schema.meta)
        .where(schema.meta.c.key == "schema_version")
        .values(value=str(schema.SCHEMA_VERSION))
    )
    return True


#: Columns added since schema 4: ``(table, column) -> the statement that adds it`` empty
#: (NULL) where an older file lacks it (SQL text is never assembled at run time).
_ADDED_COLUMNS = {
    ("mentions", "label_source"): "ALTER TABLE mentions ADD COLUMN label_source VARCHAR(16)",
}


def _add_missing_columns(conn: Connection) -> None:
    """Schema 4 -> 5: add each column of :data:`_ADDED_COLUMNS` its table lacks (a table
    made anew above has them)."""
    for (table, column), statement in _ADDED_COLUMNS.items():
        if column not in {c["name"] for c in inspect(conn).get_columns(table)}:
            conn.exec_driver_sql(statement)


def _run(conn: Connection, statements: Iterable[str]) -> None:
    for sql in statements:
        conn.exec_driver_sql(sql)


def _v1_to_v2(conn: Connection) -> None:
    _run(conn, _CREATE_V1_COPIES)
    _run(conn, _COPY_V1_TABLES)
    _run(conn, dialect_of(conn).drop_v1_tables)
    _run(conn, _ADD_COUNT_COLUMNS)
    schema.metadata_obj.create_all(
        conn,
        tables=[schema.texts, schema.memories, schema.mentions, schema.relation_evidence],
    )
    fill_from_v1_copies(conn)
    for merge_id, snapshot in conn.execute(select(schema.merges.c.id, schema.merges.c.snapshot)):
        conn.execute(
            update(schema.merges)
            .where(schema.merges.c.id == merge_id)
            .values(snapshot=json.dumps(v1_snapshot_to_v2(json.loads(snapshot))))
        )


#: The tables with integer ids, parents before children (rebuilt in this order, dropped in
#: the reverse one).
_ID_TABLES = (
    schema.texts,
    schema.memories,
    schema.entities,
    schema.aliases,
    schema.mentions,
    schema.relations,
    schema.relation_evidence,
    schema.merges,
)


def _rebuild_with_ids_never_reused(conn: Connection) -> None:
    """Recreate the tables with integer ids from :mod:`schema` (``AUTOINCREMENT``), rows kept.

    The full-text index keeps its rows (the texts keep their ids); its triggers, dropped with
    ``texts``, are recreated by the caller, which also rebuilds the index.
    """
    copies = MetaData()
    moved: list[tuple[Table, Table]] = []
    for table in _ID_TABLES:
        names = [c["name"] for c in inspect(conn).get_columns(table.name)]
        copy = Table(
            f"gm_v2_{table.name}",
            copies,
            *(Column(name, table.c[name].type) for name in names),
            prefixes=["TEMPORARY"],
        )
        copy.create(conn)
        conn.execute(copy.insert().from_select(names, select(*(table.c[n] for n in names))))
        moved.append((table, copy))
    for table in reversed(_ID_TABLES):
        table.drop(conn)
    schema.metadata_obj.create_all(conn, tables=list(_ID_TABLES))
    for table, copy in moved:
        names = [c.name for c in copy.columns]
        conn.execute(table.insert().from_select(names, select(copy)))
        copy.drop(conn)


def load_v1_copies(conn: Connection, rows: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
    """Put schema-1 rows of the copied tables (from an export) into the temporary copies that
    :func:`fill_from_v1_copies` reads."""
    _run(conn, _CREATE_V1_COPIES)
    for table, columns in V1_COPIED_TABLES.items():
        values = [{name: row.get(name) for name in columns} for row in rows.get(table, ())]
        if values:
            conn.execute(text(_INSERT_V1_ROWS[table]), values)


def fill_from_v1_copies(conn: Connection) -> None:
    """Fill ``texts``, ``memories``, ``mentions`` and ``relation_evidence`` from the
    temporary schema-1 copies (then dropped), and count each entity's mentions and each
    relation's support."""
    _run(conn, _FILL_FROM_V1_COPIES)


def v1_snapshot_to_v2(snapshot: dict[str, Any]) -> dict[str, Any]:
    """A merge's undo snapshot written by schema 1, in schema 2's row shapes (evidence points
    at texts, whose ids are the old memory seqs; counts are recounted when it is undone)."""

    def evidence(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {
                **{k: v for k, v in row.items() if k != "memory_seq"},
                "text_id": row.get("memory_seq"),
            }
            if "memory_seq" in row
            else row
            for row in rows
        ]

    def with_default(rows: Iterable[dict[str, Any]], key: str) -> list[dict[str, Any]]:
        return [{key: 0, **row} for row in rows]

    out = dict(snapshot)
    out["evidence"] = evidence(snapshot.get("evidence", []))
    out["relations"] = with_default(snapshot.get("relations", []), "support")
    out["kept_relations_before"] = with_default(
        snapshot.get("kept_relations_before", []), "support"
    )
    for key in ("kept_entity", "merged_entity"):
        if key in snapshot:
            out[key] = {"mentions": 0, **snapshot[key]}
    return out
