"""parse() and validate_filter(): the normal form of docs/spec.md §2.1/§2.4 and every error phrase of §2.6."""

from __future__ import annotations

import copy
import math
from datetime import UTC, datetime, timedelta, timezone
from enum import IntEnum, StrEnum
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mastra_memory.errors import FilterError, ValidationError
from mastra_memory.filters import (
    And,
    Comparison,
    ElemMatch,
    Nor,
    Not,
    Or,
    Regex,
    operators_used,
    parse,
    validate_filter,
)


def problems_of(flt: Any) -> list[str]:
    with pytest.raises(FilterError) as info:
        parse(flt)
    assert str(info.value) == ", ".join(info.value.problems)
    return info.value.problems


# --- match everything ------------------------------------------------------------------------------


@pytest.mark.parametrize("flt", [None, {}, MappingProxyType({})])
def test_none_and_empty_filter_match_everything(flt: Any) -> None:
    assert parse(flt) is None
    validate_filter(flt)


@pytest.mark.parametrize("flt", [[{"a": 1}], "a", 5, ("a", 1), True])
def test_filter_must_be_a_dict(flt: Any) -> None:
    assert problems_of(flt) == ["Filter must be a dict"]


# --- normal form ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flt", "node"),
    [
        ({"n": 5}, Comparison(("n",), "$eq", 5)),
        ({"n": {"$eq": 5}}, Comparison(("n",), "$eq", 5)),
        ({"n": None}, Comparison(("n",), "$eq", None)),
        ({"tags": ["a", "z"]}, Comparison(("tags",), "$in", ("a", "z"))),
        ({"tags": ("a", "z")}, Comparison(("tags",), "$in", ("a", "z"))),
        ({"tags": {"$nin": ("a",)}}, Comparison(("tags",), "$nin", ("a",))),
        ({"tags": {"$all": []}}, Comparison(("tags",), "$all", ())),
        ({"user": {"age": {"$gt": 1}}}, Comparison(("user", "age"), "$gt", 1)),
        ({"user.age": {"$gt": 1}}, Comparison(("user", "age"), "$gt", 1)),
        ({"a": {"b.c": {"d": 1}}}, Comparison(("a", "b", "c", "d"), "$eq", 1)),
        (
            {"n": {"$gte": 5, "$lte": 10}},
            And((Comparison(("n",), "$gte", 5), Comparison(("n",), "$lte", 10))),
        ),
        (
            {"a": 1, "b": {"c": 2, "d": {"$ne": 3}}},
            And(
                (
                    Comparison(("a",), "$eq", 1),
                    Comparison(("b", "c"), "$eq", 2),
                    Comparison(("b", "d"), "$ne", 3),
                )
            ),
        ),
        ({"s": {"$regex": "^b", "$options": "si"}}, Regex(("s",), "^b", "is")),
        ({"s": {"$options": "i", "$regex": "x"}}, Regex(("s",), "x", "i")),
        ({"s": {"$regex": "x", "$options": "iii"}}, Regex(("s",), "x", "i")),
        ({"s": {"$regex": "x"}}, Regex(("s",), "x", "")),
        ({"n": {"$not": {"$gt": 5}}}, Not(Comparison(("n",), "$gt", 5))),
        (
            {"n": {"$not": {"$gt": 5, "$lt": 9}}},
            Not(And((Comparison(("n",), "$gt", 5), Comparison(("n",), "$lt", 9)))),
        ),
        (
            {"$not": {"n": 5, "s": "B"}},
            Not(And((Comparison(("n",), "$eq", 5), Comparison(("s",), "$eq", "B")))),
        ),
        ({"$or": [{"a": 1}]}, Or((Comparison(("a",), "$eq", 1),))),
        (
            {"$nor": [{"a": 1}, {"b": 2}]},
            Nor((Comparison(("a",), "$eq", 1), Comparison(("b",), "$eq", 2))),
        ),
        (
            {"$and": [{"a": 1}], "price": {"$gte": 50}},
            And((And((Comparison(("a",), "$eq", 1),)), Comparison(("price",), "$gte", 50))),
        ),
        ({"t": {"$exists": False}}, Comparison(("t",), "$exists", False)),
        ({"t": {"$size": 0}}, Comparison(("t",), "$size", 0)),
        ({"s": {"$contains": "an"}}, Comparison(("s",), "$contains", "an")),
    ],
)
def test_normal_form(flt: dict[str, Any], node: Any) -> None:
    assert parse(flt) == node


