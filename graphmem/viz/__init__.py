"""Pictures and files of what an agent knows: one offline HTML page, GraphML and GEXF.

* :func:`render_graph` draws a graph (an entity memory, a knowledge graph, any NetworkX
  graph, or a part of one) as one self-contained HTML page; :func:`render_context` draws
  the subgraph a context build used, beside the context's entries.
* :func:`export_graph` writes the same graph as GraphML or GEXF for yEd, Cytoscape or Gephi.
* :func:`select_visible_nodes`, :func:`neighbourhood_subgraph` and :func:`path_subgraph`
  choose the part to draw.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> from graphmem import EntityMemory
    >>> memory = EntityMemory()
    >>> _ = memory.save("Ada Lovelace works at Analytical Engines Ltd in London.")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     page = render_graph(memory, Path(tmp) / "graph.html")
    ...     graphml = export_graph(memory, Path(tmp) / "graph.graphml")
    >>> page.nodes_drawn == graphml.nodes == 3
    True
"""

from ._export import EXPORT_FORMATS as EXPORT_FORMATS
from ._export import GraphExport as GraphExport
from ._export import export_graph as export_graph
from ._page import VizReport as VizReport
from ._page import render_context as render_context
from ._page import render_graph as render_graph
from ._records import edge_width as edge_width
from ._records import node_size as node_size
from ._source import EntityTier as EntityTier
from ._source import drawable_graph as drawable_graph
from ._subgraphs import neighbourhood_subgraph as neighbourhood_subgraph
from ._subgraphs import path_subgraph as path_subgraph
from ._subgraphs import select_visible_nodes as select_visible_nodes

__all__ = [
    "EXPORT_FORMATS",
    "EntityTier",
    "GraphExport",
    "VizReport",
    "drawable_graph",
    "edge_width",
    "export_graph",
    "neighbourhood_subgraph",
    "node_size",
    "path_subgraph",
    "render_context",
    "render_graph",
    "select_visible_nodes",
]
