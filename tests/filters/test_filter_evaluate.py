"""The reference evaluator: the §2.3 examples, the §8.2 dataset, and the traps of §2.4 and §7."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta, timezone
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mastra_memory.errors import FilterError
from mastra_memory.filters import (
    ALL_OPERATORS,
    Comparison,
    ElemMatch,
    evaluate,
    matches,
    operators_used,
    parse,
)
from mastra_memory_conformance.datasets import (
    FILTER_CASES,
    MEMORY_CASES,
    MEMORY_RECORDS,
    NOT_VERSUS_NOR,
    OPERATOR_EXAMPLES,
    ExampleCase,
    FilterCase,
    MemoryCase,
    products,
    sample_metadata,
)


def ids(flt: Any, records: dict[str, Any]) -> set[str]:
    node = parse(flt)
    return {rid for rid, meta in records.items() if matches(node, meta)}


# --- the spec's tables -----------------------------------------------------------------------------


@pytest.mark.parametrize("example", OPERATOR_EXAMPLES, ids=lambda e: repr(e.filter))
def test_operator_examples(example: ExampleCase) -> None:
    assert ids(example.filter, sample_metadata()) == example.expected


def test_operator_examples_cover_every_operator() -> None:
    used = set().union(*(operators_used(parse(e.filter)) for e in OPERATOR_EXAMPLES))
    assert used == ALL_OPERATORS


@pytest.mark.parametrize("dataset", ["D8", "D9"])
@pytest.mark.parametrize("case", FILTER_CASES, ids=lambda c: f"#{c.label}")
def test_dataset_cases(case: FilterCase, dataset: Any) -> None:
    records = {r.id: r.metadata for r in products(dataset)}
    if case.raises_filter_error:
        with pytest.raises(FilterError):
            ids(case.filter, records)
    else:
        assert ids(case.filter, records) == case.expected(dataset)


@pytest.mark.parametrize("case", MEMORY_CASES, ids=lambda c: c.name)
def test_memory_compatibility_block(case: MemoryCase) -> None:
    records = {r.id: r.metadata for r in MEMORY_RECORDS}
    assert ids(case.filter, records) == case.expected


def test_not_and_nor_differ() -> None:
    """$not negates the conjunction, $nor the disjunction (§2.3; §8.2 #37/#38)."""
    d9 = {r.id: r.metadata for r in products("D9")}
    not_case, nor_case = NOT_VERSUS_NOR
    assert ids(not_case.filter, d9) == {"C", "D", "E", "G", "H", "I"}
    assert ids(nor_case.filter, d9) == {"C", "G", "I"}
    samples = sample_metadata()
    assert ids({"$not": {"n": 5, "s": "Banana"}}, samples) == {"r1", "r2", "r3", "r4", "r5"}
    assert ids({"$nor": [{"n": 5}, {"s": "Banana"}]}, samples) == {"r3", "r4", "r5"}


# --- bool is not a number ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flt", "metadata", "expected"),
    [
        ({"f": 1}, {"f": True}, False),
        ({"f": True}, {"f": 1}, False),
        ({"f": 0}, {"f": False}, False),
        ({"f": False}, {"f": 0}, False),
        ({"f": 1.0}, {"f": True}, False),
        ({"f": {"$in": [1, 0]}}, {"f": True}, False),
        ({"f": {"$in": [True]}}, {"f": 1}, False),
        ({"f": {"$gt": 0}}, {"f": True}, False),
        ({"f": {"$lte": 1}}, {"f": False}, False),
        ({"f": {"$ne": 1}}, {"f": True}, True),
        ({"f": {"$nin": [True]}}, {"f": 1}, True),
        ({"f": 1}, {"f": [True]}, False),
        ({"f": {"$all": [1]}}, {"f": [True]}, False),
        ({"f": {"$contains": 1}}, {"f": [True]}, False),
        ({"f": {"$contains": True}}, {"f": [1]}, False),
        ({"f": {"$elemMatch": {"$eq": 1}}}, {"f": [True]}, False),
        ({"f.g": 1}, {"f": [{"g": True}]}, False),
        ({"f": True}, {"f": True}, True),
        ({"f": 1}, {"f": 1.0}, True),
        ({"f": 1.0}, {"f": 1}, True),
        ({"f": {"$in": [10.0]}}, {"f": 10}, True),
    ],
)
def test_bool_is_its_own_type(flt: dict[str, Any], metadata: dict[str, Any], expected: bool) -> None:
    assert evaluate(flt, metadata) is expected