def test_elem_match_over_objects_has_relative_paths() -> None:
    node = parse({"items": {"$elemMatch": {"k": {"$gte": 2}, "v.w": "y"}}})
    assert node == ElemMatch(
        ("items",), And((Comparison(("k",), "$gte", 2), Comparison(("v", "w"), "$eq", "y")))
    )
    assert isinstance(node, ElemMatch)
    assert node.on_documents


def test_elem_match_operator_document_tests_the_element_itself() -> None:
    node = parse({"tags": {"$elemMatch": {"$gte": "b", "$lt": "d"}}})
    assert node == ElemMatch(("tags",), And((Comparison((), "$gte", "b"), Comparison((), "$lt", "d"))))
    assert isinstance(node, ElemMatch)
    assert not node.on_documents


@pytest.mark.parametrize(
    ("operand", "on_documents"),
    [
        ({"$and": [{"k": 1}]}, True),
        ({"$or": [{"k": 1}], "v": 2}, True),
        ({"$not": {"k": 1}}, True),  # a lone $not over field names negates a document
        ({"$not": {"$gt": 1}}, False),
        ({"$in": [1, 2]}, False),
        ({"$elemMatch": {"k": 1}}, False),  # the element is itself a list of objects
    ],
)
def test_elem_match_form_follows_its_keys(operand: dict[str, Any], on_documents: bool) -> None:
    node = parse({"items": {"$elemMatch": operand}})
    assert isinstance(node, ElemMatch)
    assert node.on_documents is on_documents


def test_nested_dict_and_dotted_path_are_the_same_filter() -> None:
    assert parse({"user": {"age": {"$gt": 1}, "name": "x"}}) == parse(
        {"user.age": {"$gt": 1}, "user.name": "x"}
    )


def test_implicit_and_keeps_dict_order() -> None:
    first = parse({"b": 1, "a": 2})
    second = parse({"a": 2, "b": 1})
    assert first == And((Comparison(("b",), "$eq", 1), Comparison(("a",), "$eq", 2)))
    assert second == And((Comparison(("a",), "$eq", 2), Comparison(("b",), "$eq", 1)))


def test_parse_is_deterministic_and_does_not_touch_its_input() -> None:
    flt = {"$or": [{"a": [1, 2]}, {"b": {"c": {"$in": [3]}}}], "d": {"$elemMatch": {"e": 1}}}
    before = copy.deepcopy(flt)
    assert parse(flt) == parse(copy.deepcopy(flt))
    assert flt == before


def test_any_mapping_is_a_document() -> None:
    assert parse(MappingProxyType({"a": MappingProxyType({"$gt": 1})})) == Comparison(("a",), "$gt", 1)


# --- operand normalisation -------------------------------------------------------------------------


def test_aware_datetime_becomes_its_canonical_timestamp() -> None:
    paris = timezone(timedelta(hours=2))
    when = datetime(2024, 3, 5, 16, 7, 0, 123456, tzinfo=paris)
    assert parse({"t": {"$gte": when}}) == Comparison(("t",), "$gte", "2024-03-05T14:07:00.123Z")
    assert parse({"t": when}) == Comparison(("t",), "$eq", "2024-03-05T14:07:00.123Z")
    assert parse({"t": [when]}) == Comparison(("t",), "$in", ("2024-03-05T14:07:00.123Z",))


def test_naive_datetime_is_a_filter_error() -> None:
    problems = problems_of({"t": {"$gte": datetime(2024, 1, 1)}, "u": [datetime(2024, 1, 1)]})
    assert len(problems) == 2
    assert problems[0].startswith("Naive datetime is not allowed: t")
    assert problems[1].startswith("Naive datetime is not allowed: u")


