"""The zero-vector rule of docs/spec.md §3.3: a cosine index refuses zero vectors on upsert (the whole
call), update and query, before any backend write; the euclidean and dotproduct indexes a target declares
store, score and return them.
"""

from __future__ import annotations

import math
from typing import Final

import pytest

from mastra_memory.capabilities import Metric
from mastra_memory.errors import ValidationError
from mastra_memory.vector import MIN_COSINE_NORM

from ...plugin import set_item
from ...report import Outcome
from .. import IndexUnderTest, Item, VectorSuiteBase, score_tolerance
from .base import WRITES, Call, HookCounter, assert_counted, check_id, index_state, seed_index, vec

__all__ = ["ZERO_VECTOR_BY_FILTER", "ZERO_VECTOR_CALLS", "ZeroVectorsSuite"]


def _zero(dim: int) -> list[float]:
    return [0.0] * dim


def _tiny(dim: int) -> list[float]:
    """Not all zeros, yet shorter than ``MIN_COSINE_NORM``: zero length at float32 precision (§3.3)."""
    return [MIN_COSINE_NORM / 100.0] + [0.0] * (dim - 1)


def _axis(dim: int) -> list[float]:
    return [1.0] + [0.0] * (dim - 1)


#: Calls a cosine index must refuse (docs/spec.md §3.3): label, call, operation, phrases of the message.
ZERO_VECTOR_CALLS: Final[list[tuple[str, Call, str, tuple[str, ...]]]] = [
    (
        "upsert: one zero vector among good ones",
        lambda s, i, d: s.upsert(i, [vec(d, 7), _zero(d), vec(d, 8)], ids=["new0", "zero", "new2"]),
        "UPSERT",
        ("zero vector", "vector [1] (id 'zero')"),
    ),
    (
        "upsert: a vector of zero length at float32 precision",
        lambda s, i, d: s.upsert(i, [_tiny(d), vec(d, 7)], [{"n": 9}, {"n": 10}], ["tiny", "new1"]),
        "UPSERT",
        ("zero vector", "vector [0] (id 'tiny')"),
    ),
    (
        "upsert: a zero vector replacing an existing record",
        lambda s, i, d: s.upsert(i, [vec(d, 7), _zero(d)], [{"n": 0}, {"n": 0}], ["v0", "v0"]),
        "UPSERT",
        ("zero vector", "vector [1] (id 'v0')"),
    ),
    (
        "query: a zero query vector",
        lambda s, i, d: s.query(i, _zero(d)),
        "QUERY",
        ("zero vector", "query_vector"),
    ),
    (
        "query: a tiny query vector",
        lambda s, i, d: s.query(i, _tiny(d)),
        "QUERY",
        ("zero vector", "query_vector"),
    ),
    (
        "update_vector by id",
        lambda s, i, d: s.update_vector(i, id="v1", update={"vector": _zero(d)}),
        "UPDATE_VECTOR",
        ("zero vector", "the update vector"),
    ),
    (
        "update_vector by id with metadata",
        lambda s, i, d: s.update_vector(i, id="v1", update={"vector": _zero(d), "metadata": {"n": 5}}),
        "UPDATE_VECTOR",
        ("zero vector", "the update vector"),
    ),
]

#: The same refusal by filter (only on targets that can update by filter).
ZERO_VECTOR_BY_FILTER: Final = (
    "update_vector by filter",
    lambda s, i, d: s.update_vector(i, filter={"category": "home"}, update={"vector": _zero(d)}),
    "UPDATE_VECTOR",
    ("zero vector", "the update vector"),
)


