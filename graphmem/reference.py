"""The MCP reference memory server's knowledge graph, over graphmem's store.

The reference server (``@modelcontextprotocol/server-memory``) keeps entities
``{name, entityType, observations}`` and relations ``{from, to, relationType}`` in a JSONL
file. :class:`ReferenceGraph` keeps the same graph, exactly as the client gave it, in
graphmem's database (:mod:`graphmem.store.mcp_rows`), and more:

- each observation is also a stored memory about its entity (namespace ``mcp-memory``):
  dated, found by graphmem's ranked search (``recall``, ``context`` and the facade's search
  find it, and forget it with ``delete_observations``: one memory behind every tool), and
  read by extraction like any saved text;
  the entity joins graphmem's knowledge graph with the label its type maps to
  (:func:`label_of`), and each relation becomes a hand-added relation of the same type;
- every call is one transaction, so concurrent clients and processes lose nothing;
- :meth:`ReferenceGraph.read_graph` and :meth:`ReferenceGraph.search_nodes` take a limit and
  a cursor, and search ranks its matches (names first, then graphmem's ranking of the
  observations the query's words match: only entities that match are returned).

Deliberate differences from the reference: a name repeated inside one ``create_entities``
call, or a string repeated inside one observation list, is stored once (the reference
writes both copies, and its file then holds a duplicate entity); names and observations
must be non-blank strings (:class:`~graphmem.errors.InvalidArgumentError`).

Example:
    >>> graph = ReferenceGraph(None)
    >>> graph.create_entities([{"name": "Ada", "entityType": "person", "observations": ["Writes Rust"]}])
    [{'name': 'Ada', 'entityType': 'person', 'observations': ['Writes Rust']}]
    >>> graph.create_relations([{"from": "Ada", "to": "Lumen", "relationType": "works_at"}])
    [{'from': 'Ada', 'to': 'Lumen', 'relationType': 'works_at'}]
    >>> [e["name"] for e in graph.search_nodes("rust")["entities"]]
    ['Ada']
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from ._files import replacing
from .compat.storage import SQLiteStorage, resolve_storage
from .errors import EntityNotFound, GraphmemError, InvalidArgumentError, InvalidArgumentTypeError
from .extract.entity_patterns import check_entity_label
from .extract.normalize import canonical_key
from .graph.knowledge_graph import CO_OCCURS
from .index.writer import NewText
from .items import StoredMemory, check_content, check_encodable, check_limit
from .memories.entity import OBSERVATIONS, EntityMemory
from .store import Connection, mcp_rows
from .store.mcp_rows import Relation

__all__ = [
    "OBSERVATIONS",
    "MCPMemoryFileError",
    "ReferenceGraph",
    "label_of",
]

#: How many search hits graphmem's ranking is asked for, at most.
_RANKED_POOL = 200

#: Entity types -> graphmem labels; any other type becomes its upper-case form ("project" ->
#: PROJECT), or graphmem's unknown label when that is not a label.
_LABELS = {
    "person": "PERSON",
    "people": "PERSON",
    "human": "PERSON",
    "user": "PERSON",
    "organization": "ORG",
    "organisation": "ORG",
    "company": "ORG",
    "org": "ORG",
    "business": "ORG",
    "institution": "ORG",
    "location": "GPE",
    "place": "GPE",
    "city": "GPE",
    "country": "GPE",
    "region": "GPE",
    "product": "PRODUCT",
    "event": "EVENT",
}


class MCPMemoryFileError(GraphmemError, ValueError):
    """A file to import is not the reference server's JSONL (the message names the line)."""


def label_of(entity_type: str) -> str | None:
    """The graphmem label an entity type maps to (None: no label; graphmem decides).

    Example:
        >>> label_of("Person"), label_of("project"), label_of("2024")
        ('PERSON', 'PROJECT', None)
    """
    key = entity_type.strip().lower()
    if key in _LABELS:
        return _LABELS[key]
    candidate = re.sub(r"[^A-Z0-9]+", "_", entity_type.strip().upper()).strip("_")
    if not candidate or not candidate[0].isalpha():
        return None
    try:
        return check_entity_label(candidate)
    except GraphmemError:
        return None