def test_negative_zero_becomes_zero() -> None:
    node = parse({"x": -0.0})
    assert isinstance(node, Comparison)
    assert node.value == 0
    assert isinstance(node.value, float)
    assert math.copysign(1.0, node.value) == 1.0
    assert parse({"x": {"$in": [-0.0]}}) == Comparison(("x",), "$in", (0.0,))


def test_numbers_and_bools_keep_their_types() -> None:
    nodes = [parse({"x": v}) for v in (1, 1.0, True)]
    values = [n.value for n in nodes if isinstance(n, Comparison)]
    assert [type(v) for v in values] == [int, float, bool]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("shape", ["eq", "in", "gt", "all", "nested"])
def test_nan_and_infinity_are_rejected(bad: float, shape: str) -> None:
    flt = {
        "eq": {"x": bad},
        "in": {"x": {"$in": [1, bad]}},
        "gt": {"x": {"$gt": bad}},
        "all": {"x": {"$all": [bad]}},
        "nested": {"x": {"y": {"$ne": bad}}},
    }[shape]
    where = "x.y" if shape == "nested" else "x"
    assert problems_of(flt) == [f"Invalid number: {where}"]


# --- the §2.6 error phrases ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flt", "problems"),
    [
        ({"$foo": 1}, ["Unsupported operator: $foo"]),
        ({"a": {"$foo": 1}}, ["Unsupported operator: $foo"]),
        ({"a": {"$where": "x"}}, ["Unsupported operator: $where"]),
        ({"a.$b": 1}, ["Unsupported operator: $b"]),
        ({"$gt": 1}, ["Invalid top-level operator: $gt"]),
        ({"$elemMatch": {"a": 1}}, ["Invalid top-level operator: $elemMatch"]),
        ({"a": {"$and": [{"b": 1}]}}, ["Logical operator $and cannot be used at field level: a"]),
        ({"a": {"b": {"$or": [{"c": 1}]}}}, ["Logical operator $or cannot be used at field level: a.b"]),
        ({"a": {"$nor": [{"b": 1}]}}, ["Logical operator $nor cannot be used at field level: a"]),
        (
            {"$and": [{"$gt": 1}]},
            ["Logical operators must contain field conditions, not direct operators: $and.0"],
        ),
        (
            {"$or": [{"a": 1}, {"$in": [1], "$size": 2}]},
            ["Logical operators must contain field conditions, not direct operators: $or.1"],
        ),
        (
            {"$not": {"$gt": 1}},
            ["Logical operators must contain field conditions, not direct operators: $not"],
        ),
        ({"$not": 5}, ["$not operator requires an object: $not"]),
        ({"$not": [{"a": 1}]}, ["$not operator requires an object: $not"]),
        ({"$not": {}}, ["$not operator cannot be empty: $not"]),
        ({"a": {"$not": 5}}, ["$not operator requires an object: a"]),
        ({"a": {"$not": {}}}, ["$not operator cannot be empty: a"]),
        ({"a": {"$not": {"b": 1}}}, ["$not operator requires an object of operators at field level: a"]),
        ({"a": {"$not": {"$gt": 1, "b": 1}}}, ["Cannot mix operators and field names: a.$not"]),
        ({"a": {"$elemMatch": 5}}, ["$elemMatch requires an object with conditions: a"]),
        ({"a": {"$elemMatch": [{"k": 1}]}}, ["$elemMatch requires an object with conditions: a"]),
        ({"a": {"$elemMatch": {}}}, ["$elemMatch requires an object with conditions: a"]),
        ({"$and": []}, ["$and requires a non-empty list: $and"]),
        ({"$or": {"a": 1}}, ["$or requires a non-empty list: $or"]),
        ({"$nor": []}, ["$nor requires a non-empty list: $nor"]),
        ({"$nor": "a"}, ["$nor requires a non-empty list: $nor"]),
        ({"$and": [1]}, ["$and elements must be documents: $and.0"]),
        ({"$and": [{}]}, ["Empty object is not a valid condition: $and.0"]),
        ({"a": {"$in": 5}}, ["$in requires a list: a"]),
        ({"a": {"$nin": "ab"}}, ["$nin requires a list: a"]),
        ({"a": {"$all": {"b": 1}}}, ["$all requires a list: a"]),
        ({"a": {"$eq": [1]}}, ["$eq requires a scalar operand: a"]),
        ({"a": {"$ne": {"b": 1}}}, ["$ne requires a scalar operand: a"]),
        ({"a": {"$contains": ["x"]}}, ["$contains requires a scalar operand: a"]),
        ({"a": {"$in": [1, [2]]}}, ["$in requires a scalar operand: a"]),
        ({"a": {"$all": [{"b": 1}]}}, ["$all requires a scalar operand: a"]),
        ({"a": {1, 2}}, ["$eq requires a scalar operand: a"]),
        ({"a": b"bytes"}, ["$eq requires a scalar operand: a"]),
        ({"a": {"$gt": None}}, ["$gt requires a number, string or datetime: a"]),
        ({"a": {"$gte": True}}, ["$gte requires a number, string or datetime: a"]),
        ({"a": {"$lt": [1]}}, ["$lt requires a number, string or datetime: a"]),
        ({"a": {"$lte": {"b": 1}}}, ["$lte requires a number, string or datetime: a"]),
        ({"a": {"$exists": 1}}, ["$exists requires a boolean: a"]),
        ({"a": {"$exists": None}}, ["$exists requires a boolean: a"]),
        ({"a": {"$size": -1}}, ["$size requires a non-negative integer: a"]),
        ({"a": {"$size": True}}, ["$size requires a non-negative integer: a"]),
        ({"a": {"$size": 1.0}}, ["$size requires a non-negative integer: a"]),
        ({"a": {"$size": "1"}}, ["$size requires a non-negative integer: a"]),
        ({"a": {"$regex": 5}}, ["$regex requires a string: a"]),
        ({"a": {"$options": "i"}}, ["$options requires $regex: a"]),
        ({"a": {"$regex": "x", "$options": 1}}, ["$options requires a string: a"]),
        ({"a": {"$regex": "x", "$options": "ix"}}, ["Unsupported regex option: x"]),
        ({"a": {"$regex": "(?i)x"}}, ["Unsupported regex construct: (?i)"]),
        ({"a": {}}, ["Empty object is not a valid condition: a"]),
        ({"a": {"b": {}}}, ["Empty object is not a valid condition: a.b"]),
        ({"a": {"$gt": 1, "b": 2}}, ["Cannot mix operators and field names: a"]),
        ({"a": math.nan}, ["Invalid number: a"]),
        ({"a..b": 1}, ["Invalid field path: a..b"]),
        ({".a": 1}, ["Invalid field path: .a"]),
        ({"a.": 1}, ["Invalid field path: a."]),
        ({"": 1}, ["Invalid field path: "]),
        ({"a": {"b..c": 1}}, ["Invalid field path: a.b..c"]),
        ({1: "x"}, ["Invalid field path: 1"]),
    ],
)
def test_error_phrases(flt: Any, problems: list[str]) -> None:
    assert problems_of(flt) == problems


