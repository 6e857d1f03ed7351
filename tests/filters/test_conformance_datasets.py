"""The §8 datasets as code: vectors, products, fixed cases and sample records say what the spec says."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mastra_memory_conformance.datasets import (
    D8_IDS,
    D9_IDS,
    DEFAULT_DIMENSION,
    FILTER_CASES,
    MEMORY_CASES,
    MEMORY_DIMENSION,
    MEMORY_RECORDS,
    NOT_VERSUS_NOR,
    OPERATOR_EXAMPLES,
    PRODUCTS_D8,
    PRODUCTS_D9,
    SAMPLE_IDS,
    SAMPLE_RECORDS,
    filter_case,
    make_vector,
    products,
    query_vector,
    sample_metadata,
)


@given(seed=st.integers(0, 20), dim=st.integers(1, 64))
def test_vectors_are_unit_length_with_ten_leading_components(seed: int, dim: int) -> None:
    vector = make_vector(seed, dim)
    assert len(vector) == dim
    if seed or dim > 1:
        assert math.isclose(math.fsum(x * x for x in vector), 1.0, rel_tol=1e-12)
    assert all(x == 0.0 for x in vector[10:])


def test_vector_components_follow_the_formula() -> None:
    raw = [(3 + 0.1 * i) / 10 for i in range(4)]
    norm = math.sqrt(sum(x * x for x in raw))
    assert make_vector(3, 4) == pytest.approx([x / norm for x in raw])
    assert len(make_vector(1)) == DEFAULT_DIMENSION
    assert query_vector(8) == make_vector(0, 8)
    assert query_vector(8)[0] == 0.0


def test_vector_dimension_must_be_positive() -> None:
    with pytest.raises(ValueError, match="dim"):
        make_vector(1, 0)


def test_products_table() -> None:
    assert [p.id for p in PRODUCTS_D8] == list("ABCDEFGH")
    assert [p.id for p in PRODUCTS_D9] == list("ABCDEFGHI")
    assert [p.seed for p in PRODUCTS_D9] == list(range(1, 10))
    assert products("D8") == PRODUCTS_D8
    assert products("D9") == PRODUCTS_D9
    assert (frozenset("ABCDEFGH"), frozenset("ABCDEFGHI")) == (D8_IDS, D9_IDS)
    a = PRODUCTS_D8[0].metadata
    assert a == {
        "name": "Product A",
        "price": 10,
        "rating": 4.5,
        "category": "electronics",
        "tags": ["new", "sale"],
        "available": True,
    }
    g = PRODUCTS_D8[6].metadata
    assert g["description"] == "Classic novel"
    assert g["reviews"] == [{"score": 3, "author": "user1"}, {"score": 5, "author": "user2"}]
    h = PRODUCTS_D8[7].metadata
    assert h["rating"] == 4.95
    assert [r["score"] for r in h["reviews"]] == [5, 4, 5]
    assert PRODUCTS_D9[8].metadata == {"name": "Product I", "price": None, "category": "test", "tags": []}


def test_products_hand_out_fresh_copies() -> None:
    first = PRODUCTS_D8[6].metadata
    first["tags"].append("changed")
    first["reviews"][0]["score"] = 99
    second = PRODUCTS_D8[6].metadata
    assert second["tags"] == ["sale"]
    assert second["reviews"][0]["score"] == 3
    assert PRODUCTS_D8[0].vector(4) == make_vector(1, 4)


def test_filter_cases_cover_every_row_of_the_table() -> None:
    assert sorted({c.number for c in FILTER_CASES}) == list(range(1, 64))
    labels = [c.label for c in FILTER_CASES]
    assert len(labels) == len(set(labels)) == 65
    assert {c.label for c in FILTER_CASES if c.raises_filter_error} == {"30", "34", "47a", "47b"}
    assert filter_case("23a").filter == {"price": None}
    assert filter_case("23b").filter == {"price": {"$eq": None}}
    # Rows 48-63 cross the list `reviews` mid-path (docs/spec.md §2.4).
    assert all(filter_case(str(n)).requires == {"implicit_array_traversal"} for n in range(48, 64))
    assert [c.label for c in NOT_VERSUS_NOR] == ["37", "38"]
    with pytest.raises(KeyError):
        filter_case("64")


def test_filter_case_expectations() -> None:
    assert filter_case("8").expected("D8") == {"C", "G"}
    assert filter_case("8").expected("D9") == {"C", "G", "I"}
    assert filter_case("1").expected("D9") == {"D", "F", "H"}
    with pytest.raises(ValueError, match="must raise"):
        filter_case("34").expected("D8")
    for case in FILTER_CASES:
        if not case.raises_filter_error:
            assert case.expected("D8") <= D8_IDS
            assert case.expected("D9") <= D9_IDS
            assert case.expected("D8") == case.expected("D9") - {"I"}


def test_filter_cases_hand_out_fresh_copies() -> None:
    case = filter_case("11")
    case.filter["category"]["$in"].append("home")
    assert case.filter == {"category": {"$in": ["electronics", "books"]}}


def test_memory_block() -> None:
    assert MEMORY_DIMENSION == 4
    pairs = [(r.metadata["thread_id"], r.metadata["resource_id"]) for r in MEMORY_RECORDS]
    assert pairs == [("t1", "r1"), ("t1", "r1"), ("t2", "r2"), ("t2", "r2")]
    assert [c.expected_count for c in MEMORY_CASES] == [2, 2, 2, 0, 4, 0]
    assert MEMORY_CASES[4].filter is None
    assert len(MEMORY_RECORDS[0].vector(MEMORY_DIMENSION)) == 4


def test_sample_records_and_examples() -> None:
    assert {"r1", "r2", "r3", "r4", "r5"} == SAMPLE_IDS
    samples = sample_metadata()
    assert samples["r4"] == {"s": "date"}
    assert samples["r5"] == {"n": "7", "tags": "a", "sub": {"k": 1}}
    samples["r1"]["tags"].append("z")
    assert sample_metadata()["r1"]["tags"] == ["a", "b"]
    assert SAMPLE_RECORDS["r3"]["n"] is None
    assert len(OPERATOR_EXAMPLES) == 38
    assert all(e.expected <= SAMPLE_IDS for e in OPERATOR_EXAMPLES)
