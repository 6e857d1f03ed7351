"""Vector basics and index lifecycle (docs/spec.md §3.1, §3.2, §3.5, §3.7).

``IndexLifecycleSuite``: ``create_index`` is idempotent (same dimension: no-op; another metric: the
existing one is kept with a warning; another dimension: ``IndexDimensionMismatchError`` naming both),
``describe_index`` counts exactly, ``list_indexes`` shows the native name, ``delete_index`` is
idempotent, and a missing index raises ``IndexNotFoundError`` ("does not exist").

``VectorBasicsSuite``: upsert (ids in input order, generated uuid4 ids, full replacement, last
occurrence wins), ``update_vector`` and ``delete_vector(s)`` by id and by filter (as the manifest
declares), ``include_vector``, ``top_k`` bounds, metadata-only queries, and ids returned verbatim.

Why one module of this size: a module under ``suite`` is one conformance domain, and the report names a
test's domain after its module, so splitting it would split the domain's row in the conformance matrix.
"""

from __future__ import annotations

import logging
import math
import uuid
import warnings
from collections.abc import Awaitable, Callable
from typing import Any, Final

import pytest

from mastra_memory.capabilities import AdapterCapabilities, Metric
from mastra_memory.errors import (
    CapabilityError,
    IndexDimensionMismatchError,
    IndexNotFoundError,
    ValidationError,
)
from mastra_memory.vector import MastraVector, QueryResult

from ..datasets import make_vector, query_vector
from ..plugin import set_item
from . import Item, expected_error_id, load, query_limit, settle

__all__ = ["IndexLifecycleSuite", "VectorBasicsSuite"]

#: Every metric a manifest can declare (``AdapterCapabilities.metrics``).
METRICS: Final[tuple[Metric, ...]] = ("cosine", "euclidean", "dotproduct")

#: float32 storage is acceptable (docs/spec.md §3.2): relative error of one float32 rounding, plus a floor.
FLOAT32_RTOL = 2e-7
FLOAT32_ATOL = 1e-7


def _items(count: int, dimension: int, prefix: str = "v") -> list[Item]:
    return [
        Item(
            f"{prefix}{i:03d}",
            make_vector(i + 1, dimension),
            {"i": i, "parity": "even" if i % 2 == 0 else "odd"},
        )
        for i in range(count)
    ]


async def _everything(
    store: MastraVector, capabilities: AdapterCapabilities, index: str, dimension: int, expected_count: int
) -> dict[str, QueryResult]:
    """Every record of ``index`` with its vector, by id (one query; ``top_k`` covers ``expected_count``)."""
    top_k = query_limit(capabilities, max(expected_count, 1) + 1)
    hits = await store.query(index, query_vector(dimension), top_k=top_k, include_vector=True)
    return {hit.id: hit for hit in hits}


def _non_unit_vectors(dimension: int) -> list[list[float]]:
    """Four vectors, none of them unit (norms 0.095 to 212 at dimension 8); w0 and w1 point the same way."""
    base = [(-1) ** j * (j + 1) / 3.0 for j in range(dimension)]
    return [
        [7.5 * x for x in base],
        [0.02 * x for x in base],
        [40.0 * (x + 1.0) for x in base],
        [3.0 * math.sin(j + 0.5) + 1.25 for j in range(dimension)],
    ]


def _close_to(stored: list[float] | None, written: list[float]) -> bool:
    return (
        stored is not None
        and len(stored) == len(written)
        and all(
            math.isclose(s, w, rel_tol=FLOAT32_RTOL, abs_tol=FLOAT32_ATOL)
            for s, w in zip(stored, written, strict=True)
        )
    )