@pytest.mark.parametrize(
    ("flt", "problem"),
    [
        ({"$or": [{"a": 1}, {"b": {"$in": 3}}]}, "$in requires a list: $or.1.b"),
        ({"$not": {"a": {"$size": -2}}}, "$size requires a non-negative integer: $not.a"),
        (
            {"items": {"$elemMatch": {"k": {"$exists": "y"}}}},
            "$exists requires a boolean: items.$elemMatch.k",
        ),
        ({"tags": {"$elemMatch": {"$in": "a"}}}, "$in requires a list: tags.$elemMatch"),
        ({"n": {"$not": {"$nin": 4}}}, "$nin requires a list: n.$not"),
        ({"$and": [{"$or": []}]}, "$or requires a non-empty list: $and.0.$or"),
    ],
)
def test_locations_are_dotted(flt: dict[str, Any], problem: str) -> None:
    assert problems_of(flt) == [problem]


def test_every_problem_is_collected_in_one_error() -> None:
    flt = {
        "$gt": 1,
        "a": {"$in": 5, "$size": -1},
        "b..c": 1,
        "$and": [],
        "x": {"$and": [{"a": 1}]},
        "y": {"$regex": "(?i)a\\d{2}", "$options": "ix"},
        "$or": [{"$gt": 1}, {"z": {}}],
        "w": {"$gt": None},
        "v": math.inf,
        "$nor": [{"n": {"$not": {}}}],
    }
    assert problems_of(flt) == [
        "Invalid top-level operator: $gt",
        "$in requires a list: a",
        "$size requires a non-negative integer: a",
        "Invalid field path: b..c",
        "$and requires a non-empty list: $and",
        "Logical operator $and cannot be used at field level: x",
        "Unsupported regex construct: (?i)",
        "Unsupported regex construct: \\d",
        "Unsupported regex construct: {2}",
        "Unsupported regex option: x",
        "Logical operators must contain field conditions, not direct operators: $or.0",
        "Empty object is not a valid condition: $or.1.z",
        "$gt requires a number, string or datetime: w",
        "Invalid number: v",
        "$not operator cannot be empty: $nor.0.n",
    ]