# --- null versus missing -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flt", "metadata", "expected"),
    [
        ({"f": None}, {"f": None}, True),
        ({"f": None}, {}, True),
        ({"f": {"$eq": None}}, {}, True),
        ({"f": None}, {"f": [None, 1]}, True),
        ({"f": None}, {"f": []}, False),
        ({"f": None}, {"f": 0}, False),
        ({"f": None}, {"f": ""}, False),
        ({"f": None}, {"f": False}, False),
        ({"f": None}, {"f": {}}, False),
        ({"f": {"$ne": None}}, {"f": None}, False),
        ({"f": {"$ne": None}}, {}, False),
        ({"f": {"$ne": None}}, {"f": 0}, True),
        ({"f": {"$ne": None}}, {"f": []}, True),
        ({"f": {"$ne": 5}}, {}, True),
        ({"f": {"$ne": 5}}, {"f": None}, True),
        ({"f": {"$nin": [5]}}, {}, True),
        ({"f": {"$nin": [5, None]}}, {}, False),
        ({"f": {"$nin": [5, None]}}, {"f": None}, False),
        ({"f": {"$in": [None]}}, {}, True),
        ({"f": {"$all": [None]}}, {}, True),
        ({"f": {"$exists": True}}, {"f": None}, True),
        ({"f": {"$exists": True}}, {"f": []}, True),
        ({"f": {"$exists": True}}, {}, False),
        ({"f": {"$exists": False}}, {}, True),
        ({"f": {"$exists": False}}, {"f": None}, False),
        ({"f": {"$gt": 0}}, {"f": None}, False),
        ({"f": {"$lt": "z"}}, {}, False),
        ({"f": {"$not": {"$gt": 5}}}, {}, True),
        ({"f": {"$not": {"$gt": 5}}}, {"f": None}, True),
        ({"f": {"$not": {"$gt": 5}}}, {"f": "9"}, True),
        ({"f": {"$not": {"$gt": 5}}}, {"f": 9}, False),
    ],
)
def test_null_and_missing(flt: dict[str, Any], metadata: dict[str, Any], expected: bool) -> None:
    assert evaluate(flt, metadata) is expected


# --- types and ordering ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flt", "metadata", "expected"),
    [
        ({"n": {"$gt": 5}}, {"n": "7"}, False),
        ({"n": {"$gt": "5"}}, {"n": 7}, False),
        ({"n": "7"}, {"n": 7}, False),
        ({"n": {"$gte": 1, "$lt": 2}}, {"n": 1.5}, True),
        ({"s": {"$lt": "a"}}, {"s": "B"}, True),  # code point order: "B" < "a"
        ({"s": {"$lt": "a"}}, {"s": "b"}, False),
        ({"s": {"$gt": "z"}}, {"s": "é"}, True),
        ({"s": {"$gte": ""}}, {"s": ""}, True),
        ({"n": {"$gt": 5}}, {"n": {"a": 9}}, False),
        ({"n": {"$gt": 5}}, {"n": True}, False),
        ({"n": 5}, {"n": {"v": 5}}, False),
        ({"n": 10**20}, {"n": 10**20}, True),
        ({"n": {"$gt": 2**53}}, {"n": 2**53 + 1}, True),
    ],
)
def test_type_families(flt: dict[str, Any], metadata: dict[str, Any], expected: bool) -> None:
    assert evaluate(flt, metadata) is expected


