"""The store against a real S3 Vectors API (S3Mock on loopback): limits, batching, scans, scores, names."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mastra_memory import sync
from mastra_memory.errors import (
    CapabilityError,
    ConfigError,
    IndexDimensionMismatchError,
    IndexNotFoundError,
    UnsupportedFilterError,
    ValidationError,
)

from conftest import make_settings
from mastra_memory_s3vectors import S3VectorsSettings
from mastra_memory_s3vectors.store import S3VectorsVector
from mastra_memory_s3vectors.testing.s3mock import S3MockEndpoints


class Untouchable:
    """A stand-in boto3 client that fails the test on any call: proves a check ran before I/O."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the store called the backend ({name}) before validating")


def offline(settings: S3VectorsSettings) -> S3VectorsVector:
    return S3VectorsVector(settings, client=Untouchable())


def unit(seed: int, dim: int = 4) -> list[float]:
    v = np.random.default_rng(seed).normal(size=dim)
    return list(v / np.linalg.norm(v))


def listening_addresses(pid: int) -> set[str]:
    """The local addresses of every TCP socket ``pid`` listens on (from /proc)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = str(fd.readlink()) if fd.is_symlink() else ""
        found = re.fullmatch(r"socket:\[(\d+)\]", target)
        if found:
            inodes.add(found.group(1))
    addresses = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A = LISTEN
                addresses.add(fields[1].rsplit(":", 1)[0])
    return addresses


def test_s3mock_listens_on_loopback_only(s3mock: S3MockEndpoints) -> None:
    addresses = listening_addresses(s3mock.pid)
    assert len(addresses) >= 1
    loopback = {"0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"}
    assert addresses <= loopback, f"S3Mock listens beyond 127.0.0.1: {addresses}"


async def test_limits_are_checked_before_any_io(settings: S3VectorsSettings) -> None:
    store = offline(settings)
    with pytest.raises(ValidationError, match="at most 4096"):
        await store.create_index("docs", 4097)
    with pytest.raises(CapabilityError, match="unsupported metric"):
        await store.create_index("docs", 4, "dotproduct")
    with pytest.raises(ValidationError, match="limit of 100"):
        await store.query("docs", [1.0, 0, 0, 0], top_k=101)
    with pytest.raises(UnsupportedFilterError):
        await store.query("docs", [1.0, 0, 0, 0], filter={"s": {"$regex": "a"}})
    with pytest.raises(UnsupportedFilterError, match="non-filterable"):
        await store.query("docs", [1.0, 0, 0, 0], filter={"content": "x"})
    with pytest.raises(ValidationError, match="2048") as raised:
        await store.upsert("docs", [[1.0, 0, 0, 0]], [{"bulky": "x" * 3000}])
    assert raised.value.id == "MASTRA_VECTOR_S3VECTORS_UPSERT_INVALID_METADATA"
    with pytest.raises(ValidationError, match="string-list-only"):
        await store.upsert("docs", [[1.0, 0, 0, 0]], [{"nums": [1, 2]}])
    with pytest.raises(ValidationError, match="float32"):
        await store.upsert("docs", [[1e39, 0, 0, 0]])
    with pytest.raises(ValidationError, match="40960"):
        await store.update_vector("docs", id="a", update={"metadata": {"content": "x" * 41_000}})
    with pytest.raises(ValidationError, match="3–63"):
        await store.create_index("ab", 4)


async def test_round_trip_scores_and_ties(store: S3VectorsVector) -> None:
    await store.create_index("docs", 4, "euclidean")
    await store.upsert(
        "docs",
        [[1, 0, 0, 0], [0, 1, 0, 0], [0, 1, 0, 0]],
        [{"n": 1.0, "nested": {"x": None}, "content": "long"}, {"n": 2}, {"n": 3}],
        ["a", "c", "b"],
    )
    hits = await store.query("docs", [3, 4, 0, 0], top_k=3, include_vector=True)
    # euclidean: S3Mock returns the L2 distance; the portable score is 1 / (1 + d)
    assert [h.id for h in hits] == ["b", "c", "a"]  # b and c tie: ordered by id
    assert math.isclose(hits[0].score, 1 / (1 + math.dist([3, 4, 0, 0], [0, 1, 0, 0])), rel_tol=1e-6)
    assert hits[2].metadata == {"n": 1.0, "nested": {"x": None}, "content": "long"}
    assert isinstance(hits[2].metadata["n"], float)
    assert hits[2].vector == [1.0, 0.0, 0.0, 0.0]
    with pytest.raises(IndexDimensionMismatchError):
        await store.create_index("docs", 5)


async def test_batches_of_500_and_count_by_listing(store: S3VectorsVector) -> None:
    await store.create_index("many", 4)
    n = 1203
    vectors = np.random.default_rng(1).normal(size=(n, 4))
    await store.upsert(
        "many", vectors, [{"i": i, "even": i % 2 == 0} for i in range(n)], [f"v{i}" for i in range(n)]
    )
    assert (await store.describe_index("many")).count == n
    hits = await store.query("many", vectors[0], top_k=100, include_vector=True)  # GetVectors in calls of 100
    assert len(hits) == 100
    assert all(h.vector is not None for h in hits)
    await store.delete_vectors("many", filter={"even": True})  # a scan plus the reference evaluator
    assert (await store.describe_index("many")).count == n // 2
    await store.delete_vectors("many", ids=[f"v{i}" for i in range(1, n, 2)])
    assert (await store.describe_index("many")).count == 0


async def test_update_by_id_and_by_filter(store: S3VectorsVector) -> None:
    await store.create_index("upd", 4)
    await store.upsert(
        "upd", [unit(1), unit(2), unit(3)], [{"g": "x", "k": 1}, {"g": "x"}, {"g": "y"}], ["a", "b", "c"]
    )
    await store.update_vector("upd", id="a", update={"metadata": {"g": "z"}})  # replaces, never merges
    await store.update_vector("upd", id="missing", update={"metadata": {"g": "z"}})  # no-op
    await store.update_vector("upd", filter={"g": "x"}, update={"vector": unit(9)})
    hits = {h.id: h for h in await store.query("upd", unit(9), top_k=3, include_vector=True)}
    assert hits["a"].metadata == {"g": "z"}
    assert hits["b"].metadata == {"g": "x"}
    assert np.allclose(hits["b"].vector or [], unit(9), atol=1e-6)
    assert not np.allclose(hits["a"].vector or [], unit(9), atol=1e-6)


async def test_a_filter_folded_to_false_makes_no_request(store: S3VectorsVector) -> None:
    await store.create_index("fold", 4)
    await store.upsert("fold", [unit(1)], [{"a": 1}], ["a"])
    real, store._client = store._client, Untouchable()  # the shape is cached: nothing more is needed
    try:
        assert await store.query("fold", unit(1), filter={"a": {"$in": []}}) == []
    finally:
        store._client = real


async def test_missing_index_and_bucket(s3mock: S3MockEndpoints) -> None:
    store = S3VectorsVector(make_settings(s3mock, create_bucket=False))
    try:
        assert await store.list_indexes() == []
        with pytest.raises(ConfigError, match="does not exist"):
            await store.create_index("docs", 4)
        with pytest.raises(IndexNotFoundError):
            await store.query("docs", unit(1))
        await store.delete_index("docs")  # idempotent
    finally:
        await store.close()


async def test_index_prefix_is_a_namespace(s3mock: S3MockEndpoints) -> None:
    bucket = make_settings(s3mock).bucket
    plain = S3VectorsVector(make_settings(s3mock, bucket=bucket))
    app = S3VectorsVector(make_settings(s3mock, bucket=bucket, index_prefix="app-"))
    try:
        await plain.create_index("memory_messages", 4)
        await app.create_index("memory_messages", 4)
        assert await app.list_indexes() == ["memory-messages"]
        assert sorted(await plain.list_indexes()) == ["app-memory-messages", "memory-messages"]
        await app.upsert("memory-messages", [unit(1)], ids=["only-in-app"])
        assert [h.id for h in await app.query("memory_messages", unit(1))] == ["only-in-app"]
        assert await plain.query("memory_messages", unit(1)) == []
    finally:
        await plain.close()
        await app.close()


async def test_non_filterable_keys_are_fixed_per_index(s3mock: S3MockEndpoints) -> None:
    bucket = make_settings(s3mock).bucket
    first = S3VectorsVector(make_settings(s3mock, bucket=bucket))
    other = S3VectorsVector(make_settings(s3mock, bucket=bucket, non_filterable_metadata_keys=["body"]))
    try:
        await first.create_index("docs", 4)
        with pytest.raises(ConfigError, match="non-filterable"):
            await other.upsert("docs", [unit(1)], [{"body": "x"}])
        with pytest.raises(ConfigError, match="non-filterable"):
            await other.create_index("docs", 4)
    finally:
        await first.close()
        await other.close()


def test_sync_facade(s3mock: S3MockEndpoints) -> None:
    store = sync.wrap(S3VectorsVector(make_settings(s3mock)))
    store.create_index("docs", 4)
    store.upsert("docs", [unit(1)], [{"k": "v"}], ["one"])
    assert [h.id for h in store.query("docs", unit(1), filter={"k": "v"})] == ["one"]
    store.close()
