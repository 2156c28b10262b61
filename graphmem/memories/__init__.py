"""The five memory tiers, thin over the store, the entity index and retrieval; :class:`Tier`
is their base and the protocol the facade drives them through."""

from ._tier import Tier
from .contextual import ContextualMemory
from .entity import EntityMemory
from .long_term import LongTermMemory
from .short_term import ShortTermMemory
from .user import UserMemory

__all__ = [
    "ContextualMemory",
    "EntityMemory",
    "LongTermMemory",
    "ShortTermMemory",
    "Tier",
    "UserMemory",
]
