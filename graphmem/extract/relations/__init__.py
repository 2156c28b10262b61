"""Typed relations between entity spans, from dependency-parse rules kept as data.

The rules live in ``models/relation_rules.json``: each one is a spaCy ``DependencyMatcher``
pattern with the nodes ``subject`` and ``object`` (and ``role`` for predicates such as
``"{role}_of"``, whose name is the title as stated: "Bob is the CTO of Initech" -> ``cto_of``,
"a senior backend engineer at" -> ``senior_backend_engineer_of``, "head of logistics" ->
``head_of_logistics_of``; a rule may leave the organisation to the role: "VP of delivery *at
Vantor*").
A rule fires only when both ends resolve to entity spans. Resolution maps a token to the entity
span containing it, follows a relative pronoun to the noun it modifies ("Alice, who works at
Acme"), an apposition to its entity ("the firm, Acme,"), and coordination fans out ("Alice and
Bob work at Acme" gives two ``works_at``). A verb conjoined to another shares its subject
("Bob quit Acme and moved to Austin"). Pronouns resolve when that is unambiguous:

- "he", "she", "him", "her" to the one PERSON entity named earlier in the sentence, or else
  since the start of the sentence before, when it is a subject there ("Dana left Acme. She
  joined Initech in May."); with two candidates, or one that is never a subject ("The daughter
  of Mondher Ben Ammar, she ..."), they stay unresolved, and an object pronoun is not the
  subject of its own clause ("Henrik reports to *her*"); a subject's apposition or possessor
  counts as a subject ("Acme's founder, *Ann Lee*, joined Initech. She ..."); "their" and
  "its" (possessives) likewise to the one ORG ("Harbor Analytics is based in Dublin. Their CEO
  Daniel Brooks ..."), subject or not when they own a role ("Acme's CEO is Ann, and Bob is
  *its* CTO"), and "it" as a subject ("Acme is a Toronto firm. *It* was founded by ...");
- "the company", "the firm" ... to the one organisation named before, subject or not
  ("Leila is the CEO of Vantor. Henrik, *the company*'s CTO, ...");
- "I", "me", "my" to the speaker: the PERSON that opens the line as "Name: ..." (a transcript
  turn), else the speaker the caller names (a memory's ``speaker`` metadata).

A predicate may close others: ``left`` declares ``"closes": ["works_at", "{role}_of"]``, so
"Bob left Initech" ends Bob's open ``works_at`` Initech and every role he held there
(``cto_of`` ...), and with the job its reporting line; a new role ends the one it replaces.
The index asks :meth:`graphmem.extract.predicates.PredicateCatalogue.ended_by` what a statement
ends and closes it.
A rule may state that a relation *ended* (``"ends": true``): "Lumen moved its headquarters from
Oslo to Bergen" gives ``located_in`` Bergen and an ending ``located_in`` Oslo
(:attr:`RelationCandidate.ends`). A past modifier on a state ("Erik previously worked at
Kestrel", "the former CEO of Acme") makes the statement an ending one too: the relation held
and no longer does.

Near-misses rejected on purpose (precision over recall):

- negation on the matched verb or role: "Alice does not work at Acme", "Bob never worked at Acme",
  "Bob is not the CTO of Initech";
- hypothetical, conditional or future statements: "Alice might work at Acme", "If Alice works
  at Acme", "Alice will leave Acme";
- questions (the sentence ends with "?"): "Does Alice work at Acme?";
- future or merely possible roles: "the future CEO of Acme", "a prospective partner";
- objects that are not entities: "Alice met the deadline", "Alice works at home", "Bob left the
  meeting";
- verbs with no subject of their own: "Alice talked about working at Acme someday", "the Acme
  works";
- label mismatches: each rule lists the entity labels it accepts at either end ("Germany joined
  NATO" is not ``works_at``).

These filters are data too (the ``filters`` section of the rules file).

The package, by topic: ``rules`` (what the parsed file declares, the filters, the relations
found), ``rules_file`` (reading and validating the file), ``variants`` (the matcher patterns
of a rule), ``coreference`` (pronouns and descriptions resolved by context) and ``extractor``
(the matcher); every name is importable from ``graphmem.extract.relations``.

Example:
    >>> import spacy
    >>> nlp = spacy.blank("en")
    >>> extractor = RelationExtractor(nlp)
    >>> sorted(extractor.functional_predicates())
    ['born_in', 'lives_in', 'reports_to', 'works_at']
"""

from __future__ import annotations

from .extractor import (
    EMPLOYMENT,
    RelationExtractor,
)
from .rules import (
    ROLE_PLACEHOLDER,
    ClosedPredicates,
    PredicateInfo,
    RelationCandidate,
    RelationRule,
    RelationRules,
    RelationRulesError,
    is_blocked,
    is_past,
)
from .rules_file import (
    default_rules_path,
    functional_predicates,
    load_relation_rules,
    parse_relation_rules,
)

__all__ = [
    "ClosedPredicates",
    "EMPLOYMENT",
    "PredicateInfo",
    "ROLE_PLACEHOLDER",
    "RelationCandidate",
    "RelationExtractor",
    "RelationRule",
    "RelationRules",
    "RelationRulesError",
    "default_rules_path",
    "functional_predicates",
    "is_blocked",
    "is_past",
    "load_relation_rules",
    "parse_relation_rules",
]
