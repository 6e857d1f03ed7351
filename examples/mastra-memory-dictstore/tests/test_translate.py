"""Unit tests of the translator: parse a filter, compile it, and try the predicate on plain dicts."""

from __future__ import annotations

from typing import Any

import pytest
from mastra_memory_dictstore.translate import DictStoreTranslator

from mastra_memory.errors import UnsupportedFilterError
from mastra_memory.filters import parse

RECORDS: dict[str, dict[str, Any]] = {
    "r1": {"n": 5, "s": "apple", "tags": ["a", "b"], "ok": True},
    "r2": {"n": 10, "s": "Banana", "tags": ["b"], "ok": False, "items": [{"k": 1}, {"k": 2}]},
    "r3": {"n": None, "s": "cherry", "tags": []},
    "r4": {"s": "date", "nested": {"x": 1.0}},
    "r5": {"n": "7", "tags": ["a", "c"], "ok": 1},
}


def matching(flt: dict[str, Any]) -> set[str]:
    node = parse(flt)
    assert node is not None
    predicate = DictStoreTranslator().translate(node)
    return {rid for rid, metadata in RECORDS.items() if predicate(metadata)}


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        ({"n": 5}, {"r1"}),
        ({"n": 5.0}, {"r1"}),
        ({"n": None}, {"r3", "r4"}),  # null or missing
        ({"n": {"$ne": None}}, {"r1", "r2", "r5"}),
        ({"n": {"$ne": 5}}, {"r2", "r3", "r4", "r5"}),  # missing matches $ne
        ({"n": {"$gt": 5}}, {"r2"}),  # the string "7" is not a number
        ({"s": {"$lt": "b"}}, {"r1", "r2"}),  # code-point order: "B" < "a"
        ({"ok": True}, {"r1"}),  # True never equals 1
        ({"ok": 1}, {"r5"}),
        ({"tags": "b"}, {"r1", "r2"}),  # a list matches by element
        ({"tags": {"$in": ["c", "z"]}}, {"r5"}),
        ({"tags": {"$nin": ["b"]}}, {"r3", "r4", "r5"}),
        ({"tags": {"$in": []}}, set()),
        ({"nested.x": 1}, {"r4"}),
        ({"items.k": 2}, {"r2"}),  # implicit array traversal
        ({"$not": {"n": 5, "s": "apple"}}, {"r2", "r3", "r4", "r5"}),  # NOT(AND)
        ({"$nor": [{"n": 5}, {"s": "Banana"}]}, {"r3", "r4", "r5"}),  # NOT(OR)
        ({"$or": [{"n": 5, "s": "Banana"}]}, set()),  # AND inside an $or element
        ({"n": {"$not": {"$gt": 5}}}, {"r1", "r3", "r4", "r5"}),
        ({"s": {"$exists": False}}, {"r5"}),
        ({"n": {"$exists": True}}, {"r1", "r2", "r3", "r5"}),  # null is present
    ],
)
def test_declared_operators_follow_the_spec(flt: dict[str, Any], expected: set[str]) -> None:
    assert matching(flt) == expected


def test_exists_treats_an_empty_list_as_absent() -> None:
    """The declared deviation ``exists-empty-list``: r3's ``tags: []`` reads as absent."""
    assert matching({"tags": {"$exists": True}}) == {"r1", "r2", "r5"}
    assert matching({"tags": {"$exists": False}}) == {"r3", "r4"}


@pytest.mark.parametrize(
    ("flt", "operator"),
    [
        ({"s": {"$regex": "^a"}}, "$regex"),
        ({"s": {"$contains": "an"}}, "$contains"),
        ({"items": {"$elemMatch": {"k": 1}}}, "$elemMatch"),
        ({"tags": {"$size": 2}}, "$size"),
        ({"tags": {"$all": ["a"]}}, "$all"),
        ({"$or": [{"n": 5}, {"tags": {"$size": 0}}]}, "$size"),  # nested inside a supported operator
    ],
)
def test_undeclared_operators_raise(flt: dict[str, Any], operator: str) -> None:
    node = parse(flt)
    assert node is not None
    with pytest.raises(UnsupportedFilterError) as info:
        DictStoreTranslator().translate(node)
    assert info.value.operator == operator
    assert info.value.adapter == "dictstore"
