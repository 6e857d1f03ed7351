"""QdrantVector on real engines: ids, batching, updates by filter, index configuration, scores, limits."""

from __future__ import annotations

import math
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import qdrant_edge as qe
from mastra_memory.errors import IndexNotFoundError, UnsupportedFilterError, ValidationError
from mastra_memory.filters import evaluate
from mastra_memory.vector import MASTRA_ID_NAMESPACE, QueryResult, default_ef

from mastra_memory_qdrant.backend import IndexInfo
from mastra_memory_qdrant.store import QdrantVector, point_id
from qdrant_helpers import RecordingEdge, settings_for


def unit(i: int, dim: int = 4) -> list[float]:
    """A distinct, non-zero vector per ``i``."""
    return [1.0 + (i % 7), 0.5 * (i % 3), 0.25, 0.1 * (i % 5)][:dim]


async def hit_ids(store: QdrantVector, index: str, flt: Any = None, top_k: int = 100) -> set[str]:
    return {h.id for h in await store.query(index, [1.0, 0.0, 0.0, 0.0], top_k=top_k, filter=flt)}


# --- ids ------------------------------------------------------------------------------------------------


async def test_ids_become_uuids_and_come_back_verbatim(store: QdrantVector) -> None:
    canonical = "00000000-0000-4000-8000-00000000000a"
    ids = ["plain-id", canonical, canonical.upper(), "42"]
    await store.create_index("ids", 4)
    await store.upsert("ids", [unit(i) for i in range(4)], [{"i": i} for i in range(4)], ids)
    assert await hit_ids(store, "ids") == set(ids)
    assert point_id(canonical) == canonical
    assert point_id("42") == str(uuid.uuid5(MASTRA_ID_NAMESPACE, "42"))
    assert point_id(canonical.upper()) == str(uuid.uuid5(MASTRA_ID_NAMESPACE, canonical.upper()))
    await store.delete_vector("ids", "plain-id")
    await store.update_vector("ids", id="42", update={"metadata": {"i": 42}})
    hits = await store.query("ids", unit(0), top_k=10)
    assert {h.id: h.metadata for h in hits} == {
        canonical: {"i": 1},
        canonical.upper(): {"i": 2},
        "42": {"i": 42},
    }


async def test_ties_at_the_cut_off_are_broken_by_id(store: QdrantVector) -> None:
    ids = [f"t{i:02d}" for i in (7, 3, 11, 0, 9, 1, 5, 2, 10, 4, 8, 6)]
    await store.create_index("ties", 4)
    await store.upsert("ties", [[0.3, 0.4, 0.5, 0.6]] * len(ids), None, ids)
    hits = await store.query("ties", [0.3, 0.4, 0.5, 0.6], top_k=3)
    assert [h.id for h in hits] == ["t00", "t01", "t02"]


# --- writes -------------------------------------------------------------------------------------------


async def test_upserts_are_sent_in_batches_of_256(recording: tuple[QdrantVector, RecordingEdge]) -> None:
    store, backend = recording
    await store.create_index("batches", 4)
    ids = await store.upsert("batches", [unit(i) for i in range(600)])
    assert backend.log.upserts == [256, 256, 88]
    assert len(set(ids)) == 600
    assert (await store.describe_index("batches")).count == 600


async def test_updates_by_filter_scroll_100_points_per_page(
    recording: tuple[QdrantVector, RecordingEdge],
) -> None:
    store, backend = recording
    await store.create_index("pages", 4)
    n = 250
    await store.upsert(
        "pages",
        [unit(i) for i in range(n + 10)],
        [{"g": "x", "i": i} if i < n else {"g": "y", "i": i} for i in range(n + 10)],
        [f"r{i}" for i in range(n + 10)],
    )
    await store.update_vector("pages", filter={"g": "x"}, update={"metadata": {"g": "z"}})
    assert backend.log.scrolls == [100, 100, 100]
    assert await hit_ids(store, "pages", {"g": "z"}, top_k=400) == {f"r{i}" for i in range(n)}
    assert await hit_ids(store, "pages", {"g": "y"}, top_k=400) == {f"r{i}" for i in range(n, n + 10)}
    assert await hit_ids(store, "pages", {"g": "x"}, top_k=400) == set()
    await store.update_vector("pages", filter={"g": "y"}, update={"vector": [0.0, 0.0, 0.0, 1.0]})
    best = await store.query("pages", [0.0, 0.0, 0.0, 1.0], top_k=10, include_vector=True)
    assert {h.id for h in best} == {f"r{i}" for i in range(n, n + 10)}
    assert all(h.metadata["g"] == "y" for h in best)


