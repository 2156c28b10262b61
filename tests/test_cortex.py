"""CortexMemory, the facade of the seed ``cortex_memory.txt`` (docs/contract.md §1)."""

from __future__ import annotations

import copy
import inspect
import os
import warnings
from dataclasses import replace

import pytest
from _workers import HEADINGS

from graphmem import (
    ContextualMemory,
    CortexMemory,
    EntityMemory,
    LongTermMemory,
    MemoryItem,
    PersistenceDisabledWarning,
    ShortTermMemory,
    SQLiteStorage,
    UserMemory,
)


def _all(memory: object) -> list[MemoryItem]:
    items = memory._all_items()  # type: ignore[attr-defined]
    return list(items)


def _contents(memory: object) -> list[str]:
    return [i.content for i in _all(memory)]


# ---------------------------------------------------------------------------- construction
class TestConstruction:
    def test_signature(self) -> None:
        params = inspect.signature(CortexMemory).parameters
        calute = {n: p for n, p in params.items() if p.kind is not p.KEYWORD_ONLY}
        # graphmem's additions are keyword-only: Calute's calls mean what they meant.
        assert {n: p.default for n, p in params.items() if p.kind is p.KEYWORD_ONLY} == {
            "storage": None,
            "user_id": None,
            "knowledge_scope": "agent",
        }
        assert {n: p.default for n, p in calute.items()} == {
            "enable_short_term": True,
            "enable_long_term": True,
            "enable_entity": True,
            "enable_user": False,
            "persistence_path": None,
            "short_term_capacity": 50,
            "long_term_capacity": 5000,
        }

    def test_default_tiers(self, write_memory_off: None) -> None:
        memory = CortexMemory()
        assert memory.storage is None
        assert isinstance(memory.short_term, ShortTermMemory)
        assert isinstance(memory.long_term, LongTermMemory)
        assert isinstance(memory.entity_memory, EntityMemory)
        assert memory.user_memory is None
        assert isinstance(memory.contextual, ContextualMemory)
        assert memory.short_term.capacity == 50
        assert memory.long_term.max_items == 5000

    def test_disabled_tiers_are_none_contextual_always_exists(self) -> None:
        memory = CortexMemory(
            enable_short_term=False,
            enable_long_term=False,
            enable_entity=False,
            enable_user=True,
            short_term_capacity=7,
            long_term_capacity=9,
        )
        assert memory.short_term is None
        assert memory.long_term is None
        assert memory.entity_memory is None
        assert isinstance(memory.user_memory, UserMemory)
        assert isinstance(memory.contextual, ContextualMemory)
        memory.save_task_result("Plan the sprint", "Sprint planned", agent_role="PM")
        assert _contents(memory.contextual) == ["Sprint planned"]
        assert CortexMemory(short_term_capacity=7).short_term.capacity == 7  # type: ignore[union-attr]


