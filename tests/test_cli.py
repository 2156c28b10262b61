"""The ``graphmem`` command against real SQLite files.

Commands run in this process through ``graphmem.cli.main(argv)`` (the console script's entry
point) with their output captured (``run``, see ``tests/_cli.py``); the tests whose point is
the process (a real argv and exit status, a closed pipe, what ``--help`` imports, a file size
limit) run the installed console script as a subprocess (``run_process``).

One small corpus is ingested once per session (``shared_db``); the reading commands query
that file. Tests that write make their own database in ``tmp_path``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from _cli import run_cli as run

from graphmem import SQLiteStorage
from graphmem.cli import COMMANDS, build_parser, default_db_path, main, read_records
from graphmem.store.dump import namespace_counts

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "cli.md"
#: The console script pip installed beside this interpreter (entry point graphmem.cli:main).
SCRIPT = Path(sys.executable).parent / "graphmem"

CORPUS = [
    {
        "content": "Grace Liu works at Harbor Analytics.",
        "agent_id": "Sales Agent",
        "timestamp": "2026-03-10T09:00:00+00:00",
        "importance": 0.6,
    },
    {
        "content": "Daniel Brooks is the CEO of Harbor Analytics.",
        "agent_id": "Research Analyst",
        "timestamp": "2026-03-11T09:00:00+00:00",
    },
    {
        "content": "Dana Whitfield works at Northwind Systems in Boston.",
        "agent_id": "Data Engineer",
        "timestamp": "2026-03-12T09:00:00+00:00",
    },
    {
        "content": "Dana Whitfield joined Harbor Analytics as head of data.",
        "agent_id": "Research Analyst",
        "timestamp": "2026-05-05T09:00:00+00:00",
        "importance": 0.8,
        "metadata": {"source": "crm", "project": "compass"},
    },
    {
        "content": "Priya Nair met Tom Becker in Berlin to kick off the Atlas rollout.",
        "agent_id": "Project Manager",
        "timestamp": "2026-03-04T09:00:00+00:00",
        "conversation_id": "conv-atlas-kickoff",
    },
    {
        "content": "Tom Becker works at Aurex Logistics.",
        "agent_id": "Research Analyst",
        "timestamp": "2026-03-04T10:00:00+00:00",
    },
    {
        "content": "The Atlas launch date moved to May 19 because of single sign-on.",
        "agent_id": "Project Manager",
        "timestamp": "2026-04-01T09:00:00+00:00",
        "task_id": "task-7",
        "memory_type": "decision",
    },
    {
        "content": "Re-ran the nightly job; all checks green.",
        "agent_id": "QA Agent",
        "timestamp": "2026-04-02T09:00:00+00:00",
        "importance": 0.2,
    },
]


def run_process(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``graphmem ARGS`` the way a user does: the installed console script, a process."""
    environment = dict(os.environ)
    environment.pop("GRAPHMEM_DB", None)
    environment.update(env or {})
    return subprocess.run(
        [str(SCRIPT), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("graphmem: error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture(scope="session")
def shared_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cli")
    corpus = folder / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(row) for row in CORPUS) + "\n", encoding="utf-8")
    db = folder / "shared.db"
    result = run("--db", str(db), "ingest", str(corpus), "--no-progress")
    assert result.returncode == 0, result.stderr
    assert f"Ingested {len(CORPUS)} memories" in result.stdout
    return db


# ---------------------------------------------------------------------- help and docs
def test_every_subcommand_has_help_examples_and_docs() -> None:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command").choices
    docs = DOCS.read_text(encoding="utf-8")
    assert set(subparsers) == {c.name for c in COMMANDS}
    for command in COMMANDS:
        text = subparsers[command.name].format_help()
        assert command.summary.strip(), command.name
        assert "examples:" in text and f"graphmem {command.name}" in text, command.name
        for action in subparsers[command.name]._actions:
            if action.option_strings and action.dest not in ("help", "db", "user"):
                assert action.help, f"{command.name} {action.option_strings} has no help"
        assert f"## graphmem {command.name}" in docs, f"{command.name} missing from docs/cli.md"


def test_help_runs_for_each_subcommand() -> None:
    names = [c.name for c in COMMANDS]
    code = (
        "import contextlib, io, sys\n"
        "from graphmem.cli import main\n"
        f"for name in {names!r}:\n"
        "    out = io.StringIO()\n"
        "    with contextlib.redirect_stdout(out):\n"
        "        try:\n"
        "            main([name, '--help'])\n"
        "        except SystemExit as exc:\n"
        "            assert exc.code == 0, name\n"
        "    assert 'usage: graphmem ' + name in out.getvalue(), name\n"
        "    print(name, 'ok')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [w for n in names for w in (n, "ok")]


def test_top_level_help_lists_commands_and_default_db() -> None:
    result = run("--help")
    assert result.returncode == 0
    for command in COMMANDS:
        assert command.name in result.stdout
    assert "GRAPHMEM_DB" in result.stdout and "XDG_DATA_HOME" in result.stdout


def test_default_db_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GRAPHMEM_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_db_path() == tmp_path / "xdg" / "graphmem" / "graphmem.db"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_db_path() == tmp_path / "home" / ".local" / "share" / "graphmem" / "graphmem.db"
    monkeypatch.setenv("GRAPHMEM_DB", str(tmp_path / "env.db"))
    assert default_db_path() == tmp_path / "env.db"


# ---------------------------------------------------------------------- input formats
def test_read_records_formats(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("Alice met Bob\n\n   \nBob joined Acme\n", encoding="utf-8")
    assert [r["content"] for r in read_records(str(text))] == ["Alice met Bob", "Bob joined Acme"]
    table = tmp_path / "rows.csv"
    table.write_text(
        'content,agent_id,importance,metadata,timestamp\n"Alice, again",bot,0.9,"{""k"": 1}",'
        "2026-01-02T03:04:05\n",
        encoding="utf-8",
    )
    (row,) = read_records(str(table), user="u1")
    assert row["content"] == "Alice, again" and row["agent_id"] == "bot"
    assert row["importance"] == 0.9 and row["metadata"] == {"k": 1} and row["user_id"] == "u1"
    assert row["timestamp"].year == 2026


@pytest.mark.parametrize(
    ("name", "body", "fragment"),
    [
        (
            "bad.jsonl",
            '{"content": "ok"}\n{"content": "x", "colour": 1}\n',
            "line 2: unknown field",
        ),
        ("bad.jsonl", '{"content": "ok"}\nnot json\n', "line 2: not JSON"),
        ("bad.jsonl", '{"content": "x", "importance": 3}\n', "importance must be in [0, 1]"),
        ("bad.jsonl", '{"content": "x", "timestamp": "yesterday"}\n', "is not ISO 8601"),
        ("bad.csv", "text\nhello\n", "no 'content' column"),
        ("bad.csv", "content,importance\nhello,high\n", "line 2: importance 'high'"),
    ],
)
def test_bad_input_is_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, body: str, fragment: str
) -> None:
    # In-process (main() is what the console script calls): the records are checked
    # before the database is opened, so these cost no subprocess.
    source = tmp_path / name
    source.write_text(body, encoding="utf-8")
    db = tmp_path / "new.db"
    status = main(["--db", str(db), "ingest", str(source)])
    captured = capsys.readouterr()
    result = subprocess.CompletedProcess([], status, captured.out, captured.err)
    assert_one_line_error(result, fragment)
    assert not db.exists()


def test_missing_input_file(tmp_path: Path) -> None:
    result = run("--db", str(tmp_path / "x.db"), "ingest", str(tmp_path / "nope.txt"))
    assert_one_line_error(result, "nope.txt: no such file")


def test_ingest_stdin_text_with_user(tmp_path: Path) -> None:
    db = tmp_path / "stdin.db"
    result = run(
        "ingest", "-", "--format", "text", "--user", "alice", "--db", str(db),
        stdin="Alice Johnson joined Acme Corp in Berlin.\n\nBob Stone met Alice Johnson.\n",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Ingested 2 memories" in result.stdout
    stats = json.loads(run("--db", str(db), "stats", "--json", "--user", "alice").stdout)
    assert stats["memories_by_tier"] == {"entity": 2, "long_term": 2}
    assert stats["graph"]["user"] == "alice" and stats["graph"]["entities"] >= 3
    # The default tenant's graph is empty: alice's memories stay hers.
    assert json.loads(run("--db", str(db), "stats", "--json").stdout)["graph"]["entities"] == 0


# ---------------------------------------------------------------------- reading commands
def test_stats(shared_db: Path) -> None:
    result = run("--db", str(shared_db), "stats", "--json")
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert stats["memories_by_tier"] == {"entity": len(CORPUS), "long_term": len(CORPUS)}
    assert stats["graph"]["relations_by_predicate"].get("works_at", 0) >= 2
    text = run("--db", str(shared_db), "stats").stdout
    assert "entity: 8, long_term: 8" in text


def test_database_from_environment(shared_db: Path) -> None:
    result = run("stats", "--json", env={"GRAPHMEM_DB": str(shared_db)})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["database"] == str(shared_db)


def test_search_explains(shared_db: Path) -> None:
    result = run("search", "Atlas launch date", "--json", "--limit", "3", "--db", str(shared_db))
    assert result.returncode == 0, result.stderr
    hits = json.loads(result.stdout)
    assert hits[0]["content"].startswith("The Atlas launch date moved")
    assert {"atlas", "launch", "date"} <= set(hits[0]["matched_terms"])
    assert len(hits) <= 3
    text = run("--db", str(shared_db), "search", "Where does Grace work?").stdout
    assert "Grace Liu works at Harbor Analytics." in text and "matched: grace" in text


def test_context_text_and_explain(shared_db: Path) -> None:
    task = "Prepare the Atlas status update"
    text = run("--db", str(shared_db), "context", task)
    assert text.returncode == 0, text.stderr
    assert "Relevant knowledge:" in text.stdout
    assert "The Atlas launch date moved to May 19" in text.stdout
    report = json.loads(run("--db", str(shared_db), "context", task, "--explain").stdout)
    assert report["task"] == task
    knowledge = next(s for s in report["sections"] if s["title"] == "Relevant knowledge:")
    assert knowledge["entries"][0]["tier"] == "long_term"
    assert "atlas" in knowledge["entries"][0]["matched_terms"]
    agent = run("--db", str(shared_db), "context", task, "--agent", "QA Agent", "--explain")
    entries = [e for s in json.loads(agent.stdout)["sections"] for e in s["entries"]]
    assert all("Atlas launch" not in e["content"] for e in entries)


def test_context_team_draws_on_every_agents_knowledge(shared_db: Path) -> None:
    """``--team`` is ``knowledge_scope="team"``: the Project Manager's decision answers the
    QA Agent's task; the recent context stays the QA Agent's."""
    task = "Prepare the Atlas status update"
    team = run("--db", str(shared_db), "context", task, "--agent", "QA Agent", "--team")
    assert team.returncode == 0, team.stderr
    knowledge = team.stdout.split("Relevant knowledge:")[1]
    assert "The Atlas launch date moved to May 19" in knowledge


def test_entities(shared_db: Path) -> None:
    rows = json.loads(run("--db", str(shared_db), "entities", "--label", "person", "--json").stdout)
    names = {r["name"] for r in rows}
    assert {"Grace Liu", "Dana Whitfield", "Tom Becker"} <= names
    assert {r["label"] for r in rows} == {"PERSON"}
    dana = next(r for r in rows if r["name"] == "Dana Whitfield")
    assert dana["memories"] == 2
    limited = run("--db", str(shared_db), "entities", "--limit", "2")
    assert len(limited.stdout.strip().splitlines()) == 3  # header + 2 rows


def test_relations_with_evidence_and_history(shared_db: Path) -> None:
    result = run("--db", str(shared_db), "relations", "Dana", "--json")
    assert result.returncode == 0, result.stderr
    edges = {(e["predicate"], e["object"]): e for e in json.loads(result.stdout)}
    old, new = edges[("works_at", "Northwind Systems")], edges[("works_at", "Harbor Analytics")]
    # works_at is one-valued: the newer job closed the older one, dated by the memories.
    assert old["valid_to"].startswith("2026-05-05") and new["valid_to"] is None
    assert new["first_seen"].startswith("2026-05-05")
    assert new["evidence"][0]["sentence"] == (
        "Dana Whitfield joined Harbor Analytics as head of data."
    )
    text = run("--db", str(shared_db), "relations", "Harbor Analytics", "--predicate", "works_at")
    assert "Grace Liu --works_at--> Harbor Analytics" in text.stdout
    assert "\u201cGrace Liu works at Harbor Analytics.\u201d (2026-03-10)" in text.stdout


def test_relations_as_of_a_date(shared_db: Path) -> None:
    """``--as-of``: the relations valid then (Dana joined Harbor Analytics on 2026-05-05)."""

    def jobs(when: str) -> set[str]:
        result = run("--db", str(shared_db), "relations", "Dana", "--as-of", when, "--json")
        assert result.returncode == 0, result.stderr
        return {e["object"] for e in json.loads(result.stdout) if e["predicate"] == "works_at"}

    assert jobs("2026-04-01") == {"Northwind Systems"}
    assert jobs("2026-06-01T12:00:00Z") == {"Harbor Analytics"}
    text = run("--db", str(shared_db), "relations", "Dana", "--as-of", "2026-04-01").stdout
    assert text.startswith("Dana Whitfield (PERSON): 1 typed relation as of 2026-04-01\n")
    # As it stood then: the job had not ended (it ended on 2026-05-05), and nothing said
    # after that date is quoted.
    assert "(ended)" not in text
    then = json.loads(
        run("--db", str(shared_db), "relations", "Dana", "--as-of", "2026-04-01", "--json").stdout
    )
    for edge in then:
        assert edge["valid_to"] is None, edge
        assert edge["last_seen"] <= "2026-04-01T00:00:00+00:00", edge
        assert all(ev["date"] <= "2026-04-01T00:00:00+00:00" for ev in edge["evidence"]), edge
    before = run("--db", str(shared_db), "relations", "Dana", "--as-of", "2020-01-01").stdout
    assert "0 typed relations as of 2020-01-01" in before
    bad = run("--db", str(shared_db), "relations", "Dana", "--as-of", "last spring")
    assert_one_line_error(bad, "--as-of", "not an ISO 8601 date or time: 'last spring'")


def test_path_with_evidence(shared_db: Path) -> None:
    result = run("--db", str(shared_db), "path", "Priya Nair", "Aurex Logistics", "--json")
    assert result.returncode == 0, result.stderr
    paths = json.loads(result.stdout)
    assert paths and len(paths[0]) == 2
    hops = paths[0]
    assert hops[0]["from"] == "Priya Nair" and hops[-1]["to"] == "Aurex Logistics"
    assert all(hop["evidence"] for hop in hops)
    assert hops[-1]["evidence"][0]["sentence"] == "Tom Becker works at Aurex Logistics."
    text = run("--db", str(shared_db), "path", "Priya Nair", "Aurex Logistics").stdout
    assert "Path 1 (2 hops):" in text and "Tom Becker --works_at--> Aurex Logistics" in text
    far = run("--db", str(shared_db), "path", "Grace Liu", "Tom Becker", "--max-hops", "1")
    assert far.returncode == 0 and "No connection" in far.stdout


def test_unknown_entity(shared_db: Path) -> None:
    result = run("--db", str(shared_db), "relations", "Grace Lu")
    assert_one_line_error(result, "unknown entity 'Grace Lu'", "did you mean 'Grace Liu'")
    assert_one_line_error(run("--db", str(shared_db), "path", "Nobody", "Grace Liu"), "Nobody")
    viz = run("--db", str(shared_db), "viz", "x.html", "--entity", "Nobody")
    assert_one_line_error(viz, "unknown entity 'Nobody'")


def test_viz_pages(shared_db: Path, tmp_path: Path) -> None:
    whole = tmp_path / "whole.html"
    result = run("--db", str(shared_db), "viz", str(whole), "--max-nodes", "5")
    assert result.returncode == 0, result.stderr
    assert re.search(
        r"Wrote .*whole\.html \(5 entities, \d+ relations, \d+ left out", result.stdout
    )
    assert "Dana Whitfield" in whole.read_text(encoding="utf-8")
    dana = tmp_path / "dana.html"
    assert run("--db", str(shared_db), "viz", str(dana), "--entity", "Dana").returncode == 0
    page = dana.read_text(encoding="utf-8")
    # Tooltips carry the evidence sentences filled in from the relations.
    assert "joined Harbor Analytics as head of data" in page
    assert "Priya Nair" not in page
    path_page = tmp_path / "path.html"
    result = run(
        "--db", str(shared_db), "viz", str(path_page), "--path", "Priya Nair", "Aurex Logistics"
    )
    assert result.returncode == 0, result.stderr
    assert "(3 entities, " in result.stdout
    task_page = tmp_path / "task.html"
    result = run("--db", str(shared_db), "viz", str(task_page), "--task", "Harbor Analytics news")
    assert result.returncode == 0 and "Grace Liu" in task_page.read_text(encoding="utf-8")


# ---------------------------------------------------------------------- bad arguments and files
@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["search"], "the following arguments are required: QUERY"),
        (["search", "x", "--limit", "0"], "must be at least 1"),
        (["entities", "--limit", "many"], "not a whole number"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["viz", "x.html", "--entity", "A", "--task", "B"], "not allowed with argument"),
    ],
)
def test_bad_arguments(
    shared_db: Path, capsys: pytest.CaptureFixture[str], args: list[str], fragment: str
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--db", str(shared_db), *args])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert_one_line_error(subprocess.CompletedProcess([], 2, captured.out, captured.err), fragment)


def test_bad_argument_in_a_real_process(shared_db: Path) -> None:
    result = run_process("--db", str(shared_db), "search", "x", "--limit", "-3")
    assert result.returncode == 2
    assert_one_line_error(result, "must not be negative", "graphmem search --help")


def test_random_bytes_database_is_refused_untouched(tmp_path: Path) -> None:
    bogus = tmp_path / "random.db"
    payload = os.urandom(4096)
    bogus.write_bytes(payload)
    for args in (["relations", "A"], ["export", "out.jsonl"]):
        result = run("--db", str(bogus), *args)
        assert_one_line_error(result, str(bogus), "not a SQLite database")
    assert bogus.read_bytes() == payload


def test_missing_database_is_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "missing.db"
    result = run("--db", str(missing), "search", "anything")
    assert_one_line_error(result, "no such database", "graphmem ingest")
    assert not missing.exists()


# ---------------------------------------------------------------------- export and import
def test_export_import_round_trip(shared_db: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    copy = tmp_path / "copy.db"
    assert run("--db", str(shared_db), "export", str(first)).returncode == 0
    imported = run("--db", str(copy), "import", str(first))
    assert imported.returncode == 0, imported.stderr
    assert "Imported 16 memories" in imported.stdout
    assert run("--db", str(copy), "export", str(second)).returncode == 0
    assert first.read_bytes() == second.read_bytes()
    for args in (
        ["relations", "Dana Whitfield", "--co-occurs", "--json"],
        ["entities", "--limit", "0", "--json"],
    ):
        original = run("--db", str(shared_db), *args)
        restored = run("--db", str(copy), *args)
        assert original.returncode == 0 and restored.stdout == original.stdout, args
    # Importing it again changes nothing (test_idempotent.py: other data is refused).
    again = run("--db", str(copy), "import", str(first))
    assert again.returncode == 0 and "holds its 16 memories already" in again.stdout


def test_import_rejects_damaged_file(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text('{"format": "something else"}\n', encoding="utf-8")
    target = tmp_path / "target.db"
    assert_one_line_error(run("--db", str(target), "import", str(damaged)), "not a graphmem export")
    assert not target.exists()
    assert_one_line_error(
        run("--db", str(target), "import", str(tmp_path / "none.jsonl")), "no such file"
    )


# ---------------------------------------------------------------------- the demo
def test_demo_refuses_to_replace_a_database_it_did_not_create(
    shared_db: Path, tmp_path: Path
) -> None:
    precious = tmp_path / "precious.db"
    precious.write_bytes(shared_db.read_bytes())
    result = run("demo", "--db", str(precious), "--out", str(tmp_path / "out"))
    assert_one_line_error(result, "refusing to replace")
    storage = SQLiteStorage(precious)
    try:
        with storage.database.read() as conn:
            assert namespace_counts(conn) == {"entity": len(CORPUS), "long_term": len(CORPUS)}
    finally:
        storage.close()
    assert not (tmp_path / "out" / "graph.html").exists()


@pytest.mark.slow
def test_demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "demo"
    monkeypatch.chdir(tmp_path)
    for _ in range(2):  # the second run replaces the first run's database
        result = run("demo", "--out", str(out))
        assert result.returncode == 0, result.stderr
    text = result.stdout
    counted = re.search(
        r"Ingested \d+ memories in [\d.]+ s: (\d{2,}) entities, (\d{3,}) relations "
        r"\((\d+) typed, (\d+) co-occurrence links; the page draws each entity's strongest",
        text,
    )
    assert counted is not None, text[:400]
    entities, relations, typed, co_occurs = map(int, counted.groups())
    assert typed + co_occurs == relations
    assert "Relevant knowledge:" in text and "Aurex Logistics" in text
    assert "== 2. Who works at Harbor Analytics?" in text and "Lena Okafor" in text
    # Each relation once: a role (head_of_data_of) answers works_at, and is not listed again.
    answer = text[text.index("== 2. Who works") : text.index("== 3.")]
    edges = [line for line in answer.splitlines() if "-->" in line]
    assert edges and len(edges) == len(set(edges)), answer
    assert sum("--head_of_data_of--> Harbor Analytics" in line for line in edges) == 1
    assert "Priya Nair met Tom Becker from Aurex Logistics in Berlin" in text
    assert "2026-03-02 .. 2026-04-24  Northwind Systems" in text
    # questions 3 and 4 are answered with typed relations, the old job closed by "left"
    assert "Through typed relations:" in text
    assert "Tom Becker --works_at--> Aurex Logistics" in text
    assert "Karin Vogel --cto_of--> Aurex Logistics" in text
    changes = text[text.index("== 4. What changed for Dana Whitfield?") :]
    assert "(none extracted)" not in changes
    # The job ends with the first statement of its end: on 2026-04-23, "Last Beacon sync with
    # Dana. She thanked the team; her final day at Northwind Systems is tomorrow."
    assert re.search(r"Dana Whitfield --works_at--> Northwind Systems .*to 2026-04-23\]", changes)
    assert "Dana Whitfield --left--> Northwind Systems" in changes
    assert "Dana Whitfield --works_at--> Harbor Analytics" in changes
    assert "Dana Whitfield --lives_in--> Dublin" in changes
    page = out / "graph.html"
    html = page.read_text(encoding="utf-8")
    assert "Harbor Analytics" in html
    # The page's header says which of the relations the terminal counted it draws.
    assert re.search(
        rf"{entities} entities; \d+ of their {relations} relations on the page: every typed "
        r"relation and each entity's \d strongest co-occurrence links\.",
        html,
    )
    # The page of step 1's context: the task, its sections, and the entities it used.
    task_page = (out / "task.html").read_text(encoding="utf-8")
    assert "Context for: Prepare the Atlas status update for Aurex Logistics." in task_page
    assert '"sections":[{"title":"Relevant knowledge:"' in task_page
    assert re.search(r"Wrote \S+task\.html: the context of step 1 beside the \d{2} entities", text)
    stats = json.loads(run("--db", str(out / "demo.db"), "stats", "--json").stdout)
    assert stats["memories_by_tier"] == {"entity": 304, "long_term": 304}


# ---------------------------------------------------------------------- output files are safe
def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".partial"))


@pytest.mark.parametrize(
    ("command", "name", "written"),
    [("viz", "index.html", "Dana Whitfield"), ("export", "backup.jsonl", "graphmem-export")],
)
def test_an_existing_file_is_kept_unless_forced(
    shared_db: Path, tmp_path: Path, command: str, name: str, written: str
) -> None:
    out = tmp_path / name  # for viz: an HTML page graphmem did not write
    out.write_text("<html><body>precious</body></html>\n", encoding="utf-8")
    result = run("--db", str(shared_db), command, str(out))
    assert_one_line_error(result, "already exists", "--force")
    assert out.read_text(encoding="utf-8") == "<html><body>precious</body></html>\n"
    result = run("--db", str(shared_db), command, str(out), "--force")
    assert result.returncode == 0, result.stderr
    assert written in out.read_text(encoding="utf-8")
    assert _leftovers(tmp_path) == []


class TestVizOutput:
    def test_rerun_replaces_its_own_page(self, shared_db: Path, tmp_path: Path) -> None:
        page = tmp_path / "graph.html"
        for _ in range(2):
            result = run("--db", str(shared_db), "viz", str(page), "--max-nodes", "3")
            assert result.returncode == 0, result.stderr
        assert "(3 entities, " in result.stdout
        assert _leftovers(tmp_path) == []

    @pytest.mark.parametrize("name", ["graph.txt", "graph", "graph.html.bak"])
    def test_output_must_be_html(self, shared_db: Path, tmp_path: Path, name: str) -> None:
        notes = tmp_path / name
        notes.write_text("my notes", encoding="utf-8")
        result = run("--db", str(shared_db), "viz", str(notes))
        assert result.returncode == 2
        assert_one_line_error(result, "must be an .html file")
        assert notes.read_text(encoding="utf-8") == "my notes"

    def test_the_database_itself_is_never_the_page(self, tmp_path: Path) -> None:
        db = tmp_path / "memory.html"  # a database whose name ends in .html
        assert (
            run("--db", str(db), "ingest", "-", stdin="Dana Scott works at Initech.\n").returncode
            == 0
        )
        before = db.read_bytes()
        for extra in ([], ["--force"]):
            result = run("--db", str(db), "viz", str(db), *extra)
            assert_one_line_error(result, "refusing to overwrite the database")
        assert db.read_bytes() == before

    def test_a_missing_folder_is_not_created(self, shared_db: Path, tmp_path: Path) -> None:
        page = tmp_path / "no" / "such" / "graph.html"
        assert_one_line_error(run("--db", str(shared_db), "viz", str(page)), "no such folder")
        assert not (tmp_path / "no").exists()

    def test_a_directory_is_refused(self, shared_db: Path, tmp_path: Path) -> None:
        folder = tmp_path / "pages.html"
        folder.mkdir()
        assert_one_line_error(run("--db", str(shared_db), "viz", str(folder)), "is a directory")

    def test_a_failed_render_leaves_nothing_behind(
        self, shared_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        import graphmem.viz

        page = tmp_path / "graph.html"
        page.write_text("<!DOCTYPE html>\n<!--\n  graphmem graph page. old -->", encoding="utf-8")
        before = page.read_bytes()

        def half_then_fail(graph: object, path: Path, **_: object) -> None:
            Path(path).write_text("<!DOCTYPE html><html><body>half", encoding="utf-8")
            raise KeyboardInterrupt  # Ctrl-C mid-write

        monkeypatch.setattr(graphmem.viz, "render_graph", half_then_fail)
        assert main(["--db", str(shared_db), "viz", str(page)]) == 130
        assert page.read_bytes() == before
        assert _leftovers(tmp_path) == [] and sorted(os.listdir(tmp_path)) == ["graph.html"]


class TestExportOutput:
    def test_the_database_is_never_overwritten(self, shared_db: Path, tmp_path: Path) -> None:
        db = tmp_path / "copy.db"
        db.write_bytes(shared_db.read_bytes())
        link = tmp_path / "link.jsonl"
        link.symlink_to(db)
        for target in (db, link, Path(f"{db}-wal")):
            if target.name.endswith("-wal"):
                target.write_bytes(b"")
            result = run("--db", str(db), "export", str(target), "--force")
            assert_one_line_error(result, "refusing to overwrite the database")
        assert db.read_bytes() == shared_db.read_bytes()

    def test_a_missing_folder_is_not_created(self, shared_db: Path, tmp_path: Path) -> None:
        out = tmp_path / "nowhere" / "backup.jsonl"
        assert_one_line_error(run("--db", str(shared_db), "export", str(out)), "no such folder")
        assert not out.parent.exists()

    @pytest.mark.parametrize("failure", [KeyboardInterrupt, OSError(28, "No space left on device")])
    def test_a_failed_export_leaves_nothing_behind(
        self,
        shared_db: Path,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        failure: BaseException | type[BaseException],
    ) -> None:
        import graphmem.transfer

        out = tmp_path / "backup.jsonl"

        def half_then_fail(db: object, target: Path) -> None:
            Path(target).write_text('{"format": "graphmem-export"}\n', encoding="utf-8")
            raise failure

        monkeypatch.setattr(graphmem.transfer, "export_jsonl", half_then_fail)
        status = main(["--db", str(shared_db), "export", str(out)])
        assert status == (130 if failure is KeyboardInterrupt else 1)
        assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------------- blank queries, pipes
@pytest.mark.parametrize(
    "args",
    [
        ["search", ""],
        ["search", "   "],
        ["context", "\t\n"],
        ["relations", " "],
        ["path", "Dana Whitfield", ""],
        ["viz", "x.html", "--task", " "],
        ["viz", "x.html", "--entity", ""],
    ],
)
def test_a_blank_query_is_a_usage_error(
    shared_db: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--db", str(shared_db), *args])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert_one_line_error(
        subprocess.CompletedProcess([], 2, captured.out, captured.err), "must not be empty or blank"
    )


def test_a_blank_query_in_a_real_process(shared_db: Path) -> None:
    result = run_process("--db", str(shared_db), "search", "  ")
    assert result.returncode == 2 and result.stdout == ""
    assert_one_line_error(result, "argument QUERY: must not be empty or blank")


@pytest.mark.parametrize("args", [["entities", "--limit", "0"], ["export", "-"]])
def test_a_closed_pipe_ends_quietly(shared_db: Path, args: list[str]) -> None:
    """`graphmem ... | head -1`: the reader is gone before the output is written."""
    environment = {k: v for k, v in os.environ.items() if k != "GRAPHMEM_DB"}
    proc = subprocess.Popen(
        [str(SCRIPT), "--db", str(shared_db), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # what `head` does once it has its line
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 1
    assert stderr == ""


def test_help_starts_without_loading_the_language_model() -> None:
    code = (
        "import contextlib, io, sys\n"
        "from graphmem.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(sorted(m for m in ('spacy', 'sqlalchemy', 'networkx') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


# ---------------------------------------------------------------------- declared types
def test_declare_then_ingest_then_relabel(tmp_path: Path) -> None:
    db = str(tmp_path / "types.db")
    types = tmp_path / "types.jsonl"
    types.write_text('{"label": "PROJECT", "pattern": "Atlas"}\n', encoding="utf-8")
    result = run("--db", db, "declare", str(types))
    assert result.returncode == 0, result.stderr
    assert "Declared 1 new pattern" in result.stdout
    memories = tmp_path / "in.txt"
    memories.write_text("Atlas shipped the dashboard for Aurex Logistics in Berlin.\n")
    assert run("--db", db, "ingest", str(memories), "--no-progress").returncode == 0
    rows = json.loads(run("--db", db, "entities", "--json").stdout)
    assert {r["name"]: r["label"] for r in rows}["Atlas"] == "PROJECT"
    result = run("--db", db, "relabel", "Berlin", "LOC")
    assert result.returncode == 0, result.stderr
    first, hint = result.stdout.strip().splitlines()
    assert first == "Berlin: GPE -> LOC"
    assert "`graphmem reanalyse` reads the stored ones again" in hint
    listed = json.loads(run("--db", db, "declare", "--json").stdout)
    assert listed == [{"label": "PROJECT", "pattern": "Atlas", "id": "declared"}]
    assert_one_line_error(run("--db", db, "relabel", "Berlin", "DATE"), "DATE is a value label")
    assert_one_line_error(run("--db", db, "relabel", "Zed", "PERSON"), "unknown entity 'Zed'")


def test_declare_names_the_bad_line(tmp_path: Path) -> None:
    types = tmp_path / "types.jsonl"
    types.write_text('{"label": "PROJECT", "pattern": "Atlas"}\n{"label": "x"}\n')
    result = run("--db", str(tmp_path / "t.db"), "declare", str(types))
    assert_one_line_error(result, "types.jsonl:2")


# ------------------------------------------- issue 19, item 8: one error path, never a traceback
def _in_process(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> subprocess.CompletedProcess[str]:
    status = main(argv)
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(argv, status, captured.out, captured.err)


DEEP = "[" * 100_000 + "]" * 100_000
HUGE_INT = "9" * 5_000


@pytest.mark.parametrize(
    ("name", "body", "fragment"),
    [
        ("deep.jsonl", '{"content": "x", "metadata": {"a": ' + DEEP + "}}\n", "line 1"),
        ("huge.jsonl", '{"content": "x", "importance": ' + HUGE_INT + "}\n", "line 1"),
        ("top.jsonl", DEEP + "\n", "line 1"),
        ("cell.csv", "content\n" + "x" * 10_000_001 + "\n", "limit is 10,000,000"),
    ],
)
def test_hostile_input_files_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, body: str, fragment: str
) -> None:
    source = tmp_path / name
    source.write_text(body, encoding="utf-8")
    db = tmp_path / "new.db"
    result = _in_process(["--db", str(db), "ingest", str(source)], capsys)
    assert result.returncode == 1
    assert_one_line_error(result, name, fragment)
    assert not db.exists()


def test_a_csv_cell_longer_than_csvs_default_limit_is_ingested(tmp_path: Path) -> None:
    long_text = "Alice Stone joined Acme Corp. " + "x" * 140_000
    source = tmp_path / "long.csv"
    source.write_text(f"content\n{long_text}\n", encoding="utf-8")
    db = tmp_path / "long.db"
    result = run("--db", str(db), "ingest", str(source), "--no-progress")
    assert result.returncode == 0, result.stderr
    with SQLiteStorage(str(db)).database.read() as conn:
        assert namespace_counts(conn) == {"entity": 1, "long_term": 1}


@pytest.fixture(scope="module")
def small_export(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    folder = tmp_path_factory.mktemp("export")
    db, out = folder / "small.db", folder / "small.jsonl"
    source = folder / "in.txt"
    source.write_text("Alice Stone joined Acme Corp.\n", encoding="utf-8")
    assert main(["--db", str(db), "ingest", str(source), "--no-progress"]) == 0
    assert main(["--db", str(db), "export", str(out)]) == 0
    return out.read_text(encoding="utf-8").splitlines()


def _created_at_never(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        record = json.loads(line)
        if record.get("table") == "memories":
            record["row"]["created_at"] = "never"
        out.append(json.dumps(record))
    return out


def _no_tables_and_half_a_file(lines: list[str]) -> list[str]:
    header = json.loads(lines[0])
    del header["tables"]
    return [json.dumps(header), *lines[1:-1]]


def _a_deep_row(lines: list[str]) -> list[str]:
    return [*lines, '{"table": "kv", "row": ' + DEEP + "}"]


def _a_huge_schema_version(lines: list[str]) -> list[str]:
    header = json.loads(lines[0])
    del header["schema_version"]
    return [json.dumps(header)[:-1] + ', "schema_version": ' + HUGE_INT + "}", *lines[1:]]


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (_created_at_never, "memories.created_at 'never' is not an ISO 8601 time"),
        (_no_tables_and_half_a_file, "no 'tables' row counts"),
        (_a_deep_row, "nested too deep"),
        (_a_huge_schema_version, "Exceeds the limit"),
    ],
)
def test_a_bad_import_is_refused_and_writes_nothing(
    small_export: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    edit: Callable[[list[str]], list[str]],
    fragment: str,
) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_text("\n".join(edit(small_export)) + "\n", encoding="utf-8")
    target = tmp_path / "target.db"
    result = _in_process(["--db", str(target), "import", str(source)], capsys)
    assert result.returncode == 1
    assert_one_line_error(result, fragment)
    assert not target.exists()


def test_stats_on_a_malformed_schema_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3

    db = tmp_path / "m.db"
    SQLiteStorage(str(db)).close()
    con = sqlite3.connect(db)
    con.execute("UPDATE graphmem_meta SET value = '2.0' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    before = db.read_bytes()
    result = _in_process(["--db", str(db), "stats"], capsys)
    assert result.returncode == 1
    assert_one_line_error(result, "schema_version '2.0' is not a version")
    assert db.read_bytes() == before


_FULL_DISK = """
import resource, signal, sys
from graphmem.cli import main
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), int(sys.argv[1])))
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.slow
def test_ingest_on_a_full_disk_is_one_line(tmp_path: Path) -> None:
    source = tmp_path / "many.txt"
    source.write_text(
        "".join(f"Person{n} Stone joined Company{n} in Paris on day {n}.\n" for n in range(400)),
        encoding="utf-8",
    )
    db = tmp_path / "full.db"
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            _FULL_DISK,
            str(200_000),
            "--db",
            str(db),
            "ingest",
            str(source),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1, result.stderr
    assert_one_line_error(result)
    assert re.search(r"disk is full|disk I/O error|File too large", result.stderr), result.stderr


def test_an_unexpected_error_is_one_line_with_status_3(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import graphmem.cli as cli

    def broken(args: object) -> int:
        raise RuntimeError("boom\nsecond line")

    commands = tuple(
        cli.Command(c.name, broken, c.summary, c.examples) if c.name == "stats" else c
        for c in cli.COMMANDS
    )
    monkeypatch.setattr(cli, "COMMANDS", commands)
    result = _in_process(["--db", str(tmp_path / "x.db"), "stats"], capsys)
    assert result.returncode == 3
    assert_one_line_error(result, "internal error (RuntimeError: boom)")
    monkeypatch.setenv("GRAPHMEM_DEBUG", "1")
    with pytest.raises(RuntimeError, match="boom"):
        main(["--db", str(tmp_path / "x.db"), "stats"])


def test_exit_codes_are_documented() -> None:
    from graphmem.cli import EXIT_CODES

    text = DOCS.read_text(encoding="utf-8")
    for code in EXIT_CODES:
        assert f"| {code} |" in text, code


# ------------------------------------------------- issue 19, item 9: one tenant scope everywhere
@pytest.fixture(scope="module")
def tenants_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tenants")
    db = folder / "t.db"
    shared = folder / "shared.jsonl"
    shared.write_text('{"content": "Bob Reed joined Initech in Oslo."}\n', encoding="utf-8")
    alice = folder / "alice.jsonl"
    alice.write_text(
        '{"content": "Alice Stone joined Globex in Lima."}\n'
        '{"content": "Alice Stone met Carol Diaz in Lima."}\n',
        encoding="utf-8",
    )
    assert main(["--db", str(db), "ingest", str(shared), "--no-progress"]) == 0
    assert main(["--db", str(db), "ingest", str(alice), "--user", "alice", "--no-progress"]) == 0
    return db


def test_every_reading_command_takes_user() -> None:
    parser = build_parser()
    for command in ("search", "context", "entities", "relations", "path", "viz", "stats"):
        args = [
            command,
            *{
                "search": ["q"],
                "context": ["t"],
                "relations": ["n"],
                "path": ["a", "b"],
                "viz": ["o.html"],
            }.get(command, []),
        ]
        assert parser.parse_args([*args, "--user", "alice"]).user == "alice", command


def test_stats_counts_only_the_users_rows(
    tenants_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alice = json.loads(
        _in_process(["--db", str(tenants_db), "stats", "--user", "alice", "--json"], capsys).stdout
    )
    shared = json.loads(_in_process(["--db", str(tenants_db), "stats", "--json"], capsys).stdout)
    assert alice["memories_by_tier"] == {"entity": 2, "long_term": 2}
    assert shared["memories_by_tier"] == {"entity": 1, "long_term": 1}
    assert alice["users"] == shared["users"] == ["alice"]
    assert alice["rows"]["entities"] == alice["graph"]["entities"]
    assert shared["rows"]["entities"] == shared["graph"]["entities"]
    assert alice["rows"]["merges"] == 0 and alice["rows"]["kv"] == 0


@pytest.mark.parametrize(
    ("command", "user", "present", "absent"),
    [
        (["search", "joined"], None, "Bob Reed", "Alice Stone"),
        (["search", "joined"], "alice", "Alice Stone", "Bob Reed"),
        (["context", "Who joined a company?"], None, "Bob Reed", "Alice Stone"),
        (["context", "Who joined Globex?"], "alice", "Alice Stone", "Bob Reed"),
        (["entities"], None, "Bob Reed", "Alice Stone"),
        (["entities"], "alice", "Alice Stone", "Bob Reed"),
    ],
)
def test_one_default_scope_across_commands(
    tenants_db: Path,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
    user: str | None,
    present: str,
    absent: str,
) -> None:
    argv = ["--db", str(tenants_db), *command, *(["--user", user] if user else [])]
    result = _in_process(argv, capsys)
    assert result.returncode == 0, result.stderr
    assert present in result.stdout and absent not in result.stdout, result.stdout


# ------------------------------------------ issue 28: each command owns its options and scope
def test_the_tenant_scoped_commands_are_the_ones_that_take_the_shared_user() -> None:
    """``Command.tenant_scoped`` alone decides who gets the shared ``--user`` (no list in the
    parser); the others either have no ``--user`` or one of their own, with its own help."""
    subparsers = next(a for a in build_parser()._actions if a.dest == "command").choices
    shared_help = "the user (tenant) whose memories and graph to use"
    for command in COMMANDS:
        user = [a for a in subparsers[command.name]._actions if "--user" in a.option_strings]
        has_shared = bool(user) and str(user[0].help).startswith(shared_help)
        assert has_shared == command.tenant_scoped, command.name
    scoped = {c.name for c in COMMANDS if c.tenant_scoped}
    assert {"search", "context", "entities", "relations", "path", "viz", "stats"} <= scoped
    assert not {"declare", "undeclare", "reanalyse", "export", "import", "mcp", "demo"} & scoped


def test_a_new_command_is_one_command_object(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    import graphmem.cli as cli

    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("name")

    def hello(args: argparse.Namespace) -> int:
        print(f"hello {args.name} of {args.user!r}")
        return 0

    greet = cli.Command(
        "hello", hello, "greet someone", "examples:\n  graphmem hello Ada", add_arguments
    )
    monkeypatch.setattr(cli, "COMMANDS", (*cli.COMMANDS, greet))
    assert main(["hello", "Ada", "--user", "alice"]) == 0
    assert capsys.readouterr().out == "hello Ada of 'alice'\n"


def test_stats_prints_the_library_stats(
    tenants_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from graphmem.stats import stats

    printed = json.loads(
        _in_process(["--db", str(tenants_db), "stats", "--user", "alice", "--json"], capsys).stdout
    )
    storage = SQLiteStorage(tenants_db)
    try:
        assert {k: v for k, v in printed.items() if k not in ("database", "size_bytes")} == stats(
            storage, "alice"
        )
        graph = storage.entity_index.graph("alice")
        assert graph.counts()["entities"] == len(graph) == printed["graph"]["entities"]
    finally:
        storage.close()
