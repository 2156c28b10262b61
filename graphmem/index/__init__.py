"""The one write path: text in, entities, mentions, relations and evidence out.

Extraction (:mod:`graphmem.extract`) -> resolution to the tenant's entities -> rows
(:mod:`graphmem.store`) -> the graph views (:mod:`graphmem.graph`); and back again when
memories are deleted, entities merged or unmerged. Support is counted here, once per
statement, whatever tiers show the text.
"""

from .entity_index import EntityIndex, GraphCache

__all__ = ["EntityIndex", "GraphCache"]
