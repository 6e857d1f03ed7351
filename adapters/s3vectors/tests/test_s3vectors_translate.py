"""The translator: filter AST in, S3 Vectors filter document out (no server involved)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from mastra_memory.errors import UnsupportedFilterError
from mastra_memory.filters import parse
from mastra_memory.filters.numbers import INT64_MAX

from mastra_memory_s3vectors.translate import FALSE, TRUE, Native, S3VectorsFilterTranslator, negate, render


def native(flt: dict[str, Any], non_filterable: tuple[str, ...] = ("content",)) -> Native:
    node = parse(flt)
    assert node is not None
    return S3VectorsFilterTranslator(non_filterable).translate(node)


def doc(flt: dict[str, Any]) -> dict[str, Any]:
    return render(native(flt))


ABSENT_A = [{f"{t}:a": {"$exists": False}} for t in "snbzol"]


def test_equality_goes_to_the_typed_key() -> None:
    assert doc({"a": "x"}) == {"s:a": {"$eq": "x"}}
    assert doc({"a": True}) == {"b:a": {"$eq": True}}
    assert doc({"a": 5.0}) == {"n:a": {"$eq": 5}}  # integral floats compare as the ints they are stored as
    assert doc({"a": 0.5}) == {"n:a": {"$eq": 0.5}}


def test_ne_and_nin_match_missing_keys_on_either_reading() -> None:
    assert doc({"a": {"$ne": "x"}}) == {"$or": [{"s:a": {"$exists": False}}, {"s:a": {"$ne": "x"}}]}
    assert doc({"a": {"$nin": [1, 2]}}) == {"$or": [{"n:a": {"$exists": False}}, {"n:a": {"$nin": [1, 2]}}]}


def test_ranges_are_guarded_by_exists() -> None:
    # S3Mock matches a missing key with $lt; the guard makes the meaning independent of that.
    assert doc({"a": {"$lt": 3}}) == {"$and": [{"n:a": {"$exists": True}}, {"n:a": {"$lt": 3}}]}


def test_null_is_a_stored_null_or_missing() -> None:
    assert doc({"a": None}) == {"$or": [{"z:a": {"$exists": True}}, {"$and": ABSENT_A}]}
    nested = doc({"a.b": None})
    # missing on a nested path also needs no list on the way (a crossed list reaches no value at all)
    assert {"l:a": {"$exists": False}} in nested["$or"][1]["$and"]


def test_not_and_nor_by_de_morgan() -> None:
    assert doc({"$nor": [{"a": "x"}, {"b": 1}]}) == {
        "$and": [
            {"$or": [{"s:a": {"$exists": False}}, {"s:a": {"$ne": "x"}}]},
            {"$or": [{"n:b": {"$exists": False}}, {"n:b": {"$ne": 1}}]},
        ]
    }
    assert native({"$not": {"a": {"$gt": 1}}}) == negate(native({"a": {"$gt": 1}}))
    assert doc({"a": {"$not": {"$gt": 1}}}) == {"$or": [{"n:a": {"$exists": False}}, {"n:a": {"$lte": 1}}]}


def test_all_is_an_and_of_equalities() -> None:
    assert doc({"tags": {"$all": ["a", "b"]}}) == {
        "$and": [{"s:tags": {"$eq": "a"}}, {"s:tags": {"$eq": "b"}}]
    }


def test_constants_fold() -> None:
    assert native({"a": {"$in": []}}) == FALSE
    assert native({"a": {"$all": []}}) == FALSE
    assert native({"a": {"$nin": []}}) == TRUE
    assert native({"$or": [{"a": {"$in": []}}, {"b": 1}]}) == native({"b": 1})


def test_datetimes_compare_as_canonical_timestamps() -> None:
    when = datetime(2024, 3, 5, 14, 7, tzinfo=UTC)
    assert doc({"t": when}) == {"s:t": {"$eq": "2024-03-05T14:07:00.000Z"}}
    with pytest.raises(UnsupportedFilterError, match="no-string-ranges"):
        native({"t": {"$gt": when}})


def test_large_integer_ranges_stay_exact_under_float64_comparison() -> None:
    rendered = doc({"a": {"$lt": INT64_MAX}})
    text = repr(rendered)
    # the integers that round to 2^63 are kept out of the float range and decided by name
    assert "$nin" in text
    assert str(INT64_MAX - 1) in text


@pytest.mark.parametrize(
    ("flt", "operator", "reason"),
    [
        ({"s": {"$gt": "a"}}, "$gt", "no-string-ranges"),
        ({"a": 2**64 + 1}, "$eq", "int64-range"),
        ({"content": "hello"}, "$eq", "non-filterable-keys"),
        ({"content.x": {"$exists": True}}, "$exists", "non-filterable-keys"),
        ({"s": {"$regex": "a"}}, "$regex", "not declared"),
        ({"tags": {"$size": 1}}, "$size", "not declared"),
        ({"items": {"$elemMatch": {"k": 1}}}, "$elemMatch", "not declared"),
        ({"s": {"$contains": "a"}}, "$contains", "not declared"),
    ],
)
def test_refused_filters(flt: dict[str, Any], operator: str, reason: str) -> None:
    with pytest.raises(UnsupportedFilterError, match=reason) as raised:
        native(flt)
    assert raised.value.operator == operator
    assert raised.value.adapter == "s3vectors"


def test_non_filterable_keys_follow_the_settings() -> None:
    assert doc({"content": "x"} if False else {"body": "x"}) == {"s:body": {"$eq": "x"}}
    with pytest.raises(UnsupportedFilterError):
        native({"body": "x"}, non_filterable=("body",))
