"""Recall by meaning: the embedding backends, vectors stored with the memory, the semantic
term of the ranking and its explanations, the switch (issue 29)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from graphmem import LongTermMemory
from graphmem.errors import InvalidArgumentError
from graphmem.extract import embeddings
from graphmem.retrieval.search import _stem
from graphmem.store.engine import SQLITE_MODULE as sqlite3  # the SQLite graphmem runs on
from graphmem.store.query_text import query_terms
from graphmem.store.vectors import decode_embedding, encode_embedding, vector_matrix

PARAPHRASES = json.loads(
    (Path(__file__).parent / "data" / "paraphrases.json").read_text(encoding="utf-8")
)

pytest.importorskip("wordllama", reason="graphmem[semantic] is not installed")


@pytest.fixture
def static(monkeypatch: pytest.MonkeyPatch) -> embeddings.Embedder:
    monkeypatch.setenv(embeddings.SWITCH_VARIABLE, "static")
    embedder = embeddings.get_embedder()
    assert embedder is not None
    return embedder


def content_stems(text: str) -> set[str]:
    return {_stem(word) for word in query_terms(text)}


# ------------------------------------------------------------------------------- backends
def test_static_model_loads_from_its_wheel_and_ranks_paraphrases(
    static: embeddings.Embedder,
) -> None:
    assert (static.name, static.dim) == ("wordllama-l2-supercat-256", 256)
    notes = static.embed(["A client cannot sign in through SSO.", "The summer party is on a boat."])
    assert notes.shape == (2, 256) and notes.dtype == np.float32
    assert np.allclose(np.linalg.norm(notes, axis=1), 1.0, atol=1e-5)
    query = static.embed_query("login problems")
    assert notes[0] @ query > notes[1] @ query


def test_switch_off_by_default_and_bad_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(embeddings.SWITCH_VARIABLE, raising=False)
    assert embeddings.get_embedder() is None
    monkeypatch.setenv(embeddings.SWITCH_VARIABLE, "0")
    assert embeddings.get_embedder() is None
    monkeypatch.setenv(embeddings.SWITCH_VARIABLE, "word2vec")
    with pytest.raises(InvalidArgumentError, match="GRAPHMEM_SEMANTIC='word2vec': choose one of"):
        embeddings.get_embedder()


# ------------------------------------------------------------------------------- storage
def test_float32_vectors_are_stored_compactly_and_other_vectors_exactly() -> None:
    vector = np.array([0.5, -0.25, 1e-3], dtype=np.float32).tolist()
    stored = encode_embedding(vector)
    assert stored.startswith("f32:") and decode_embedding(stored) == vector
    precise = [0.1, 0.2, 1 / 3]
    assert json.loads(encode_embedding(precise)) == precise
    assert decode_embedding(encode_embedding(precise)) == precise
    matrix = vector_matrix([stored, encode_embedding(precise), encode_embedding([0.5])], 3)
    assert matrix[0].tolist() == vector and not matrix[1:].any()


def test_saved_items_carry_the_vector_of_their_text_across_a_reopen(
    static: embeddings.Embedder, tmp_path: Path, write_memory_on: None
) -> None:
    path = str(tmp_path / "m.db")
    memory = LongTermMemory(db_path=path)
    saved = memory.save("Harbor Freight paused the pilot until next quarter.")
    own = memory.save("Given vector")
    assert memory.update(own.memory_id, {"embedding": [0.1, 0.2, 0.3]})  # the caller's own
    expected = static.embed(["Harbor Freight paused the pilot until next quarter."])[0]
    assert saved.embedding == expected.tolist()
    reopened = LongTermMemory(db_path=path)
    assert reopened.retrieve(saved.memory_id).embedding == expected.tolist()
    assert reopened.retrieve(own.memory_id).embedding == [0.1, 0.2, 0.3]
    with sqlite3.connect(path) as conn:
        [(column,)] = conn.execute(
            "SELECT embedding FROM memories WHERE memory_id = ?", (saved.memory_id,)
        ).fetchall()
    assert column.startswith("f32:") and len(column) < 1400


def test_a_content_update_embeds_the_new_content(static: embeddings.Embedder) -> None:
    memory = LongTermMemory()
    item = memory.save("Lunch was good.")
    assert memory.update(item.memory_id, {"content": "The radiators stopped working."})
    changed = memory.retrieve(item.memory_id)
    assert changed is not None
    assert changed.embedding == static.embed(["The radiators stopped working."])[0].tolist()


def test_nothing_is_embedded_when_the_switch_is_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(embeddings.SWITCH_VARIABLE, "0")
    memory = LongTermMemory()
    item = memory.save("Grace Liu: the radiators stopped working.")
    assert item.embedding is None
    hits = memory.search_hits("What did Grace Liu say about the heating?")
    assert all("semantic" not in hit.explanation.sources for hit in hits)


# ------------------------------------------------------------------------------- ranking
def paraphrase_memory() -> tuple[LongTermMemory, list[str]]:
    memory = LongTermMemory()
    for line in PARAPHRASES["background"]:
        memory.save(line)
    ids = [
        memory.save(pair["note"], metadata={"speaker": pair["speaker"]}).memory_id
        for pair in PARAPHRASES["pairs"]
    ]
    # Newer than the notes: every tie of the ranking goes against the notes.
    for speaker in sorted({pair["speaker"] for pair in PARAPHRASES["pairs"]}):
        for line in PARAPHRASES["small_talk"]:
            memory.save(line, metadata={"speaker": speaker})
    return memory, ids


def test_the_paraphrase_set_shares_no_content_word() -> None:
    pairs = PARAPHRASES["pairs"]
    assert len(pairs) >= 30
    for pair in pairs:
        note = content_stems(pair["note"])
        assert not content_stems(pair["query"]) & note, pair
        assert not content_stems(pair["speaker"]) & note, pair


def test_paraphrases_are_found_at_rank_5(static: embeddings.Embedder) -> None:
    memory, ids = paraphrase_memory()
    found = 0
    for pair, memory_id in zip(PARAPHRASES["pairs"], ids, strict=True):
        top = [item.memory_id for item in memory.search(pair["query"], limit=5)]
        found += memory_id in top
    assert found / len(ids) >= 0.6, found


def test_the_explanation_names_the_semantic_term(static: embeddings.Embedder) -> None:
    memory = LongTermMemory()
    memory.save("Priya Nair joined Northwind as head of customer support.")
    note = memory.save("A client cannot sign in through SSO.", metadata={"speaker": "Priya Nair"})
    memory.save("Good morning, coffee is ready.", metadata={"speaker": "Priya Nair"})
    hits = memory.search_hits("Which customer had login problems, according to Priya Nair?")
    [hit] = [h for h in hits if h.item.memory_id == note.memory_id]
    assert "semantic" in hit.explanation.sources and hit.explanation.semantic > 0
    assert hit.explanation.similar_to and set(hit.explanation.similar_to) <= set(
        query_terms(note.content)
    )
    coffee = [h for h in hits if "coffee" in h.item.content]
    assert all(h.score < hit.score for h in coffee)


def test_meaning_is_a_boost_not_a_filter(static: embeddings.Embedder) -> None:
    # The question names the wrong person (LoCoMo's adversarial questions): the other
    # person's words that match it are still found, first.
    memory = LongTermMemory()
    memory.save("Grace Liu and Marco Rossi share an office.")
    answer = memory.save("I adopted a puppy named Biscuit.", metadata={"speaker": "Marco Rossi"})
    for line in PARAPHRASES["small_talk"]:
        memory.save(line, metadata={"speaker": "Grace Liu"})
    hits = memory.search_hits("What is the name of the puppy Grace Liu adopted?")
    assert hits[0].item.memory_id == answer.memory_id