def test_repeated_problems_are_listed_once() -> None:
    assert problems_of({"a": {"$foo": 1}, "b": {"$foo": 2}}) == ["Unsupported operator: $foo"]


def test_filter_error_is_a_validation_error_and_a_value_error() -> None:
    with pytest.raises(FilterError) as info:
        validate_filter({"a": {"$gt": None}})
    assert isinstance(info.value, ValidationError)
    assert isinstance(info.value, ValueError)
    assert info.value.category == "USER"


# --- operators_used sees what the filter uses ------------------------------------------------------


def test_operators_used_reports_every_operator() -> None:
    node = parse(
        {
            "$or": [{"a": [1]}, {"b": {"$not": {"$regex": "x"}}}],
            "$nor": [{"c": {"$elemMatch": {"d": {"$exists": True}}}}],
            "e": 1,
        }
    )
    assert operators_used(node) == {
        "$or",
        "$in",
        "$not",
        "$regex",
        "$nor",
        "$elemMatch",
        "$exists",
        "$eq",
        "$and",
    }


# --- properties ----------------------------------------------------------------------------------

_SEGMENTS = st.text(
    alphabet=st.characters(blacklist_characters=".$", blacklist_categories=["Cs"]), min_size=1, max_size=8
)
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text()
)


@given(segments=st.lists(_SEGMENTS, min_size=1, max_size=4), value=_SCALARS)
def test_nesting_and_dotting_give_the_same_tree(segments: list[str], value: Any) -> None:
    nested: Any = {"$eq": value}
    for segment in reversed(segments):
        nested = {segment: nested}
    node = parse(nested)
    assert node == parse({".".join(segments): value})
    assert isinstance(node, Comparison)
    assert node.path == tuple(segments)


@given(st.lists(st.one_of(_SCALARS, st.datetimes(timezones=st.just(UTC))), max_size=5))
def test_plain_list_is_in(values: list[Any]) -> None:
    assert parse({"f": values}) == parse({"f": {"$in": values}})


def test_enum_members_become_plain_values() -> None:
    class Colour(StrEnum):
        RED = "red"

    class Size(IntEnum):
        BIG = 3

    node = parse({"c": Colour.RED, "s": {"$in": [Size.BIG]}})
    assert node == And((Comparison(("c",), "$eq", "red"), Comparison(("s",), "$in", (3,))))
    assert isinstance(node, And)
    values = [c.value for c in node.children if isinstance(c, Comparison)]
    assert type(values[0]) is str
    assert isinstance(values[1], tuple)
    assert type(values[1][0]) is int
