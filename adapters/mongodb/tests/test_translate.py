"""The translator: filter AST in, MQL out (MongoDB), and the FerretDB split into sent MQL and residual."""

from __future__ import annotations

from typing import Any

import pytest
from mastra_memory.errors import UnsupportedFilterError
from mastra_memory.filters import parse
from mastra_memory.filters.evaluate import evaluate

from mastra_memory_mongodb.translate import (
    FALSE,
    TRUE,
    MongoFilter,
    atlas_prefilter,
    from_ferretdb,
    to_ferretdb,
    translate,
)


def mql(flt: dict[str, Any]) -> Any:
    node = parse(flt)
    assert node is not None
    result = translate(node, "mongodb")
    assert result.residual is None
    return result.mql


def ferret(flt: dict[str, Any]) -> MongoFilter:
    node = parse(flt)
    assert node is not None
    return translate(node, "ferretdb")


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        ({"n": 5}, {"metadata.n": {"$eq": 5}}),
        ({"n": None}, {"metadata.n": {"$eq": None}}),
        ({"n": {"$ne": "x"}}, {"metadata.n": {"$ne": "x"}}),
        ({"a.b": {"$gte": 1.5}}, {"metadata.a.b": {"$gte": 1.5}}),
        ({"tags": ["a", "b"]}, {"metadata.tags": {"$in": ["a", "b"]}}),
        ({"tags": {"$nin": [1, None]}}, {"metadata.tags": {"$nin": [1, None]}}),
        ({"tags": {"$size": 2}}, {"metadata.tags": {"$size": 2}}),
        ({"x": {"$exists": False}}, {"metadata.x": {"$exists": False}}),
        ({"s": {"$regex": "^a", "$options": "i"}}, {"metadata.s": {"$regex": "^a", "$options": "i"}}),
        (
            {"tags": {"$all": ["a", "b"]}},
            {"$and": [{"metadata.tags": {"$eq": "a"}}, {"metadata.tags": {"$eq": "b"}}]},
        ),
        ({"tags": {"$all": []}}, FALSE),
        # Root $not has no MQL form: it is $nor of the sub-filter; field $not is the same node.
        ({"$not": {"category": "home"}}, {"$nor": [{"metadata.category": {"$eq": "home"}}]}),
        ({"n": {"$not": {"$gt": 5}}}, {"$nor": [{"metadata.n": {"$gt": 5}}]}),
        (
            {"$or": [{"a": 1}, {"$nor": [{"b": 2}]}]},
            {"$or": [{"metadata.a": {"$eq": 1}}, {"$nor": [{"metadata.b": {"$eq": 2}}]}]},
        ),
        (
            {"items": {"$elemMatch": {"k": 1, "v": "x"}}},
            {"metadata.items": {"$elemMatch": {"$and": [{"k": {"$eq": 1}}, {"v": {"$eq": "x"}}]}}},
        ),
        ({"n": {"$elemMatch": {"$gte": 2, "$lt": 5}}}, {"metadata.n": {"$elemMatch": {"$gte": 2, "$lt": 5}}}),
        # Booleans are not numbers: [0, False] keeps both (Python's 0 == False must not merge them).
        ({"b": {"$in": [0, False, 1, True, 1.0]}}, {"metadata.b": {"$in": [0, False, 1, True]}}),
        (
            {"b": {"$all": [1, True]}},
            {"$and": [{"metadata.b": {"$eq": 1}}, {"metadata.b": {"$eq": True}}]},
        ),
        # int64: a larger operand travels as the double it equals.
        ({"n": 2**64}, {"metadata.n": {"$eq": float(2**64)}}),
    ],
)
def test_mql(flt: dict[str, Any], expected: Any) -> None:
    assert mql(flt) == expected


def test_contains_on_one_segment_is_a_string_or_a_list_condition() -> None:
    assert mql({"s": {"$contains": "a.b"}}) == {
        "$or": [
            {
                "$and": [
                    {"metadata.s": {"$type": "string"}},
                    {"metadata.s": {"$not": {"$type": "array"}}},
                    {"metadata.s": {"$regex": "a\\.b"}},
                ]
            },
            {"$and": [{"metadata.s": {"$type": "array"}}, {"metadata.s": {"$eq": "a.b"}}]},
        ]
    }
    assert mql({"s": {"$contains": 3}}) == {
        "$and": [{"metadata.s": {"$type": "array"}}, {"metadata.s": {"$eq": 3}}]
    }


def test_contains_on_a_longer_path_descends_objects_and_lists() -> None:
    inner = {"$and": [{"b": {"$type": "array"}}, {"b": {"$eq": 1}}]}
    into_object = {
        "$and": [
            {"metadata.a": {"$type": "object"}},
            {"metadata.a": {"$not": {"$type": "array"}}},
            {"$and": [{"metadata.a.b": {"$type": "array"}}, {"metadata.a.b": {"$eq": 1}}]},
        ]
    }
    assert mql({"a.b": {"$contains": 1}}) == {"$or": [into_object, {"metadata.a": {"$elemMatch": inner}}]}


