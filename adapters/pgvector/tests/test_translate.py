"""The filter translator without a server: AST in, SQL and bound parameters out."""

from __future__ import annotations

import math
from typing import Any

import pytest
from mastra_memory.errors import FilterError
from mastra_memory.filters import parse

from mastra_memory_pgvector.regex import to_are
from mastra_memory_pgvector.translate import PgFilterTranslator, SqlFilter, json_scalar, json_text


def translate(flt: dict[str, Any]) -> SqlFilter:
    node = parse(flt)
    assert node is not None
    return PgFilterTranslator().translate(node)


def test_equality_on_an_identifier_key_is_containment_on_the_indexed_expression() -> None:
    out = translate({"thread_id": "t1"})
    assert out.sql == "((metadata -> 'thread_id') @> %(f0)s::jsonb)"
    assert out.params == {"f0": '"t1"'}


def test_values_are_bound_never_spliced() -> None:
    hostile = "'; DROP TABLE x; --"
    out = translate({"a": hostile, "b": {"$gt": hostile}, "c": {"$regex": hostile}})
    assert hostile not in out.sql
    assert '"\'; DROP TABLE x; --"' in out.params.values()
    assert hostile in out.params.values()


@pytest.mark.parametrize(
    "key", ["it'em", 'qu"ote', "back\\slash", "'; DROP TABLE x; --", "per%cent", "😀", "sp ace"]
)
def test_keys_that_are_not_identifiers_are_bound(key: str) -> None:
    out = translate({key: 1})
    assert out.sql == "((metadata -> %(f1)s::text) @> %(f0)s::jsonb)"
    assert out.params == {"f0": "1", "f1": key}
    assert key not in out.sql


def test_negations_are_is_not_true_so_missing_fields_match() -> None:
    assert translate({"ok": {"$ne": True}}).sql == "((((metadata -> 'ok') @> %(f0)s::jsonb)) IS NOT TRUE)"
    out = translate({"n": {"$nin": [5, 10]}})
    assert out.sql.endswith("IS NOT TRUE)")
    assert out.params == {"f0": "5", "f1": "10"}


def test_not_is_negated_conjunction_and_nor_negated_disjunction() -> None:
    root_not = translate({"$not": {"category": "electronics", "available": True}}).sql
    nor = translate({"$nor": [{"category": "electronics"}, {"available": True}]}).sql
    assert root_not.startswith("((((")
    assert " AND " in root_not
    assert root_not.endswith("IS NOT TRUE)")
    assert " OR " in nor
    assert " AND " not in nor
    assert nor.endswith("IS NOT TRUE)")


def test_and_inside_an_or_element_stays_an_and() -> None:
    out = translate({"$or": [{"category": "home", "price": {"$lt": 100}}]})
    category = "((metadata -> 'category') @> %(f0)s::jsonb)"
    assert out.sql.startswith(f"({category} AND (CASE WHEN jsonb_typeof((metadata -> 'price'))")


def test_ranges_are_typed_numeric_or_code_point_text() -> None:
    number = translate({"price": {"$gte": 50}})
    assert "jsonb_typeof((metadata -> 'price')) = 'number'" in number.sql
    assert "::numeric >= %(f0)s::numeric" in number.sql
    text = translate({"s": {"$lt": "b"}})
    assert "jsonb_typeof((metadata -> 's')) = 'string'" in text.sql
    assert 'COLLATE "C" < %(f0)s::text' in text.sql


def test_floats_are_written_as_their_exact_value_and_keep_a_fraction() -> None:
    assert json_scalar(0.1) == "0.1000000000000000055511151231257827021181583404541015625"
    assert json_scalar(2.0**60) == "1152921504606846976.0"
    assert json_scalar(1e300).endswith(".0")
    assert json_scalar(True) == "true"
    assert json_scalar(1) == "1"
    assert json_scalar(None) == "null"
    assert json_text({"a": [1, 2.5, {"b": "é"}]}) == '{"a":[1,2.5,{"b":"é"}]}'
    out = translate({"x": {"$gt": 0.1}})
    assert out.params == {"f0": json_scalar(0.1)}


def test_none_means_null_or_missing() -> None:
    out = translate({"n": None})
    assert out.sql == "((metadata -> 'n') IS NULL OR (metadata -> 'n') @> 'null'::jsonb)"
    assert out.params == {}