def test_datetimes_compare_as_canonical_timestamps() -> None:
    start = datetime(2024, 1, 1, tzinfo=UTC)
    flt = {"t": {"$gte": start, "$lt": start + timedelta(days=1)}}
    assert evaluate(flt, {"t": "2024-01-01T12:00:00.000Z"})
    assert not evaluate(flt, {"t": "2024-01-02T00:00:00.000Z"})
    # metadata datetimes are read as their canonical text too, whatever their zone
    assert evaluate(flt, {"t": datetime(2024, 1, 1, 23, 0, tzinfo=timezone(timedelta(hours=-1)))}) is False
    assert evaluate(flt, {"t": datetime(2024, 1, 1, 23, 0, tzinfo=timezone(timedelta(hours=1)))}) is True
    assert evaluate({"t": start}, {"t": [start]})
    assert evaluate({"t": {"$regex": "^2024-01"}}, {"t": start})
    assert not evaluate({"t": {"$gt": 5}}, {"t": start})


# --- arrays ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flt", "metadata", "expected"),
    [
        ({"t": "a"}, {"t": ["a", "b"]}, True),
        ({"t": {"$gt": 5}}, {"t": [1, 10]}, True),
        ({"t": {"$gt": 5, "$lt": 8}}, {"t": [1, 10]}, True),  # each operator finds its own element
        ({"t": {"$elemMatch": {"$gt": 5, "$lt": 8}}}, {"t": [1, 10]}, False),  # one element must do both
        ({"t": {"$elemMatch": {"$gt": 5, "$lt": 8}}}, {"t": [1, 7]}, True),
        ({"t": ["x", "b"]}, {"t": ["a", "b"]}, True),
        ({"t": {"$regex": "^b"}}, {"t": ["a", "bc"]}, True),
        ({"t": {"$regex": "^b"}}, {"t": [1, ["bc"]]}, False),
        ({"t": {"$ne": "a"}}, {"t": ["a", "b"]}, False),
        ({"t": {"$nin": ["z", "b"]}}, {"t": ["a", "b"]}, False),
        ({"t": {"$nin": ["z"]}}, {"t": ["a", "b"]}, True),
        ({"t": {"$size": 2}}, {"t": ["a", "b"]}, True),
        ({"t": {"$size": 1}}, {"t": "a"}, False),
        ({"t": {"$size": 2}}, {"t": {"a": 1, "b": 2}}, False),
        ({"t": {"$size": 0}}, {}, False),
        ({"t": {"$all": ["a", "b"]}}, {"t": ["b", "c", "a"]}, True),
        ({"t": {"$all": ["a", "b"]}}, {"t": ["a"]}, False),
        ({"t": {"$all": ["a"]}}, {"t": "a"}, True),
        ({"t": {"$all": []}}, {"t": []}, False),
        ({"t": {"$all": []}}, {"t": ["a"]}, False),
        ({"t": {"$in": []}}, {"t": "a"}, False),
        ({"t": {"$in": []}}, {}, False),
        ({"t": {"$nin": []}}, {"t": "a"}, True),
        ({"t": {"$nin": []}}, {}, True),
        ({"t": 5}, {"t": [[5]]}, False),  # one level of expansion, as in MongoDB
        ({"t": {"$size": 1}}, {"t": [[5, 6]]}, True),
        ({"t": {"$exists": True}}, {"t": []}, True),
    ],
)
def test_array_rules(flt: dict[str, Any], metadata: dict[str, Any], expected: bool) -> None:
    assert evaluate(flt, metadata) is expected


