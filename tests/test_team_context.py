"""Contexts for a team of agents sharing one memory (tests/data/team_corpus.json: four roles,
52 notes, 10 tasks whose answers another role saved): the team knowledge scope brings the
answers in, the default keeps Calute's rule (an agent's own memories only)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphmem import CortexMemory
from graphmem.errors import InvalidArgumentError

CORPUS = json.loads((Path(__file__).parent / "data" / "team_corpus.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def team() -> tuple[CortexMemory, dict[str, str]]:
    memory = CortexMemory()
    for note in CORPUS["notes"]:
        memory.save_task_result(
            note["task"], note["content"], note["agent_role"], note["importance"]
        )
    return memory, {note["id"]: note["content"] for note in CORPUS["notes"]}


def _holds(text: str, contents: dict[str, str], task: dict[str, Any]) -> bool:
    return all(contents[answer][:150] in text for answer in task["answers"])


def test_the_corpus_is_what_it_says() -> None:
    roles = {note["agent_role"] for note in CORPUS["notes"]}
    assert len(roles) == 4 and len(CORPUS["notes"]) >= 50 and len(CORPUS["tasks"]) == 10
    author = {note["id"]: note["agent_role"] for note in CORPUS["notes"]}
    for task in CORPUS["tasks"]:
        assert all(author[a] != task["agent_role"] for a in task["answers"]), task


def test_team_scope_holds_the_answers_another_role_saved(
    team: tuple[CortexMemory, dict[str, str]],
) -> None:
    memory, contents = team
    held = [
        _holds(
            memory.build_context_for_task(
                task["task"], agent_role=task["agent_role"], knowledge_scope="team"
            ),
            contents,
            task,
        )
        for task in CORPUS["tasks"]
    ]
    assert sum(held) >= 9, held


def test_the_default_is_calute_s_own_memories_only(
    team: tuple[CortexMemory, dict[str, str]],
) -> None:
    memory, contents = team
    for task in CORPUS["tasks"]:
        default = memory.build_context_for_task(task["task"], agent_role=task["agent_role"])
        assert default == memory.build_context_for_task(
            task["task"], agent_role=task["agent_role"], knowledge_scope="agent"
        )
        assert not _holds(default, contents, task), task["task"]
        for line in default.splitlines():
            if line.startswith("  • ") and "Related memories:" in default:
                shown = line[4:]
                owners = {
                    n["agent_role"] for n in CORPUS["notes"] if n["content"].startswith(shown[:60])
                }
                assert not owners or task["agent_role"] in owners, (task["task"], line)


def test_the_facade_s_scope_is_the_default_of_each_call() -> None:
    memory = CortexMemory(knowledge_scope="team")
    memory.save_task_result(
        "Scan", "Kestrel Analytics lost Brightwater Shipping.", "Research Agent"
    )
    asked = "What did Kestrel Analytics lose?"
    assert "Brightwater" in memory.build_context_for_task(asked, agent_role="Sales Agent")
    own = memory.build_context_for_task(asked, agent_role="Sales Agent", knowledge_scope="agent")
    assert "Brightwater" not in own
    with pytest.raises(
        InvalidArgumentError, match="knowledge_scope must be one of 'agent', 'team'"
    ):
        memory.build_context_for_task(asked, knowledge_scope="everyone")
    with pytest.raises(InvalidArgumentError, match="knowledge_scope"):
        CortexMemory(knowledge_scope="all")


def test_each_save_is_shown_once_across_sections(
    team: tuple[CortexMemory, dict[str, str]],
) -> None:
    """A task result lands in several tiers ("Task completed: ..." in short-term, the
    result in long-term and contextual memory): a context shows it once."""
    memory, contents = team
    shown_somewhere = 0
    for scope in ("agent", "team"):
        for task in CORPUS["tasks"]:
            text = memory.build_context_for_task(
                task["task"], agent_role=task["agent_role"], knowledge_scope=scope
            )
            bullets = [line[4:] for line in text.splitlines() if line.startswith("  • ")]
            for content in contents.values():
                times = sum(1 for bullet in bullets if content[:60] in bullet)
                assert times <= 1, (scope, task["task"], content, text)
                shown_somewhere += times
    assert shown_somewhere > 100  # the contexts do show the corpus
