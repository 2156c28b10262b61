"""JSON-lines worker that runs calute 0.1.5's memory code inside its own virtual environment.

Started by ``bench/common.py`` (``CaluteWorker``) with the calute venv's python; never imported by
graphmem. Protocol: one JSON request per line on stdin (``{"cmd": ..., ...}``), one JSON reply per
line on stdout (``{"ok": true, ...}`` / ``{"ok": false, "error": ...}``). Anything calute prints
goes to stderr, so stdout carries only replies.

Run ``python bench/calute_worker.py --help`` for the list of commands.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import resource
import sys
import time
import traceback
from typing import Any

PROTOCOL_OUT = sys.stdout
sys.stdout = sys.stderr  # calute (and its dependencies) may print; keep the protocol clean

IMPORT_NOTE = ""


def _import_calute() -> tuple[Any, Any]:
    """Import calute.memory and CortexMemory; fall back to loading the modules by file path."""
    global IMPORT_NOTE
    try:
        mem = importlib.import_module("calute.memory")
        cortex_mod = importlib.import_module("calute.cortex.memory_integration")
        IMPORT_NOTE = "imported calute.memory and calute.cortex.memory_integration normally"
        return mem, cortex_mod.CortexMemory
    except Exception as exc:  # heavy optional deps of calute's package __init__ may fail
        spec = importlib.util.find_spec("calute")
        if spec is None or not spec.submodule_search_locations:
            raise
        root = list(spec.submodule_search_locations)[0]
        import types

        for pkg, path in (("calute", root), ("calute.cortex", os.path.join(root, "cortex"))):
            module = types.ModuleType(pkg)
            module.__path__ = [path]
            sys.modules[pkg] = module
        mem = importlib.import_module("calute.memory")
        file = os.path.join(root, "cortex", "memory_integration.py")
        mspec = importlib.util.spec_from_file_location("calute.cortex.memory_integration", file)
        assert mspec is not None and mspec.loader is not None
        cortex_mod = importlib.util.module_from_spec(mspec)
        sys.modules["calute.cortex.memory_integration"] = cortex_mod
        mspec.loader.exec_module(cortex_mod)
        IMPORT_NOTE = (
            f"`import calute` failed ({type(exc).__name__}: {exc}); loaded calute/memory and "
            "calute/cortex/memory_integration.py by path"
        )
        return mem, cortex_mod.CortexMemory


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class Worker:
    def __init__(self) -> None:
        self.mem, self.CortexMemory = _import_calute()
        self.ltm: Any = None
        self.id_of: dict[str, str] = {}
        self.cortex: Any = None

    # -- LongTermMemory (retrieval benchmarks) ------------------------------------------------
    def hello(self) -> dict[str, Any]:
        try:
            from importlib.metadata import version

            ver = version("calute")
        except Exception:
            ver = "unknown"
        return {"calute_version": ver, "python": sys.version.split()[0], "import": IMPORT_NOTE}

    def ltm_new(self, **kwargs: Any) -> dict[str, Any]:
        # As shipped: LongTermMemory() with its defaults (enable_embeddings=True -> RAGStorage).
        self.ltm = self.mem.LongTermMemory(**kwargs)
        self.id_of = {}
        return {}

    def ltm_save_many(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        t0 = time.perf_counter()
        for r in records:
            item = self.ltm.save(
                content=r["content"],
                metadata=dict(r.get("metadata") or {}),
                agent_id=r.get("agent_id"),
                conversation_id=r.get("conversation_id"),
            )
            self.id_of[item.memory_id] = r["id"]
        return {"seconds": time.perf_counter() - t0, "n": len(records)}

    def ltm_search_many(self, queries: list[str], k: int, use_semantic: bool = True) -> dict:
        t0 = time.perf_counter()
        results = []
        for q in queries:
            hits = self.ltm.search(q, limit=k, use_semantic=use_semantic)
            results.append([self.id_of.get(h.memory_id, "?") for h in hits])
        return {"seconds": time.perf_counter() - t0, "results": results}

    # -- EntityMemory (entity benchmark) ------------------------------------------------------
    def entity_docs(self, docs: list[dict[str, Any]]) -> dict[str, Any]:
        """For each doc: a fresh EntityMemory, one save() per unit of text.

        Returns the entity names (``entities`` keys), each unit's extracted entity list
        (``_extract_entities``, which ``save`` stores in metadata), and the relationship edges with
        the index of the unit whose save produced them.
        """
        t0 = time.perf_counter()
        out = []
        for doc in docs:
            em = self.mem.EntityMemory()
            seen: dict[tuple[str, str, str], int] = {}
            unit_entities = []
            edges = []
            for ui, text in enumerate(doc["units"]):
                item = em.save(text)
                unit_entities.append(sorted(item.metadata.get("entities", [])))
                counts: dict[tuple[str, str, str], int] = {}
                for pred, pairs in em.relationships.items():
                    for s, o in pairs:
                        key = (s, pred, o)
                        counts[key] = counts.get(key, 0) + 1
                for key, c in counts.items():
                    if c > seen.get(key, 0):
                        edges.append([key[0], key[1], key[2], ui])
                seen = counts
            out.append(
                {
                    "doc_id": doc["doc_id"],
                    "entities": sorted(em.entities),
                    "unit_entities": unit_entities,
                    "edges": edges,
                }
            )
        return {"seconds": time.perf_counter() - t0, "docs": out}

    def extract_entities(self, texts: list[str]) -> dict[str, Any]:
        em = self.mem.EntityMemory()
        t0 = time.perf_counter()
        ents = [sorted(em._extract_entities(t)) for t in texts]
        return {"seconds": time.perf_counter() - t0, "entities": ents}

    # -- CortexMemory (speed benchmark) -------------------------------------------------------
    def cortex_new(self, persistence_path: str | None = None, **kwargs: Any) -> dict[str, Any]:
        t0 = time.perf_counter()
        self.cortex = self.CortexMemory(persistence_path=persistence_path, **kwargs)
        return {"seconds": time.perf_counter() - t0, "tiers": self._tier_sizes()}

    def _tier_sizes(self) -> dict[str, int | None]:
        c = self.cortex
        out: dict[str, int | None] = {}
        for name in ("short_term", "long_term", "entity_memory", "user_memory", "contextual"):
            tier = getattr(c, name, None)
            out[name] = None if tier is None else len(tier)
        if getattr(c, "contextual", None) is not None:
            out["contextual.long_term"] = len(c.contextual.long_term)
            out["contextual.short_term"] = len(c.contextual.short_term)
        if getattr(c, "entity_memory", None) is not None:
            out["entities"] = len(c.entity_memory.entities)
        return out

    def cortex_save_task_results(self, tasks: list[dict[str, Any]]) -> dict[str, Any]:
        per_call = []
        t0 = time.perf_counter()
        for t in tasks:
            s = time.perf_counter()
            self.cortex.save_task_result(
                task_description=t["task_description"],
                result=t["result"],
                agent_role=t["agent_role"],
                importance=t.get("importance", 0.5),
                task_metadata=t.get("task_metadata"),
            )
            per_call.append(time.perf_counter() - s)
        return {
            "seconds": time.perf_counter() - t0,
            "per_call": per_call,
            "tiers": self._tier_sizes(),
            "peak_rss_mb": peak_rss_mb(),
        }

    def cortex_build_context(self, tasks: list[dict[str, Any]]) -> dict[str, Any]:
        lat = []
        lengths = []
        for t in tasks:
            s = time.perf_counter()
            ctx = self.cortex.build_context_for_task(
                task_description=t["task_description"], agent_role=t.get("agent_role")
            )
            lat.append(time.perf_counter() - s)
            lengths.append(len(ctx))
        return {"latencies": lat, "context_chars": lengths, "peak_rss_mb": peak_rss_mb()}

    def peak_rss(self) -> dict[str, Any]:
        return {"peak_rss_mb": peak_rss_mb()}


COMMANDS = (
    "hello ltm_new ltm_save_many ltm_search_many entity_docs extract_entities cortex_new "
    "cortex_save_task_results cortex_build_context peak_rss quit"
)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__ + "\nCommands: " + COMMANDS, file=PROTOCOL_OUT)
        return
    worker = Worker()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            cmd = req.pop("cmd")
            if cmd == "quit":
                PROTOCOL_OUT.write(json.dumps({"ok": True}) + "\n")
                PROTOCOL_OUT.flush()
                return
            if cmd not in COMMANDS.split() or cmd.startswith("_"):
                raise ValueError(f"unknown command {cmd!r}")
            reply = getattr(worker, cmd)(**req)
            reply["ok"] = True
        except Exception as exc:
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"}
        PROTOCOL_OUT.write(json.dumps(reply, default=str) + "\n")
        PROTOCOL_OUT.flush()


if __name__ == "__main__":
    main()