@pytest.mark.parametrize(
    ("flt", "metadata", "expected"),
    [
        ({"s": {"$contains": "an"}}, {"s": "Banana"}, True),
        ({"s": {"$contains": "AN"}}, {"s": "Banana"}, False),
        ({"s": {"$contains": ""}}, {"s": ""}, True),
        ({"s": {"$contains": 5}}, {"s": "5"}, False),  # substring needs a string operand
        ({"s": {"$contains": "b"}}, {"s": ["a", "b"]}, True),
        ({"s": {"$contains": "b"}}, {"s": ["abc"]}, False),  # list: element membership, not substring
        ({"s": {"$contains": 1}}, {"s": [1.0, 2]}, True),
        ({"s": {"$contains": None}}, {"s": [None]}, True),
        ({"s": {"$contains": None}}, {"s": None}, False),
        ({"s": {"$contains": None}}, {}, False),
        ({"s": {"$contains": 5}}, {"s": 5}, False),
        ({"s": {"$contains": "a"}}, {"s": {"a": 1}}, False),
        ({"s": {"$contains": datetime(2024, 1, 1, tzinfo=UTC)}}, {"s": ["2024-01-01T00:00:00.000Z"]}, True),
        ({"s.t": {"$contains": "x"}}, {"s": [{"t": "axe"}, {"t": 1}]}, True),
    ],
)
def test_contains(flt: dict[str, Any], metadata: dict[str, Any], expected: bool) -> None:
    assert evaluate(flt, metadata) is expected


# --- $elemMatch ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flt", "metadata", "expected"),
    [
        ({"r": {"$elemMatch": {"k": 1, "v": "y"}}}, {"r": [{"k": 1, "v": "x"}, {"k": 2, "v": "y"}]}, False),
        ({"r": {"$elemMatch": {"k": 2, "v": "y"}}}, {"r": [{"k": 1, "v": "x"}, {"k": 2, "v": "y"}]}, True),
        ({"r": {"$elemMatch": {"k": None}}}, {"r": [1, 2]}, False),  # scalar elements have no fields
        ({"r": {"$elemMatch": {"k": {"$ne": 1}}}}, {"r": [1, "x"]}, False),
        ({"r": {"$elemMatch": {"k": None}}}, {"r": [1, {}]}, True),
        ({"r": {"$elemMatch": {"k": None}}}, {"r": [[]]}, True),  # MongoDB: a nested list is a document
        ({"r": {"$elemMatch": {"k": 1}}}, {"r": {"k": 1}}, False),  # not a list
        ({"r": {"$elemMatch": {"k": 1}}}, {}, False),
        ({"r": {"$elemMatch": {"$eq": None}}}, {"r": [1, None]}, True),
        ({"r": {"$elemMatch": {"$ne": None}}}, {"r": [None]}, False),
        ({"r": {"$elemMatch": {"$ne": None}}}, {"r": [[]]}, True),
        ({"r": {"$elemMatch": {"$exists": True}}}, {"r": []}, False),
        ({"r": {"$elemMatch": {"$in": ["a"]}}}, {"r": [["a"]]}, False),  # no expansion of the element
        ({"r": {"$elemMatch": {"$size": 2}}}, {"r": [[1, 2]]}, True),
        ({"r": {"$elemMatch": {"$not": {"$gt": 2}}}}, {"r": [5, 1]}, True),
        ({"r": {"$elemMatch": {"$not": {"k": 1}}}}, {"r": [{"k": 1}, {"k": 2}]}, True),
        ({"r": {"$elemMatch": {"$not": {"k": 1}}}}, {"r": [{"k": 1}]}, False),
        ({"r": {"$elemMatch": {"$or": [{"k": 5}, {"v": 5}]}}}, {"r": [{"v": 5}]}, True),
        ({"r": {"$elemMatch": {"$elemMatch": {"k": 1}}}}, {"r": [[{"k": 1}]]}, True),
        ({"r": {"$elemMatch": {"k": {"$elemMatch": {"$gt": 3}}}}}, {"r": [{"k": [1, 4]}]}, True),
        ({"r": {"$elemMatch": {"s": {"$contains": "b"}}}}, {"r": [{"s": "abc"}]}, True),
        ({"r": {"$elemMatch": {"s": {"$regex": "^a"}}}}, {"r": [{"s": "ba"}, {"s": "ab"}]}, True),
        ({"a.r": {"$elemMatch": {"k": 1}}}, {"a": [{"r": [{"k": 2}]}, {"r": [{"k": 1}]}]}, True),
    ],
)
def test_elem_match(flt: dict[str, Any], metadata: dict[str, Any], expected: bool) -> None:
    assert evaluate(flt, metadata) is expected


