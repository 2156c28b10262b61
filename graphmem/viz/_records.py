"""What the page holds of each entity and relation: drawing options, tooltip and panel
records, with every text from the graph cut to a budget (memory content is untrusted and
may be of any size).

Example:
    >>> record = node_record({"label": "PERSON", "mentions": 3}, "Ada Lovelace", focus=False)
    >>> record["label"], record["size"], record["tooltip"]["subtitle"]
    ('Ada Lovelace', 18.7, 'PERSON · 3 mentions')
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Hashable, Iterable
from typing import Any

from graphmem.extract.predicates import event_predicates
from graphmem.graph.knowledge_graph import CO_OCCURS, validity_text

from ._subgraphs import count_value

__all__ = [
    "HEADING_CHARS",
    "NAME_LABEL_CHARS",
    "display_name",
    "edge_width",
    "label_colour",
    "node_record",
    "node_size",
    "plural",
    "predicate_of",
    "relation_record",
    "short_text",
    "short_texts",
]

#: Colour-blind-friendly colours (Tableau 10) for the entity labels graphmem keeps.
_LABEL_COLOURS = {
    "PERSON": "#4e79a7",
    "ORG": "#f28e2b",
    "GPE": "#59a14f",
    "LOC": "#8cd17d",
    "PRODUCT": "#e15759",
    "EVENT": "#b07aa1",
    "WORK_OF_ART": "#ff9da7",
    "NORP": "#9c755f",
    "FAC": "#76b7b2",
    "LAW": "#edc948",
}
#: Other labels get one of these, chosen by a stable hash of the label.
_EXTRA_COLOURS = ("#17becf", "#bcbd22", "#aec7e8", "#ffbb78", "#c5b0d5", "#c49c94", "#dbdb8d")
_UNLABELLED = "UNLABELLED"
_UNLABELLED_COLOUR = "#bab0ac"

# Text budgets keep tooltips readable and the page small whatever a memory holds.
NAME_LABEL_CHARS = 32
HEADING_CHARS = 200
_PREDICATE_CHARS = 60
_ALIAS_COUNT, _ALIAS_CHARS = 12, 80
_EVIDENCE_COUNT, _EVIDENCE_CHARS = 3, 300
_PANEL_EVIDENCE_COUNT = 5
_ID_CHARS, _STAMP_CHARS = 80, 40


def node_size(mentions: int) -> float:
    """The radius (in pixels at 100% zoom) of a node with ``mentions`` mentions.

    Example:
        >>> node_size(1), node_size(10), node_size(100_000)
        (10.0, 28.3, 44.0)
    """
    return round(min(10 + 5.5 * math.log2(max(mentions, 1)), 44.0), 1)


def edge_width(support: int) -> float:
    """The width (in pixels at 100% zoom) of a relation with ``support`` pieces of evidence.

    Example:
        >>> edge_width(1), edge_width(4), edge_width(10_000)
        (1.5, 4.5, 9.0)
    """
    return round(min(1.5 + 1.5 * math.log2(max(support, 1)), 9.0), 2)


def node_record(attrs: dict[str, Any], name: str, *, focus: bool) -> dict[str, Any]:
    """An entity's drawing options and the page's record of it."""
    label = _entity_label(attrs)
    colour = label_colour(label)
    border = "#1f2933" if focus else _darken(colour)
    mentions = count_value(attrs.get("mentions"), default=-1)  # -1: missing or not a number
    subtitle = label
    if mentions >= 0:
        subtitle += f" · {plural(mentions, 'mention')}"
    if focus:
        subtitle += " · focus"
    aliases = _unique(short_texts(attrs.get("aliases"), _ALIAS_COUNT, _ALIAS_CHARS))
    return {
        "label": short_text(name, NAME_LABEL_CHARS) or "?",
        "color": {
            "background": colour,
            "border": border,
            "highlight": {"background": colour, "border": "#1f2933"},
            "hover": {"background": colour, "border": "#1f2933"},
        },
        "size": node_size(mentions),
        "borderWidth": 3.5 if focus else 1.5,
        "group_label": label,
        "name": short_text(name, HEADING_CHARS),
        "mentions": mentions if mentions >= 0 else None,
        "focus": focus,
        "aliases": aliases,
        "first_seen": _stamp(attrs.get("first_seen")),
        "last_seen": _stamp(attrs.get("last_seen")),
        "evidence": _evidence(attrs.get("evidence")),
        "tooltip": {
            "heading": short_text(name, HEADING_CHARS),
            "subtitle": subtitle,
            "sections": [
                {"heading": "Aliases", "items": aliases},
                {
                    "heading": "Recent evidence",
                    "items": short_texts(attrs.get("evidence"), _EVIDENCE_COUNT, _EVIDENCE_CHARS),
                },
            ],
        },
    }


def predicate_of(key: Any, attrs: dict[str, Any]) -> str:
    """A relation's predicate: its ``predicate`` attribute, else its edge key."""
    return short_text(
        attrs.get("predicate") or (key if isinstance(key, str) else ""), _PREDICATE_CHARS
    )


