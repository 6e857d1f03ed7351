"""Vector-store input no store can hold is a typed error before any I/O (issue 12, findings 2, 4, 5 and 7;
docs/spec.md §3.3, §3.5, §3.6).

The store-independent half of the kit's ``hostile`` domain (which replays each class on every target):
the iterative metadata walk and its limits exactly at the boundary, every shape of vector input (lists,
numpy arrays of every kind, matrices), id sequences, and the ``dimension``/``top_k`` bounds, on the
embedded SQLite store. Before the fixes, metadata nested 10,000 levels raised ``RecursionError``,
``ids="r1"`` wrote or deleted the records ``"r"`` and ``"1"``, ``[1e39, 0, 0]`` was stored or queried as
``inf`` (a record that vanished from every query, or a query that found nothing), ``10**400`` raised
``OverflowError``, ``[[1], 0, 0]`` numpy's ``ValueError``, ``[True, 0, 0]`` was stored as ``[1, 0, 0]``,
and ``dimension=10**9`` and ``top_k=2**63`` reached the backend.
"""

from __future__ import annotations

import enum
import json
import time
from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mastra_memory.errors import ValidationError
from mastra_memory.metadata_limits import (
    MAX_METADATA_DEPTH,
    MAX_VECTOR_METADATA_BYTES,
    MAX_VECTOR_METADATA_KEYS,
    VECTOR_METADATA,
    shape_problem,
)
from mastra_memory.stores.sqlite.store import SQLiteVector
from mastra_memory.vector.records import MAX_DIMENSION, MAX_TOP_K, MAX_VECTOR_NORM

#: A hang guard, not a speed requirement: each refusal takes milliseconds.
_BOUND = 2.0
_ID = "MASTRA_VECTOR_SQLITE_"


def nested(levels: int, leaf: Any = 1) -> dict[str, Any]:
    value: Any = leaf
    for _ in range(levels - 1):
        value = {"k": value}
    return {"k": value}


def deep_list(levels: int) -> list[Any]:
    value: list[Any] = [1]
    for _ in range(levels - 1):
        value = [value]
    return value


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteVector]:
    vector = SQLiteVector(str(tmp_path / "vectors.db"))
    await vector.create_index("idx", 3)
    await vector.upsert(
        "idx",
        [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]],
        [{"n": 0}, {"n": 1}, {"n": 2}, {"n": 3}],
        ids=["r1", "r", "1", "kept"],
    )
    try:
        yield vector
    finally:
        await vector.close()


async def state(store: SQLiteVector) -> list[Any]:
    hits = await store.query("idx", [1, 0.5, 0.25], top_k=10, include_vector=True)
    return [(await store.describe_index("idx")).count, sorted((h.id, h.metadata, h.vector) for h in hits)]


# --- the metadata walk --------------------------------------------------------------------------------


def _cycle() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["self"] = value
    return value


def _shared_lists() -> dict[str, Any]:
    inner = [1] * 1_000
    return {"a": [[inner] * 1_000] * 1_000}  # a few KB that a naive walk visits 10**9 times


@pytest.mark.parametrize(
    ("build", "phrase"),
    [
        (lambda: nested(100_000), "metadata nested too deeply: more than 32 levels"),
        (lambda: {"a": deep_list(100_000)}, "metadata nested too deeply"),
        (_cycle, "metadata nested too deeply"),
        (_shared_lists, "metadata too large: more than 262,144 bytes"),
        (lambda: {"a": [0] * 10_000_000}, "metadata too large"),
        (lambda: {f"k{i}": i for i in range(100_000)}, "metadata too large: more than 1,024 keys"),
        (lambda: {"a": "x" * 10_000_000}, "metadata too large"),
        (lambda: {"a": ["ok", {"b": "\ud800"}]}, "metadata value at a[1].b ('\\ud800') contains an unpaired"),
        (lambda: {"a": {"\udfffkey": 1}}, "metadata key '\\udfffkey' at a contains an unpaired surrogate"),
    ],
    ids=[
        "100k-dicts",
        "100k-lists",
        "cycle",
        "shared-lists",
        "10M-list",
        "100k-keys",
        "10MB",
        "value",
        "key",
    ],
)
def test_the_walk_refuses_within_a_bound(build: Any, phrase: str) -> None:
    value = build()
    start = time.perf_counter()
    problem = shape_problem(value, VECTOR_METADATA)
    assert time.perf_counter() - start < _BOUND
    assert problem is not None
    assert problem.startswith(phrase), problem
    problem.encode("utf-8")  # printable: surrogates are shown escaped


