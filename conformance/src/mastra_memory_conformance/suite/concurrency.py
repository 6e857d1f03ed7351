"""Concurrency and a large batch (issue 4, docs/spec.md §3.1, §3.8).

``ConcurrencySuite``: many asyncio tasks upserting and querying one store at once get consistent results
— every record written is found with its own metadata and vector, no torn or foreign record appears, and
concurrent writes to one id leave exactly one of the written versions. A batch of 10,000 vectors goes
in through one ``upsert`` call (the adapter splits it into backend-sized batches), ``describe_index``
counts it exactly, and filtered queries over it equal brute force.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

import numpy as np
import pytest

from mastra_memory.filters import evaluate
from mastra_memory.scores import exact_scores

from ..datasets import FILTER_CASES, make_vector, query_vector
from ..plugin import set_item
from . import IndexUnderTest, VectorSuiteBase, expect, float32_close

__all__ = ["ConcurrencySuite"]

TASKS: Final = 16
PER_TASK: Final = 20
LARGE_BATCH: Final = 10_000
NEEDLES: Final = (17, 4242, 9999)


@pytest.mark.asyncio
class ConcurrencySuite(VectorSuiteBase):
    """Parallel writers and readers on one store, and one very large upsert."""

    async def test_parallel_upserts(self, idx: IndexUnderTest) -> None:
        await idx.store.create_index(idx.name, idx.dimension)
        per_task = idx.limit(PER_TASK)

        async def writer(task: int) -> list[str]:
            ids = [f"t{task:02d}-{i:02d}" for i in range(per_task)]
            vectors = [make_vector(task * per_task + i + 1, idx.dimension) for i in range(per_task)]
            metadata = [{"task": task, "i": i} for i in range(per_task)]
            return await idx.store.upsert(idx.name, vectors, metadata, ids)

        returned = await asyncio.gather(*(writer(t) for t in range(TASKS)))
        assert [len(ids) for ids in returned] == [per_task] * TASKS
        await idx.settle()
        assert (await idx.store.describe_index(idx.name)).count == TASKS * per_task

        async def reader(task: int) -> None:
            hits = await idx.store.query(
                idx.name, query_vector(idx.dimension), top_k=per_task, filter={"task": task}
            )
            assert sorted(h.id for h in hits) == [f"t{task:02d}-{i:02d}" for i in range(per_task)]
            assert all(h.metadata == {"task": task, "i": int(h.id[-2:])} for h in hits)

        await asyncio.gather(*(reader(t) for t in range(TASKS)))

    async def test_parallel_queries_match_the_oracle(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest
    ) -> None:
        """Every supported §8.2 case on D9, all at once, each returning exactly its ids."""
        set_item(request, "parallel queries")
        records = await idx.load_products()
        cases = [
            c.filter for c in FILTER_CASES if expect(idx.capabilities, c.filter, records).kind == "match"
        ]
        assert cases, "no §8.2 case is supported; nothing to run in parallel"
        query = query_vector(idx.dimension)
        top_k = idx.limit(10)
        results = await asyncio.gather(
            *(idx.check(None, flt, records, query=query, top_k=top_k) for flt in cases * 3)
        )
        assert len(results) == 3 * len(cases)

    async def test_queries_during_upserts(self, idx: IndexUnderTest) -> None:
        """Readers running while writers write never see a torn record, a foreign record or a duplicate."""
        await idx.store.create_index(idx.name, idx.dimension)
        written: dict[str, dict[str, Any]] = {}
        vectors: dict[str, list[float]] = {}
        flt = {"kind": "even"}
        top_k = idx.limit(50)

        async def writer(task: int) -> None:
            for batch in range(4):
                ids = [f"w{task}-{batch}-{i}" for i in range(5)]
                metas = [
                    {"kind": "even" if i % 2 == 0 else "odd", "task": task, "batch": batch} for i in range(5)
                ]
                vecs = [make_vector(task * 100 + batch * 10 + i + 1, idx.dimension) for i in range(5)]
                for rid, meta, vec in zip(ids, metas, vecs, strict=True):
                    written[rid] = meta
                    vectors[rid] = vec
                await idx.store.upsert(idx.name, vecs, metas, ids)

        async def reader() -> int:
            seen = 0
            for _ in range(10):
                hits = await idx.store.query(
                    idx.name,
                    query_vector(idx.dimension),
                    top_k=top_k,
                    filter=flt,
                    include_vector=True,
                )
                ids = [h.id for h in hits]
                assert len(ids) == len(set(ids)), f"duplicate ids while writing: {ids}"
                for hit in hits:
                    assert hit.id in written, f"{hit.id} was never written"
                    assert hit.metadata == written[hit.id], f"{hit.id}: torn metadata {hit.metadata}"
                    assert evaluate(flt, hit.metadata), f"{hit.id} does not match {flt}"
                    assert float32_close(hit.vector, vectors[hit.id]), (
                        f"{hit.id}: the vector is not the one written"
                    )
                seen += len(hits)
                await asyncio.sleep(0)
            return seen

        outcomes = await asyncio.gather(*(writer(t) for t in range(4)), *(reader() for _ in range(4)))
        assert all(isinstance(n, int) and n >= 0 for n in outcomes[4:])
        await idx.settle()
        assert (await idx.store.describe_index(idx.name)).count == 4 * 4 * 5
        even = {rid for rid, meta in written.items() if meta["kind"] == "even"}
        final = await idx.store.query(idx.name, query_vector(idx.dimension), top_k=top_k, filter=flt)
        assert {h.id for h in final} == even

    async def test_concurrent_writes_to_one_id(self, idx: IndexUnderTest) -> None:
        """Ten tasks replace the same id: one record remains, and it is one of the versions, whole."""
        await idx.store.create_index(idx.name, idx.dimension)
        versions = range(1, 11)
        await asyncio.gather(
            *(
                idx.store.upsert(idx.name, [make_vector(v, idx.dimension)], [{"version": v}], ["same"])
                for v in versions
            )
        )
        await idx.settle()
        assert (await idx.store.describe_index(idx.name)).count == 1
        hits = await idx.store.query(idx.name, query_vector(idx.dimension), top_k=5, include_vector=True)
        assert [h.id for h in hits] == ["same"]
        version = hits[0].metadata.get("version")
        assert version in versions, f"metadata is not one of the written versions: {hits[0].metadata}"
        assert isinstance(version, int)
        assert float32_close(hits[0].vector, make_vector(version, idx.dimension)), (
            "vector and metadata disagree"
        )

    async def test_large_batch(self, request: pytest.FixtureRequest, idx: IndexUnderTest) -> None:
        """10,000 vectors in one upsert call: exact count, and filtered queries equal brute force."""
        set_item(request, "10,000 vectors")
        rng = np.random.default_rng(10_000)
        matrix = rng.normal(size=(LARGE_BATCH, idx.dimension))
        ids = [f"big-{i:05d}" for i in range(LARGE_BATCH)]
        metadata = [{"bucket": i % 100, "needle": i in NEEDLES} for i in range(LARGE_BATCH)]
        await idx.store.create_index(idx.name, idx.dimension)
        returned = await idx.store.upsert(idx.name, matrix.tolist(), metadata, ids)
        assert returned == ids
        await idx.settle()
        assert (await idx.store.describe_index(idx.name)).count == LARGE_BATCH

        query = rng.normal(size=idx.dimension)
        # float32 is what most backends keep; ranks are decided on those values.
        scores = exact_scores(matrix.astype(np.float32), query, "cosine")
        top_k = idx.limit(10)

        def brute_force(rows: np.ndarray[Any, Any]) -> list[str]:
            order = sorted(rows.tolist(), key=lambda r: (-scores[r], ids[r]))
            return [ids[r] for r in order[:top_k]]

        for flt, rows in (
            (None, np.arange(LARGE_BATCH)),
            ({"bucket": 7}, np.arange(7, LARGE_BATCH, 100)),
            (
                {"bucket": {"$in": [3, 99]}, "needle": False},
                np.concatenate([np.arange(3, LARGE_BATCH, 100), np.arange(99, LARGE_BATCH, 100)]),
            ),
        ):
            hits = await idx.store.query(idx.name, query, top_k=top_k, filter=flt)
            expected = brute_force(rows)
            cutoff = scores[ids.index(expected[-1])]
            assert len(hits) == top_k, f"{flt}: {len(hits)} hits"
            for hit in hits:
                row = int(hit.id[4:])
                assert row in set(rows.tolist()), f"{flt}: {hit.id} does not match"
                assert scores[row] >= cutoff - 1e-4, f"{flt}: {hit.id} is not among the best {top_k}"
            assert abs(hits[0].score - scores[ids.index(expected[0])]) <= 1e-4

        needles = await idx.store.query(idx.name, query, top_k=top_k, filter={"needle": True})
        assert sorted(h.id for h in needles) == [ids[i] for i in NEEDLES]
        if idx.capabilities.metadata_only_query:
            listed = await idx.store.query(idx.name, None, top_k=top_k, filter={"needle": True})
            assert [h.id for h in listed] == [ids[i] for i in NEEDLES]