def test_paths_no_stored_key_can_be_on_are_constants() -> None:
    # Upserts refuse keys with U+0000, a leading '$' or a '.', so such a path is missing everywhere.
    assert mql({"a\x00b": 1}) == FALSE
    assert mql({"a\x00b": {"$ne": 1}}) == TRUE
    assert mql({"a\x00b": None}) == TRUE


@pytest.mark.parametrize(
    "flt",
    [
        {"a.0": 1},  # MongoDB reads "0" as an array position
        {"n": 2**64 + 1},  # beyond int64 and no double equals it
        {"s": {"$regex": "a\x00"}},
    ],
)
def test_unsupported(flt: dict[str, Any]) -> None:
    with pytest.raises(UnsupportedFilterError):
        translate(parse(flt), "mongodb")  # type: ignore[arg-type]


def test_ferretdb_sends_what_it_answers_exactly_and_keeps_the_rest() -> None:
    split = ferret(
        {
            "thread_id": "t1",
            "a.b": None,  # missing through lists: FerretDB answers differently
            "tags": {"$elemMatch": {"k": 1}},  # wrong on FerretDB v1
            "s": {"$regex": "x$"},  # Go regexp
            "n": {"$gt": 2},
        }
    )
    assert split.mql == {"$and": [{"metadata.thread_id": {"$eq": "t1"}}, {"metadata.n": {"$gt": 2}}]}
    assert split.residual is not None
    assert parse({"a.b": None}) is not None
    kept = {evaluate(split.residual, m) for m in ({"a": [{"b": None}], "tags": [{"k": 1}], "s": "x"}, {})}
    assert kept == {True, False}


def test_ferretdb_exact_filters_have_no_residual() -> None:
    split = ferret({"$or": [{"a": None}, {"b.c": {"$in": [1, 2]}}], "d": {"$exists": True}})
    assert split.residual is None
    assert split.mql == {
        "$and": [
            {"$or": [{"metadata.a": {"$eq": None}}, {"metadata.b.c": {"$in": [1, 2]}}]},
            {"metadata.d": {"$exists": True}},
        ]
    }


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        # FerretDB decides $ne/$nin per element of a list of documents on the path (§8.2 #49, #50): sent
        # as NOT($eq)/NOT($in), which it answers exactly. MongoDB gets the operators themselves.
        ({"reviews.score": {"$ne": 3}}, {"$nor": [{"metadata.reviews.score": {"$eq": 3}}]}),
        ({"n": {"$ne": None}}, {"$nor": [{"metadata.n": {"$eq": None}}]}),
        ({"a.b": {"$nin": [3, 4]}}, {"$nor": [{"metadata.a.b": {"$in": [3, 4]}}]}),
        ({"a": {"$nin": []}}, {"$nor": [{"metadata.a": {"$in": []}}]}),
        ({"a.b": {"$not": {"$ne": 3}}}, {"$nor": [{"$nor": [{"metadata.a.b": {"$eq": 3}}]}]}),
        # A path no stored key is on stays the constant $ne has on a missing field.
        ({"a\x00b": {"$ne": 1}}, TRUE),
    ],
)
def test_ferretdb_sends_negations_as_nor(flt: dict[str, Any], expected: Any) -> None:
    split = ferret(flt)
    assert (split.mql, split.residual) == (expected, None)


def test_ferretdb_negations_keep_the_operator_in_errors() -> None:
    with pytest.raises(UnsupportedFilterError, match=r"\$nin"):
        ferret({"a": {"$nin": [2**64 + 1]}})


def test_ferretdb_escapes_keys_and_wraps_inner_lists() -> None:
    metadata = {"": 1, "~a": [[1, [2]], {"": [3]}], "b": {"c": []}}
    stored = to_ferretdb(metadata)
    assert stored == {"~": 1, "~~a": [{"": [1, {"": [2]}]}, {"~": [3]}], "b": {"c": []}}
    assert from_ferretdb(stored) == metadata
    assert ferret({"~a": 1}).mql == {"metadata.~~a": {"$eq": 1}}


def test_atlas_prefilter_takes_only_what_atlas_means_the_same_way() -> None:
    fields = {"thread_id", "resource_id", "year"}

    def pre(flt: dict[str, Any]) -> Any:
        return atlas_prefilter(parse(flt), fields)  # type: ignore[arg-type]

    assert pre({"thread_id": "t1"}) == {"metadata.thread_id": {"$eq": "t1"}}
    assert pre({"resource_id": "u", "thread_id": {"$in": ["a", "b"]}}) == {
        "$and": [{"metadata.resource_id": {"$eq": "u"}}, {"metadata.thread_id": {"$in": ["a", "b"]}}]
    }
    assert pre({"$or": [{"year": {"$gte": 2020}}, {"year": 1999}]}) == {
        "$or": [{"metadata.year": {"$gte": 2020}}, {"metadata.year": {"$eq": 1999}}]
    }
    # Not indexed, negations, null (missing), string ranges: no exact pre-filter -> exact search.
    for flt in (
        {"other": 1},
        {"thread_id": {"$ne": "t1"}},
        {"thread_id": None},
        {"thread_id": {"$in": ["a", None]}},
        {"year": {"$gt": "2020"}},
        {"$nor": [{"thread_id": "t"}]},
        {"thread_id": "t", "other": {"$exists": True}},
    ):
        assert pre(flt) is None, flt
