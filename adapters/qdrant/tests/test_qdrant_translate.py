"""The translator: filter AST in, neutral Qdrant filter out, and both renderings of it."""

from __future__ import annotations

from typing import Any

import pytest
import qdrant_edge as qe
from mastra_memory.errors import UnsupportedFilterError
from mastra_memory.filters import parse
from mastra_memory.filters.numbers import INT64_MAX
from qdrant_client import models

from mastra_memory_qdrant.edge import render_edge
from mastra_memory_qdrant.layout import encode_key
from mastra_memory_qdrant.translate import (
    QdrantFilterTranslator,
    QFilter,
    QMatch,
    QMatchAny,
    QNested,
    QRange,
    as_filter,
    render_client,
)

FACTS = "_mastra_f.x"


def translate(flt: dict[str, Any]) -> Any:
    node = parse(flt)
    assert node is not None
    return QdrantFilterTranslator().translate(node)


def values(key: str) -> str:
    return f"_mastra_f.v-{key}"


def no(*conditions: Any) -> QFilter:
    return QFilter(must_not=tuple(conditions))


# --- equality -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        ({"category": "home"}, QMatch(values("category"), "home")),
        ({"price": 10}, QMatch(values("price"), 10)),
        ({"price": 10.0}, QMatch(values("price"), 10)),  # integral floats are stored as ints
        ({"rating": 4.5}, QRange(values("rating"), gte=4.5, lte=4.5)),
        ({"ok": True}, QMatch(FACTS, "t:ok")),
        ({"ok": False}, QMatch(FACTS, "f:ok")),
        ({"sub.k": 1}, QMatch(values("sub-k"), 1)),
        ({"sub": {"k": 1}}, QMatch(values("sub-k"), 1)),
    ],
)
def test_equality(flt: dict[str, Any], expected: Any) -> None:
    assert translate(flt) == expected


def test_null_is_null_or_missing() -> None:
    assert translate({"n": None}) == QFilter(should=(QMatch(FACTS, "z:n"), no(QMatch(FACTS, "a:n"))))


def test_missing_on_a_nested_path_checks_every_prefix() -> None:
    missing = QFilter(
        should=(
            no(QMatch(FACTS, "a:a")),
            QFilter(must=(QMatch(FACTS, "c:a"), no(QMatch(FACTS, "a:a-b")))),
            QMatch(FACTS, "s:a"),
        )
    )
    assert translate({"a.b": None}) == QFilter(should=(QMatch(FACTS, "z:a-b"), missing))


def test_keys_that_qdrant_paths_cannot_name_are_encoded() -> None:
    key = 'qu"ote'
    assert encode_key(key) == "_" + key.encode().hex()
    assert translate({key: "x"}) == QMatch(values(encode_key(key)), "x")
    assert translate({"it'em.é": 1}) == QMatch(values(encode_key("it'em") + "-_c3a9"), 1)


# --- negations: must_not, so that missing fields match -----------------------------------------------


def test_ne_and_nin_are_must_not() -> None:
    assert translate({"available": {"$ne": True}}) == no(QMatch(FACTS, "t:available"))
    assert translate({"category": {"$nin": ["a", "b"]}}) == no(QMatchAny(values("category"), ("a", "b")))


def test_not_is_the_negation_of_the_conjunction_and_nor_of_the_disjunction() -> None:
    both = (QMatch(values("category"), "electronics"), QMatch(FACTS, "t:available"))
    assert translate({"$not": {"category": "electronics", "available": True}}) == no(QFilter(must=both))
    assert translate({"$nor": [{"category": "electronics"}, {"available": True}]}) == no(*both)


def test_field_level_not() -> None:
    assert translate({"price": {"$not": {"$gt": 50}}}) == no(QRange(values("price"), gt=50.0))


def test_and_inside_an_or_element_stays_an_and() -> None:
    flt = {"$or": [{"category": "home", "price": {"$lt": 100}}]}
    assert translate(flt) == QFilter(
        must=(QMatch(values("category"), "home"), QRange(values("price"), lt=100.0))
    )


# --- lists --------------------------------------------------------------------------------------------


def test_in_groups_strings_and_integers_and_keeps_the_rest_apart() -> None:
    flt = {"f": {"$in": ["a", "b", 1, 2.0, 0.5, True, None]}}
    assert translate(flt) == QFilter(
        should=(
            QMatchAny(values("f"), ("a", "b")),
            QMatchAny(values("f"), (1, 2)),
            QRange(values("f"), gte=0.5, lte=0.5),
            QMatch(FACTS, "t:f"),
            QFilter(should=(QMatch(FACTS, "z:f"), no(QMatch(FACTS, "a:f")))),
        )
    )


def test_empty_lists_fold_to_constants() -> None:
    never = QMatch(FACTS, "!")
    assert translate({"f": {"$in": []}}) == never
    assert translate({"f": {"$all": []}}) == never
    assert translate({"f": {"$nin": []}}) == no(never)


def test_true_is_not_deduplicated_with_one() -> None:
    assert translate({"f": {"$all": [1, True, 1.0]}}) == QFilter(
        must=(QMatch(values("f"), 1), QMatch(FACTS, "t:f"))
    )


def test_all_is_one_match_per_value() -> None:
    assert translate({"tags": {"$all": ["premium", "sale"]}}) == QFilter(
        must=(QMatch(values("tags"), "premium"), QMatch(values("tags"), "sale"))
    )