def relation_record(key: Any, attrs: dict[str, Any]) -> dict[str, Any]:
    """One relation of a drawn edge, as the panel lists it."""
    predicate = predicate_of(key, attrs)
    typed = predicate != CO_OCCURS
    return {
        "predicate": predicate,
        "typed": typed,
        "ended": typed and bool(attrs.get("valid_to")),
        "support": count_value(attrs.get("support"), default=1),
        "confidence": _confidence(attrs.get("confidence")),
        "valid_from": _stamp(attrs.get("valid_from")),
        "valid_to": _stamp(attrs.get("valid_to")),
        "first_seen": _stamp(attrs.get("first_seen")),
        "last_seen": _stamp(attrs.get("last_seen")),
        "validity": _validity(predicate, attrs) if typed else "",
        "evidence": _evidence(attrs.get("evidence")),
    }


def _evidence(value: object) -> list[dict[str, Any]]:
    """The panel's evidence records (sentence, memory id, rule, date) from an attribute that
    holds records or plain sentences."""
    if value is None:
        return []
    items = [value] if isinstance(value, str | dict) or not isinstance(value, Iterable) else value
    records: list[dict[str, Any]] = []
    for item in items:
        if len(records) == _PANEL_EVIDENCE_COUNT:
            break
        record = item if isinstance(item, dict) else {"sentence": item}
        sentence = record.get("sentence")
        if sentence is None or not (text := short_text(sentence, _EVIDENCE_CHARS)):
            continue
        records.append(
            {
                "sentence": text,
                "memory_id": _optional_text(record.get("memory_id"), _ID_CHARS),
                "rule": _optional_text(record.get("rule"), _ID_CHARS),
                "date": _stamp(record.get("date")),
            }
        )
    return records


def _stamp(value: object) -> str | None:
    """An ISO 8601 time as the page compares and shows it (None when missing)."""
    if value is None or not str(value).strip():
        return None
    return short_text(value, _STAMP_CHARS)


def _optional_text(value: object, limit: int) -> str | None:
    return None if value is None else short_text(value, limit) or None


def _confidence(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return round(float(value), 3) if math.isfinite(value) else None


def _validity(predicate: str, attrs: dict[str, Any]) -> str:
    """When a typed edge held ("since 2025-03-03", "2025-03-03 to 2025-04-21"), from its
    ``valid_from``, ``valid_to`` and ``first_seen`` attributes ("" when it has none)."""

    def stamp(key: str) -> str | None:
        value = attrs.get(key)
        return short_text(value, 40) or None if isinstance(value, str) else None

    return validity_text(
        stamp("valid_from"),
        stamp("valid_to"),
        stamp("first_seen") or "",
        event=predicate in event_predicates(),
    )


def display_name(node: Hashable, attrs: dict[str, Any]) -> str:
    """An entity's ``name`` attribute, else its node id, as one line."""
    name = attrs.get("name")
    return short_text(name if name is not None and str(name).strip() else node, 10_000)


def _entity_label(attrs: dict[str, Any]) -> str:
    label = attrs.get("label")
    return short_text(label, 40) if label is not None and str(label).strip() else _UNLABELLED


def label_colour(label: str) -> str:
    """The colour of an entity label (a stable one of a few for labels not listed)."""
    if label == _UNLABELLED:
        return _UNLABELLED_COLOUR
    fallback = _EXTRA_COLOURS[zlib.crc32(label.encode("utf-8")) % len(_EXTRA_COLOURS)]
    return _LABEL_COLOURS.get(label, fallback)


def _darken(colour: str, factor: float = 0.7) -> str:
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return "#" + "".join(f"{int(channel * factor):02x}" for channel in (red, green, blue))


def short_text(value: object, limit: int) -> str:
    """Return ``value`` as one line of text of at most ``limit`` characters."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def short_texts(value: object, count: int, limit: int) -> list[str]:
    """Return up to ``count`` non-empty lines from a list attribute (a lone string is one)."""
    if value is None:
        return []
    items = [value] if isinstance(value, str) or not isinstance(value, Iterable) else value
    lines: list[str] = []
    for item in items:
        if len(lines) == count:
            break
        if isinstance(item, dict):
            item = item.get("sentence")
        if item is not None and (line := short_text(item, limit)):
            lines.append(line)
    return lines


def _unique(items: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(items))


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """``1 mention``, ``1,200 mentions``, ``2 entities`` (given the plural form).

    Example:
        >>> plural(1, "mention"), plural(1200, "mention"), plural(2, "entity", "entities")
        ('1 mention', '1,200 mentions', '2 entities')
    """
    return f"{count:,} {singular if count == 1 else plural_form or singular + 's'}"