async def test_update_by_id_replaces_and_ignores_unknown_ids(store: QdrantVector) -> None:
    await store.create_index("upd", 4)
    await store.upsert("upd", [unit(1)], [{"a": 1, "b": 2}], ["one"])
    await store.update_vector("upd", id="one", update={"metadata": {"c": 3}, "vector": [0.0, 1.0, 0.0, 0.0]})
    await store.update_vector("upd", id="missing", update={"metadata": {"c": 4}})
    hits = await store.query("upd", [0.0, 1.0, 0.0, 0.0], top_k=5, include_vector=True)
    assert [(h.id, h.metadata) for h in hits] == [("one", {"c": 3})]
    assert hits[0].vector is not None
    assert math.isclose(hits[0].score, 1.0, rel_tol=1e-6)
    assert await hit_ids(store, "upd", {"a": 1}) == set()
    assert await hit_ids(store, "upd", {"c": 3}) == {"one"}


async def test_integers_beyond_int64_are_refused(store: QdrantVector) -> None:
    await store.create_index("big", 4)
    await store.upsert("big", [unit(1)], [{"n": 2**63 - 1}], ["kept"])
    with pytest.raises(ValidationError) as raised:
        await store.upsert("big", [unit(2), unit(3)], [{"n": 1}, {"deep": [{"n": 2**63}]}], ["a", "b"])
    assert raised.value.id == "MASTRA_VECTOR_QDRANT_UPSERT_INVALID_METADATA"
    assert "deep[0].n" in str(raised.value)
    with pytest.raises(ValidationError) as updating:
        await store.update_vector("big", id="kept", update={"metadata": {"n": -(2**63) - 1}})
    assert updating.value.id == "MASTRA_VECTOR_QDRANT_UPDATE_VECTOR_INVALID_METADATA"
    with pytest.raises(UnsupportedFilterError):
        await store.query("big", unit(1), filter={"n": 2**63 + 1})
    hits = await store.query("big", unit(1), top_k=5, filter={"n": 2**63 - 1})
    assert [(h.id, h.metadata) for h in hits] == [("kept", {"n": 2**63 - 1})]


# --- index configuration ---------------------------------------------------------------------------------


async def test_hnsw_settings_are_used_at_build_and_query_time(
    recording: tuple[QdrantVector, RecordingEdge],
) -> None:
    store, backend = recording
    await store.create_index("hnsw", 4, index_config={"hnsw": {"m": 8, "efConstruction": 40}})
    assert await backend.info("hnsw") == IndexInfo(dimension=4, metric="cosine", m=8, ef_construct=40)
    await store.upsert("hnsw", [unit(i) for i in range(20)])
    await store.query("hnsw", unit(1), top_k=5)
    await store.query("hnsw", unit(1), top_k=5, ef=123)
    await store.create_index("flat", 4, index_config={"type": "flat", "ef": 77})
    await store.upsert("flat", [unit(1)])
    await store.query("flat", unit(1), top_k=2)
    # No ef given: mastra_memory.vector.default_ef(top_k, m) = max(300, top_k, m·top_k) (docs/spec.md §3.9).
    assert backend.log.searches == [(9, default_ef(5, 8), False), (9, 123, False), (6, 77, True)]
    assert default_ef(5, 8) == 300
    with pytest.raises(ValidationError, match="unknown query options"):
        await store.query("hnsw", unit(1), top_k=5, probes=3)


