"""Nested write transactions are SAVEPOINTs (DESIGN.md: "transactions (SAVEPOINT when nested)").

A nested :meth:`Database.write` that raises rolls back only what it wrote, drops the
callbacks it registered (running its after-rollback ones), and lets the body's own exception
through unchanged; the outer transaction keeps the rest. Every test runs on SQLite and, with
GRAPHMEM_TEST_PG_URL set, on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from graphmem.items import MemoryItem
from graphmem.store import memory_rows, text_rows
from graphmem.store.database import Database


class InnerFailure(Exception):
    """Raised inside a nested write."""


@pytest.fixture
def db(storage_url: str) -> Iterator[Database]:
    database = Database(storage_url)
    yield database
    database.close()


def _save(db: Database, conn: object, content: str) -> int:
    return text_rows.insert_memory(conn, MemoryItem(content), namespace="n")  # type: ignore[arg-type]


def _contents(db: Database) -> list[str]:
    with db.read() as conn:
        return [item.content for _, item in memory_rows.list_items(conn, ["n"])]


def test_a_caught_inner_failure_undoes_only_the_inner_writes(db: Database) -> None:
    failure = InnerFailure("the inner part failed")
    with db.write() as conn:
        _save(db, conn, "before")
        with pytest.raises(InnerFailure) as raised:
            with db.write() as inner:
                assert inner is conn
                _save(db, inner, "undone")
                raise failure
        _save(db, conn, "after")
    assert raised.value is failure  # the body's own exception, not a rollback error
    assert _contents(db) == ["before", "after"]


def test_an_inner_write_that_returns_commits_with_the_outer_one(db: Database) -> None:
    with db.write() as conn:
        _save(db, conn, "outer")
        with db.write() as inner:
            _save(db, inner, "inner")
        with db.write(), db.write() as innermost:  # savepoints nest
            _save(db, innermost, "innermost")
    assert _contents(db) == ["outer", "inner", "innermost"]


def test_an_outer_failure_still_undoes_the_released_inner_writes(db: Database) -> None:
    with pytest.raises(InnerFailure):
        with db.write():
            with db.write() as inner:
                _save(db, inner, "inner")
            raise InnerFailure("outer")
    assert _contents(db) == []


def test_an_uncaught_inner_failure_rolls_back_everything(db: Database) -> None:
    with pytest.raises(InnerFailure, match="inner"):
        with db.write() as conn:
            _save(db, conn, "outer")
            with db.write() as inner:
                _save(db, inner, "inner")
                raise InnerFailure("inner")
    assert _contents(db) == []


def test_callbacks_of_a_rolled_back_savepoint(db: Database) -> None:
    events: list[str] = []
    with db.write():
        db.after_commit(lambda: events.append("outer committed"))
        db.after_rollback(lambda: events.append("outer rolled back"))
        with pytest.raises(InnerFailure):
            with db.write():
                db.after_commit(lambda: events.append("inner committed"))
                db.before_commit(lambda: events.append("inner before commit"))
                db.after_rollback(lambda: events.append("inner rolled back"))
                raise InnerFailure
        assert events == ["inner rolled back"]  # at once, not at the outer commit
    assert events == ["inner rolled back", "outer committed"]


def test_a_generation_bumped_in_a_rolled_back_savepoint_is_bumped_again(db: Database) -> None:
    with db.read() as conn:
        start = db.generation(conn)
    with db.write() as conn:
        with pytest.raises(InnerFailure):
            with db.write() as inner:
                assert db.bump_generation(inner) == (start, start + 1)
                raise InnerFailure
        assert db.generation(conn) == start  # the UPDATE was rolled back with it
        assert db.bump_generation(conn) == (start, start + 1)
        assert db.bump_generation(conn) == (start, start + 1)  # once per transaction
    with db.read() as conn:
        assert db.generation(conn) == start + 1


def test_forgetting_in_a_rolled_back_savepoint_leaves_the_text_searchable(db: Database) -> None:
    with db.write() as conn:
        seq = _save(db, conn, "Alice works at Acme")
    with db.write() as conn:
        with pytest.raises(InnerFailure):
            with db.write() as inner:
                _, orphans = memory_rows.delete_items(inner, [seq])
                db.delete_texts(inner, orphans)
                raise InnerFailure
    with db.read() as conn:
        assert [s for s, _ in text_rows.search_text(conn, "acme", ["n"])] == [seq]
    assert _contents(db) == ["Alice works at Acme"]


def test_a_failed_rollback_to_the_savepoint_does_not_hide_the_error(db: Database) -> None:
    """The whole transaction is gone under the savepoint (as when a driver error aborts it):
    the body's exception still reaches the caller, and nothing of it is stored."""
    with pytest.raises(InnerFailure, match="the original"):
        with db.write() as conn:
            with db.write() as inner:
                _save(db, inner, "lost")
                driver = inner.connection.driver_connection
                assert driver is not None
                driver.execute("ROLLBACK")  # the savepoint goes with the transaction
                raise InnerFailure("the original")
    assert _contents(db) == []
    with db.write() as conn:  # the database is usable afterwards
        _save(db, conn, "next")
    assert _contents(db) == ["next"]


def test_deleting_items_names_the_texts_no_item_shows_any_more(db: Database) -> None:
    """Each text left unshown comes with its tenant and whether it was indexed (an
    unindexed one, such as a short-term line, has no mentions or evidence to read)."""
    analyses = [memory_rows.TextAnalysis(), None, memory_rows.TextAnalysis(relations=True)]
    with db.write() as conn:
        indexed, plain, shared = text_rows.insert_texts(
            conn,
            [("ann", "", "Alice met Bob"), ("bob", "", "a line"), ("ann", "", "kept")],
            analyses,
        )
        rows = memory_rows.insert_items(
            conn,
            [
                memory_rows.NewItemRow(MemoryItem(content, user_id=user), namespace, None, text)
                for content, user, namespace, text in [
                    ("Alice met Bob", "ann", "n", indexed),
                    ("a line", "bob", "n", plain),
                    ("kept", "ann", "n", shared),
                    ("kept", "ann", "m", shared),
                ]
            ],
        )
    with db.write() as conn:
        deleted, orphans = memory_rows.delete_items_of_texts(conn, [r.seq for r in rows[:3]])
    assert deleted == 3
    assert sorted(orphans, key=lambda o: o.text_id) == [
        memory_rows.OrphanText(indexed, "ann", True),
        memory_rows.OrphanText(plain, "bob", False),
    ]
