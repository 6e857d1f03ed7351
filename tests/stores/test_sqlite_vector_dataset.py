"""The SQLite vector store on the shared data of docs/spec.md §8 and the examples of §2.3: exact id sets."""

from __future__ import annotations

from collections.abc import AsyncIterator

import numpy as np
import pytest

from mastra_memory.errors import FilterError
from mastra_memory.filters.evaluate import evaluate
from mastra_memory.stores.sqlite.store import SQLiteVector
from mastra_memory_conformance.datasets import (
    FILTER_CASES,
    MEMORY_CASES,
    MEMORY_DIMENSION,
    MEMORY_RECORDS,
    OPERATOR_EXAMPLES,
    QUERY_TOP_K,
    Dataset,
    ExampleCase,
    FilterCase,
    MemoryCase,
    products,
    query_vector,
    sample_metadata,
)

DIMENSION = 8
PRODUCTS = "products"


@pytest.fixture(params=["D8", "D9"])
async def dataset(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Dataset, SQLiteVector]]:
    name: Dataset = request.param
    store = SQLiteVector(":memory:")
    records = products(name)
    await store.create_index(PRODUCTS, DIMENSION)
    await store.upsert(
        PRODUCTS,
        [r.vector(DIMENSION) for r in records],
        [r.metadata for r in records],
        [r.id for r in records],
    )
    try:
        yield name, store
    finally:
        await store.close()


@pytest.mark.parametrize("case", FILTER_CASES, ids=[c.label for c in FILTER_CASES])
async def test_fixed_filter_cases(dataset: tuple[Dataset, SQLiteVector], case: FilterCase) -> None:
    name, store = dataset
    if case.raises_filter_error:
        with pytest.raises(FilterError):
            await store.query(PRODUCTS, query_vector(DIMENSION), top_k=QUERY_TOP_K, filter=case.filter)
        return
    expected = case.expected(name)
    hits = await store.query(PRODUCTS, query_vector(DIMENSION), top_k=QUERY_TOP_K, filter=case.filter)
    assert {h.id for h in hits} == expected, f"§8.2 #{case.label} on {name}"
    listed = await store.query(PRODUCTS, None, top_k=QUERY_TOP_K, filter=case.filter)
    assert [h.id for h in listed] == sorted(expected)
    # The oracle agrees with the table, so the store and the evaluator agree with each other too.
    assert {r.id for r in products(name) if evaluate(case.filter, r.metadata)} == expected


async def test_unfiltered_query_returns_every_product_by_score(dataset: tuple[Dataset, SQLiteVector]) -> None:
    name, store = dataset
    records = products(name)
    hits = await store.query(PRODUCTS, query_vector(DIMENSION), top_k=QUERY_TOP_K, include_vector=True)
    assert {h.id for h in hits} == {r.id for r in records}
    query = np.asarray(query_vector(DIMENSION))
    for hit in hits:
        stored = np.asarray(hit.vector, dtype=np.float64)
        assert hit.score == pytest.approx(float(stored @ query / np.linalg.norm(stored)), abs=1e-4)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


async def test_not_and_nor_are_a_different_pair(dataset: tuple[Dataset, SQLiteVector]) -> None:
    name, store = dataset
    not_hits = await store.query(
        PRODUCTS, None, filter={"$not": {"category": "electronics", "available": True}}
    )
    nor_hits = await store.query(
        PRODUCTS, None, filter={"$nor": [{"category": "electronics"}, {"available": True}]}
    )
    extra = ["I"] if name == "D9" else []
    assert [h.id for h in not_hits] == ["C", "D", "E", "G", "H", *extra]
    assert [h.id for h in nor_hits] == ["C", "G", *extra]


@pytest.mark.parametrize(
    "case", OPERATOR_EXAMPLES, ids=[f"{c.operator}:{c.filter}" for c in OPERATOR_EXAMPLES]
)
async def test_operator_examples_on_the_sample_records(case: ExampleCase) -> None:
    store = SQLiteVector(":memory:")
    try:
        samples = sample_metadata()
        await store.create_index("samples", 2)
        await store.upsert("samples", [[1.0, 0.0]] * len(samples), list(samples.values()), list(samples))
        hits = await store.query("samples", [1.0, 0.0], top_k=10, filter=case.filter)
        assert {h.id for h in hits} == case.expected
    finally:
        await store.close()


@pytest.mark.parametrize("case", MEMORY_CASES, ids=[c.name for c in MEMORY_CASES])
async def test_memory_compatibility_block(case: MemoryCase) -> None:
    store = SQLiteVector(":memory:")
    try:
        await store.create_index(
            "memory_messages_4", MEMORY_DIMENSION, metadata_indexes=["thread_id", "resource_id"]
        )
        await store.upsert(
            "memory_messages_4",
            [r.vector(MEMORY_DIMENSION) for r in MEMORY_RECORDS],
            [r.metadata for r in MEMORY_RECORDS],
            [r.id for r in MEMORY_RECORDS],
        )
        hits = await store.query(
            "memory_messages_4", query_vector(MEMORY_DIMENSION), top_k=10, filter=case.filter
        )
        assert {h.id for h in hits} == case.expected
    finally:
        await store.close()