@pytest.mark.asyncio
class ZeroVectorsSuite(VectorSuiteBase):
    """§3.3: zero vectors, refused by cosine indexes and kept by the others (a part of ``ErrorsSuite``)."""

    async def test_zero_vectors_are_refused_by_a_cosine_index(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest
    ) -> None:
        """§3.3: a cosine index refuses a zero vector — all zeros, or zero length at float32 precision — on
        upsert, update_vector and query with ``…_ZERO_VECTOR`` naming the id or ``query_vector``; nothing is
        written (an upsert with one zero vector among good ones stores none of them); the index still counts,
        lists and finds exactly what it held."""
        set_item(request, "ZERO_VECTOR")
        if "cosine" not in idx.capabilities.metrics:
            pytest.skip(f"{idx.capabilities.name} declares no cosine metric")
        before = await seed_index(idx)
        listed = (
            sorted(h.id for h in await idx.store.query(idx.name, None, top_k=idx.limit(10)))
            if idx.capabilities.metadata_only_query
            else None
        )
        calls = list(ZERO_VECTOR_CALLS)
        if idx.capabilities.update_by_filter != "none":
            calls.append(ZERO_VECTOR_BY_FILTER)
        with HookCounter(idx.store) as counter:
            for label, call, operation, phrases in calls:
                with pytest.raises(ValidationError) as raised:
                    await call(idx.store, idx.name, idx.dimension)
                check_id(raised.value, idx.capabilities, operation, "ZERO_VECTOR")
                message = str(raised.value)
                for phrase in phrases:
                    assert phrase in message, f"{label}: the message must contain {phrase!r}: {message!r}"
                assert idx.native_name in message, message
                writes = {n for n in counter.calls if n in WRITES}
                assert not writes, (
                    f"{label}: backend writes before refusing the zero vector: {dict(counter.calls)}"
                )
            assert not set(counter.calls) - {"_describe_index"}, (
                f"only the index's metric may be read before refusing, but hooks ran: {dict(counter.calls)}"
            )
            await assert_counted(counter, idx)
        assert await index_state(idx) == before
        if listed is not None:
            top = idx.limit(10)
            assert sorted(h.id for h in await idx.store.query(idx.name, None, top_k=top)) == listed

    @pytest.mark.parametrize("metric", ["euclidean", "dotproduct"])
    async def test_zero_vectors_are_kept_by_euclidean_and_dotproduct_indexes(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest, outcome: Outcome, metric: Metric
    ) -> None:
        """§3.3/§3.4: the zero-vector rule is cosine's only. A declared euclidean or dotproduct index stores
        a zero vector, counts it, returns it (and its vector) from a query with its exact score, takes a zero
        query vector, and accepts a zero vector in update_vector."""
        set_item(request, f"zero vector ({metric})")
        if metric not in idx.capabilities.metrics:
            outcome.unsupported(metric, f"{idx.capabilities.name} declares no {metric} index")
            return
        dim = idx.dimension
        tolerance = score_tolerance(idx.capabilities)
        items = [
            Item("zero", _zero(dim), {"n": 0}),
            Item("one", _axis(dim), {"n": 1}),
            Item("two", vec(dim, 2), {"n": 2}),
        ]
        await idx.load(items, dimension=dim, metric=metric)
        assert (await idx.store.describe_index(idx.name)).count == len(items)

        def exact(stored: list[float], query: list[float]) -> float:
            if metric == "dotproduct":
                return sum(a * b for a, b in zip(stored, query, strict=True))
            return 1.0 / (1.0 + math.dist(stored, query))

        for query in (_axis(dim), _zero(dim)):
            hits = await idx.store.query(idx.name, query, top_k=idx.limit(10), include_vector=True)
            assert sorted(h.id for h in hits) == ["one", "two", "zero"], (
                f"{metric}: a query for {query[:2]}... must return every record, the zero vector included; "
                f"got {[h.id for h in hits]}"
            )
            written = {item.id: item.vector for item in items}
            for hit in hits:
                want = exact(written[hit.id], query)
                assert abs(hit.score - want) <= tolerance * max(1.0, abs(want)), (
                    f"{metric}: {hit.id} scored {hit.score!r} for {query[:2]}..., expected {want!r}"
                )
            zero_hit = next(h for h in hits if h.id == "zero")
            assert zero_hit.vector is not None, f"{metric}: include_vector=True returned no vector"
            assert all(x == 0.0 for x in zero_hit.vector), (
                f"{metric}: the zero vector came back as {zero_hit}"
            )
        await idx.store.update_vector(idx.name, id="one", update={"vector": _zero(dim)})
        await idx.settle()
        hits = await idx.store.query(idx.name, _axis(dim), top_k=idx.limit(10), include_vector=True)
        one = next(h for h in hits if h.id == "one")
        assert one.vector is not None, f"{metric}: include_vector=True returned no vector"
        assert all(x == 0.0 for x in one.vector), f"{metric}: update_vector to a zero vector gave {one}"
