"""Unit tests of the SQLite filter translator: AST in, SQL out, run on a real SQLite connection."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

from mastra_memory.errors import UnsupportedFilterError
from mastra_memory.filters.ast import And, Comparison, ElemMatch, Nor, Not, Or, Regex
from mastra_memory.filters.evaluate import evaluate
from mastra_memory.filters.parse import parse
from mastra_memory.stores.sqlite.capabilities import SQLITE_CAPABILITIES
from mastra_memory.stores.sqlite.translate import (
    SqlFragment,
    SQLiteFilterTranslator,
    regexp,
    register_sql_functions,
)

HOSTILE = ("'; DROP TABLE t; --", 'x" OR 1=1 --', "a\\b", "$.a[0]", '{"a":1}', "😀", "\u202eRTL")
# Field names cannot start with "$" and dots split paths; everything else is fair game.
HOSTILE_KEYS = ("'; DROP TABLE t; --", 'x" OR 1=1 --', "a\\b", "a$[0]", '{"a":1}', "😀", "\u202eRTL")


@pytest.fixture
def db() -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(":memory:")
    register_sql_functions(conn)
    conn.execute("CREATE TABLE t (id TEXT PRIMARY KEY, metadata TEXT NOT NULL)")
    try:
        yield conn
    finally:
        conn.close()


def store(conn: sqlite3.Connection, records: dict[str, dict[str, Any]]) -> None:
    conn.executemany(
        "INSERT INTO t VALUES (?, ?)", [(k, json.dumps(v, ensure_ascii=False)) for k, v in records.items()]
    )


def translate(flt: Any) -> SqlFragment:
    node = parse(flt)
    assert node is not None
    return SQLiteFilterTranslator().translate(node)


def matching(conn: sqlite3.Connection, flt: Any) -> set[str]:
    fragment = translate(flt)
    return {r[0] for r in conn.execute(f"SELECT id FROM t WHERE {fragment.sql}", fragment.params)}


def truth_values(conn: sqlite3.Connection, flt: Any) -> list[Any]:
    fragment = translate(flt)
    return [r[0] for r in conn.execute(f"SELECT ({fragment.sql}) FROM t", fragment.params)]


# --- injection: values and names are data ----------------------------------------------------------


@pytest.mark.parametrize("text", HOSTILE)
def test_values_are_always_bound_parameters(text: str) -> None:
    for flt in (
        {"f": text},
        {"f": {"$gt": text}},
        {"f": {"$in": [text, 1]}},
        {"f": {"$regex": re.escape(text)}},
    ):
        fragment = translate(flt)
        assert text not in fragment.sql
        assert text in fragment.params.values() or re.escape(text) in fragment.params.values()


@pytest.mark.parametrize("key", HOSTILE_KEYS)
def test_field_names_never_reach_the_sql_text(key: str) -> None:
    fragment = translate({key: 1, f"a.{key}.b": {"$exists": True}})
    assert key not in fragment.sql
    assert all(re.fullmatch(r"f\d+", name) for name in fragment.params)


def test_identifier_keys_are_spelled_inline_for_expression_indexes() -> None:
    fragment = translate({"thread_id": "t1"})
    assert """json_extract(metadata, '$."thread_id"')""" in fragment.sql
    assert list(fragment.params.values()).count("t1") == 2  # the exact test and the index hint


def test_keys_that_differ_only_by_json_escaping_stay_apart(db: sqlite3.Connection) -> None:
    # SQLite before 3.45 compares path labels with the *escaped* JSON text, so 'a\"b' as a path label
    # would find the key a"b. The translator must look such keys up by their decoded names.
    store(
        db,
        {"quote": {'a"b': 1}, "backslash_quote": {'a\\"b': 1}, "backslash": {"a\\b": 1}, "nl": {"a\nb": 1}},
    )
    assert matching(db, {'a"b': 1}) == {"quote"}
    assert matching(db, {'a\\"b': 1}) == {"backslash_quote"}
    assert matching(db, {"a\\b": 1}) == {"backslash"}
    assert matching(db, {"a\nb": 1}) == {"nl"}
    assert matching(db, {"a\\nb": 1}) == set()
    assert matching(db, {'a"b': {"$exists": False}}) == {"backslash_quote", "backslash", "nl"}


def test_json_path_syntax_in_names_is_not_interpreted(db: sqlite3.Connection) -> None:
    store(db, {"r1": {"a[0]": 1, "a": [5], "*": 3}, "r2": {"a": [1]}})
    assert matching(db, {"a[0]": 1}) == {"r1"}
    assert matching(db, {"*": 3}) == {"r1"}
    assert matching(db, {"a": 1}) == {"r2"}


# --- types, nulls, arrays --------------------------------------------------------------------------


def test_booleans_are_not_numbers(db: sqlite3.Connection) -> None:
    store(
        db,
        {
            "true": {"f": True},
            "one": {"f": 1},
            "one_float": {"f": 1.0},
            "zero": {"f": 0},
            "false": {"f": False},
        },
    )
    assert matching(db, {"f": 1}) == {"one", "one_float"}
    assert matching(db, {"f": True}) == {"true"}
    assert matching(db, {"f": {"$in": [True, 0]}}) == {"true", "zero"}
    assert matching(db, {"f": {"$gte": 0}}) == {"one", "one_float", "zero"}
    assert matching(db, {"f": {"$ne": False}}) == {"true", "one", "one_float", "zero"}


def test_strings_order_by_code_point(db: sqlite3.Connection) -> None:
    # UTF-16 order would put the astral emoji below U+FFFF; Python and the spec use code points.
    store(db, {"upper": {"s": "B"}, "lower": {"s": "a"}, "bmp": {"s": "\uffff"}, "astral": {"s": "😀"}})
    assert matching(db, {"s": {"$lt": "a"}}) == {"upper"}
    assert matching(db, {"s": {"$gt": "\uffff"}}) == {"astral"}
    assert matching(db, {"s": {"$gte": "a", "$lt": "😀"}}) == {"lower", "bmp"}


def test_null_missing_and_empty_list(db: sqlite3.Connection) -> None:
    store(db, {"null": {"f": None}, "missing": {}, "empty": {"f": []}, "null_in_list": {"f": [1, None]}})
    assert matching(db, {"f": None}) == {"null", "missing", "null_in_list"}
    assert matching(db, {"f": {"$ne": None}}) == {"empty"}
    assert matching(db, {"f": {"$exists": True}}) == {"null", "empty", "null_in_list"}
    assert matching(db, {"f": {"$size": 0}}) == {"empty"}
    assert matching(db, {"f": {"$nin": [1]}}) == {"null", "missing", "empty"}


def test_implicit_array_traversal_follows_the_evaluator(db: sqlite3.Connection) -> None:
    records: dict[str, dict[str, Any]] = {
        "objects": {"a": [{"b": 1}, {"c": 2}]},
        "empty": {"a": []},
        "scalars": {"a": [1, 2]},
        "scalar": {"a": 5},
        "nested": {"a": {"b": [3, None]}},
        "lists_of_lists": {"a": [[{"b": 1}]]},
        "deep": {"a": [{"b": [{"c": "x"}]}]},
    }
    store(db, records)
    for flt in (
        {"a.b": 1},
        {"a.b": None},
        {"a.b": {"$exists": False}},
        {"a.b": {"$ne": 1}},
        {"a.b.c": "x"},
        {"a.b": {"$size": 2}},
        {"a.b": {"$gt": 2}},
    ):
        expected = {k for k, v in records.items() if evaluate(flt, v)}
        assert matching(db, flt) == expected, flt


def test_elem_match_document_and_value_forms(db: sqlite3.Connection) -> None:
    records: dict[str, dict[str, Any]] = {
        "docs": {"xs": [{"k": 1, "v": "a"}, {"k": 2, "v": "b"}]},
        "scalars": {"xs": [1, 5, "k"]},
        "nested": {"xs": [[1, 2], [{"k": 1}]]},
        "not_a_list": {"xs": {"k": 1}},
    }
    store(db, records)
    for flt in (
        {"xs": {"$elemMatch": {"k": 1, "v": "a"}}},
        {"xs": {"$elemMatch": {"k": 2, "v": "a"}}},
        {"xs": {"$elemMatch": {"k": {"$ne": 1}}}},
        {"xs": {"$elemMatch": {"k": None}}},
        {"xs": {"$elemMatch": {"$gte": 2}}},
        {"xs": {"$elemMatch": {"$eq": 1}}},
        {"xs": {"$elemMatch": {"$size": 2}}},
        {"xs": {"$elemMatch": {"$elemMatch": {"k": 1}}}},
        {"xs": {"$elemMatch": {"$not": {"$gt": 1}}}},
    ):
        expected = {k for k, v in records.items() if evaluate(flt, v)}
        assert matching(db, flt) == expected, flt


def test_every_fragment_is_zero_or_one_never_null(db: sqlite3.Connection) -> None:
    store(db, {"full": {"f": [1, "a", None, {"g": 1}], "s": "x"}, "empty": {}, "null": {"f": None}})
    for flt in (
        {"f": 1},
        {"f": None},
        {"f.g": {"$gt": 0}},
        {"f": {"$regex": "a"}},
        {"f": {"$contains": "a"}},
        {"f": {"$size": 4}},
        {"f": {"$all": [1, None]}},
        {"f": {"$elemMatch": {"g": 1}}},
        {"s": {"$in": ["x", 2, True, None]}},
        {"$nor": [{"f": 1}, {"s": {"$exists": False}}]},
    ):
        assert set(truth_values(db, flt)) <= {0, 1}, flt


def test_regex_function_uses_python_search_with_the_options() -> None:
    assert regexp("^b", "", "abc") == 0
    assert regexp("b", "", "abc") == 1
    assert regexp("^B", "im", "a\nbc") == 1
    assert regexp("a.b", "", "a\nb") == 0
    assert regexp("a.b", "s", "a\nb") == 1
    assert regexp("a", "", 1) == 0
    assert regexp("a", "", None) == 0


# --- limits ----------------------------------------------------------------------------------------


def test_long_lists_travel_as_one_parameter(db: sqlite3.Connection) -> None:
    store(db, {f"r{i}": {"n": i, "s": str(i)} for i in range(50)})
    # 1,000 values: the longest list a filter may hold (docs/spec.md §2.10).
    values: list[Any] = list(range(0, 1_000, 2)) + [str(i) for i in range(20_000, 20_500)]
    fragment = translate({"n": {"$in": values}})
    assert len(fragment.params) < 10
    assert matching(db, {"n": {"$in": values}}) == {f"r{i}" for i in range(0, 50, 2)}
    assert matching(db, {"n": {"$nin": values}}) == {f"r{i}" for i in range(1, 50, 2)}
    assert matching(db, {"s": {"$in": ["7", "a\x00b", *[str(i) for i in range(100, 200)]]}}) == {"r7"}


def test_many_conjuncts_stay_within_the_expression_depth(db: sqlite3.Connection) -> None:
    store(db, {"r": {"tags": [f"t{i}" for i in range(400)]}})
    assert matching(db, {"tags": {"$all": [f"t{i}" for i in range(400)]}}) == {"r"}
    assert matching(db, {"$or": [{"x": i} for i in range(500)] + [{"tags": "t5"}]}) == {"r"}


def test_integers_beyond_64_bits(db: sqlite3.Connection) -> None:
    store(db, {"float": {"n": 2.0**64}, "max": {"n": 2**63 - 1}})
    assert matching(db, {"n": 2**64}) == {"float"}
    assert matching(db, {"n": {"$gt": 2**63}}) == {"float"}
    assert matching(db, {"n": 2**63 - 1}) == {"max"}
    with pytest.raises(UnsupportedFilterError, match="beyond 64 bits"):
        translate({"n": 2**64 + 1})


def test_unpaired_surrogates_cannot_be_bound() -> None:
    # parse refuses such text first (docs/spec.md §2.10); a hand-built node still meets this guard.
    with pytest.raises(UnsupportedFilterError, match="surrogates"):
        SQLiteFilterTranslator().translate(Comparison(("s",), "$eq", "\ud800"))


def test_too_deep_a_filter_is_unsupported_before_any_io() -> None:
    # Too deep for the parser stack of SQLite 3.40 and for the expression depth limit of later versions.
    deep: dict[str, Any] = {"x": {"$elemMatch": {"k": 1}}}
    for _ in range(10):  # within the parse-time depth limit (docs/spec.md §2.10), too deep for SQLite
        deep = {"x": {"$elemMatch": deep}}
    with pytest.raises(UnsupportedFilterError, match="nests too deeply for SQLite") as err:
        translate(deep)
    assert err.value.adapter == "sqlite"
    assert translate({".".join(["a"] * 60): 1}).sql
    with pytest.raises(UnsupportedFilterError, match="64 tables"):
        translate({".".join(["a"] * 70): 1})


# --- the manifest check comes first ----------------------------------------------------------------


def test_translator_checks_the_manifest_before_translating() -> None:
    class RegexFree(SQLiteFilterTranslator):
        capabilities = SQLITE_CAPABILITIES.model_copy(
            update={"native_operators": SQLITE_CAPABILITIES.native_operators - {"$regex"}}
        )

    node = And(
        (
            Comparison(("a",), "$eq", 1),
            Or((Regex(("b",), "x"), Nor((Not(ElemMatch(("c",), Comparison((), "$gt", 1))),)))),
        )
    )
    with pytest.raises(UnsupportedFilterError, match=r"\$regex"):
        RegexFree().translate(node)
    assert SQLiteFilterTranslator().translate(node).sql
