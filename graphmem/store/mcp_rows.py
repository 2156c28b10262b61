"""Rows of the MCP reference memory server's graph (``graphmem mcp --tools reference``).

The tables ``mcp_entities``, ``mcp_observations`` and ``mcp_relations`` keep the graph exactly
as the client gave it (names, types, observation strings and their order); every statement
runs in the caller's transaction, so a tool call is one transaction whatever it touches.

Example:
    >>> from graphmem.store import Database
    >>> db = Database(None)
    >>> with db.write() as conn:
    ...     insert_entities(conn, "", [("Ada", "person")])
    ...     entity_rows(conn, "", None, 10)
    ['Ada']
    [(1, 'Ada', 'person')]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import Connection, and_, delete, func, insert, or_, select, tuple_

from . import schema

__all__ = [
    "Relation",
    "all_observations",
    "containing",
    "entities_of_memories",
    "entity_types",
    "count_rows",
    "delete_entities",
    "delete_observations",
    "delete_relations",
    "entity_ids",
    "entity_rows",
    "insert_entities",
    "insert_observations",
    "insert_relations",
    "observations_of",
    "relation_rows",
    "relations_touching",
]

_E, _O, _R = schema.mcp_entities, schema.mcp_observations, schema.mcp_relations
#: A relation as the reference server writes it: (from, to, relationType).
Relation = tuple[str, str, str]
_CHUNK = 400  # names per IN (...) list, well under SQLite's bound-parameter limit


def _chunks(items: Sequence[str]) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def entity_ids(conn: Connection, tenant: str, names: Sequence[str]) -> dict[str, int]:
    """name -> id of the named entities that exist."""
    found: dict[str, int] = {}
    for chunk in _chunks(list(dict.fromkeys(names))):
        stmt = select(_E.c.name, _E.c.id).where(_E.c.tenant == tenant, _E.c.name.in_(chunk))
        found.update({str(name): int(i) for name, i in conn.execute(stmt)})
    return found


def entity_types(conn: Connection, tenant: str, names: Sequence[str]) -> dict[str, str]:
    """name -> entity type of the named entities that exist."""
    found: dict[str, str] = {}
    for chunk in _chunks(list(dict.fromkeys(names))):
        stmt = select(_E.c.name, _E.c.entity_type).where(
            _E.c.tenant == tenant, _E.c.name.in_(chunk)
        )
        found.update({str(name): str(kind) for name, kind in conn.execute(stmt)})
    return found


def containing(conn: Connection, tenant: str, needle: str) -> set[int]:
    """Ids of the entities whose type or an observation contains ``needle`` (lower case
    ASCII: SQL's ``lower`` folds ASCII letters only)."""
    type_match = select(_E.c.id).where(
        _E.c.tenant == tenant, func.lower(_E.c.entity_type).contains(needle, autoescape=True)
    )
    observation_match = (
        select(_O.c.entity_id)
        .join(_E, _E.c.id == _O.c.entity_id)
        .where(_E.c.tenant == tenant, func.lower(_O.c.content).contains(needle, autoescape=True))
    )
    return {int(i) for i in conn.execute(type_match.union(observation_match)).scalars()}


def entities_of_memories(conn: Connection, seqs: Sequence[int]) -> dict[int, int]:
    """memory seq -> the entity whose observation it stores (seqs of other memories: absent)."""
    found: dict[int, int] = {}
    for start in range(0, len(seqs), _CHUNK):
        chunk = seqs[start : start + _CHUNK]
        stmt = select(_O.c.memory_seq, _O.c.entity_id).where(_O.c.memory_seq.in_(chunk))
        found.update({int(s): int(e) for s, e in conn.execute(stmt)})
    return found


def insert_entities(
    conn: Connection, tenant: str, entities: Sequence[tuple[str, str]]
) -> list[str]:
    """Insert (name, type) entities whose name is new (the first of a repeated name wins);
    returns the names inserted, in order."""
    known = entity_ids(conn, tenant, [name for name, _ in entities])
    new: dict[str, str] = {}
    for name, entity_type in entities:
        if name not in known and name not in new:
            new[name] = entity_type
    if new:
        conn.execute(
            insert(_E),
            [{"tenant": tenant, "name": n, "entity_type": t} for n, t in new.items()],
        )
    return list(new)


def entity_rows(
    conn: Connection, tenant: str, after: int | None, limit: int | None
) -> list[tuple[int, str, str]]:
    """(id, name, type) of the entities in creation order, from the one after id ``after``."""
    stmt = select(_E.c.id, _E.c.name, _E.c.entity_type).where(_E.c.tenant == tenant)
    if after is not None:
        stmt = stmt.where(_E.c.id > after)
    stmt = stmt.order_by(_E.c.id)
    if limit is not None:
        stmt = stmt.limit(limit)
    return [(int(i), str(n), str(t)) for i, n, t in conn.execute(stmt)]


def observations_of(conn: Connection, ids: Sequence[int]) -> dict[int, list[tuple[int, str]]]:
    """entity id -> its observations as (memory seq, content), in the order they were added
    (all entities' observations when ``ids`` is empty is never meant: pass the ids)."""
    out: dict[int, list[tuple[int, str]]] = {i: [] for i in ids}
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        stmt = (
            select(_O.c.entity_id, _O.c.memory_seq, _O.c.content)
            .where(_O.c.entity_id.in_(chunk))
            .order_by(_O.c.id)
        )
        for entity_id, seq, content in conn.execute(stmt):
            out[int(entity_id)].append((int(seq), str(content)))
    return out


def insert_observations(conn: Connection, rows: Sequence[tuple[int, int, str]]) -> None:
    """Insert (entity id, memory seq, content) observations, in order."""
    if rows:
        conn.execute(
            insert(_O), [{"entity_id": e, "memory_seq": s, "content": c} for e, s, c in rows]
        )


def delete_observations(conn: Connection, entity_id: int, contents: Sequence[str]) -> list[int]:
    """Delete the entity's observations equal to one of ``contents``; returns their memory
    seqs (the stored memories, which the caller deletes)."""
    seqs: list[int] = []
    for chunk in _chunks(list(dict.fromkeys(contents))):
        where = and_(_O.c.entity_id == entity_id, _O.c.content.in_(chunk))
        seqs += [int(s) for s in conn.execute(select(_O.c.memory_seq).where(where)).scalars()]
        conn.execute(delete(_O).where(where))
    return seqs


def delete_entities(conn: Connection, tenant: str, names: Sequence[str]) -> list[int]:
    """Delete the named entities, their observations and every relation from or to one of
    the names; returns the memory seqs of the observations."""
    ids = list(entity_ids(conn, tenant, names).values())
    seqs = [seq for rows in observations_of(conn, ids).values() for seq, _ in rows]
    for start in range(0, len(ids), _CHUNK):
        id_chunk = ids[start : start + _CHUNK]
        conn.execute(delete(_O).where(_O.c.entity_id.in_(id_chunk)))
        conn.execute(delete(_E).where(_E.c.id.in_(id_chunk)))
    for chunk in _chunks(list(dict.fromkeys(names))):
        conn.execute(
            delete(_R).where(
                _R.c.tenant == tenant, or_(_R.c.source.in_(chunk), _R.c.target.in_(chunk))
            )
        )
    return seqs


def _existing_relations(conn: Connection, tenant: str, wanted: Sequence[Relation]) -> set[Relation]:
    found: set[Relation] = set()
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        stmt = select(_R.c.source, _R.c.target, _R.c.relation_type).where(
            _R.c.tenant == tenant,
            tuple_(_R.c.source, _R.c.target, _R.c.relation_type).in_(chunk),
        )
        found.update((str(a), str(b), str(t)) for a, b, t in conn.execute(stmt))
    return found


def insert_relations(
    conn: Connection, tenant: str, relations: Sequence[Relation]
) -> list[Relation]:
    """Insert the relations not stored yet (exact duplicates skipped); returns them in order."""
    wanted = list(dict.fromkeys(relations))
    held = _existing_relations(conn, tenant, wanted)
    new = [r for r in wanted if r not in held]
    if new:
        conn.execute(
            insert(_R),
            [{"tenant": tenant, "source": a, "target": b, "relation_type": t} for a, b, t in new],
        )
    return new


def delete_relations(
    conn: Connection, tenant: str, relations: Sequence[Relation]
) -> list[Relation]:
    """Delete the given relations; returns those that existed."""
    wanted = list(dict.fromkeys(relations))
    held = _existing_relations(conn, tenant, wanted)
    for a, b, t in held:
        conn.execute(
            delete(_R).where(
                _R.c.tenant == tenant, _R.c.source == a, _R.c.target == b, _R.c.relation_type == t
            )
        )
    return [r for r in wanted if r in held]


def relation_rows(
    conn: Connection, tenant: str, after: int | None, limit: int | None
) -> list[tuple[int, Relation]]:
    """(id, relation) in creation order, from the one after id ``after``."""
    stmt = select(_R.c.id, _R.c.source, _R.c.target, _R.c.relation_type).where(
        _R.c.tenant == tenant
    )
    if after is not None:
        stmt = stmt.where(_R.c.id > after)
    stmt = stmt.order_by(_R.c.id)
    if limit is not None:
        stmt = stmt.limit(limit)
    return [(int(i), (str(a), str(b), str(t))) for i, a, b, t in conn.execute(stmt)]


def relations_touching(conn: Connection, tenant: str, names: Sequence[str]) -> list[Relation]:
    """The relations from or to one of ``names``, in creation order."""
    found: dict[int, Relation] = {}
    for chunk in _chunks(list(dict.fromkeys(names))):
        stmt = select(_R.c.id, _R.c.source, _R.c.target, _R.c.relation_type).where(
            _R.c.tenant == tenant, or_(_R.c.source.in_(chunk), _R.c.target.in_(chunk))
        )
        found.update({int(i): (str(a), str(b), str(t)) for i, a, b, t in conn.execute(stmt)})
    return [found[i] for i in sorted(found)]


def count_rows(conn: Connection, tenant: str) -> tuple[int, int]:
    """How many entities and relations the tenant's graph holds."""
    entities = conn.execute(select(func.count()).where(_E.c.tenant == tenant)).scalar()
    relations = conn.execute(select(func.count()).where(_R.c.tenant == tenant)).scalar()
    return int(entities or 0), int(relations or 0)


def all_observations(conn: Connection, tenant: str) -> list[tuple[int, int, str]]:
    """(entity id, memory seq, content) of every observation of the tenant, in order."""
    stmt = (
        select(_O.c.entity_id, _O.c.memory_seq, _O.c.content)
        .join(_E, _E.c.id == _O.c.entity_id)
        .where(_E.c.tenant == tenant)
        .order_by(_O.c.id)
    )
    return [(int(e), int(s), str(c)) for e, s, c in conn.execute(stmt)]
