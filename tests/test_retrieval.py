"""Retrieval on small fixed corpora: fusion, explanations and the context report (issue 4).

Each test writes its own few memories and states, beside each assertion, why the item must
rank where it does: which query words it shares (BM25, porter-stemmed, stop words dropped),
which entity path brought it in (hop decay, rarity), who said it (author link), which
conversation it sits in (adjacency). The expectations are derived by hand from the corpus and
the ranking's documented rules, not copied from a run.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from _workers import HEADINGS

from graphmem import CortexMemory, LongTermMemory
from graphmem.retrieval.search import Explanation, Hit
from graphmem.store.query_text import STOP_WORDS


def _contents(hits: list[Hit]) -> list[str]:
    return [hit.item.content for hit in hits]


def _sources(explained: Hit | Explanation) -> list[str]:
    """What brought a hit in besides meaning (the semantic term: tests/test_semantic.py)."""
    explanation = explained.explanation if isinstance(explained, Hit) else explained
    return [source for source in explanation.sources if source != "semantic"]


def _hit(hits: list[Hit], content: str) -> Hit:
    found = [hit for hit in hits if hit.item.content == content]
    assert len(found) == 1, f"{content!r} returned {len(found)} times in {_contents(hits)}"
    return found[0]


def _saved(memory: LongTermMemory, *contents: str, **fields: object) -> list[str]:
    """Save each content in order (one save per item, so later ones see earlier entities)."""
    for content in contents:
        memory.save(content, **fields)  # type: ignore[arg-type]
    return list(contents)


def _assert_each_once(hits: list[Hit]) -> None:
    ids = [hit.item.memory_id for hit in hits]
    assert len(ids) == len(set(ids)), ids
    assert len({hit.seq for hit in hits}) == len(hits)


def _assert_best_first(hits: list[Hit]) -> None:
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True), scores
    if hits:
        assert hits[0].score == pytest.approx(1.0)  # normalised to the best hit


# ---------------------------------------------------------------------------- lexical
class TestLexical:
    def test_rare_query_word_outranks_common_word(self) -> None:
        memory = LongTermMemory()
        rare = "The telescope mirror was recalibrated."
        common = _saved(
            memory,
            rare,
            "The weekly meeting ran long.",
            "The budget meeting was moved.",
            "A short meeting about parking.",
            "The meeting notes were lost.",
        )[1:]
        hits = memory.search_hits("telescope meeting")
        # "telescope" is in 1 of 5 memories, "meeting" in 4 of 5: BM25 weighs the rare word
        # far more, so the one memory with "telescope" is first although it lacks "meeting".
        assert _contents(hits)[0] == rare
        assert sorted(_contents(hits)[1:]) == sorted(common)
        top = hits[0].explanation
        assert top.matched_terms == ["telescope"]
        assert _sources(top) == ["lexical"]
        assert top.lexical == pytest.approx(1.0)
        assert top.entity_path == []
        for hit in hits[1:]:
            assert hit.explanation.matched_terms == ["meeting"]
            assert _sources(hit) == ["lexical"]
            assert hit.explanation.lexical < top.lexical
        _assert_best_first(hits)
        _assert_each_once(hits)

    def test_matched_terms_are_stemmed_query_words(self) -> None:
        memory = LongTermMemory()
        launch, soup = _saved(
            memory, "the crew will launch two rockets next week", "the canteen serves soup"
        )
        hits = memory.search_hits("Who launches the rocket?")
        # "launches" and "launch" share the porter stem "launch", "rocket" and "rockets" the
        # stem "rocket"; "who" and "the" are stop words. The soup memory shares nothing.
        assert _contents(hits) == [launch]
        assert hits[0].explanation.matched_terms == ["launches", "rocket"]

    def test_stop_words_never_match_nor_appear_in_matched_terms(self) -> None:
        memory = LongTermMemory()
        status, filler = _saved(
            memory,
            "the status of the telescope is unclear",
            "what is it and where is the thing that was there",
        )
        hits = memory.search_hits("What is the status of the telescope?")
        # Query terms are "status" and "telescope"; the filler memory shares only stop
        # words ("what", "is", "the"...), which are not searched.
        assert _contents(hits) == [status]
        terms = hits[0].explanation.matched_terms
        assert terms == ["status", "telescope"]
        assert not set(terms) & STOP_WORDS


# ---------------------------------------------------------------------------- graph
class TestGraph:
    @pytest.fixture
    def people(self) -> tuple[LongTermMemory, list[str]]:
        memory = LongTermMemory()
        corpus = _saved(
            memory,
            "Alice Johnson joined Acme Corp as CTO.",  # Alice Johnson -- Acme Corp
            "Alice signed the lease for the new lab.",  # lone "Alice" -> Alice Johnson
            "Acme Corp opened an office in Berlin.",  # Acme Corp -- Berlin
            "The canteen serves lentil soup.",
            "The printer on floor two is jammed.",
        )
        return memory, corpus

    def test_direct_mention_without_shared_word_comes_from_the_graph(
        self, people: tuple[LongTermMemory, list[str]]
    ) -> None:
        memory, (joined, lease, office, soup, printer) = people
        hits = memory.search_hits("What does Johnson do?")
        # The only query term is "johnson" (what/does/do are stop words). "Johnson" resolves
        # to the one PERSON whose name holds it, Alice Johnson. The lease memory mentions
        # her (as "Alice") but shares no query word: it is a graph hit only.
        assert soup not in _contents(hits) and printer not in _contents(hits)
        lease_hit = _hit(hits, lease)
        assert _sources(lease_hit) == ["graph"]
        assert lease_hit.explanation.matched_terms == []
        assert lease_hit.explanation.lexical == 0.0
        assert lease_hit.explanation.entity_path == ["Alice Johnson"]
        joined_hit = _hit(hits, joined)
        assert _sources(joined_hit) == ["lexical", "graph"]
        assert joined_hit.explanation.matched_terms == ["johnson"]
        assert joined_hit.explanation.entity_path == ["Alice Johnson"]
        _assert_best_first(hits)
        _assert_each_once(hits)

    def test_one_hop_neighbour_ranks_below_direct_mentions(
        self, people: tuple[LongTermMemory, list[str]]
    ) -> None:
        memory, (joined, lease, office, _, _) = people
        hits = memory.search_hits("What does Johnson do?")
        # Acme Corp is co-mentioned with Alice Johnson, so the office memory is reached in
        # one hop (hop weight 0.5, at most 1 with support) and ranks below both direct
        # mentions (weight 1; same rarity: each entity is in two of the five memories).
        # The joined memory also shares the word "johnson", so it is first.
        assert _contents(hits) == [joined, lease, office]
        path = _hit(hits, office).explanation.entity_path
        assert path == ["Alice Johnson", "Acme Corp"]
        assert _sources(_hit(hits, office)) == ["graph"]
        assert _hit(hits, office).explanation.graph < _hit(hits, lease).explanation.graph

    @pytest.mark.parametrize("alone", [1, 3])
    def test_neighbour_beside_its_parent_counts_by_the_parents_rarity(
        self, db_file: str, alone: int
    ) -> None:
        memory = LongTermMemory(db_path=db_file)
        met, *alice, sold = _saved(
            memory,
            "Alice Johnson met Bob Stone yesterday.",
            *[f"Alice Johnson bought {n} bicycles." for n in ("two", "three", "four")[:alone]],
            "Bob Stone sold his piano.",
        )
        hits = memory.search_hits("Any news from Alice?")
        # The query names Alice Johnson; Bob Stone is her neighbour through the first memory.
        # Where he is named without her he adds his own hop score; beside her, where their
        # co-occurrence is what linked them, that score times her rarity, log(1 + N/n) /
        # log(1 + N) with N memories and n mentions of her: the more memories name her (a
        # speaker names most of hers), the less he adds there.
        total, mentions = alone + 2, alone + 1
        rarity = math.log(1 + total / mentions) / math.log(1 + total)
        added = _hit(hits, met).explanation.graph - _hit(hits, alice[0]).explanation.graph
        bob = _hit(hits, sold).explanation
        assert bob.entity_path == ["Alice Johnson", "Bob Stone"]
        assert _sources(bob) == ["graph"]
        assert added == pytest.approx(bob.graph * rarity)
        assert _hit(hits, met).explanation.entity_path == ["Alice Johnson"]

    def test_capitalised_short_form_names_the_organisation(
        self, people: tuple[LongTermMemory, list[str]]
    ) -> None:
        memory, (joined, lease, office, soup, printer) = people
        hits = memory.search_hits("Any updates from ACME?")
        # "ACME" is the upper-case form of "Acme", the short form of the known "Acme Corp":
        # the query names Acme Corp. The lease memory shares no word and does not mention
        # Acme Corp, but mentions Alice Johnson, co-mentioned with it: one hop.
        assert set(_contents(hits)) == {joined, office, lease}
        assert _hit(hits, office).explanation.entity_path == ["Acme Corp"]
        assert _hit(hits, lease).explanation.entity_path == ["Acme Corp", "Alice Johnson"]
        assert _sources(_hit(hits, lease)) == ["graph"]
        assert _contents(hits)[-1] == lease

    def test_lone_first_name_reaches_the_unique_full_name(self) -> None:
        memory = LongTermMemory()
        joined, hired, soup = _saved(
            memory,
            "Alice Johnson joined Acme Corp as CTO.",
            "Acme Corp hired two engineers.",
            "The canteen serves lentil soup.",
        )
        hits = memory.search_hits("Where does Alice work?")
        # One PERSON holds the word "alice": the query names Alice Johnson, and through
        # her Acme Corp (one hop), whose other memory shares no query word.
        assert _contents(hits) == [joined, hired]
        assert _hit(hits, joined).explanation.entity_path[0] == "Alice Johnson"
        assert _hit(hits, hired).explanation.entity_path == ["Alice Johnson", "Acme Corp"]
        assert _sources(_hit(hits, hired)) == ["graph"]

    def test_dotted_acronym_names_the_country_known_by_its_full_name(self) -> None:
        memory = LongTermMemory()
        signed, ratified, _ = _saved(
            memory,
            "The United States signed the treaty with Canada.",
            "Canada ratified it in 1999.",
            "The canteen serves lentil soup.",
        )
        # The graph knows the country only as "United States", so "U.S." is no known surface
        # for the phrase matcher; the run of capitalised words must take the dotted acronym
        # ("U.S." keys as "united states"). No query word but stop words is in either memory.
        hits = memory.search_hits("Did the U.S. agree?")
        assert _contents(hits) == [signed, ratified]
        assert _hit(hits, signed).explanation.entity_path == ["United States"]
        assert _hit(hits, ratified).explanation.entity_path == ["United States", "Canada"]
        assert all(_sources(hit) == ["graph"] for hit in hits)

    def test_ambiguous_first_name_does_not_expand(self) -> None:
        memory = LongTermMemory()
        johnson, moreau, hired, bought = _saved(
            memory,
            "Alice Johnson joined Acme Corp as CTO.",
            "Alice Moreau runs the Globex lab in Paris.",
            "Acme Corp hired two engineers.",
            "Globex bought new microscopes.",
        )
        kg = memory.space.entity_index.graph("")
        assert kg.get_entity("Alice Johnson").label == "PERSON"  # type: ignore[union-attr]
        assert kg.get_entity("Alice Moreau").label == "PERSON"  # type: ignore[union-attr]
        hits = memory.search_hits("Where does Alice work?")
        # Two people are called Alice: the query names neither, so no graph expansion.
        # Only the two memories holding the word "alice" come back, lexically.
        assert sorted(_contents(hits)) == sorted([johnson, moreau])
        for hit in hits:
            assert _sources(hit) == ["lexical"]
            assert hit.explanation.entity_path == []
            assert hit.explanation.matched_terms == ["alice"]


# ---------------------------------------------------------------------------- author links
class TestAuthorLinks:
    @pytest.mark.parametrize("field", ["speaker", "author"])
    def test_memory_said_by_the_named_person_outranks_an_equal_one(self, field: str) -> None:
        memory = LongTermMemory()
        said = "The budget needs another careful review."
        memory.save(said, metadata={field: "Caroline Diaz"})
        memory.save(said, metadata={field: "Mark Evans"})
        memory.save("The printer on floor two is jammed.", metadata={field: "Mark Evans"})
        hits = memory.search_hits("What did Caroline Diaz say about the budget?")
        # Both copies share only "budget" with the query (same text, same BM25). Caroline's
        # copy is linked to her, the person the query names; a tie would put the newer
        # (Mark's) first, so her copy being first is the author link's doing.
        assert len(hits) == 2
        first, second = hits
        assert first.item.metadata[field] == "Caroline Diaz"
        assert second.item.metadata[field] == "Mark Evans"
        assert first.explanation.lexical == pytest.approx(second.explanation.lexical)
        assert first.explanation.entity_path == ["Caroline Diaz"]
        assert "graph" in first.explanation.sources
        assert _sources(second) == ["lexical"]
        assert second.score < first.score

    def test_agent_as_author_boosts_without_a_graph_hit(self) -> None:
        memory = LongTermMemory()
        said = "The budget needs another careful review."
        # Caroline Diaz is known to the graph from a memory that shares no query word.
        memory.save("Caroline Diaz moved to Lisbon.")
        memory.save(said, agent_id="Caroline Diaz")
        memory.save(said, agent_id="Mark Evans")
        hits = memory.search_hits("What did Caroline Diaz say about the budget?")
        by_agent = {hit.item.agent_id: hit for hit in hits if hit.item.content == said}
        caroline, mark = by_agent["Caroline Diaz"], by_agent["Mark Evans"]
        # Without speaker/author metadata the author is the agent. Neither copy mentions
        # Caroline (no graph score): only the author link separates equal lexical scores,
        # against the newer-first tie-break.
        assert _sources(caroline) == ["lexical"]
        assert _sources(mark) == ["lexical"]
        assert caroline.explanation.lexical == pytest.approx(mark.explanation.lexical)
        assert hits.index(caroline) < hits.index(mark)
        assert mark.score < caroline.score


# ---------------------------------------------------------------------------- adjacency
class TestAdjacency:
    def test_reply_after_a_lexical_hit_is_returned(self) -> None:
        memory = LongTermMemory()
        question = "Did anyone fix the boiler pressure valve?"
        reply = "Yes, the plumber replaced it this morning."
        later = "Great, thanks for sorting that out."
        memory.save(question, conversation_id="c1")
        memory.save("The quarterly newsletter went out.", conversation_id="c2")
        memory.save(reply, conversation_id="c1")
        memory.save(later, conversation_id="c1")
        memory.save("Nobody read the newsletter.", conversation_id="c2")
        hits = memory.search_hits("boiler pressure valve")
        # The question is the only lexical hit. In conversation c1 the reply is its next
        # turn (distance 1, the c2 memory saved between them is another conversation) and
        # "later" is two turns on (distance 2, decayed). Neither shares a query word; the c2
        # memories are not neighbours of any hit.
        assert _contents(hits) == [question, reply, later]
        assert _sources(hits[0]) == ["lexical"]
        for content in (reply, later):
            explanation = _hit(hits, content).explanation
            assert _sources(explanation) == ["adjacency"]
            assert explanation.matched_terms == []
            assert explanation.lexical == 0.0
        assert _hit(hits, later).explanation.adjacency < _hit(hits, reply).explanation.adjacency
        _assert_best_first(hits)


# ---------------------------------------------------------------------------- fusion rules
class TestFusion:
    def test_unrelated_query_returns_nothing(self) -> None:
        memory = LongTermMemory()
        _saved(
            memory,
            "Alice Johnson joined Acme Corp as CTO.",
            "The canteen serves lentil soup.",
            "Did anyone fix the boiler pressure valve?",
        )
        assert memory.search_hits("quantum chromodynamics lattice") == []
        assert memory.search_hits("Where is Zebulon Quimby?") == []  # unknown name, no words
        assert memory.search("quantum chromodynamics lattice") == []

    def test_agent_filter_applies_to_lexical_graph_and_adjacency_candidates(self) -> None:
        memory = LongTermMemory()
        # One conversation with turns by two agents: finance, legal, finance.
        memory.save("Alice Johnson reviewed the budget.", agent_id="finance", conversation_id="c")
        memory.save("Legal signed off on it.", agent_id="legal", conversation_id="c")
        memory.save("Sounds good, send it over.", agent_id="finance", conversation_id="c")
        memory.save("Alice Johnson joined Acme Corp.", agent_id="legal")
        memory.save("Alice met the auditors.", agent_id="finance")
        memory.save("Alice met the lawyers.", agent_id="legal")
        unfiltered = memory.search_hits("Alice Johnson budget")
        # Unfiltered, all six come back: four share "alice" (and name Alice Johnson), the
        # two other turns of conversation c are neighbours of its first turn.
        assert len(unfiltered) == 6
        hits = memory.search_hits("Alice Johnson budget", filters={"agent_id": "finance"})
        # Filtered, only finance's three: the legal turn is not a neighbour any more (and
        # is not returned), the last finance turn is (next finance turn of c).
        assert {hit.item.agent_id for hit in hits} == {"finance"}
        assert _contents(hits)[0] == "Alice Johnson reviewed the budget."
        assert sorted(_contents(hits)) == sorted(
            [
                "Alice Johnson reviewed the budget.",
                "Sounds good, send it over.",
                "Alice met the auditors.",
            ]
        )
        assert "adjacency" in _hit(hits, "Sounds good, send it over.").explanation.sources
        _assert_each_once(hits)

    def test_an_item_found_three_ways_appears_once(self) -> None:
        memory = LongTermMemory()
        reviewed, approved = (
            "Alice Johnson reviewed the budget.",
            "Alice Johnson approved the budget.",
        )
        memory.save(reviewed, conversation_id="c")
        memory.save(approved, conversation_id="c")
        memory.save("The canteen serves lentil soup.")
        hits = memory.search_hits("Alice Johnson budget")
        # Each is a lexical hit, a mention of Alice Johnson and the neighbour of the other
        # in conversation c: three reasons, one hit each.
        assert sorted(_contents(hits)) == sorted([reviewed, approved])
        _assert_each_once(hits)
        for hit in hits:
            assert _sources(hit) == ["lexical", "graph", "adjacency"]
            assert hit.explanation.matched_terms == ["alice", "johnson", "budget"]
            assert hit.explanation.entity_path == ["Alice Johnson"]

    def test_answer_type_prior_prefers_the_memory_holding_a_date(self) -> None:
        memory = LongTermMemory()
        dated = "The audit finished on 3 March 2024."
        placed = "The audit finished in the main office."
        memory.save(dated)
        memory.save(placed)
        # Both share only "audit" and "finished"; "when" expects a DATE, which only the first
        # holds. Same length, so the same BM25: the answer type decides (against the
        # newer-first tie-break).
        hits = memory.search_hits("When was the audit finished?")
        assert _contents(hits) == [dated, placed]
        assert hits[0].explanation.lexical == pytest.approx(hits[1].explanation.lexical)
        assert hits[1].score < hits[0].score


# ---------------------------------------------------------------------------- hostile input
class TestHostileQueries:
    @pytest.fixture
    def memory(self) -> LongTermMemory:
        memory = LongTermMemory()
        _saved(
            memory,
            "We will drop the old table from the schema.",
            "The office is near the station.",
            "Alice Johnson joined Acme Corp as CTO.",
        )
        return memory

    @pytest.mark.parametrize(
        ("query", "expected_first"),
        [
            ('"a" OR NEAR(', "The office is near the station."),  # term: "near"
            ("'; DROP TABLE memories; --", "We will drop the old table from the schema."),
            ("<script>alert('Alice')</script>", "Alice Johnson joined Acme Corp as CTO."),
            ("alice* AND acme:corp", "Alice Johnson joined Acme Corp as CTO."),
        ],
    )
    def test_syntax_in_queries_is_only_words(
        self, memory: LongTermMemory, query: str, expected_first: str
    ) -> None:
        hits = memory.search_hits(query)
        assert _contents(hits)[0] == expected_first
        assert len(memory) == 3  # nothing was dropped
        assert _contents(memory.search_hits("station")) == ["The office is near the station."]

    @pytest.mark.parametrize(
        "query", ['"', "OR NOT(", ")", "*", "^", "'", "--", '"" OR ""', "<>", "😀"]
    )
    def test_pure_syntax_returns_nothing_without_error(
        self, memory: LongTermMemory, query: str
    ) -> None:
        assert memory.search_hits(query) == []


# ---------------------------------------------------------------------------- context report
class TestContextReport:
    TASK = "Prepare the Acme Corp contract summary for Alice Johnson"

    @pytest.fixture
    def cortex(self) -> CortexMemory:
        memory = CortexMemory()
        # Entity tier texts are "<task> <result>"; who mentions what is noted per save.
        memory.save_task_result(
            "Review Acme Corp contract",
            "Alice Johnson approved the Acme Corp contract renewal.",  # Acme, Alice
            agent_role="legal",
            importance=0.9,
        )
        memory.save_task_result(
            "Plan the offsite",
            "Acme Corp booked a venue in Berlin for the offsite.",  # Acme, Berlin
            agent_role="ops",
            importance=0.8,
        )
        memory.save_task_result(
            "Check printer",
            "The printer on floor two was repaired.",  # none
            agent_role="ops",
            importance=0.3,
        )
        memory.save_task_result(
            "Draft budget",
            "Alice Johnson drafted the budget for Acme Corp.",  # Alice, Acme
            agent_role="finance",
            importance=0.75,
        )
        memory.save_task_result(
            "Call the client",
            "Alice Johnson asked for the contract summary by email.",  # Alice
            agent_role="legal",
            importance=0.4,
        )
        return memory

    def test_sections_in_seed_order_and_text_matches(self, cortex: CortexMemory) -> None:
        report = cortex.build_context_report(self.TASK, additional_context="Q3 renewals")
        titles = [section.title for section in report.sections if section.entries]
        assert titles == HEADINGS[1:]
        text = cortex.build_context_for_task(self.TASK, additional_context="Q3 renewals")
        assert report.text == text
        assert text.startswith("Background:\nQ3 renewals\nRecent context:\n")
        positions = [text.index(heading) for heading in HEADINGS]
        assert positions == sorted(positions)
        # Building again (searches count accesses, may promote) gives the same context.
        assert cortex.build_context_for_task(self.TASK, additional_context="Q3 renewals") == text
        assert cortex.build_context_for_task(self.TASK, additional_context="Q3 renewals") == text

    def test_each_item_once_across_sections(self, cortex: CortexMemory) -> None:
        report = cortex.build_context_report(self.TASK)
        entries = [e for s in report.sections for e in s.entries if e.memory_id is not None]
        ids = [e.memory_id for e in entries]
        assert len(ids) == len(set(ids))
        shown = [e.content[: e.max_chars] for e in entries]
        assert len(shown) == len(set(shown)), shown
        bullets = [line for line in report.text.split("\n") if line.startswith("  • ")]
        assert len(bullets) == len(set(bullets))

    def test_relevant_knowledge_ranked_with_explanations(self, cortex: CortexMemory) -> None:
        report = cortex.build_context_report(self.TASK)
        knowledge = next(s for s in report.sections if s.title == "Relevant knowledge:")
        # Long-term holds the three results of importance >= 0.7; all mention Acme Corp.
        # The renewal shares the most words (acme, corp, contract, alice, johnson) and names
        # both entities; the budget shares four and names both; the offsite shares two and
        # names Acme Corp only.
        assert [e.content for e in knowledge.entries] == [
            "Alice Johnson approved the Acme Corp contract renewal.",
            "Alice Johnson drafted the budget for Acme Corp.",
            "Acme Corp booked a venue in Berlin for the offsite.",
        ]
        scores = [e.score for e in knowledge.entries]
        assert all(score is not None for score in scores)
        assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
        assert scores[0] == pytest.approx(1.0)
        for entry in knowledge.entries:
            assert entry.tier == "long_term"
            assert entry.explanation is not None
            assert entry.explanation.sources[:2] == ["lexical", "graph"]
            assert entry.explanation.entity_path[0] in {"Acme Corp", "Alice Johnson"}
        top = knowledge.entries[0].explanation
        assert top is not None
        assert set(top.matched_terms) == {"acme", "corp", "contract", "alice", "johnson"}
        related = next(s for s in report.sections if s.title == "Related memories:")
        # Only the low-importance result is left for contextual memory (the others are
        # already shown), found by "contract", "summary", "alice", "johnson".
        assert [e.content for e in related.entries] == [
            "Alice Johnson asked for the contract summary by email."
        ]
        assert related.entries[0].explanation is not None
        assert related.entries[0].score is not None

    def test_known_entities_say_what_each_entity_is(self, cortex: CortexMemory) -> None:
        report = cortex.build_context_report(self.TASK)
        known = next(s for s in report.sections if s.title == "Known entities:")
        # No typed relation between them: each line says what the entity is and what it is
        # mentioned with (not a count). Text order of the task: Acme first.
        assert [e.content for e in known.entries] == [
            "Acme Corp (ORG), mentioned with Alice Johnson, Berlin",
            "Alice Johnson (PERSON), mentioned with Acme Corp",
        ]
        assert "  • Acme Corp (ORG), mentioned with Alice Johnson, Berlin\n" in report.text
        assert report.entities == ["Acme Corp", "Alice Johnson"]

    def test_known_entities_by_first_name_and_short_form(self, cortex: CortexMemory) -> None:
        report = cortex.build_context_report("Ask Alice about ACME")
        known = next(s for s in report.sections if s.title == "Known entities:")
        # "Alice" is one person's first name, "ACME" the short form of Acme Corp, in the
        # task's text order.
        assert [e.content for e in known.entries] == [
            "Alice Johnson (PERSON), mentioned with Acme Corp",
            "Acme Corp (ORG), mentioned with Alice Johnson, Berlin",
        ]

    def test_subgraph_holds_named_entities_and_neighbours(self, cortex: CortexMemory) -> None:
        report = cortex.build_context_report(self.TASK)
        graph = report.subgraph
        names = {str(graph.nodes[n].get("name", n)) for n in graph.nodes}
        # Berlin is co-mentioned with Acme Corp (the offsite): one hop from a named entity.
        assert {"Acme Corp", "Alice Johnson", "Berlin"} <= names
        serialised = report.to_dict()["subgraph"]
        assert {"Acme Corp", "Alice Johnson", "Berlin"} <= set(serialised["nodes"])

    def test_agent_role_filters_relevant_knowledge(self, cortex: CortexMemory) -> None:
        report = cortex.build_context_report(self.TASK, agent_role="finance")
        knowledge = next(s for s in report.sections if s.title == "Relevant knowledge:")
        # finance's one long-term memory is its recent context already: shown once, there.
        assert [e.content for e in knowledge.entries] == []
        budget = "Alice Johnson drafted the budget for Acme Corp."
        assert [e.tier for s in report.sections for e in s.entries if budget in e.content] == [
            "short_term"
        ]
        team = cortex.build_context_report(self.TASK, agent_role="finance", knowledge_scope="team")
        shown = [
            e.content for s in team.sections for e in s.entries if s.title != "Recent context:"
        ]
        assert any("Acme Corp" in c for c in shown) and not any(budget in c for c in shown)

    @pytest.mark.parametrize(
        "task", ['"a" OR NEAR(', "'; DROP TABLE memories; --", "<b>Acme</b> & Alice"]
    )
    def test_hostile_task_strings(self, cortex: CortexMemory, task: str) -> None:
        report = cortex.build_context_report(task)
        assert report.text == cortex.build_context_for_task(task)
        assert cortex.long_term is not None and len(cortex.long_term) == 3


def test_matched_terms_fold_diacritics_like_the_index() -> None:
    """The index folds accents ("cafe" finds "café"); the explanation must say so too."""
    memory = LongTermMemory()
    memory.save("We met at the café near the station.")
    memory.save("The canteen serves lentil soup.")
    hits = memory.search_hits("Which cafe did we meet at?")
    assert [h.item.content for h in hits] == ["We met at the café near the station."]
    assert _sources(hits[0]) == ["lexical"]
    assert hits[0].explanation.matched_terms == ["cafe"]
    naive = memory.search_hits("naïve café")
    assert naive and naive[0].explanation.matched_terms == ["café"]


class TestBoundedWork:
    """Lexical candidates are every text matching a query word that an item of the search
    shows (scored like a bare FTS5 query); graph candidates come from windows of each
    entity's newest texts (documented in search.py and ranking_rows.py)."""

    def test_lexical_search_scores_every_matching_text(self) -> None:
        memory = LongTermMemory()
        for i in range(6):
            memory.save(f"Shipment {i} of turbines left the depot.")
        memory.save("The canteen serves lentil soup.")
        found = [h.item.content for h in memory.search_hits("turbines", limit=10)]
        assert sorted(found) == [f"Shipment {i} of turbines left the depot." for i in range(6)]

    def test_graph_window_takes_the_newest_mentions(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from graphmem.retrieval import weights

        memory = LongTermMemory()
        memory.save("Zorblax Industries hired Quentin Marsh.")
        reports = [f"Quentin Marsh filed report number {n}." for n in range(5)]
        for content in reports:
            memory.save(content)
        monkeypatch.setattr(
            weights,
            "DEFAULT_WEIGHTS",
            replace(weights.DEFAULT_WEIGHTS, graph_window=2, graph_min_window=1),
        )
        hits = memory.search_hits("What does Zorblax Industries do?", limit=10)
        # The reports share no word with the query: they come through Quentin Marsh, a
        # neighbour of the named company, and only his two newest mentions are candidates.
        found = [h.item.content for h in hits if not h.explanation.matched_terms]
        assert found and set(found) <= set(reports[-2:])
        monkeypatch.setattr(
            weights,
            "DEFAULT_WEIGHTS",
            replace(weights.DEFAULT_WEIGHTS, graph_window=300, graph_min_window=10),
        )
        hits = memory.search_hits("What does Zorblax Industries do?", limit=10)
        assert set(reports) <= {h.item.content for h in hits}

    def test_windows_count_only_the_searched_namespace(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Another tier's newer copies (a facade saves a result to several) must not push a
        tier's own rows out of either window."""
        from graphmem.compat.storage import SQLiteStorage
        from graphmem.retrieval import weights

        storage = SQLiteStorage()
        mine = LongTermMemory(storage=storage)
        other = LongTermMemory(storage=storage, namespace="other")
        mine.save("Zorblax Industries hired Quentin Marsh.")
        reports = [f"Quentin Marsh filed turbine report {n}." for n in range(3)]
        for content in reports:
            mine.save(content)
        for n in range(6):
            other.save(f"Quentin Marsh filed turbine report {n} again.")
        found = {h.item.content for h in mine.search_hits("turbine", limit=3)}
        assert set(reports) == found
        monkeypatch.setattr(
            weights,
            "DEFAULT_WEIGHTS",
            replace(weights.DEFAULT_WEIGHTS, graph_window=3, graph_min_window=3),
        )
        hits = mine.search_hits("What does Zorblax Industries do?", limit=10)
        assert set(reports) <= {h.item.content for h in hits if not h.explanation.matched_terms}
