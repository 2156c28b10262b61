"""Write the schema-1 fixtures with graphmem at commit 348e437.

Run as ``PYTHONPATH=<checkout of 348e437> python make_v1.py DIR``: a database, its export and
what that release reads back from the database (``schema_v1_expected.json``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys

import graphmem
from graphmem import CortexMemory, SQLiteStorage
from graphmem.store import memory_rows
from graphmem.transfer import export_jsonl

NAMESPACES = [
    "short_term",
    "long_term",
    "entity",
    "contextual.short_term",
    "contextual.long_term",
    "user.short_term",
    "user.long_term",
    "user.entity",
]


def main(out: str) -> None:
    print("graphmem from", graphmem.__file__)
    os.environ["WRITE_MEMORY"] = "1"
    db = os.path.join(out, "schema_v1.db")
    for path in (db, db + "-wal", db + "-shm"):
        if os.path.exists(path):
            os.remove(path)
    memory = CortexMemory(enable_user=True, persistence_path=db)
    memory.save_task_result(
        "Record the new hire",
        "Alice Johnson joined Acme Corp in Berlin as CTO.",
        agent_role="HR",
        importance=0.8,
    )
    memory.save_task_result(
        "Update the CRM",
        "Bob Stone from Initech met Alice Johnson in Paris.",
        agent_role="Sales",
        importance=0.4,
    )
    memory.save_agent_interaction(
        "Researcher", "found", "Robert Stone signed the Initech renewal.", importance=0.7
    )
    memory.save_cortex_decision(
        "Assign Atlas to Alice", "Alice Johnson knows Berlin", outcome="Accepted"
    )
    entities = memory.entity_memory
    assert entities is not None and memory.user_memory is not None
    assert memory.storage is not None
    entities.save("Dana Scott works at Northwind. She lives in Oslo.")
    entities.add_relation("Dana Scott", "mentors", "Alice Johnson")
    merge_id = entities.merge_entities("Bob Stone", "Robert Stone")
    memory.user_memory.save_memory("u1", "Prefers short answers about Kubernetes and Acme Corp")
    memory.user_memory.update_user_preferences("u1", {"verbosity": "low"})
    memory.storage.save("note", {"k": [1, 2]})
    with open(os.path.join(out, "schema_v1_export.jsonl"), "w") as handle:
        export_jsonl(memory.storage.database, handle)
    memory.storage.close()

    storage = SQLiteStorage(db)
    with storage.database.read() as conn:
        present = {row.namespace for row, _ in memory_rows.list_items(conn, NAMESPACES)}
        items = {
            ns: [
                [i.memory_id, i.content, i.metadata] for _, i in memory_rows.list_items(conn, [ns])
            ]
            for ns in sorted(present)
        }
    kg = storage.entity_index.graph("")
    expected = {
        "items": items,
        "edges": sorted(
            [kg.name_of(u), k, kg.name_of(v), d["support"]]
            for u, v, k, d in kg.graph.edges(keys=True, data=True)
        ),
        "entities": sorted(
            [d["name"], d["label"], d["mentions"]] for _, d in kg.graph.nodes(data=True)
        ),
        "typed_evidence": {
            f"{e.subject} {e.predicate} {e.object}": [
                [x.memory_id, x.sentence, x.rule] for x in e.evidence
            ]
            for e in kg.find(evidence=True)
            if e.predicate != "co_occurs"
        },
        "merge_id": merge_id,
    }
    with open(os.path.join(out, "schema_v1_expected.json"), "w") as handle:
        json.dump(expected, handle, indent=1, sort_keys=True)
    storage.close()
    conn = sqlite3.connect(db)  # one self-contained file: the WAL folded in
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()


if __name__ == "__main__":
    main(sys.argv[1])
