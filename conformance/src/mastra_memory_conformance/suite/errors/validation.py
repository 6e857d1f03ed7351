"""The validation rows of docs/spec.md §3.3 and the limits of the manifest: each call raises its typed
error with the id ``MASTRA_VECTOR_<STORE>_<OPERATION>_<STATUS>`` and its phrase before any backend write
(before any I/O at all unless the check needs the index's dimension), and nothing stored changes.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

import pytest

from mastra_memory.errors import IndexDimensionMismatchError, MastraMemoryError, ValidationError

from ...datasets import query_vector
from ...plugin import set_item
from .. import IndexUnderTest, VectorSuiteBase, by_label, ill_typed
from .base import WRITES, Call, HookCounter, assert_counted, check_id, index_state, seed_index, vec

__all__ = ["ROWS", "Row", "ValidationErrorsSuite"]


@dataclass(frozen=True)
class Row:
    """One §3.3 validation row: the call, the error class, ``OPERATION``, ``STATUS`` and the phrase."""

    label: str
    call: Call
    error: type[MastraMemoryError]
    operation: str
    status: str
    phrase: str
    reads_allowed: bool = False


_DIMENSION = "dimension must be a positive integer"
_TOP_K = "top_k must be a positive integer"
_IDS = "ids must be non-empty strings"


def _row(
    label: str,
    operation: str,
    status: str,
    phrase: str,
    call: Call,
    error: type[MastraMemoryError] = ValidationError,
    reads_allowed: bool = False,
) -> Row:
    return Row(label, call, error, operation, status, phrase, reads_allowed)


#: Every row of docs/spec.md §3.3 that a call can trigger (limits of the manifest are in their own test).
ROWS: Final[list[Row]] = [
    _row(
        "no vectors", "UPSERT", "EMPTY_VECTORS", "vectors must not be empty", lambda s, i, d: s.upsert(i, [])
    ),
    _row(
        "vectors None",
        "UPSERT",
        "EMPTY_VECTORS",
        "vectors must not be empty",
        lambda s, i, d: s.upsert(i, ill_typed(None)),
    ),
    _row(
        "metadata length",
        "UPSERT",
        "METADATA_LENGTH_MISMATCH",
        "metadata length",
        lambda s, i, d: s.upsert(i, [vec(d), vec(d, 2)], [{"a": 1}]),
    ),
    _row(
        "ids length",
        "UPSERT",
        "IDS_LENGTH_MISMATCH",
        "ids length",
        lambda s, i, d: s.upsert(i, [vec(d)], ids=["a", "b"]),
    ),
    _row("empty vector", "UPSERT", "INVALID_VECTOR", "vector [1]", lambda s, i, d: s.upsert(i, [vec(d), []])),
    _row(
        "vector not a list",
        "UPSERT",
        "INVALID_VECTOR",
        "vector [0]",
        lambda s, i, d: s.upsert(i, ill_typed(["abc"])),
    ),
    _row(
        "non-numeric component",
        "UPSERT",
        "INVALID_VECTOR",
        "vector [0][{last}]",
        lambda s, i, d: s.upsert(i, [ill_typed([*vec(d)[:-1], "x"])]),
    ),
    _row(
        "NaN component",
        "UPSERT",
        "INVALID_VECTOR",
        "vector [1][0]",
        lambda s, i, d: s.upsert(i, [vec(d), [math.nan] * d]),
    ),
    _row(
        "infinite component",
        "UPSERT",
        "INVALID_VECTOR",
        "vector [0][{last}]",
        lambda s, i, d: s.upsert(i, [[*vec(d)[:-1], math.inf]]),
    ),
    _row(
        "bool component",
        "UPSERT",
        "INVALID_VECTOR",
        "vector [0][0]",
        lambda s, i, d: s.upsert(i, [[True] * d]),
    ),
    _row(
        "upsert dimension",
        "UPSERT",
        "DIMENSION_MISMATCH",
        "{index}",
        lambda s, i, d: s.upsert(i, [vec(d + 1)]),
        IndexDimensionMismatchError,
        reads_allowed=True,
    ),
    _row(
        "query dimension",
        "QUERY",
        "DIMENSION_MISMATCH",
        "{index}",
        lambda s, i, d: s.query(i, vec(d + 1)),
        IndexDimensionMismatchError,
        reads_allowed=True,
    ),
    _row(
        "update dimension",
        "UPDATE_VECTOR",
        "DIMENSION_MISMATCH",
        "{index}",
        lambda s, i, d: s.update_vector(i, id="v0", update={"vector": vec(d + 1)}),
        IndexDimensionMismatchError,
        reads_allowed=True,
    ),
    _row("empty id", "UPSERT", "INVALID_ID", _IDS, lambda s, i, d: s.upsert(i, [vec(d)], ids=[""])),
    _row(
        "id not a string",
        "UPSERT",
        "INVALID_ID",
        _IDS,
        lambda s, i, d: s.upsert(i, [vec(d)], ids=ill_typed([7])),
    ),
    _row(
        "id of 513 characters",
        "UPSERT",
        "INVALID_ID",
        _IDS,
        lambda s, i, d: s.upsert(i, [vec(d)], ids=["x" * 513]),
    ),
    _row("top_k 0", "QUERY", "INVALID_TOP_K", _TOP_K, lambda s, i, d: s.query(i, vec(d), top_k=0)),
    _row("top_k negative", "QUERY", "INVALID_TOP_K", _TOP_K, lambda s, i, d: s.query(i, vec(d), top_k=-3)),
    _row("top_k bool", "QUERY", "INVALID_TOP_K", _TOP_K, lambda s, i, d: s.query(i, vec(d), top_k=True)),
    _row(
        "top_k float",
        "QUERY",
        "INVALID_TOP_K",
        _TOP_K,
        lambda s, i, d: s.query(i, vec(d), top_k=ill_typed(2.0)),
    ),
    _row(
        "top_k string",
        "QUERY",
        "INVALID_TOP_K",
        _TOP_K,
        lambda s, i, d: s.query(i, vec(d), top_k=ill_typed("3")),
    ),
    _row(
        "update id and filter",
        "UPDATE_VECTOR",
        "INVALID_ARGS",
        "mutually exclusive",
        lambda s, i, d: s.update_vector(i, id="v0", filter={"n": 1}, update={"metadata": {}}),
    ),
    _row(
        "update neither",
        "UPDATE_VECTOR",
        "INVALID_ARGS",
        "Either id or filter must be provided",
        lambda s, i, d: s.update_vector(i, update={"metadata": {"a": 1}}),
    ),
    _row(
        "update nothing",
        "UPDATE_VECTOR",
        "INVALID_ARGS",
        "No updates provided",
        lambda s, i, d: s.update_vector(i, id="v0", update={}),
    ),
    _row(
        "update empty filter",
        "UPDATE_VECTOR",
        "INVALID_ARGS",
        "empty filter",
        lambda s, i, d: s.update_vector(i, filter={}, update={"metadata": {"a": 1}}),
    ),
    _row(
        "delete ids and filter",
        "DELETE_VECTORS",
        "INVALID_ARGS",
        "mutually exclusive",
        lambda s, i, d: s.delete_vectors(i, ids=["v0"], filter={"n": 1}),
    ),
    _row(
        "delete neither",
        "DELETE_VECTORS",
        "INVALID_ARGS",
        "Either filter or ids must be provided",
        lambda s, i, d: s.delete_vectors(i),
    ),
    _row(
        "delete empty ids",
        "DELETE_VECTORS",
        "INVALID_ARGS",
        "empty ids array",
        lambda s, i, d: s.delete_vectors(i, ids=[]),
    ),
    _row(
        "delete empty filter",
        "DELETE_VECTORS",
        "INVALID_ARGS",
        "empty filter",
        lambda s, i, d: s.delete_vectors(i, filter={}),
    ),
    _row(
        "dimension 0",
        "CREATE_INDEX",
        "INVALID_ARGS",
        _DIMENSION,
        lambda s, i, d: s.create_index(f"{i}_new", 0),
    ),
    _row(
        "dimension negative",
        "CREATE_INDEX",
        "INVALID_ARGS",
        _DIMENSION,
        lambda s, i, d: s.create_index(f"{i}_new", -4),
    ),
    _row(
        "dimension bool",
        "CREATE_INDEX",
        "INVALID_ARGS",
        _DIMENSION,
        lambda s, i, d: s.create_index(f"{i}_new", True),
    ),
    _row(
        "dimension string",
        "CREATE_INDEX",
        "INVALID_ARGS",
        _DIMENSION,
        lambda s, i, d: s.create_index(f"{i}_new", ill_typed("8")),
    ),
    _row(
        "unknown metric",
        "CREATE_INDEX",
        "INVALID_ARGS",
        "unsupported metric",
        lambda s, i, d: s.create_index(f"{i}_new", d, ill_typed("manhattan")),
    ),
    _row(
        "index name on create",
        "CREATE_INDEX",
        "INVALID_INDEX_NAME",
        "Bad Name!",
        lambda s, i, d: s.create_index("Bad Name!", d),
    ),
    _row(
        "index name on query",
        "QUERY",
        "INVALID_INDEX_NAME",
        "Bad Name!",
        lambda s, i, d: s.query("Bad Name!", vec(d)),
    ),
    _row(
        "index name on upsert",
        "UPSERT",
        "INVALID_INDEX_NAME",
        "Bad Name!",
        lambda s, i, d: s.upsert("Bad Name!", [vec(d)]),
    ),
    _row(
        "index name on describe",
        "DESCRIBE_INDEX",
        "INVALID_INDEX_NAME",
        "Bad Name!",
        lambda s, i, d: s.describe_index("Bad Name!"),
    ),
    _row(
        "index name on delete",
        "DELETE_INDEX",
        "INVALID_INDEX_NAME",
        "Bad Name!",
        lambda s, i, d: s.delete_index("Bad Name!"),
    ),
]


@pytest.mark.asyncio
class ValidationErrorsSuite(VectorSuiteBase):
    """§3.3: every validation row and the manifest's limits (a part of ``ErrorsSuite``)."""

    @pytest.mark.parametrize("row", by_label(ROWS))
    async def test_validation_row(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest, row: Row
    ) -> None:
        """§3.3: error class, id and phrase; no backend write (and no I/O at all unless the check needs
        the index's dimension); nothing stored changes."""
        set_item(request, f"{row.operation}_{row.status}")
        before = await seed_index(idx)
        with HookCounter(idx.store) as counter:
            with pytest.raises(row.error) as raised:
                await row.call(idx.store, idx.name, idx.dimension)
            calls = dict(counter.calls)
            await assert_counted(counter, idx)
        error = raised.value
        check_id(error, idx.capabilities, row.operation, row.status)
        phrase = row.phrase.format(index=idx.native_name, last=idx.dimension - 1)
        message = str(error)
        assert phrase in message, f"{row.label}: the message must contain {phrase!r}: {message!r}"
        if row.status == "DIMENSION_MISMATCH":
            assert str(idx.dimension) in message, message
            assert str(idx.dimension + 1) in message, message
        if row.reads_allowed:
            assert not [n for n in calls if n in WRITES], (
                f"{row.label}: backend writes before failing: {calls}"
            )
        else:
            assert not calls, f"{row.label}: validation must happen before any I/O, but hooks ran: {calls}"
        assert await index_state(idx) == before

    async def test_limits_of_the_manifest(self, request: pytest.FixtureRequest, idx: IndexUnderTest) -> None:
        """``max_top_k``, ``max_dimension`` and a missing metadata-only query raise as §3.3 says."""
        set_item(request, "manifest limits")
        before = await seed_index(idx)
        query = query_vector(idx.dimension)
        checks: list[tuple[Callable[[], Awaitable[Any]], str, str, str]] = []
        if idx.capabilities.max_top_k is not None:
            limit = idx.capabilities.max_top_k
            checks.append(
                (
                    lambda: idx.store.query(idx.name, query, top_k=limit + 1),
                    "QUERY",
                    "TOP_K_TOO_LARGE",
                    str(limit),
                )
            )
        if idx.capabilities.max_dimension is not None:
            too_big = idx.capabilities.max_dimension + 1
            checks.append(
                (
                    lambda: idx.store.create_index(f"{idx.name}_big", too_big),
                    "CREATE_INDEX",
                    "INVALID_ARGS",
                    "dimension must be a positive integer",
                )
            )
        if not idx.capabilities.metadata_only_query:
            checks.append(
                (
                    lambda: idx.store.query(idx.name, None),
                    "QUERY",
                    "MISSING_VECTOR",
                    "query_vector is required",
                )
            )
        else:
            listed = await idx.store.query(idx.name, None, top_k=10)
            assert sorted(h.id for h in listed) == ["v0", "v1", "v2", "v3"]
        with HookCounter(idx.store) as counter:
            for call, operation, status, phrase in checks:
                with pytest.raises(MastraMemoryError) as raised:
                    await call()
                check_id(raised.value, idx.capabilities, operation, status)
                assert phrase in str(raised.value), f"{status}: {raised.value}"
            assert not counter.calls, f"hooks ran before the limit was enforced: {dict(counter.calls)}"
            await assert_counted(counter, idx)
        assert await index_state(idx) == before
