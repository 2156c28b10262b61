"""Shared fixtures: small on purpose (other test modules add their own), the hypothesis
profiles, and the session-end check that no process the tests started is still alive."""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from _viz_pages import browser as browser  # the session's headless Chromium (viz tests)
from hypothesis import HealthCheck, settings


@pytest.fixture
def db_file(tmp_path: Path) -> str:
    """Path of a SQLite file (not yet created) in this test's temporary directory."""
    return str(tmp_path / "memory.db")


@pytest.fixture(scope="session")
def demo_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The database ``graphmem demo`` builds (``build_demo_database``), built once per test
    process and closed; a test copies it (``_stores.copy_database``) rather than write to it."""
    from graphmem.demo import build_demo_database

    db = tmp_path_factory.mktemp("demo-once") / "demo.db"
    storage, count = build_demo_database(db)
    storage.close()
    assert count > 250
    return db


@pytest.fixture
def write_memory_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Persistence allowed: ``WRITE_MEMORY=1`` for this test only."""
    monkeypatch.setenv("WRITE_MEMORY", "1")


@pytest.fixture
def write_memory_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Persistence not allowed: ``WRITE_MEMORY`` unset for this test only."""
    monkeypatch.delenv("WRITE_MEMORY", raising=False)


# ---------------------------------------------------------------------------------------------
# Database backends (PostgreSQL). Owned by the PostgreSQL work; keep other fixtures above.
#
# ``storage_url`` runs a test once per backend: a fresh SQLite file, and a fresh schema on the
# PostgreSQL server named by GRAPHMEM_TEST_PG_URL (those runs carry the ``postgres`` marker).
# Without the URL the PostgreSQL runs skip locally and FAIL when ``CI`` is set, so CI never
# passes by skipping. ``--backend sqlite|postgresql`` keeps one backend; ``-m postgres`` too.
# ---------------------------------------------------------------------------------------------
PG_URL_ENV = "GRAPHMEM_TEST_PG_URL"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend",
        choices=("all", "sqlite", "postgresql"),
        default="all",
        help="database backend of the storage_url tests (default: all)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    backend = config.getoption("--backend")
    if backend == "all":
        return
    keep, drop = [], []
    for item in items:
        on_pg = item.get_closest_marker("postgres") is not None
        uses_backend = on_pg or "storage_url" in getattr(item, "fixturenames", ())
        if uses_backend and on_pg != (backend == "postgresql"):
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(scope="session")
def pg_server_url() -> str:
    """GRAPHMEM_TEST_PG_URL; fails under CI when missing, skips otherwise."""
    import os

    url = os.environ.get(PG_URL_ENV, "")
    if not url:
        message = f"{PG_URL_ENV} is not set (start a server: scripts/pg_test_server.sh start DIR)"
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but {message}", pytrace=False)
        pytest.skip(message)
    return url


@pytest.fixture
def pg_url(pg_server_url: str) -> Iterator[str]:
    """A URL whose connections work in a new, empty schema (dropped after the test)."""
    from graphmem.store.postgres import temporary_schema

    with temporary_schema(pg_server_url, "gm_test") as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def storage_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty database: a SQLite file path, or a PostgreSQL URL (fresh schema)."""
    if request.param == "sqlite":
        return str(tmp_path / "backend.db")
    return str(request.getfixturevalue("pg_url"))


# ---------------------------------------------------------------------------------------------
# Hypothesis profiles. "default" is Hypothesis's own; "ci" (HYPOTHESIS_PROFILE=ci, which
# .ci/run sets, or --hypothesis-profile=ci) prints the blob that reproduces a failure and lets
# no slow, shared machine fail a property test on time (no deadline, no too_slow health
# check). Neither changes how many examples a test tries: the tests set max_examples
# themselves, and the long property runs are marked slow.
# ---------------------------------------------------------------------------------------------
settings.register_profile(
    "ci",
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


# ---------------------------------------------------------------------------------------------
# No process outlives the suite. The process that starts the session (pytest itself, or the
# xdist controller) puts a marker unique to the session in the environment before any worker
# or test starts, so every process started from it carries the marker in its environment at
# exec, including the processes forked from those: a `graphmem ingest` whose own parent was
# killed, reparented away from the tests. At the end of the session (after the xdist workers
# have exited) a process that carries the marker, or descends from this process, and is still
# running fails the run; it is listed, then killed so it does not linger on the machine.
# ---------------------------------------------------------------------------------------------
SESSION_MARKER_ENV = "GRAPHMEM_TEST_SESSION"
#: How long a process seen at the end of the session may take to finish exiting.
LEFTOVER_GRACE_SECONDS = 10.0
_PROC = Path("/proc")
_owner_key = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    if SESSION_MARKER_ENV not in os.environ:  # the session's first process owns the check
        os.environ[SESSION_MARKER_ENV] = f"{os.getpid()}-{uuid.uuid4().hex}"
        config.stash[_owner_key] = os.environ[SESSION_MARKER_ENV]


def _running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (a zombie has exited)."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def _parents() -> dict[int, int]:
    parents = {}
    for entry in _PROC.iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat[stat.rindex(")") + 2 :].split()[1])
    return parents


def _carries(pid: int, marker: bytes) -> bool:
    try:
        return marker in (_PROC / str(pid) / "environ").read_bytes().split(b"\0")
    except OSError:  # gone, or another user's
        return False


def _leftovers(marker: str) -> list[int]:
    """The running processes started by this session: its descendants, and every process
    whose environment carries the session's marker (wherever it was reparented)."""
    me = os.getpid()
    parents = _parents()
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found, todo = set(), list(children.get(me, []))
    while todo:
        pid = todo.pop()
        found.add(pid)
        todo.extend(children.get(pid, []))
    entry = f"{SESSION_MARKER_ENV}={marker}".encode()
    found |= {pid for pid in parents if pid != me and _carries(pid, entry)}
    return sorted(pid for pid in found if _running(pid))


def _command_line(pid: int) -> str:
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()[:200]


@pytest.hookimpl(trylast=True)  # after xdist has stopped its workers
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    marker = session.config.stash.get(_owner_key, None)
    if marker is None or not _PROC.is_dir():
        return
    deadline = time.monotonic() + LEFTOVER_GRACE_SECONDS
    while (leftovers := _leftovers(marker)) and time.monotonic() < deadline:
        time.sleep(0.5)
    if not leftovers:
        return
    lines = [f"  pid {pid}: {_command_line(pid)}" for pid in leftovers]
    message = (
        f"{len(leftovers)} process(es) started by the tests outlived the session "
        "(killed now):\n" + "\n".join(lines)
    )
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.ensure_newline()
        reporter.write_sep("=", "processes left running", red=True, bold=True)
        reporter.write_line(message)
        # "N left running" in the summary line (the entries are objects, as reports are)
        reporter.stats.setdefault("left running", []).extend(
            SimpleNamespace(pid=pid, command=_command_line(pid)) for pid in leftovers
        )
    else:
        print(message)
    for pid in leftovers:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