class _Observations(EntityMemory):
    """The tier of observation memories (extraction reads them; each is about its entity)."""

    memory_type = "observation"
    default_namespace = OBSERVATIONS
    lists_entities = False

    def texts(self, about: str, entity_type: str, contents: Sequence[str]) -> list[NewText]:
        """The texts that store ``contents`` as observations of ``about``."""
        label = label_of(entity_type)
        metadata: dict[str, Any] = {"about": about}
        if label is not None:
            metadata["about_label"] = label
        return [self.as_new_text(self._make_item(c, metadata, {})) for c in contents]


@dataclass
class _Pending:
    """Observations to store for one entity: analysed before the write transaction."""

    name: str
    contents: list[str]
    texts: list[NewText]
    docs: list[Any]


class ReferenceGraph:
    """The reference memory server's graph of one user, in ``storage`` (None: in memory).

    Args:
        storage: the database (shared with graphmem's tiers and tools).
        user_id: whose graph (None: the default user, as for a plain ``CortexMemory()``).
    """

    def __init__(self, storage: SQLiteStorage | None, user_id: str | None = None) -> None:
        self._tier = _Observations(resolve_storage(storage), tenant=user_id)
        self.tenant = user_id or ""
        self._db = self._tier.space.database

    # ------------------------------------------------------------------ writing
    def create_entities(self, entities: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Create the entities whose name is new (others are skipped); returns those created."""
        checked = [_entity(e, f"entities[{i}]") for i, e in enumerate(_list(entities, "entities"))]
        pending = self._analysed((name, kind, obs) for name, kind, obs in checked)
        with self._db.write() as conn:
            created = set(
                mcp_rows.insert_entities(conn, self.tenant, [(n, t) for n, t, _ in checked])
            )
            ids = mcp_rows.entity_ids(conn, self.tenant, list(created))
            self._store(conn, ids, [p for p in pending if p.name in created])
        done: set[str] = set()
        out = []
        for name, kind, observations in checked:
            if name in created and name not in done:
                done.add(name)
                out.append(_entity_dict(name, kind, observations))
        return out

    def create_relations(self, relations: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Create the relations not stored yet (exact duplicates skipped); returns those created."""
        checked = [
            _relation(r, f"relations[{i}]") for i, r in enumerate(_list(relations, "relations"))
        ]
        with self._db.write() as conn:
            new = mcp_rows.insert_relations(conn, self.tenant, checked)
            types = self._types(conn, [name for r in new for name in r[:2]])
            for relation in new:
                self._link(relation, types)
        return [_relation_dict(r) for r in new]

    def add_observations(self, observations: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Add observations to existing entities, skipping strings they hold already; returns
        ``[{"entityName", "addedObservations"}]``.

        Raises:
            EntityNotFound: an entity does not exist (nothing is added).
        """
        checked = [
            _observation_list(o, f"observations[{i}]")
            for i, o in enumerate(_list(observations, "observations"))
        ]
        with self._db.read() as conn:
            types = self._types(conn, [name for name, _ in checked])
        for name, _ in checked:
            if name not in types:
                raise EntityNotFound(f"Entity with name {name} not found")
        pending = self._analysed((n, types[n], contents) for n, contents in checked)
        with self._db.write() as conn:
            ids = mcp_rows.entity_ids(conn, self.tenant, [name for name, _ in checked])
            missing = [name for name, _ in checked if name not in ids]
            if missing:  # deleted by another client meanwhile
                raise EntityNotFound(f"Entity with name {missing[0]} not found")
            chosen = self._unheld(conn, ids, pending)
            results = [{"entityName": p.name, "addedObservations": p.contents} for p in chosen]
            self._store(conn, ids, chosen)
        return results

    def delete_entities(self, names: Sequence[str]) -> None:
        """Delete the named entities (unknown names are ignored), their observations and
        every relation from or to them."""
        checked = _names(names, "entityNames")
        with self._db.write() as conn:
            gone = mcp_rows.relations_touching(conn, self.tenant, checked)
            seqs = mcp_rows.delete_entities(conn, self.tenant, checked)
            self._forget_memories(conn, seqs)
            self._unlink(conn, gone)

    def delete_observations(self, deletions: Sequence[Mapping[str, Any]]) -> None:
        """Delete the given observation strings of each entity (unknown entities and strings
        are ignored)."""
        checked = [
            _observation_list(d, f"deletions[{i}]", key="observations")
            for i, d in enumerate(_list(deletions, "deletions"))
        ]
        with self._db.write() as conn:
            ids = mcp_rows.entity_ids(conn, self.tenant, [name for name, _ in checked])
            seqs: list[int] = []
            for name, contents in checked:
                if name in ids:
                    seqs += mcp_rows.delete_observations(conn, ids[name], contents)
            self._forget_memories(conn, seqs)

    def delete_relations(self, relations: Sequence[Mapping[str, Any]]) -> None:
        """Delete the given relations (those not stored are ignored)."""
        checked = [
            _relation(r, f"relations[{i}]") for i, r in enumerate(_list(relations, "relations"))
        ]
        with self._db.write() as conn:
            gone = mcp_rows.delete_relations(conn, self.tenant, checked)
            self._unlink(conn, gone)

    # ------------------------------------------------------------------ reading
    def read_graph(self, limit: int | None = None, cursor: str | None = None) -> dict[str, Any]:
        """The graph in creation order, entities first (as the reference's file is).

        With ``limit``, at most that many entities and relations together; the answer's
        ``nextCursor`` (absent at the end) gives the next page.
        """
        limit = _limit(limit)
        kind, after = _cursor(cursor, ("e", "r"))
        with self._db.read() as conn:
            entities: list[dict[str, Any]] = []
            last: tuple[str, int] | None = None
            if kind == "e":
                rows = mcp_rows.entity_rows(conn, self.tenant, after, limit)
                entities = self._entities(conn, rows)
                if rows:
                    last = ("e", rows[-1][0])
                after = None
            room = None if limit is None else limit - len(entities)
            relations: list[Relation] = []
            if room is None or room > 0:
                found = mcp_rows.relation_rows(conn, self.tenant, after, room)
                relations = [r for _, r in found]
                if found:
                    last = ("r", found[-1][0])
            more = limit is not None and last is not None and self._more(conn, last)
        page: dict[str, Any] = {
            "entities": entities,
            "relations": [_relation_dict(r) for r in relations],
        }
        if more and last is not None:
            page["nextCursor"] = f"{last[0]}{last[1]}"
        return page

    def search_nodes(
        self, query: str, limit: int | None = None, cursor: str | None = None
    ) -> dict[str, Any]:
        """Entities whose name, type or an observation contains ``query`` (any case, as the
        reference matches), and those graphmem's search finds for it (BM25 + graph: other
        word forms, entities the query names), best first; with the relations from or to
        each entity returned.

        With ``limit``, at most that many entities; ``nextCursor`` gives the next page.
        """
        if not isinstance(query, str):
            raise InvalidArgumentTypeError(f"query must be a str, got {type(query).__name__}")
        limit = _limit(limit)
        _, offset = _cursor(cursor, ("s",))
        offset = offset or 0
        pool = _RANKED_POOL if limit is None else min(_RANKED_POOL, 2 * (offset + limit) + 10)
        ranked = self._ranked(query, pool)
        with self._db.read() as conn:
            rows = mcp_rows.entity_rows(conn, self.tenant, None, None)
            order = _search_order(query, rows, self._contained(conn, query), ranked(conn))
            end = None if limit is None else offset + limit
            by_id = {row[0]: row for row in rows}
            entities = self._entities(conn, [by_id[i] for i in order[offset:end]])
            relations = mcp_rows.relations_touching(
                conn, self.tenant, [e["name"] for e in entities]
            )
        page: dict[str, Any] = {
            "entities": entities,
            "relations": [_relation_dict(r) for r in relations],
        }
        if end is not None and end < len(order):
            page["nextCursor"] = f"s{end}"
        return page

    def open_nodes(self, names: Sequence[str]) -> dict[str, Any]:
        """The named entities (in creation order; unknown names are ignored) and the
        relations from or to them."""
        checked = _names(names, "names")
        with self._db.read() as conn:
            ids = set(mcp_rows.entity_ids(conn, self.tenant, checked).values())
            rows = [r for r in mcp_rows.entity_rows(conn, self.tenant, None, None) if r[0] in ids]
            entities = self._entities(conn, rows)
            relations = mcp_rows.relations_touching(
                conn, self.tenant, [e["name"] for e in entities]
            )
        return {"entities": entities, "relations": [_relation_dict(r) for r in relations]}

    def counts(self) -> tuple[int, int]:
        """How many entities and relations the graph holds."""
        with self._db.read() as conn:
            return mcp_rows.count_rows(conn, self.tenant)

    # ------------------------------------------------------------------ files
    def import_jsonl(self, source: str | IO[str]) -> dict[str, int]:
        """Add the graph of a reference server's ``memory.jsonl`` (a path or a text file);
        returns how many entities, relations and observations were new.

        The file is read and checked whole before anything is written, then written in one
        transaction (a damaged line leaves the database as it was). Entities that exist keep
        their type and gain the file's new observations; exact duplicate relations are
        skipped, so importing a file twice changes nothing.

        Raises:
            MCPMemoryFileError: a line is not JSON, or not an entity or relation record.
        """
        if isinstance(source, str):
            with open(source, "rb") as handle:
                entities, relations = _read_file(_utf8_lines(handle, source), source)
        else:
            entities, relations = _read_file(source, "the file")
        names = [e["name"] for e in entities]
        with self._db.read() as conn:
            known = self._types(conn, names)
        pending = self._analysed(
            (e["name"], known.get(e["name"], e["entityType"]), e["observations"]) for e in entities
        )
        with self._db.write() as conn:
            created = mcp_rows.insert_entities(
                conn, self.tenant, [(e["name"], e["entityType"]) for e in entities]
            )
            ids = mcp_rows.entity_ids(conn, self.tenant, names)
            chosen = self._unheld(conn, ids, pending)
            added = sum(len(p.contents) for p in chosen)
            self._store(conn, ids, chosen)
            new = mcp_rows.insert_relations(conn, self.tenant, relations)
            types = self._types(conn, [name for r in new for name in r[:2]])
            for relation in new:
                self._link(relation, types)
        return {"entities": len(created), "relations": len(new), "observations": added}

    def export_jsonl(self, target: str | IO[str]) -> dict[str, int]:
        """Write the graph as the reference server's ``memory.jsonl`` (entities, then
        relations; a path is replaced whole, never left half written); returns counts."""
        if isinstance(target, str):
            from pathlib import Path

            with replacing(Path(target)) as partial, partial.open("w", encoding="utf-8") as out:
                return self._export(out)
        return self._export(target)

    def _export(self, out: IO[str]) -> dict[str, int]:
        counts = {"entities": 0, "relations": 0, "observations": 0}
        with self._db.read() as conn:
            lines = self._lines(conn, counts)
            first = True
            for line in lines:
                out.write(line if first else "\n" + line)
                first = False
        return counts

    def _lines(self, conn: Connection, counts: dict[str, int]) -> Iterator[str]:
        after: int | None = None
        while True:
            rows = mcp_rows.entity_rows(conn, self.tenant, after, 500)
            for entity in self._entities(conn, rows):
                counts["entities"] += 1
                counts["observations"] += len(entity["observations"])
                yield _json({"type": "entity", **entity})
            if len(rows) < 500:
                break
            after = rows[-1][0]
        for _, relation in mcp_rows.relation_rows(conn, self.tenant, None, None):
            counts["relations"] += 1
            yield _json({"type": "relation", **_relation_dict(relation)})

    # ------------------------------------------------------------------ helpers
    def _analysed(self, entities: Iterable[tuple[str, str, Sequence[str]]]) -> list[_Pending]:
        """Each entity's observations (repeats dropped) as texts, analysed now: NLP runs
        before the write transaction, not while it holds the database."""
        pending = []
        for name, kind, observations in entities:
            contents = list(dict.fromkeys(observations))
            pending.append(_Pending(name, contents, self._tier.texts(name, kind, contents), []))
        texts = [t for p in pending for t in p.texts]
        docs = iter(self._tier.space.writer.analyse(texts))
        for p in pending:
            p.docs = [next(docs) for _ in p.texts]
        return pending

    @staticmethod
    def _unheld(
        conn: Connection, ids: Mapping[str, int], pending: Sequence[_Pending]
    ) -> list[_Pending]:
        """``pending`` without the observations its entity holds already (or an earlier
        entry of ``pending`` adds)."""
        held = {
            i: {content for _, content in rows}
            for i, rows in mcp_rows.observations_of(conn, list(set(ids.values()))).items()
        }
        out = []
        for p in pending:
            have = held[ids[p.name]]
            keep = [k for k, content in enumerate(p.contents) if content not in have]
            have.update(p.contents[k] for k in keep)
            out.append(
                _Pending(
                    p.name,
                    [p.contents[k] for k in keep],
                    [p.texts[k] for k in keep],
                    [p.docs[k] for k in keep],
                )
            )
        return out

    def _store(self, conn: Connection, ids: Mapping[str, int], pending: Sequence[_Pending]) -> None:
        texts = [t for p in pending for t in p.texts]
        if not texts:
            return
        docs = [d for p in pending for d in p.docs]
        rows = self._tier.space.writer.write(conn, texts, docs)
        seqs = iter(text_rows[0].seq for text_rows in rows)
        mcp_rows.insert_observations(
            conn, [(ids[p.name], next(seqs), content) for p in pending for content in p.contents]
        )

    def _entities(
        self, conn: Connection, rows: Sequence[tuple[int, str, str]]
    ) -> list[dict[str, Any]]:
        observations = mcp_rows.observations_of(conn, [i for i, _, _ in rows])
        return [_entity_dict(name, kind, [c for _, c in observations[i]]) for i, name, kind in rows]

    def _types(self, conn: Connection, names: Sequence[str]) -> dict[str, str]:
        return mcp_rows.entity_types(conn, self.tenant, names)

    def _more(self, conn: Connection, last: tuple[str, int]) -> bool:
        kind, after = last
        if kind == "e" and mcp_rows.entity_rows(conn, self.tenant, after, 1):
            return True
        return bool(mcp_rows.relation_rows(conn, self.tenant, after if kind == "r" else None, 1))

    def _ranked(self, query: str, pool: int) -> Callable[[Connection], dict[int, int]]:
        """entity id -> the rank of its best observation among the ``pool`` best of graphmem's
        search for ``query`` (run now; the mapping to entities is read in the caller's
        transaction)."""
        # Only hits the query's words match (any form of them): the graph and meaning also
        # bring in memories of other entities, which would answer with entities that do not
        # match the query at all.
        seqs = (
            [
                hit.seq
                for hit in self._tier.search_hits(query, limit=pool)
                if hit.explanation.matched_terms
            ]
            if query.strip()
            else []
        )

        def ranks(conn: Connection) -> dict[int, int]:
            entity_of = mcp_rows.entities_of_memories(conn, seqs)
            best: dict[int, int] = {}
            for rank, seq in enumerate(seqs):
                if seq in entity_of:
                    best.setdefault(entity_of[seq], rank)
            return best

        return ranks

    def _contained(self, conn: Connection, query: str) -> set[int]:
        """Ids of the entities whose type or an observation contains ``query``, in any case
        (JavaScript's ``toLowerCase``, as the reference compares; SQL's ``LIKE`` ends a
        pattern at a NUL, so a query holding one is compared here)."""
        needle = query.lower()
        if needle.isascii() and "\x00" not in needle:
            return mcp_rows.containing(conn, self.tenant, needle)
        found = {
            i
            for i, _, kind in mcp_rows.entity_rows(conn, self.tenant, None, None)
            if needle in kind.lower()
        }
        found.update(
            e
            for e, _, content in mcp_rows.all_observations(conn, self.tenant)
            if needle in content.lower()
        )
        return found

    def _forget_memories(self, conn: Connection, seqs: Sequence[int]) -> None:
        if seqs:
            rows = [StoredMemory(seq, OBSERVATIONS, self.tenant) for seq in seqs]
            self._tier.space.entity_index.delete_memories(conn, rows)

    def _link(self, relation: Relation, types: Mapping[str, str]) -> None:
        """The relation in graphmem's knowledge graph too (a hand-added relation)."""
        source, target, kind = relation
        if _predicate(kind) == CO_OCCURS or not _predicate(kind):
            return  # graphmem's own co-occurrence, not a relation type
        labels = [label_of(types[n]) if n in types else None for n in (source, target)]
        try:
            self._tier.add_relation(
                source, kind, target, subject_label=labels[0], object_label=labels[1]
            )
        except InvalidArgumentError:
            # A label graphmem's entity of that name cannot take: link by name alone.
            self._tier.add_relation(source, kind, target)

    def _unlink(self, conn: Connection, gone: Sequence[Relation]) -> None:
        """Take what :meth:`_link` added off the graph relations of ``gone`` that no remaining
        relation stands for (what texts gave them stays), all at once."""
        if not gone:
            return
        remaining = {
            _graph_key(r)
            for r in mcp_rows.relations_touching(
                conn, self.tenant, [n for r in gone for n in r[:2]]
            )
        }
        self._tier.remove_relations(
            [
                (relation[0], _predicate(relation[2]), relation[1])
                for relation in gone
                if _graph_key(relation) not in remaining and _predicate(relation[2]) != CO_OCCURS
            ],
            by_hand_only=True,
        )


# ---------------------------------------------------------------------- validation
def _list(value: object, name: str) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise InvalidArgumentTypeError(f"{name} must be a list, got {type(value).__name__}")
    return list(value)


def _text(value: object, name: str) -> str:
    return check_content(value, name)


def _names(value: object, name: str) -> list[str]:
    return [_text(v, f"{name}[{i}]") for i, v in enumerate(_list(value, name))]


def _fields(value: object, where: str, keys: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidArgumentTypeError(f"{where} must be an object, got {type(value).__name__}")
    missing = [k for k in keys if k not in value]
    if missing:
        raise InvalidArgumentError(f"{where} has no {', '.join(missing)}")
    return value


def _entity(value: object, where: str) -> tuple[str, str, list[str]]:
    e = _fields(value, where, ("name", "entityType", "observations"))
    kind = e["entityType"]
    if not isinstance(kind, str):
        raise InvalidArgumentTypeError(f"{where}.entityType must be a str")
    check_encodable(kind, f"{where}.entityType")
    return (
        _text(e["name"], f"{where}.name"),
        kind,
        _names(e["observations"], f"{where}.observations"),
    )


def _relation(value: object, where: str) -> Relation:
    r = _fields(value, where, ("from", "to", "relationType"))
    return (
        _text(r["from"], f"{where}.from"),
        _text(r["to"], f"{where}.to"),
        _text(r["relationType"], f"{where}.relationType"),
    )


def _observation_list(value: object, where: str, key: str = "contents") -> tuple[str, list[str]]:
    o = _fields(value, where, ("entityName", key))
    return _text(o["entityName"], f"{where}.entityName"), _names(o[key], f"{where}.{key}")


def _limit(limit: int | None) -> int | None:
    if limit is None:
        return None
    found = check_limit(limit, "limit")
    if not found:
        raise InvalidArgumentError("limit must be at least 1")
    return found


def _cursor(cursor: str | None, kinds: tuple[str, ...]) -> tuple[str, int | None]:
    """A cursor this graph gave: its kind and position (no cursor: the start): ASCII digits
    that fit a SQL integer (``str.isdigit`` takes "²", which ``int`` refuses)."""
    if cursor is None:
        return kinds[0], None
    if isinstance(cursor, str) and cursor[:1] in kinds and re.fullmatch("[0-9]{1,18}", cursor[1:]):
        return cursor[0], int(cursor[1:])
    raise InvalidArgumentError(f"cursor {str(cursor)[:40]!r} is not a cursor this tool gave")


# ---------------------------------------------------------------------- shapes
def _entity_dict(name: str, kind: str, observations: list[str]) -> dict[str, Any]:
    return {"name": name, "entityType": kind, "observations": observations}


def _relation_dict(relation: Relation) -> dict[str, Any]:
    return {"from": relation[0], "to": relation[1], "relationType": relation[2]}


def _predicate(kind: str) -> str:
    """The graphmem predicate of a relation type (as ``add_relation`` spells it)."""
    return kind.strip().lower().replace(" ", "_")


def _graph_key(relation: Relation) -> tuple[str, str, str]:
    return canonical_key(relation[0]), _predicate(relation[2]), canonical_key(relation[1])


def _json(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def _search_order(
    query: str,
    rows: Sequence[tuple[int, str, str]],
    contained: set[int],
    ranked: Mapping[int, int],
) -> list[int]:
    """Entity ids that match ``query``, best first: the name itself, a name containing it,
    then by graphmem's rank of their best observation, then the reference's other matches
    (a type or an observation containing it), each group in creation order."""
    q = query.lower()
    unranked = len(ranked) + 1
    keyed = []
    for position, (entity_id, name, _) in enumerate(rows):
        lower = name.lower()
        if lower == q:
            group = 0
        elif q in lower:
            group = 1
        elif entity_id in ranked:
            group = 2
        elif entity_id in contained:
            group = 3
        else:
            continue
        keyed.append((group, ranked.get(entity_id, unranked), position, entity_id))
    return [entity_id for *_, entity_id in sorted(keyed)]


def _utf8_lines(handle: IO[bytes], where: str) -> Iterator[str]:
    """The lines of a binary file as text; a line that is not UTF-8 raises
    :class:`MCPMemoryFileError` naming it."""
    for number, raw in enumerate(handle, 1):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MCPMemoryFileError(
                f"{where}, line {number}: not UTF-8 text (byte {exc.start + 1}: {exc.reason})"
            ) from None


def _read_file(lines: Iterable[str], where: str) -> tuple[list[dict[str, Any]], list[Relation]]:
    """The entities (repeated names merged: later observations appended) and relations of a
    reference ``memory.jsonl``, checked whole."""
    try:
        return _read_lines(lines, where)
    except UnicodeDecodeError as exc:  # a text file (stdin) that is not UTF-8
        raise MCPMemoryFileError(f"{where}: not UTF-8 text ({exc.reason})") from None


def _read_lines(lines: Iterable[str], where: str) -> tuple[list[dict[str, Any]], list[Relation]]:
    entities: dict[str, dict[str, Any]] = {}
    relations: list[Relation] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise MCPMemoryFileError(f"{where}, line {number}: not JSON ({exc})") from None
        except RecursionError:
            raise MCPMemoryFileError(f"{where}, line {number}: nests too deeply") from None
        try:
            if not isinstance(record, dict) or record.get("type") not in ("entity", "relation"):
                raise InvalidArgumentError('not a record of "type" "entity" or "relation"')
            if record["type"] == "entity":
                name, kind, observations = _entity(record, "the entity")
                held = entities.setdefault(
                    name, {"name": name, "entityType": kind, "observations": []}
                )
                held["observations"] += observations
            else:
                relations.append(_relation(record, "the relation"))
        except (InvalidArgumentError, InvalidArgumentTypeError) as exc:
            raise MCPMemoryFileError(f"{where}, line {number}: {exc}") from None
    return list(entities.values()), relations