async def test_payload_indexes_cover_thread_resource_and_requested_keys(tmp_path: Path) -> None:
    store = QdrantVector(settings_for("edge", tmp_path))
    await store.create_index("memory_messages_4", 4, metadata_indexes=["thread_id", "resource_id", "kind"])
    await store.close()
    shard = qe.EdgeShard.load(str(tmp_path / "edge" / "memory_messages_4" / "shard"))
    try:
        schema = shard.info().payload_schema
    finally:
        shard.close()
    assert set(schema) == {
        "_mastra_f.v-thread_id",
        "_mastra_f.v-resource_id",
        "_mastra_f.v-kind",
        "_mastra_f.x",
    }


# --- scores -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("metric", "stored", "query", "score"),
    [
        ("cosine", [1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], 1 / math.sqrt(2)),
        ("euclidean", [3.0, 4.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], 1 / (1 + 5)),
        ("dotproduct", [1.0, 2.0, 0.0, 0.0], [3.0, 4.0, 0.0, 0.0], 11.0),
    ],
)
async def test_scores_are_portable(
    store: QdrantVector, metric: Any, stored: list[float], query: list[float], score: float
) -> None:
    await store.create_index("scores", 4, metric=metric)
    await store.upsert("scores", [stored], None, ["only"])
    (hit,) = await store.query("scores", query, top_k=1)
    assert math.isclose(hit.score, score, rel_tol=1e-5)


# --- vectors as written (docs/spec.md §3.2) ----------------------------------------------------------------

#: float32 storage: one rounding of the written value, with a little room for the engine's normalisation.
FLOAT32_RTOL = 2e-7


def assert_written(hits: list[QueryResult], expected: dict[str, list[float]]) -> None:
    assert {h.id for h in hits} == set(expected)
    for hit in hits:
        assert hit.vector is not None, hit.id
        np.testing.assert_allclose(hit.vector, expected[hit.id], rtol=FLOAT32_RTOL, atol=0, err_msg=hit.id)
        assert not any(key.startswith("_mastra_") for key in hit.metadata), hit.metadata


@pytest.mark.parametrize("metric", ["cosine", "euclidean", "dotproduct"])
async def test_include_vector_returns_the_written_vector_after_every_write(
    store: QdrantVector, metric: Any
) -> None:
    """Qdrant keeps a cosine collection's vectors normalised: [3, 0, 4] must still come back as [3, 0, 4]."""
    written = {
        "a": [3.0, 0.0, 4.0, 0.0],
        "b": [0.02, -0.5, 7.0, 1.25],
        "c": [-120.0, 35.5, 0.001, 64.0],
        "d": [6.0, 0.0, 8.0, 0.0],  # a's direction, another norm
    }
    await store.create_index("asis", 4, metric=metric)
    await store.upsert("asis", list(written.values()), [{"g": k in "ab"} for k in written], list(written))
    hits = await store.query("asis", [1.0, 0.5, 0.25, 0.0], top_k=10, include_vector=True)
    assert_written(hits, written)

    expected = dict(written)
    expected["a"] = [9.0, -2.0, 0.5, 30.0]
    await store.update_vector("asis", id="a", update={"vector": expected["a"]})
    await store.update_vector("asis", id="b", update={"metadata": {"g": True, "only": "metadata"}})
    expected["c"] = [0.0, 0.0, -0.03, 0.04]
    await store.update_vector("asis", id="c", update={"vector": expected["c"], "metadata": {"g": False}})
    assert_written(await store.query("asis", [1.0, 0.5, 0.25, 0.0], top_k=10, include_vector=True), expected)

    # by filter: a vector for every match (b and a), then new metadata alone (c and d keep theirs)
    expected["a"] = expected["b"] = [-2.5, 1.0, 12.0, 0.75]
    await store.update_vector("asis", filter={"g": True}, update={"vector": expected["a"]})
    await store.update_vector("asis", filter={"g": False}, update={"metadata": {"g": False, "n": 1}})
    hits = await store.query("asis", [1.0, 0.5, 0.25, 0.0], top_k=10, include_vector=True)
    assert_written(hits, expected)
    assert {h.id: h.metadata for h in hits}["d"] == {"g": False, "n": 1}


