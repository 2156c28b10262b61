"""The calute 0.1.5 bugs listed in docs/contract.md §3, each shown absent."""

from __future__ import annotations

import copy
import random
import re
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem import (
    ContextualMemory,
    CortexMemory,
    EntityMemory,
    LongTermMemory,
    ShortTermMemory,
    UserMemory,
)
from graphmem.store.engine import SQLITE_MODULE as sqlite3  # the SQLite graphmem runs on

CORPUS = [
    "Alice Johnson joined Acme Corp in Berlin as head of research.",
    "Bob Stone works at Initech with Carol Diaz on the payments team.",
    "Acme Corp acquired Initech last year for its billing platform.",
    "The deploy pipeline failed twice during the night.",
    "Carol Diaz presented the quarterly roadmap to the board.",
    "Lunch was pizza and everyone liked it.",
    "Dan Evans moved from Globex to Acme Corp in March.",
    "Server costs grew because of the analytics cluster.",
    "The marketing team shipped a new landing page.",
    "Erin Fox reviewed the security audit of the billing platform.",
]
VOCABULARY = sorted(
    {w for text in CORPUS for w in re.findall(r"[A-Za-z]+", text)}
    | {"kubernetes", "banana", "quantum", "sailing", "violin", "where", "who", "what", "does"}
    | {"deploying", "workers", "presenting", "reviews", "acquisitions"}
)


def _shares_stemmed_term(query: str, content: str) -> bool:
    """The oracle: SQLite's own porter tokenizer, independent of graphmem's code."""
    words = re.findall(r"\w+", query.lower())
    if not words:
        return False
    con = sqlite3.connect(":memory:")
    try:
        con.execute("CREATE VIRTUAL TABLE t USING fts5(c, tokenize='porter unicode61')")
        con.execute("INSERT INTO t VALUES (?)", (content,))
        match = " OR ".join(f'"{w}"' for w in words)
        return con.execute("SELECT count(*) FROM t WHERE t MATCH ?", (match,)).fetchone()[0] > 0
    finally:
        con.close()


def _named_in(query: str, entity: str) -> bool:
    query_words = set(re.findall(r"\w+", query.lower()))
    return any(part in query_words for part in re.findall(r"\w+", entity.lower()))


@pytest.fixture(scope="module")
def corpus_memory() -> LongTermMemory:
    memory = LongTermMemory()
    for text in CORPUS:
        memory.save(text)
    return memory


class TestSearchReturnsOnlyMatches:
    def test_random_queries(self, corpus_memory: LongTermMemory) -> None:
        rng = random.Random(20240531)
        checked = 0
        for _ in range(150):
            query = " ".join(rng.sample(VOCABULARY, rng.randint(1, 4)))
            for hit in corpus_memory.search_hits(query, limit=10):
                content = hit.item.content
                checked += 1
                if _shares_stemmed_term(query, content):
                    continue
                # Otherwise the item must come through an entity the query names.
                path = hit.explanation.entity_path
                assert path, (query, content, hit.explanation)
                assert _named_in(query, path[0]), (query, content, path)
                assert path[-1].lower() in content.lower(), (query, content, path)
        assert checked > 100  # the queries did find things

    @pytest.mark.parametrize(
        "query", ["kubernetes", "banana violin", "quantum sailing", "xyzzy", "Who is Zed Quux?"]
    )
    def test_unrelated_queries_find_nothing(
        self, corpus_memory: LongTermMemory, query: str
    ) -> None:
        assert corpus_memory.search(query) == []

    def test_best_first(self, corpus_memory: LongTermMemory) -> None:
        hits = corpus_memory.search_hits("billing platform audit")
        assert hits[0].item.content == CORPUS[9]
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)
        assert all(0 < h.item.relevance_score <= 1 for h in hits)

    def test_no_substring_relevance(self) -> None:
        # calute scored by substring: "art" matched "started" and "party".
        memory = ShortTermMemory()
        memory.save("The party started late")
        memory.save("Modern art exhibition")
        assert [i.content for i in memory.search("art")] == ["Modern art exhibition"]

    def test_contextual_and_entity_search_only_match(self) -> None:
        contextual = ContextualMemory()
        entity = EntityMemory()
        for n, text in enumerate(CORPUS):
            contextual.save(text, importance=0.9 if n % 2 else 0.2)
            entity.save(text)
        for memory in (contextual, entity):
            assert memory.search("kubernetes banana") == []
            found = [i.content for i in memory.search("pipeline")]
            assert found == ["The deploy pipeline failed twice during the night."]


class TestFreshCortexWritesEveryTier:
    def test_fresh_memory(self) -> None:
        memory = CortexMemory()
        memory.save_task_result("Meet Alice Johnson.", "Alice Johnson joined Acme Corp.", "HR", 0.9)
        for tier in (memory.short_term, memory.long_term, memory.entity_memory):
            assert tier is not None and len(tier) == 1
        assert bool(memory.short_term) is True  # an empty tier is still truthy for old callers