@pytest.mark.asyncio
class IndexLifecycleSuite:
    """Creating, describing, listing and deleting indexes."""

    async def test_create_is_idempotent(
        self, vector_store: MastraVector, index_name: str, conformance_dimension: int
    ) -> None:
        await vector_store.create_index(index_name, conformance_dimension)
        await vector_store.create_index(index_name, conformance_dimension)
        stats = await vector_store.describe_index(index_name)
        assert (stats.dimension, stats.count, stats.metric) == (conformance_dimension, 0, "cosine")
        native = vector_store.to_native_index_name(index_name)
        assert (await vector_store.list_indexes()).count(native) == 1

    async def test_another_metric_keeps_the_existing_index(
        self,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        """Same dimension, another metric: a warning, and the existing metric is kept."""
        metrics = sorted(capabilities.metrics)
        first = metrics[0]
        others = metrics[1:]
        await vector_store.create_index(index_name, conformance_dimension, first)
        if not others:
            undeclared = next(m for m in ("cosine", "euclidean", "dotproduct") if m != first)
            with pytest.raises((CapabilityError, ValidationError), match="unsupported metric"):
                await vector_store.create_index(index_name, conformance_dimension, undeclared)  # type: ignore[arg-type]
        else:
            with caplog.at_level(logging.WARNING), warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                await vector_store.create_index(index_name, conformance_dimension, others[0])
            native = vector_store.to_native_index_name(index_name)
            logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
            warned = [str(w.message) for w in caught]
            assert any(native in m or index_name in m for m in logged + warned), (
                "create_index with another metric must warn naming the index; "
                f"logged {logged}, warned {warned}"
            )
        stats = await vector_store.describe_index(index_name)
        assert (stats.metric, stats.dimension) == (first, conformance_dimension)

    async def test_another_dimension_raises_naming_both(
        self, vector_store: MastraVector, index_name: str, conformance_dimension: int
    ) -> None:
        await vector_store.create_index(index_name, conformance_dimension)
        other = conformance_dimension + 1
        with pytest.raises(IndexDimensionMismatchError) as raised:
            await vector_store.create_index(index_name, other)
        message = str(raised.value)
        native = vector_store.to_native_index_name(index_name)
        assert native in message or index_name in message, f"the error must name the index: {message}"
        assert str(conformance_dimension) in message, f"the error must name both dimensions: {message}"
        assert str(other) in message, f"the error must name both dimensions: {message}"
        assert (await vector_store.describe_index(index_name)).dimension == conformance_dimension

    async def test_describe_counts_exactly(
        self,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
    ) -> None:
        await load(
            vector_store, capabilities, index_name, _items(7, conformance_dimension), conformance_dimension
        )
        assert (await vector_store.describe_index(index_name)).count == 7
        more = _items(12, conformance_dimension)[5:]  # two replaced, five new
        await vector_store.upsert(
            index_name, [i.vector for i in more], [i.metadata for i in more], [i.id for i in more]
        )
        await settle(vector_store, capabilities, index_name)
        assert (await vector_store.describe_index(index_name)).count == 12
        await vector_store.delete_vectors(index_name, ids=["v000", "v001", "v002", "v003", "not-there"])
        await settle(vector_store, capabilities, index_name)
        assert (await vector_store.describe_index(index_name)).count == 8

    async def test_list_indexes_shows_the_native_name(
        self, vector_store: MastraVector, index_name: str, conformance_dimension: int
    ) -> None:
        native = vector_store.to_native_index_name(index_name)
        assert native not in await vector_store.list_indexes()
        await vector_store.create_index(index_name, conformance_dimension)
        assert native in await vector_store.list_indexes()
        await vector_store.delete_index(index_name)
        assert native not in await vector_store.list_indexes()

    async def test_native_name_is_idempotent(self, vector_store: MastraVector, index_name: str) -> None:
        native = vector_store.to_native_index_name(index_name)
        assert vector_store.to_native_index_name(native) == native

    async def test_delete_is_idempotent(
        self, vector_store: MastraVector, index_name: str, conformance_dimension: int
    ) -> None:
        await vector_store.delete_index(f"{index_name}_never")
        await vector_store.create_index(index_name, conformance_dimension)
        await vector_store.delete_index(index_name)
        await vector_store.delete_index(index_name)
        with pytest.raises(IndexNotFoundError, match="does not exist"):
            await vector_store.describe_index(index_name)

    @pytest.mark.parametrize(
        "operation", ["query", "upsert", "describe_index", "update_vector", "delete_vectors"]
    )
    async def test_missing_index_does_not_exist(
        self,
        request: pytest.FixtureRequest,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
        operation: str,
    ) -> None:
        set_item(request, "missing index")
        vector = make_vector(1, conformance_dimension)
        calls: dict[str, Callable[[], Awaitable[Any]]] = {
            "query": lambda: vector_store.query(index_name, vector, top_k=1),
            "upsert": lambda: vector_store.upsert(index_name, [vector], [{"a": 1}], ["x"]),
            "describe_index": lambda: vector_store.describe_index(index_name),
            "update_vector": lambda: vector_store.update_vector(
                index_name, id="x", update={"metadata": {"a": 2}}
            ),
            "delete_vectors": lambda: vector_store.delete_vectors(index_name, ids=["x"]),
        }
        with pytest.raises(IndexNotFoundError, match="does not exist") as raised:
            await calls[operation]()
        assert raised.value.id.startswith(expected_error_id(capabilities, "", "")), raised.value.id
        assert vector_store.to_native_index_name(index_name) not in await vector_store.list_indexes()


@pytest.mark.asyncio
class VectorBasicsSuite:
    """Writing, reading, updating and deleting records."""

    async def test_upsert_returns_ids_in_input_order(
        self,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
    ) -> None:
        await vector_store.create_index(index_name, conformance_dimension)
        ids = ["c", "a", "b", "0", "Z"]
        vectors = [make_vector(i + 1, conformance_dimension) for i in range(len(ids))]
        assert await vector_store.upsert(index_name, vectors, ids=ids) == ids
        await settle(vector_store, capabilities, index_name)
        assert set(
            await _everything(vector_store, capabilities, index_name, conformance_dimension, 5)
        ) == set(ids)

    async def test_generated_ids_are_uuid4(
        self,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
    ) -> None:
        await vector_store.create_index(index_name, conformance_dimension)
        vectors = [make_vector(i + 1, conformance_dimension) for i in range(4)]
        ids = await vector_store.upsert(index_name, vectors, [{"n": i} for i in range(4)])
        assert len(set(ids)) == len(ids) == 4, ids
        assert all(uuid.UUID(i).version == 4 for i in ids), ids
        assert all(str(uuid.UUID(i)) == i for i in ids), f"generated ids are canonical uuid strings: {ids}"
        await settle(vector_store, capabilities, index_name)
        stored = await _everything(vector_store, capabilities, index_name, conformance_dimension, 4)
        assert {rid: hit.metadata for rid, hit in stored.items()} == {
            rid: {"n": n} for n, rid in enumerate(ids)
        }

    async def test_upsert_replaces_the_whole_record(
        self,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
    ) -> None:
        await load(
            vector_store, capabilities, index_name, _items(3, conformance_dimension), conformance_dimension
        )
        new_vector = make_vector(9, conformance_dimension)
        await vector_store.upsert(index_name, [new_vector], [{"fresh": True}], ["v001"])
        await settle(vector_store, capabilities, index_name)
        stored = await _everything(vector_store, capabilities, index_name, conformance_dimension, 3)
        assert len(stored) == 3
        assert (await vector_store.describe_index(index_name)).count == 3
        assert stored["v001"].metadata == {"fresh": True}, "upsert must replace the metadata, not merge it"
        assert _close_to(stored["v001"].vector, new_vector)
        assert stored["v000"].metadata == {"i": 0, "parity": "even"}

    async def test_repeated_id_in_one_call_last_wins(
        self,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
    ) -> None:
        await vector_store.create_index(index_name, conformance_dimension)
        vectors = [make_vector(s, conformance_dimension) for s in (1, 2, 3)]
        ids = await vector_store.upsert(index_name, vectors, [{"n": 1}, {"n": 2}, {"n": 3}], ["a", "b", "a"])
        assert ids == ["a", "b", "a"]
        await settle(vector_store, capabilities, index_name)
        assert (await vector_store.describe_index(index_name)).count == 2
        stored = await _everything(vector_store, capabilities, index_name, conformance_dimension, 2)
        assert stored["a"].metadata == {"n": 3}
        assert _close_to(stored["a"].vector, vectors[2])

    async def test_update_by_id_replaces(
        self,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
    ) -> None:
        """``metadata`` replaces the metadata, ``vector`` the vector, both may be given; a missing id is a
        no-op."""
        await load(
            vector_store, capabilities, index_name, _items(3, conformance_dimension), conformance_dimension
        )
        vector = make_vector(20, conformance_dimension)
        await vector_store.update_vector(index_name, id="v000", update={"metadata": {"only": "this"}})
        await vector_store.update_vector(index_name, id="v001", update={"vector": vector})
        await vector_store.update_vector(
            index_name, id="v002", update={"vector": vector, "metadata": {"both": 1}}
        )
        await vector_store.update_vector(index_name, id="missing", update={"metadata": {"x": 1}})
        await settle(vector_store, capabilities, index_name)
        stored = await _everything(vector_store, capabilities, index_name, conformance_dimension, 3)
        assert set(stored) == {"v000", "v001", "v002"}
        assert stored["v000"].metadata == {"only": "this"}, "update_vector metadata replaces, never merges"
        assert _close_to(stored["v000"].vector, make_vector(1, conformance_dimension))
        assert stored["v001"].metadata == {"i": 1, "parity": "odd"}
        assert _close_to(stored["v001"].vector, vector)
        assert stored["v002"].metadata == {"both": 1}
        assert _close_to(stored["v002"].vector, vector)

    async def test_update_by_filter(
        self,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
    ) -> None:
        await load(
            vector_store, capabilities, index_name, _items(6, conformance_dimension), conformance_dimension
        )
        if capabilities.update_by_filter == "none":
            with pytest.raises(CapabilityError):
                await vector_store.update_vector(
                    index_name, filter={"parity": "odd"}, update={"metadata": {"x": 1}}
                )
            return
        vector = make_vector(30, conformance_dimension)
        await vector_store.update_vector(
            index_name, filter={"parity": "odd"}, update={"metadata": {"was": "odd"}, "vector": vector}
        )
        await vector_store.update_vector(index_name, filter={"parity": "none"}, update={"metadata": {"x": 1}})
        await settle(vector_store, capabilities, index_name)
        stored = await _everything(vector_store, capabilities, index_name, conformance_dimension, 6)
        assert len(stored) == 6
        for i in range(6):
            hit = stored[f"v{i:03d}"]
            if i % 2:
                assert hit.metadata == {"was": "odd"}, f"v{i:03d}: {hit.metadata}"
                assert _close_to(hit.vector, vector)
            else:
                assert hit.metadata == {"i": i, "parity": "even"}, (
                    f"v{i:03d} does not match and must not change"
                )
                assert _close_to(hit.vector, make_vector(i + 1, conformance_dimension))

    async def test_delete_vector(
        self,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
    ) -> None:
        await load(
            vector_store, capabilities, index_name, _items(3, conformance_dimension), conformance_dimension
        )
        await vector_store.delete_vector(index_name, "v001")
        await vector_store.delete_vector(index_name, "missing")
        await settle(vector_store, capabilities, index_name)
        assert set(await _everything(vector_store, capabilities, index_name, conformance_dimension, 3)) == {
            "v000",
            "v002",
        }
        assert (await vector_store.describe_index(index_name)).count == 2

    async def test_delete_vectors_by_ids(
        self,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
    ) -> None:
        await load(
            vector_store, capabilities, index_name, _items(5, conformance_dimension), conformance_dimension
        )
        await vector_store.delete_vectors(index_name, ids=["v000", "v003", "unknown", "v003"])
        await settle(vector_store, capabilities, index_name)
        remaining = await _everything(vector_store, capabilities, index_name, conformance_dimension, 5)
        assert set(remaining) == {"v001", "v002", "v004"}

    async def test_delete_vectors_by_filter(
        self,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
    ) -> None:
        await load(
            vector_store, capabilities, index_name, _items(6, conformance_dimension), conformance_dimension
        )
        if capabilities.delete_by_filter == "none":
            with pytest.raises(CapabilityError):
                await vector_store.delete_vectors(index_name, filter={"parity": "odd"})
            return
        await vector_store.delete_vectors(index_name, filter={"parity": "odd"})
        await vector_store.delete_vectors(index_name, filter={"parity": "none"})
        await settle(vector_store, capabilities, index_name)
        remaining = await _everything(vector_store, capabilities, index_name, conformance_dimension, 6)
        assert set(remaining) == {"v000", "v002", "v004"}
        assert (await vector_store.describe_index(index_name)).count == 3

    @pytest.mark.parametrize("metric", METRICS)
    async def test_include_vector(
        self,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
        metric: Metric,
    ) -> None:
        """The stored vector comes back with ``include_vector=True`` (float32 precision), else ``None``.

        For every declared metric, with vectors of very different norms, none of them unit: a store that
        normalises cosine vectors on write (Qdrant) must still return what was written (docs/spec.md §3.2),
        also after ``update_vector`` replaced the vector, the metadata, or both.
        """
        if metric not in capabilities.metrics:
            pytest.skip(f"{capabilities.name} does not declare the metric {metric}")
        written = _non_unit_vectors(conformance_dimension)
        items = [Item(f"w{i}", vec, {"i": i}) for i, vec in enumerate(written)]
        await load(vector_store, capabilities, index_name, items, conformance_dimension, metric=metric)
        top_k = query_limit(capabilities, len(written))

        async def check(expected: dict[str, list[float]], when: str) -> None:
            hits = await vector_store.query(index_name, written[0], top_k=top_k, include_vector=True)
            assert len(hits) == min(top_k, len(expected)), f"{metric}, {when}: {[h.id for h in hits]}"
            for hit in hits:
                assert _close_to(hit.vector, expected[hit.id]), (
                    f"{metric}, {when}: {hit.id} came back as {hit.vector}, "
                    f"but {expected[hit.id]} was written"
                )

        await check({item.id: item.vector for item in items}, "after upsert")
        without = await vector_store.query(index_name, written[0], top_k=top_k)
        assert [h.vector for h in without] == [None] * len(without)

        replaced = [12.5 * ((j % 5) - 2.3) for j in range(conformance_dimension)]
        both = [-0.4 * (j + 1.7) for j in range(conformance_dimension)]
        await vector_store.update_vector(index_name, id="w0", update={"vector": replaced})
        await vector_store.update_vector(index_name, id="w1", update={"metadata": {"kept": True}})
        await vector_store.update_vector(
            index_name, id="w2", update={"vector": both, "metadata": {"both": True}}
        )
        await settle(vector_store, capabilities, index_name)
        expected = {item.id: item.vector for item in items}
        expected.update(w0=replaced, w2=both)
        await check(expected, "after update_vector")

    async def test_top_k_bounds(
        self,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
    ) -> None:
        await load(
            vector_store, capabilities, index_name, _items(6, conformance_dimension), conformance_dimension
        )
        query = query_vector(conformance_dimension)
        best = await vector_store.query(index_name, query, top_k=1)
        assert [h.id for h in best] == ["v000"], "top_k=1 returns the single best record"
        limit = capabilities.max_top_k
        above_count = query_limit(capabilities, 100)
        hits = await vector_store.query(index_name, query, top_k=above_count)
        assert [h.id for h in hits] == [f"v{i:03d}" for i in range(min(6, above_count))]
        if limit is not None:
            assert len(await vector_store.query(index_name, query, top_k=limit)) == min(6, limit)
            with pytest.raises(ValidationError, match=str(limit)) as raised:
                await vector_store.query(index_name, query, top_k=limit + 1)
            assert raised.value.id == expected_error_id(capabilities, "QUERY", "TOP_K_TOO_LARGE")

    async def test_metadata_only_query(
        self,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
    ) -> None:
        """``query_vector=None`` lists records in id order with score 0.0, or raises CapabilityError."""
        await load(
            vector_store, capabilities, index_name, _items(5, conformance_dimension), conformance_dimension
        )
        if not capabilities.metadata_only_query:
            with pytest.raises(CapabilityError, match="query_vector is required") as raised:
                await vector_store.query(index_name, None, top_k=5)
            assert raised.value.id == expected_error_id(capabilities, "QUERY", "MISSING_VECTOR")
            return
        listed = await vector_store.query(index_name, None, top_k=10)
        assert [h.id for h in listed] == ["v000", "v001", "v002", "v003", "v004"]
        assert all(h.score == 0.0 for h in listed)
        assert listed[3].metadata == {"i": 3, "parity": "odd"}
        odd = await vector_store.query(index_name, None, top_k=1, filter={"parity": "odd"})
        assert [h.id for h in odd] == ["v001"]

    async def test_ids_are_returned_verbatim(
        self,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
    ) -> None:
        """§3.5: any non-empty string of at most 512 characters is an id, and comes back unchanged."""
        ids = [
            "123",
            "00000000-0000-4000-8000-000000000001",
            "6F1D2A3C-5B7E-4C1A-9D3E-4F2A1B0C9E87",
            "with space",
            "ünïcødé-😀-שלום",
            "quote'\"back\\slash",
            "path/like:id#1",
            "x" * 512,
        ]
        items = [Item(rid, make_vector(i + 1, conformance_dimension), {"n": i}) for i, rid in enumerate(ids)]
        await load(vector_store, capabilities, index_name, items, conformance_dimension)
        stored = await _everything(vector_store, capabilities, index_name, conformance_dimension, len(ids))
        assert set(stored) == set(ids)
        assert all(stored[rid].metadata == {"n": i} for i, rid in enumerate(ids))
        await vector_store.delete_vector(index_name, ids[4])
        await vector_store.delete_vectors(index_name, ids=[ids[7]])
        await settle(vector_store, capabilities, index_name)
        remaining = await _everything(vector_store, capabilities, index_name, conformance_dimension, len(ids))
        assert set(remaining) == set(ids) - {ids[4], ids[7]}
