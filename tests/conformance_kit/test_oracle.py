"""The oracle helpers: reference matches, the exact-set assertion and its message, expected outcomes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mastra_memory.capabilities import AdapterCapabilities, Deviation
from mastra_memory.errors import FilterError, UnsupportedFilterError
from mastra_memory.stores.sqlite.capabilities import SQLITE_CAPABILITIES
from mastra_memory.stores.sqlite.store import SQLiteVector
from mastra_memory.stores.sqlite.translate import SQLiteFilterTranslator
from mastra_memory.vector import QueryResult
from mastra_memory_conformance.datasets import products, query_vector
from mastra_memory_conformance.oracle import (
    assert_same_ids,
    assert_unsupported,
    expected_outcome,
    oracle_ids,
    unsupported_operators,
)
from mastra_memory_conformance.suite.expectations import expect

NO_REGEX = SQLITE_CAPABILITIES.model_copy(
    update={"name": "sqlite", "native_operators": SQLITE_CAPABILITIES.native_operators - {"$regex"}}
)


class NoRegexTranslator(SQLiteFilterTranslator):
    capabilities = NO_REGEX


class NoRegexSQLiteVector(SQLiteVector):
    """The real SQLite store with a manifest that declares no ``$regex``."""

    capabilities = NO_REGEX
    translator = NoRegexTranslator


@pytest.fixture
async def loaded(tmp_path: Path) -> AsyncIterator[tuple[SQLiteVector, SQLiteVector]]:
    url = str(tmp_path / "oracle.db")
    full, restricted = SQLiteVector(url=url), NoRegexSQLiteVector(url=url)
    records = products("D9")
    await full.create_index("products", 8)
    await full.upsert(
        "products", [r.vector(8) for r in records], [r.metadata for r in records], [r.id for r in records]
    )
    yield full, restricted
    await full.close()
    await restricted.close()


def test_oracle_ids_takes_records_pairs_and_mappings() -> None:
    flt = {"available": {"$ne": True}}
    assert oracle_ids(products("D9"), flt) == {"C", "G", "I"}
    pairs = [(r.id, r.metadata) for r in products("D9")]
    assert oracle_ids(pairs, flt) == {"C", "G", "I"}
    mappings = [{"id": r.id, "metadata": r.metadata} for r in products("D8")]
    assert oracle_ids(mappings, flt) == {"C", "G"}
    with pytest.raises(FilterError):
        oracle_ids(pairs, {"$nor": []})


def test_assert_same_ids_passes_on_the_exact_set_in_any_order() -> None:
    hits = [QueryResult(id=i, score=1.0) for i in ("G", "C", "I")]
    assert_same_ids(hits, {"C", "G", "I"}, filter={"available": {"$ne": True}})
    assert_same_ids(["I", "C", "G"], ["C", "G", "I"], filter={"available": {"$ne": True}})


def test_assert_same_ids_shows_filter_expected_returned_and_the_difference() -> None:
    with pytest.raises(AssertionError) as raised:
        assert_same_ids(
            ["C", "G", "A"], {"C", "G", "I"}, filter={"available": {"$ne": True}}, target="mystore", note="D9"
        )
    assert str(raised.value).splitlines() == [
        "filter returned the wrong records on target mystore (D9)",
        "  filter:   {'available': {'$ne': True}}",
        "  expected: ['C', 'G', 'I'] (3)",
        "  returned: ['A', 'C', 'G'] (3)",
        "  missing:  ['I']",
        "  extra:    ['A']",
    ]


def test_assert_same_ids_rejects_duplicates() -> None:
    with pytest.raises(AssertionError, match=r"returned more than once: \['C'\]"):
        assert_same_ids(["C", "C", "G"], {"C", "G"}, filter={"price": {"$gt": 40}})


def test_expected_outcome_follows_the_manifest() -> None:
    manifest = AdapterCapabilities(name="tiny", native_operators={"$eq", "$and"}, emulated_operators={"$in"})
    assert expected_outcome(manifest, {"category": "home", "price": [10, 25]}) == "supported"
    assert expected_outcome(manifest, {"price": {"$gt": 10}}) == "unsupported"
    assert unsupported_operators(manifest, {"$or": [{"a": 1}, {"b": {"$ne": 2}}]}) == {"$or", "$ne"}
    assert expected_outcome(manifest, {"a": 1}, requires=["implicit_array_traversal"]) == "unsupported"
    with pytest.raises(FilterError):
        expected_outcome(manifest, {"price": {"$gt": None}})


async def test_assert_unsupported_accepts_a_correct_rejection(
    loaded: tuple[SQLiteVector, SQLiteVector],
) -> None:
    _, restricted = loaded
    flt = {"name": {"$regex": "^Product"}}
    error = await assert_unsupported(
        lambda: restricted.query("products", query_vector(8), top_k=10, filter=flt),
        filter=flt,
        capabilities=restricted.capabilities,
    )
    assert isinstance(error, UnsupportedFilterError)
    assert error.operator == "$regex"


async def test_assert_unsupported_fails_a_store_that_accepts_the_filter(
    loaded: tuple[SQLiteVector, SQLiteVector],
) -> None:
    full, _ = loaded
    flt = {"name": {"$regex": "^Product [AB]"}}
    with pytest.raises(AssertionError) as raised:
        await assert_unsupported(
            lambda: full.query("products", query_vector(8), top_k=10, filter=flt),
            filter=flt,
            capabilities=NO_REGEX,
            target="sqlite",
        )
    message = str(raised.value)
    assert "accepted {'name': {'$regex': '^Product [AB]'}}" in message
    assert "['$regex']" in message
    assert "instead of raising UnsupportedFilterError" in message


EXISTS_EMPTY_LIST = SQLITE_CAPABILITIES.model_copy(
    update={
        "deviations": (
            Deviation(
                code="exists-empty-list",
                description="$exists treats an empty list as absent",
                reason="a manifest for the oracle's test",
            ),
        )
    }
)


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        # One reached `b` is null (there), one is [] (absent): the path exists (found by the random
        # filters with seed 150411171299440 on the dictstore example, whose test is per value).
        ({"a.b": {"$exists": False}}, {"none", "empty"}),
        ({"a.b": {"$exists": True}}, {"mixed"}),
        ({"a": {"$exists": True}}, {"none", "mixed"}),
        ({"a": {"$size": 0}}, {"empty"}),
        ({"$not": {"a.b": {"$exists": True}}}, {"none", "empty"}),
    ],
)
def test_exists_empty_list_is_decided_per_reached_value(flt: dict[str, object], expected: set[str]) -> None:
    records = {"none": {"a": None}, "mixed": {"a": [{"b": None}, {"b": []}]}, "empty": {"a": []}}
    expectation = expect(EXISTS_EMPTY_LIST, flt, records)
    assert expectation.ids == frozenset(expected)
