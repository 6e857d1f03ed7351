"""The store against a real OpenSearch node: the mapping traps of real metadata, scores, ids, writes,
errors. The kit (``--target opensearch-native``) covers the whole contract; these pin what is specific
to OpenSearch."""

from __future__ import annotations

import socket
from typing import Any

import numpy as np
import pytest
from mastra_memory.capabilities import Metric
from mastra_memory.errors import IndexNotFoundError, ValidationError, VectorStoreError
from mastra_memory.filters import evaluate

from mastra_memory_opensearch import OpenSearchSettings
from mastra_memory_opensearch.store import OpenSearchVector, document_id

pytestmark = pytest.mark.timeout(600)

DIM = 8


def _vectors(n: int, seed: int = 0) -> list[list[float]]:
    rng = np.random.default_rng(seed)
    out: list[list[float]] = rng.normal(size=(n, DIM)).tolist()
    return out


async def _ids(store: OpenSearchVector, flt: Any, top_k: int = 100) -> set[str]:
    return {hit.id for hit in await store.query("idx", _vectors(1, 99)[0], top_k=top_k, filter=flt)}


async def test_the_index_is_lucene_with_the_metric_space_and_hnsw_parameters(store: OpenSearchVector) -> None:
    spaces: tuple[tuple[Metric, str], ...] = (
        ("cosine", "cosinesimil"),
        ("euclidean", "l2"),
        ("dotproduct", "innerproduct"),
    )
    for metric, space in spaces:
        await store.create_index(f"m_{metric}", DIM, metric, index_config={"m": 24, "ef_construction": 100})
        index = store.settings.index_prefix + f"m_{metric}"
        mapping = (await store.client.indices.get_mapping(index=index))[index]["mappings"]
        method = mapping["properties"]["vector"]["method"]
        assert method["engine"] == "lucene"
        assert method["space_type"] == space
        assert method["parameters"] == {"m": 24, "ef_construction": 100}
        assert mapping["dynamic"] == "strict"


async def test_metadata_that_breaks_dynamic_mappings_is_written_and_filtered(store: OpenSearchVector) -> None:
    """A key that is a string here and a number there, 2,000 distinct keys, dotted keys, null and []."""
    records: dict[str, dict[str, Any]] = {
        "a": {"v": "7", "a.b": 1, "n": None, "l": [], "o": [{"k": 1}, {"k": "x"}]},
        "b": {"v": 7, "a": {"b": 2}, "l": [None], "o": [{"k": 2}]},
        # 2,000 distinct keys across the index: twice index.mapping.total_fields.limit.
        "c": {f"key{i}": i for i in range(1000)},
        "e": {f"key{i}": str(i) for i in range(1000, 2000)},
        "d": {"v": [7, "7", True, 7.5], "n": 0},
    }
    await store.create_index("idx", DIM)
    await store.upsert("idx", _vectors(len(records)), list(records.values()), list(records))
    filters: list[dict[str, Any]] = [
        {"v": 7},
        {"v": "7"},
        {"v": {"$gt": 5}},
        {"v": {"$gte": "5"}},
        {"a.b": 1},
        {"a": {"b": 2}},
        {"n": None},
        {"n": {"$exists": True}},
        {"l": {"$size": 0}},
        {"l": None},
        {"o": {"$elemMatch": {"k": "x"}}},
        {"o.k": 2},
        {"key999": {"$gte": 999}},
        {"key1999": {"$gte": "1"}},
        {"v": {"$ne": 7}},
    ]
    for flt in filters:
        expected = {rid for rid, meta in records.items() if evaluate(flt, meta)}
        assert await _ids(store, flt) == expected, flt
    hits = await store.query("idx", _vectors(1)[0], top_k=len(records))
    assert {h.id: h.metadata for h in hits} == records


async def test_scores_are_the_portable_ones(store: OpenSearchVector) -> None:
    vectors = np.asarray(_vectors(20, 3))
    query = np.asarray(_vectors(1, 4)[0])
    expected = {
        "cosine": vectors @ query / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(query)),
        "euclidean": 1 / (1 + np.linalg.norm(vectors - query, axis=1)),
        "dotproduct": vectors @ query,
    }
    for metric, scores in expected.items():
        name = f"s_{metric}"
        await store.create_index(name, DIM, metric)  # type: ignore[arg-type]
        await store.upsert(name, vectors.tolist(), ids=[f"r{i}" for i in range(20)])
        for exact in (False, True):
            hits = await store.query(name, query.tolist(), top_k=20, exact=exact)
            assert len(hits) == 20
            for hit in hits:
                assert hit.score == pytest.approx(scores[int(hit.id[1:])], abs=1e-9)


async def test_filtered_queries_return_top_k_whenever_that_many_match(store: OpenSearchVector) -> None:
    n = 600
    await store.create_index("idx", DIM, index_config={"m": 4, "ef_construction": 8})
    await store.upsert(
        "idx",
        _vectors(n, 5),
        [{"bucket": i % 50, "rare": i % 97 == 0} for i in range(n)],
        [str(i) for i in range(n)],
    )
    query = _vectors(1, 6)[0]
    for flt, matching in (({"bucket": 3}, 12), ({"rare": True}, 7), ({"bucket": {"$lt": 25}}, 300)):
        hnsw = await store.query("idx", query, top_k=10, filter=flt, ef=1)
        exact = await store.query("idx", query, top_k=10, filter=flt, exact=True)
        assert len(hnsw) == min(10, matching) == len(exact)
        assert all(evaluate(flt, h.metadata) for h in hnsw)


