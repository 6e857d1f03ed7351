"""The embedded SQLite vector store against the MastraVector contract (docs/spec.md §3)."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random
import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mastra_memory.errors import (
    CapabilityError,
    FilterError,
    IndexDimensionMismatchError,
    IndexNotFoundError,
    MastraMemoryError,
    UnsupportedFilterError,
    ValidationError,
)
from mastra_memory.filters.parse import parse
from mastra_memory.storage import Thread
from mastra_memory.stores.sqlite.capabilities import SQLITE_CAPABILITIES
from mastra_memory.stores.sqlite.settings import SQLiteSettings
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector
from mastra_memory.stores.sqlite.translate import SQLiteFilterTranslator
from mastra_memory.vector import MIN_COSINE_NORM

IDX = "idx"


@pytest.fixture
async def store() -> AsyncIterator[SQLiteVector]:
    vector = SQLiteVector(":memory:")
    try:
        yield vector
    finally:
        await vector.close()


@pytest.fixture
async def index(store: SQLiteVector) -> SQLiteVector:
    """A store holding a 3-dimensional cosine index ``idx`` with records a, b, c."""
    await store.create_index(IDX, 3)
    await store.upsert(
        IDX,
        [[1, 0, 0], [0, 1, 0], [1, 1, 0]],
        [{"k": "a", "n": 1}, {"k": "b", "n": 2}, {"k": "c", "n": 3}],
        ids=["a", "b", "c"],
    )
    return store


async def ids_of(store: SQLiteVector, flt: Any = None, top_k: int = 100) -> set[str]:
    return {h.id for h in await store.query(IDX, None, top_k=top_k, filter=flt)}


def error_id(status: str) -> str:
    return f"MASTRA_VECTOR_SQLITE_{status}"


# --- manifest --------------------------------------------------------------------------------------


def test_manifest_declares_every_operator_native() -> None:
    caps = SQLiteVector.capabilities
    assert caps is SQLITE_CAPABILITIES
    assert caps.name == "sqlite"
    assert caps.native_operators == {
        "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$all", "$size", "$exists",
        "$contains", "$regex", "$elemMatch", "$and", "$or", "$nor", "$not",
    }  # fmt: skip
    assert caps.emulated_operators == frozenset()
    assert caps.implicit_array_traversal
    assert caps.metadata_only_query
    assert caps.metrics == {"cosine", "euclidean", "dotproduct"}
    assert caps.index_types == {"flat"}
    assert caps.update_by_filter == caps.delete_by_filter == "native"
    assert caps.storage is not None
    assert {d.code for d in caps.deviations} == {"nul-character-rejected", "int64-range"}


# --- index lifecycle -------------------------------------------------------------------------------


async def test_create_index_is_idempotent(store: SQLiteVector) -> None:
    await store.create_index(IDX, 4)
    await store.upsert(IDX, [[1, 2, 3, 4]], ids=["x"])
    await store.create_index(IDX, 4)
    stats = await store.describe_index(IDX)
    assert (stats.dimension, stats.count, stats.metric) == (4, 1, "cosine")
    assert await store.list_indexes() == [IDX]


async def test_create_index_with_another_dimension_names_index_and_both_dimensions(
    store: SQLiteVector,
) -> None:
    await store.create_index(IDX, 4)
    with pytest.raises(IndexDimensionMismatchError) as err:
        await store.create_index(IDX, 8)
    assert "'idx'" in str(err.value)
    assert "4" in str(err.value)
    assert "8" in str(err.value)
    assert err.value.details == {"index": IDX, "expected": 4, "actual": 8}
    assert err.value.id == error_id("CREATE_INDEX_DIMENSION_MISMATCH")
    assert (await store.describe_index(IDX)).dimension == 4


async def test_create_index_with_another_metric_warns_and_keeps_the_first(
    store: SQLiteVector, caplog: pytest.LogCaptureFixture
) -> None:
    await store.create_index(IDX, 4, metric="dotproduct")
    with caplog.at_level(logging.WARNING, logger="mastra_memory"):
        await store.create_index(IDX, 4, metric="euclidean")
    assert any("dotproduct" in r.getMessage() and "euclidean" in r.getMessage() for r in caplog.records)
    assert (await store.describe_index(IDX)).metric == "dotproduct"


@pytest.mark.parametrize("kind", ["hnsw", "ivfflat"])
async def test_ann_index_types_are_a_capability_error(store: SQLiteVector, kind: str) -> None:
    with pytest.raises(CapabilityError, match="flat"):
        await store.create_index(IDX, 4, index_config={"type": kind})
    assert await store.list_indexes() == []


async def test_flat_index_ignores_tuning_numbers_with_a_warning(
    store: SQLiteVector, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="mastra_memory"):
        await store.create_index(
            IDX, 4, index_config={"type": "flat", "hnsw": {"m": 8, "efConstruction": 32}}
        )
    assert any("ef_construction, m ignored" in r.getMessage() for r in caplog.records)


async def test_metric_from_index_config(store: SQLiteVector) -> None:
    await store.create_index(IDX, 2, index_config={"metric": "euclidean"})
    assert (await store.describe_index(IDX)).metric == "euclidean"


async def test_delete_index_is_idempotent_and_removes_records(index: SQLiteVector) -> None:
    await index.delete_index(IDX)
    await index.delete_index(IDX)
    assert await index.list_indexes() == []
    await index.create_index(IDX, 3)
    assert (await index.describe_index(IDX)).count == 0


async def test_list_indexes_in_name_order(store: SQLiteVector) -> None:
    for name in ("zeta", "alpha", "memory_messages_384"):
        await store.create_index(name, 2)
    assert await store.list_indexes() == ["alpha", "memory_messages_384", "zeta"]


@pytest.mark.parametrize(
    ("call", "operation"),
    [
        (lambda s: s.query(IDX, [1, 0, 0]), "QUERY"),
        (lambda s: s.query(IDX, None), "QUERY"),
        (lambda s: s.upsert(IDX, [[1, 0, 0]]), "UPSERT"),
        (lambda s: s.describe_index(IDX), "DESCRIBE_INDEX"),
        (lambda s: s.update_vector(IDX, id="a", update={"metadata": {}}), "UPDATE_VECTOR"),
        (lambda s: s.update_vector(IDX, filter={"k": "a"}, update={"metadata": {}}), "UPDATE_VECTOR"),
        (lambda s: s.delete_vectors(IDX, ids=["a"]), "DELETE_VECTORS"),
        (lambda s: s.delete_vectors(IDX, filter={"k": "a"}), "DELETE_VECTORS"),
        (lambda s: s.delete_vector(IDX, "a"), "DELETE_VECTOR"),
    ],
)
async def test_missing_index_does_not_exist(store: SQLiteVector, call: Any, operation: str) -> None:
    with pytest.raises(IndexNotFoundError, match="does not exist") as err:
        await call(store)
    assert err.value.id == error_id(f"{operation}_INDEX_NOT_FOUND")


async def test_an_index_deleted_by_another_connection_is_not_found(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    first, second = SQLiteVector(path), SQLiteVector(path)
    try:
        await first.create_index(IDX, 2)
        await first.upsert(IDX, [[1, 0]], ids=["a"])
        await second.delete_index(IDX)
        with pytest.raises(IndexNotFoundError, match="does not exist"):
            await first.upsert(IDX, [[1, 0]], ids=["b"])
        await second.create_index(IDX, 3)
        with pytest.raises(IndexDimensionMismatchError):
            await first.upsert(IDX, [[1, 0]], ids=["b"])
    finally:
        await first.close()
        await second.close()


# --- validation ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "status", "phrase"),
    [
        (lambda s: s.upsert(IDX, []), "UPSERT_EMPTY_VECTORS", "vectors must not be empty"),
        (
            lambda s: s.upsert(IDX, [[1, 0, 0]], [{}, {}]),
            "UPSERT_METADATA_LENGTH_MISMATCH",
            "metadata length",
        ),
        (lambda s: s.upsert(IDX, [[1, 0, 0]], ids=["a", "b"]), "UPSERT_IDS_LENGTH_MISMATCH", "ids length"),
        (lambda s: s.upsert(IDX, [[1, math.nan, 0]]), "UPSERT_INVALID_VECTOR", "vector [0][1]"),
        (lambda s: s.upsert(IDX, [[1, 0, 0], [0, "x", 0]]), "UPSERT_INVALID_VECTOR", "vector [1][1]"),
        (lambda s: s.upsert(IDX, [[]]), "UPSERT_INVALID_VECTOR", "vector [0]"),
        (lambda s: s.upsert(IDX, [[1, 0, 1e39]]), "UPSERT_INVALID_VECTOR", "vector [0][2]"),
        (
            lambda s: s.update_vector(IDX, id="a", update={"vector": [1, 0, -1e39]}),
            "UPDATE_VECTOR_INVALID_VECTOR",
            "outside the float32 range",
        ),
        (lambda s: s.upsert(IDX, [[1, 0]]), "UPSERT_DIMENSION_MISMATCH", "'idx' holds 3-dimensional"),
        (lambda s: s.query(IDX, [1, 0]), "QUERY_DIMENSION_MISMATCH", "got 2"),
        (
            lambda s: s.upsert(IDX, [[1, 0, 0]], ids=[""]),
            "UPSERT_INVALID_ID",
            "ids must be non-empty strings",
        ),
        (lambda s: s.upsert(IDX, [[1, 0, 0]], ids=["x" * 513]), "UPSERT_INVALID_ID", "ids must be non-empty"),
        (lambda s: s.upsert(IDX, [[1, 0, 0]], ids=["\ud800"]), "UPSERT_INVALID_ID", "ids must be non-empty"),
        (
            lambda s: s.query(IDX, [1, 0, 0], top_k=0),
            "QUERY_INVALID_TOP_K",
            "top_k must be a positive integer",
        ),
        (lambda s: s.query(IDX, [1, 0, 0], top_k=True), "QUERY_INVALID_TOP_K", "top_k must be a positive"),
        (lambda s: s.query(IDX, [1, 0, 0], top_k=2.0), "QUERY_INVALID_TOP_K", "top_k must be a positive"),
        (lambda s: s.query(IDX, [1, 0, 0], hnsw_ef=3), "QUERY_INVALID_ARGS", "unknown query options"),
        (
            lambda s: s.update_vector(IDX, id="a", filter={"k": "a"}, update={"metadata": {}}),
            "UPDATE_VECTOR_INVALID_ARGS",
            "mutually exclusive",
        ),
        (
            lambda s: s.update_vector(IDX, update={"metadata": {}}),
            "UPDATE_VECTOR_INVALID_ARGS",
            "Either id or filter must be provided",
        ),
        (
            lambda s: s.update_vector(IDX, id="a", update={}),
            "UPDATE_VECTOR_INVALID_ARGS",
            "No updates provided",
        ),
        (
            lambda s: s.update_vector(IDX, filter={}, update={"metadata": {}}),
            "UPDATE_VECTOR_INVALID_ARGS",
            "empty filter",
        ),
        (
            lambda s: s.delete_vectors(IDX, ids=["a"], filter={"k": "a"}),
            "DELETE_VECTORS_INVALID_ARGS",
            "mutually exclusive",
        ),
        (
            lambda s: s.delete_vectors(IDX),
            "DELETE_VECTORS_INVALID_ARGS",
            "Either filter or ids must be provided",
        ),
        (lambda s: s.delete_vectors(IDX, ids=[]), "DELETE_VECTORS_INVALID_ARGS", "empty ids array"),
        (lambda s: s.delete_vectors(IDX, filter={}), "DELETE_VECTORS_INVALID_ARGS", "empty filter"),
        (
            lambda s: s.create_index("other", 0),
            "CREATE_INDEX_INVALID_ARGS",
            "dimension must be a positive integer",
        ),
        (
            lambda s: s.create_index("other", True),
            "CREATE_INDEX_INVALID_ARGS",
            "dimension must be a positive",
        ),
        (
            lambda s: s.create_index("other", 4, metric="manhattan"),
            "CREATE_INDEX_INVALID_ARGS",
            "unsupported metric",
        ),
        (
            lambda s: s.create_index("other", 4, shards=2),
            "CREATE_INDEX_INVALID_ARGS",
            "unknown create_index options",
        ),
        (lambda s: s.create_index("Bad-Name", 4), "CREATE_INDEX_INVALID_INDEX_NAME", "'Bad-Name'"),
        (
            lambda s: s.query('x"; DROP TABLE t; --', [1, 0, 0]),
            "QUERY_INVALID_INDEX_NAME",
            "invalid index name",
        ),
    ],
)
async def test_invalid_input_raises_typed_errors_before_any_write(
    index: SQLiteVector, call: Any, status: str, phrase: str
) -> None:
    with pytest.raises(ValidationError) as err:
        await call(index)
    assert phrase in str(err.value)
    assert err.value.id == error_id(status)
    assert err.value.category == "USER"
    assert (await index.describe_index(IDX)).count == 3
    assert await index.list_indexes() == [IDX]


async def test_invalid_filter_raises_before_any_io(index: SQLiteVector) -> None:
    with pytest.raises(FilterError, match="Unsupported regex construct"):
        await index.query(IDX, [1, 0, 0], filter={"k": {"$regex": "(?i)a"}})
    with pytest.raises(FilterError, match=r"\$nor requires a non-empty list"):
        await index.delete_vectors(IDX, filter={"$nor": []})
    assert (await index.describe_index(IDX)).count == 3


# --- zero vectors (docs/spec.md §3.3) ---------------------------------------------------------------


async def test_a_cosine_index_refuses_zero_vectors_and_writes_nothing_of_the_call(
    index: SQLiteVector,
) -> None:
    before = await index.query(IDX, None, include_vector=True)
    with pytest.raises(ValidationError) as err:
        await index.upsert(
            IDX, [[0, 0, 1], [0, 0, 0], [1, 1, 1], [0.0, -0.0, 0.0]], ids=["d", "zero", "a", "z2"]
        )
    assert err.value.id == error_id("UPSERT_ZERO_VECTOR")
    assert err.value.category == "USER"
    message = str(err.value)
    assert "vector [1] (id 'zero') is a zero vector" in message
    assert "2 of the 4 vectors" in message
    assert "Nothing of this call was written" in message
    assert err.value.details == {"index": IDX, "metric": "cosine", "id": "zero", "ids": ["zero", "z2"]}
    assert await index.query(IDX, None, include_vector=True) == before  # "d" is not there, "a" unchanged


@pytest.mark.parametrize(
    ("call", "status", "phrase"),
    [
        (lambda s: s.query(IDX, [0, 0, 0]), "QUERY_ZERO_VECTOR", "query_vector is a zero vector"),
        (
            lambda s: s.update_vector(IDX, id="a", update={"vector": [0, 0, 0], "metadata": {"k": "x"}}),
            "UPDATE_VECTOR_ZERO_VECTOR",
            "the update vector for id 'a' is a zero vector",
        ),
        (
            lambda s: s.update_vector(IDX, filter={"k": "b"}, update={"vector": [0, 0, 0]}),
            "UPDATE_VECTOR_ZERO_VECTOR",
            "the update vector (by filter) is a zero vector",
        ),
        # Zero length at float32 precision: its squared length underflows (docs/spec.md §3.3).
        (lambda s: s.query(IDX, [1e-30, 0, 0]), "QUERY_ZERO_VECTOR", "zero at float32 precision"),
        (lambda s: s.upsert(IDX, [[0, 1e-25, 1e-25]], ids=["t"]), "UPSERT_ZERO_VECTOR", "(id 't')"),
    ],
)
async def test_zero_vectors_are_refused_on_query_and_update(
    index: SQLiteVector, call: Any, status: str, phrase: str
) -> None:
    before = await index.query(IDX, None, include_vector=True)
    with pytest.raises(ValidationError) as err:
        await call(index)
    assert err.value.id == error_id(status)
    assert phrase in str(err.value)
    assert "use a euclidean or dotproduct index" in str(err.value)
    assert await index.query(IDX, None, include_vector=True) == before


async def test_the_shortest_accepted_cosine_vector_scores_exactly(store: SQLiteVector) -> None:
    await store.create_index(IDX, 3)
    short = [MIN_COSINE_NORM * 2, 0.0, 0.0]
    await store.upsert(IDX, [short, [0, 1, 0]], ids=["short", "y"])
    hits = await store.query(IDX, [1, 0, 0], top_k=2)
    assert [(h.id, h.score) for h in hits] == [("short", pytest.approx(1.0, abs=1e-6)), ("y", 0.0)]
    hits = await store.query(IDX, short, top_k=2)
    assert [(h.id, h.score) for h in hits] == [("short", pytest.approx(1.0, abs=1e-6)), ("y", 0.0)]


@pytest.mark.parametrize("metric", ["euclidean", "dotproduct"])
async def test_euclidean_and_dotproduct_indexes_keep_zero_vectors(store: SQLiteVector, metric: Any) -> None:
    await store.create_index(IDX, 3, metric=metric)
    await store.upsert(IDX, [[0, 0, 0], [3, 4, 0]], ids=["zero", "far"])
    hits = await store.query(IDX, [0, 0, 0], top_k=2, include_vector=True)
    expected = {"euclidean": {"zero": 1.0, "far": 1 / 6}, "dotproduct": {"zero": 0.0, "far": 0.0}}[metric]
    assert {h.id: h.score for h in hits} == pytest.approx(expected)
    assert next(h.vector for h in hits if h.id == "zero") == [0.0, 0.0, 0.0]
    await store.update_vector(IDX, id="far", update={"vector": [0, 0, 0]})
    assert (await store.describe_index(IDX)).count == 2


async def test_the_rule_follows_the_metric_the_index_has_not_the_one_asked_for(store: SQLiteVector) -> None:
    await store.create_index(IDX, 3, metric="euclidean")
    await store.create_index(IDX, 3)  # cosine asked for: the existing euclidean index is kept
    await store.upsert(IDX, [[0, 0, 0]], ids=["zero"])
    assert (await store.describe_index(IDX)).count == 1
    await store.delete_index(IDX)
    await store.create_index(IDX, 3)  # now a cosine index: the cached metric must not linger
    with pytest.raises(ValidationError) as err:
        await store.upsert(IDX, [[0, 0, 0]], ids=["zero"])
    assert err.value.id == error_id("UPSERT_ZERO_VECTOR")
    assert (await store.describe_index(IDX)).count == 0


# --- upsert and metadata ---------------------------------------------------------------------------


async def test_upsert_replaces_and_the_last_repeated_id_wins(index: SQLiteVector) -> None:
    returned = await index.upsert(
        IDX, [[0, 0, 1], [0, 1, 1], [1, 0, 1]], [{"v": 1}, {"v": 2}, {"v": 3}], ["a", "z", "a"]
    )
    assert returned == ["a", "z", "a"]
    hits = {h.id: h for h in await index.query(IDX, None, top_k=10, include_vector=True)}
    assert set(hits) == {"a", "b", "c", "z"}
    assert hits["a"].metadata == {"v": 3}  # the whole record replaced: no "k"/"n" left
    assert hits["a"].vector == [1.0, 0.0, 1.0]
    assert (await index.describe_index(IDX)).count == 4


async def test_upsert_generates_uuid_ids_in_input_order(store: SQLiteVector) -> None:
    await store.create_index(IDX, 2)
    ids = await store.upsert(IDX, [[1, 0], [0, 1]], [{"i": 0}, {"i": 1}])
    assert len(set(ids)) == 2
    assert all(len(i) == 36 for i in ids)
    hits = {h.id: h.metadata["i"] for h in await store.query(IDX, None)}
    assert hits == {ids[0]: 0, ids[1]: 1}


async def test_metadata_round_trip_is_exact_with_types(store: SQLiteVector) -> None:
    when = datetime(2024, 3, 5, 14, 7, 0, 123456, tzinfo=UTC)
    record: dict[str, Any] = {
        "text": "héllo wörld 😀 שלום \"quoted\" 'single' back\\slash\nnewline",
        "nested": {"a": {"b": [1, {"c": None}]}, "k'ey\"": "v"},
        "empty_list": [],
        "empty_dict": {},
        "null": None,
        "flag": True,
        "off": False,
        "int": 42,
        "negative": -7,
        "float": 3.25,
        "whole_float": 2.0,
        "max_safe": 2**53 - 1,
        "int64_max": 2**63 - 1,
        "when": when,
        "pair": (1, "a"),
    }
    await store.create_index(IDX, 2)
    await store.upsert(IDX, [[1, 0]], [record], ["r"])
    (hit,) = await store.query(IDX, [1, 0])
    expected = {**record, "when": "2024-03-05T14:07:00.123Z", "pair": [1, "a"]}
    assert hit.metadata == expected
    # Equality alone would accept True == 1 and 2 == 2.0: compare the types too.
    assert json.dumps(hit.metadata, sort_keys=True) == json.dumps(expected, sort_keys=True)
    assert type(hit.metadata["flag"]) is bool
    assert type(hit.metadata["int"]) is int
    assert type(hit.metadata["whole_float"]) is float
    assert type(hit.metadata["max_safe"]) is int


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        ({"s": {1, 2}}, "s"),
        ({"b": b"bytes"}, "b"),
        ({"d": Decimal("1.5")}, "d"),
        ({"n": math.nan}, "n"),
        ({"deep": {"inf": [math.inf]}}, "deep.inf[0]"),
        ({"o": object()}, "o"),
        ({"naive": datetime(2024, 1, 1)}, "naive"),
        ({"_mastra_id": "x"}, "_mastra_id"),
        ({"nul": "a\x00b"}, "nul"),
        ({"keys": {"a\x00": 1}}, "keys.a\x00 (key)"),
        ({"big": [2**63]}, "big[0]"),
        ({"surrogate": "\udc00"}, "surrogate"),
    ],
)
async def test_unrepresentable_metadata_is_rejected_and_nothing_changes(
    index: SQLiteVector, bad: dict[str, Any], where: str
) -> None:
    with pytest.raises(ValidationError) as err:
        await index.upsert(IDX, [[0, 0, 1], [0, 1, 1]], [{"fine": 1}, bad], ["new", "a"])
    assert err.value.id == error_id("UPSERT_INVALID_METADATA")
    assert where in str(err.value)
    assert "metadata[1]" in str(err.value)
    assert await ids_of(index) == {"a", "b", "c"}
    assert (await index.query(IDX, None, filter={"k": "a"}))[0].metadata == {"k": "a", "n": 1}
    with pytest.raises(ValidationError) as update_err:
        await index.update_vector(IDX, id="a", update={"metadata": bad})
    assert update_err.value.id == error_id("UPDATE_VECTOR_INVALID_METADATA")
    assert (await index.query(IDX, None, filter={"k": "a"}))[0].metadata == {"k": "a", "n": 1}


async def test_ids_are_arbitrary_strings(store: SQLiteVector) -> None:
    ids = ["'; DROP TABLE x; --", 'q"uote', "😀", "a\x00b", "x" * 512, "B", "a"]
    await store.create_index(IDX, 2)
    await store.upsert(IDX, [[1, 0]] * len(ids), [{"i": i} for i in range(len(ids))], ids)
    listed = [h.id for h in await store.query(IDX, None, top_k=20)]
    assert listed == sorted(ids)  # metadata-only order: id ascending, by code point
    await store.delete_vectors(IDX, ids=["a\x00b", "missing"])
    assert "a\x00b" not in await ids_of(store)
    assert len(await ids_of(store)) == len(ids) - 1


# --- query -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("metric", ["cosine", "euclidean", "dotproduct"])
async def test_scores_match_a_float64_brute_force(store: SQLiteVector, metric: Any) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(60, 12)) * rng.uniform(0.1, 5, size=(60, 1))
    if metric != "cosine":
        vectors[5] = 0.0  # a zero vector (a cosine index refuses one: docs/spec.md §3.3)
    await store.create_index(IDX, 12, metric=metric)
    ids = [f"v{i:02d}" for i in range(60)]
    await store.upsert(IDX, vectors, ids=ids)
    query = rng.normal(size=12)
    hits = await store.query(IDX, query, top_k=60, include_vector=True)
    assert len(hits) == 60
    for hit in hits:
        stored = np.asarray(hit.vector, dtype=np.float64)
        assert np.allclose(stored, vectors[int(hit.id[1:])], rtol=1e-6, atol=1e-6)  # float32 precision
        if metric == "cosine":
            norm = np.linalg.norm(stored) * np.linalg.norm(query)
            expected = float(stored @ query / norm) if norm else 0.0
        elif metric == "euclidean":
            expected = 1.0 / (1.0 + float(np.linalg.norm(stored - query)))
        else:
            expected = float(stored @ query)
        assert hit.score == pytest.approx(expected, abs=1e-4)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    best = await store.query(IDX, query, top_k=5)
    assert [h.id for h in best] == [h.id for h in hits[:5]]


async def test_ties_are_broken_by_id_and_top_k_keeps_the_right_ones(store: SQLiteVector) -> None:
    ids = [f"id{i:03d}" for i in range(200)]
    shuffled = random.Random(3).sample(ids, len(ids))
    await store.create_index(IDX, 2)
    await store.upsert(IDX, [[1.0, 1.0]] * 200, ids=shuffled)
    await store.upsert(IDX, [[1.0, 0.0]], ids=["zz-worse"])
    hits = await store.query(IDX, [1.0, 1.0], top_k=7)
    assert [h.id for h in hits] == ids[:7]
    filtered = await store.query(IDX, [1.0, 1.0], top_k=3, filter={"$not": {"x": 1}})
    assert [h.id for h in filtered] == ids[:3]


async def test_include_vector(index: SQLiteVector) -> None:
    plain = await index.query(IDX, [1, 0, 0], top_k=1)
    assert plain[0].vector is None
    (hit,) = await index.query(IDX, [1, 0, 0], top_k=1, include_vector=True)
    assert (hit.id, hit.vector) == ("a", [1.0, 0.0, 0.0])
    (listed,) = await index.query(IDX, None, filter={"k": "c"}, include_vector=True)
    assert listed.vector == [1.0, 1.0, 0.0]


async def test_metadata_only_query_lists_in_id_order_with_score_zero(index: SQLiteVector) -> None:
    hits = await index.query(IDX, None, top_k=2)
    assert [(h.id, h.score) for h in hits] == [("a", 0.0), ("b", 0.0)]
    assert [h.id for h in await index.query(IDX, None, filter={"n": {"$gte": 2}})] == ["b", "c"]


async def test_filtered_query_returns_min_of_top_k_and_matches(index: SQLiteVector) -> None:
    await index.upsert(
        IDX, [[1, 0, 0.01 * i] for i in range(50)], [{"k": "many"}] * 50, [f"m{i}" for i in range(50)]
    )
    assert len(await index.query(IDX, [0, 1, 0], top_k=10, filter={"k": "many"})) == 10
    assert len(await index.query(IDX, [0, 1, 0], top_k=10, filter={"k": {"$in": ["a", "b"]}})) == 2
    assert await index.query(IDX, [0, 1, 0], top_k=10, filter={"k": "none"}) == []


async def test_ann_query_options_are_accepted(index: SQLiteVector) -> None:
    hits = await index.query(IDX, [1, 0, 0], top_k=1, ef=64, probes=4)
    assert [h.id for h in hits] == ["a"]


# --- update and delete -----------------------------------------------------------------------------


async def test_update_by_id_replaces_metadata_and_vector(index: SQLiteVector) -> None:
    await index.update_vector(IDX, id="a", update={"metadata": {"only": True}})
    await index.update_vector(IDX, id="b", update={"vector": [0, 0, 1]})
    await index.update_vector(IDX, id="missing", update={"metadata": {"x": 1}})
    hits = {h.id: h for h in await index.query(IDX, None, include_vector=True)}
    assert hits["a"].metadata == {"only": True}
    assert hits["a"].vector == [1.0, 0.0, 0.0]
    assert hits["b"].metadata == {"k": "b", "n": 2}
    assert hits["b"].vector == [0.0, 0.0, 1.0]
    assert set(hits) == {"a", "b", "c"}


async def test_update_by_filter_touches_every_match_and_nothing_else(index: SQLiteVector) -> None:
    await index.update_vector(
        IDX, filter={"n": {"$gte": 2}}, update={"metadata": {"tier": "high"}, "vector": [0, 0, 1]}
    )
    await index.update_vector(IDX, filter={"n": 99}, update={"metadata": {"never": 1}})
    hits = {h.id: h for h in await index.query(IDX, None, include_vector=True)}
    assert hits["a"].metadata == {"k": "a", "n": 1}
    assert hits["a"].vector == [1.0, 0.0, 0.0]
    for rid in ("b", "c"):
        assert hits[rid].metadata == {"tier": "high"}
        assert hits[rid].vector == [0.0, 0.0, 1.0]


async def test_update_vector_of_wrong_dimension(index: SQLiteVector) -> None:
    with pytest.raises(IndexDimensionMismatchError):
        await index.update_vector(IDX, id="a", update={"vector": [1, 0]})


async def test_delete_by_id_ids_and_filter(index: SQLiteVector) -> None:
    await index.upsert(IDX, [[0, 0, 1]] * 3, [{"g": 1}, {"g": 1}, {"g": 2}], ["d", "e", "f"])
    await index.delete_vector(IDX, "a")
    await index.delete_vector(IDX, "missing")
    assert await ids_of(index) == {"b", "c", "d", "e", "f"}
    await index.delete_vectors(IDX, ids=["b", "missing", "b"])
    assert await ids_of(index) == {"c", "d", "e", "f"}
    await index.delete_vectors(IDX, filter={"g": 1})
    assert await ids_of(index) == {"c", "f"}
    await index.delete_vectors(IDX, filter={"g": 42})
    assert (await index.describe_index(IDX)).count == 2


# --- snapshot cache --------------------------------------------------------------------------------


async def test_every_write_is_visible_to_the_next_query(index: SQLiteVector) -> None:
    query = [1, 0, 0]
    assert [h.id for h in await index.query(IDX, query, top_k=1)] == ["a"]
    await index.upsert(IDX, [[2, 0, 0.0001]], ids=["new"])
    assert {h.id for h in await index.query(IDX, query, top_k=10)} == {"a", "b", "c", "new"}
    await index.update_vector(IDX, id="a", update={"vector": [0, 0, 1]})
    assert [h.id for h in await index.query(IDX, query, top_k=1)] == ["new"]
    await index.update_vector(IDX, filter={"k": "c"}, update={"vector": [1, 0, 0]})
    assert [h.id for h in await index.query(IDX, query, top_k=1)] == ["c"]
    await index.delete_vectors(IDX, filter={"k": "c"})
    assert [h.id for h in await index.query(IDX, query, top_k=1)] == ["new"]
    await index.delete_vectors(IDX, ids=["new"])
    assert {h.id for h in await index.query(IDX, query, top_k=10)} == {"a", "b"}
    await index.delete_index(IDX)
    await index.create_index(IDX, 3)
    assert await index.query(IDX, query) == []


async def test_writes_through_another_connection_invalidate_the_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "two.db"
    reader, writer = SQLiteVector(str(path)), SQLiteVector(f"sqlite:///{path}")
    try:
        await reader.create_index(IDX, 2)
        await reader.upsert(IDX, [[1, 0]], ids=["a"])
        assert [h.id for h in await reader.query(IDX, [1, 0])] == ["a"]
        await writer.upsert(IDX, [[1, 0.0001]], ids=["b"])
        assert {h.id for h in await reader.query(IDX, [1, 0])} == {"a", "b"}
        await writer.delete_index(IDX)
        await writer.create_index(IDX, 2)
        await writer.upsert(IDX, [[0, 1]], ids=["c"])
        assert [h.id for h in await reader.query(IDX, [1, 0])] == ["c"]
    finally:
        await reader.close()
        await writer.close()


# --- concurrency, scale, files ---------------------------------------------------------------------


async def test_concurrent_upserts_and_queries_from_many_tasks(store: SQLiteVector) -> None:
    await store.create_index(IDX, 4)

    async def writer(task: int) -> None:
        for j in range(10):
            await store.upsert(IDX, [[1, task, j, 1]], [{"task": task, "j": j}], [f"t{task}-{j}"])

    async def reader(task: int) -> int:
        seen = 0
        for _ in range(10):
            hits = await store.query(IDX, [1, task, 0, 1], top_k=5, filter={"task": task})
            assert all(h.metadata["task"] == task for h in hits)
            seen = max(seen, len(hits))
        return seen

    results = await asyncio.gather(*(writer(t) for t in range(20)), *(reader(t) for t in range(20)))
    assert all(r is None for r in results[:20])
    assert (await store.describe_index(IDX)).count == 200
    for task in range(20):
        assert len(await store.query(IDX, None, top_k=100, filter={"task": task})) == 10


async def test_a_batch_of_ten_thousand_vectors(store: SQLiteVector) -> None:
    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(10_000, 16)).astype(np.float32)
    ids = [f"v{i:05d}" for i in range(10_000)]
    metadata = [{"bucket": i % 7, "even": i % 2 == 0} for i in range(10_000)]
    await store.create_index(IDX, 16, metric="dotproduct")
    assert await store.upsert(IDX, vectors, metadata, ids) == ids
    assert (await store.describe_index(IDX)).count == 10_000
    query = rng.normal(size=16)
    scores = vectors.astype(np.float64) @ query
    best = [ids[i] for i in np.argsort(-scores, kind="stable")[:10]]
    assert [h.id for h in await store.query(IDX, query, top_k=10)] == best
    in_bucket = [i for i in np.argsort(-scores, kind="stable") if i % 7 == 3][:10]
    hits = await store.query(IDX, query, top_k=10, filter={"bucket": 3})
    assert [h.id for h in hits] == [ids[i] for i in in_bucket]
    assert len(await store.query(IDX, None, top_k=10_000, filter={"even": True})) == 5_000


async def test_memory_databases_are_private(store: SQLiteVector) -> None:
    other = SQLiteVector(":memory:")
    try:
        await store.create_index(IDX, 2)
        assert await other.list_indexes() == []
    finally:
        await other.close()


async def test_settings_object_and_file_persistence(tmp_path: Path) -> None:
    settings = SQLiteSettings(url=f"file:{tmp_path / 'nested' / 'memory.db'}")
    first = SQLiteVector(settings)
    await first.create_index(IDX, 2, metadata_indexes=["thread_id"])
    await first.upsert(IDX, [[1, 0]], [{"thread_id": "t1"}], ["a"])
    await first.close()
    second = SQLiteVector(tmp_path / "nested" / "memory.db")
    try:
        hits = await second.query(IDX, [1, 0], filter={"thread_id": "t1"})
        assert [(h.id, h.metadata) for h in hits] == [("a", {"thread_id": "t1"})]
    finally:
        await second.close()


async def test_shares_a_file_with_the_sqlite_storage(tmp_path: Path) -> None:
    path = str(tmp_path / "memory.db")
    storage, vector = SQLiteStorage(path), SQLiteVector(path)
    try:
        await storage.init()
        await vector.create_index(IDX, 2)
        await storage.save_thread(Thread(id="t1", resource_id="r1"))
        await vector.upsert(IDX, [[1, 0]], [{"thread_id": "t1"}], ["m1"])
        assert await storage.get_thread_by_id("t1") is not None
        assert [h.id for h in await vector.query(IDX, [1, 0], filter={"thread_id": "t1"})] == ["m1"]
    finally:
        await storage.close()
        await vector.close()


# --- metadata indexes ------------------------------------------------------------------------------


async def test_metadata_indexes_are_expression_indexes_the_filters_use(tmp_path: Path) -> None:
    path = tmp_path / "indexed.db"
    store = SQLiteVector(str(path))
    try:
        await store.create_index(IDX, 2, metadata_indexes=["thread_id", "resource_id", "not an identifier"])
        await store.create_index(IDX, 2, metadata_indexes=["thread_id"])  # idempotent
        await store.upsert(
            IDX, [[1, 0]] * 3, [{"thread_id": "t1"}, {"thread_id": ["t1"]}, {"thread_id": "t2"}]
        )
        assert len(await store.query(IDX, [1, 0], filter={"thread_id": "t1"})) == 2
    finally:
        await store.close()
    with sqlite3.connect(path) as conn:
        definitions = [
            r[0]
            for r in conn.execute("SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
        ]
        assert sorted(d.split(" ON ")[1] for d in definitions) == [
            """"mastra_vectors__idx" (json_extract(metadata, '$."resource_id"'))""",
            """"mastra_vectors__idx" (json_extract(metadata, '$."thread_id"'))""",
            # the rows holding a list or an object at the key (scopes.py): a scope is read only without any
            """"mastra_vectors__idx" (seq) WHERE json_type(metadata, '$."resource_id"')"""
            """ IN ('array', 'object')""",
            """"mastra_vectors__idx" (seq) WHERE json_type(metadata, '$."thread_id"')"""
            """ IN ('array', 'object')""",
        ]
        for flt in (
            {"thread_id": "t1"},
            {"thread_id": {"$in": ["t1", "t2"]}},
            {"thread_id": "t1", "resource_id": "r"},
        ):
            node = parse(flt)
            assert node is not None
            fragment = SQLiteFilterTranslator().translate(node)
            plan = conn.execute(
                f'EXPLAIN QUERY PLAN SELECT seq FROM "mastra_vectors__idx" WHERE {fragment.sql}',
                fragment.params,
            )
            details = " ".join(row[3] for row in plan)
            assert "USING INDEX mastra_vidx_" in details, (flt, details)


# --- errors keep their cause -----------------------------------------------------------------------


async def test_unsupported_filter_raises_before_io(index: SQLiteVector) -> None:
    deep: dict[str, Any] = {"k": "a"}
    for _ in range(10):  # within the parse-time depth limit (docs/spec.md §2.10), too deep for SQLite
        deep = {"x": {"$elemMatch": deep}}
    with pytest.raises(UnsupportedFilterError, match="nests too deeply for SQLite") as err:
        await index.query(IDX, [1, 0, 0], filter=deep)
    assert isinstance(err.value, MastraMemoryError)
    assert err.value.details["adapter"] == "sqlite"
