"""A store that lasts (issue 34): a default ``CortexMemory`` through many saves of varied text.

Saves ``--saves`` generated results (varied real-looking text: tests/_varied_text.py) one by
one through ``save_task_result`` into a default persisted memory (``WRITE_MEMORY=1``, a
``persistence_path``, every capacity default) and, with ``--in-memory``, into an in-memory
one; deletes one result every 50 saves; after every 1,000 saves runs FTS5's own
``integrity-check`` (persisted) and a search for a word of the newest text; at the end reopens
the file and searches it. Prints per-1,000 save times (ms per save), so growth with the store
shows too.

Example:
    python bench/long_run_store.py --saves 20000
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from common import REPO_ROOT, machine_line

sys.path.insert(0, str(REPO_ROOT / "tests"))

from _varied_text import varied_texts  # noqa: E402

from graphmem import CortexMemory  # noqa: E402
from graphmem.store.engine import SQLITE_MODULE  # noqa: E402

_INTEGRITY = "INSERT INTO texts_fts(texts_fts, rank) VALUES ('integrity-check', 1)"


def integrity_ok(path: Path) -> bool:
    conn = SQLITE_MODULE.connect(str(path))
    try:
        conn.execute(_INTEGRITY)
        return True
    except SQLITE_MODULE.DatabaseError as exc:
        print(f"  integrity-check FAILED: {exc}")
        return False
    finally:
        conn.close()


def run(saves: int, path: Path | None) -> bool:
    os.environ["WRITE_MEMORY"] = "1"
    memory = CortexMemory(persistence_path=str(path) if path else None)
    texts = varied_texts(seed=20_000)
    ids: list[str] = []
    sound = True
    started = time.perf_counter()
    for i in range(1, saves + 1):
        text = next(texts)
        ids.append(memory.save_task_result(f"Read source {i}", text, "Researcher"))
        if i % 50 == 0:
            memory.delete(ids[-25])
        if i % 1_000 == 0:
            elapsed = time.perf_counter() - started
            word = max(text.rstrip(".").split(), key=len)
            found = any(text in str(hit) for hit in memory.search(word, limit=20))
            ok = integrity_ok(path) if path else True
            sound = sound and ok and found
            print(
                f"{i:>6} saves: {elapsed / 1_000 * 1_000:.1f} ms/save, integrity "
                f"{'ok' if ok else 'DAMAGED'}, newest text found by search: {found}",
                flush=True,
            )
            started = time.perf_counter()
    if path:
        reopened = CortexMemory(persistence_path=str(path))
        found = bool(reopened.search("Read"))
        print(
            f"reopened: searches answer: {found}; integrity {'ok' if integrity_ok(path) else 'DAMAGED'}"
        )
        sound = sound and found
    return sound


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=20_000)
    parser.add_argument("--in-memory", action="store_true", help="an in-memory store instead")
    args = parser.parse_args(argv)
    print(machine_line())
    with tempfile.TemporaryDirectory() as tmp:
        path = None if args.in_memory else Path(tmp) / "memory.db"
        print(f"{'in-memory' if path is None else 'persisted'} CortexMemory, {args.saves} saves")
        sound = run(args.saves, path)
    print("RESULT:", "sound" if sound else "BROKEN")
    sys.exit(0 if sound else 1)


if __name__ == "__main__":
    main()
