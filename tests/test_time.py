"""Time through the facade (issue 16): event times on every save, first/last seen, validity
intervals, ``as_of``, history saved out of order, and validity in every answer.

Real spaCy, real SQLite files in temporary directories.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from graphmem import (
    ContextualMemory,
    CortexMemory,
    EntityMemory,
    LongTermMemory,
    MemoryItem,
    ShortTermMemory,
    UserMemory,
)
from graphmem.graph.knowledge_graph import Edge, KnowledgeGraph
from graphmem.index.sql_graph import SQLGraph
from graphmem.store.engine import SQLITE_MODULE as sqlite3  # the SQLite graphmem runs on
from graphmem.viz import render_graph

HIRE = "Samir Haddad joined Kestrel Automation as CTO."
DEPARTURE = "Samir Haddad left Kestrel Automation."
MOVE = "Samir Haddad joined Lumen Robotics."
JOINED, LEFT, MOVED = (
    "2025-03-03T09:00:00+00:00",
    "2025-04-21T10:00:00+00:00",
    "2025-06-02T08:30:00+00:00",
)


@pytest.fixture(autouse=True)
def utc_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Naive times are read on the local clock: these tests run on a UTC one."""
    with local_clock(monkeypatch, "UTC"):
        yield


@contextmanager
def local_clock(monkeypatch: pytest.MonkeyPatch, zone: str) -> Iterator[None]:
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        yield
    finally:
        monkeypatch.undo()
        time.tzset()


def save(memory: CortexMemory, result: str, when: Any) -> None:
    memory.save_task_result("Record the change", result, "HR Agent", timestamp=when)


def typed(kg: KnowledgeGraph | EntityMemory) -> dict[tuple[str, str, str], Edge]:
    """(subject, predicate, object) -> edge, typed relations only."""
    return {(e.subject, e.predicate, e.object): e for e in kg.find() if e.predicate != "co_occurs"}


def interval(edge: Edge) -> tuple[str | None, str | None]:
    return edge.valid_from, edge.valid_to


WORKS = ("Samir Haddad", "works_at", "Kestrel Automation")
CTO = ("Samir Haddad", "cto_of", "Kestrel Automation")
WORKS_LUMEN = ("Samir Haddad", "works_at", "Lumen Robotics")


# ------------------------------------------------------------------------------ as_of
@pytest.fixture(scope="module")
def joined_and_left() -> CortexMemory:
    memory = CortexMemory()
    save(memory, HIRE, JOINED)
    save(memory, DEPARTURE, LEFT)
    return memory


class TestAsOf:
    @pytest.fixture
    def memory(self, joined_and_left: CortexMemory) -> CortexMemory:
        return joined_and_left

    def test_a_relation_valid_then_and_closed_later_is_there(self, memory: CortexMemory) -> None:
        # The case: works_at 2025-03-03..04-21 was missing at 04-01.
        at = memory.entity_memory.as_of("2025-04-01")
        assert WORKS in typed(at) and CTO in typed(at)

    @pytest.mark.parametrize(
        ("when", "present"),
        [
            ("2025-03-03T08:59:59+00:00", False),
            (JOINED, True),  # t == valid_from: included
            (datetime(2025, 3, 3, 9, 0), True),
            ("2025-04-21T09:59:59+00:00", True),
            (LEFT, False),  # t == valid_to: excluded
            (date(2025, 4, 22), False),
        ],
    )
    def test_boundaries(self, memory: CortexMemory, when: Any, present: bool) -> None:
        assert (WORKS in typed(memory.entity_memory.as_of(when))) is present

    def test_a_day_includes_what_began_at_its_midnight(self) -> None:
        memory = CortexMemory()
        save(memory, HIRE, "2025-03-03")
        assert WORKS in typed(memory.entity_memory.as_of("2025-03-03"))
        assert WORKS not in typed(memory.entity_memory.as_of("2025-03-02T23:59"))

    def test_entities_are_there_from_their_first_mention(self, memory: CortexMemory) -> None:
        before = memory.entity_memory.as_of("2025-03-02")
        assert "Samir Haddad" not in before and len(before) == 0
        assert "Samir Haddad" in memory.entity_memory.as_of(JOINED)

    def test_events_hold_from_their_time(self, memory: CortexMemory) -> None:
        left = ("Samir Haddad", "left", "Kestrel Automation")
        assert left not in typed(memory.entity_memory.as_of("2025-04-20"))
        assert left in typed(memory.entity_memory.as_of("2025-12-31"))

    @pytest.mark.parametrize("bad", ["yesterday", "2025-13-01"])
    def test_a_bad_time_is_refused(self, memory: CortexMemory, bad: str) -> None:
        with pytest.raises(ValueError, match="when must be a datetime or an ISO 8601 string"):
            memory.entity_memory.as_of(bad)

    def test_a_time_of_another_type_is_refused(self, memory: CortexMemory) -> None:
        with pytest.raises(TypeError, match="when must be"):
            memory.entity_memory.as_of(20250401)  # type: ignore[arg-type]


