"""The former name of :mod:`graphmem.memories._tier` (:class:`~graphmem.memories.Tier`),
kept while code outside the tiers still imports from it.

Example:
    >>> from graphmem.memories._sql import SQLMemory
    >>> SQLMemory.__name__
    'Tier'
"""

from ..items import check_limit
from ..space import split_filters
from ._tier import SQLMemory, Tier

__all__ = ["SQLMemory", "Tier", "check_limit", "split_filters"]