async def test_metadata_up_to_the_limits_is_stored_exactly(store: SQLiteVector) -> None:
    text = "é" * ((MAX_VECTOR_METADATA_BYTES - len('{"t":""}')) // 2)  # two UTF-8 bytes each
    records = [
        nested(MAX_METADATA_DEPTH),
        {"a": deep_list(MAX_METADATA_DEPTH - 1)},
        {f"k{i}": i for i in range(MAX_VECTOR_METADATA_KEYS)},
        {"t": text},
    ]
    assert len(json.dumps(records[3], ensure_ascii=False, separators=(",", ":")).encode()) == 262_144
    ids = await store.upsert("idx", [[1, 2, 3]] * 4, records, ids=["d", "l", "k", "t"])
    hits = {h.id: h.metadata for h in await store.query("idx", [1, 2, 3], top_k=10)}
    assert [hits[i] for i in ids] == records


@pytest.mark.parametrize(
    ("metadata", "phrase"),
    [
        (
            nested(MAX_METADATA_DEPTH + 1),
            "metadata nested too deeply: more than 32 levels of objects and lists",
        ),
        ({"a": deep_list(MAX_METADATA_DEPTH)}, "metadata nested too deeply"),
        ({f"k{i}": i for i in range(MAX_VECTOR_METADATA_KEYS + 1)}, "more than 1,024 keys"),
        ({"t": "é" * ((MAX_VECTOR_METADATA_BYTES - 8) // 2 + 1)}, "more than 262,144 bytes as JSON (UTF-8)"),
        ({"when": __import__("datetime").datetime(1, 1, 1)}, "must be timezone-aware"),
    ],
    ids=["depth+1", "lists+1", "keys+1", "bytes+1", "naive-datetime"],
)
async def test_one_past_a_limit_is_refused_on_every_write(
    store: SQLiteVector, metadata: dict[str, Any], phrase: str
) -> None:
    before = await state(store)
    with pytest.raises(ValidationError) as upserting:
        await store.upsert("idx", [[1, 2, 3]], [metadata], ids=["kept"])
    assert upserting.value.id == _ID + "UPSERT_INVALID_METADATA"
    assert phrase in str(upserting.value)
    with pytest.raises(ValidationError) as updating:
        await store.update_vector("idx", id="kept", update={"metadata": metadata})
    assert updating.value.id == _ID + "UPDATE_VECTOR_INVALID_METADATA"
    with pytest.raises(ValidationError):
        await store.update_vector("idx", filter={"n": 3}, update={"metadata": metadata})
    assert await state(store) == before


def test_the_messages_say_what_to_do() -> None:
    assert "flatten it" in str(shape_problem(nested(40), VECTOR_METADATA))
    assert "JSON string" in str(shape_problem({f"k{i}": i for i in range(2_000)}, VECTOR_METADATA))
    assert "reference" in str(shape_problem({"a": "x" * 300_000}, VECTOR_METADATA))


async def test_records_stored_before_the_limits_stay_readable_and_deletable(store: SQLiteVector) -> None:
    # What an older version let through, written by the store's own hook (no validation runs there).
    await store._upsert("idx", ["old"], np.array([[1.0, 2.0, 3.0]]), [nested(60)])
    assert "old" in {h.id for h in await store.query("idx", [1, 2, 3], top_k=10)}
    await store.update_vector("idx", id="old", update={"metadata": {"fixed": True}})
    assert [h.metadata for h in await store.query("idx", [1, 2, 3], top_k=10, filter={"fixed": True})] == [
        {"fixed": True}
    ]
    await store.delete_vector("idx", "old")
    assert (await store.describe_index("idx")).count == 4


# --- vectors ------------------------------------------------------------------------------------------


class Level(enum.IntEnum):
    LOW = 1


@pytest.mark.parametrize(
    ("vector", "phrase"),
    [
        ([1e39, 0, 0], "vector [0][0] = 1e+39 is outside the float32 range"),
        ([0, 0, -3.5e38], "vector [0][2] = -3.5e+38 is outside the float32 range"),
        ([10**400, 0, 0], "vector [0][0] is outside the float32 range"),
        ([0, -(10**39), 0], "vector [0][1] = -1e+39 is outside the float32 range"),
        ([float("nan"), 0, 0], "vector [0][0] is not finite"),
        ([0, float("-inf"), 0], "vector [0][1] is not finite"),
        ([[1], 0, 0], "vector [0][0] is not a number: [1]"),
        ([True, 0, 0], "vector [0][0] is not a number: True (bools are not numbers here)"),
        ([1, np.bool_(False), 0], "vector [0][1] is not a number"),
        ([1, "2", 0], "vector [0][1] is not a number: '2'"),
        ([1, Decimal(2), 0], "vector [0][1] is not a number"),
        ([1, 2j, 0], "vector [0][1] is not a number"),
        ([1e18, 1e17, 0], "vector [0] is too long: its length 1.005e+18 is above 1e+18"),
        ([2e19, 0, 0], "vector [0] is too long"),
        (np.array([1e39, 0, 0]), "vector [0][0] = 1e+39 is outside the float32 range"),
        (np.array([True, False, True]), "vector [0][0] is not a number: the array holds bool values"),
        (np.array([1, 10**400, 0], dtype=object), "vector [0][1] is outside the float32 range"),
        (np.array(["1", "2", "3"]), "vector [0][0] is not a number"),
        (np.zeros((1, 3)), "a vector must be a non-empty list"),
        ("abc", "expected a list of numbers, got str"),
        (b"abc", "expected a list of numbers, got bytes"),
    ],
    ids=lambda v: None,
)
async def test_every_shape_of_bad_vector_is_refused_everywhere(
    store: SQLiteVector, vector: Any, phrase: str
) -> None:
    before = await state(store)
    with pytest.raises(ValidationError) as upserting:
        await store.upsert("idx", [vector], ids=["kept"])
    assert upserting.value.id == _ID + "UPSERT_INVALID_VECTOR"
    assert phrase in str(upserting.value), str(upserting.value)
    with pytest.raises(ValidationError) as updating:
        await store.update_vector("idx", id="kept", update={"vector": vector})
    assert updating.value.id == _ID + "UPDATE_VECTOR_INVALID_VECTOR"
    with pytest.raises(ValidationError) as querying:
        await store.query("idx", vector)
    assert querying.value.id == _ID + "QUERY_INVALID_VECTOR"
    assert phrase.replace("vector [0]", "query_vector") in str(querying.value)
    assert await state(store) == before


@pytest.mark.parametrize(
    "vector",
    [
        [np.float32(1), np.int64(2), np.uint8(3)],
        [Level.LOW, 2, 3.5],
        (1, 2, 3),
        np.array([1, 2, 3], dtype=np.float16),
        np.array([1, 2, 3], dtype=np.uint64),
        [MAX_VECTOR_NORM, 0, 0],
        [3e-39, 0, 1],  # subnormal in float32: finite
    ],
    ids=["numpy-scalars", "int-enum", "tuple", "float16", "uint64", "at-the-norm-limit", "subnormal"],
)
async def test_numbers_of_every_kind_are_accepted(store: SQLiteVector, vector: Any) -> None:
    await store.upsert("idx", [vector], ids=["new"])
    (hit,) = [h for h in await store.query("idx", vector, top_k=10, include_vector=True) if h.id == "new"]
    assert hit.vector == pytest.approx([float(x) for x in vector], rel=1e-6)


async def test_a_matrix_names_the_first_bad_row_and_writes_nothing(store: SQLiteVector) -> None:
    before = await state(store)
    matrix = np.ones((5, 3), dtype=np.float32).astype(np.float64)
    matrix[3, 2] = 1e39
    with pytest.raises(ValidationError, match=r"vector \[3\]\[2\] = 1e\+39 is outside the float32 range"):
        await store.upsert("idx", matrix, ids=[f"m{i}" for i in range(5)])
    matrix[3, 2] = np.inf
    with pytest.raises(ValidationError, match=r"vector \[3\]\[2\] is not finite"):
        await store.upsert("idx", matrix, ids=[f"m{i}" for i in range(5)])
    with pytest.raises(ValidationError, match=r"vector \[1\] is too long"):
        await store.upsert("idx", [[1, 0, 0], [2e18, 0, 0]], ids=["a", "b"])
    with pytest.raises(ValidationError, match=r"vectors must be a list of vectors"):
        await store.upsert("idx", {"a": [1, 0, 0]}, ids=["a"])  # type: ignore[arg-type]
    assert await state(store) == before


# --- ids ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ids", "phrase"),
    [
        (
            "r1",
            "ids must be a list of id strings, not a str (it would be split into its characters); "
            "pass ['r1'] for one id",
        ),
        (b"r1", "not a bytes"),
        (bytearray(b"r1"), "not a bytearray"),
        (5, "ids must be a list of id strings, got int"),
        ({"r": 1}, "got dict"),
        (["r", 5], "ids must be non-empty strings"),
        (["r", ""], "ids must be non-empty strings"),
        (
            ["\ud800"],
            "ids must be non-empty strings that encode as UTF-8 (no unpaired surrogates) (ids[0] = "
            "'\\ud800')",
        ),
    ],
    ids=["str", "bytes", "bytearray", "int", "dict", "not-a-string", "empty", "surrogate"],
)
async def test_ids_that_are_not_a_list_of_strings_change_nothing(
    store: SQLiteVector, ids: Any, phrase: str
) -> None:
    before = await state(store)
    with pytest.raises(ValidationError) as deleting:
        await store.delete_vectors("idx", ids=ids)
    assert deleting.value.id == _ID + "DELETE_VECTORS_INVALID_ID"
    assert phrase in str(deleting.value)
    with pytest.raises(ValidationError) as upserting:
        await store.upsert("idx", [[0, 1, 1], [1, 0, 1]], ids=ids)
    assert upserting.value.id in (_ID + "UPSERT_INVALID_ID", _ID + "UPSERT_IDS_LENGTH_MISMATCH")
    assert await state(store) == before  # "r1" split into "r" and "1" deleted or overwrote both


async def test_id_sequences_of_any_kind_work(store: SQLiteVector) -> None:
    assert await store.upsert("idx", [[0, 1, 1], [1, 0, 1]], ids=("a", "b")) == ["a", "b"]
    assert await store.upsert("idx", [[0, 1, 1]], ids=np.array(["c"])) == ["c"]
    with pytest.raises(ValidationError, match="in the order of the vectors, got set"):
        await store.upsert("idx", [[0, 1, 1]], ids={"d"})  # type: ignore[arg-type]
    await store.delete_vectors("idx", ids=iter(["a"]))
    await store.delete_vectors("idx", ids={"b", "c"})
    assert (await store.describe_index("idx")).count == 4


# --- sizes no backend holds ---------------------------------------------------------------------------


async def test_dimension_and_top_k_are_bounded_before_any_io(store: SQLiteVector) -> None:
    for dimension in (10**9, MAX_DIMENSION + 1, 10**400):
        with pytest.raises(ValidationError) as creating:
            await store.create_index("big", dimension)
        assert creating.value.id == _ID + "CREATE_INDEX_INVALID_ARGS"
        assert f"dimension must be a positive integer (at most {MAX_DIMENSION} on sqlite)" in str(
            creating.value
        )
    await store.create_index("widest", MAX_DIMENSION)
    assert sorted(await store.list_indexes()) == ["idx", "widest"]
    for top_k in (2**63, MAX_TOP_K + 1, 10**400):
        with pytest.raises(ValidationError) as querying:
            await store.query("idx", [1, 0, 0], top_k=top_k)
        assert querying.value.id == _ID + "QUERY_TOP_K_TOO_LARGE"
        assert f"exceeds the limit of {MAX_TOP_K} on sqlite" in str(querying.value)
    assert len(await store.query("idx", [1, 0, 0], top_k=MAX_TOP_K)) == 4