# -------------------------------------------------------------------- first/last seen
class TestFirstSeen:
    def test_first_seen_is_the_first_mention_whenever_it_was_saved(self) -> None:
        memory = CortexMemory()
        save(memory, DEPARTURE, LEFT)
        save(
            memory, "Samir Haddad visited Kestrel Automation in Oslo.", "2025-05-05T12:00:00+00:00"
        )
        save(memory, HIRE, JOINED)  # the oldest, saved last
        info = memory.entity_memory.get_entity("Samir Haddad")
        assert info is not None
        assert (info.first_seen, info.last_seen) == (JOINED, "2025-05-05T12:00:00+00:00")
        oslo = memory.entity_memory.get_entity("Oslo")
        assert oslo is not None and oslo.first_seen == "2025-05-05T12:00:00+00:00"

    def test_a_relation_is_seen_from_its_first_to_its_last_evidence(self) -> None:
        memory = CortexMemory()
        save(memory, "Samir Haddad works at Kestrel Automation.", "2025-05-01T09:00:00+00:00")
        save(memory, "Samir Haddad works at Kestrel Automation.", "2025-01-10T09:00:00+00:00")
        edge = typed(memory.entity_memory)[WORKS]
        assert (edge.first_seen, edge.last_seen) == (
            "2025-01-10T09:00:00+00:00",
            "2025-05-01T09:00:00+00:00",
        )
        assert edge.valid_from == "2025-01-10T09:00:00+00:00" and edge.valid_to is None

    def test_calute_entities_view_takes_first_and_last(self) -> None:
        memory = EntityMemory()
        memory.save("Samir Haddad joined Kestrel Automation.", timestamp=LEFT)
        memory.save("Samir Haddad met Ana Ruiz.", timestamp=JOINED)
        view = memory.entities["Samir Haddad"]
        assert view["first_seen"] == datetime.fromisoformat(JOINED)
        assert view["last_seen"] == datetime.fromisoformat(LEFT)


# ------------------------------------------------------------------ out-of-order saves
class TestOutOfOrder:
    def test_a_departure_saved_before_the_joining(self) -> None:
        memory = CortexMemory()
        save(memory, DEPARTURE, LEFT)
        save(memory, HIRE, JOINED)
        found = typed(memory.entity_memory)
        assert interval(found[WORKS]) == (JOINED, LEFT)
        assert interval(found[CTO]) == (JOINED, LEFT)  # the role ends with the job
        assert WORKS in typed(memory.entity_memory.as_of("2025-04-01"))
        assert WORKS not in typed(memory.entity_memory.as_of("2025-05-01"))

    def test_a_new_employer_saved_before_the_old_one(self) -> None:
        memory = CortexMemory()
        save(memory, MOVE, MOVED)
        save(memory, "Samir Haddad joined Kestrel Automation.", JOINED)
        found = typed(memory.entity_memory)
        assert interval(found[WORKS]) == (JOINED, MOVED)
        assert interval(found[WORKS_LUMEN]) == (MOVED, None)

    def test_a_departure_recorded_between_two_jobs(self) -> None:
        memory = CortexMemory()
        save(memory, HIRE, JOINED)
        save(memory, MOVE, MOVED)
        save(memory, DEPARTURE, LEFT)  # happened between the two, saved last
        found = typed(memory.entity_memory)
        assert interval(found[WORKS]) == (JOINED, LEFT)
        assert interval(found[CTO]) == (JOINED, LEFT)
        assert interval(found[WORKS_LUMEN]) == (MOVED, None)

    def test_a_past_job_stated_before_its_start_was_saved(self) -> None:
        memory = CortexMemory()
        save(memory, "Samir Haddad previously worked at Kestrel Automation.", MOVED)
        save(memory, "Samir Haddad joined Kestrel Automation.", JOINED)
        assert interval(typed(memory.entity_memory)[WORKS]) == (JOINED, MOVED)

    def test_the_same_history_in_any_order_gives_the_same_intervals(self) -> None:
        history = [(HIRE, JOINED), (DEPARTURE, LEFT), (MOVE, MOVED)]
        results = []
        for order in (history, history[::-1], [history[1], history[2], history[0]]):
            memory = CortexMemory()
            for text, when in order:
                save(memory, text, when)
            results.append({t: interval(e) for t, e in typed(memory.entity_memory).items()})
        assert results[0] == results[1] == results[2]
        assert results[0][WORKS] == (JOINED, LEFT)


