"""The knowledge graph: a NetworkX view of the entity tables, and relationship queries."""

from .knowledge_graph import Edge, EntityInfo, Hop, KnowledgeGraph
from .records import RelationshipQueries

__all__ = ["Edge", "EntityInfo", "Hop", "KnowledgeGraph", "RelationshipQueries"]