# --- implicit array traversal ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flt", "metadata", "expected"),
    [
        ({"items.k": 2}, {"items": [{"k": 1}, {"k": 2}]}, True),
        ({"items.k": 3}, {"items": [{"k": 1}, {"k": 2}]}, False),
        ({"items.k": {"$gt": 1}}, {"items": [{"k": 1}, {"k": [0, 5]}]}, True),
        ({"items.k": None}, {"items": [{"k": 1}, {}]}, True),  # one element lacks k
        ({"items.k": None}, {"items": [{"k": 1}]}, False),
        ({"items.k": None}, {"items": [1, 2]}, False),  # scalars are skipped, nothing is reached
        ({"items.k": None}, {"items": []}, False),
        ({"items.k": None}, {"items": 4}, True),  # the path ends early: missing
        ({"items.k": None}, {"items": None}, True),
        ({"items.k": {"$ne": None}}, {"items": [1, 2]}, True),
        ({"items.k": {"$exists": True}}, {"items": [{"j": 1}, {"k": None}]}, True),
        ({"items.k": {"$exists": False}}, {"items": [{"j": 1}, {"k": None}]}, False),
        ({"items.k": {"$exists": False}}, {"items": [{"j": 1}]}, True),
        ({"items.k": {"$size": 1}}, {"items": [{"k": "a"}, {"k": ["a"]}]}, True),
        ({"a.b.c": 1}, {"a": [{"b": [{"c": 2}, {"c": 1}]}]}, True),
        ({"a.b.c": 1}, {"a": {"b": {"c": 1}}}, True),
        ({"a.b": {"$ne": 1}}, {"a": [{"b": 2}, {"b": 1}]}, False),
        ({"reviews.score": 5}, {"reviews": [{"score": 3}, {"score": 5}]}, True),
    ],
)
def test_implicit_array_traversal(flt: dict[str, Any], metadata: dict[str, Any], expected: bool) -> None:
    assert evaluate(flt, metadata) is expected


# --- logical operators -----------------------------------------------------------------------------


def test_and_inside_an_or_element() -> None:
    records = {"x": {"a": 1, "b": 2}, "y": {"a": 1, "b": 3}, "z": {"a": 0, "b": 2}}
    assert ids({"$or": [{"a": 1, "b": 2}]}, records) == {"x"}
    assert ids({"$or": [{"a": 0}, {"a": 1, "b": 3}]}, records) == {"y", "z"}
    assert ids({"$and": [{"a": 1}, {"$nor": [{"b": 2}]}]}, records) == {"y"}
    assert ids({"$not": {"$or": [{"a": 0}, {"b": 3}]}}, records) == {"x"}


# --- the API --------------------------------------------------------------------------------------


def test_evaluate_accepts_dicts_nodes_and_none() -> None:
    node = Comparison(("n",), "$gt", 5)
    assert evaluate(node, {"n": 6})
    assert evaluate({"n": {"$gt": 5}}, {"n": 6})
    assert evaluate(MappingProxyType({"n": {"$gt": 5}}), MappingProxyType({"n": 6}))
    assert evaluate(None, {"n": 6})
    assert evaluate({}, {})
    assert matches(None, {})
    assert evaluate({"n": None}, None)
    assert not evaluate(ElemMatch(("n",), Comparison((), "$eq", 1)), {"n": 1})


