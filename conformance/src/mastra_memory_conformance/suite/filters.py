"""Filter operators on the shared data (docs/spec.md §2.3, §8.2): exact id sets, driven by the manifest.

``FilterOperatorsSuite`` runs every §8.2 row on D8 and D9, every §2.3 example on the sample records
r1–r5, and the memory-compatibility block, plus the rules the tables only imply: NOT versus NOR, empty
logical operators, datetimes as canonical strings, AND inside an ``$or`` element, and filtering before
``top_k``. Each result is held to :func:`~mastra_memory_conformance.suite.expect`: the exact ids (absent
records must be absent), ``UnsupportedFilterError`` for undeclared operators, or a declared deviation.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import pytest

from mastra_memory.errors import FilterError
from mastra_memory.filters import evaluate

from ..datasets import (
    FILTER_CASES,
    MEMORY_CASES,
    MEMORY_DIMENSION,
    MEMORY_RECORDS,
    NOT_VERSUS_NOR,
    OPERATOR_EXAMPLES,
    QUERY_TOP_K,
    Dataset,
    ExampleCase,
    FilterCase,
    MemoryCase,
    make_vector,
    query_vector,
)
from ..plugin import set_item
from ..report import Outcome
from . import IndexUnderTest, Item, VectorSuiteBase, expect, sample_items

__all__ = ["FilterOperatorsSuite"]

_DATASETS: tuple[Dataset, ...] = ("D8", "D9")
_CASES = [
    pytest.param(case, dataset, id=f"{dataset}-{case.label}")
    for case in FILTER_CASES
    for dataset in _DATASETS
]
_EXAMPLES = [
    pytest.param(example, id=f"{i:02d}-{example.operator}") for i, example in enumerate(OPERATOR_EXAMPLES)
]
_MEMORY = [pytest.param(case, id=case.name.replace(" ", "-")) for case in MEMORY_CASES]

# Records with canonical timestamps, one written as a datetime (the store keeps its canonical text).
_WHEN = {
    "d1": datetime(2024, 1, 15, 9, 30, tzinfo=UTC),
    "d2": datetime(2024, 3, 1, 0, 0, 0, 123456, tzinfo=UTC),
    "d3": datetime(2024, 6, 30, 23, 59, 59, 999000, tzinfo=UTC),
    "d4": datetime(2025, 1, 1, tzinfo=UTC),
}
_MARCH = datetime(2024, 3, 1, tzinfo=UTC)


def _canonical(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


async def _run(
    idx: IndexUnderTest,
    outcome: Outcome,
    flt: Any,
    records: dict[str, dict[str, Any]],
    query: list[float],
    label: str = "",
) -> str:
    """One filter by a scored query, and by a metadata-only query when the manifest declares it."""
    top_k = idx.limit(max(QUERY_TOP_K, len(records)))
    result = await idx.check(outcome, flt, records, query=query, top_k=top_k, label=label)
    if idx.capabilities.metadata_only_query:
        listed = await idx.check(outcome, flt, records, query=None, top_k=top_k, label=label)
        assert listed == result, f"filter {flt!r}: scored query gave {result}, metadata-only query {listed}"
    return result


@pytest.mark.asyncio
class FilterOperatorsSuite(VectorSuiteBase):
    """Every fixed filter case of the spec, on the target's manifest."""

    @pytest.mark.parametrize(("case", "dataset"), _CASES)
    async def test_fixed_case(
        self,
        request: pytest.FixtureRequest,
        idx: IndexUnderTest,
        outcome: Outcome,
        case: FilterCase,
        dataset: Dataset,
    ) -> None:
        """§8.2: the exact ids of each row on D8 and D9 (or FilterError / UnsupportedFilterError)."""
        set_item(request, f"§8.2 #{case.label}")
        records = await idx.load_products(dataset)
        if not case.raises_filter_error:
            spec = {rid for rid, meta in records.items() if evaluate(case.filter, meta)}
            assert spec == case.expected(dataset), (
                f"the reference evaluator disagrees with §8.2 #{case.label}"
            )
        await _run(idx, outcome, case.filter, records, query_vector(idx.dimension), label=case.label)

    @pytest.mark.parametrize("example", _EXAMPLES)
    async def test_operator_example(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest, outcome: Outcome, example: ExampleCase
    ) -> None:
        """§2.3: every example of the operator table on the sample records r1–r5."""
        set_item(request, example.operator)
        items = sample_items(idx.dimension)
        records = await idx.load(items)
        spec = {rid for rid, meta in records.items() if evaluate(example.filter, meta)}
        assert spec == example.expected, f"the reference evaluator disagrees with the §2.3 example {example}"
        await _run(idx, outcome, example.filter, records, query_vector(idx.dimension))

    @pytest.mark.parametrize("case", _MEMORY)
    async def test_memory_compatibility(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest, outcome: Outcome, case: MemoryCase
    ) -> None:
        """§8.2 memory block: thread and resource filters on 4-dimensional vectors."""
        set_item(request, "memory compatibility")
        items = [Item(r.id, r.vector(MEMORY_DIMENSION), r.metadata) for r in MEMORY_RECORDS]
        records = await idx.load(items, dimension=MEMORY_DIMENSION)
        hits = await idx.store.query(
            idx.name, make_vector(0, MEMORY_DIMENSION), top_k=QUERY_TOP_K, filter=case.filter
        )
        assert len(hits) == case.expected_count, (
            f"{case.name}: {len(hits)} hits, expected {case.expected_count}"
        )
        await _run(idx, outcome, case.filter, records, make_vector(0, MEMORY_DIMENSION))

    async def test_not_versus_nor(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest, outcome: Outcome
    ) -> None:
        """§2.3/§8.2 #37–#38: ``$not`` over two conditions is NOT(AND), ``$nor`` is NOT(OR)."""
        set_item(request, "$not vs $nor")
        records = await idx.load_products()
        query = query_vector(idx.dimension)
        not_case, nor_case = NOT_VERSUS_NOR
        assert not_case.expected("D9") != nor_case.expected("D9")
        results = []
        for case in (not_case, nor_case):
            results.append(await _run(idx, outcome, case.filter, records, query, case.label))
        if results == ["match", "match"]:
            top_k = idx.limit(QUERY_TOP_K)
            got_not = {h.id for h in await idx.store.query(idx.name, query, top_k, not_case.filter)}
            got_nor = {h.id for h in await idx.store.query(idx.name, query, top_k, nor_case.filter)}
            assert got_not == set(not_case.expected("D9")), f"$not is not NOT(AND): {sorted(got_not)}"
            assert got_nor == set(nor_case.expected("D9")), f"$nor is not NOT(OR): {sorted(got_nor)}"

    @pytest.mark.parametrize("operator", ["$and", "$or", "$nor"])
    async def test_empty_logical_operator_is_a_filter_error(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest, operator: str
    ) -> None:
        """§2.6 [Δ]: ``{"$and": []}`` and friends raise FilterError on query and delete alike."""
        set_item(request, operator)
        await idx.load_products()
        query = query_vector(idx.dimension)
        phrase = f"{operator} requires a non-empty list: {operator}"
        with pytest.raises(FilterError, match=phrase.replace("$", r"\$")):
            await idx.store.query(idx.name, query, top_k=10, filter={operator: []})
        with pytest.raises(FilterError, match=phrase.replace("$", r"\$")):
            await idx.store.delete_vectors(idx.name, filter={operator: []})
        with pytest.raises(FilterError, match=phrase.replace("$", r"\$")):
            await idx.store.query(idx.name, query, top_k=10, filter={"category": "home", operator: []})
        assert (await idx.store.describe_index(idx.name)).count == 9

    async def test_dates_are_canonical_strings(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest, outcome: Outcome
    ) -> None:
        """§2.4: datetimes are written and compared as canonical timestamps (string ranges)."""
        set_item(request, "datetime operands")
        items = [
            Item(rid, make_vector(seed, idx.dimension), {"at": moment, "label": rid})
            for seed, (rid, moment) in enumerate(_WHEN.items(), start=1)
        ]
        items.append(Item("d5", make_vector(5, idx.dimension), {"at": 20240301, "label": "d5"}))
        records = await idx.load(items)
        canonical = {
            rid: {**meta, "at": _canonical(meta["at"])} if isinstance(meta["at"], datetime) else meta
            for rid, meta in records.items()
        }
        hits = await idx.store.query(idx.name, query_vector(idx.dimension), top_k=10)
        for hit in hits:
            assert hit.metadata.get("at") == canonical[hit.id]["at"], (
                f"{hit.id}: a datetime is stored as its canonical timestamp, got {hit.metadata.get('at')!r}"
            )
        query = query_vector(idx.dimension)
        pairs = [
            ({"at": {"$gte": _MARCH}}, {"at": {"$gte": "2024-03-01T00:00:00.000Z"}}),
            ({"at": {"$lt": _WHEN["d3"]}}, {"at": {"$lt": "2024-06-30T23:59:59.999Z"}}),
            (
                {"at": {"$gt": _MARCH, "$lte": _WHEN["d4"]}},
                {"at": {"$gt": "2024-03-01T00:00:00.000Z", "$lte": "2025-01-01T00:00:00.000Z"}},
            ),
            ({"at": _WHEN["d2"]}, {"at": "2024-03-01T00:00:00.123Z"}),
            (
                {"at": {"$in": [_WHEN["d1"], _WHEN["d4"]]}},
                {"at": {"$in": [_canonical(_WHEN["d1"]), _canonical(_WHEN["d4"])]}},
            ),
        ]
        for with_datetime, with_string in pairs:
            first = expect(idx.capabilities, with_datetime, canonical)
            second = expect(idx.capabilities, with_string, canonical)
            assert (first.kind, first.ids) == (second.kind, second.ids)
            for flt in (with_datetime, with_string):
                await _run(idx, outcome, flt, records, query)

    async def test_and_inside_an_or_element(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest, outcome: Outcome
    ) -> None:
        """§7: the entries of one ``$or`` element are ANDed, never ORed."""
        set_item(request, "$or")
        records = await idx.load_products()
        flts: list[tuple[dict[str, Any], set[str]]] = [
            ({"$or": [{"category": "home", "price": {"$lt": 100}}]}, {"C"}),
            (
                {
                    "$or": [
                        {"category": "electronics", "available": True},
                        {"category": "books", "price": {"$gt": 20}},
                    ]
                },
                {"A", "B", "F", "G"},
            ),
            ({"$or": [{"category": "home", "tags": "sale"}, {"price": None}]}, {"C", "I"}),
        ]
        for flt, spec in flts:
            assert {rid for rid, meta in records.items() if evaluate(flt, meta)} == spec
            await _run(idx, outcome, flt, records, query_vector(idx.dimension))

    async def test_filter_applies_before_top_k(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest
    ) -> None:
        """§7 post-filtering: a filtered query returns ``min(top_k, matching)`` of the best matching records.

        The matching records are the ones farthest from the query, so an adapter that filters the ANN
        top-k afterwards returns too few.
        """
        set_item(request, "filter before top_k")
        assert idx.dimension >= 2, "this test needs vectors of at least two dimensions"

        def at_angle(step: int) -> list[float]:
            angle = step * math.pi / 80  # scores cos(angle) fall by about 0.03 per step near the far group
            return [math.cos(angle), math.sin(angle)] + [0.0] * (idx.dimension - 2)

        query = at_angle(0)
        items = [Item(f"n{i:02d}", at_angle(i), {"group": "near" if i < 30 else "far"}) for i in range(40)]
        await idx.load(items)
        top_k = idx.limit(5)
        hits = await idx.store.query(idx.name, query, top_k=top_k, filter={"group": "far"})
        assert [h.id for h in hits] == [f"n{i:02d}" for i in range(30, 30 + top_k)], (
            f"filter {{'group': 'far'}}, top_k {top_k}: got {[h.id for h in hits]}; the ten 'far' records "
            f"rank below thirty 'near' ones, so filtering after the top-k returns too few"
        )
        every = await idx.store.query(idx.name, query, top_k=idx.limit(20), filter={"group": "far"})
        assert [h.id for h in every] == [f"n{i:02d}" for i in range(30, 40)][: len(every)]
        assert len(every) == min(10, idx.limit(20))
