"""Errors and bad input (docs/spec.md §2.6, §2.7, §3.3): typed errors, exact phrases, ids, and no I/O.

``ErrorsSuite`` checks every validation row of §3.3 (error class, the id
``MASTRA_VECTOR_<STORE>_<OPERATION>_<STATUS>`` in upper snake case, the message phrase), every
``FilterError`` phrase of §2.6, and that a filter the target must refuse — an undeclared operator, or one
a declared deviation rules out — raises ``UnsupportedFilterError`` **before any I/O**. It also holds the
§3.3 zero-vector rule: a cosine index refuses zero vectors on upsert (the whole call), update and query,
while the euclidean and dotproduct indexes a target declares store, score and return them.

"Before any I/O" is observed by instrumenting the adapter under test: :class:`HookCounter` wraps the
instance's backend hooks (``_query``, ``_upsert``, ``_describe_index``, ...; every backend call of the
``MastraVector`` template goes through one) with counters that delegate to the real hooks, and the tests
assert that no hook ran. Every test also proves the counter is live (a valid call afterwards counts) and
that the bad input changed nothing stored (count and a full query, before and after).

Why one module of this size: a module under ``suite`` is one conformance domain, and the report names a
test's domain after its module, so splitting it would split the domain's row in the conformance matrix.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final

import pytest

from mastra_memory.capabilities import AdapterCapabilities, Metric
from mastra_memory.errors import (
    FilterError,
    IndexDimensionMismatchError,
    MastraMemoryError,
    UnsupportedFilterError,
    ValidationError,
)
from mastra_memory.filters import ALL_OPERATORS
from mastra_memory.vector import MIN_COSINE_NORM, MastraVector

from ..datasets import make_vector, query_vector
from ..plugin import set_item
from ..report import Outcome
from . import Item, declares, expect, expected_error_id, load, query_limit, settle

__all__ = ["HOOKS", "ErrorsSuite", "HookCounter"]

#: The backend hooks of the ``MastraVector`` template.
HOOKS: Final = (
    "_create_index",
    "_upsert",
    "_query",
    "_list_indexes",
    "_describe_index",
    "_delete_index",
    "_update_by_id",
    "_update_by_filter",
    "_delete_by_ids",
    "_delete_by_filter",
)
_WRITES: Final = frozenset(HOOKS) - {"_query", "_list_indexes", "_describe_index"}
_ID: Final = re.compile(r"^MASTRA_VECTOR_[A-Z0-9]+(?:_[A-Z0-9]+)*$")


class HookCounter:
    """Counts calls of an adapter instance's backend hooks while active (a context manager).

    The real hooks still run: each is wrapped by an instance attribute that counts and delegates.
    """

    def __init__(self, store: MastraVector) -> None:
        self.store = store
        self.calls: Counter[str] = Counter()

    def _wrap(self, name: str) -> Callable[..., Any]:
        original: Callable[..., Any] = getattr(self.store, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return original(*args, **kwargs)

        return counted

    def __enter__(self) -> HookCounter:
        for name in HOOKS:
            setattr(self.store, name, self._wrap(name))
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        for name in HOOKS:
            if name in vars(self.store):
                delattr(self.store, name)

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    @property
    def writes(self) -> int:
        return sum(n for name, n in self.calls.items() if name in _WRITES)


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


@dataclass(frozen=True)
class Row:
    """One §3.3 validation row: the call, the error class, ``OPERATION``, ``STATUS`` and the phrase."""

    label: str
    call: Callable[[MastraVector, str, int], Awaitable[Any]]
    error: type[MastraMemoryError]
    operation: str
    status: str
    phrase: str
    reads_allowed: bool = False


def _vec(dim: int, seed: int = 1) -> list[float]:
    return make_vector(seed, dim)


def _bad(value: object) -> Any:
    """A deliberately ill-typed argument (the validation under test is what rejects it)."""
    return value


Call = Callable[[MastraVector, str, int], Awaitable[Any]]
_DIMENSION = "dimension must be a positive integer"
_TOP_K = "top_k must be a positive integer"
_IDS = "ids must be non-empty strings"


def _row(
    label: str,
    operation: str,
    status: str,
    phrase: str,
    call: Call,
    error: type[MastraMemoryError] = ValidationError,
    reads_allowed: bool = False,
) -> Row:
    return Row(label, call, error, operation, status, phrase, reads_allowed)


#: Every row of docs/spec.md §3.3 that a call can trigger (limits of the manifest are in their own test).
ROWS: Final[list[Row]] = [
    _row(
        "no vectors", "UPSERT", "EMPTY_VECTORS", "vectors must not be empty", lambda s, i, d: s.upsert(i, [])
    ),
    _row(
        "vectors None",
        "UPSERT",
        "EMPTY_VECTORS",
        "vectors must not be empty",
        lambda s, i, d: s.upsert(i, _bad(None)),
    ),
    _row(
        "metadata length",
        "UPSERT",
        "METADATA_LENGTH_MISMATCH",
        "metadata length",
        lambda s, i, d: s.upsert(i, [_vec(d), _vec(d, 2)], [{"a": 1}]),
    ),
    _row(
        "ids length",
        "UPSERT",
        "IDS_LENGTH_MISMATCH",
        "ids length",
        lambda s, i, d: s.upsert(i, [_vec(d)], ids=["a", "b"]),
    ),
    _row(
        "empty vector", "UPSERT", "INVALID_VECTOR", "vector [1]", lambda s, i, d: s.upsert(i, [_vec(d), []])
    ),
    _row(
        "vector not a list",
        "UPSERT",
        "INVALID_VECTOR",
        "vector [0]",
        lambda s, i, d: s.upsert(i, _bad(["abc"])),
    ),
    _row(
        "non-numeric component",
        "UPSERT",
        "INVALID_VECTOR",
        "vector [0][{last}]",
        lambda s, i, d: s.upsert(i, [_bad([*_vec(d)[:-1], "x"])]),
    ),
    _row(
        "NaN component",
        "UPSERT",
        "INVALID_VECTOR",
        "vector [1][0]",
        lambda s, i, d: s.upsert(i, [_vec(d), [math.nan] * d]),
    ),
    _row(
        "infinite component",
        "UPSERT",
        "INVALID_VECTOR",
        "vector [0][{last}]",
        lambda s, i, d: s.upsert(i, [[*_vec(d)[:-1], math.inf]]),
    ),
    _row(
        "bool component",
        "UPSERT",
        "INVALID_VECTOR",
        "vector [0][0]",
        lambda s, i, d: s.upsert(i, [[True] * d]),
    ),
    _row(
        "upsert dimension",
        "UPSERT",
        "DIMENSION_MISMATCH",
        "{index}",
        lambda s, i, d: s.upsert(i, [_vec(d + 1)]),
        IndexDimensionMismatchError,
        reads_allowed=True,
    ),
    _row(
        "query dimension",
        "QUERY",
        "DIMENSION_MISMATCH",
        "{index}",
        lambda s, i, d: s.query(i, _vec(d + 1)),
        IndexDimensionMismatchError,
        reads_allowed=True,
    ),
    _row(
        "update dimension",
        "UPDATE_VECTOR",
        "DIMENSION_MISMATCH",
        "{index}",
        lambda s, i, d: s.update_vector(i, id="v0", update={"vector": _vec(d + 1)}),
        IndexDimensionMismatchError,
        reads_allowed=True,
    ),
    _row("empty id", "UPSERT", "INVALID_ID", _IDS, lambda s, i, d: s.upsert(i, [_vec(d)], ids=[""])),
    _row(
        "id not a string", "UPSERT", "INVALID_ID", _IDS, lambda s, i, d: s.upsert(i, [_vec(d)], ids=_bad([7]))
    ),
    _row(
        "id of 513 characters",
        "UPSERT",
        "INVALID_ID",
        _IDS,
        lambda s, i, d: s.upsert(i, [_vec(d)], ids=["x" * 513]),
    ),
    _row("top_k 0", "QUERY", "INVALID_TOP_K", _TOP_K, lambda s, i, d: s.query(i, _vec(d), top_k=0)),
    _row("top_k negative", "QUERY", "INVALID_TOP_K", _TOP_K, lambda s, i, d: s.query(i, _vec(d), top_k=-3)),
    _row("top_k bool", "QUERY", "INVALID_TOP_K", _TOP_K, lambda s, i, d: s.query(i, _vec(d), top_k=True)),
    _row(
        "top_k float", "QUERY", "INVALID_TOP_K", _TOP_K, lambda s, i, d: s.query(i, _vec(d), top_k=_bad(2.0))
    ),
    _row(
        "top_k string", "QUERY", "INVALID_TOP_K", _TOP_K, lambda s, i, d: s.query(i, _vec(d), top_k=_bad("3"))
    ),
    _row(
        "update id and filter",
        "UPDATE_VECTOR",
        "INVALID_ARGS",
        "mutually exclusive",
        lambda s, i, d: s.update_vector(i, id="v0", filter={"n": 1}, update={"metadata": {}}),
    ),
    _row(
        "update neither",
        "UPDATE_VECTOR",
        "INVALID_ARGS",
        "Either id or filter must be provided",
        lambda s, i, d: s.update_vector(i, update={"metadata": {"a": 1}}),
    ),
    _row(
        "update nothing",
        "UPDATE_VECTOR",
        "INVALID_ARGS",
        "No updates provided",
        lambda s, i, d: s.update_vector(i, id="v0", update={}),
    ),
    _row(
        "update empty filter",
        "UPDATE_VECTOR",
        "INVALID_ARGS",
        "empty filter",
        lambda s, i, d: s.update_vector(i, filter={}, update={"metadata": {"a": 1}}),
    ),
    _row(
        "delete ids and filter",
        "DELETE_VECTORS",
        "INVALID_ARGS",
        "mutually exclusive",
        lambda s, i, d: s.delete_vectors(i, ids=["v0"], filter={"n": 1}),
    ),
    _row(
        "delete neither",
        "DELETE_VECTORS",
        "INVALID_ARGS",
        "Either filter or ids must be provided",
        lambda s, i, d: s.delete_vectors(i),
    ),
    _row(
        "delete empty ids",
        "DELETE_VECTORS",
        "INVALID_ARGS",
        "empty ids array",
        lambda s, i, d: s.delete_vectors(i, ids=[]),
    ),
    _row(
        "delete empty filter",
        "DELETE_VECTORS",
        "INVALID_ARGS",
        "empty filter",
        lambda s, i, d: s.delete_vectors(i, filter={}),
    ),
    _row(
        "dimension 0",
        "CREATE_INDEX",
        "INVALID_ARGS",
        _DIMENSION,
        lambda s, i, d: s.create_index(f"{i}_new", 0),
    ),
    _row(
        "dimension negative",
        "CREATE_INDEX",
        "INVALID_ARGS",
        _DIMENSION,
        lambda s, i, d: s.create_index(f"{i}_new", -4),
    ),
    _row(
        "dimension bool",
        "CREATE_INDEX",
        "INVALID_ARGS",
        _DIMENSION,
        lambda s, i, d: s.create_index(f"{i}_new", True),
    ),
    _row(
        "dimension string",
        "CREATE_INDEX",
        "INVALID_ARGS",
        _DIMENSION,
        lambda s, i, d: s.create_index(f"{i}_new", _bad("8")),
    ),
    _row(
        "unknown metric",
        "CREATE_INDEX",
        "INVALID_ARGS",
        "unsupported metric",
        lambda s, i, d: s.create_index(f"{i}_new", d, _bad("manhattan")),
    ),
    _row(
        "index name on create",
        "CREATE_INDEX",
        "INVALID_INDEX_NAME",
        "Bad Name!",
        lambda s, i, d: s.create_index("Bad Name!", d),
    ),
    _row(
        "index name on query",
        "QUERY",
        "INVALID_INDEX_NAME",
        "Bad Name!",
        lambda s, i, d: s.query("Bad Name!", _vec(d)),
    ),
    _row(
        "index name on upsert",
        "UPSERT",
        "INVALID_INDEX_NAME",
        "Bad Name!",
        lambda s, i, d: s.upsert("Bad Name!", [_vec(d)]),
    ),
    _row(
        "index name on describe",
        "DESCRIBE_INDEX",
        "INVALID_INDEX_NAME",
        "Bad Name!",
        lambda s, i, d: s.describe_index("Bad Name!"),
    ),
    _row(
        "index name on delete",
        "DELETE_INDEX",
        "INVALID_INDEX_NAME",
        "Bad Name!",
        lambda s, i, d: s.delete_index("Bad Name!"),
    ),
]


def _zero(dim: int) -> list[float]:
    return [0.0] * dim


def _tiny(dim: int) -> list[float]:
    """Not all zeros, yet shorter than ``MIN_COSINE_NORM``: zero length at float32 precision (§3.3)."""
    return [MIN_COSINE_NORM / 100.0] + [0.0] * (dim - 1)


def _axis(dim: int) -> list[float]:
    return [1.0] + [0.0] * (dim - 1)


#: Calls a cosine index must refuse (docs/spec.md §3.3): label, call, operation, phrases of the message.
ZERO_VECTOR_CALLS: Final[list[tuple[str, Call, str, tuple[str, ...]]]] = [
    (
        "upsert: one zero vector among good ones",
        lambda s, i, d: s.upsert(i, [_vec(d, 7), _zero(d), _vec(d, 8)], ids=["new0", "zero", "new2"]),
        "UPSERT",
        ("zero vector", "vector [1] (id 'zero')"),
    ),
    (
        "upsert: a vector of zero length at float32 precision",
        lambda s, i, d: s.upsert(i, [_tiny(d), _vec(d, 7)], [{"n": 9}, {"n": 10}], ["tiny", "new1"]),
        "UPSERT",
        ("zero vector", "vector [0] (id 'tiny')"),
    ),
    (
        "upsert: a zero vector replacing an existing record",
        lambda s, i, d: s.upsert(i, [_vec(d, 7), _zero(d)], [{"n": 0}, {"n": 0}], ["v0", "v0"]),
        "UPSERT",
        ("zero vector", "vector [1] (id 'v0')"),
    ),
    (
        "query: a zero query vector",
        lambda s, i, d: s.query(i, _zero(d)),
        "QUERY",
        ("zero vector", "query_vector"),
    ),
    (
        "query: a tiny query vector",
        lambda s, i, d: s.query(i, _tiny(d)),
        "QUERY",
        ("zero vector", "query_vector"),
    ),
    (
        "update_vector by id",
        lambda s, i, d: s.update_vector(i, id="v1", update={"vector": _zero(d)}),
        "UPDATE_VECTOR",
        ("zero vector", "the update vector"),
    ),
    (
        "update_vector by id with metadata",
        lambda s, i, d: s.update_vector(i, id="v1", update={"vector": _zero(d), "metadata": {"n": 5}}),
        "UPDATE_VECTOR",
        ("zero vector", "the update vector"),
    ),
]

#: The same refusal by filter (only on targets that can update by filter).
ZERO_VECTOR_BY_FILTER: Final = (
    "update_vector by filter",
    lambda s, i, d: s.update_vector(i, filter={"category": "home"}, update={"vector": _zero(d)}),
    "UPDATE_VECTOR",
    ("zero vector", "the update vector"),
)


def _filter_calls(
    store: MastraVector, index: str, query: list[float], flt: Any
) -> list[Callable[[], Awaitable[Any]]]:
    """Every public call that takes a filter: query, update by filter, delete by filter."""
    return [
        lambda: store.query(index, query, top_k=4, filter=flt),
        lambda: store.update_vector(index, filter=flt, update={"metadata": {"x": 1}}),
        lambda: store.delete_vectors(index, filter=flt),
    ]


def _check_id(
    error: MastraMemoryError, capabilities: AdapterCapabilities, operation: str, status: str
) -> None:
    assert _ID.match(error.id), (
        f"error id {error.id!r} is not MASTRA_VECTOR_<STORE>_<OPERATION>_<STATUS> upper snake"
    )
    assert error.id == expected_error_id(capabilities, operation, status), error.id
    if isinstance(error, ValidationError):
        assert error.category == "USER", (
            f"{error.id}: a validation error is a USER error, not {error.category}"
        )


@pytest.mark.asyncio
class ErrorsSuite:
    """Typed errors with exact phrases and ids, raised before any I/O, leaving stored data unchanged."""

    async def _seed(
        self, store: MastraVector, capabilities: AdapterCapabilities, index: str, dimension: int
    ) -> tuple[int, list[tuple[str, Any, Any]]]:
        items = [
            Item(f"v{i}", make_vector(i + 1, dimension), {"n": i, "category": "home" if i % 2 else "books"})
            for i in range(4)
        ]
        await load(store, capabilities, index, items, dimension)
        return await self._state(store, capabilities, index, dimension)

    async def _state(
        self, store: MastraVector, capabilities: AdapterCapabilities, index: str, dimension: int
    ) -> tuple[int, list[tuple[str, Any, Any]]]:
        await settle(store, capabilities, index)
        count = (await store.describe_index(index)).count
        hits = await store.query(
            index, query_vector(dimension), top_k=query_limit(capabilities, 10), include_vector=True
        )
        return count, [(h.id, h.metadata, h.vector) for h in hits]

    async def _assert_live(
        self, counter: HookCounter, store: MastraVector, index: str, dimension: int
    ) -> None:
        before = counter.calls["_query"]
        await store.query(index, query_vector(dimension), top_k=1)
        assert counter.calls["_query"] == before + 1, "the hook counter did not see a valid query"

    @pytest.mark.parametrize("row", [pytest.param(r, id=r.label.replace(" ", "-")) for r in ROWS])
    async def test_validation_row(
        self,
        request: pytest.FixtureRequest,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
        row: Row,
    ) -> None:
        """§3.3: error class, id and phrase; no backend write (and no I/O at all unless the check needs
        the index's dimension); nothing stored changes."""
        set_item(request, f"{row.operation}_{row.status}")
        before = await self._seed(vector_store, capabilities, index_name, conformance_dimension)
        with HookCounter(vector_store) as counter:
            with pytest.raises(row.error) as raised:
                await row.call(vector_store, index_name, conformance_dimension)
            calls = dict(counter.calls)
            await self._assert_live(counter, vector_store, index_name, conformance_dimension)
        error = raised.value
        _check_id(error, capabilities, row.operation, row.status)
        phrase = row.phrase.format(
            index=vector_store.to_native_index_name(index_name), last=conformance_dimension - 1
        )
        message = str(error)
        assert phrase in message, f"{row.label}: the message must contain {phrase!r}: {message!r}"
        if row.status == "DIMENSION_MISMATCH":
            assert str(conformance_dimension) in message, message
            assert str(conformance_dimension + 1) in message, message
        if row.reads_allowed:
            assert not [n for n in calls if n in _WRITES], (
                f"{row.label}: backend writes before failing: {calls}"
            )
        else:
            assert not calls, f"{row.label}: validation must happen before any I/O, but hooks ran: {calls}"
        assert await self._state(vector_store, capabilities, index_name, conformance_dimension) == before

    async def test_limits_of_the_manifest(
        self,
        request: pytest.FixtureRequest,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
    ) -> None:
        """``max_top_k``, ``max_dimension`` and a missing metadata-only query raise as §3.3 says."""
        set_item(request, "manifest limits")
        before = await self._seed(vector_store, capabilities, index_name, conformance_dimension)
        query = query_vector(conformance_dimension)
        checks: list[tuple[Callable[[], Awaitable[Any]], str, str, str]] = []
        if capabilities.max_top_k is not None:
            limit = capabilities.max_top_k
            checks.append(
                (
                    lambda: vector_store.query(index_name, query, top_k=limit + 1),
                    "QUERY",
                    "TOP_K_TOO_LARGE",
                    str(limit),
                )
            )
        if capabilities.max_dimension is not None:
            too_big = capabilities.max_dimension + 1
            checks.append(
                (
                    lambda: vector_store.create_index(f"{index_name}_big", too_big),
                    "CREATE_INDEX",
                    "INVALID_ARGS",
                    "dimension must be a positive integer",
                )
            )
        if not capabilities.metadata_only_query:
            checks.append(
                (
                    lambda: vector_store.query(index_name, None),
                    "QUERY",
                    "MISSING_VECTOR",
                    "query_vector is required",
                )
            )
        else:
            listed = await vector_store.query(index_name, None, top_k=10)
            assert sorted(h.id for h in listed) == ["v0", "v1", "v2", "v3"]
        with HookCounter(vector_store) as counter:
            for call, operation, status, phrase in checks:
                with pytest.raises(MastraMemoryError) as raised:
                    await call()
                _check_id(raised.value, capabilities, operation, status)
                assert phrase in str(raised.value), f"{status}: {raised.value}"
            assert not counter.calls, f"hooks ran before the limit was enforced: {dict(counter.calls)}"
            await self._assert_live(counter, vector_store, index_name, conformance_dimension)
        assert await self._state(vector_store, capabilities, index_name, conformance_dimension) == before

    async def test_zero_vectors_are_refused_by_a_cosine_index(
        self,
        request: pytest.FixtureRequest,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
    ) -> None:
        """§3.3: a cosine index refuses a zero vector — all zeros, or zero length at float32 precision — on
        upsert, update_vector and query with ``…_ZERO_VECTOR`` naming the id or ``query_vector``; nothing is
        written (an upsert with one zero vector among good ones stores none of them); the index still counts,
        lists and finds exactly what it held."""
        set_item(request, "ZERO_VECTOR")
        if "cosine" not in capabilities.metrics:
            pytest.skip(f"{capabilities.name} declares no cosine metric")
        before = await self._seed(vector_store, capabilities, index_name, conformance_dimension)
        listed = (
            sorted(
                h.id for h in await vector_store.query(index_name, None, top_k=query_limit(capabilities, 10))
            )
            if capabilities.metadata_only_query
            else None
        )
        calls = list(ZERO_VECTOR_CALLS)
        if capabilities.update_by_filter != "none":
            calls.append(ZERO_VECTOR_BY_FILTER)
        with HookCounter(vector_store) as counter:
            for label, call, operation, phrases in calls:
                with pytest.raises(ValidationError) as raised:
                    await call(vector_store, index_name, conformance_dimension)
                _check_id(raised.value, capabilities, operation, "ZERO_VECTOR")
                message = str(raised.value)
                for phrase in phrases:
                    assert phrase in message, f"{label}: the message must contain {phrase!r}: {message!r}"
                assert vector_store.to_native_index_name(index_name) in message, message
                writes = {n for n in counter.calls if n in _WRITES}
                assert not writes, (
                    f"{label}: backend writes before refusing the zero vector: {dict(counter.calls)}"
                )
            assert not set(counter.calls) - {"_describe_index"}, (
                f"only the index's metric may be read before refusing, but hooks ran: {dict(counter.calls)}"
            )
            await self._assert_live(counter, vector_store, index_name, conformance_dimension)
        assert await self._state(vector_store, capabilities, index_name, conformance_dimension) == before
        if listed is not None:
            top = query_limit(capabilities, 10)
            assert sorted(h.id for h in await vector_store.query(index_name, None, top_k=top)) == listed

    @pytest.mark.parametrize("metric", ["euclidean", "dotproduct"])
    async def test_zero_vectors_are_kept_by_euclidean_and_dotproduct_indexes(
        self,
        request: pytest.FixtureRequest,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        outcome: Outcome,
        index_name: str,
        conformance_dimension: int,
        metric: Metric,
    ) -> None:
        """§3.3/§3.4: the zero-vector rule is cosine's only. A declared euclidean or dotproduct index stores
        a zero vector, counts it, returns it (and its vector) from a query with its exact score, takes a zero
        query vector, and accepts a zero vector in update_vector."""
        set_item(request, f"zero vector ({metric})")
        if metric not in capabilities.metrics:
            outcome.unsupported(metric, f"{capabilities.name} declares no {metric} index")
            return
        dim = conformance_dimension
        tolerance = (
            1e-2 if declares(capabilities, "half-precision") or declares(capabilities, "quantised") else 1e-4
        )
        items = [
            Item("zero", _zero(dim), {"n": 0}),
            Item("one", _axis(dim), {"n": 1}),
            Item("two", _vec(dim, 2), {"n": 2}),
        ]
        await load(vector_store, capabilities, index_name, items, dim, metric=metric)
        assert (await vector_store.describe_index(index_name)).count == len(items)

        def exact(stored: list[float], query: list[float]) -> float:
            if metric == "dotproduct":
                return sum(a * b for a, b in zip(stored, query, strict=True))
            return 1.0 / (1.0 + math.dist(stored, query))

        for query in (_axis(dim), _zero(dim)):
            hits = await vector_store.query(
                index_name, query, top_k=query_limit(capabilities, 10), include_vector=True
            )
            assert sorted(h.id for h in hits) == ["one", "two", "zero"], (
                f"{metric}: a query for {query[:2]}... must return every record, the zero vector included; "
                f"got {[h.id for h in hits]}"
            )
            written = {item.id: item.vector for item in items}
            for hit in hits:
                want = exact(written[hit.id], query)
                assert abs(hit.score - want) <= tolerance * max(1.0, abs(want)), (
                    f"{metric}: {hit.id} scored {hit.score!r} for {query[:2]}..., expected {want!r}"
                )
            zero_hit = next(h for h in hits if h.id == "zero")
            assert zero_hit.vector is not None, f"{metric}: include_vector=True returned no vector"
            assert all(x == 0.0 for x in zero_hit.vector), (
                f"{metric}: the zero vector came back as {zero_hit}"
            )
        await vector_store.update_vector(index_name, id="one", update={"vector": _zero(dim)})
        await settle(vector_store, capabilities, index_name)
        hits = await vector_store.query(
            index_name, _axis(dim), top_k=query_limit(capabilities, 10), include_vector=True
        )
        one = next(h for h in hits if h.id == "one")
        assert one.vector is not None, f"{metric}: include_vector=True returned no vector"
        assert all(x == 0.0 for x in one.vector), f"{metric}: update_vector to a zero vector gave {one}"

    @pytest.mark.parametrize(
        ("label", "flt", "phrase"), [pytest.param(*f, id=f[0].replace(" ", "-")) for f in INVALID_FILTERS]
    )
    async def test_invalid_filter_phrase_before_any_io(
        self,
        request: pytest.FixtureRequest,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
        label: str,
        flt: Any,
        phrase: str,
    ) -> None:
        """§2.6: the core's FilterError phrase, from query, update and delete by filter, before any hook."""
        set_item(request, "FilterError phrases")
        before = await self._seed(vector_store, capabilities, index_name, conformance_dimension)
        query = query_vector(conformance_dimension)
        with HookCounter(vector_store) as counter:
            for call in _filter_calls(vector_store, index_name, query, flt):
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
            await self._assert_live(counter, vector_store, index_name, conformance_dimension)
        assert await self._state(vector_store, capabilities, index_name, conformance_dimension) == before

    async def test_unknown_query_options_are_refused_before_any_io(
        self,
        request: pytest.FixtureRequest,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
    ) -> None:
        """§3.1: a ``query`` keyword the store does not declare in ``query_options`` raises ValidationError
        (QUERY_INVALID_ARGS) naming it, before any hook runs — also for an index that does not exist,
        whose lookup would be I/O; a declared option is accepted."""
        set_item(request, "unknown query options")
        await self._seed(vector_store, capabilities, index_name, conformance_dimension)
        query = query_vector(conformance_dimension)
        with HookCounter(vector_store) as counter:
            for index in (index_name, f"{index_name}_missing"):
                with pytest.raises(ValidationError) as raised:
                    await vector_store.query(index, query, top_k=1, not_an_option=1)
                assert raised.value.id == expected_error_id(capabilities, "QUERY", "INVALID_ARGS"), (
                    raised.value
                )
                assert "not_an_option" in str(raised.value), str(raised.value)
            assert not counter.calls, (
                f"unknown options must fail before any I/O; hooks ran: {dict(counter.calls)}"
            )
        for option in sorted(type(vector_store).query_options & {"exact", "ef", "probes"}):
            value: Any = True if option == "exact" else 64
            hits = await vector_store.query(index_name, query, top_k=1, **{option: value})
            assert len(hits) == 1, f"query with the declared option {option}={value!r} returned {hits}"

    async def test_every_problem_is_reported_at_once(
        self,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
    ) -> None:
        """§2.6: one FilterError lists every problem, joined with ", "."""
        await self._seed(vector_store, capabilities, index_name, conformance_dimension)
        flt = {"price": {"$gt": None}, "tags": {"$size": -1}, "$foo": 1}
        with pytest.raises(FilterError) as raised:
            await vector_store.query(index_name, query_vector(conformance_dimension), filter=flt)
        problems = raised.value.problems
        assert len(problems) == 3, problems
        assert str(raised.value) == ", ".join(problems)
        assert {p.split(":")[0] for p in problems} == {
            "$gt requires a number, string or datetime",
            "$size requires a non-negative integer",
            "Unsupported operator",
        }

    async def test_refused_filters_raise_before_any_io(
        self,
        request: pytest.FixtureRequest,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        outcome: Outcome,
        index_name: str,
        conformance_dimension: int,
    ) -> None:
        """§2.7: every filter the target must refuse — undeclared operators and filters a declared deviation
        rules out — raises UnsupportedFilterError from query, update and delete before any hook runs.

        On a target that declares every operator and no such deviation the set is empty; the test then
        still proves the instrumentation with an invalid filter, which must also fail before any hook.
        """
        set_item(request, "UnsupportedFilterError before I/O")
        before = await self._seed(vector_store, capabilities, index_name, conformance_dimension)
        records = {rid: metadata for rid, metadata, _ in before[1]}
        refused: list[tuple[dict[str, Any], frozenset[str], tuple[str, ...]]] = []
        for flt in [*OPERATOR_FILTERS.values(), *DEVIATION_FILTERS.values()]:
            expectation = expect(capabilities, flt, records)
            if expectation.kind == "unsupported":
                refused.append((flt, expectation.operators, expectation.deviations))
        query = query_vector(conformance_dimension)
        with HookCounter(vector_store) as counter:
            for flt, operators, deviations in refused:
                for call in _filter_calls(vector_store, index_name, query, flt):
                    with pytest.raises(UnsupportedFilterError) as raised:
                        await call()
                    error = raised.value
                    assert error.operator in operators, (
                        f"{flt!r}: names {error.operator}, not {sorted(operators)}"
                    )
                    assert error.adapter == capabilities.name, f"{flt!r}: names adapter {error.adapter!r}"
                    assert not counter.calls, f"{flt!r}: hooks ran before the refusal: {dict(counter.calls)}"
                if deviations:
                    outcome.deviation(deviations[0], f"{flt!r} refused before any I/O")
                else:
                    outcome.unsupported(sorted(operators)[0], f"{flt!r} refused before any I/O")
            with pytest.raises(FilterError):
                await vector_store.query(index_name, query, top_k=4, filter={"price": {"$bogus": 1}})
            assert not counter.calls, f"hooks ran before an invalid filter was refused: {dict(counter.calls)}"
            await self._assert_live(counter, vector_store, index_name, conformance_dimension)
        assert await self._state(vector_store, capabilities, index_name, conformance_dimension) == before
