"""The one write path: text in, entities, mentions, relations and evidence out.

Extraction (:mod:`graphmem.extract`) -> resolution to the tenant's entities -> rows
(:mod:`graphmem.store`) -> the graph views (:mod:`graphmem.graph`); and back again when
memories are deleted, entities merged or unmerged. Support is counted here, once per
statement, whatever tiers show the text.

:class:`EntityIndex` (:mod:`.entity_index`) is the facade over its parts: the per-tenant views
(:mod:`.views`), the deferred batch (:mod:`.pending`), indexing one text (:mod:`.indexing`),
linking and validity (:mod:`.linking`), deletion and support (:mod:`.support`), all sharing
the leaf :mod:`._shared`.

Importing the package loads none of them (a store that only counts or reads rows loads no
extraction code: ``tests/test_startup.py``).
"""
