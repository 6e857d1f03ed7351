"""Vector basics and index lifecycle (docs/spec.md §3.1, §3.2, §3.5, §3.7).

``IndexLifecycleSuite``: ``create_index`` is idempotent (same dimension: no-op; another metric: the
existing one is kept with a warning; another dimension: ``IndexDimensionMismatchError`` naming both),
``describe_index`` counts exactly, ``list_indexes`` shows the native name, ``delete_index`` is
idempotent, and a missing index raises ``IndexNotFoundError`` ("does not exist").

``VectorBasicsSuite``: upsert (ids in input order, generated uuid4 ids, full replacement, last
occurrence wins), ``update_vector`` and ``delete_vector(s)`` by id and by filter (as the manifest
declares), ``include_vector``, ``top_k`` bounds, metadata-only queries (id order, score 0.0, the first
``top_k`` matches), ``upsert(..., delete_filter=...)`` (every chunk of one source replaced, atomically
where the manifest says ``"atomic"``; refused before any I/O where it says ``"none"``), and ids returned
verbatim.
"""

from __future__ import annotations

import asyncio
import logging
import math
import uuid
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from mastra_memory.capabilities import Metric
from mastra_memory.errors import (
    CapabilityError,
    FilterError,
    IndexDimensionMismatchError,
    IndexNotFoundError,
    MastraMemoryError,
    ValidationError,
)
from mastra_memory.vector import QueryResult

from ..datasets import make_vector, query_vector
from ..plugin import set_item
from . import METRICS, IndexUnderTest, Item, VectorSuiteBase, expected_error_id, float32_close
from .errors.base import WRITES, HookCounter

__all__ = ["IndexLifecycleSuite", "VectorBasicsSuite"]


def _items(count: int, dimension: int, prefix: str = "v") -> list[Item]:
    return [
        Item(
            f"{prefix}{i:03d}",
            make_vector(i + 1, dimension),
            {"i": i, "parity": "even" if i % 2 == 0 else "odd"},
        )
        for i in range(count)
    ]


async def _everything(idx: IndexUnderTest, expected_count: int) -> dict[str, QueryResult]:
    """Every record of the index with its vector, by id (one query; ``top_k`` covers ``expected_count``)."""
    top_k = idx.limit(max(expected_count, 1) + 1)
    hits = await idx.store.query(idx.name, query_vector(idx.dimension), top_k=top_k, include_vector=True)
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