def test_strings_that_postgres_cannot_hold_are_folded() -> None:
    assert translate({"s": "a\x00b"}).sql == "FALSE"
    assert translate({"s": {"$ne": "a\x00b"}}).sql == "((FALSE) IS NOT TRUE)"
    # Against strings without U+0000, "a\0" orders right after "a".
    above = translate({"s": {"$gte": "a\x00"}})
    assert "> %(f0)s::text" in above.sql
    assert above.params == {"f0": "a"}
    below = translate({"s": {"$lt": "a\x00z"}})
    assert "<= %(f0)s::text" in below.sql


def test_empty_lists_fold_to_constants() -> None:
    assert translate({"tags": {"$in": []}}).sql == "FALSE"
    assert translate({"tags": {"$all": []}}).sql == "FALSE"
    assert translate({"tags": {"$nin": []}}).sql == "((FALSE) IS NOT TRUE)"


def test_long_in_lists_travel_as_one_array_parameter() -> None:
    values = list(range(100))
    out = translate({"n": {"$in": values}})
    assert "@> ANY(%(f0)s::jsonb[])" in out.sql
    assert out.params == {"f0": [str(v) for v in values]}


def test_nested_paths_cross_lists_with_lateral_elements() -> None:
    out = translate({"reviews.score": 5})
    assert out.sql.startswith("EXISTS (SELECT 1 FROM jsonb_array_elements(")
    assert "jsonb_typeof(t1.v) = 'object'" in out.sql
    assert "((t1.v -> 'score') @> %(f0)s::jsonb)" in out.sql


def test_elem_match_reads_fields_of_object_elements() -> None:
    out = translate({"reviews": {"$elemMatch": {"score": {"$gte": 5}, "author": "user3"}}})
    assert "jsonb_array_elements(CASE WHEN jsonb_typeof((metadata -> 'reviews')) = 'array'" in out.sql
    assert "jsonb_typeof(m1.v) IN ('object', 'array')" in out.sql
    assert " AND " in out.sql


def test_size_exists_and_contains() -> None:
    assert "jsonb_array_length((metadata -> 'tags')) = %(f0)s" in translate({"tags": {"$size": 2}}).sql
    assert translate({"d": {"$exists": True}}).sql == "((metadata -> 'd') IS NOT NULL)"
    assert translate({"d": {"$exists": False}}).sql == "((((metadata -> 'd') IS NOT NULL)) IS NOT TRUE)"
    contains = translate({"description": {"$contains": "novel"}})
    assert "strpos((metadata -> 'description') #>> '{}', %(f1)s::text) > 0" in contains.sql
    assert contains.params == {"f0": '"novel"', "f1": "novel"}


def test_regex_is_bound_as_a_translated_are() -> None:
    out = translate({"name": {"$regex": "^Product [A-C]", "$options": "i"}})
    assert 'COLLATE "C" ~ %(f0)s' in out.sql
    assert out.params["f0"] == to_are("^Product [A-C]", "i")


def test_invalid_filters_never_reach_the_translator() -> None:
    with pytest.raises(FilterError, match="Unsupported regex construct"):
        translate({"s": {"$regex": "(?i)x"}})


@pytest.mark.parametrize(
    ("pattern", "options", "expected"),
    [
        ("a.c", "", "a[^\\u000a]c"),
        ("a.c", "s", "a[\\u0001-\\U0010ffff]c"),
        ("^ab$", "", "^ab(?=\\u000a?$)"),
        ("^ab$", "m", "(?:^|(?<=\\u000a))ab(?=\\u000a|$)"),
        ("a|b", "", "[a-b]"),
        ("(ab)+", "", "(?:(?:ab))+"),
        ("x?", "", "(?:x)?"),
        ("\\.", "", "\\u002e"),
        ("[^0-9]", "", "[^0-9]"),
        ("é", "", "\\u00e9"),
        ("😀", "", "\\U0001f600"),
        ("a\x00", "", "a[^\\u0001-\\U0010ffff]"),
    ],
)
def test_regex_translation(pattern: str, options: str, expected: str) -> None:
    assert to_are(pattern, options) == expected


def test_case_insensitive_classes_follow_python_case_folding() -> None:
    assert to_are("k", "i") == "[Kk\\u212a]"  # Python folds the Kelvin sign to k
    assert to_are("s", "i") == "[Ss\\u017f]"  # and the long s to s
    assert to_are("1", "i") == "1"
    assert to_are("[^a]", "i") == "[^Aa]"


def test_float_text_is_exact() -> None:
    for value in (0.1, 1e300, 5e-324, 2.0**60, -1.5, 1.7976931348623157e308):
        assert float(json_scalar(value)) == value
        assert "." in json_scalar(value)
    assert math.isclose(float(json_scalar(1 / 3)), 1 / 3, rel_tol=0)
