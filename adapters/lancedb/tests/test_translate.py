"""Unit tests of the translator: filter AST in, SQL bounds out (no database involved)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from mastra_memory.errors import FilterError
from mastra_memory.filters import parse

from mastra_memory_lancedb.capabilities import LANCEDB_CAPABILITIES
from mastra_memory_lancedb.translate import (
    FALSE,
    TRUE,
    LanceDBTranslator,
    LanceFilter,
    json_path,
    json_string,
    number_literal,
    sql_string,
)


def translate(flt: dict[str, Any], indexed: dict[str, str] | None = None) -> LanceFilter:
    node = parse(flt)
    assert node is not None
    return LanceDBTranslator(indexed).translate(node)


A = '$["a"]'
AB = '$["a"]["b"]'


def exists(path: str) -> str:
    return f"json_exists(_mastra_json, {sql_string(path)})"


def is_array(path: str) -> str:
    return f"COALESCE(starts_with(json_extract(_mastra_json, {sql_string(path)}), '['), false)"


# --- literals ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain", "'plain'"),
        ("it's", "'it''s'"),
        ("'; DROP TABLE x; --", "'''; DROP TABLE x; --'"),
        ("back\\slash", "'back\\slash'"),  # Lance's SQL reads backslashes literally
        ("😀 שלום", "'😀 שלום'"),
    ],
)
def test_sql_strings_double_single_quotes_only(value: str, expected: str) -> None:
    assert sql_string(value) == expected


@pytest.mark.parametrize(
    "key", ["a", 'qu"ote', "back\\slash", "new\nline", "nul\x00", "br[ack]et", "d$ollar", "é😀", "k" * 200]
)
def test_json_paths_quote_every_key_as_a_json_string(key: str) -> None:
    path = json_path(("outer", key))
    assert path == f'$["outer"][{json.dumps(key, ensure_ascii=False)}]'
    inner = path[len('$["outer"][') : -1]
    assert json.loads(inner) == key  # the parser decodes it back to the key, whatever it contains


def test_json_strings_escape_quotes_and_controls() -> None:
    assert json_string('a"b\\c\n\x00') == '"a\\"b\\\\c\\n\\u0000"'


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        (5, "5"),
        (-2, "-2"),
        (5.0, "5"),
        (0.5, ".5e0"),
        (4.5, ".45e1"),
        (-1.5, "-.15e1"),
        (0.001, ".1e-2"),
        (1 / 3, ".3333333333333333e0"),
    ],
)
def test_number_literals_never_start_with_an_integer_part_and_a_fraction(
    value: int | float, literal: str
) -> None:
    assert number_literal(value) == literal
    assert float(literal) == value


# --- comparisons -----------------------------------------------------------------------------------


def test_equality_on_one_key_is_decided_in_sql_except_for_arrays() -> None:
    flt = translate({"a": 1})
    test = exists('$["a"] ? (@ == 1)')
    uncertain = is_array('$["a"]')
    assert flt.lower == f"((NOT {uncertain}) AND {test})"
    assert flt.upper == f"({uncertain} OR {test})"
    assert not flt.exact


def test_strings_and_quotes_reach_sql_only_as_escaped_literals() -> None:
    flt = translate({"it'em": "'; DROP TABLE x; --"})
    assert exists('$["it\'em"] ? (@ == "\'; DROP TABLE x; --")') in flt.lower
    # Outside the quoted literals no text of the filter remains.
    outside = re.sub(r"'(?:[^']|'')*'", "''", flt.lower)
    assert "DROP" not in outside
    assert "item" not in outside


def test_the_empty_string_is_written_as_smaller_than_nul() -> None:
    assert '(@ < "\\u0000")' in translate({"a": ""}).lower


def test_none_matches_null_and_missing() -> None:
    flt = translate({"a": None})
    assert exists('$["a"] ? (@ == null)') in flt.lower
    assert f"(NOT {exists(A)})" in flt.lower


def test_ne_swaps_the_bounds_of_eq() -> None:
    eq = translate({"a": 1})
    ne = translate({"a": {"$ne": 1}})
    assert ne.lower == f"(NOT {eq.upper})"
    assert ne.upper == f"(NOT {eq.lower})"


def test_empty_lists_fold_to_constants() -> None:
    assert translate({"a": {"$in": []}}).lower == FALSE
    assert translate({"a": {"$nin": []}}).lower == TRUE
    assert translate({"a": {"$all": []}}).upper == FALSE


def test_exists_and_size_are_exact_on_one_key() -> None:
    assert translate({"a": {"$exists": True}}) == LanceFilter(
        parse({"a": {"$exists": True}}),  # type: ignore[arg-type]
        exists('$["a"]'),
        exists('$["a"]'),
    )
    size = translate({"a": {"$size": 2}})
    assert size.exact
    assert exists('$["a"][1]') in size.lower
    assert f"(NOT {exists(A + '[2]')})" in size.lower
    assert (
        translate({"a": {"$size": 0}}).lower
        == "COALESCE(json_extract(_mastra_json, '$[\"a\"]') = '[]', false)"
    )


def test_ranges_with_strings_and_the_empty_string() -> None:
    assert '@ > "b"' in translate({"s": {"$gt": "b"}}).lower
    assert translate({"s": {"$lt": ""}}).lower == FALSE
    assert '@ >= "\\u0000"' in translate({"s": {"$gt": ""}}).lower


def test_numbers_beyond_two_to_the_53_are_left_to_the_evaluator() -> None:
    flt = translate({"n": {"$gte": 2**53}})
    assert flt.lower == FALSE
    assert flt.upper == exists('$["n"]')


def test_paths_of_several_keys_are_uncertain_where_a_prefix_is_an_array() -> None:
    flt = translate({"a.b": {"$exists": True}})
    assert flt.upper == f"({is_array(A)} OR {exists(AB)})"
    assert flt.lower == f"((NOT {is_array(A)}) AND {exists(AB)})"


@pytest.mark.parametrize(
    "flt",
    [
        {"s": {"$regex": "^a", "$options": "i"}},
        {"s": {"$contains": "x"}},
        {"items": {"$elemMatch": {"k": 1}}},
    ],
)
def test_emulated_operators_narrow_to_present_fields(flt: dict[str, Any]) -> None:
    translated = translate(flt)
    assert translated.lower == FALSE
    assert translated.upper == exists(json_path((next(iter(flt)),)))


def test_not_and_nor_swap_bounds_so_negations_stay_sound() -> None:
    inner = translate({"s": {"$regex": "a"}})
    negated = translate({"s": {"$not": {"$regex": "a"}}})
    assert negated.lower == f"(NOT {inner.upper})"
    assert negated.upper == TRUE  # NOT FALSE: every row must be checked
    nor = translate({"$nor": [{"a": 1}, {"b": 2}]})
    assert nor.lower.startswith("(NOT (")
    assert "OR" in nor.lower


def test_not_is_not_nor() -> None:
    assert translate({"$not": {"a": 1, "b": 2}}).lower != translate({"$nor": [{"a": 1}, {"b": 2}]}).lower


def test_and_inside_an_or_element_stays_an_and() -> None:
    flt = translate({"$or": [{"category": "home", "price": {"$lt": 100}}]})
    assert " AND " in flt.lower
    assert '@ == "home"' in flt.lower
    assert "@ < 100" in flt.lower


def test_index_columns_answer_string_equality_exactly() -> None:
    flt = translate({"thread_id": "t'1"}, indexed={"thread_id": "_mastra_idx_0"})
    assert flt.exact
    assert flt.lower == "array_has_any(_mastra_idx_0, ['t''1'])"
    mixed = translate({"thread_id": {"$in": ["a", 1]}}, indexed={"thread_id": "_mastra_idx_0"})
    assert "array_has_any(_mastra_idx_0, ['a'])" in mixed.lower
    assert "@ == 1" in mixed.lower


def test_every_operator_is_declared() -> None:
    declared = LANCEDB_CAPABILITIES.supported_operators
    assert {"$regex", "$contains", "$elemMatch"} <= LANCEDB_CAPABILITIES.emulated_operators
    assert {"$eq", "$ne", "$in", "$nin", "$exists", "$size", "$not", "$nor"} <= declared
    assert LANCEDB_CAPABILITIES.implicit_array_traversal


def test_invalid_filters_never_reach_the_translator() -> None:
    with pytest.raises(FilterError, match="Unsupported operator"):
        parse({"a": {"$bogus": 1}})