@pytest.mark.asyncio
class IndexLifecycleSuite(VectorSuiteBase):
    """Creating, describing, listing and deleting indexes."""

    async def test_create_is_idempotent(self, idx: IndexUnderTest) -> None:
        await idx.store.create_index(idx.name, idx.dimension)
        await idx.store.create_index(idx.name, idx.dimension)
        stats = await idx.store.describe_index(idx.name)
        assert (stats.dimension, stats.count, stats.metric) == (idx.dimension, 0, "cosine")
        native = idx.native_name
        assert (await idx.store.list_indexes()).count(native) == 1

    async def test_another_metric_keeps_the_existing_index(
        self, idx: IndexUnderTest, caplog: pytest.LogCaptureFixture
    ) -> None:
        """Same dimension, another metric: a warning, and the existing metric is kept."""
        metrics = sorted(idx.capabilities.metrics)
        first = metrics[0]
        others = metrics[1:]
        await idx.store.create_index(idx.name, idx.dimension, first)
        if not others:
            undeclared = next(m for m in ("cosine", "euclidean", "dotproduct") if m != first)
            with pytest.raises((CapabilityError, ValidationError), match="unsupported metric"):
                await idx.store.create_index(idx.name, idx.dimension, undeclared)  # type: ignore[arg-type]
        else:
            with caplog.at_level(logging.WARNING), warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                await idx.store.create_index(idx.name, idx.dimension, others[0])
            native = idx.native_name
            logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
            warned = [str(w.message) for w in caught]
            assert any(native in m or idx.name in m for m in logged + warned), (
                "create_index with another metric must warn naming the index; "
                f"logged {logged}, warned {warned}"
            )
        stats = await idx.store.describe_index(idx.name)
        assert (stats.metric, stats.dimension) == (first, idx.dimension)

    async def test_another_dimension_raises_naming_both(self, idx: IndexUnderTest) -> None:
        await idx.store.create_index(idx.name, idx.dimension)
        other = idx.dimension + 1
        with pytest.raises(IndexDimensionMismatchError) as raised:
            await idx.store.create_index(idx.name, other)
        message = str(raised.value)
        native = idx.native_name
        assert native in message or idx.name in message, f"the error must name the index: {message}"
        assert str(idx.dimension) in message, f"the error must name both dimensions: {message}"
        assert str(other) in message, f"the error must name both dimensions: {message}"
        assert (await idx.store.describe_index(idx.name)).dimension == idx.dimension

    async def test_describe_counts_exactly(self, idx: IndexUnderTest) -> None:
        await idx.load(_items(7, idx.dimension))
        assert (await idx.store.describe_index(idx.name)).count == 7
        more = _items(12, idx.dimension)[5:]  # two replaced, five new
        await idx.store.upsert(
            idx.name, [i.vector for i in more], [i.metadata for i in more], [i.id for i in more]
        )
        await idx.settle()
        assert (await idx.store.describe_index(idx.name)).count == 12
        await idx.store.delete_vectors(idx.name, ids=["v000", "v001", "v002", "v003", "not-there"])
        await idx.settle()
        assert (await idx.store.describe_index(idx.name)).count == 8

    async def test_list_indexes_shows_the_native_name(self, idx: IndexUnderTest) -> None:
        native = idx.native_name
        assert native not in await idx.store.list_indexes()
        await idx.store.create_index(idx.name, idx.dimension)
        assert native in await idx.store.list_indexes()
        await idx.store.delete_index(idx.name)
        assert native not in await idx.store.list_indexes()

    async def test_native_name_is_idempotent(self, idx: IndexUnderTest) -> None:
        native = idx.native_name
        assert idx.store.to_native_index_name(native) == native

    async def test_delete_is_idempotent(self, idx: IndexUnderTest) -> None:
        await idx.store.delete_index(f"{idx.name}_never")
        await idx.store.create_index(idx.name, idx.dimension)
        await idx.store.delete_index(idx.name)
        await idx.store.delete_index(idx.name)
        with pytest.raises(IndexNotFoundError, match="does not exist"):
            await idx.store.describe_index(idx.name)

    @pytest.mark.parametrize(
        "operation", ["query", "upsert", "describe_index", "update_vector", "delete_vectors"]
    )
    async def test_missing_index_does_not_exist(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest, operation: str
    ) -> None:
        set_item(request, "missing index")
        vector = make_vector(1, idx.dimension)
        calls: dict[str, Callable[[], Awaitable[Any]]] = {
            "query": lambda: idx.store.query(idx.name, vector, top_k=1),
            "upsert": lambda: idx.store.upsert(idx.name, [vector], [{"a": 1}], ["x"]),
            "describe_index": lambda: idx.store.describe_index(idx.name),
            "update_vector": lambda: idx.store.update_vector(idx.name, id="x", update={"metadata": {"a": 2}}),
            "delete_vectors": lambda: idx.store.delete_vectors(idx.name, ids=["x"]),
        }
        with pytest.raises(IndexNotFoundError, match="does not exist") as raised:
            await calls[operation]()
        assert raised.value.id.startswith(expected_error_id(idx.capabilities, "", "")), raised.value.id
        assert idx.native_name not in await idx.store.list_indexes()