class TestWriteMemoryGate:
    def test_no_path_no_storage_no_warning(self, write_memory_on: None) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert CortexMemory().storage is None

    @pytest.mark.parametrize("value", [None, "0", "true", "yes", ""])
    def test_path_without_write_memory_warns_once_and_stays_ephemeral(
        self, value: str | None, db_file: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        if value is None:
            monkeypatch.delenv("WRITE_MEMORY", raising=False)
        else:
            monkeypatch.setenv("WRITE_MEMORY", value)
        with pytest.warns(PersistenceDisabledWarning, match="WRITE_MEMORY") as record:
            memory = CortexMemory(persistence_path=db_file)
        assert len([w for w in record if w.category is PersistenceDisabledWarning]) == 1
        assert db_file in str(record[0].message)
        assert memory.storage is None
        memory.save_task_result("Plan", "Done", agent_role="PM", importance=0.9)
        assert not os.path.exists(db_file)

    def test_path_with_write_memory_persists(self, write_memory_on: None, db_file: str) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            memory = CortexMemory(persistence_path=db_file)
        assert isinstance(memory.storage, SQLiteStorage)
        assert memory.storage.db_path == db_file
        memory.save_task_result("Plan", "Done", agent_role="PM", importance=0.9)
        assert os.path.getsize(db_file) > 0
        memory.storage.close()


# ---------------------------------------------------------------------------- saving
class TestSaveTaskResult:
    def test_below_threshold_skips_long_term(self) -> None:
        memory = CortexMemory()
        memory.save_task_result("Review the Atlas plan", "Atlas looks fine", "Planner", 0.69)
        assert _contents(memory.short_term) == [
            "Task completed: Review the Atlas plan - Result: Atlas looks fine"
        ]
        assert len(memory.long_term) == 0  # type: ignore[arg-type]
        assert _contents(memory.entity_memory) == ["Review the Atlas plan Atlas looks fine"]
        assert _contents(memory.contextual.short_term) == ["Atlas looks fine"]
        assert len(memory.contextual.long_term) == 0

    def test_at_threshold_writes_long_term(self) -> None:
        memory = CortexMemory()
        memory.save_task_result("Review the Atlas plan", "Atlas looks fine", "Planner", 0.7)
        (item,) = _all(memory.long_term)
        assert item.content == "Atlas looks fine"
        assert item.agent_id == "Planner"
        assert item.metadata["importance"] == 0.7
        assert _contents(memory.contextual.long_term) == ["Atlas looks fine"]
        assert len(memory.short_term) == 1  # type: ignore[arg-type]

    def test_content_and_metadata(self) -> None:
        memory = CortexMemory()
        task = "T" * 150
        result = "R" * 300
        caller = {"ticket": "OPS-1", "nested": {"k": [1]}, "task": "overridden"}
        snapshot = copy.deepcopy(caller)
        memory.save_task_result(task, result, "Analyst", importance=0.9, task_metadata=caller)
        assert caller == snapshot  # the caller's dict is not mutated
        (short,) = _all(memory.short_term)
        assert short.content == f"Task completed: {'T' * 100} - Result: {'R' * 200}"
        assert short.agent_id == "Analyst"
        expected = {
            "ticket": "OPS-1",
            "nested": {"k": [1]},
            "task": "T" * 100,
            "agent_role": "Analyst",
        }
        assert short.metadata == expected
        (long,) = _all(memory.long_term)
        assert long.content == result
        assert long.metadata == {**expected, "importance": 0.9}
        (entity,) = _all(memory.entity_memory)
        assert entity.content == f"{task} {result}"
        assert {k: entity.metadata[k] for k in expected} == expected
        # Stored items do not share one metadata dict, nor the caller's.
        short.metadata["nested"]["k"].append(2)
        assert long.metadata["nested"]["k"] == [1] and caller["nested"]["k"] == [1]

    def test_fresh_memory_writes_every_tier(self) -> None:
        # calute tested ``if self.short_term:`` on an empty (falsy) tier and wrote nothing.
        memory = CortexMemory()
        memory.save_task_result("Meet Alice Johnson.", "Alice Johnson joined Acme Corp.", "HR", 0.9)
        assert len(memory.short_term) == 1  # type: ignore[arg-type]
        assert len(memory.long_term) == 1  # type: ignore[arg-type]
        assert len(memory.entity_memory) == 1  # type: ignore[arg-type]
        assert "Alice Johnson" in memory.entity_memory.entities  # type: ignore[union-attr]
        assert len(memory.contextual) == 1


class TestConversationAndSpeaker:
    def test_conversation_id_reaches_every_tier(self) -> None:
        memory = CortexMemory()
        meta = {"conversation_id": "conv-7", "speaker": "Ann Lee"}
        memory.save_task_result("Chat", "Ann Lee: the Atlas demo went well", "Ann Lee", 0.9, meta)
        tiers = [
            memory.short_term,
            memory.long_term,
            memory.entity_memory,
            memory.contextual.long_term,
        ]
        for tier in tiers:
            (item,) = _all(tier)
            assert item.conversation_id == "conv-7"
            assert item.agent_id == "Ann Lee"
            assert item.metadata["speaker"] == "Ann Lee"
        (hit,) = memory.search_hits("How did the demo go?")
        assert hit.item.conversation_id == "conv-7"

    def test_neighbouring_turns_rank_through_the_conversation(self) -> None:
        # The reply shares no word with the question; it is found because it follows the
        # turn that does, in the same conversation (adjacency needs the conversation column).
        memory = CortexMemory()
        turns = [
            "Ann: Did you watch the meteor shower last night?",
            "Bob: Yes, I felt tiny and amazed under that sky.",
            "Ann: The bakery on Elm street closes early now.",
        ]
        memory.save_task_results(
            {
                "task_description": "Conversation turn",
                "result": text,
                "agent_role": text.split(":")[0],
                "importance": 0.7,
                "task_metadata": {"conversation_id": "c1"},
            }
            for text in turns
        )
        found = [item.content for item in memory.search("meteor shower", limit=5)]
        assert found[:2] == turns[:2]

    def test_bad_conversation_id_writes_nothing(self) -> None:
        memory = CortexMemory()
        with pytest.raises(TypeError, match=r"task_metadata\['conversation_id'\] must be a str"):
            memory.save_task_result("Chat", "Hello", "Ann", task_metadata={"conversation_id": 7})
        with pytest.raises(TypeError, match=r"results\[1\]\.task_metadata\['conversation_id'\]"):
            memory.save_task_results(
                [
                    {"task_description": "Chat", "result": "Hi", "agent_role": "Ann"},
                    {
                        "task_description": "Chat",
                        "result": "Hello",
                        "agent_role": "Ann",
                        "task_metadata": {"conversation_id": ["c"]},
                    },
                ]
            )
        assert len(memory.short_term) == 0  # type: ignore[arg-type]
        assert len(memory.entity_memory) == 0  # type: ignore[arg-type]
        assert len(memory.contextual) == 0


#: Task results whose task descriptions name entities the results do not (the entity tier
#: stores both), spanning both sides of the long-term threshold and two conversations.
_RESULTS = [
    ("Meet Alice Johnson", "Acme Corp hired a new CTO in Berlin.", "HR", 0.9, "c1"),
    ("Review Initech", "Alice approved the Initech contract.", "Legal", 0.4, "c1"),
    ("Plan the Atlas launch", "Bob Stone leads Atlas at Acme Corp.", "PM", 0.8, None),
    ("Call Globex", "Carol Diaz from Globex asked about Atlas pricing.", "Sales", 0.6, "c2"),
    ("Weekly sync", "Alice Johnson and Bob Stone met in Berlin.", "PM", 0.75, "c2"),
    ("Budget", "Initech paid the Acme Corp invoice.", "Finance", 0.2, None),
]


def _task_dict(task: str, result: str, agent: str, importance: float, conv: str | None) -> dict:
    meta = {"ticket": task[:4]} if conv is None else {"conversation_id": conv}
    return {
        "task_description": task,
        "result": result,
        "agent_role": agent,
        "importance": importance,
        "task_metadata": meta,
    }


def _state(memory: CortexMemory) -> dict[str, object]:
    """Everything stored and every context, without ids and timestamps."""
    tiers = {
        "short_term": memory.short_term,
        "long_term": memory.long_term,
        "entity": memory.entity_memory,
        "contextual.short_term": memory.contextual.short_term,
        "contextual.long_term": memory.contextual.long_term,
    }
    rows = {
        name: [
            (i.content, i.memory_type, i.metadata, i.agent_id, i.conversation_id)
            for i in _all(tier)
        ]
        for name, tier in tiers.items()
    }
    kg = memory.entity_memory.graph  # type: ignore[union-attr]
    nodes = sorted((d["name"], d["label"], d["mentions"]) for _, d in kg.graph.nodes(data=True))
    edges = sorted(
        (kg.name_of(u), k, kg.name_of(v), d.get("support"))
        for u, v, k, d in kg.graph.edges(keys=True, data=True)
    )
    tasks = ["What did Alice approve?", "Atlas at Acme Corp", "Berlin meeting"]
    contexts = [memory.build_context_for_task(t, max_items=5) for t in tasks]
    contexts.append(memory.build_context_for_task("Atlas", agent_role="PM"))
    return {"rows": rows, "nodes": nodes, "edges": edges, "contexts": contexts}


class TestSaveTaskResultsMatchesRepeatedSaves:
    @pytest.mark.parametrize("batch_size", [1, 4, 256])
    def test_same_rows_graph_and_contexts(self, batch_size: int) -> None:
        one_by_one = CortexMemory(short_term_capacity=4)
        for record in _RESULTS:
            d = _task_dict(*record)
            one_by_one.save_task_result(**d)
        batched = CortexMemory(short_term_capacity=4)
        ids = batched.save_task_results([_task_dict(*r) for r in _RESULTS], batch_size=batch_size)
        assert len(set(ids)) == len(_RESULTS)
        expected, got = _state(one_by_one), _state(batched)
        assert got["rows"] == expected["rows"]
        assert got["nodes"] == expected["nodes"]
        assert got["edges"] == expected["edges"]
        assert got["contexts"] == expected["contexts"]
        assert expected["contexts"][1]  # the comparison is not between empty contexts


class TestContextMaxItems:
    @pytest.fixture
    def audits(self) -> CortexMemory:
        memory = CortexMemory(enable_short_term=False, enable_entity=False)
        memory.save_task_results(
            {
                "task_description": "Audit",
                "result": f"Acme audit step {n} passed",
                "agent_role": "QA",
            }
            for n in range(8)
        )
        return memory

    @pytest.mark.parametrize(
        "max_items, listed, shown", [(0, 0, 0), (2, 2, 2), (5, 5, 3), (20, 8, 3)]
    )
    def test_related_memories_honour_max_items(
        self, audits: CortexMemory, max_items: int, listed: int, shown: int
    ) -> None:
        report = audits.build_context_report("Acme audit", max_items=max_items)
        related = [s for s in report.sections if s.title == "Related memories:"]
        entries = related[0].entries if related else []
        assert len(entries) == listed
        assert len({e.memory_id for e in entries}) == listed
        bullets = [line for line in report.text.split("\n") if line.startswith("  • ")]
        assert len(bullets) == shown
        assert audits.build_context_for_task("Acme audit", max_items=max_items) == report.text

    def test_shown_texts_do_not_take_related_places(self) -> None:
        # Important results are in long-term ("Relevant knowledge", 5 shown) and in contextual
        # memory with the same text: related memories skip those and still fill max_items.
        memory = CortexMemory(enable_short_term=False, enable_entity=False)
        memory.save_task_results(
            {
                "task_description": "Audit",
                "result": f"Acme audit step {n} passed",
                "agent_role": "QA",
                "importance": 0.9 if n < 5 else 0.3,
            }
            for n in range(9)
        )
        report = memory.build_context_report("Acme audit", max_items=4)
        knowledge, related = report.sections[0], report.sections[-1]
        assert len(knowledge.entries) == 5
        assert len(related.entries) == 4
        assert not {e.content for e in related.entries} & {e.content for e in knowledge.entries}

    @pytest.mark.parametrize(
        "bad, error", [(-1, ValueError), ("3", TypeError), (True, TypeError), (2.5, TypeError)]
    )
    def test_bad_max_items(self, audits: CortexMemory, bad: object, error: type) -> None:
        with pytest.raises(error, match="max_items"):
            audits.build_context_report("Acme audit", max_items=bad)  # type: ignore[arg-type]
        with pytest.raises(error, match="max_items"):
            audits.build_context_for_task("Acme audit", max_items=bad)  # type: ignore[arg-type]


class TestFacadeSearch:
    def test_only_matches_best_first_filtered_by_agent(self) -> None:
        memory = CortexMemory()
        memory.save_task_result("Audit", "Acme passed the security audit", "QA", 0.9)
        memory.save_task_result("Audit", "Acme audit report filed", "Ops", 0.3)
        memory.save_task_result("Lunch", "Pizza was good", "Ops")
        found = memory.search_hits("Acme security audit")
        assert [h.item.content for h in found] == [
            "Acme passed the security audit",
            "Acme audit report filed",
        ]
        assert found[0].score >= found[1].score
        assert [i.content for i in memory.search("Acme audit", agent_role="Ops")] == [
            "Acme audit report filed"
        ]
        assert memory.search("Kubernetes") == []

    @pytest.mark.parametrize(
        "kwargs, error",
        [
            ({"query": 3}, TypeError),
            ({"query": "x", "limit": -1}, ValueError),
            ({"query": "x", "limit": "5"}, TypeError),
            ({"query": "x", "agent_role": 5}, TypeError),
        ],
    )
    def test_bad_arguments(self, kwargs: dict, error: type) -> None:
        with pytest.raises(error):
            CortexMemory().search(**kwargs)

    def test_other_tiers_copies_do_not_crowd_out_hits(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # Each result is one text shown by four tiers; the graph window counts texts, so a
        # window of 3 still holds the 3 results.
        from graphmem.retrieval import weights

        memory = CortexMemory()
        results = [f"Quentin Marsh inspected turbine {n}" for n in range(3)]
        for text in results:
            memory.save_task_result("Inspection", text, "Ops", importance=0.9)
        monkeypatch.setattr(
            weights,
            "DEFAULT_WEIGHTS",
            replace(weights.DEFAULT_WEIGHTS, graph_window=3, graph_min_window=3),
        )
        assert {i.content for i in memory.search("turbine", limit=10)} == set(results)
        assert {i.content for i in memory.search("What did Quentin do?", limit=10)} == set(results)


class TestSaveAgentInteraction:
    def test_format_and_threshold(self) -> None:
        memory = CortexMemory()
        memory.save_agent_interaction("Coder", "tool_call", "ran pytest", importance=0.59)
        memory.save_agent_interaction("Coder", "thinking", "tests pass", importance=0.6)
        memory.save_agent_interaction("Coder", "delegating", "ask QA")
        assert _contents(memory.short_term) == [
            "[Coder] tool_call: ran pytest",
            "[Coder] thinking: tests pass",
            "[Coder] delegating: ask QA",
        ]
        assert [i.metadata for i in _all(memory.short_term)] == [
            {"action": "tool_call"},
            {"action": "thinking"},
            {"action": "delegating"},
        ]
        assert all(i.agent_id == "Coder" for i in _all(memory.short_term))
        (long,) = _all(memory.long_term)
        assert long.content == "[Coder] thinking: tests pass"
        assert (long.agent_id, long.metadata["importance"]) == ("Coder", 0.6)


class TestSaveCortexDecision:
    def test_with_and_without_outcome(self) -> None:
        memory = CortexMemory()
        memory.save_cortex_decision("Split the task", "Too large for one agent", importance=0.0)
        memory.save_cortex_decision("Retry", "Tool timed out", outcome="Succeeded", importance=1)
        long = _all(memory.long_term)
        assert [i.content for i in long] == [
            "Decision: Split the task\nContext: Too large for one agent",
            "Decision: Retry\nContext: Tool timed out\nOutcome: Succeeded",
        ]
        assert [i.agent_id for i in long] == ["cortex_manager", "cortex_manager"]
        assert [i.metadata["importance"] for i in long] == [0.0, 1.0]
        assert sorted(_contents(memory.contextual)) == sorted(i.content for i in long)
        assert len(memory.short_term) == 0  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- context
class TestBuildContext:
    def test_empty_memory_gives_empty_string(self) -> None:
        memory = CortexMemory()
        assert memory.build_context_for_task("Anything at all") == ""
        assert memory.build_context_for_task("Anything", additional_context="") == ""

    def test_background_only(self) -> None:
        memory = CortexMemory()
        assert (
            memory.build_context_for_task("Plan", additional_context="Launch is in May")
            == "Background:\nLaunch is in May"
        )

    def test_exact_layout_and_truncation(self) -> None:
        memory = CortexMemory(enable_entity=False)
        result = "Atlas launch " + "slipped again " * 30
        memory.save_task_result("Plan Atlas", result, "Planner", importance=0.8)
        other = "Atlas vendor " + "quote pending " * 20
        memory.contextual.save(other, importance=0.3, agent_id="Planner")
        short = f"Task completed: Plan Atlas - Result: {result[:200]}"
        assert memory.build_context_for_task("Atlas launch", additional_context="BG") == "\n".join(
            [
                "Background:",
                "BG",
                "Recent context:",
                f"  • {short[:200]}",
                "",
                "Relevant knowledge:",
                f"  • {result[:200]}",
                "",
                "Related memories:",
                f"  • {other[:150]}",
            ]
        )

    def test_known_entities_section(self) -> None:
        # Each named entity's line, then its typed relations with when they held.
        memory = CortexMemory(enable_short_term=False, enable_long_term=False)
        memory.save_task_result(
            "Meet Alice Johnson.",
            "Alice Johnson joined Acme Corp in Berlin.",
            "HR",
            timestamp="2025-03-03T09:00:00",
        )
        text = memory.build_context_for_task("What does Alice Johnson do at Acme Corp?")
        assert text == "\n".join(
            [
                "Known entities:",
                "  • Alice Johnson (PERSON)",
                "  • Alice Johnson works_at Acme Corp (since 2025-03-03)",
                "  • Acme Corp (ORG)",
                "  • Acme Corp located_in Berlin (since 2025-03-03)",
                "",
                "Related memories:",
                "  • Alice Johnson joined Acme Corp in Berlin.",
            ]
        )

    def test_sections_in_order_and_each_item_once(self) -> None:
        memory = CortexMemory()
        memory.save_task_result(
            "Meet Alice Johnson.",
            "Alice Johnson leads the Atlas launch at Acme Corp in May.",
            "PM",
            0.9,
        )
        memory.save_agent_interaction("PM", "noted", "Atlas launch needs QA sign-off", 0.9)
        memory.contextual.save("Atlas launch party booked by Acme Corp", agent_id="PM")
        for n in range(6):
            memory.save_agent_interaction("PM", "chat", f"unrelated chatter {n}")
        text = memory.build_context_for_task(
            "Atlas launch at Acme Corp", agent_role="PM", additional_context="Q3 goals"
        )
        positions = [text.index(h) for h in HEADINGS]
        assert positions == sorted(positions)
        bullets = [line for line in text.split("\n") if line.startswith("  • ")]
        assert len(bullets) == len(set(bullets)), text
        assert "Atlas launch party booked by Acme Corp" in text
        assert "  • Acme Corp (ORG)" in text

    def test_agent_role_filters_every_section(self) -> None:
        memory = CortexMemory(enable_entity=False)
        memory.save_task_result("Atlas budget", "Atlas budget approved", "Finance", 0.9)
        memory.save_task_result("Atlas design", "Atlas design approved", "Design", 0.9)
        memory.contextual.save("Atlas budget memo drafted", agent_id="Finance")
        memory.contextual.save("Atlas design memo drafted", agent_id="Design")
        text = memory.build_context_for_task("Atlas approved memo", agent_role="Finance")
        assert "budget" in text
        assert "design" not in text.lower()
        assert "Atlas budget memo drafted" in text
        unfiltered = memory.build_context_for_task("Atlas approved memo")
        assert "design" in unfiltered

    def test_nothing_relevant_to_a_fresh_task(self) -> None:
        memory = CortexMemory(enable_short_term=False)
        memory.save_task_result("Bake bread", "The sourdough rose well", "Baker", 0.9)
        assert memory.build_context_for_task("Kubernetes cluster upgrade") == ""


# ---------------------------------------------------------------------------- reading
class TestReading:
    def test_agent_history_order_and_limit(self) -> None:
        memory = CortexMemory(short_term_capacity=2)
        memory.save_agent_interaction("Dev", "a", "first", importance=0.9)
        memory.save_agent_interaction("Dev", "a", "second", importance=0.8)
        memory.save_agent_interaction("Ops", "a", "ops note", importance=0.9)
        memory.save_agent_interaction("Dev", "a", "third")
        # short-term now holds: "ops note", "third"; long-term: first, second, ops note.
        assert memory.get_agent_history("Dev") == [
            "[Dev] a: third",
            "[Dev] a: second",
            "[Dev] a: first",
        ]
        assert memory.get_agent_history("Dev", limit=2) == ["[Dev] a: third", "[Dev] a: second"]
        assert memory.get_agent_history("Nobody") == []

    def test_summary(self) -> None:
        memory = CortexMemory()
        assert memory.get_summary() == "No recent memories.\n\nNo long-term memories available."
        memory.save_task_result(
            "Meet Alice Johnson.", "Alice Johnson joined Acme Corp in Berlin.", "HR", 0.9
        )
        assert memory.get_summary() == "\n".join(
            [
                "Recent activity:",
                "  [HR]: Task completed: Meet Alice Johnson. - Result: "
                "Alice Johnson joined Acme Corp in Berlin.",
                "",
                "Long-term memory summary:",
                "",
                "Hr:",
                "  • Alice Johnson joined Acme Corp in Berlin.",
                "",
                "Tracking 3 entities",
            ]
        )

    def test_user_context(self) -> None:
        assert CortexMemory().get_user_context("alice") == ""
        memory = CortexMemory(enable_user=True)
        assert memory.user_memory is not None
        memory.user_memory.save_memory("alice", "Alice prefers concise answers")
        memory.user_memory.save_memory("bob", "Bob prefers long essays")
        context = memory.get_user_context("alice")
        assert "Alice prefers concise answers" in context
        assert "Bob" not in context
        assert "'response_style': 'balanced'" in context


class TestReset:
    def test_reset_short_term(self) -> None:
        memory = CortexMemory()
        memory.save_task_result("Plan", "Plan done", "PM", 0.9)
        memory.reset_short_term()
        assert len(memory.short_term) == 0  # type: ignore[arg-type]
        assert len(memory.long_term) == 1  # type: ignore[arg-type]
        assert len(memory.contextual) == 1 and len(memory.entity_memory) == 1  # type: ignore[arg-type]

    def test_reset_all_in_memory(self) -> None:
        memory = CortexMemory(enable_user=True)
        memory.save_task_result("Meet Alice Johnson.", "Alice Johnson joined Acme Corp.", "HR", 0.9)
        memory.save_cortex_decision("Hire", "Need staff")
        memory.entity_memory.add_relation("Carol Diaz", "mentors", "Dan Evans")  # type: ignore[union-attr]
        assert memory.user_memory is not None
        memory.user_memory.save_memory("u1", "Bob Stone likes Initech")
        memory.contextual.push_context("task", "hiring")
        memory.reset_all()
        for tier in (memory.short_term, memory.long_term, memory.entity_memory, memory.contextual):
            assert len(tier) == 0  # type: ignore[arg-type]
        assert memory.contextual.get_current_context() is None
        assert len(memory.entity_memory.graph) == 0  # type: ignore[union-attr]
        assert memory.entity_memory.entities == {}  # type: ignore[union-attr]
        assert memory.entity_memory.relationships == {}  # type: ignore[union-attr]
        assert memory.user_memory.search_user_memory("u1", "Initech") == []
        assert memory.build_context_for_task("Alice Johnson Acme Corp Initech") == ""
