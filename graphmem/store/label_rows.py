"""Entity labels voted from their mentions, and the settings that hold declared types.

Example:
    >>> pick_label({"PERSON": (5, 1), "ORG": (5, 0)})
    'ORG'
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, bindparam, func, insert, select, update

from ..errors import DatabaseFileError
from .batch_rows import write_batch
from .memory_rows import chunks
from .schema import aliases, entities, mentions, meta

__all__ = [
    "DECLARED_PATTERNS_KEY",
    "REANALYSIS_KEY",
    "drop_gone_relabels",
    "RELABELLED_KEY",
    "LabelWeight",
    "alias_labels",
    "mention_label_counts",
    "one_each",
    "pick_label",
    "damaged_setting",
    "read_setting",
    "set_entity_label",
    "vote_labels",
    "write_setting",
]

# Run once per indexing batch: built once.
_MENTION_LABELS = (
    select(
        mentions.c.entity_id,
        mentions.c.label,
        mentions.c.label_source,
        func.count(),
        func.min(mentions.c.id),
    )
    .where(mentions.c.entity_id.in_(bindparam("ids", expanding=True)))
    .group_by(mentions.c.entity_id, mentions.c.label, mentions.c.label_source)
)


#: The weight of one mention's label in its entity's vote, from the label and what gave it
#: (:func:`graphmem.extract.entity_types.label_weight`; the store does not decide it).
LabelWeight = Callable[[str, str | None], float]


def one_each(label: str, source: str | None) -> float:
    return 1.0


def mention_label_counts(
    conn: Connection, entity_ids: Sequence[int], weight: LabelWeight = one_each
) -> dict[int, dict[str, tuple[float, int]]]:
    """For each entity, its mention labels: ``label -> (votes, id of the first)``, each
    mention counting ``weight(label, label_source)`` (one by default)."""
    out: dict[int, dict[str, tuple[float, int]]] = {}
    for entity_id, label, source, n, first_id in conn.execute(
        _MENTION_LABELS, {"ids": sorted(set(entity_ids))}
    ):
        votes = out.setdefault(int(entity_id), {})
        total, first = votes.get(label, (0.0, int(first_id)))
        votes[label] = (total + int(n) * weight(label, source), min(first, int(first_id)))
    return out


def pick_label(
    votes: Mapping[str, tuple[float, Any]], preferred: Callable[[str], bool] | None = None
) -> str:
    """The label voted for an entity from ``label -> (mentions, first)``: the most frequent,
    a tie going to the label seen first so one odd mention does not flip an entity's label.
    Labels ``preferred`` accepts (the user's declared types) win over all others.

    Examples:
        >>> pick_label({"PERSON": (5, 1), "PROJECT": (1, 9)})
        'PERSON'
        >>> pick_label({"PERSON": (5, 1), "PROJECT": (1, 9)}, preferred=lambda x: x == "PROJECT")
        'PROJECT'
    """
    if preferred is not None and any(preferred(label) for label in votes):
        votes = {label: n for label, n in votes.items() if preferred(label)}
    return min(votes, key=lambda label: (-votes[label][0], votes[label][1], label))


def vote_labels(
    conn: Connection,
    entity_ids: Iterable[int],
    preferred: Callable[[str], bool] | None = None,
    weight: LabelWeight = one_each,
) -> dict[int, str]:
    """Set each entity's label to the vote of its stored mentions (each counting
    ``weight``); returns the new labels."""
    counts = mention_label_counts(conn, list(entity_ids), weight)
    out = {e: pick_label(v, preferred) for e, v in counts.items()}
    write_batch(conn, entity_labels=[{"eid": e, "label": label} for e, label in out.items()])
    return out


# ---------------------------------------------------------------------- declared types
#: ``graphmem_meta`` keys of what the user declared: entity-ruler patterns (every tenant's),
#: and the labels set by relabelling (``tenant -> entity key -> label``).
DECLARED_PATTERNS_KEY = "entity_patterns"
RELABELLED_KEY = "entity_labels"
#: ``graphmem_meta`` key: the plan of a re-analysis under way (absent when none is).
REANALYSIS_KEY = "reanalysis"


def read_setting(conn: Connection, key: str) -> Any:
    """The JSON value stored under ``key`` in ``graphmem_meta`` (None when absent).

    Raises:
        DatabaseFileError: the value is not JSON (the message names the key).
    """
    value = conn.execute(select(meta.c.value).where(meta.c.key == key)).scalar()
    if value is None:
        return None
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        raise damaged_setting(conn, key) from None


def damaged_setting(conn: Connection, key: str) -> DatabaseFileError:
    """The error of a ``graphmem_meta`` value that is not what graphmem wrote."""
    where = conn.engine.url.database or "in-memory database"
    return DatabaseFileError(
        f"{where}: its graphmem_meta value {key!r} is damaged (not what graphmem writes)"
    )


def write_setting(conn: Connection, key: str, value: Any) -> None:
    """Store ``value`` (JSON) under ``key`` in ``graphmem_meta``."""
    text = json.dumps(value, sort_keys=True)
    if conn.execute(update(meta).where(meta.c.key == key).values(value=text)).rowcount == 0:
        conn.execute(insert(meta).values(key=key, value=text))


def set_entity_label(conn: Connection, entity_id: int, label: str) -> None:
    """Give an entity and every mention of it ``label`` (so later votes keep it)."""
    conn.execute(update(entities).where(entities.c.id == entity_id).values(label=label))
    conn.execute(update(mentions).where(mentions.c.entity_id == entity_id).values(label=label))


def alias_labels(conn: Connection, entity_id: int) -> dict[str, str]:
    """The surfaces an entity's mentions were written as -> the label most of them carry."""
    counts: dict[str, dict[str, int]] = {}
    rows = conn.execute(
        select(mentions.c.surface, mentions.c.label, func.count())
        .where(mentions.c.entity_id == entity_id)
        .group_by(mentions.c.surface, mentions.c.label)
    )
    for surface, label, n in rows:
        counts.setdefault(surface, {})[label] = int(n)
    return {s: max(v, key=lambda label: (v[label], label)) for s, v in counts.items()}


def drop_gone_relabels(conn: Connection) -> None:
    """Forget the labels set by relabelling entities that are gone (no alias of their
    tenant has the key), so a later entity of that name is not given one. Not while a
    re-analysis is under way: it has dropped entities it makes again, labels and all."""
    relabelled: dict[str, dict[str, str]] = read_setting(conn, RELABELLED_KEY) or {}
    under_way = select(meta.c.key).where(meta.c.key == REANALYSIS_KEY)
    if not relabelled or conn.execute(under_way).first() is not None:
        return
    kept: dict[str, dict[str, str]] = {}
    for tenant, labels in relabelled.items():
        alive: set[str] = set()
        for chunk in chunks(sorted(labels), 500):
            found = select(aliases.c.key).where(
                aliases.c.tenant == tenant, aliases.c.key.in_(chunk)
            )
            alive.update(str(k) for k in conn.execute(found).scalars())
        if alive:
            kept[tenant] = {k: v for k, v in labels.items() if k in alive}
    if kept != relabelled:
        write_setting(conn, RELABELLED_KEY, kept)