async def test_cosine_vectors_of_any_norm_come_back_to_float32_precision(store: QdrantVector) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(40, 96)) * rng.uniform(1e-3, 1e3, size=(40, 1))
    ids = [f"r{i:02d}" for i in range(40)]
    await store.create_index("norms", 96)
    await store.upsert("norms", vectors.tolist(), None, ids)
    hits = await store.query("norms", vectors[0].tolist(), top_k=40, include_vector=True)
    assert_written(hits, dict(zip(ids, vectors.tolist(), strict=True)))


# --- filters on the engines -------------------------------------------------------------------------------

RECORDS: dict[str, dict[str, Any]] = {
    "int": {"n": 1, "tags": ["a", "b"], "k": True},
    "float": {"n": 1.0, "tags": [], "k": 1},
    "half": {"n": 0.5, "tags": "a"},
    "null": {"n": None, "tags": [None, "c"]},
    "big": {"n": 2**53 + 1, "sub": {"deep": 2}},
    "max": {"n": 2**63 - 1, "items": [{"k": 1, "v": "x"}, {"k": 2}]},
    "huge": {"n": 1e300, "items": [[{"k": 1}], 5]},
    "quote": {'qu"ote': "x", "n": "1", "items": []},
    "none": {},
}
FILTERS: list[dict[str, Any]] = [
    {"n": 1},
    {"n": 1.0},
    {"n": True},
    {"k": 1},
    {"n": 0.5},
    {"n": None},
    {"n": {"$ne": None}},
    {"n": {"$gt": 2**53}},
    {"n": {"$gte": 2**53}},
    {"n": {"$lt": 2**63 - 1}},
    {"n": {"$gt": 2**63 - 1}},
    {"n": {"$gte": 2**63 - 2}},
    {"n": 2**63},
    {"n": {"$in": [1, "1", None]}},
    {"n": {"$nin": [0.5, 2**53 + 1]}},
    {"tags": "a"},
    {"tags": None},
    {"tags": {"$exists": True}},
    {"tags": {"$exists": False}},
    {"tags": {"$size": 0}},
    {"tags": {"$size": 1}},
    {"tags": {"$all": ["a", "b"]}},
    {"sub.deep": {"$gte": 2}},
    {"sub.deep": None},
    {"items.k": 1},
    {"items.v": None},
    {"items.v": {"$exists": True}},
    {"items": {"$elemMatch": {"k": 2, "v": {"$exists": False}}}},
    {"items": {"$elemMatch": {"v": None}}},
    {"items": {"$elemMatch": {"k": {"$gt": 5}}}},
    {'qu"ote': "x"},
    {"$not": {"n": 1, "k": True}},
    {"$nor": [{"n": 1}, {"k": True}]},
    {"$or": [{"n": {"$lt": 1}}, {"tags": {"$size": 2}}]},
]


async def test_filters_return_exactly_what_the_reference_evaluator_says(store: QdrantVector) -> None:
    await store.create_index("exact", 4)
    ids = list(RECORDS)
    await store.upsert("exact", [unit(i) for i in range(len(ids))], [RECORDS[i] for i in ids], ids)
    for flt in FILTERS:
        expected = {rid for rid, meta in RECORDS.items() if evaluate(flt, meta)}
        assert await hit_ids(store, "exact", flt) == expected, flt
        assert await hit_ids(store, "exact", {"$not": flt}) == set(ids) - expected, {"$not": flt}


async def test_delete_by_filter_removes_exactly_the_matches(store: QdrantVector) -> None:
    await store.create_index("del", 4)
    ids = list(RECORDS)
    await store.upsert("del", [unit(i) for i in range(len(ids))], [RECORDS[i] for i in ids], ids)
    await store.delete_vectors("del", filter={"n": None})
    assert await hit_ids(store, "del") == {
        rid for rid, meta in RECORDS.items() if not evaluate({"n": None}, meta)
    }


