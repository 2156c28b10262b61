"""Document-level rules over the learned model's relations of one text (the ``inference``
section of ``learned_predicates.json``): composition, propagation and implication.

Example:
    >>> rules = InferenceRules((("located_in", "country", "country"),), ())
    >>> found = {("Pankow", "located_in", "Berlin"): 0.9, ("Berlin", "country", "Germany"): 0.8}
    >>> list(infer_relations(found, {}, rules))
    [('Pankow', 'country', 'Germany')]
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping

from .files import InferenceRules

Triple = tuple[Hashable, str, Hashable]


def infer_relations(
    found: Mapping[Triple, float], labels: Mapping[Hashable, str], rules: InferenceRules
) -> dict[Triple, tuple[float, Triple, Triple | None]]:
    """New triples implied by ``found`` (entity ids -> confidence), each with its confidence
    and the one or two triples it comes from.

    Example:
        >>> rules = InferenceRules((("located_in", "country", "country"),), ())
        >>> found = {("Pankow", "located_in", "Berlin"): 0.9, ("Berlin", "country", "Germany"): 0.8}
        >>> infer_relations(found, {}, rules)
        {('Pankow', 'country', 'Germany'): (0.8, ('Pankow', 'located_in', 'Berlin'), ('Berlin', 'country', 'Germany'))}
    """
    known = dict(found)
    new: dict[Triple, tuple[float, Triple, Triple | None]] = {}
    for first, second, result in rules.compose:
        for (x, p, y), c1 in found.items():
            if p != first:
                continue
            for (y2, q, z), c2 in found.items():
                triple = (x, result, z)
                if q == second and y2 == y and z != x and triple not in known:
                    new[triple] = (min(c1, c2), (x, p, y), (y2, q, z))
                    known[triple] = min(c1, c2)
    for rule in rules.propagate:
        votes: dict[Hashable, list[Triple]] = {}
        for triple in known:
            if triple[1] == rule.predicate:
                votes.setdefault(triple[2], []).append(triple)
        if not votes:
            continue
        value, sources = max(votes.items(), key=lambda kv: len(kv[1]))
        if len(sources) < rule.min_votes:
            continue
        has_value = {x for x, p, _ in known if p == rule.predicate}
        confidence = min(known[t] for t in sources)
        for entity, label in labels.items():
            if label in rule.subject_labels and entity != value and entity not in has_value:
                new[(entity, rule.predicate, value)] = (confidence, sources[0], None)
    return new


def implied_relations(
    found: Mapping[Triple, float], countries: Collection[Hashable], rules: InferenceRules
) -> dict[Triple, tuple[float, Triple]]:
    """New triples the implications of ``rules`` give from ``found`` (entity ids ->
    confidence), each with its confidence and the triple it comes from; ``countries``: the
    ids of the entities named as a country.

    Example:
        >>> from graphmem.extract.learned import Implication
        >>> rules = InferenceRules((), (), (Implication("located_in", "country", True),))
        >>> found = {("Ulm", "located_in", "Germany"): 0.9, ("Ulm", "located_in", "Swabia"): 0.8}
        >>> implied_relations(found, {"Germany"}, rules)
        {('Ulm', 'country', 'Germany'): (0.9, ('Ulm', 'located_in', 'Germany'))}
    """
    new: dict[Triple, tuple[float, Triple]] = {}
    for rule in rules.imply:
        for (x, p, y), confidence in found.items():
            triple = (x, rule.implies, y)
            if (
                p == rule.predicate
                and (y in countries or not rule.object_is_country)
                and triple not in found
                and triple not in new
            ):
                new[triple] = (confidence, (x, p, y))
    return new
