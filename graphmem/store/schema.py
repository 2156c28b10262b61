"""The SQL schema: the source of truth that the in-process graph is built from.

Every row that belongs to a tenant carries it (``tenant`` is the user id, ``""`` when none),
and every query filters by it. Metadata is JSON text, never pickle.
"""

from __future__ import annotations

from sqlalchemy import (
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)

from ..errors import DatabaseFileError

__all__ = [
    "APPLICATION_ID",
    "ENTITIES_ONLY",
    "NOT_ANALYSED",
    "SCHEMA_VERSION",
    "TYPED_RELATION",
    "WITH_RELATIONS",
    "aliases",
    "entities",
    "kv",
    "memories",
    "mcp_entities",
    "mcp_observations",
    "mcp_relations",
    "mentions",
    "merges",
    "meta",
    "metadata_obj",
    "relation_evidence",
    "relations",
    "texts",
]

#: Bumped whenever the tables change; a database with a higher version is refused and an
#: older one is migrated when opened (:mod:`graphmem.store.migrations`). Schema 3: tier items
#: carry their result id and dedupe key. Schema 4: ids are never reused (SQLite
#: ``AUTOINCREMENT``), so ``unmerge`` can put back what a merge took. Schema 5: a text records
#: how it was analysed (``analysis``, ``given_entities``, ``listed_in``) and a merge whether a
#: user asked for it (``by_hand``), so ``reanalyse`` can index the texts again as first saved;
#: a mention keeps what gave its label (``label_source``), weighing its vote on its entity's
#: type.
SCHEMA_VERSION = 5

#: ``texts.analysis``: not indexed, entities only, entities and typed relations.
NOT_ANALYSED, ENTITIES_ONLY, WITH_RELATIONS = 0, 1, 2


def parse_schema_version(value: object, where: str) -> int:
    """The stored ``schema_version`` text as a positive int; anything else ("x", "2.0", "")
    is a damaged file: :class:`~graphmem.errors.DatabaseFileError` naming ``where``.

    Example:
        >>> parse_schema_version("2", "m.db")
        2
    """
    text = str(value).strip()
    if not (text.isascii() and text.isdigit() and len(text) < 10 and int(text) >= 1):
        raise DatabaseFileError(
            f"{where}: schema_version {str(value)[:40]!r} is not a version graphmem writes "
            "(a damaged or edited file)"
        )
    return int(text)


#: The columns holding times, by table: ISO 8601 texts in UTC (graphmem.items.time_text).
TIME_COLUMNS: dict[str, tuple[str, ...]] = {
    "memories": ("created_at", "last_accessed"),
    "entities": ("first_seen", "last_seen"),
    "relations": ("first_seen", "last_seen", "valid_from", "valid_to"),
    "merges": ("created_at", "undone_at"),
}

#: Written to SQLite's ``PRAGMA application_id`` so foreign SQLite files are recognised.
APPLICATION_ID = 0x67726D6D  # "grmm"

# On SQLite every integer id is AUTOINCREMENT (``sqlite_autoincrement``): an id freed by a
# delete (or a merge) is never given to a new row, so a merge's undo snapshot can re-insert
# rows under their own ids. PostgreSQL's sequences never hand an id out twice anyway.
metadata_obj = MetaData()

