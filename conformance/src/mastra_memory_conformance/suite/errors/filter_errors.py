"""Filters refused before any I/O (docs/spec.md §2.6, §2.7, §3.1): every ``FilterError`` phrase of §2.6,
one error listing every problem, unknown ``query`` options, and ``UnsupportedFilterError`` for each
filter the manifest rules out.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any, Final

import pytest

from mastra_memory.errors import FilterError, UnsupportedFilterError, ValidationError
from mastra_memory.filters import ALL_OPERATORS
from mastra_memory.vector import MastraVector

from ...datasets import query_vector
from ...plugin import set_item
from ...report import Outcome
from .. import IndexUnderTest, VectorSuiteBase, expect, expected_error_id
from .base import HookCounter, assert_counted, index_state, seed_index

__all__ = ["DEVIATION_FILTERS", "INVALID_FILTERS", "OPERATOR_FILTERS", "FilterErrorsSuite"]

# --- one example filter per operator -----------------------------------------------------------------

#: A filter whose operators are the named one plus, where unavoidable, ``$eq``/``$and``.
OPERATOR_FILTERS: Final[dict[str, dict[str, Any]]] = {
    "$eq": {"category": {"$eq": "home"}},
    "$ne": {"category": {"$ne": "home"}},
    "$gt": {"price": {"$gt": 10}},
    "$gte": {"price": {"$gte": 10}},
    "$lt": {"price": {"$lt": 10}},
    "$lte": {"price": {"$lte": 10}},
    "$in": {"category": {"$in": ["home"]}},
    "$nin": {"category": {"$nin": ["home"]}},
    "$all": {"tags": {"$all": ["sale"]}},
    "$size": {"tags": {"$size": 1}},
    "$exists": {"description": {"$exists": True}},
    "$contains": {"description": {"$contains": "novel"}},
    "$regex": {"name": {"$regex": "^Product"}},
    "$elemMatch": {"reviews": {"$elemMatch": {"score": {"$gte": 5}}}},
    "$not": {"price": {"$not": {"$gt": 10}}},
    "$and": {"$and": [{"category": "home"}]},
    "$or": {"$or": [{"category": "home"}]},
    "$nor": {"$nor": [{"category": "home"}]},
}
assert set(OPERATOR_FILTERS) == ALL_OPERATORS, "every operator needs an example filter"

#: Filters that a declared deviation makes unsupported, by deviation code.
DEVIATION_FILTERS: Final[dict[str, dict[str, Any]]] = {
    "no-string-ranges": {"name": {"$gt": "Product C"}},
    "int64-range": {"price": 2**63 + 1},
}

#: (label, filter, phrase the FilterError message starts with) — every row of docs/spec.md §2.6.
INVALID_FILTERS: Final[list[tuple[str, Any, str]]] = [
    ("unknown operator", {"price": {"$foo": 1}}, "Unsupported operator: $foo"),
    ("field operator at the root", {"$gt": 1}, "Invalid top-level operator: $gt"),
    (
        "logical below field level",
        {"price": {"$and": [{"a": 1}]}},
        "Logical operator $and cannot be used at field level: price",
    ),
    (
        "bare operator in a logical list",
        {"$and": [{"$gt": 1}]},
        "Logical operators must contain field conditions, not direct operators: $and.0",
    ),
    ("$not not a dict", {"$not": 5}, "$not operator requires an object"),
    ("$not empty", {"$not": {}}, "$not operator cannot be empty"),
    (
        "$elemMatch not a dict",
        {"reviews": {"$elemMatch": 5}},
        "$elemMatch requires an object with conditions",
    ),
    ("empty logical list", {"$or": []}, "$or requires a non-empty list: $or"),
    ("logical not a list", {"$nor": {"a": 1}}, "$nor requires a non-empty list: $nor"),
    ("$in not a list", {"price": {"$in": 5}}, "$in requires a list: price"),
    ("list where a scalar is required", {"price": {"$eq": [1]}}, "$eq requires a scalar operand: price"),
    ("dict in $in", {"price": {"$in": [{"a": 1}]}}, "$in requires a scalar operand: price"),
    ("bad range operand", {"price": {"$gt": None}}, "$gt requires a number, string or datetime: price"),
    ("bool range operand", {"price": {"$lte": True}}, "$lte requires a number, string or datetime: price"),
    ("$exists not a bool", {"price": {"$exists": 1}}, "$exists requires a boolean: price"),
    ("$size negative", {"tags": {"$size": -1}}, "$size requires a non-negative integer: tags"),
    ("$regex not a string", {"name": {"$regex": 5}}, "$regex requires a string: name"),
    ("$options without $regex", {"name": {"$options": "i"}}, "$options requires $regex: name"),
    ("unsupported regex option", {"name": {"$regex": "a", "$options": "x"}}, "Unsupported regex option: x"),
    ("inline regex flag", {"name": {"$regex": "(?i)product"}}, "Unsupported regex construct: (?i"),
    ("shorthand class", {"name": {"$regex": "\\d"}}, "Unsupported regex construct: \\d"),
    ("empty condition", {"category": {}}, "Empty object is not a valid condition: category"),
    ("mixed keys", {"price": {"$gt": 1, "cents": 5}}, "Cannot mix operators and field names: price"),
    ("NaN", {"price": math.nan}, "Invalid number: price"),
    ("infinity", {"price": {"$lt": math.inf}}, "Invalid number: price"),
    ("empty path segment", {"a..b": 1}, "Invalid field path: a..b"),
    ("not a dict", [{"price": 1}], "Filter must be a dict"),
]


def _filter_calls(
    store: MastraVector, index: str, query: list[float], flt: Any
) -> list[Callable[[], Awaitable[Any]]]:
    """Every public call that takes a filter: query, update by filter, delete by filter."""
    return [
        lambda: store.query(index, query, top_k=4, filter=flt),
        lambda: store.update_vector(index, filter=flt, update={"metadata": {"x": 1}}),
        lambda: store.delete_vectors(index, filter=flt),
    ]


@pytest.mark.asyncio
class FilterErrorsSuite(VectorSuiteBase):
    """§2.6, §2.7: refused filters and options, before any hook runs (a part of ``ErrorsSuite``)."""

    @pytest.mark.parametrize(
        ("label", "flt", "phrase"), [pytest.param(*f, id=f[0].replace(" ", "-")) for f in INVALID_FILTERS]
    )
    async def test_invalid_filter_phrase_before_any_io(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest, label: str, flt: Any, phrase: str
    ) -> None:
        """§2.6: the core's FilterError phrase, from query, update and delete by filter, before any hook."""
        set_item(request, "FilterError phrases")
        before = await seed_index(idx)
        query = query_vector(idx.dimension)
        with HookCounter(idx.store) as counter:
            for call in _filter_calls(idx.store, idx.name, query, flt):
                with pytest.raises(FilterError) as raised:
                    await call()
                assert not isinstance(raised.value, UnsupportedFilterError), f"{label}: {raised.value!r}"
                assert str(raised.value).startswith(phrase), (
                    f"{label}: expected {phrase!r}, got {str(raised.value)!r}"
                )
                assert raised.value.problems[0].startswith(phrase), raised.value.problems
            assert not counter.calls, (
                f"{label}: FilterError must come before any I/O, but hooks ran: {dict(counter.calls)}"
            )
            await assert_counted(counter, idx)
        assert await index_state(idx) == before

    async def test_unknown_query_options_are_refused_before_any_io(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest
    ) -> None:
        """§3.1: a ``query`` keyword the store does not declare in ``query_options`` raises ValidationError
        (QUERY_INVALID_ARGS) naming it, before any hook runs — also for an index that does not exist,
        whose lookup would be I/O; a declared option is accepted."""
        set_item(request, "unknown query options")
        await seed_index(idx)
        query = query_vector(idx.dimension)
        with HookCounter(idx.store) as counter:
            for index in (idx.name, f"{idx.name}_missing"):
                with pytest.raises(ValidationError) as raised:
                    await idx.store.query(index, query, top_k=1, not_an_option=1)
                assert raised.value.id == expected_error_id(idx.capabilities, "QUERY", "INVALID_ARGS"), (
                    raised.value
                )
                assert "not_an_option" in str(raised.value), str(raised.value)
            assert not counter.calls, (
                f"unknown options must fail before any I/O; hooks ran: {dict(counter.calls)}"
            )
        for option in sorted(type(idx.store).query_options & {"exact", "ef", "probes"}):
            value: Any = True if option == "exact" else 64
            hits = await idx.store.query(idx.name, query, top_k=1, **{option: value})
            assert len(hits) == 1, f"query with the declared option {option}={value!r} returned {hits}"

    async def test_every_problem_is_reported_at_once(self, idx: IndexUnderTest) -> None:
        """§2.6: one FilterError lists every problem, joined with ", "."""
        await seed_index(idx)
        flt = {"price": {"$gt": None}, "tags": {"$size": -1}, "$foo": 1}
        with pytest.raises(FilterError) as raised:
            await idx.store.query(idx.name, query_vector(idx.dimension), filter=flt)
        problems = raised.value.problems
        assert len(problems) == 3, problems
        assert str(raised.value) == ", ".join(problems)
        assert {p.split(":")[0] for p in problems} == {
            "$gt requires a number, string or datetime",
            "$size requires a non-negative integer",
            "Unsupported operator",
        }

    async def test_refused_filters_raise_before_any_io(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest, outcome: Outcome
    ) -> None:
        """§2.7: every filter the target must refuse — undeclared operators and filters a declared deviation
        rules out — raises UnsupportedFilterError from query, update and delete before any hook runs.

        On a target that declares every operator and no such deviation the set is empty; the test then
        still proves the instrumentation with an invalid filter, which must also fail before any hook.
        """
        set_item(request, "UnsupportedFilterError before I/O")
        before = await seed_index(idx)
        records = {rid: metadata for rid, metadata, _ in before[1]}
        refused: list[tuple[dict[str, Any], frozenset[str], tuple[str, ...]]] = []
        for flt in [*OPERATOR_FILTERS.values(), *DEVIATION_FILTERS.values()]:
            expectation = expect(idx.capabilities, flt, records)
            if expectation.kind == "unsupported":
                refused.append((flt, expectation.operators, expectation.deviations))
        query = query_vector(idx.dimension)
        with HookCounter(idx.store) as counter:
            for flt, operators, deviations in refused:
                for call in _filter_calls(idx.store, idx.name, query, flt):
                    with pytest.raises(UnsupportedFilterError) as raised:
                        await call()
                    error = raised.value
                    assert error.operator in operators, (
                        f"{flt!r}: names {error.operator}, not {sorted(operators)}"
                    )
                    assert error.adapter == idx.capabilities.name, f"{flt!r}: names adapter {error.adapter!r}"
                    assert not counter.calls, f"{flt!r}: hooks ran before the refusal: {dict(counter.calls)}"
                if deviations:
                    outcome.deviation(deviations[0], f"{flt!r} refused before any I/O")
                else:
                    outcome.unsupported(sorted(operators)[0], f"{flt!r} refused before any I/O")
            with pytest.raises(FilterError):
                await idx.store.query(idx.name, query, top_k=4, filter={"price": {"$bogus": 1}})
            assert not counter.calls, f"hooks ran before an invalid filter was refused: {dict(counter.calls)}"
            await assert_counted(counter, idx)
        assert await index_state(idx) == before
