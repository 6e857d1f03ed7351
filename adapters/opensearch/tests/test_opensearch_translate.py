"""Unit tests of the translator: filter in, query DSL out (no server)."""

from __future__ import annotations

import pytest
from mastra_memory.errors import UnsupportedFilterError
from mastra_memory.filters import parse

from mastra_memory_opensearch.layout import encode_double, encode_int, fact, path_code
from mastra_memory_opensearch.translate import MATCH_ALL, MATCH_NONE, OpenSearchFilterTranslator


def translate(flt: dict[str, object]) -> object:
    node = parse(flt)
    assert node is not None
    return OpenSearchFilterTranslator().translate(node)


def test_string_equality_is_a_term_on_the_path_code() -> None:
    assert translate({"thread_id": "t1"}) == {"term": {"str": f"{path_code(('thread_id',))}:t1"}}


def test_dotted_and_nested_spellings_are_one_path() -> None:
    assert translate({"a.b": 1}) == translate({"a": {"b": 1}})
    assert translate({"a.b": 1}) == {"term": {"int": f"{path_code(('a', 'b'))}:{encode_int(1)}"}}


def test_integral_float_is_an_integer_term() -> None:
    assert translate({"n": 1.0}) == translate({"n": 1})
    assert translate({"n": 1.5}) == {"term": {"dbl": f"{path_code(('n',))}:{encode_double(1.5)}"}}


def test_booleans_and_null_are_facts() -> None:
    assert translate({"ok": True}) == {"term": {"facts": fact("t", ("ok",))}}
    null = translate({"n": None})
    assert {"term": {"facts": fact("z", ("n",))}} in null["bool"]["should"]  # type: ignore[index]


def test_negations_are_must_not() -> None:
    assert translate({"n": {"$ne": 5}}) == {"bool": {"must_not": [translate({"n": 5})]}}
    assert translate({"n": {"$nin": []}}) == MATCH_ALL
    assert translate({"n": {"$in": []}}) == MATCH_NONE


def test_integer_range_bounds_are_exact() -> None:
    code = path_code(("n",))
    gt = translate({"n": {"$gt": 5.5}})
    integer_part = gt["bool"]["should"][0]  # type: ignore[index]
    assert integer_part == {"range": {"int": {"gte": f"{code}:{encode_int(6)}", "lt": f"{code};"}}}


def test_encodings_sort_as_numbers() -> None:
    ints = [-(2**63), -5, 0, 7, 2**53 + 1, 2**63 - 1]
    assert sorted(ints, key=encode_int) == ints
    floats = [-1e300, -2.5, -1e-300, 0.0, 1e-300, 0.5, 3.25, 1e20, 1e300]
    assert sorted(floats, key=encode_double) == floats
    assert encode_double(-0.0) == encode_double(0.0)


def test_elem_match_is_a_nested_query() -> None:
    clause = translate({"items": {"$elemMatch": {"k": 1, "v": "x"}}})
    nested = clause["nested"]  # type: ignore[index]
    assert nested["path"] == "elems"
    assert {"term": {"elems.p": path_code(("items",))}} in nested["query"]["bool"]["filter"]


@pytest.mark.parametrize(
    "flt",
    [
        {"s": {"$regex": "a"}},
        {"s": {"$contains": "a"}},
        {"n": 2**64 + 1},
        {"s": {"$gt": "x" * 5000}},
        {"a": {"$elemMatch": {"$gt": 1}}},
        {
            "a": {
                "$elemMatch": {
                    "b": {
                        "$elemMatch": {
                            "c": {"$elemMatch": {"d": {"$elemMatch": {"e": {"$elemMatch": {"f": 1}}}}}}
                        }
                    }
                }
            }
        },
    ],
    ids=[
        "regex",
        "contains",
        "int beyond int64",
        "long string range",
        "scalar elemMatch",
        "elemMatch depth 5",
    ],
)
def test_what_has_no_exact_translation_is_refused(flt: dict[str, object]) -> None:
    with pytest.raises(UnsupportedFilterError):
        translate(flt)