meta = Table(
    "graphmem_meta",
    metadata_obj,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

texts = Table(
    "texts",
    metadata_obj,
    # The text one write call stored, analysed once (its mentions and evidence point here)
    # and shown by every tier item made of it (``memories.text_id``). ``head`` is the part
    # that only the whole view shows: a task result's task, when the facade stores
    # "task result" in the entity tier and "result" in the others (the ``body`` view).
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tenant", String(256), nullable=False, default=""),
    Column("head", Text, nullable=False, default=""),
    Column("body", Text, nullable=False),
    # Entity labels found in the text ("DATE,GPE,PERSON"), for answer-type matching.
    Column("entity_labels", String(256)),
    # How it was indexed, so that ``reanalyse`` indexes it again the same way: not at all,
    # for entities, or for entities and typed relations (NOT_ANALYSED ...); the names the
    # caller gave instead of extracting them (JSON list, Calute's ``entities=``); the tiers
    # (namespaces, JSON list) whose items list its entities in ``metadata["entities"]``.
    Column("analysis", Integer, nullable=False, default=0, server_default="0"),
    Column("given_entities", Text),
    Column("listed_in", Text),
    Index("ix_texts_tenant", "tenant"),
    sqlite_autoincrement=True,
)

memories = Table(
    "memories",
    metadata_obj,
    # One tier item: a text's membership of a tier (namespace), with the item's own fields.
    Column("seq", Integer, primary_key=True, autoincrement=True),
    Column("memory_id", String(64), nullable=False, unique=True),
    Column("namespace", String(128), nullable=False),
    Column("tenant", String(256), nullable=False, default=""),
    Column("memory_type", String(64), nullable=False),
    Column("text_id", Integer, ForeignKey("texts.id"), nullable=False),
    # "full": the item's content is the whole text (head and body); "body": the body only.
    Column("view", String(8), nullable=False, default="full"),
    Column("metadata", Text, nullable=False, default="{}"),
    Column("agent_id", String(256)),
    Column("task_id", String(256)),
    Column("conversation_id", String(256)),
    Column("user_id", String(256)),
    Column("importance", Float),
    Column("relevance_score", Float, nullable=False, default=1.0),
    Column("access_count", Integer, nullable=False, default=0),
    Column("created_at", String(40), nullable=False),
    Column("last_accessed", String(40)),
    Column("embedding", Text),
    # Canonical key of who said or did this (speaker/author metadata, else the agent).
    Column("author_key", String(512)),
    # The save that wrote this item: one id for every item (in every tier) of one task result
    # or ingested record; a tier's own save: the item's memory_id. Delete and update take it.
    Column("result_id", String(64)),
    # Saving again with this key (same tenant) changes nothing: the caller's ``dedupe_key``,
    # or the content fingerprint ``graphmem ingest`` gives each record ("sha256:...").
    Column("dedupe_key", String(512)),
    Index("ix_memories_namespace_seq", "namespace", "seq"),
    Index("ix_memories_author", "author_key"),
    Index("ix_memories_tenant_namespace", "tenant", "namespace"),
    Index("ix_memories_agent", "namespace", "agent_id"),
    Index("ix_memories_conversation", "conversation_id", "seq"),
    # A text's items by the columns a search scopes them with: "does an item of these tiers,
    # of this tenant (and agent) show this text?" is answered from the index alone.
    Index("ix_memories_text", "text_id", "namespace", "tenant", "agent_id", "view"),
    Index("ix_memories_result", "result_id"),
    Index("ix_memories_dedupe", "tenant", "dedupe_key"),
    sqlite_autoincrement=True,
)

entities = Table(
    "entities",
    metadata_obj,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tenant", String(256), nullable=False),
    Column("key", String(512), nullable=False),
    Column("name", Text, nullable=False),
    Column("label", String(32), nullable=False),
    Column("first_seen", String(40), nullable=False),
    Column("last_seen", String(40), nullable=False),
    # How many mention rows point here (kept by the index, so loading a view is a scan).
    Column("mentions", Integer, nullable=False, default=0),
    UniqueConstraint("tenant", "key", name="uq_entities_tenant_key"),
    sqlite_autoincrement=True,
)

aliases = Table(
    "aliases",
    metadata_obj,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tenant", String(256), nullable=False),
    Column("key", String(512), nullable=False),
    Column("surface", Text, nullable=False),
    Column("entity_id", Integer, ForeignKey("entities.id", ondelete="CASCADE"), nullable=False),
    UniqueConstraint("tenant", "key", name="uq_aliases_tenant_key"),
    Index("ix_aliases_entity", "entity_id"),
    sqlite_autoincrement=True,
)

mentions = Table(
    "mentions",
    metadata_obj,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("entity_id", Integer, ForeignKey("entities.id", ondelete="CASCADE"), nullable=False),
    Column("text_id", Integer, ForeignKey("texts.id", ondelete="CASCADE"), nullable=False),
    Column("start", Integer, nullable=False),
    Column("end", Integer, nullable=False),
    Column("surface", Text, nullable=False),
    Column("label", String(32), nullable=False),
    # What gave the label ("declared", "descriptor", "frame", "shape", "gazetteer", "model",
    # "known"): how much the mention counts in its entity's type vote; NULL before schema 5.
    Column("label_source", String(16)),
    # 1 when the mention lies in the text's head (shown by "full" items only).
    Column("in_head", Integer, nullable=False, default=0),
    # Newest texts of an entity and its text count, read from the index alone.
    Index("ix_mentions_entity_text", "entity_id", "text_id", "in_head"),
    Index("ix_mentions_text", "text_id"),
    # An entity's label vote (label_rows.mention_label_counts) from the index alone: a save
    # votes the labels of the entities it mentions, and a frequent entity has many mentions
    # (at 100k results, 0.30 s for the eight most mentioned without it, 0.02 s with it).
    Index("ix_mentions_entity_label", "entity_id", "label", "label_source"),
    sqlite_autoincrement=True,
)

relations = Table(
    "relations",
    metadata_obj,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tenant", String(256), nullable=False),
    Column("subject_id", Integer, ForeignKey("entities.id", ondelete="CASCADE"), nullable=False),
    Column("predicate", String(128), nullable=False),
    Column("object_id", Integer, ForeignKey("entities.id", ondelete="CASCADE"), nullable=False),
    Column("confidence", Float, nullable=False, default=1.0),
    Column("first_seen", String(40), nullable=False),
    Column("last_seen", String(40), nullable=False),
    Column("valid_from", String(40)),
    Column("valid_to", String(40)),
    # How many evidence rows support it (kept by the index, so loading a view is a scan).
    Column("support", Integer, nullable=False, default=0),
    UniqueConstraint("tenant", "subject_id", "predicate", "object_id", name="uq_relations_spo"),
    Index("ix_relations_object", "object_id"),
    Index("ix_relations_subject", "subject_id"),
    sqlite_autoincrement=True,
)

#: An entity's typed relations (what a context lists under it) at either end, with the columns
#: that rank them, without reading the co-occurrence rows (most of a hub's relations).
#: PostgreSQL's ``WHERE`` of these partial indexes is added by
#: :mod:`graphmem.store.dialects.postgresql` when it loads: naming it here would load
#: SQLAlchemy's PostgreSQL dialects in every process (validating the option), 0.1 s of a start.
TYPED_RELATION = text("predicate != 'co_occurs'")
TYPED_RELATION_INDEXES = [
    Index(
        f"ix_relations_{end.removesuffix('_id')}_typed",
        relations.c[end],
        relations.c.valid_to,
        relations.c.support,
        relations.c.valid_from,
        relations.c.predicate,  # covering: the planner then prefers it for typed relations
        sqlite_where=TYPED_RELATION,
    )
    for end in ("subject_id", "object_id")
]

relation_evidence = Table(
    "relation_evidence",
    metadata_obj,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("relation_id", Integer, ForeignKey("relations.id", ondelete="CASCADE"), nullable=False),
    # NULL for relations added by hand (rule "manual").
    Column("text_id", Integer, ForeignKey("texts.id", ondelete="CASCADE")),
    Column("sent_start", Integer, nullable=False, default=0),
    Column("sent_end", Integer, nullable=False, default=0),
    Column("rule", String(128), nullable=False),
    Index("ix_evidence_relation", "relation_id"),
    Index("ix_evidence_text", "text_id"),
    sqlite_autoincrement=True,
)

merges = Table(
    "merges",
    metadata_obj,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tenant", String(256), nullable=False),
    Column("kept_key", String(512), nullable=False),
    Column("merged_key", String(512), nullable=False),
    # JSON snapshot of the rows the merge rewrote, so ``unmerge`` restores them exactly.
    Column("snapshot", Text, nullable=False),
    Column("created_at", String(40), nullable=False),
    Column("undone_at", String(40)),
    # 1: asked for by the user (``merge_entities``), 0: made by indexing (an acronym, a short
    # name), NULL: logged before schema 5. ``reanalyse`` re-applies the ones asked for.
    Column("by_hand", Integer),
    sqlite_autoincrement=True,
)

kv = Table(
    "kv",
    metadata_obj,
    Column("key", String(512), primary_key=True),
    Column("value", Text, nullable=False),
)

# The graph of the MCP reference memory server's tools (``graphmem mcp --tools reference``),
# exactly as clients named and typed it: entities, their observations in order (each also a
# stored memory, ``memory_seq``, which search and the knowledge graph read) and relations of
# any type, between names that need not be entities. Ids give the order the client made them in.
mcp_entities = Table(
    "mcp_entities",
    metadata_obj,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tenant", String(256), nullable=False, default=""),
    Column("name", Text, nullable=False),
    Column("entity_type", Text, nullable=False),
    UniqueConstraint("tenant", "name", name="uq_mcp_entities_name"),
    sqlite_autoincrement=True,
)

mcp_observations = Table(
    "mcp_observations",
    metadata_obj,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("entity_id", Integer, ForeignKey("mcp_entities.id", ondelete="CASCADE"), nullable=False),
    Column("memory_seq", Integer, ForeignKey("memories.seq", ondelete="CASCADE"), nullable=False),
    Column("content", Text, nullable=False),
    Index("ix_mcp_observations_entity", "entity_id"),
    Index("ix_mcp_observations_memory", "memory_seq"),
    sqlite_autoincrement=True,
)

mcp_relations = Table(
    "mcp_relations",
    metadata_obj,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tenant", String(256), nullable=False, default=""),
    Column("source", Text, nullable=False),
    Column("target", Text, nullable=False),
    Column("relation_type", Text, nullable=False),
    UniqueConstraint("tenant", "source", "target", "relation_type", name="uq_mcp_relations"),
    sqlite_autoincrement=True,
)