# ---------------------------------------------------------------- the event time itself
class TestEventTime:
    def test_every_stored_item_has_the_event_time(self) -> None:
        memory = CortexMemory()
        save(memory, HIRE, JOINED)
        when = datetime.fromisoformat(JOINED)
        assert memory.short_term is not None and memory.entity_memory is not None
        items = [
            *memory.short_term.get_recent(),
            *memory.entity_memory.retrieve(filters={}, limit=10),  # type: ignore[misc]
            *memory.contextual.search("Kestrel"),
        ]
        assert len(items) == 3 and {item.timestamp for item in items} == {when}

    def test_save_task_results_records_carry_their_time(self) -> None:
        memory = CortexMemory()
        memory.save_task_results(
            [
                {"task_description": "t", "result": DEPARTURE, "agent_role": "HR",
                 "timestamp": LEFT},
                {"task_description": "t", "result": HIRE, "agent_role": "HR",
                 "timestamp": datetime.fromisoformat(JOINED)},
            ]
        )  # fmt: skip
        assert interval(typed(memory.entity_memory)[WORKS]) == (JOINED, LEFT)

    @pytest.mark.parametrize(
        "save_one",
        [
            lambda when: ShortTermMemory().save("Ana met Bo.", timestamp=when),
            lambda when: LongTermMemory().save("Ana met Bo.", importance=0.9, timestamp=when),
            lambda when: EntityMemory().save("Ana met Bo.", timestamp=when),
            lambda when: ContextualMemory().save("Ana met Bo.", timestamp=when),
            lambda when: ContextualMemory().save("Ana met Bo.", importance=0.9, timestamp=when),
            lambda when: UserMemory().save_memory("u1", "Ana met Bo.", timestamp=when),
        ],
        ids=["short_term", "long_term", "entity", "contextual", "contextual_long", "user"],
    )
    def test_every_tier_takes_a_timestamp(self, save_one: Any) -> None:
        item = save_one("2024-11-05T16:20:00+00:00")
        assert item.timestamp == datetime(2024, 11, 5, 16, 20, tzinfo=UTC)
        assert "timestamp" not in item.metadata

    def test_the_user_graph_is_dated_too(self) -> None:
        users = UserMemory()
        users.save_memory("u1", "Samir Haddad joined Kestrel Automation.", timestamp=JOINED)
        info = users._entities("u1").get_entity("Samir Haddad")
        assert info is not None and info.first_seen == JOINED

    def test_interactions_and_decisions_take_a_timestamp(self) -> None:
        memory = CortexMemory()
        memory.save_agent_interaction("HR", "noted", "Ana met Bo.", 0.9, timestamp=JOINED)
        memory.save_cortex_decision("Hire Ana", "budget", timestamp=LEFT)
        assert memory.long_term is not None
        stamps = sorted(item.timestamp for item in memory.long_term.search("", limit=10))
        assert stamps == [datetime.fromisoformat(JOINED), datetime.fromisoformat(LEFT)]

    def test_an_aware_time_is_kept_in_utc(self) -> None:
        aware = datetime(2025, 3, 3, 9, 0, tzinfo=timezone(timedelta(hours=2)))
        item = EntityMemory().save("Ana met Bo.", timestamp=aware)
        assert item.timestamp.tzinfo is UTC
        assert item.timestamp == datetime(2025, 3, 3, 7, 0, tzinfo=UTC)

    @pytest.mark.parametrize(
        ("bad", "error", "message"),
        [
            ("last Tuesday", ValueError, "timestamp must be a datetime or an ISO 8601 string"),
            ("2025-02-30", ValueError, "timestamp must be a datetime or an ISO 8601 string"),
            (1735689600, TypeError, "timestamp must be a datetime, a date or an ISO 8601 string"),
            (
                True,
                TypeError,
                "timestamp must be a datetime, a date or an ISO 8601 string, got bool",
            ),
        ],
    )
    def test_a_bad_timestamp_stores_nothing(self, bad: Any, error: type, message: str) -> None:
        memory = CortexMemory()
        with pytest.raises(error, match=message):
            memory.save_task_result("Record", HIRE, "HR", timestamp=bad)
        with pytest.raises(error, match=f"results\\[1\\]\\.{message}"):
            memory.save_task_results(
                [
                    {"task_description": "t", "result": HIRE, "agent_role": "HR"},
                    {"task_description": "t", "result": DEPARTURE, "agent_role": "HR",
                     "timestamp": bad},
                ]
            )  # fmt: skip
        with pytest.raises(error, match=message):
            memory.entity_memory.save(HIRE, timestamp=bad)  # type: ignore[union-attr]
        assert memory.short_term is not None and len(memory.short_term) == 0
        assert len(memory.contextual) == 0 and len(memory.entity_memory.graph) == 0  # type: ignore[union-attr]


