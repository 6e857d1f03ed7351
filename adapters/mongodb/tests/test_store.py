"""The vector store against a real server (FerretDB v1 unless MASTRA_MEMORY_TEST_MONGODB_URI is set)."""

from __future__ import annotations

from typing import Any

import pytest
from mastra_memory.errors import CapabilityError, ValidationError
from mastra_memory.filters.evaluate import evaluate
from pymongo import AsyncMongoClient

from mastra_memory_mongodb import MongoDBSettings
from mastra_memory_mongodb.store import MongoDBVector

RECORDS: dict[str, dict[str, Any]] = {
    "scalars": {"a": [1, 2]},
    "empty": {"a": []},
    "object-without-b": {"a": [{}]},
    "b-null": {"a": [{"b": None}]},
    "b-one": {"a": [{"b": 1}]},
    "nested": {"a": [[1, [2]], {"b": 3}], "": "empty key", "~t": 1},
    "missing": {},
}


async def _load(store: MongoDBVector) -> None:
    await store.create_index("t", 3)
    ids = list(RECORDS)
    vectors = [[1.0, float(i), 0.5] for i in range(len(ids))]
    await store.upsert("t", vectors, [RECORDS[i] for i in ids], ids=ids)


async def _ids(store: MongoDBVector, flt: dict[str, object]) -> set[str]:
    return {h.id for h in await store.query("t", [1.0, 0.0, 0.0], top_k=20, filter=flt)}


def _expected(flt: dict[str, object]) -> set[str]:
    return {rid for rid, meta in RECORDS.items() if evaluate(flt, meta)}


@pytest.mark.parametrize(
    "flt",
    [
        {"a.b": None},
        {"a.b": {"$ne": None}},
        {"a.b": {"$exists": True}},
        {"a.b": {"$in": [None, 3]}},
        {"a": {"$elemMatch": {"b": 1}}},
        {"a": {"$contains": 2}},
        {"a": {"$size": 2}},
        {"a": 1},
        {"~t": 1},
    ],
)
async def test_filters_equal_the_reference_evaluator(store: MongoDBVector, flt: dict[str, object]) -> None:
    await _load(store)
    assert await _ids(store, flt) == _expected(flt)


async def test_metadata_round_trips_with_inner_lists_and_odd_keys(store: MongoDBVector) -> None:
    await _load(store)
    hits = await store.query("t", None, top_k=20, include_vector=True)
    assert {h.id: h.metadata for h in hits} == RECORDS
    assert all(h.vector is not None and len(h.vector) == 3 for h in hits)


async def test_delete_and_update_by_filter_decide_the_residual_exactly(store: MongoDBVector) -> None:
    await _load(store)
    await store.update_vector("t", filter={"a.b": None}, update={"metadata": {"flag": True}})
    assert await _ids(store, {"flag": True}) == _expected({"a.b": None})
    await store.delete_vectors("t", filter={"flag": True})
    assert await _ids(store, {}) == set(RECORDS) - _expected({"a.b": None})


async def test_ferretdb_answers_missing_through_lists_differently(
    server: tuple[str, str], store: MongoDBVector, settings: MongoDBSettings
) -> None:
    """Why the FerretDB dialect decides `{"a.b": None}` itself: the server's own answer differs."""
    uri, dialect = server
    if dialect != "ferretdb":
        pytest.skip("a FerretDB gap")
    await _load(store)
    client: AsyncMongoClient[dict[str, object]] = AsyncMongoClient(uri)
    try:
        collection = client[settings.db_name]["mastra_vec_t"]
        raw = {d["_id"] async for d in collection.find({"metadata.a.b": None}, {"_id": 1})}
    finally:
        await client.close()
    assert raw != _expected({"a.b": None})
    assert await _ids(store, {"a.b": None}) == _expected({"a.b": None})


async def test_the_mongodb_dialect_refuses_a_ferretdb_server(server: tuple[str, str]) -> None:
    uri, dialect = server
    if dialect != "ferretdb":
        pytest.skip("needs FerretDB")
    store = MongoDBVector(MongoDBSettings(url=uri, db_name="refused", search_mode="exact"))
    try:
        with pytest.raises(CapabilityError, match="dialect='ferretdb'"):
            await store.list_indexes()
    finally:
        await store.close()


@pytest.mark.parametrize(
    "metadata",
    [{"$x": 1}, {"a.b": 1}, {"nul\x00": 1}, {"s": "a\x00"}, {"n": 2**63}, {"deep": {"k": [{"$y": 1}]}}],
)
async def test_unstorable_metadata_is_rejected_before_any_write(
    store: MongoDBVector, metadata: dict[str, object]
) -> None:
    await store.create_index("t", 3)
    with pytest.raises(ValidationError) as caught:
        await store.upsert("t", [[1.0, 0.0, 0.0]], [metadata], ids=["x"])
    assert caught.value.id == "MASTRA_VECTOR_MONGODB_UPSERT_INVALID_METADATA"
    assert (await store.describe_index("t")).count == 0


async def test_search_mode_auto_finds_no_atlas_search_on_ferretdb(
    server: tuple[str, str], settings: MongoDBSettings
) -> None:
    uri, dialect = server
    store = MongoDBVector(MongoDBSettings(url=uri, db_name=settings.db_name, dialect=dialect))
    try:
        await store.create_index("t", 3)
        await store.upsert("t", [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], [{"k": 1}, {"k": 2}], ids=["a", "b"])
        hits = await store.query("t", [1.0, 0.0, 0.0], top_k=1)
        assert [h.id for h in hits] == ["a"]
        assert abs(hits[0].score - 1.0) < 1e-6
        if dialect == "ferretdb":
            assert store._mode == "exact"
    finally:
        await store.close()
