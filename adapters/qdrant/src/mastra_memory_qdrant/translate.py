"""Filter translation: the filter AST in, a neutral Qdrant filter out, rendered for either engine.

One translator (:class:`QdrantFilterTranslator`) emits a small neutral structure — :class:`QFilter`
(``must`` / ``should`` / ``must_not``), :class:`QMatch`, :class:`QMatchAny`, :class:`QRange` and
:class:`QNested` — and two thin renderers turn it into ``qdrant_client.models.Filter``
(:func:`render_client`, here) or ``qdrant_edge.Filter`` (``render_edge`` in :mod:`.edge`).

Every condition the translator emits is exact: it holds for a record exactly when the reference
evaluator says the AST node holds. Negations are then plain ``must_not`` (``$ne``, ``$nin``, ``$not``,
``$nor`` — a missing field matches, as MongoDB says), ``$and`` is ``must`` and ``$or`` is ``should``.
The leaves read the filter document of :mod:`.payload`:

* equality with a string or integer is a ``match`` on the reached values (integral floats were stored
  as integers, so ``{"n": 1}`` finds ``1.0``); a non-integral float is the closed range ``[v, v]``;
  ``True``/``False``/``None`` are facts (``{"f": None}`` is "a null is reached, or the path is missing
  somewhere", spelled out from the facts of each prefix);
* ranges are Qdrant's ``range`` (which compares as float64), made exact near integers beyond 2^53 by
  deciding the integers that round to the operand one by one;
* ``$in`` is a ``should`` of equalities (strings and integers grouped into one ``match any`` each),
  ``$all`` a ``must`` of them, ``$size`` and ``$exists`` facts, ``$elemMatch`` a ``nested`` condition
  over the object elements (plus a fact for nested arrays, which MongoDB reads as empty objects).

Rejected with :class:`~mastra_memory.errors.UnsupportedFilterError` before any I/O: ``$regex`` and
``$contains`` (not declared: Qdrant's text match is not a regex or a substring test over every type),
string and datetime range operands (declared deviation ``no-string-ranges``), integers beyond int64
that are not exactly a float (``int64-range``), and ``$elemMatch`` with an operator document (scalar
elements), which Qdrant's ``nested`` condition cannot test.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from mastra_memory.filters import Comparison, ElemMatch, matches
from mastra_memory.filters.ast import And, Nor, Not, Or, Path, Scalar
from mastra_memory.filters.visitor import FilterTranslator
from qdrant_client import models

from .capabilities import QDRANT_CAPABILITIES
from .payload import (
    ELEMENTS_PREFIX,
    FACTS_KEY,
    FILTER_ROOT,
    INT64_MAX,
    INT64_MIN,
    VALUES_PREFIX,
    fact,
    path_code,
)

__all__ = [
    "ROOT_PREFIX",
    "Condition",
    "QFilter",
    "QMatch",
    "QMatchAny",
    "QNested",
    "QRange",
    "QdrantFilterTranslator",
    "as_filter",
    "render_client",
]

#: Keys of the top-level filter document are read under this prefix; inside ``nested`` there is none.
ROOT_PREFIX: Final = FILTER_ROOT + "."
#: A fact no document has (every fact has a tag and a ``:``): matching it is "false".
_NEVER: Final = "!"
#: Integers up to this magnitude are exact as float64, so ranges around them need no care.
_EXACT_FLOAT_LIMIT: Final = 2**53
#: Integers closer than this to a float64 beyond 2^53 may round to it (the spacing is at most 2048).
_ROUNDING_REACH: Final = 2048


@dataclass(frozen=True, slots=True)
class QMatch:
    """``key`` reaches ``value`` (a keyword or an int64)."""

    key: str
    value: str | int


@dataclass(frozen=True, slots=True)
class QMatchAny:
    """``key`` reaches one of ``values`` (all keywords or all int64)."""

    key: str
    values: tuple[str, ...] | tuple[int, ...]


@dataclass(frozen=True, slots=True)
class QRange:
    """``key`` reaches a number within the bounds (Qdrant compares as float64)."""

    key: str
    gt: float | None = None
    gte: float | None = None
    lt: float | None = None
    lte: float | None = None


@dataclass(frozen=True, slots=True)
class QNested:
    """Some object element of the array at ``key`` satisfies ``filter`` (keys relative to the element)."""

    key: str
    filter: QFilter


@dataclass(frozen=True, slots=True)
class QFilter:
    """All of ``must``, at least one of ``should`` (when given), none of ``must_not``."""

    must: tuple[Condition, ...] = ()
    should: tuple[Condition, ...] = ()
    must_not: tuple[Condition, ...] = ()


Condition: TypeAlias = QMatch | QMatchAny | QRange | QNested | QFilter


def _all_of(conditions: Sequence[Condition]) -> Condition:
    return conditions[0] if len(conditions) == 1 else QFilter(must=tuple(conditions))


def _any_of(conditions: Sequence[Condition]) -> Condition:
    return conditions[0] if len(conditions) == 1 else QFilter(should=tuple(conditions))


def _none_of(conditions: Sequence[Condition]) -> Condition:
    return QFilter(must_not=tuple(conditions))


def as_filter(condition: Condition) -> QFilter:
    """A condition as a top-level filter."""
    return condition if isinstance(condition, QFilter) else QFilter(must=(condition,))


def _without(condition: Condition, key: str, integers: tuple[int, ...]) -> Condition:
    """``condition`` for every stored value except the listed integers."""
    if not integers:
        return condition
    return QFilter(must=(condition,), must_not=(QMatchAny(key, integers),))


def _distinct(values: tuple[Scalar, ...]) -> list[Scalar]:
    """``values`` without repeats, keeping ``True`` apart from ``1`` (which Python's ``==`` does not)."""
    seen: dict[tuple[bool, Scalar], Scalar] = {}
    for value in values:
        seen.setdefault((isinstance(value, bool), value), value)
    return list(seen.values())


def _compare(op: str, left: int | float, right: int | float) -> bool:
    """Exact ``left <op> right`` (Python compares ints and floats by value)."""
    if op == "$gt":
        return left > right
    if op == "$gte":
        return left >= right
    if op == "$lt":
        return left < right
    return left <= right


def _ints_rounding_to(target: float) -> tuple[int, ...]:
    """The int64 values whose float64 is ``target`` (none unless ``target`` is integral beyond 2^53)."""
    if not target.is_integer() or abs(target) < _EXACT_FLOAT_LIMIT:
        return ()
    centre = int(target)
    low = max(INT64_MIN, centre - _ROUNDING_REACH)
    high = min(INT64_MAX, centre + _ROUNDING_REACH)
    return tuple(n for n in range(low, high + 1) if float(n) == target)


class QdrantFilterTranslator(FilterTranslator[Condition]):
    """AST -> neutral Qdrant condition. ``prefix`` is where the filter document's keys live."""

    capabilities = QDRANT_CAPABILITIES

    def __init__(self, prefix: str = ROOT_PREFIX) -> None:
        self.prefix = prefix

    # --- keys and facts ------------------------------------------------------------------------

    def _values(self, path: Path) -> str:
        return self.prefix + VALUES_PREFIX + path_code(path)

    def _fact(self, tag: str, path: Path, extra: int | None = None) -> QMatch:
        return QMatch(self.prefix + FACTS_KEY, fact(tag, path, extra))

    def false(self) -> Condition:
        """A condition no record satisfies."""
        return QMatch(self.prefix + FACTS_KEY, _NEVER)

    def true(self) -> Condition:
        """A condition every record satisfies."""
        return _none_of([self.false()])

    def missing(self, path: Path) -> Condition:
        """Some branch of ``path`` ends early: a key is absent, or a scalar stands where an object is."""
        terms: list[Condition] = [_none_of([self._fact("a", path[:1])])]
        for depth in range(1, len(path)):
            prefix = path[:depth]
            terms.append(_all_of([self._fact("c", prefix), _none_of([self._fact("a", path[: depth + 1])])]))
            terms.append(self._fact("s", prefix))
        return _any_of(terms)

    # --- leaves ---------------------------------------------------------------------------------

    def _equals(self, node: Comparison, value: Scalar) -> Condition:
        path = node.path
        if value is None:
            return _any_of([self._fact("z", path), self.missing(path)])
        if value is True or value is False:
            return self._fact("t" if value else "f", path)
        if isinstance(value, str):
            return QMatch(self._values(path), value)
        return self._number_equals(node, value)

    def _int64(self, value: int | float) -> int | None:
        """``value`` as the int64 it is stored as, if it is one (integral floats are stored as ints)."""
        if isinstance(value, float) and not value.is_integer():
            return None
        if INT64_MIN <= value <= INT64_MAX:
            return int(value)
        return None

    def _float(self, node: Comparison, value: int | float) -> float:
        """``value`` as a float64 (rounded within int64); integers beyond int64 must be exact floats."""
        try:
            converted = float(value)
        except OverflowError:
            converted = math.inf
        if converted != value and not (isinstance(value, int) and INT64_MIN <= value <= INT64_MAX):
            self.unsupported(
                node,
                f"the integer {value} is outside int64 and not exactly a float64 (declared deviation "
                "int64-range)",
            )
        return converted

    def _number_equals(self, node: Comparison, value: int | float) -> Condition:
        key = self._values(node.path)
        integer = self._int64(value)
        if integer is not None:
            return QMatch(key, integer)
        target = self._float(node, value)
        # Integers that are not `value` but round to the same float64 are excluded by name.
        return _without(QRange(key, gte=target, lte=target), key, _ints_rounding_to(target))

    def _in(self, node: Comparison, values: tuple[Scalar, ...]) -> Condition:
        if not values:
            return self.false()
        key = self._values(node.path)
        strings: list[str] = []
        integers: list[int] = []
        others: list[Condition] = []
        for value in _distinct(values):
            integer = None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                integer = self._int64(value)
            if isinstance(value, str):
                strings.append(value)
            elif integer is not None:
                integers.append(integer)
            else:
                others.append(self._equals(node, value))
        conditions: list[Condition] = []
        if strings:
            conditions.append(
                QMatch(key, strings[0]) if len(strings) == 1 else QMatchAny(key, tuple(strings))
            )
        if integers:
            unique = tuple(dict.fromkeys(integers))
            conditions.append(QMatch(key, unique[0]) if len(unique) == 1 else QMatchAny(key, unique))
        return _any_of([*conditions, *others])

    def _range(self, node: Comparison, value: Scalar) -> Condition:
        op = node.op
        if isinstance(value, str):
            self.unsupported(
                node,
                "Qdrant has no exact range over strings or datetimes (declared deviation no-string-ranges)",
            )
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.unsupported(node, f"{op} needs a number")  # the core rejects other operands earlier
        number = value
        key = self._values(node.path)
        target = self._float(node, number)
        bound = {"$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}[op]
        if abs(target) < _EXACT_FLOAT_LIMIT:
            return QRange(key, **{bound: target})
        # Beyond 2^53 an engine may compare a stored integer as its float64 (the Rust engine does) or
        # exactly (qdrant-client's local mode does): the two differ only for the integers that round to
        # the operand's float64. Keep those out of the range and decide each of them here, so that both
        # readings give the exact answer; a stored float equal to it exists only outside int64.
        colliding = _ints_rounding_to(target)
        strict = "gt" if op in ("$gt", "$gte") else "lt"
        parts: list[Condition] = [_without(QRange(key, **{strict: target}), key, colliding)]
        wanted = tuple(n for n in colliding if _compare(op, n, number))
        if wanted:
            parts.append(QMatchAny(key, wanted))
        if not INT64_MIN <= target <= INT64_MAX and _compare(op, target, number):
            parts.append(_without(QRange(key, gte=target, lte=target), key, colliding))
        return _any_of(parts)

    # --- visitor methods ----------------------------------------------------------------------

    def comparison(self, node: Comparison) -> Condition:
        """One field condition."""
        op, value = node.op, node.value
        if not node.path:
            self.unsupported(node, "a condition on an array element itself has no Qdrant translation")
        if isinstance(value, tuple):
            if op == "$in":
                return self._in(node, value)
            if op == "$nin":
                return _none_of([self._in(node, value)])
            if op == "$all":
                if not value:
                    return self.false()
                return _all_of([self._in(node, (item,)) for item in _distinct(value)])
            self.unsupported(node)
        if op == "$eq":
            return self._equals(node, value)
        if op == "$ne":
            return _none_of([self._equals(node, value)])
        if op in ("$gt", "$gte", "$lt", "$lte"):
            return self._range(node, value)
        if op == "$exists":
            present = self._fact("p", node.path)
            return present if value else _none_of([present])
        if op == "$size" and isinstance(value, int) and not isinstance(value, bool):
            return self._fact("n", node.path, value)
        self.unsupported(node)

    def elem_match(self, node: ElemMatch) -> Condition:
        """``nested`` over the object elements of the arrays reached at the path."""
        if not node.on_documents:
            self.unsupported(
                node,
                "Qdrant's nested condition tests object elements only; $elemMatch with an operator document "
                "(scalar elements) has no exact translation",
            )
        inner = QdrantFilterTranslator(prefix="").visit(node.condition)
        nested = QNested(self.prefix + ELEMENTS_PREFIX + path_code(node.path), as_filter(inner))
        if matches(node.condition, {}):  # an array element that is itself an array reads as {}
            return _any_of([nested, self._fact("l", node.path)])
        return nested

    def logical_and(self, node: And, children: list[Condition]) -> Condition:
        """``must``."""
        return _all_of(children)

    def logical_or(self, node: Or, children: list[Condition]) -> Condition:
        """``should``."""
        return _any_of(children)

    def logical_nor(self, node: Nor, children: list[Condition]) -> Condition:
        """``must_not`` of every child."""
        return _none_of(children)

    def logical_not(self, node: Not, child: Condition) -> Condition:
        """``must_not`` of the child (root or field level)."""
        return _none_of([child])


# --- rendering for qdrant-client -------------------------------------------------------------------


def _client_condition(condition: Condition) -> Any:
    if isinstance(condition, QFilter):
        return render_client(condition)
    if isinstance(condition, QMatch):
        return models.FieldCondition(key=condition.key, match=models.MatchValue(value=condition.value))
    if isinstance(condition, QMatchAny):
        return models.FieldCondition(key=condition.key, match=models.MatchAny(any=list(condition.values)))
    if isinstance(condition, QRange):
        return models.FieldCondition(
            key=condition.key,
            range=models.Range(gt=condition.gt, gte=condition.gte, lt=condition.lt, lte=condition.lte),
        )
    return models.NestedCondition(
        nested=models.Nested(key=condition.key, filter=render_client(condition.filter))
    )


def _rendered(conditions: tuple[Condition, ...], render: Callable[[Condition], Any]) -> list[Any] | None:
    return [render(c) for c in conditions] if conditions else None


def render_client(flt: QFilter) -> models.Filter:
    """The neutral filter as a ``qdrant_client.models.Filter``."""
    return models.Filter(
        must=_rendered(flt.must, _client_condition),
        should=_rendered(flt.should, _client_condition),
        must_not=_rendered(flt.must_not, _client_condition),
    )
