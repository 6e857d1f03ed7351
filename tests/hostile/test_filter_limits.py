"""Filters are bounded at parse time, and every malformed operand is a typed error before I/O (issue 12,
findings 6 and 7; docs/spec.md §2.10).

Before the limits, 40 nested ``$not`` ran over 20 s on LanceDB, ``$in`` with 100,000 values over 30 s, and
``$or``/``$and`` of 10,000 conditions or ``$all`` of 10,000 values 17–20 s on SQLite's single worker
thread; 1,000 nested levels raised ``RecursionError``, ``10**400`` ``OverflowError`` and lone surrogates
``UnicodeEncodeError``. Each case here must be a ``FilterError`` from ``parse`` within a wall-clock bound,
and from the stores before any I/O (a query on an index that does not exist still raises the
``FilterError``, not ``IndexNotFoundError``), with the stored data intact afterwards.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.errors import FilterError
from mastra_memory.filters import evaluate, parse
from mastra_memory.filters.limits import (
    MAX_FILTER_CHARS,
    MAX_FILTER_DEPTH,
    MAX_FILTER_ITEMS,
    MAX_FILTER_KEYS,
    MAX_LIST_LENGTH,
)
from mastra_memory.stores.sqlite.store import SQLiteVector
from mastra_memory.vector import MastraVector

#: A hang guard, not a speed requirement: parsing any of these takes milliseconds.
_BOUND = 2.0


def _nested_not(levels: int) -> dict[str, Any]:
    flt: dict[str, Any] = {"a": 1}
    for _ in range(levels):
        flt = {"$not": flt}
    return flt


def _nested_field_not(levels: int) -> dict[str, Any]:
    condition: dict[str, Any] = {"$eq": 1}
    for _ in range(levels):
        condition = {"$not": condition}
    return {"a": condition}


def _nested_paths(levels: int) -> dict[str, Any]:
    flt: dict[str, Any] = {"leaf": 1}
    for _ in range(levels):
        flt = {"k": flt}
    return flt


def _nested_or(levels: int) -> dict[str, Any]:
    flt: dict[str, Any] = {"a": 1}
    for _ in range(levels):
        flt = {"$or": [flt]}
    return flt


def _cycle() -> dict[str, Any]:
    flt: dict[str, Any] = {}
    flt["a"] = flt
    return flt


def _shared_lists() -> dict[str, Any]:
    # A few kilobytes of memory that a naive walk would visit 10**9 times.
    inner = [1] * 1_000
    middle = [inner] * 1_000
    return {"a": {"$in": [middle] * 1_000}}


_OUT_OF_UTC = datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=5)))

#: (id, filter builder, exact prefix of the first problem)
HOSTILE: list[tuple[str, Callable[[], Any], str]] = [
    ("40 nested $not", lambda: _nested_not(40), "Filter nested too deeply: more than 32 levels"),
    ("1,000 nested $not", lambda: _nested_not(1_000), "Filter nested too deeply"),
    ("100,000 nested $not", lambda: _nested_not(100_000), "Filter nested too deeply"),
    ("10,000 nested field $not", lambda: _nested_field_not(10_000), "Filter nested too deeply"),
    ("10,000 nested paths", lambda: _nested_paths(10_000), "Filter nested too deeply"),
    ("10,000 nested $or", lambda: _nested_or(10_000), "Filter nested too deeply"),
    ("a cyclic filter", _cycle, "Filter nested too deeply"),
    (
        "$in of 100,000 values",
        lambda: {"a": {"$in": list(range(100_000))}},
        "List too long: a.$in has 100,000",
    ),
    ("$nin of 10 million values", lambda: {"a": {"$nin": [0] * 10_000_000}}, "List too long: a.$nin"),
    ("a plain list of 5,000 values", lambda: {"a": list(range(5_000))}, "List too long: a has 5,000"),
    ("$all of 10,000 values", lambda: {"t": {"$all": list(range(10_000))}}, "List too long: t.$all"),
    ("$or of 10,000 conditions", lambda: {"$or": [{"a": i} for i in range(10_000)]}, "List too long: $or"),
    (
        "$and of 10,000 conditions",
        lambda: {"$and": [{"a": {"$ne": i}} for i in range(10_000)]},
        "List too long",
    ),
    ("2,000 keys", lambda: {f"k{i}": i for i in range(2_000)}, "Filter too large: more than 1,000 keys"),
    ("lists sharing one list", _shared_lists, "Filter too large: more than 10,000 keys and list elements"),
    (
        "20 MB of strings",
        lambda: {"a": {"$in": ["x" * 20_000] * 1_000}},
        "Filter too large: more than 1,000,000",
    ),
    ("10**400 as an operand", lambda: {"n": 10**400}, "Invalid number: n (an integer beyond the float range"),
    ("-(10**400) in $in", lambda: {"n": {"$in": [1, -(10**400)]}}, "Invalid number: n"),
    ("10**400 in a range", lambda: {"n": {"$gt": 10**400}}, "Invalid number: n"),
    ("$size 10**400", lambda: {"t": {"$size": 10**400}}, "$size requires a non-negative integer: t"),
    ("a lone surrogate in a field name", lambda: {"a\ud800": 1}, "Invalid field path: a\\ud800 (unpaired"),
    ("a lone surrogate in a nested name", lambda: {"a": {"b\udfff": 1}}, "Invalid field path: a.b\\udfff"),
    ("a lone surrogate in an operand", lambda: {"s": "x\udc00"}, "Invalid string: s (unpaired surrogate"),
    ("a lone surrogate in $in", lambda: {"s": {"$in": ["ok", "\ud83d"]}}, "Invalid string: s"),
    ("a lone surrogate in $regex", lambda: {"s": {"$regex": "\ud800+"}}, "Invalid string: s"),
    ("a lone surrogate operator", lambda: {"s": {"$\ud800": 1}}, "Unsupported operator: $\\ud800"),
    ("a datetime beyond UTC", lambda: {"d": {"$gt": _OUT_OF_UTC}}, "Invalid datetime: d"),
    ("a 100,000-character regex", lambda: {"s": {"$regex": "a" * 100_000}}, "Regex pattern too long"),
]


@pytest.mark.parametrize(("build", "phrase"), [(b, p) for _, b, p in HOSTILE], ids=[i for i, _, _ in HOSTILE])
def test_hostile_filters_are_a_filter_error_at_parse(build: Callable[[], Any], phrase: str) -> None:
    flt = build()
    start = time.perf_counter()
    with pytest.raises(FilterError) as info:
        parse(flt)
    assert time.perf_counter() - start < _BOUND
    assert info.value.problems[0].startswith(phrase), info.value.problems
    str(info.value).encode("utf-8")  # the message itself never carries a lone surrogate
    with pytest.raises(FilterError):
        evaluate(flt, {"a": 1})


@pytest.mark.parametrize(
    "flt",
    [
        _nested_not(MAX_FILTER_DEPTH - 1),
        _nested_paths(MAX_FILTER_DEPTH - 1),
        {"a": {"$in": list(range(MAX_LIST_LENGTH))}},
        {"$or": [{"a": i} for i in range(MAX_FILTER_KEYS - 1)]},
        {
            f"k{i}": {"$in": list(range(MAX_LIST_LENGTH))}
            for i in range(MAX_FILTER_ITEMS // MAX_LIST_LENGTH - 1)
        },
        {"a": {"$in": ["x" * (MAX_FILTER_CHARS // MAX_LIST_LENGTH - 1)] * MAX_LIST_LENGTH}},
        {"n": 10**308, "m": {"$lt": -(10**308)}, "t": {"$size": 2**63 - 1}},
        {"s": "\U0001f600 paired surrogates are fine"},
    ],
    ids=["depth", "path depth", "list length", "keys", "items", "characters", "big ints", "astral"],
)
def test_filters_at_the_limits_are_accepted(flt: dict[str, Any]) -> None:
    assert parse(flt) is not None


def test_one_level_more_is_refused() -> None:
    with pytest.raises(FilterError, match="Filter nested too deeply"):
        parse(_nested_not(MAX_FILTER_DEPTH))
    with pytest.raises(FilterError, match="List too long"):
        parse({"a": {"$in": list(range(MAX_LIST_LENGTH + 1))}})
    with pytest.raises(FilterError, match="more than 1,000 keys"):
        parse({"$or": [{"a": i} for i in range(MAX_FILTER_KEYS)]})


def test_the_depth_message_says_where_and_what_to_do() -> None:
    with pytest.raises(FilterError) as info:
        parse({"$and": [{"x": _nested_field_not(40)["a"]}]})
    (problem,) = info.value.problems
    assert problem.startswith(
        "Filter nested too deeply: more than 32 levels of objects and lists at $and.0.x.$not"
    )
    assert "flatten it" in problem


# --- the stores: a typed error before any I/O, and the stored data intact ----------------------------


async def _sqlite(tmp_path: Path) -> MastraVector:
    return SQLiteVector(str(tmp_path / "vectors.db"))


async def _lancedb(tmp_path: Path) -> MastraVector:
    pytest.importorskip("mastra_memory_lancedb")
    from mastra_memory_lancedb.settings import LanceDBSettings
    from mastra_memory_lancedb.store import LanceDBVector

    return LanceDBVector(LanceDBSettings(url=str(tmp_path / "lance")))


@pytest.fixture(params=[_sqlite, _lancedb], ids=["sqlite", "lancedb"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MastraVector]:
    vector: MastraVector = await request.param(tmp_path)
    await vector.create_index("idx", 3)
    await vector.upsert(
        "idx", [[1, 0, 0], [0, 1, 0]], [{"a": 1, "s": "x"}, {"a": 2, "s": "y"}], ids=["r1", "r2"]
    )
    try:
        yield vector
    finally:
        await vector.close()


@pytest.mark.parametrize(("build", "phrase"), [(b, p) for _, b, p in HOSTILE], ids=[i for i, _, _ in HOSTILE])
async def test_the_stores_refuse_hostile_filters_before_io(
    store: MastraVector, build: Callable[[], Any], phrase: str
) -> None:
    flt = build()
    start = time.perf_counter()
    with pytest.raises(FilterError) as info:
        await store.query("missing", [1.0, 0.0, 0.0], top_k=5, filter=flt)
    assert info.value.problems[0].startswith(phrase)
    with pytest.raises(FilterError):
        await store.query("idx", [1.0, 0.0, 0.0], top_k=5, filter=flt)
    with pytest.raises(FilterError):
        await store.update_vector("idx", filter=flt, update={"metadata": {"a": 0}})
    with pytest.raises(FilterError):
        await store.delete_vectors("idx", filter=flt)
    assert time.perf_counter() - start < 4 * _BOUND
    kept = {hit.id: hit.metadata for hit in await store.query("idx", [1.0, 0.0, 0.0], top_k=5)}
    assert kept == {"r1": {"a": 1, "s": "x"}, "r2": {"a": 2, "s": "y"}}