# ----------------------------------------------------------------- recency and eviction
class TestRecency:
    def test_backfilled_history_never_evicts_fresh_items(self) -> None:
        memory = ShortTermMemory(capacity=3)
        fresh = [memory.save(f"Fresh note {n}.") for n in range(2)]
        for n in range(5):  # a year ago, saved now
            memory.save(f"Old note {n}.", timestamp=datetime(2025, 1, 1 + n))
        kept = [item.content for item in memory.get_recent(n=10)]
        assert kept == ["Old note 4.", *(item.content for item in fresh)]

    def test_recent_items_are_the_latest_events(self) -> None:
        memory = CortexMemory()
        save(memory, MOVE, MOVED)
        save(memory, HIRE, JOINED)
        assert memory.short_term is not None
        recent = [item.timestamp for item in memory.short_term.get_recent()]
        assert recent == [datetime.fromisoformat(JOINED), datetime.fromisoformat(MOVED)]

    def test_long_term_evicts_the_oldest_history_first(self) -> None:
        memory = LongTermMemory(max_items=10)
        fresh = memory.save("A fresh and important note.", importance=0.5)
        for n in range(12):
            memory.save(f"History note {n}.", importance=0.5, timestamp=datetime(2020, 1, 1 + n))
        assert memory.retrieve(fresh.memory_id) is not None


# --------------------------------------------------------------------------- persistence
def test_times_survive_close_and_reopen(tmp_path: Path, write_memory_on: None) -> None:
    path = str(tmp_path / "memory.db")
    memory = CortexMemory(persistence_path=path)
    save(memory, MOVE, MOVED)
    save(memory, DEPARTURE, LEFT)
    save(memory, HIRE, JOINED)
    before = {
        t: (e.first_seen, e.last_seen, *interval(e)) for t, e in typed(memory.entity_memory).items()
    }
    entity = memory.entity_memory.get_entity("Samir Haddad")  # type: ignore[union-attr]
    assert memory.storage is not None
    memory.storage.close()

    reopened = CortexMemory(persistence_path=path)
    assert reopened.entity_memory is not None
    after = {
        t: (e.first_seen, e.last_seen, *interval(e))
        for t, e in typed(reopened.entity_memory).items()
    }
    assert after == before and after[WORKS][2:] == (JOINED, LEFT)
    assert reopened.entity_memory.get_entity("Samir Haddad") == entity
    assert entity is not None and (entity.first_seen, entity.last_seen) == (JOINED, MOVED)
    assert WORKS in typed(reopened.entity_memory.as_of("2025-04-01"))
    assert reopened.short_term is not None
    assert [i.timestamp.isoformat() for i in reopened.short_term.get_recent()] == [
        JOINED,
        LEFT,
        MOVED,
    ]
    # SQL-backed relationship queries see the same intervals.
    [path_found] = SQLGraph(reopened._space.database, "").paths("Samir Haddad", "Lumen Robotics")
    assert interval(path_found[0].edge) == (MOVED, None)
    reopened.storage.close()  # type: ignore[union-attr]