@pytest.mark.asyncio
class VectorBasicsSuite(VectorSuiteBase):
    """Writing, reading, updating and deleting records."""

    async def test_upsert_returns_ids_in_input_order(self, idx: IndexUnderTest) -> None:
        await idx.store.create_index(idx.name, idx.dimension)
        ids = ["c", "a", "b", "0", "Z"]
        vectors = [make_vector(i + 1, idx.dimension) for i in range(len(ids))]
        assert await idx.store.upsert(idx.name, vectors, ids=ids) == ids
        await idx.settle()
        assert set(await _everything(idx, 5)) == set(ids)

    async def test_generated_ids_are_uuid4(self, idx: IndexUnderTest) -> None:
        await idx.store.create_index(idx.name, idx.dimension)
        vectors = [make_vector(i + 1, idx.dimension) for i in range(4)]
        ids = await idx.store.upsert(idx.name, vectors, [{"n": i} for i in range(4)])
        assert len(set(ids)) == len(ids) == 4, ids
        assert all(uuid.UUID(i).version == 4 for i in ids), ids
        assert all(str(uuid.UUID(i)) == i for i in ids), f"generated ids are canonical uuid strings: {ids}"
        await idx.settle()
        stored = await _everything(idx, 4)
        assert {rid: hit.metadata for rid, hit in stored.items()} == {
            rid: {"n": n} for n, rid in enumerate(ids)
        }

    async def test_upsert_replaces_the_whole_record(self, idx: IndexUnderTest) -> None:
        await idx.load(_items(3, idx.dimension))
        new_vector = make_vector(9, idx.dimension)
        await idx.store.upsert(idx.name, [new_vector], [{"fresh": True}], ["v001"])
        await idx.settle()
        stored = await _everything(idx, 3)
        assert len(stored) == 3
        assert (await idx.store.describe_index(idx.name)).count == 3
        assert stored["v001"].metadata == {"fresh": True}, "upsert must replace the metadata, not merge it"
        assert float32_close(stored["v001"].vector, new_vector)
        assert stored["v000"].metadata == {"i": 0, "parity": "even"}

    async def test_repeated_id_in_one_call_last_wins(self, idx: IndexUnderTest) -> None:
        await idx.store.create_index(idx.name, idx.dimension)
        vectors = [make_vector(s, idx.dimension) for s in (1, 2, 3)]
        ids = await idx.store.upsert(idx.name, vectors, [{"n": 1}, {"n": 2}, {"n": 3}], ["a", "b", "a"])
        assert ids == ["a", "b", "a"]
        await idx.settle()
        assert (await idx.store.describe_index(idx.name)).count == 2
        stored = await _everything(idx, 2)
        assert stored["a"].metadata == {"n": 3}
        assert float32_close(stored["a"].vector, vectors[2])

    async def test_update_by_id_replaces(self, idx: IndexUnderTest) -> None:
        """``metadata`` replaces the metadata, ``vector`` the vector, both may be given; a missing id is a
        no-op."""
        await idx.load(_items(3, idx.dimension))
        vector = make_vector(20, idx.dimension)
        await idx.store.update_vector(idx.name, id="v000", update={"metadata": {"only": "this"}})
        await idx.store.update_vector(idx.name, id="v001", update={"vector": vector})
        await idx.store.update_vector(idx.name, id="v002", update={"vector": vector, "metadata": {"both": 1}})
        await idx.store.update_vector(idx.name, id="missing", update={"metadata": {"x": 1}})
        await idx.settle()
        stored = await _everything(idx, 3)
        assert set(stored) == {"v000", "v001", "v002"}
        assert stored["v000"].metadata == {"only": "this"}, "update_vector metadata replaces, never merges"
        assert float32_close(stored["v000"].vector, make_vector(1, idx.dimension))
        assert stored["v001"].metadata == {"i": 1, "parity": "odd"}
        assert float32_close(stored["v001"].vector, vector)
        assert stored["v002"].metadata == {"both": 1}
        assert float32_close(stored["v002"].vector, vector)

    async def test_update_by_filter(self, idx: IndexUnderTest) -> None:
        await idx.load(_items(6, idx.dimension))
        if idx.capabilities.update_by_filter == "none":
            with pytest.raises(CapabilityError):
                await idx.store.update_vector(
                    idx.name, filter={"parity": "odd"}, update={"metadata": {"x": 1}}
                )
            return
        vector = make_vector(30, idx.dimension)
        await idx.store.update_vector(
            idx.name, filter={"parity": "odd"}, update={"metadata": {"was": "odd"}, "vector": vector}
        )
        await idx.store.update_vector(idx.name, filter={"parity": "none"}, update={"metadata": {"x": 1}})
        await idx.settle()
        stored = await _everything(idx, 6)
        assert len(stored) == 6
        for i in range(6):
            hit = stored[f"v{i:03d}"]
            if i % 2:
                assert hit.metadata == {"was": "odd"}, f"v{i:03d}: {hit.metadata}"
                assert float32_close(hit.vector, vector)
            else:
                assert hit.metadata == {"i": i, "parity": "even"}, (
                    f"v{i:03d} does not match and must not change"
                )
                assert float32_close(hit.vector, make_vector(i + 1, idx.dimension))

    async def test_delete_vector(self, idx: IndexUnderTest) -> None:
        await idx.load(_items(3, idx.dimension))
        await idx.store.delete_vector(idx.name, "v001")
        await idx.store.delete_vector(idx.name, "missing")
        await idx.settle()
        assert set(await _everything(idx, 3)) == {
            "v000",
            "v002",
        }
        assert (await idx.store.describe_index(idx.name)).count == 2

    async def test_delete_vectors_by_ids(self, idx: IndexUnderTest) -> None:
        await idx.load(_items(5, idx.dimension))
        await idx.store.delete_vectors(idx.name, ids=["v000", "v003", "unknown", "v003"])
        await idx.settle()
        remaining = await _everything(idx, 5)
        assert set(remaining) == {"v001", "v002", "v004"}

    async def test_delete_vectors_by_filter(self, idx: IndexUnderTest) -> None:
        await idx.load(_items(6, idx.dimension))
        if idx.capabilities.delete_by_filter == "none":
            with pytest.raises(CapabilityError):
                await idx.store.delete_vectors(idx.name, filter={"parity": "odd"})
            return
        await idx.store.delete_vectors(idx.name, filter={"parity": "odd"})
        await idx.store.delete_vectors(idx.name, filter={"parity": "none"})
        await idx.settle()
        remaining = await _everything(idx, 6)
        assert set(remaining) == {"v000", "v002", "v004"}
        assert (await idx.store.describe_index(idx.name)).count == 3

    @pytest.mark.parametrize("metric", METRICS)
    async def test_include_vector(self, idx: IndexUnderTest, metric: Metric) -> None:
        """The stored vector comes back with ``include_vector=True`` (float32 precision), else ``None``.

        For every declared metric, with vectors of very different norms, none of them unit: a store that
        normalises cosine vectors on write (Qdrant) must still return what was written (docs/spec.md §3.2),
        also after ``update_vector`` replaced the vector, the metadata, or both.
        """
        if metric not in idx.capabilities.metrics:
            pytest.skip(f"{idx.capabilities.name} does not declare the metric {metric}")
        written = _non_unit_vectors(idx.dimension)
        items = [Item(f"w{i}", vec, {"i": i}) for i, vec in enumerate(written)]
        await idx.load(items, metric=metric)
        top_k = idx.limit(len(written))

        async def check(expected: dict[str, list[float]], when: str) -> None:
            hits = await idx.store.query(idx.name, written[0], top_k=top_k, include_vector=True)
            assert len(hits) == min(top_k, len(expected)), f"{metric}, {when}: {[h.id for h in hits]}"
            for hit in hits:
                assert float32_close(hit.vector, expected[hit.id]), (
                    f"{metric}, {when}: {hit.id} came back as {hit.vector}, "
                    f"but {expected[hit.id]} was written"
                )

        await check({item.id: item.vector for item in items}, "after upsert")
        without = await idx.store.query(idx.name, written[0], top_k=top_k)
        assert [h.vector for h in without] == [None] * len(without)

        replaced = [12.5 * ((j % 5) - 2.3) for j in range(idx.dimension)]
        both = [-0.4 * (j + 1.7) for j in range(idx.dimension)]
        await idx.store.update_vector(idx.name, id="w0", update={"vector": replaced})
        await idx.store.update_vector(idx.name, id="w1", update={"metadata": {"kept": True}})
        await idx.store.update_vector(idx.name, id="w2", update={"vector": both, "metadata": {"both": True}})
        await idx.settle()
        expected = {item.id: item.vector for item in items}
        expected.update(w0=replaced, w2=both)
        await check(expected, "after update_vector")

    async def test_top_k_bounds(self, idx: IndexUnderTest) -> None:
        await idx.load(_items(6, idx.dimension))
        query = query_vector(idx.dimension)
        best = await idx.store.query(idx.name, query, top_k=1)
        assert [h.id for h in best] == ["v000"], "top_k=1 returns the single best record"
        limit = idx.capabilities.max_top_k
        above_count = idx.limit(100)
        hits = await idx.store.query(idx.name, query, top_k=above_count)
        assert [h.id for h in hits] == [f"v{i:03d}" for i in range(min(6, above_count))]
        if limit is not None:
            assert len(await idx.store.query(idx.name, query, top_k=limit)) == min(6, limit)
            with pytest.raises(ValidationError, match=str(limit)) as raised:
                await idx.store.query(idx.name, query, top_k=limit + 1)
            assert raised.value.id == expected_error_id(idx.capabilities, "QUERY", "TOP_K_TOO_LARGE")

    async def test_metadata_only_query(self, idx: IndexUnderTest) -> None:
        """``query_vector=None`` lists records in id order with score 0.0, or raises CapabilityError."""
        await idx.load(_items(5, idx.dimension))
        if not idx.capabilities.metadata_only_query:
            with pytest.raises(CapabilityError, match="query_vector is required") as raised:
                await idx.store.query(idx.name, None, top_k=5)
            assert raised.value.id == expected_error_id(idx.capabilities, "QUERY", "MISSING_VECTOR")
            return
        listed = await idx.store.query(idx.name, None, top_k=10)
        assert [h.id for h in listed] == ["v000", "v001", "v002", "v003", "v004"]
        assert all(h.score == 0.0 for h in listed)
        assert listed[3].metadata == {"i": 3, "parity": "odd"}
        odd = await idx.store.query(idx.name, None, top_k=1, filter={"parity": "odd"})
        assert [h.id for h in odd] == ["v001"]

    async def test_metadata_only_query_top_k_takes_the_first_ids(self, idx: IndexUnderTest) -> None:
        """docs/spec.md §3.1: without a query vector, ``top_k`` cuts the matches in id order (code point
        order, not insertion order), every score 0.0, vectors only with ``include_vector``."""
        ids = ["b", "a10", "a9", "Z", "ä", "a1"]
        items = [
            Item(rid, make_vector(i + 1, idx.dimension), {"n": i, "keep": i != 1})
            for i, rid in enumerate(ids)
        ]
        await idx.load(items)
        if not idx.capabilities.metadata_only_query:
            with pytest.raises(CapabilityError, match="query_vector is required"):
                await idx.store.query(idx.name, None, top_k=3, filter={"keep": True})
            return
        first = await idx.store.query(idx.name, None, top_k=3, filter={"keep": True})
        assert [h.id for h in first] == ["Z", "a1", "a9"]
        assert all(h.score == 0.0 and h.vector is None for h in first)
        everything = await idx.store.query(idx.name, None, top_k=idx.limit(10), include_vector=True)
        assert [h.id for h in everything] == sorted(ids)
        by_id = {item.id: item for item in items}
        for hit in everything:
            assert hit.metadata == by_id[hit.id].metadata
            assert hit.vector is not None
            assert float32_close(hit.vector, by_id[hit.id].vector)
        assert await idx.store.query(idx.name, None, top_k=5, filter={"n": {"$gt": 99}}) == []

    async def test_upsert_delete_filter_replaces_a_source(self, idx: IndexUnderTest) -> None:
        """``upsert(..., delete_filter=...)`` (Mastra's ``deleteFilter``, docs/spec.md §3.1): every record
        the filter matches is gone, the new records are written, other records are untouched."""
        old = [
            Item(f"doc-a-{i}", make_vector(i + 1, idx.dimension), {"source": "a.pdf", "chunk": i})
            for i in range(4)
        ] + [Item("doc-b-0", make_vector(9, idx.dimension), {"source": "b.pdf", "chunk": 0})]
        await idx.load(old)
        # Two chunks now where there were four; one new id, one id kept from before (replaced).
        new_ids = ["doc-a-0", "doc-a-new"]
        new_vectors = [make_vector(20, idx.dimension), make_vector(21, idx.dimension)]
        new_metadata = [{"source": "a.pdf", "chunk": 0, "v": 2}, {"source": "a.pdf", "chunk": 1, "v": 2}]
        if idx.capabilities.upsert_delete_filter == "none":
            refused = pytest.raises(CapabilityError, match="delete_filter")
            with HookCounter(idx.store) as counter, refused as raised:
                await idx.store.upsert(
                    idx.name, new_vectors, new_metadata, new_ids, delete_filter={"source": "a.pdf"}
                )
            assert raised.value.id == expected_error_id(idx.capabilities, "UPSERT", "UNSUPPORTED")
            assert not any(counter.calls[h] for h in WRITES), "refused before any write"
            return
        returned = await idx.store.upsert(
            idx.name, new_vectors, new_metadata, new_ids, delete_filter={"source": "a.pdf"}
        )
        assert returned == new_ids
        await idx.settle()
        stored = await _everything(idx, len(old))
        assert set(stored) == {"doc-a-0", "doc-a-new", "doc-b-0"}
        assert stored["doc-a-0"].metadata == new_metadata[0]
        assert stored["doc-a-new"].metadata == new_metadata[1]
        assert stored["doc-b-0"].metadata == {"source": "b.pdf", "chunk": 0}
        assert stored["doc-a-0"].vector is not None
        assert float32_close(stored["doc-a-0"].vector, new_vectors[0])
        assert (await idx.store.describe_index(idx.name)).count == 3
        # A filter that matches nothing: a plain upsert.
        await idx.store.upsert(
            idx.name,
            [make_vector(30, idx.dimension)],
            [{"source": "c.pdf"}],
            ["doc-c-0"],
            delete_filter={"source": "nowhere"},
        )
        await idx.settle()
        assert set(await _everything(idx, 4)) == {"doc-a-0", "doc-a-new", "doc-b-0", "doc-c-0"}

    async def test_upsert_delete_filter_is_checked_before_any_io(self, idx: IndexUnderTest) -> None:
        """An empty or invalid ``delete_filter`` is refused before anything is deleted or written, and so
        is an upsert whose vectors are bad: the filter's matches stay."""
        await idx.load(_items(3, idx.dimension))
        good = [make_vector(7, idx.dimension)]
        calls: list[tuple[Any, type[MastraMemoryError], str]] = [
            ({}, ValidationError, "empty filter"),
            ({"parity": {"$bogus": 1}}, FilterError, "bogus"),
        ]
        with HookCounter(idx.store) as counter:
            for flt, error, phrase in calls:
                with pytest.raises(error, match=phrase):
                    await idx.store.upsert(idx.name, good, [{"i": 9}], ["v009"], delete_filter=flt)
            with pytest.raises(ValidationError):
                await idx.store.upsert(
                    idx.name, [[1.0]], [{"i": 9}], ["v009"], delete_filter={"parity": "odd"}
                )
        assert not any(counter.calls[h] for h in WRITES), f"refused before any write: {dict(counter.calls)}"
        assert set(await _everything(idx, 3)) == {"v000", "v001", "v002"}

    async def test_upsert_delete_filter_atomic_readers_never_see_the_gap(self, idx: IndexUnderTest) -> None:
        """Where the manifest declares ``upsert_delete_filter="atomic"``, a concurrent reader sees either the
        old chunks of the source or the new ones, never none and never both (docs/spec.md §3.1)."""
        if idx.capabilities.upsert_delete_filter != "atomic":
            pytest.skip("the manifest does not declare an atomic upsert with delete_filter")
        chunks = 6
        query = query_vector(idx.dimension)

        def version(v: int) -> tuple[list[list[float]], list[dict[str, Any]], list[str]]:
            vectors = [make_vector(v * chunks + i + 1, idx.dimension) for i in range(chunks)]
            metas: list[dict[str, Any]] = [{"source": "s", "v": v} for _ in range(chunks)]
            return vectors, metas, [f"s-{v}-{i}" for i in range(chunks)]

        await idx.load([Item(rid, vec, meta) for vec, meta, rid in zip(*version(0), strict=True)])
        seen: list[set[int]] = []
        done = asyncio.Event()

        async def read() -> None:
            while not done.is_set():
                hits = await idx.store.query(
                    idx.name, query, top_k=idx.limit(4 * chunks), filter={"source": "s"}
                )
                seen.append({h.metadata["v"] for h in hits} if len(hits) == chunks else {-1 - len(hits)})
                await asyncio.sleep(0)

        async def write() -> None:
            try:
                for v in range(1, 9):
                    await idx.store.upsert(idx.name, *version(v), delete_filter={"source": "s"})
                    await asyncio.sleep(0)
            finally:
                done.set()

        await asyncio.gather(write(), read(), read())
        assert seen, "the readers ran"
        assert all(len(versions) == 1 and min(versions) >= 0 for versions in seen), (
            f"a reader saw a partial replacement: {[v for v in seen if len(v) != 1 or min(v) < 0][:5]}"
        )
        final = await idx.store.query(idx.name, query, top_k=idx.limit(4 * chunks), filter={"source": "s"})
        assert sorted(h.id for h in final) == sorted(version(8)[2])

    async def test_ids_are_returned_verbatim(self, idx: IndexUnderTest) -> None:
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
        items = [Item(rid, make_vector(i + 1, idx.dimension), {"n": i}) for i, rid in enumerate(ids)]
        await idx.load(items)
        stored = await _everything(idx, len(ids))
        assert set(stored) == set(ids)
        assert all(stored[rid].metadata == {"n": i} for i, rid in enumerate(ids))
        await idx.store.delete_vector(idx.name, ids[4])
        await idx.store.delete_vectors(idx.name, ids=[ids[7]])
        await idx.settle()
        remaining = await _everything(idx, len(ids))
        assert set(remaining) == set(ids) - {ids[4], ids[7]}