def test_evaluate_validates_a_dict_filter() -> None:
    with pytest.raises(FilterError):
        evaluate({"n": {"$gt": None}}, {"n": 1})


def test_tuples_in_metadata_are_lists() -> None:
    assert evaluate({"t": "a"}, {"t": ("a", "b")})
    assert evaluate({"t": {"$size": 2}}, {"t": ("a", "b")})
    assert evaluate({"t.k": 1}, {"t": ({"k": 1},)})


def test_evaluation_leaves_filter_and_metadata_alone() -> None:
    flt = {
        "$or": [{"t": ["a"]}, {"r": {"$elemMatch": {"k": 1}}}],
        "d": {"$gte": datetime(2024, 1, 1, tzinfo=UTC)},
    }
    metadata = {"t": ["a"], "r": [{"k": 1}], "d": datetime(2024, 2, 1, tzinfo=UTC)}
    flt_before, metadata_before = copy.deepcopy(flt), copy.deepcopy(metadata)
    assert evaluate(flt, metadata)
    assert flt == flt_before
    assert metadata == metadata_before


def test_malformed_nodes_are_reported() -> None:
    with pytest.raises(TypeError):
        matches(Comparison(("n",), "$in", 5), {"n": 5})


# --- algebraic properties --------------------------------------------------------------------------

_VALUES = st.one_of(
    st.none(), st.booleans(), st.sampled_from([0, 1, 2, 1.0, 2.5, -1]), st.sampled_from(["", "a", "b", "A"])
)
_FIELD = st.one_of(_VALUES, st.lists(_VALUES, max_size=3), st.dictionaries(st.sampled_from("xy"), _VALUES))
_RECORDS = st.dictionaries(st.sampled_from(["f", "g"]), _FIELD, max_size=2)


@given(record=_RECORDS, value=_VALUES)
def test_ne_is_not_eq(record: dict[str, Any], value: Any) -> None:
    assert evaluate({"f": {"$ne": value}}, record) is not evaluate({"f": value}, record)
    assert evaluate({"f": {"$ne": value}}, record) is evaluate({"f": {"$not": {"$eq": value}}}, record)


@given(record=_RECORDS, values=st.lists(_VALUES, max_size=3))
def test_nin_is_not_in_and_in_is_an_or_of_equalities(record: dict[str, Any], values: list[Any]) -> None:
    found = evaluate({"f": {"$in": values}}, record)
    assert evaluate({"f": {"$nin": values}}, record) is not found
    assert found is any(evaluate({"f": v}, record) for v in values)
    assert evaluate({"f": {"$all": values}}, record) is (
        bool(values) and all(evaluate({"f": v}, record) for v in values)
    )


@given(record=_RECORDS)
def test_exists_false_is_not_exists_true(record: dict[str, Any]) -> None:
    assert evaluate({"f": {"$exists": False}}, record) is not evaluate({"f": {"$exists": True}}, record)
    assert evaluate({"f.x": {"$exists": False}}, record) is not evaluate({"f.x": {"$exists": True}}, record)


@given(record=_RECORDS, a=_VALUES, b=_VALUES)
def test_not_is_not_and_and_nor_is_not_or(record: dict[str, Any], a: Any, b: Any) -> None:
    conj = evaluate({"f": a, "g": b}, record)
    disj = evaluate({"$or": [{"f": a}, {"g": b}]}, record)
    assert evaluate({"$not": {"f": a, "g": b}}, record) is not conj
    assert evaluate({"$nor": [{"f": a}, {"g": b}]}, record) is not disj


@given(record=_RECORDS, value=_VALUES)
def test_nested_dict_path_evaluates_like_dotted_path(record: dict[str, Any], value: Any) -> None:
    assert evaluate({"f": {"x": value}}, record) is evaluate({"f.x": value}, record)