# ---------------------------------------------------------------------- in every answer
@pytest.fixture(scope="module")
def three_changes() -> CortexMemory:
    memory = CortexMemory(enable_short_term=False, enable_long_term=False)
    save(memory, DEPARTURE, LEFT)
    save(memory, HIRE, JOINED)
    save(memory, MOVE, MOVED)
    return memory


class TestAnswers:
    @pytest.fixture
    def memory(self, three_changes: CortexMemory) -> CortexMemory:
        return three_changes

    def test_the_context_says_when_each_relation_held(self, memory: CortexMemory) -> None:
        text = memory.build_context_for_task("Did Samir Haddad work at Kestrel Automation?")
        known = text.split("Known entities:\n")[1].split("\n\n")[0].splitlines()
        # What holds first, the newest first; each relation once.
        assert known[:3] == [
            "  • Samir Haddad (PERSON)",
            "  • Samir Haddad works_at Lumen Robotics (since 2025-06-02)",
            "  • Samir Haddad left Kestrel Automation (on 2025-04-21)",
        ]
        kestrel = known.index("  • Kestrel Automation (ORG)")
        assert set(known[3:kestrel] + known[kestrel + 1 :]) == {
            "  • Samir Haddad works_at Kestrel Automation (2025-03-03 to 2025-04-21)",
            "  • Samir Haddad cto_of Kestrel Automation (2025-03-03 to 2025-04-21)",
        }

    def test_an_event_has_its_day(self, memory: CortexMemory) -> None:
        edges = typed(memory.entity_memory)
        assert edges[("Samir Haddad", "left", "Kestrel Automation")].validity == "on 2025-04-21"

    def test_the_page_draws_ended_relations_apart(
        self, memory: CortexMemory, tmp_path: Path
    ) -> None:
        page = tmp_path / "graph.html"
        render_graph(memory.entity_memory.graph.graph, page)  # type: ignore[union-attr]
        found = re.search(
            r'<script type="application/json" id="graphmem-data">(.*?)</script>', page.read_text()
        )
        assert found
        data = json.loads(found.group(1))
        names = {node["id"]: node["name"] for node in data["nodes"]}
        edges = {(names[e["from"]], names[e["to"]]): e for e in data["edges"] if e["typed"]}
        # One edge per pair and direction, holding each of the pair's relations.
        kestrel = edges[("Samir Haddad", "Kestrel Automation")]
        lumen = edges[("Samir Haddad", "Lumen Robotics")]
        ended = {r["predicate"]: r for r in kestrel["relations"]}["works_at"]
        (current,) = lumen["relations"]
        assert ended["ended"] and ended["validity"] == "2025-03-03 to 2025-04-21"
        assert current["predicate"] == "works_at" and not current["ended"]
        assert current["validity"] == "since 2025-06-02"
        assert kestrel["ended"] is all(r["ended"] for r in kestrel["relations"])
        assert lumen["dashes"] is False and not lumen["ended"]


# ------------------------------------------------------------------------- the command line
def test_ingest_dates_records_by_the_time_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from graphmem.cli import main

    source = tmp_path / "history.csv"
    source.write_text(
        "content,date\n"
        f"{DEPARTURE},2025-04-21T10:00:00\n"  # saved first, happened later
        f"{HIRE},2025-03-03T09:00:00\n",
        encoding="utf-8",
    )
    db = str(tmp_path / "cli.db")
    assert main(["--db", db, "ingest", str(source), "--time-field", "date", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "relations", "Samir Haddad", "--predicate", "works_at"]) == 0
    text = capsys.readouterr().out
    assert (
        "Samir Haddad --works_at--> Kestrel Automation (ended)  "
        "[support 1, 2025-03-03 to 2025-04-21]" in text
    )
    assert main(["--db", db, "relations", "Samir Haddad", "--json"]) == 0
    edges = {(e["predicate"], e["object"]): e for e in json.loads(capsys.readouterr().out)}
    works = edges[("works_at", "Kestrel Automation")]
    assert (works["valid_from"], works["valid_to"]) == (JOINED, LEFT)
    assert works["validity"] == "2025-03-03 to 2025-04-21"
    assert edges[("left", "Kestrel Automation")]["validity"] == "on 2025-04-21"


