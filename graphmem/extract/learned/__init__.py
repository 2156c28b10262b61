"""Typed relations from a learned linear model, beside the dependency rules.

The model is a multinomial logistic regression over features of two entity mentions of one
sentence (:func:`pair_features`): the dependency path between their head tokens (labels,
direction and the lemmas on the way), the lemmas between them, their entity labels, distance,
order and head lemmas. Each class is a predicate read in one direction (``country>``: the first
mention is the subject; ``country<``: the second is) or ``NA``. A class fires when its
probability reaches its threshold, picked by cross-validation on the training documents
(``scripts/train_relations.py``, which reproduces the shipped files exactly). The rules'
filters apply to the path between the two mentions ("Alice does not work at Acme": nothing).
Then document-level rules (data too) add what follows from the model's relations of the same
text: "Pankow is in Berlin" + "Berlin is in Germany (country)" give Pankow ``country``
Germany (rule id ``learned/inferred``), and "Ulm is in Germany", Germany being a country name,
gives Ulm ``country`` Germany as well (:func:`implied_relations`).

In the graph a rule match wins for its pair (:class:`CombinedRelationSource`); learned
relations carry the rule id ``learned`` and their probability as confidence.

The package, by topic: ``files`` (the model files, their hashes, the predicate map),
``inference`` (the document-level rules), ``features`` (a mention pair's features),
``document`` (the document stage's entities and pair shapes), ``model`` (the two linear
models) and ``extractor`` (the extractor and its combination with the rules); every name is
importable from ``graphmem.extract.learned``.

Files, all data (never pickle), hashed in ``models/learned_relations_manifest.json`` and checked
at load:

- ``models/learned_predicates.json``: the predicates and the Wikidata properties each stands
  for (the training labels);
- ``models/learned_relations.json``: feature names, classes, intercepts, thresholds;
- ``models/learned_relations.npy``: the weights, one row per feature, one column per class.

Example:
    >>> load_predicate_map().predicates["born_in"].functional
    True
    >>> load_predicate_map().properties["P112"]  # founded by: read as person "founded" org
    ('founded', True)
"""

from __future__ import annotations

from .agent import (
    AGENT_CLASSES,
    AGENT_FILES,
    AGENT_PREDICATES,
    AGENT_RULE,
    AGENT_SWITCH_VARIABLE,
    ROLE_CLASS,
    AgentCandidate,
    AgentRelationExtractor,
    agent_candidates,
    agent_pair_features,
    load_agent_model,
)
from .document import (
    MIN_FIRST_STAGE,
    DocumentEntity,
    DocumentFacts,
    FirstStageLayout,
    PairShape,
    document_entities,
    document_pair_features,
    first_stage_by_pair,
    first_stage_features,
    pair_shape,
    pair_shape_features,
)
from .extractor import (
    DATE_PREDICATES,
    DOCUMENT_RULE,
    DOCUMENT_SWITCH_VARIABLE,
    INFERRED_RULE,
    LEARNED_RULE,
    PLACE_PREDICATES,
    SWITCH_VARIABLE,
    CombinedRelationSource,
    LearnedRelationExtractor,
    ScoredPair,
    default_relation_source,
    plausible_value,
)
from .features import (
    ARGUMENT_DEPS,
    MAX_PATH_EDGES,
    MAX_TOKEN_DISTANCE,
    competing_mention,
    dependency_path,
    mention_pairs,
    pair_features,
    path_tokens,
)
from .files import (
    MANIFEST_FILE,
    MODEL_FILES,
    NO_RELATION,
    Implication,
    InferenceRules,
    LearnedModelError,
    PredicateMap,
    Propagation,
    load_country_names,
    load_predicate_map,
    parse_predicate_map,
)
from .inference import (
    Triple,
    implied_relations,
    infer_relations,
)
from .model import (
    MAX_REMEMBERED_SHAPES,
    DocumentModel,
    LearnedModel,
    load_document_model,
    load_learned_model,
    softmax,
)

__all__ = [
    "AGENT_CLASSES",
    "AGENT_PREDICATES",
    "AGENT_FILES",
    "AGENT_RULE",
    "AGENT_SWITCH_VARIABLE",
    "ARGUMENT_DEPS",
    "AgentCandidate",
    "AgentRelationExtractor",
    "agent_candidates",
    "ROLE_CLASS",
    "agent_pair_features",
    "load_agent_model",
    "CombinedRelationSource",
    "DATE_PREDICATES",
    "DOCUMENT_RULE",
    "DOCUMENT_SWITCH_VARIABLE",
    "DocumentEntity",
    "DocumentFacts",
    "DocumentModel",
    "FirstStageLayout",
    "INFERRED_RULE",
    "Implication",
    "InferenceRules",
    "LEARNED_RULE",
    "LearnedModel",
    "LearnedModelError",
    "LearnedRelationExtractor",
    "MANIFEST_FILE",
    "MAX_PATH_EDGES",
    "MAX_REMEMBERED_SHAPES",
    "MAX_TOKEN_DISTANCE",
    "MIN_FIRST_STAGE",
    "MODEL_FILES",
    "NO_RELATION",
    "PLACE_PREDICATES",
    "PairShape",
    "PredicateMap",
    "Propagation",
    "SWITCH_VARIABLE",
    "ScoredPair",
    "Triple",
    "competing_mention",
    "default_relation_source",
    "dependency_path",
    "document_entities",
    "document_pair_features",
    "first_stage_by_pair",
    "first_stage_features",
    "implied_relations",
    "infer_relations",
    "load_country_names",
    "load_document_model",
    "load_learned_model",
    "load_predicate_map",
    "mention_pairs",
    "pair_features",
    "pair_shape",
    "pair_shape_features",
    "parse_predicate_map",
    "path_tokens",
    "plausible_value",
    "softmax",
]