async def test_long_ids_and_long_strings(store: OpenSearchVector) -> None:
    long_id = "é" * 400  # 800 UTF-8 bytes: beyond OpenSearch's 512-byte _id
    text = "ü" * 20_000
    await store.create_index("idx", DIM)
    await store.upsert("idx", _vectors(2), [{"t": text}, {"t": text + "!"}], [long_id, "short"])
    assert document_id(long_id) != long_id
    hits = await store.query("idx", _vectors(1)[0], top_k=2, filter={"t": text}, include_vector=True)
    assert [(h.id, h.metadata["t"]) for h in hits] == [(long_id, text)]
    assert hits[0].vector == pytest.approx(_vectors(2)[0])
    assert await _ids(store, {"t": {"$gt": "ü" * 100}}) == {long_id, "short"}
    assert await _ids(store, {"t": {"$lt": "ü" * 100}}) == set()
    await store.delete_vector("idx", long_id)
    assert await _ids(store, None) == {"short"}


async def test_updates_replace_metadata_and_its_filter_fields(store: OpenSearchVector) -> None:
    await store.create_index("idx", DIM)
    await store.upsert("idx", _vectors(3), [{"g": 1, "old": True}, {"g": 1}, {"g": 2}], ["a", "b", "c"])
    await store.update_vector("idx", filter={"g": 1}, update={"metadata": {"g": 3}})
    assert await _ids(store, {"g": 1}) == set()
    assert await _ids(store, {"old": {"$exists": True}}) == set()
    assert await _ids(store, {"g": 3}) == {"a", "b"}
    await store.update_vector("idx", id="c", update={"metadata": {"h": "x"}, "vector": _vectors(1, 7)[0]})
    await store.update_vector("idx", id="missing", update={"metadata": {"h": "x"}})  # a no-op
    assert await _ids(store, {"h": "x"}) == {"c"}
    await store.delete_vectors("idx", filter={"g": 3})
    assert await _ids(store, None) == {"c"}
    assert (await store.describe_index("idx")).count == 1


async def test_upsert_is_batched_and_visible_at_once(store: OpenSearchVector) -> None:
    store.settings = store.settings.model_copy(update={"max_bulk_bytes": 64 * 1024})
    n = 1_234
    await store.create_index("idx", DIM)
    await store.upsert("idx", _vectors(n), [{"i": i, "pad": "x" * 200} for i in range(n)])
    assert (await store.describe_index("idx")).count == n


async def test_integers_beyond_int64_are_refused_before_any_write(store: OpenSearchVector) -> None:
    await store.create_index("idx", DIM)
    with pytest.raises(ValidationError, match="int64-range"):
        await store.upsert("idx", _vectors(2), [{"ok": 1}, {"big": 2**64}], ["a", "b"])
    assert (await store.describe_index("idx")).count == 0


async def test_metadata_opensearch_cannot_hold_is_refused_before_any_request() -> None:
    """docs/spec.md §3.3, §3.6: the adapter's own metadata limits run in the shared validation, so even a
    cluster nobody answers at is never asked (a request would be a connection VectorStoreError)."""
    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    store = OpenSearchVector(OpenSearchSettings(url=f"http://127.0.0.1:{port}", max_retries=0, timeout=5))
    # 60,000 nested documents within the shared limits (empty objects cost no keys and 3 bytes each)
    too_many: dict[str, Any] = {"a": [{} for _ in range(60_000)]}
    try:
        with pytest.raises(ValidationError, match="int64-range") as upsert:
            await store.upsert("idx", _vectors(2), [{"ok": 1}, {"big": 2**64}], ["a", "b"])
        assert upsert.value.id == "MASTRA_VECTOR_OPENSEARCH_UPSERT_INVALID_METADATA"
        with pytest.raises(ValidationError, match="int64-range") as update:
            await store.update_vector("idx", id="a", update={"metadata": {"n": [-(2**63) - 1]}})
        assert update.value.id == "MASTRA_VECTOR_OPENSEARCH_UPDATE_VECTOR_INVALID_METADATA"
        with pytest.raises(ValidationError, match="nested document") as nested:
            await store.update_vector("idx", filter={"k": 1}, update={"metadata": too_many})
        assert nested.value.id == "MASTRA_VECTOR_OPENSEARCH_UPDATE_VECTOR_INVALID_METADATA"
    finally:
        await store.close()


async def test_a_missing_index_is_typed(store: OpenSearchVector) -> None:
    with pytest.raises(IndexNotFoundError):
        await store.query("nope", _vectors(1)[0])
    with pytest.raises(IndexNotFoundError):
        await store.describe_index("nope")
    await store.delete_index("nope")


async def test_an_unreachable_cluster_is_a_typed_error() -> None:
    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    store = OpenSearchVector(OpenSearchSettings(url=f"http://127.0.0.1:{port}", max_retries=1, timeout=5))
    try:
        with pytest.raises(VectorStoreError, match="cannot reach OpenSearch"):
            await store.list_indexes()
    finally:
        await store.close()
