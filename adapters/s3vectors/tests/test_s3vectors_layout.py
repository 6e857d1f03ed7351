"""How metadata is stored: the verbatim copy, the typed keys, the service's budget."""

from __future__ import annotations

import json
from typing import Any

from mastra_memory_s3vectors.layout import (
    META_KEY,
    budget_problem,
    decode,
    encode,
    key,
    list_problem,
    number,
)

SKIP = frozenset({"content"})


def test_typed_keys_and_the_verbatim_copy() -> None:
    meta = {"s": "x", "n": 2.0, "f": 0.5, "b": False, "z": None, "o": {"k": 1}, "e": {}, "l": ["a"], "el": []}
    out = encode(meta, SKIP)
    assert out["s:s"] == "x"
    assert out["n:n"] == 2
    assert isinstance(out["n:n"], int)
    assert out["n:f"] == 0.5
    assert out["b:b"] is False
    assert out["z:z"] is True
    assert out["o:o"] is True
    assert out["n:o.k"] == 1
    assert out["o:e"] is True
    assert out["l:l"] is True
    assert out["s:l"] == ["a"]
    assert out["l:el"] is True
    assert "s:el" not in out
    assert json.loads(out[META_KEY]) == meta
    assert decode(out) == meta  # the round trip is the copy: 2.0 stays a float, nulls and {} stay


def test_non_filterable_keys_are_only_in_the_copy() -> None:
    out = encode({"content": "long text", "thread_id": "t"}, SKIP)
    assert not any(k.endswith(":content") for k in out)
    assert decode(out)["content"] == "long text"


def test_paths_are_escaped_and_long_ones_hashed() -> None:
    assert key("s", ("a.b",)) != key("s", ("a", "b"))
    assert key("s", ("a", "b")) == "s:a.b"
    assert key("s", ("#x",)) != key("s", ("x" * 100,))
    long = key("s", ("k" * 200,))
    assert long.startswith("s:#")
    assert len(long) == 2 + 1 + 32


def test_numbers() -> None:
    assert number(5.0) == 5
    assert isinstance(number(5.0), int)
    assert isinstance(number(1e300), float)
    assert isinstance(number(0.5), float)


def test_lists_must_hold_strings_and_ints_fit_int64() -> None:
    assert list_problem({"l": ["a", "b"]}, SKIP) is None
    assert "string-list-only" in (list_problem({"l": [1]}, SKIP) or "")
    assert "int64-range" in (list_problem({"x": {"y": 2**63}}, SKIP) or "")
    assert list_problem({"content": [1, {"a": 2}]}, SKIP) is None  # non-filterable: only in the copy


def test_budget() -> None:
    assert budget_problem(encode({"a": "x" * 1900}, SKIP)) is None
    assert "2048" in (budget_problem(encode({"a": "x" * 2100}, SKIP)) or "")
    assert budget_problem(encode({"content": "x" * 30_000}, SKIP)) is None
    assert "40960" in (budget_problem(encode({"content": "x" * 41_000}, SKIP)) or "")
    assert "50" in (budget_problem(encode({f"k{i}": i for i in range(50)}, SKIP)) or "")


def test_a_long_key_does_not_use_up_the_budget_once_per_path() -> None:
    # The kit's hostile record (shrunk by hypothesis): before long paths were hashed it took 2133 filterable
    # bytes and was refused.
    long = "k" * 200
    inner: dict[str, Any] = {"a": None, "tags": -2, "it'em": True}
    record: dict[str, Any] = {
        "a": None,
        long: {"a": [], "it'em": None, "😀": {"a": None, "it'em": None, 'qu"ote': inner}},
    }
    assert budget_problem(encode(record, SKIP)) is None
