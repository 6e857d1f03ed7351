"""Hostile metadata on the real engines (issue 12, finding 2; docs/spec.md §3.6).

Before the shared limits, one upsert of metadata nested 126 levels made every filtered query of the edge
shard raise a raw ``pyo3_runtime.PanicException`` (a ``BaseException`` that escaped all error wrapping);
the record could not be deleted and the shard no longer reopened ("failed to read WAL entry"). The filter
document doubled with each level of arrays of objects, so 150 bytes nested 40 levels deep took 26 s and
53 MB. Here: metadata at the shared depth limit is stored, filtered and survives a restart; metadata whose
filter document would explode is refused before any I/O (declared deviation ``filter-document-size``);
and a panic of the engine, however reached, is a ``VectorStoreError``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from mastra_memory.errors import ValidationError, VectorStoreError
from mastra_memory.metadata_limits import MAX_METADATA_DEPTH

from mastra_memory_qdrant.backend import PointRecord
from mastra_memory_qdrant.capabilities import QDRANT_CAPABILITIES
from mastra_memory_qdrant.layout import (
    MAX_FILTER_DOCUMENT_SIZE,
    build_payload,
    filter_document,
    filter_document_size,
)
from mastra_memory_qdrant.store import QdrantVector, point_id
from qdrant_helpers import settings_for

_Q = [1.0, 0.0, 0.0, 0.0]


def dicts(levels: int, leaf: Any = 1) -> dict[str, Any]:
    """``levels`` nested dicts."""
    value: Any = leaf
    for _ in range(levels - 1):
        value = {"k": value}
    return {"k": value}


def object_arrays(levels: int, leaf: Any = 1) -> dict[str, Any]:
    """``levels`` containers alternating dict and list: ``{"k": [{"k": [... leaf]}]}``."""
    value: Any = leaf
    for i in range(levels - 1, 0, -1):
        value = [value] if i % 2 == 1 else {"k": value}
    return {"k": value}


async def ids(store: QdrantVector, index: str, flt: Any = None) -> list[str]:
    return sorted(h.id for h in await store.query(index, _Q, top_k=10, filter=flt))


async def test_metadata_at_the_depth_limit_is_filtered_and_survives_a_restart(tmp_path: Path) -> None:
    settings = settings_for("edge", tmp_path)
    store = QdrantVector(settings)
    try:
        await store.create_index("deep", 4)
        await store.upsert(
            "deep", [_Q, [0.0, 1.0, 0.0, 0.0]], [{"a": 1}, dicts(MAX_METADATA_DEPTH)], ["a", "d"]
        )
        assert await ids(store, "deep", {"a": 1}) == ["a"]
        assert await ids(store, "deep", {"k": {"$exists": True}}) == ["d"]
        await store.delete_vector("deep", "a")
    finally:
        await store.close()
    store = QdrantVector(settings)  # the write-ahead log of a 126-level payload did not reopen
    try:
        assert (await store.describe_index("deep")).count == 1
        assert await ids(store, "deep", {"k": {"$exists": True}}) == ["d"]
    finally:
        await store.close()


def chain(levels: int, key: str) -> dict[str, Any]:
    """``levels`` nested dicts under the same (long) key."""
    value: dict[str, Any] = {key: 1}
    for _ in range(levels - 1):
        value = {key: value}
    return value


@pytest.mark.parametrize(
    "metadata",
    [
        object_arrays(9),
        object_arrays(20),
        object_arrays(12, leaf="x" * 100),
        chain(32, "k" * 1_000),
        {f"key{i}": "x" * 200 for i in range(1_000)},
        {"l": list(range(30_000))},
        {"l": [{"a": i, "b": [i, {"c": "x"}]} for i in range(300)]},
        {f"ключ{i}": {"вложен": [i, {"глубже": None}]} for i in range(200)},
    ],
    ids=["9-levels", "20-levels", "string-leaf", "long-keys", "wide", "long-list", "objects", "unicode"],
)
def test_the_size_estimate_bounds_the_real_filter_document(metadata: dict[str, Any]) -> None:
    real = len(json.dumps(filter_document(metadata), ensure_ascii=False))
    assert real <= filter_document_size(metadata, stop_above=10**12) <= 5 * real


def test_what_the_limit_admits_is_built_quickly() -> None:
    levels = max(
        n for n in range(1, 40) if filter_document_size(object_arrays(n)) <= MAX_FILTER_DOCUMENT_SIZE
    )
    start = time.perf_counter()
    payload = build_payload("x", object_arrays(levels), 1.0)
    assert time.perf_counter() - start < 3.0  # a hang guard: measured 0.05-0.3 s
    assert len(json.dumps(payload)) <= MAX_FILTER_DOCUMENT_SIZE
    # 32 nested keys of 4,000 characters: 128 KB within the shared limits, a 26 MB filter document
    assert filter_document_size(chain(32, "é" * 4_000)) > MAX_FILTER_DOCUMENT_SIZE


@pytest.mark.parametrize("mode", ["edge", "memory"])
async def test_exploding_object_arrays_are_refused_before_any_io(mode: str, tmp_path: Path) -> None:
    assert QDRANT_CAPABILITIES.deviation("filter-document-size") is not None
    store = QdrantVector(settings_for(mode, tmp_path))
    try:
        await store.create_index("arrays", 4)
        await store.upsert("arrays", [_Q], [{"k": [{"k": [{"v": 1}]}]}], ["kept"])
        bomb = object_arrays(MAX_METADATA_DEPTH)  # 145 bytes; its filter document would be 3.3 MB
        assert len(json.dumps(bomb)) < 200
        start = time.perf_counter()
        with pytest.raises(ValidationError) as raised:
            await store.upsert("arrays", [_Q], [bomb], ["bomb"])
        assert time.perf_counter() - start < 1.0
        assert raised.value.id == "MASTRA_VECTOR_QDRANT_UPSERT_INVALID_METADATA"
        assert "filter-document-size" in str(raised.value)
        with pytest.raises(ValidationError) as updating:
            await store.update_vector("arrays", id="kept", update={"metadata": bomb})
        assert updating.value.id == "MASTRA_VECTOR_QDRANT_UPDATE_VECTOR_INVALID_METADATA"
        # A few levels of arrays of objects are ordinary data: stored and matched exactly.
        assert await ids(store, "arrays", {"k": {"$elemMatch": {"k.v": 1}}}) == ["kept"]
        hits = await store.query("arrays", _Q, top_k=5)
        assert [(h.id, h.metadata) for h in hits] == [("kept", {"k": [{"k": [{"v": 1}]}]})]
    finally:
        await store.close()


async def test_an_engine_panic_is_a_vector_store_error(tmp_path: Path) -> None:
    store = QdrantVector(settings_for("edge", tmp_path))
    try:
        await store.create_index("panic", 4)
        await store.upsert("panic", [_Q], [{"a": 1}], ["a"])
        # What an older version let through: a payload nested past the engine's recursion limit,
        # written straight to the engine (the shared validation now refuses it).
        payload = build_payload("deep", dicts(130), 1.0)
        backend = store._backend
        await backend.upsert("panic", [PointRecord(point_id("deep"), [0.0, 1.0, 0.0, 0.0], payload)])
        with pytest.raises(VectorStoreError) as raised:
            await store.query("panic", _Q, filter={"a": 1})
        assert raised.value.id == "MASTRA_VECTOR_QDRANT_ENGINE_PANIC"
        assert type(raised.value.__cause__).__name__ == "PanicException"
        assert "recreate the index" in str(raised.value)
    finally:
        await store.close()
