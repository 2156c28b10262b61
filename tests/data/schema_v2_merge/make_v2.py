"""Write ``schema_v2.db`` and ``schema_v2_expected.json`` with a schema-2 graphmem.

Run as ``PYTHONPATH=<checkout of 905f13c> python make_v2.py DIR``. The file holds two tenants'
entity memories and one merge not undone whose merged entity had the largest entity id (on
schema 2, SQLite gives that id to the next entity saved: unmerge then collided).
``schema_v2_expected.json`` holds the graph tables' rows just before the merge: what unmerge
must restore.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

from graphmem import EntityMemory, SQLiteStorage

GRAPH_TABLES = ("entities", "aliases", "mentions", "relations", "relation_evidence")


def rows(path: Path) -> dict[str, list[list[object]]]:
    conn = sqlite3.connect(path)
    try:
        return {
            t: [list(r) for r in conn.execute(f"SELECT * FROM {t} ORDER BY id")]  # noqa: S608 (our names)
            for t in GRAPH_TABLES
        }
    finally:
        conn.close()


def main(out: Path) -> None:
    path = out / "schema_v2.db"
    path.unlink(missing_ok=True)
    storage = SQLiteStorage(path)
    EntityMemory(storage=storage, tenant="carol").save("Carol King chairs Globex in Berlin.")
    memory = EntityMemory(storage=storage)
    memory.save("Bob Stone works at Initech.")
    memory.save("Robert Stone signed the renewal with Initech.")
    storage.close()
    before = rows(path)
    storage = SQLiteStorage(path)
    merge_id = EntityMemory(storage=storage).merge_entities("Bob Stone", "Robert Stone")
    storage.close()
    expected = {"merge_id": merge_id, "rows_before_merge": before}
    (out / "schema_v2_expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
