"""Graph files other tools open: GraphML (yEd, Cytoscape, igraph) and GEXF (Gephi).

Both are written by NetworkX's writers from :func:`~graphmem.viz.drawable_graph`, so an
export holds the same nodes, relations and attributes as the page: each entity with ``name``,
``label``, ``mentions``, ``aliases``, ``first_seen``, ``last_seen``, ``evidence``; each
relation (keyed by predicate) with ``predicate``, ``support``, ``confidence``, ``first_seen``,
``last_seen``, ``valid_from``, ``valid_to``, ``relation_id``, ``evidence``. What the formats
cannot hold is mapped, the same way each time:

* list and dict values (``aliases``, ``evidence``) are JSON text: ``json.loads`` gives them
  back;
* a missing value (``None``: a relation still valid has no ``valid_to``) is left out;
* an attribute whose values mix types (a hand-built graph) is written as text throughout;
* GEXF only: a node's own GEXF label is its ``name`` (what Gephi shows), the entity label
  moves to ``entity_label``, and ``weight`` = ``support`` (Gephi's edge thickness).

Read an export back with ``nx.read_graphml(path, force_multigraph=True)`` or
``nx.read_gexf(path)``: relation keys are the predicates again.

Example:
    >>> import json, tempfile
    >>> graph = nx.MultiDiGraph()
    >>> graph.add_node("ada", name="Ada", label="PERSON", aliases=["Ada", "A. L."])
    >>> graph.add_node("acme", name="Acme", label="ORG", aliases=[])
    >>> _ = graph.add_edge("ada", "acme", key="works_at", predicate="works_at", support=2)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     written = export_graph(graph, Path(tmp) / "kg.graphml")
    ...     back = nx.read_graphml(written.path, force_multigraph=True)
    >>> json.loads(back.nodes["ada"]["aliases"]), list(back.edges(keys=True))
    (['Ada', 'A. L.'], [('ada', 'acme', 'works_at')])
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx

from graphmem.errors import EntityNotFound, InvalidArgumentError

from ._source import Source, drawable_graph, knowledge_graph_of
from ._subgraphs import neighbourhood_subgraph

__all__ = ["EXPORT_FORMATS", "GraphExport", "export_graph", "portable_graph"]

#: Format name -> file suffix.
EXPORT_FORMATS = {"graphml": ".graphml", "gexf": ".gexf"}


@dataclass(frozen=True, slots=True)
class GraphExport:
    """What :func:`export_graph` wrote.

    Example:
        >>> GraphExport(Path("kg.gexf"), "gexf", nodes=3, edges=2).format
        'gexf'
    """

    path: Path
    format: str
    nodes: int
    edges: int


def export_graph(
    source: Source,
    path: str | Path,
    *,
    format: str | None = None,  # noqa: A002 - the word users know
    entities: Iterable[str] | None = None,
    depth: int = 1,
) -> GraphExport:
    """Write ``source`` (an entity memory, a knowledge graph or a NetworkX graph) as GraphML
    or GEXF at ``path``.

    Parameters:
        source: ``memory.entity_memory`` (mentions as its context counts them), a
            :class:`~graphmem.graph.KnowledgeGraph`, or any NetworkX graph.
        path: the file to write (its folder must exist).
        format: ``"graphml"`` or ``"gexf"``; by default from the suffix of ``path``.
        entities: only these entities (names or aliases; node ids for a NetworkX graph) and
            everything within ``depth`` hops of them; by default the whole graph.
        depth: hops around ``entities`` (0: the entities alone).

    Raises:
        InvalidArgumentError: an unknown format, or none given and none in the suffix.
        EntityNotFound: a name in ``entities`` is not in the graph.
    """
    path = Path(path)
    chosen = _format(path, format)
    part = _part(source, entities, depth)
    graph = portable_graph(drawable_graph(source, part), gexf=chosen == "gexf")
    if chosen == "gexf":
        nx.write_gexf(graph, path)
    else:
        nx.write_graphml(graph, path)
    return GraphExport(path, chosen, graph.number_of_nodes(), graph.number_of_edges())


def portable_graph(graph: nx.Graph, *, gexf: bool = False) -> nx.Graph:
    """Return a copy of ``graph`` whose attributes GraphML (or, with ``gexf``, GEXF) can
    hold, mapped as the module docstring says.

    Example:
        >>> g = nx.MultiDiGraph()
        >>> g.add_node("a", label="PERSON", name="Ada", aliases=["Ada"], entity_id=None)
        >>> portable_graph(g).nodes["a"]
        {'label': 'PERSON', 'name': 'Ada', 'aliases': '["Ada"]'}
        >>> portable_graph(g, gexf=True).nodes["a"]["entity_label"]
        'PERSON'
    """
    out = graph.__class__()
    out.graph.update(_portable(graph.graph.items()))
    for node, attrs in graph.nodes(data=True):
        values = dict(_portable(attrs.items()))
        if gexf:
            if "label" in values:
                values["entity_label"] = values.pop("label")
            values["label"] = str(attrs.get("name") or node)
        out.add_node(_xml_id(node), **values)
    if graph.is_multigraph():
        rows = graph.edges(keys=True, data=True)
    else:
        rows = ((u, v, None, d) for u, v, d in graph.edges(data=True))
    for u, v, key, attrs in rows:
        values = dict(_portable(attrs.items()))
        if gexf:
            for reserved in ("label", "id", "start", "end"):
                values.pop(reserved, None)
            support = attrs.get("support")
            if isinstance(support, int | float) and not isinstance(support, bool):
                values["weight"] = support
        if key is None:
            out.add_edge(_xml_id(u), _xml_id(v), **values)
        else:
            out.add_edge(_xml_id(u), _xml_id(v), key=_xml_id(key), **values)
    _unify_types(out.nodes.values())
    _unify_types(d for *_, d in out.edges(data=True))
    return out


#: What XML 1.0 cannot hold (so neither GraphML nor GEXF): memory text may (evidence).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    """``text`` with each character XML cannot hold replaced by U+FFFD."""
    return _NOT_XML.sub("\ufffd", text)


def _xml_id(value: Any) -> Any:
    return _xml_text(value) if isinstance(value, str) else value


def _portable(items: Iterable[tuple[Any, Any]]) -> Iterable[tuple[str, Any]]:
    for key, value in items:
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            continue
        if isinstance(value, str):
            yield _xml_text(str(key)), _xml_text(value)
        elif isinstance(value, bool | int | float):
            yield _xml_text(str(key)), value
        elif isinstance(value, list | tuple | dict | set | frozenset):
            listed = sorted(value, key=str) if isinstance(value, set | frozenset) else value
            yield (
                _xml_text(str(key)),
                _xml_text(json.dumps(listed, ensure_ascii=False, default=str)),
            )
        else:
            yield _xml_text(str(key)), _xml_text(str(value))


def _unify_types(records: Iterable[dict[str, Any]]) -> None:
    """Write an attribute whose values are of several types (apart from int with float) as
    text in every record: the formats declare one type per attribute."""
    records = list(records)
    kinds: defaultdict[str, set[type]] = defaultdict(set)
    for record in records:
        for key, value in record.items():
            kinds[key].add(float if type(value) is int else type(value))
    mixed = {key for key, found in kinds.items() if len(found) > 1}
    for record in records:
        for key in mixed & record.keys():
            record[key] = str(record[key])


def _format(path: Path, format: str | None) -> str:  # noqa: A002
    if format is None:
        by_suffix = {suffix: name for name, suffix in EXPORT_FORMATS.items()}
        found = by_suffix.get(path.suffix.lower())
        if found is None:
            raise InvalidArgumentError(
                f"{path}: say the format (graphml or gexf), or end the name in .graphml or .gexf"
            )
        return found
    chosen = str(format).lower()
    if chosen not in EXPORT_FORMATS:
        raise InvalidArgumentError(f"unknown graph format {format!r}; use graphml or gexf")
    return chosen


def _part(source: Source, entities: Iterable[str] | None, depth: int) -> nx.Graph | None:
    """The part of the source's graph around ``entities`` (None: all of it)."""
    if entities is None:
        return None
    names = [entities] if isinstance(entities, str) else list(entities)
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
        raise InvalidArgumentError(f"depth must be a non-negative integer, got {depth!r}")
    kg = knowledge_graph_of(source)
    if kg is None:
        graph: nx.Graph = source
        parts = [neighbourhood_subgraph(graph, name, depth) for name in names]
        return nx.compose_all(parts) if parts else graph.subgraph([]).copy()
    for name in names:
        if kg.resolve(name) is None:
            raise EntityNotFound(f"unknown entity {name!r}")
    return kg.subgraph(names, depth=depth)