def test_size_and_exists_are_facts() -> None:
    assert translate({"tags": {"$size": 2}}) == QMatch(FACTS, "n:tags:2")
    assert translate({"tags": {"$exists": True}}) == QMatch(FACTS, "p:tags")
    assert translate({"tags": {"$exists": False}}) == no(QMatch(FACTS, "p:tags"))


def test_elem_match_is_nested_with_element_relative_keys() -> None:
    flt = {"reviews": {"$elemMatch": {"score": {"$gte": 5}, "author": "user3"}}}
    inner = QFilter(must=(QRange("v-score", gte=5.0), QMatch("v-author", "user3")))
    assert translate(flt) == QNested("_mastra_f.e-reviews", inner)


def test_elem_match_that_an_empty_object_satisfies_also_matches_nested_lists() -> None:
    flt = {"items": {"$elemMatch": {"k": {"$ne": 1}}}}
    nested = QNested("_mastra_f.e-items", as_filter(no(QMatch("v-k", 1))))
    assert translate(flt) == QFilter(should=(nested, QMatch(FACTS, "l:items")))


# --- numbers beyond 2^53 -----------------------------------------------------------------------------


def test_integers_are_matched_exactly_and_large_floats_as_ranges() -> None:
    assert translate({"n": INT64_MAX}) == QMatch(values("n"), INT64_MAX)
    assert translate({"n": 2**64}) == QRange(values("n"), gte=2.0**64, lte=2.0**64)
    edge = translate({"n": 2.0**63})
    assert isinstance(edge, QFilter)
    assert edge.must == (QRange(values("n"), gte=2.0**63, lte=2.0**63),)
    (excluded,) = edge.must_not
    assert isinstance(excluded, QMatchAny)
    assert INT64_MAX in excluded.values
    assert all(float(n) == 2.0**63 for n in excluded.values)


def test_ranges_near_large_integers_decide_the_rounding_neighbours() -> None:
    flt = translate({"n": {"$gt": 2**53}})
    assert isinstance(flt, QFilter)
    # The range starts at the next float64 (2^53 + 2), where both readings of a stored integer agree; the
    # integers between the neighbouring floats are decided one by one: 2^53 + 1 rounds to 2^53 but is
    # larger. Each part tests one value, so a record holding [2^53, 2^53 + 3] matches.
    assert flt.should[0] == QRange(values("n"), gte=2.0**53 + 2)
    assert flt.should[1] == QMatchAny(values("n"), (2**53 + 1,))
    assert translate({"n": {"$lte": 1000}}) == QRange(values("n"), lte=1000.0)


# --- refusals -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flt", "operator"),
    [
        ({"s": {"$regex": "an"}}, "$regex"),
        ({"s": {"$contains": "an"}}, "$contains"),
        ({"s": {"$gt": "b"}}, "$gt"),
        ({"when": {"$lt": "2024-01-01T00:00:00.000Z"}}, "$lt"),
        ({"n": 2**63 + 1}, "$eq"),
        ({"n": {"$in": [1, 2**64 + 1]}}, "$in"),
        ({"tags": {"$elemMatch": {"$gte": 2}}}, "$elemMatch"),
    ],
)
def test_what_qdrant_cannot_express_is_refused(flt: dict[str, Any], operator: str) -> None:
    with pytest.raises(UnsupportedFilterError) as raised:
        translate(flt)
    assert raised.value.operator == operator
    assert raised.value.adapter == "qdrant"


# --- rendering ----------------------------------------------------------------------------------------

SAMPLE = {
    "$or": [
        {"category": {"$in": ["home", "books"]}, "price": {"$gte": 20}},
        {"reviews": {"$elemMatch": {"score": 5}}},
        {"tags": {"$nin": ["sale"]}},
    ]
}


def test_render_client() -> None:
    rendered = render_client(as_filter(translate(SAMPLE)))
    assert isinstance(rendered, models.Filter)
    assert rendered.must is None
    assert rendered.must_not is None
    assert isinstance(rendered.should, list)
    first, second, third = rendered.should
    assert isinstance(first, models.Filter)
    assert first.must == [
        models.FieldCondition(key=values("category"), match=models.MatchAny(any=["home", "books"])),
        models.FieldCondition(key=values("price"), range=models.Range(gte=20.0)),
    ]
    assert second == models.NestedCondition(
        nested=models.Nested(
            key="_mastra_f.e-reviews",
            filter=models.Filter(
                must=[models.FieldCondition(key="v-score", match=models.MatchValue(value=5))]
            ),
        )
    )
    assert isinstance(third, models.Filter)
    assert third.must_not == [
        models.FieldCondition(key=values("tags"), match=models.MatchValue(value="sale"))
    ]


def test_render_edge() -> None:
    rendered = render_edge(as_filter(translate(SAMPLE)))
    assert isinstance(rendered, qe.Filter)
    assert rendered.must is None
    assert rendered.should is not None
    first, second, third = rendered.should
    assert isinstance(first, qe.Filter)
    assert first.must is not None
    category, price = first.must
    assert isinstance(category, qe.FieldCondition)
    assert category.key == values("category")
    assert isinstance(category.match, qe.MatchAny)
    assert list(category.match.value) == ["home", "books"]
    assert isinstance(price, qe.FieldCondition)
    assert isinstance(price.range, qe.RangeFloat)
    assert price.range.gte == 20.0
    assert isinstance(second, qe.NestedCondition)
    assert second.key == "_mastra_f.e-reviews"
    assert isinstance(third, qe.Filter)
    assert third.must_not is not None
    (excluded,) = third.must_not
    assert isinstance(excluded, qe.FieldCondition)
    assert isinstance(excluded.match, qe.MatchValue)
    assert excluded.match.value == "sale"
