"""Bad input to the vector store (issue 12; docs/spec.md §3.3, §3.5, §3.6): ids that are not a list of
strings, vector components beyond float32 or the float range, ragged or boolean, metadata too deep, cyclic,
too large or not Unicode, sizes no backend holds: each a ``ValidationError`` before any backend hook runs,
with what was stored unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

import pytest

from mastra_memory.metadata_limits import (
    MAX_METADATA_DEPTH,
    MAX_VECTOR_METADATA_BYTES,
    MAX_VECTOR_METADATA_KEYS,
)
from mastra_memory.vector import MastraVector
from mastra_memory.vector.records import MAX_DIMENSION, MAX_TOP_K

from ...plugin import set_item
from .. import IndexUnderTest, by_label, ill_typed
from ..errors import HookCounter
from .base import (
    BEYOND_UTC,
    BadInput,
    HostileSuiteBase,
    check_typed,
    cyclic,
    deep_list,
    many_keys,
    nested,
    raised_by,
    seed_vectors,
    vec,
    vector_state,
    verdict,
)

__all__ = ["VECTOR_CASES", "HostileVectorInputSuite"]

# --- vector inputs ------------------------------------------------------------------------------------

VectorCall = Callable[[MastraVector, str, int], Awaitable[Any]]


#: One bad vector-store input; its call takes (store, index name, dimension).
VectorCase = BadInput[VectorCall]


def _upsert_meta(metadata: Any) -> VectorCall:
    return lambda s, i, d: s.upsert(i, [vec(d)], [metadata], ids=["v0"])


def _update_meta(metadata: Any) -> VectorCall:
    return lambda s, i, d: s.update_vector(i, id="v0", update={"metadata": metadata})


def _v(label: str, operation: str, status: str, call: VectorCall) -> VectorCase:
    return BadInput(label, operation, status, call)


#: Every bad vector-store input the suite replays.
VECTOR_CASES: Final[list[VectorCase]] = [
    # ids: a string is not a list of ids (it was split into one id per character)
    _v(
        "delete ids as a string",
        "DELETE_VECTORS",
        "INVALID_ID",
        lambda s, i, d: s.delete_vectors(i, ids="v0"),
    ),
    _v(
        "delete ids as bytes",
        "DELETE_VECTORS",
        "INVALID_ID",
        lambda s, i, d: s.delete_vectors(i, ids=ill_typed(b"v0")),
    ),
    _v(
        "delete ids as an int",
        "DELETE_VECTORS",
        "INVALID_ID",
        lambda s, i, d: s.delete_vectors(i, ids=ill_typed(5)),
    ),
    _v(
        "delete ids as a dict",
        "DELETE_VECTORS",
        "INVALID_ID",
        lambda s, i, d: s.delete_vectors(i, ids=ill_typed({"v": 1})),
    ),
    _v(
        "upsert ids as a string",
        "UPSERT",
        "INVALID_ID",
        lambda s, i, d: s.upsert(i, [vec(d, seed=7), vec(d, seed=8)], ids="v0"),
    ),
    _v(
        "upsert ids as a set",
        "UPSERT",
        "INVALID_ID",
        lambda s, i, d: s.upsert(i, [vec(d)], ids=ill_typed({"v0"})),
    ),
    _v(
        "upsert a lone surrogate id",
        "UPSERT",
        "INVALID_ID",
        lambda s, i, d: s.upsert(i, [vec(d)], ids=["v\ud800"]),
    ),
    _v(
        "delete a lone surrogate id",
        "DELETE_VECTOR",
        "INVALID_ID",
        lambda s, i, d: s.delete_vector(i, "v\udc00"),
    ),
    _v(
        "update a lone surrogate id",
        "UPDATE_VECTOR",
        "INVALID_ID",
        lambda s, i, d: s.update_vector(i, id="\ud800", update={"metadata": {"a": 1}}),
    ),
    # vectors: numbers only, finite in float32, short enough for float32 scores
    _v("upsert 1e39", "UPSERT", "INVALID_VECTOR", lambda s, i, d: s.upsert(i, [vec(d, 1e39)], ids=["v0"])),
    _v("query 1e39", "QUERY", "INVALID_VECTOR", lambda s, i, d: s.query(i, vec(d, 1e39))),
    _v(
        "update 1e39",
        "UPDATE_VECTOR",
        "INVALID_VECTOR",
        lambda s, i, d: s.update_vector(i, id="v0", update={"vector": vec(d, 1e39)}),
    ),
    _v(
        "upsert 10**400",
        "UPSERT",
        "INVALID_VECTOR",
        lambda s, i, d: s.upsert(i, [vec(d, 10**400)], ids=["v0"]),
    ),
    _v("query -(10**400)", "QUERY", "INVALID_VECTOR", lambda s, i, d: s.query(i, vec(d, -(10**400)))),
    _v(
        "upsert a ragged vector",
        "UPSERT",
        "INVALID_VECTOR",
        lambda s, i, d: s.upsert(i, [vec(d, [1])], ids=["v0"]),
    ),
    _v(
        "upsert a bool component",
        "UPSERT",
        "INVALID_VECTOR",
        lambda s, i, d: s.upsert(i, [vec(d, True)], ids=["v0"]),
    ),
    _v("query a bool component", "QUERY", "INVALID_VECTOR", lambda s, i, d: s.query(i, vec(d, False))),
    _v(
        "upsert length 1e20",
        "UPSERT",
        "INVALID_VECTOR",
        lambda s, i, d: s.upsert(i, [vec(d, 1e20)], ids=["v0"]),
    ),
    _v("query length 2e19", "QUERY", "INVALID_VECTOR", lambda s, i, d: s.query(i, vec(d, 2e19))),
    _v(
        "update length 1e20",
        "UPDATE_VECTOR",
        "INVALID_VECTOR",
        lambda s, i, d: s.update_vector(i, id="v0", update={"vector": vec(d, 1e20)}),
    ),
    # metadata: bounded depth, keys and size; Unicode text; one dict per vector
    _v("metadata 33 levels deep", "UPSERT", "INVALID_METADATA", _upsert_meta(nested(MAX_METADATA_DEPTH + 1))),
    _v("metadata 126 levels deep", "UPSERT", "INVALID_METADATA", _upsert_meta(nested(126))),
    _v("metadata 10,000 levels deep", "UPSERT", "INVALID_METADATA", _upsert_meta(nested(10_000))),
    _v("metadata lists 40 deep", "UPSERT", "INVALID_METADATA", _upsert_meta({"a": deep_list(40)})),
    _v("cyclic metadata", "UPSERT", "INVALID_METADATA", _upsert_meta(cyclic())),
    _v(
        "metadata with too many keys",
        "UPSERT",
        "INVALID_METADATA",
        _upsert_meta(many_keys(MAX_VECTOR_METADATA_KEYS + 1)),
    ),
    _v(
        "metadata too large",
        "UPSERT",
        "INVALID_METADATA",
        _upsert_meta({"text": "x" * MAX_VECTOR_METADATA_BYTES}),
    ),
    _v("a lone surrogate value", "UPSERT", "INVALID_METADATA", _upsert_meta({"a": "x\ud800"})),
    _v("a lone surrogate key", "UPSERT", "INVALID_METADATA", _upsert_meta({"a\udfff": 1})),
    _v("a nested lone surrogate", "UPSERT", "INVALID_METADATA", _upsert_meta({"a": [{"b": ["\ud83d"]}]})),
    _v("a datetime beyond UTC", "UPSERT", "INVALID_METADATA", _upsert_meta({"when": BEYOND_UTC})),
    _v("metadata not a dict", "UPSERT", "INVALID_METADATA", _upsert_meta(ill_typed("x"))),
    _v(
        "metadata a dict, not a list",
        "UPSERT",
        "INVALID_METADATA",
        lambda s, i, d: s.upsert(i, [vec(d)], ill_typed({"a": 1}), ids=["v0"]),
    ),
    _v("update metadata 10,000 deep", "UPDATE_VECTOR", "INVALID_METADATA", _update_meta(nested(10_000))),
    _v("update cyclic metadata", "UPDATE_VECTOR", "INVALID_METADATA", _update_meta(cyclic())),
    _v("update a lone surrogate", "UPDATE_VECTOR", "INVALID_METADATA", _update_meta({"a": "\udc00"})),
    # sizes no backend holds
    _v(
        "dimension 10**9",
        "CREATE_INDEX",
        "INVALID_ARGS",
        lambda s, i, d: s.create_index(f"{i}_big", 10**9),
    ),
    _v(
        "dimension above the maximum",
        "CREATE_INDEX",
        "INVALID_ARGS",
        lambda s, i, d: s.create_index(f"{i}_big", MAX_DIMENSION + 1),
    ),
    _v("top_k 2**63", "QUERY", "TOP_K_TOO_LARGE", lambda s, i, d: s.query(i, vec(d), top_k=2**63)),
    _v("top_k 10**400", "QUERY", "TOP_K_TOO_LARGE", lambda s, i, d: s.query(i, vec(d), top_k=10**400)),
    _v(
        "top_k above the maximum",
        "QUERY",
        "TOP_K_TOO_LARGE",
        lambda s, i, d: s.query(i, vec(d), top_k=MAX_TOP_K + 1),
    ),
]


@pytest.mark.asyncio
class HostileVectorInputSuite(HostileSuiteBase):
    """Bad vector-store input (a part of ``HostileInputSuite``)."""

    @pytest.mark.parametrize("case", by_label(VECTOR_CASES))
    async def test_bad_vector_input(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest, case: VectorCase
    ) -> None:
        """docs/spec.md §3.3, §3.5, §3.6: a ValidationError with the operation's id before any backend hook
        runs; the count, a query (vectors and metadata included), a filtered query and the listing are
        unchanged."""
        set_item(request, case.label)
        dim = idx.dimension
        before = await seed_vectors(idx)
        with HookCounter(idx.store) as counter:
            error = await raised_by(lambda: case.call(idx.store, idx.name, dim))
            calls = dict(counter.calls)
        after = await vector_state(idx)
        verdict(case.label, error, after != before)
        assert error is not None
        check_typed(error, "VECTOR", idx.capabilities.name, case.operation, case.status, case.label)
        assert not calls, f"{case.label}: validation must happen before any I/O, but hooks ran: {calls}"
        assert f"{idx.name}_big" not in await idx.store.list_indexes()
