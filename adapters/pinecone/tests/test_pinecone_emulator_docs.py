"""The emulator against examples taken from Pinecone's documentation, through the official SDK over HTTP.

Sources (Pinecone docs): "Filter by metadata" / "Understanding metadata" (operator table, the
``genre: ["comedy", "documentary"]`` list example, valid and invalid payloads, 40 KB per record, null
values not supported) and "Database limits" (1,000 vectors / 2 MB per upsert, top_k 10,000, 1,000 ids
per fetch/delete, index names of at most 45 lowercase alphanumerics and '-'). Each row is one documented
statement; the emulator must agree with all of them, independently of mastra-memory's evaluator.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pinecone import AsyncIndex, AsyncPinecone
from pinecone.errors import ApiError, ConflictError, NotFoundError

from mastra_memory_pinecone.testing.emulator import PineconeEmulator, check_filter, matches
from mastra_memory_pinecone.testing.emulator.filters import FilterRejected

MOVIE = {"genre": ["comedy", "documentary"]}
DRAMA_2020 = {"genre": "drama", "year": 2020.0}
ACTION_2019 = {"genre": "action", "year": 2019.0, "length_hrs": 1.5}

# (documented filter, record, matches?) — None for "invalid: a query compilation error" (HTTP 400).
FILTER_EXAMPLES: list[tuple[str, dict[str, Any], dict[str, Any], bool | None]] = [
    ("list takes on both values: $eq", {"genre": "comedy"}, MOVIE, True),
    ("list: $in of one element", {"genre": {"$in": ["documentary", "action"]}}, MOVIE, True),
    ("list: $and of both values", {"$and": [{"genre": "comedy"}, {"genre": "documentary"}]}, MOVIE, True),
    ("list: $and with a missing value", {"$and": [{"genre": "comedy"}, {"genre": "drama"}]}, MOVIE, False),
    ("invalid: a bare list", {"genre": ["comedy", "documentary"]}, MOVIE, None),
    ("invalid: $eq with a list", {"genre": {"$eq": ["comedy", "documentary"]}}, MOVIE, None),
    ("$eq", {"genre": {"$eq": "documentary"}}, {"genre": "documentary"}, True),
    ("$eq other value", {"genre": {"$eq": "documentary"}}, DRAMA_2020, False),
    ("$ne", {"genre": {"$ne": "drama"}}, ACTION_2019, True),
    ("$ne same value", {"genre": {"$ne": "drama"}}, DRAMA_2020, False),
    ("$gt", {"year": {"$gt": 2019}}, DRAMA_2020, True),
    ("$gt equal", {"year": {"$gt": 2019}}, ACTION_2019, False),
    ("$gte", {"year": {"$gte": 2020}}, DRAMA_2020, True),
    ("$lt", {"year": {"$lt": 2020}}, ACTION_2019, True),
    ("$lte", {"year": {"$lte": 2020}}, DRAMA_2020, True),
    ("$in", {"genre": {"$in": ["comedy", "documentary"]}}, DRAMA_2020, False),
    ("$nin", {"genre": {"$nin": ["comedy", "documentary"]}}, DRAMA_2020, True),
    ("$exists", {"genre": {"$exists": True}}, DRAMA_2020, True),
    ("$exists on a missing field", {"length_hrs": {"$exists": True}}, DRAMA_2020, False),
    ("$and", {"$and": [{"genre": {"$eq": "drama"}}, {"year": {"$gte": 2020}}]}, DRAMA_2020, True),
    ("$or", {"$or": [{"genre": {"$eq": "drama"}}, {"year": {"$gte": 2020}}]}, ACTION_2019, False),
    ("implicit $eq and $and", {"genre": {"$eq": "drama"}, "year": {"$gte": 2020}}, DRAMA_2020, True),
    (
        "a drama or a movie from 2020",
        {"$or": [{"genre": "drama"}, {"year": {"$gte": 2020}}]},
        DRAMA_2020,
        True,
    ),
    ("ranges are numeric only", {"genre": {"$gt": "a"}}, DRAMA_2020, None),
    ("a string is not in a numeric range", {"genre": {"$gt": 0}}, DRAMA_2020, False),
    ("numbers are 64-bit floats", {"year": 2020}, DRAMA_2020, True),
    ("booleans are not numbers", {"is_jeans": 1}, {"is_jeans": True}, False),
    ("boolean $eq", {"is_jeans": True}, {"is_jeans": True}, True),
    ("null is not a value", {"genre": None}, DRAMA_2020, None),
    ("null in $in", {"genre": {"$in": [None]}}, DRAMA_2020, None),
    ("unknown operator", {"genre": {"$regex": "dr"}}, DRAMA_2020, None),
    ("unknown top-level operator", {"$not": {"genre": "drama"}}, DRAMA_2020, None),
    ("$in takes strings and numbers", {"genre": {"$in": [True]}}, DRAMA_2020, None),
]


@pytest.mark.parametrize(
    ("label", "flt", "record", "expected"), FILTER_EXAMPLES, ids=[r[0] for r in FILTER_EXAMPLES]
)
def test_documented_filter_examples(
    label: str, flt: dict[str, Any], record: dict[str, Any], expected: bool | None
) -> None:
    if expected is None:
        with pytest.raises(FilterRejected):
            check_filter(flt)
        return
    check_filter(flt)
    for negation_matches_missing in (False, True):
        assert matches(flt, record, negation_matches_missing=negation_matches_missing) is expected, label


@pytest.fixture
async def index(emulator: PineconeEmulator) -> AsyncIterator[tuple[AsyncPinecone, AsyncIndex]]:
    async with AsyncPinecone(api_key=emulator.api_key, host=emulator.url) as pc:
        model = await pc.indexes.create(
            name="docs-movies",
            dimension=3,
            metric="cosine",
            deployment={"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"},
        )
        idx = await pc.index(host=model.host or "")
        async with idx:
            yield pc, idx


async def _visible(idx: AsyncIndex, expected: int) -> None:
    for _ in range(100):
        if (await idx.describe_index_stats()).total_vector_count == expected:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("writes never became visible")


async def test_filters_over_http_match_the_documented_examples(
    index: tuple[AsyncPinecone, AsyncIndex],
) -> None:
    _, idx = index
    records = {"movie": MOVIE, "drama": DRAMA_2020, "action": ACTION_2019}
    await idx.upsert(
        vectors=[
            {"id": k, "values": [1.0, float(i), 0.5], "metadata": v}
            for i, (k, v) in enumerate(records.items())
        ]
    )
    await _visible(idx, 3)
    for label, flt, record, expected in FILTER_EXAMPLES:
        if expected is None:
            with pytest.raises(ApiError) as raised:
                await idx.query(top_k=3, vector=[1.0, 0.0, 0.0], filter=flt)
            assert raised.value.status_code == 400, label
            assert raised.value.error_code == "INVALID_ARGUMENT", label
            continue
        response = await idx.query(top_k=3, vector=[1.0, 0.0, 0.0], filter=flt)
        which = next(k for k, v in records.items() if v == record) if record in records.values() else None
        if which is not None:
            assert (which in {m.id for m in response.matches}) is expected, label


VALID_PAYLOADS = [
    {"genre": "action", "year": 2020, "length_hrs": 1.5},
    {"color": "blue", "fit": "straight", "price": 29.99, "is_jeans": True},
    {"tags": ["a", "b"]},
]
INVALID_PAYLOADS = [
    ("null value", {"genre": None}),
    ("nested object", {"genre": {"main": "drama"}}),
    ("list of numbers", {"years": [2019, 2020]}),
    ("mixed list", {"tags": ["a", 1]}),
    ("above 40 KB", {"text": "x" * (40 * 1024)}),
]


async def test_documented_metadata_payloads(index: tuple[AsyncPinecone, AsyncIndex]) -> None:
    _, idx = index
    for i, payload in enumerate(VALID_PAYLOADS):
        await idx.upsert(vectors=[{"id": f"ok{i}", "values": [1.0, 0.0, 0.0], "metadata": payload}])
    await _visible(idx, len(VALID_PAYLOADS))
    fetched = await idx.fetch(ids=["ok0"])
    assert fetched.vectors["ok0"].metadata == {"genre": "action", "year": 2020.0, "length_hrs": 1.5}
    assert isinstance(
        fetched.vectors["ok0"].metadata["year"], float
    )  # "converted to a 64 bit floating point"
    for label, payload in INVALID_PAYLOADS:
        with pytest.raises(ApiError) as raised:
            # The SDK checks types itself; a raw request shows what the server says.
            await idx._http.post(
                "/vectors/upsert",
                json={"vectors": [{"id": "bad", "values": [1.0, 0.0, 0.0], "metadata": payload}]},
            )
        assert raised.value.status_code == 400, label


async def test_documented_limits(index: tuple[AsyncPinecone, AsyncIndex]) -> None:
    pc, idx = index
    too_many = [{"id": f"v{i}", "values": [1.0, 0.0, 0.0]} for i in range(1001)]
    with pytest.raises(ApiError, match="1000"):
        await idx.upsert(vectors=too_many)
    await idx.upsert(vectors=too_many[:1000])
    big = [{"id": f"b{i}", "values": [1.0, 0.0, 0.0], "metadata": {"t": "x" * 30_000}} for i in range(80)]
    with pytest.raises(ApiError, match="maximum supported size"):
        await idx.upsert(vectors=big)
    with pytest.raises(ApiError, match="non-zero"):
        await idx.upsert(vectors=[{"id": "zero", "values": [0.0, 0.0, 0.0]}])
    with pytest.raises(ApiError, match="dimension"):
        await idx.upsert(vectors=[{"id": "short", "values": [1.0, 0.0]}])
    await _visible(idx, 1000)
    with pytest.raises(ApiError):
        await idx._http.post("/query", json={"topK": 10_001, "vector": [1.0, 0.0, 0.0]})
    assert len((await idx.query(top_k=10_000, vector=[1.0, 0.0, 0.0])).matches) == 1000
    with pytest.raises(ApiError, match="at most 1000"):
        await idx.query(top_k=1001, vector=[1.0, 0.0, 0.0], include_metadata=True)
    with pytest.raises(ApiError, match="1000"):
        await idx._http.get("/vectors/fetch", params={"ids": [f"v{i}" for i in range(1001)]})
    with pytest.raises(ApiError, match="1000"):
        await idx._http.post("/vectors/delete", json={"ids": [f"v{i}" for i in range(1001)]})
    for name in ("UPPER", "under_score", "-leading", "trailing-", "x" * 46):
        with pytest.raises(ApiError) as raised:
            await pc._http.post(  # the SDK validates names; the raw request reaches the server
                "/indexes",
                json={
                    "name": name,
                    "schema": {
                        "fields": {"_values": {"type": "dense_vector", "dimension": 3, "metric": "cosine"}}
                    },
                },
            )
        assert raised.value.status_code == 400, name
    with pytest.raises(ConflictError):
        await pc.indexes.create(
            name="docs-movies",
            dimension=3,
            metric="cosine",
            deployment={"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"},
        )
    with pytest.raises(NotFoundError):
        await pc.indexes.describe("docs-missing")


async def test_scores_follow_pinecones_conventions(emulator: PineconeEmulator) -> None:
    """Cosine similarity and dot product as they are; euclidean is the squared distance, lower first."""
    stored, query = [3.0, 4.0, 0.0], [1.0, 0.0, 0.0]
    async with AsyncPinecone(api_key=emulator.api_key, host=emulator.url) as pc:
        for metric, want in (("cosine", 0.6), ("dotproduct", 3.0), ("euclidean", 20.0)):
            model = await pc.indexes.create(
                name=f"docs-{metric}",
                dimension=3,
                metric=metric,
                deployment={"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"},
            )
            async with await pc.index(host=model.host or "") as idx:
                await idx.upsert(
                    vectors=[{"id": "a", "values": stored}, {"id": "b", "values": [1.0, 0.1, 0.0]}]
                )
                await _visible(idx, 2)
                matches_ = (await idx.query(top_k=2, vector=query)).matches
                score = next(m.score for m in matches_ if m.id == "a")
                assert math.isclose(score, want, rel_tol=1e-6), metric
                # best first: b is nearer (cosine, euclidean), a has the larger inner product
                assert matches_[0].id == ("a" if metric == "dotproduct" else "b"), metric


async def test_writes_become_visible_after_the_delay(
    index: tuple[AsyncPinecone, AsyncIndex], emulator: PineconeEmulator
) -> None:
    """Pinecone is eventually consistent: an acknowledged write is not yet visible, then it is."""
    _, idx = index
    await idx.upsert(vectors=[{"id": "late", "values": [1.0, 0.0, 0.0]}])
    assert (await idx.fetch(ids=["late"])).vectors == {}
    assert emulator.pending_writes("docs-movies") == 1
    await _visible(idx, 1)
    assert "late" in (await idx.fetch(ids=["late"])).vectors


async def test_update_merges_metadata(index: tuple[AsyncPinecone, AsyncIndex]) -> None:
    """``update`` with ``setMetadata`` keeps the keys it does not mention (a partial update)."""
    _, idx = index
    await idx.upsert(vectors=[{"id": "m", "values": [1.0, 0.0, 0.0], "metadata": {"a": "1", "b": "2"}}])
    await _visible(idx, 1)
    await idx.update(id="m", set_metadata={"b": "3"})
    for _ in range(100):
        meta = (await idx.fetch(ids=["m"])).vectors["m"].metadata
        if meta == {"a": "1", "b": "3"}:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"update never applied: {meta}")


async def test_wrong_key_is_401(emulator: PineconeEmulator) -> None:
    async with AsyncPinecone(api_key="wrong", host=emulator.url) as pc:
        with pytest.raises(ApiError) as raised:
            await pc.indexes.describe("anything")
    assert raised.value.status_code == 401