class TestUsersIsolated:
    def test_user_memory(self) -> None:
        users = UserMemory()
        users.save_memory("alice", "My password hint is Atlas and Alice Johnson knows it")
        users.save_memory("bob", "Bob Stone likes Atlas maps")
        assert [i.content for i in users.search_user_memory("bob", "Alice Johnson password")] == []
        assert all(
            i.user_id == "bob" for i in users.search_user_memory("bob", "Atlas Alice Johnson")
        )
        assert "Alice Johnson" not in users.get_user_context("bob")
        users.clear_user_memory("bob")
        assert [i.content for i in users.search_user_memory("alice", "Atlas")] == [
            "My password hint is Atlas and Alice Johnson knows it"
        ]

    def test_filters_by_user_and_agent(self) -> None:
        memory = LongTermMemory()
        memory.save("Atlas budget for alice", user_id="alice", agent_id="a1")
        memory.save("Atlas budget for bob", user_id="bob", agent_id="a2")
        assert [i.content for i in memory.search("Atlas budget", filters={"user_id": "bob"})] == [
            "Atlas budget for bob"
        ]
        assert [i.content for i in memory.search("Atlas", filters={"agent_id": "a1"})] == [
            "Atlas budget for alice"
        ]
        assert memory.delete(filters={"user_id": "bob"}) == 1
        assert [i.content for i in memory.search("Atlas")] == ["Atlas budget for alice"]

    def test_entity_graphs_are_per_user(self) -> None:
        users = UserMemory()
        users.save_memory("alice", "Alice Johnson works at Acme Corp")
        users.save_memory("bob", "Bob Stone works at Initech")
        assert users.get_user_statistics("alice")["entities_known"] == 2
        assert users.get_user_statistics("bob")["entities_known"] == 2
        assert users.search_user_memory("bob", "Acme Corp") == []


class TestMetadataNotMutatedOrShared:
    def test_tiers(self) -> None:
        caller: dict[str, Any] = {"tags": ["a"], "nested": {"n": 1}}
        snapshot = copy.deepcopy(caller)
        memories = [ShortTermMemory(), LongTermMemory(), EntityMemory(), ContextualMemory()]
        items = [m.save("Alice Johnson met Bob Stone", metadata=caller) for m in memories]
        items += [memories[0].save("second", metadata=caller)]
        assert caller == snapshot
        for item in items:
            assert item.metadata is not caller
            assert item.metadata["tags"] is not caller["tags"]
        items[0].metadata["tags"].append("mutated")
        assert all(i.metadata["tags"] == ["a"] for i in items[1:])
        stored = memories[0].retrieve(items[0].memory_id)
        assert stored is not None and stored.metadata["tags"] == ["a"]  # type: ignore[union-attr]

    def test_cortex(self) -> None:
        caller: dict[str, Any] = {"ticket": {"id": 1}}
        memory = CortexMemory()
        memory.save_task_result("Plan", "Planned", "PM", importance=0.9, task_metadata=caller)
        memory.save_task_result("Ship", "Shipped", "PM", importance=0.9, task_metadata=caller)
        assert caller == {"ticket": {"id": 1}}
        assert memory.long_term is not None
        a, b = memory.long_term._all_items()
        assert (a.metadata["task"], b.metadata["task"]) == ("Plan", "Ship")
        assert a.metadata is not b.metadata and a.metadata["ticket"] is not b.metadata["ticket"]


def test_no_pickle_in_the_package() -> None:
    root = Path(graphmem.__file__).parent
    offenders = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if re.search(
            r"^\s*(import|from)\s+(c?pickle|dill|shelve|marshal)\b|\b(c?pickle|dill|shelve)\.[a-z]",
            path.read_text(encoding="utf-8"),
            re.MULTILINE,
        )
    ]
    assert offenders == []
    # The check itself works: it catches an import and a call.
    assert re.search(r"\b(c?pickle|dill|shelve)\.[a-z]", "x = pickle.loads(b)")


class TestEntityExtraction:
    def test_acronyms_and_inner_capitals_found(self) -> None:
        memory = EntityMemory()
        item = memory.save("She said OpenAI and IBM signed a deal. Check the figures tomorrow.")
        assert "OpenAI" in item.metadata["entities"]
        assert "IBM" in item.metadata["entities"]
        assert "She" not in item.metadata["entities"]
        assert "Check" not in item.metadata["entities"]
        assert set(memory.entities) == {"OpenAI", "IBM"}

    def test_sentence_initial_verb_not_merged_into_a_name(self) -> None:
        memory = EntityMemory()
        item = memory.save("Research Acme Corporation before the meeting with Bob Stone.")
        assert "Research Acme Corporation" not in item.metadata["entities"]
        assert "Acme Corporation" in item.metadata["entities"]

    def test_order_is_deterministic(self) -> None:
        text = "Bob Stone met Alice Johnson at Initech in Berlin with Carol Diaz from Globex."
        orders = [EntityMemory().save(text).metadata["entities"] for _ in range(3)]
        assert orders[0] == orders[1] == orders[2]
        # Text order.
        positions = [text.index(name) for name in orders[0]]
        assert positions == sorted(positions)
        memory = EntityMemory()
        memory.save(text)
        assert list(memory.entities) == orders[0]

    def test_relationships_without_duplicates(self) -> None:
        memory = EntityMemory()
        for _ in range(5):
            memory.save("Alice Johnson works at Acme Corp with Bob Stone.")
        relationships = memory.relationships
        for pairs in relationships.values():
            assert len(pairs) == len(set(pairs))
        assert relationships["works_at"] == [("Alice Johnson", "Acme Corp")]
        assert memory.get_entity_info("Alice Johnson")["frequency"] == 5
        relations = memory.get_entity_info("Alice Johnson")["relationships"]
        assert len(relations) == len({(r["relation"], r["target"]) for r in relations})


def test_explanation_lists_the_stemmed_terms_that_matched(corpus_memory: LongTermMemory) -> None:
    for hit in corpus_memory.search_hits("Where does Alice work?"):
        if hit.explanation.lexical > 0:
            assert hit.explanation.matched_terms, (hit.item.content, hit.explanation)