@pytest.mark.parametrize(
    ("name", "body", "args", "fragment"),
    [
        ("notes.txt", f"{HIRE}\n", ["--time-field", "date"], "a time field needs jsonl or csv"),
        ("h.csv", f"content,date\n{HIRE},soon\n", ["--time-field", "date"], "date 'soon' is not"),
        ("h.jsonl", f'{{"content": "{HIRE}", "when": 3}}\n', ["--time-field", "when"],
         "when must be an ISO 8601 string"),
        ("h.jsonl", f'{{"content": "{HIRE}", "timestamp": "2025-03-03"}}\n',
         ["--time-field", "when"], "unknown field(s) timestamp"),
        ("h.csv", f"content\n{HIRE}\n", ["--time-field", "agent_id"], "cannot be 'agent_id'"),
    ],
)  # fmt: skip
def test_a_bad_time_field_is_one_line_error(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    body: str,
    args: list[str],
    fragment: str,
) -> None:
    from graphmem.cli import main

    source = tmp_path / name
    source.write_text(body, encoding="utf-8")
    db = tmp_path / "new.db"
    assert main(["--db", str(db), "ingest", str(source), *args]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("graphmem: error: ") and fragment in err[0]
    assert not db.exists()


# ------------------------------------------------------------- one clock: aware UTC (issue 19)
class TestUtcBoundary:
    """Every time given to graphmem is timezone-aware UTC from where it enters; naive times
    are read on the local clock; naive texts in files of older versions still read."""

    def test_mixed_naive_and_aware_saves_read_back(self) -> None:
        lt = LongTermMemory()
        lt.save("Dana joined Acme.", timestamp=datetime(2026, 5, 5, tzinfo=UTC))
        lt.save("Dana left Acme.", timestamp=datetime(2026, 6, 5))
        lt.save("Dana visited Oslo.", timestamp="2026-07-05T10:00:00+02:00")
        assert "Dana joined Acme." in lt.consolidate()
        stamps = sorted(i.timestamp for i in lt.search("", limit=10))
        assert stamps == [
            datetime(2026, 5, 5, tzinfo=UTC),
            datetime(2026, 6, 5, tzinfo=UTC),
            datetime(2026, 7, 5, 8, tzinfo=UTC),
        ]

    def test_an_update_to_an_aware_time_keeps_reads_working(self) -> None:
        lt = LongTermMemory()
        lt.save("Dana joined Acme.", timestamp=datetime(2026, 5, 5))
        item = lt.save("Dana left Acme.", timestamp=datetime(2026, 6, 5))
        aware = datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=-5)))
        assert lt.update(item.memory_id, {"timestamp": aware, "last_accessed": "2026-01-02"})
        summary = lt.consolidate()  # newest first
        assert summary.index("Dana joined") < summary.index("Dana left")
        stored = lt.retrieve(item.memory_id)
        assert isinstance(stored, MemoryItem)
        assert stored.timestamp == datetime(2026, 1, 1, 5, tzinfo=UTC)
        assert stored.last_accessed is not None and stored.last_accessed.tzinfo is UTC

    def test_contextual_listing_and_summary_with_mixed_times(self) -> None:
        memory = ContextualMemory()
        memory.save("Dana joined Acme.", timestamp=datetime(2026, 5, 5, tzinfo=UTC))
        memory.save("Dana left Acme.", timestamp="2026-06-05")
        memory.save("Dana met Bo.", importance=0.9, timestamp=datetime(2026, 4, 1))
        listed = [i.content for i in memory.search("")]
        assert listed == ["Dana left Acme.", "Dana joined Acme.", "Dana met Bo."]
        cortex = CortexMemory()
        cortex.save_task_result("t", "Dana joined Acme.", "HR", timestamp=datetime(2026, 5, 5))
        cortex.save_task_result(
            "t", "Dana left Acme.", "HR", timestamp=datetime(2026, 6, 5, tzinfo=UTC)
        )
        summary = cortex.get_summary()
        assert isinstance(summary, str) and "Dana left Acme." in str(cortex.search("Dana left"))

    def test_naive_times_are_read_on_the_local_clock(self, monkeypatch: pytest.MonkeyPatch) -> None:
        with local_clock(monkeypatch, "Asia/Kolkata"):  # UTC+05:30, no daylight saving
            item = LongTermMemory().save("Ana met Bo.", timestamp="2025-03-03T09:00:00")
            utc = LongTermMemory().save("Ana met Bo.", timestamp="2025-03-03T09:00:00Z")
        assert item.timestamp == datetime(2025, 3, 3, 3, 30, tzinfo=UTC)
        assert utc.timestamp == datetime(2025, 3, 3, 9, 0, tzinfo=UTC)

    def test_items_hold_utc_however_they_are_made(self) -> None:
        assert MemoryItem("x").timestamp.tzinfo is UTC
        item = MemoryItem(
            "x", timestamp=datetime(2025, 1, 1, 12, tzinfo=timezone(timedelta(hours=1)))
        )
        assert item.timestamp == datetime(2025, 1, 1, 11, tzinfo=UTC)
        again = MemoryItem.from_dict({"content": "x", "timestamp": "2025-01-01T12:00:00"})
        assert again.timestamp == datetime(2025, 1, 1, 12, tzinfo=UTC)
        with pytest.raises(ValueError, match="timestamp must be a datetime or an ISO 8601"):
            MemoryItem.from_dict({"content": "x", "timestamp": "never"})

    def test_one_stored_format(self, tmp_path: Path, write_memory_on: None) -> None:
        path = str(tmp_path / "m.db")
        memory = CortexMemory(persistence_path=path)
        save(memory, HIRE, datetime(2025, 3, 3, 9, 0, tzinfo=timezone(timedelta(hours=2))))
        save(memory, DEPARTURE, "2025-04-21T10:00:00")
        memory.search("Samir")  # writes access times
        assert memory.storage is not None
        memory.storage.close()
        con = sqlite3.connect(path)
        stamps = [
            *(r[0] for r in con.execute("SELECT created_at FROM memories")),
            *(r[0] for r in con.execute("SELECT last_accessed FROM memories") if r[0]),
            *(r[0] for r in con.execute("SELECT first_seen FROM entities")),
            *(v for r in con.execute("SELECT valid_from, valid_to FROM relations") for v in r if v),
        ]
        con.close()
        assert stamps and all(s.endswith("+00:00") for s in stamps), stamps
        assert "2025-03-03T07:00:00+00:00" in stamps

    def test_files_with_naive_times_still_read(self, tmp_path: Path, write_memory_on: None) -> None:
        path = str(tmp_path / "old.db")
        memory = CortexMemory(persistence_path=path)
        for result, when in ((HIRE, JOINED), (DEPARTURE, LEFT)):
            memory.save_task_result("Record", result, "HR Agent", importance=0.9, timestamp=when)
        assert memory.storage is not None
        memory.storage.close()
        con = sqlite3.connect(path)  # what an older graphmem wrote: naive local texts
        for table, columns in {
            "memories": ("created_at", "last_accessed"),
            "entities": ("first_seen", "last_seen"),
            "relations": ("first_seen", "last_seen", "valid_from", "valid_to"),
        }.items():
            for column in columns:
                con.execute(f"UPDATE {table} SET {column} = replace({column}, '+00:00', '')")  # noqa: S608 (fixed names)
        con.commit()
        con.close()
        reopened = CortexMemory(persistence_path=path)
        assert reopened.long_term is not None and reopened.contextual is not None
        assert "Samir Haddad" in reopened.long_term.consolidate()
        assert reopened.get_summary()
        assert reopened.contextual.search("")
        reopened.save_task_result("Record", MOVE, "HR Agent", timestamp=MOVED)
        stamps = [i.timestamp for i in reopened.long_term.search("", limit=10)]
        assert all(s.tzinfo is UTC for s in stamps)
        assert datetime.fromisoformat(JOINED) in stamps
        assert reopened.entity_memory is not None
        assert WORKS in typed(reopened.entity_memory.as_of("2025-04-01"))
        assert WORKS not in typed(reopened.entity_memory.as_of("2025-05-01"))
        assert reopened.build_context_for_task("Where does Samir Haddad work?")


def test_a_time_in_filters_is_compared_in_utc(monkeypatch: pytest.MonkeyPatch) -> None:
    memory = LongTermMemory()
    with local_clock(monkeypatch, "Asia/Kolkata"):
        memory.save("Ana met Bo.", timestamp="2025-03-03T09:00:00")  # 03:30 UTC
        found = memory.retrieve(filters={"timestamp": datetime(2025, 3, 3, 9, 0)})
    assert isinstance(found, list) and [i.content for i in found] == ["Ana met Bo."]
    aware = memory.retrieve(filters={"timestamp": datetime(2025, 3, 3, 3, 30, tzinfo=UTC)})
    assert isinstance(aware, list) and len(aware) == 1
