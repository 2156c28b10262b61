"""MemoryItem and MemoryEntry exactly as the seed ``memory_base.txt`` describes them (docs/contract.md §1)."""

from __future__ import annotations

import dataclasses
import json
import typing
import uuid
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from graphmem import MemoryEntry, MemoryItem
from graphmem.items import decode_metadata, encode_metadata

# (name, type, default or a marker for a factory) in the seed's order.
FACTORY = object()
SEED_FIELDS: list[tuple[str, Any, Any]] = [
    ("content", str, dataclasses.MISSING),
    ("memory_type", str, "general"),
    ("timestamp", datetime, FACTORY),
    ("metadata", dict[str, Any], FACTORY),
    ("agent_id", str | None, None),
    ("task_id", str | None, None),
    ("conversation_id", str | None, None),
    ("user_id", str | None, None),
    ("relevance_score", float, 1.0),
    ("access_count", int, 0),
    ("last_accessed", datetime | None, None),
    ("embedding", list[float] | None, None),
    ("memory_id", str, FACTORY),
]


class TestFields:
    def test_names_and_order_are_the_seeds(self) -> None:
        assert [f.name for f in dataclasses.fields(MemoryItem)] == [n for n, _, _ in SEED_FIELDS]

    @pytest.mark.parametrize(("name", "expected_type", "default"), SEED_FIELDS)
    def test_type_and_default(self, name: str, expected_type: Any, default: Any) -> None:
        hints = typing.get_type_hints(MemoryItem)
        assert hints[name] == expected_type
        f = {f.name: f for f in dataclasses.fields(MemoryItem)}[name]
        if default is FACTORY:
            assert f.default is dataclasses.MISSING
            assert f.default_factory is not dataclasses.MISSING
        elif default is dataclasses.MISSING:  # required
            assert f.default is dataclasses.MISSING
            assert f.default_factory is dataclasses.MISSING
        else:
            assert f.default == default
            assert type(f.default) is type(default)
            assert f.default_factory is dataclasses.MISSING

    def test_content_is_required(self) -> None:
        with pytest.raises(TypeError):
            MemoryItem()  # type: ignore[call-arg]

    def test_factories_give_fresh_values(self) -> None:
        before = datetime.now(UTC)
        a, b = MemoryItem("a"), MemoryItem("b")
        after = datetime.now(UTC)
        assert before <= a.timestamp <= after
        assert a.metadata == {} and a.metadata is not b.metadata
        assert a.memory_id != b.memory_id
        assert str(uuid.UUID(a.memory_id)) == a.memory_id
        assert uuid.UUID(a.memory_id).version == 4

    def test_memory_entry_is_an_alias(self) -> None:
        assert MemoryEntry is MemoryItem
        assert isinstance(MemoryEntry("x"), MemoryItem)


def _full_item() -> MemoryItem:
    return MemoryItem(
        content="Alice Johnson joined Acme Corp",
        memory_type="long_term",
        timestamp=datetime(2025, 3, 4, 5, 6, 7, 891011, tzinfo=UTC),
        metadata={
            "importance": 0.8,
            "when": datetime(2024, 1, 2, 3, 4, 5),
            "day": date(2024, 6, 7),
            "nested": {"tags": ["a", "b"], "deadline": datetime(2030, 1, 1)},
            "none": None,
            "flag": True,
        },
        agent_id="researcher",
        task_id="t-1",
        conversation_id="c-1",
        user_id="u-1",
        relevance_score=0.25,
        access_count=7,
        last_accessed=datetime(2025, 3, 5, 0, 0, 1, tzinfo=UTC),
        embedding=[0.1, -0.5, 3.0],
        memory_id="m-123",
    )


class TestSerialisation:
    def test_to_dict_is_json_serialisable_with_datetimes_in_metadata(self) -> None:
        item = _full_item()
        text = json.dumps(item.to_dict())
        data = json.loads(text)
        assert data["timestamp"] == "2025-03-04T05:06:07.891011+00:00"
        assert data["last_accessed"] == "2025-03-05T00:00:01+00:00"
        assert "2024-01-02T03:04:05" in text and "2030-01-01T00:00:00" in text
        assert "2024-06-07" in text
        assert data["embedding"] == [0.1, -0.5, 3.0]
        assert data["memory_id"] == "m-123"
        assert data["content"] == "Alice Johnson joined Acme Corp"

    def test_to_dict_has_every_field(self) -> None:
        keys = set(_full_item().to_dict())
        assert keys == {f.name for f in dataclasses.fields(MemoryItem)}

    def test_round_trip_every_field(self) -> None:
        item = _full_item()
        back = MemoryItem.from_dict(item.to_dict())
        for f in dataclasses.fields(MemoryItem):
            assert getattr(back, f.name) == getattr(item, f.name), f.name
        assert back == item
        assert isinstance(back.metadata["when"], datetime)
        assert isinstance(back.metadata["day"], date)
        assert isinstance(back.metadata["nested"]["deadline"], datetime)

    def test_round_trip_through_json_text(self) -> None:
        item = _full_item()
        assert MemoryItem.from_dict(json.loads(json.dumps(item.to_dict()))) == item

    def test_round_trip_of_defaults(self) -> None:
        item = MemoryItem("plain")
        back = MemoryItem.from_dict(item.to_dict())
        assert back == item
        assert back.embedding is None and back.last_accessed is None

    def test_to_dict_does_not_share_metadata_with_the_item(self) -> None:
        item = _full_item()
        data = item.to_dict()
        data["metadata"]["nested"]["tags"].append("c")
        assert item.metadata["nested"]["tags"] == ["a", "b"]

    def test_from_dict_accepts_calute_output_without_embedding(self) -> None:
        # calute 0.1.5's to_dict has no "embedding" key.
        data = _full_item().to_dict()
        del data["embedding"]
        assert MemoryItem.from_dict(data).embedding is None

    def test_from_dict_rejects_unknown_fields(self) -> None:
        with pytest.raises(ValueError, match="colour"):
            MemoryItem.from_dict({"content": "x", "colour": "red"})

    def test_metadata_codec_round_trip(self) -> None:
        meta = {"when": datetime(2024, 1, 2) + timedelta(microseconds=5), "n": [1, 2.5, "x"]}
        assert decode_metadata(encode_metadata(meta)) == meta