# --- the edge engine's shards -----------------------------------------------------------------------------


async def test_edge_stores_share_a_directory(tmp_path: Path) -> None:
    settings = settings_for("edge", tmp_path)
    first, second = QdrantVector(settings), QdrantVector(settings)
    try:
        await first.create_index("shared", 4)
        await first.upsert("shared", [unit(1)], [{"a": 1}], ["one"])
        assert await hit_ids(second, "shared") == {"one"}
        await first.close()
        await second.upsert("shared", [unit(2)], [{"a": 2}], ["two"])
        assert await hit_ids(second, "shared", {"a": 2}) == {"two"}
        reopened = QdrantVector(settings)
        assert await reopened.list_indexes() == ["shared"]
        assert (await reopened.describe_index("shared")).count == 2
        await second.delete_index("shared")
        with pytest.raises(IndexNotFoundError):
            await reopened.describe_index("shared")
        assert await reopened.list_indexes() == []
        await reopened.close()
    finally:
        await first.close()
        await second.close()


async def test_edge_index_survives_a_restart(tmp_path: Path) -> None:
    settings = settings_for("edge", tmp_path)
    store = QdrantVector(settings)
    await store.create_index("durable", 4, metric="euclidean")
    await store.upsert("durable", [unit(i) for i in range(5)], [{"i": i} for i in range(5)])
    await store.close()
    store = QdrantVector(settings)
    try:
        stats = await store.describe_index("durable")
        assert (stats.dimension, stats.count, stats.metric) == (4, 5, "euclidean")
        assert len(await hit_ids(store, "durable", {"i": {"$gte": 2}})) == 3
    finally:
        await store.close()


async def test_optimize_builds_the_index_and_keeps_results(tmp_path: Path) -> None:
    store = QdrantVector(settings_for("edge", tmp_path))
    try:
        await store.create_index("opt", 4)
        await store.upsert("opt", [unit(i) for i in range(300)], [{"i": i % 10} for i in range(300)])
        before = await store.query("opt", unit(3), top_k=10, filter={"i": {"$in": [1, 2]}})
        await store.optimize("opt")
        after = await store.query("opt", unit(3), top_k=10, filter={"i": {"$in": [1, 2]}})
        assert [h.id for h in after] == [h.id for h in before]
        assert len(after) == 10
    finally:
        await store.close()


async def test_ranges_near_int64_max_test_each_value_of_a_record(store: QdrantVector) -> None:
    # A record reaching 1 and 2^63 - 1 at one path matches {"$lt": 2^63 - 1} through its 1: found by the deep
    # random filters on qdrant-edge (seed 225304677883628), where the colliding integers were excluded
    # from the whole record instead of from one value.
    big = 2**63 - 1
    records: dict[str, dict[str, Any]] = {
        "both": {"x": [{"e": 1}, {"e": big}]},
        "small": {"x": [{"e": 1}]},
        "big": {"x": [{"e": big}]},
        "scalars": {"x": [1, big]},
        "near": {"x": [{"e": big - 1}, {"e": 2**53 + 1}]},
    }
    await store.create_index("near_max", 4)
    ids = list(records)
    await store.upsert("near_max", [unit(i) for i in range(len(ids))], [records[i] for i in ids], ids)
    for flt in (
        {"x.e": {"$lt": big}},
        {"x.e": {"$lte": big - 1}},
        {"x.e": {"$gt": 1}},
        {"x.e": {"$gte": big}},
        {"x": {"$lt": big}},
        {"x": {"$gt": 2**53}},
        {"x.e": {"$gt": 2**53}},
    ):
        hits = await store.query("near_max", unit(0), top_k=10, filter=flt)
        expected = {i for i in ids if evaluate(flt, records[i])}
        assert {h.id for h in hits} == expected, flt
