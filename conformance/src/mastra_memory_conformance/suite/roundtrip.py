"""Metadata round-trip (docs/spec.md §3.6) and the truth of declared deviations (docs/spec.md §2.9, issue
rule 3).

``MetadataRoundTripSuite`` writes a fixed record (unicode, nested dict, empty list, empty dict, null,
bools, ints, floats, 2^53 − 1, a datetime, a tuple) and compares what comes back exactly — types too:
``True`` must not come back as ``1``, ``1`` not as ``1.0`` — unless a declared deviation covers the
difference, in which case the declared transformation must be exactly what happened. Invalid metadata
is rejected with ``UPSERT_INVALID_METADATA`` naming the key path, and nothing stored changes. Reserved
``_mastra_`` keys never reach the caller.

``DeclaredDeviationsSuite`` probes every deviation the manifest declares and the suite knows (see
:mod:`mastra_memory_conformance.suite`) and fails when the declared behaviour does not occur.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Final

import pytest

from mastra_memory.capabilities import AdapterCapabilities
from mastra_memory.errors import UnsupportedFilterError, ValidationError
from mastra_memory.vector import QueryResult, normalise_metadata

from ..datasets import make_vector, query_vector
from ..plugin import set_item
from ..report import Outcome
from . import (
    INT64_MAX,
    INT64_MIN,
    KNOWN_DEVIATIONS,
    IndexUnderTest,
    VectorSuiteBase,
    as_stored,
    declares,
    expected_error_id,
    writable,
)

__all__ = ["ROUND_TRIP_RECORD", "DeclaredDeviationsSuite", "MetadataRoundTripSuite"]

#: The fixed record of docs/spec.md §3.6.
ROUND_TRIP_RECORD: Final[dict[str, Any]] = {
    "text": "héllo wörld — 你好 👋 שלום مرحبا",
    "quotes": 'it\'s "quoted" \\ back\\slash\nnew line\ttab',
    "nested": {"level": {"deeper": {"value": "deep", "n": 3}}, "list": ["x", "y"]},
    "empty_list": [],
    "empty_dict": {},
    "nothing": None,
    "yes": True,
    "no": False,
    "int": 42,
    "negative": -7,
    "zero": 0,
    "float": 3.25,
    "small": 1e-300,
    "big": 2**53 - 1,
    "when": datetime(2024, 3, 5, 14, 7, 0, 123456, tzinfo=UTC),
    "pair": (1, "two"),
    "numbers": [1, 2.5, -3],
    "mixed": [True, None, "s", 1, {"k": "v"}],
    "strings": ["a", "b", "ü"],
}
#: What the record means as JSON (docs/spec.md §3.6: datetime -> canonical timestamp, tuple -> list).
CANONICAL_RECORD: Final[dict[str, Any]] = {
    **{k: v for k, v in ROUND_TRIP_RECORD.items() if k not in ("when", "pair")},
    "when": "2024-03-05T14:07:00.123Z",
    "pair": [1, "two"],
}
LARGE_TEXT: Final = ("Größe 大 🚀 " * 2500)[:20_000]

_INVALID: Final[list[tuple[str, dict[Any, Any], str]]] = [
    ("set", {"bad": {1, 2}}, "bad"),
    ("bytes", {"bad": b"raw"}, "bad"),
    ("decimal", {"bad": Decimal("1.5")}, "bad"),
    ("nan", {"bad": math.nan}, "bad"),
    ("infinity", {"bad": math.inf}, "bad"),
    ("negative infinity", {"bad": -math.inf}, "bad"),
    ("object", {"bad": object()}, "bad"),
    ("nested", {"outer": {"inner": {3}}}, "outer.inner"),
    ("in a list", {"items": ["ok", b"raw"]}, "items"),
    ("non-string key", {1: "one"}, "1"),
    ("reserved key", {"_mastra_id": "mine"}, "_mastra_id"),
    ("naive datetime", {"when": datetime(2024, 1, 1)}, "when"),
]


def _type_problems(got: Any, want: Any, path: str = "") -> list[str]:
    """Differences between ``got`` and ``want``, including types (bool vs int, int vs float)."""
    where = path or "<root>"
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return [f"{where}: expected a dict, got {got!r}"]
        problems = [f"{where}.{k}: missing" for k in want if k not in got]
        problems += [f"{where}.{k}: unexpected key" for k in got if k not in want]
        for key in want:
            if key in got:
                problems += _type_problems(got[key], want[key], f"{path}.{key}" if path else key)
        return problems
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return [f"{where}: expected {want!r}, got {got!r}"]
        return [
            p
            for i, (g, w) in enumerate(zip(got, want, strict=True))
            for p in _type_problems(g, w, f"{where}[{i}]")
        ]
    if type(got) is not type(want) or got != want:
        return [f"{where}: expected {want!r} ({type(want).__name__}), got {got!r} ({type(got).__name__})"]
    return []


async def _read_back(idx: IndexUnderTest, count: int) -> list[list[QueryResult]]:
    """Every record through each read path: a scored query with and without vectors, and a metadata-only
    query when declared."""
    top_k = idx.limit(count)
    query = query_vector(idx.dimension)
    reads = [
        await idx.store.query(idx.name, query, top_k=top_k),
        await idx.store.query(idx.name, query, top_k=top_k, include_vector=True),
    ]
    if idx.capabilities.metadata_only_query:
        reads.append(await idx.store.query(idx.name, None, top_k=top_k))
    return reads


async def _snapshot(idx: IndexUnderTest) -> tuple[int, list[tuple[str, float, Any]]]:
    count = (await idx.store.describe_index(idx.name)).count
    hits = await idx.store.query(idx.name, query_vector(idx.dimension), top_k=idx.limit(count + 1))
    return count, [(h.id, h.score, h.metadata) for h in hits]


@pytest.mark.asyncio
class MetadataRoundTripSuite(VectorSuiteBase):
    """What goes in comes out: types, nesting, unicode, datetimes; invalid metadata never goes in."""

    async def test_fixed_record_round_trips(self, idx: IndexUnderTest, outcome: Outcome) -> None:
        await idx.store.create_index(idx.name, idx.dimension)
        record = dict(ROUND_TRIP_RECORD)
        if declares(idx.capabilities, "string-list-only"):
            with pytest.raises(ValidationError):
                await idx.store.upsert(idx.name, [make_vector(1, idx.dimension)], [record], ["rt"])
            record = {**writable(idx.capabilities, normalise_metadata(record)), "when": record["when"]}
        assert normalise_metadata(ROUND_TRIP_RECORD) == CANONICAL_RECORD
        await idx.store.upsert(idx.name, [make_vector(1, idx.dimension)], [record], ["rt"])
        await idx.settle()
        canonical = normalise_metadata(record)
        expected = as_stored(idx.capabilities, canonical)
        for read in await _read_back(idx, 1):
            assert [h.id for h in read] == ["rt"]
            problems = _type_problems(read[0].metadata, expected)
            assert not problems, "metadata did not round-trip:\n  " + "\n  ".join(problems)
        for code in sorted(KNOWN_DEVIATIONS):
            if (
                declares(idx.capabilities, code)
                and as_stored(idx.capabilities, canonical, [code]) != canonical
            ):
                outcome.deviation(code, f"round trip reads back {expected!r}")

    async def test_large_values_round_trip(self, idx: IndexUnderTest) -> None:
        """A 20,000-character unicode text (under ``content``), a 200-string list, 2^53 − 1, int64 bounds."""
        await idx.store.create_index(idx.name, idx.dimension)
        metadata: dict[str, Any] = {
            "content": LARGE_TEXT,
            "many": [f"tag-{i}" for i in range(200)],
            "max_safe": 2**53 - 1,
            "min_safe": -(2**53 - 1),
            "int64_max": INT64_MAX,
            "int64_min": INT64_MIN,
            "tiny": 5e-324,
            "huge": 1.7976931348623157e308,
        }
        await idx.store.upsert(idx.name, [make_vector(1, idx.dimension)], [metadata], ["large"])
        await idx.settle()
        for read in await _read_back(idx, 1):
            problems = _type_problems(read[0].metadata, as_stored(idx.capabilities, metadata))
            assert not problems, "large metadata did not round-trip:\n  " + "\n  ".join(problems)

    @pytest.mark.parametrize(("what", "bad", "path"), [pytest.param(*case, id=case[0]) for case in _INVALID])
    async def test_invalid_metadata_is_rejected(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest, what: str, bad: dict[Any, Any], path: str
    ) -> None:
        """UPSERT_INVALID_METADATA naming the key path; the valid record of the same call is not written."""
        set_item(request, "invalid metadata")
        await idx.store.create_index(idx.name, idx.dimension)
        await idx.store.upsert(idx.name, [make_vector(1, idx.dimension)], [{"keep": 1}], ["kept"])
        await idx.settle()
        before = await _snapshot(idx)
        vectors = [make_vector(2, idx.dimension), make_vector(3, idx.dimension)]
        with pytest.raises(ValidationError) as raised:
            await idx.store.upsert(idx.name, vectors, [{"fine": True}, bad], ["new", "kept"])
        assert raised.value.id == expected_error_id(idx.capabilities, "UPSERT", "INVALID_METADATA"), (
            raised.value.id
        )
        assert path in str(raised.value), f"{what}: the message must name {path!r}: {raised.value}"
        with pytest.raises(ValidationError) as updating:
            await idx.store.update_vector(idx.name, id="kept", update={"metadata": bad})
        assert updating.value.id == expected_error_id(idx.capabilities, "UPDATE_VECTOR", "INVALID_METADATA")
        await idx.settle()
        assert await _snapshot(idx) == before

    async def test_reserved_keys_are_never_returned(self, idx: IndexUnderTest) -> None:
        """Adapters may keep ``_mastra_`` keys (an original id, key lists); callers never see them."""
        await idx.store.create_index(idx.name, idx.dimension)
        ids = ["plain-id", "00000000-0000-4000-8000-00000000000a", "42"]
        vectors = [make_vector(i + 1, idx.dimension) for i in range(3)]
        await idx.store.upsert(idx.name, vectors, [{"n": 1, "tags": []}, {"n": None}, {}], ids)
        await idx.store.update_vector(idx.name, id="42", update={"metadata": {"updated": True}})
        await idx.settle()
        reads = await _read_back(idx, 3)
        reads.append(await idx.store.query(idx.name, vectors[0], top_k=3, filter={"n": 1}))
        for read in reads:
            for hit in read:
                reserved = [k for k in hit.metadata if k.startswith("_mastra_")]
                assert not reserved, f"{hit.id}: reserved keys returned: {reserved}"
        assert {h.id for h in reads[0]} == set(ids)


async def _expect_rejected(
    call: Callable[[], Awaitable[Any]], capabilities: AdapterCapabilities, code: str, status: str
) -> None:
    """The write ``code`` declares rejected must raise the ``UPSERT_<status>`` ValidationError."""
    with pytest.raises(ValidationError) as raised:
        await call()
    assert raised.value.id == expected_error_id(capabilities, "UPSERT", status), f"{code}: {raised.value.id}"


@pytest.mark.asyncio
class DeclaredDeviationsSuite(VectorSuiteBase):
    """A declared deviation must be true: the behaviour it declares must actually occur."""

    async def test_declared_deviations_occur(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest, outcome: Outcome
    ) -> None:
        set_item(request, "declared deviations")
        dim = idx.dimension
        await idx.store.create_index(idx.name, dim)
        supported = idx.capabilities.supported_operators
        checked: list[str] = []

        async def write(rid: str, metadata: dict[str, Any]) -> None:
            await idx.store.upsert(idx.name, [make_vector(len(checked) + 1, dim)], [metadata], [rid])
            await idx.settle()

        async def ids(flt: dict[str, Any]) -> set[str]:
            return {h.id for h in await idx.store.query(idx.name, query_vector(dim), top_k=10, filter=flt)}

        async def metadata_of(rid: str) -> dict[str, Any]:
            hits = await idx.store.query(idx.name, query_vector(dim), top_k=10)
            return next(h.metadata for h in hits if h.id == rid)

        for deviation in idx.capabilities.deviations:
            code = deviation.code
            if code == "exists-empty-list":
                await write("el-empty", {"p_el": []})
                await write("el-full", {"p_el": ["x"]})
                if "$exists" in supported:
                    found = await ids({"p_el": {"$exists": True}})
                    assert found == {"el-full"}, (
                        f"{code} declared, but $exists True on [] returned {sorted(found)}"
                    )
            elif code == "null-dropped":
                await write("null", {"p_null": None, "p_keep": 1})
                assert await metadata_of("null") == {"p_keep": 1}, f"{code} declared, but the null came back"
            elif code == "nested-flattened":
                await write("nest", {"p_nest": {"x": {"y": 1}}})
                assert await metadata_of("nest") == {"p_nest": {"x": {"y": 1}}}, (
                    f"{code}: not restored on read"
                )
                if "$eq" in supported:
                    assert await ids({"p_nest.x.y": 1}) == {"nest"}
            elif code == "string-list-only":
                await _expect_rejected(
                    lambda: write("numbers", {"p_list": [1, 2]}), idx.capabilities, code, "INVALID_METADATA"
                )
                await write("strings", {"p_list": ["a", "b"]})
            elif code == "no-string-ranges":
                await write("range", {"p_s": "b", "p_n": 2})
                with pytest.raises(UnsupportedFilterError):
                    await ids({"p_s": {"$gt": "a"}})
                if "$gt" in supported:
                    assert await ids({"p_n": {"$gt": 1}}) == {"range"}
            elif code == "nul-character-rejected":
                await _expect_rejected(
                    lambda: write("nul", {"p": "a\x00b"}), idx.capabilities, code, "INVALID_METADATA"
                )
                await _expect_rejected(
                    lambda: write("nul", {"a\x00b": 1}), idx.capabilities, code, "INVALID_METADATA"
                )
            elif code == "int64-range":
                await _expect_rejected(
                    lambda: write("big", {"p": 2**63}), idx.capabilities, code, "INVALID_METADATA"
                )
                await _expect_rejected(
                    lambda: write("big", {"p": INT64_MIN - 1}), idx.capabilities, code, "INVALID_METADATA"
                )
                await write("edge", {"p": INT64_MAX})
                with pytest.raises(UnsupportedFilterError):
                    await ids({"p": 2**63 + 1})
            else:
                # half-precision / quantised widen the score tolerance (ScoresSuite); unknown codes cannot be
                # probed — both are reported as deviations so the matrix shows them.
                outcome.deviation(code, "declared; not probed by the suite")
                checked.append(code)
                continue
            outcome.deviation(code, "the declared behaviour occurs")
            checked.append(code)
        assert checked == [d.code for d in idx.capabilities.deviations]
        stored = {h.id for h in await idx.store.query(idx.name, query_vector(dim), top_k=10)}
        assert not stored & {"numbers", "nul", "big"}, f"a rejected write was stored: {sorted(stored)}"
