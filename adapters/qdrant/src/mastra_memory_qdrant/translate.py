"""Filter translation: the filter AST in, a neutral Qdrant filter out, rendered for either engine.

One translator (:class:`QdrantFilterTranslator`) emits a small neutral structure — :class:`QFilter`
(``must`` / ``should`` / ``must_not``), :class:`QMatch`, :class:`QMatchAny`, :class:`QRange` and
:class:`QNested` — and two thin renderers turn it into ``qdrant_client.models.Filter``
(:func:`render_client`, here) or ``qdrant_edge.Filter`` (``render_edge`` in :mod:`.edge`).

Every condition the translator emits is exact: it holds for a record exactly when the reference
evaluator says the AST node holds. Negations are then plain ``must_not`` (``$ne``, ``$nin``, ``$not``,
``$nor`` — a missing field matches, as MongoDB says), ``$and`` is ``must`` and ``$or`` is ``should``.
The leaves read the filter document of :mod:`.layout`:

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

from mastra_memory.filters import Comparison, ElemMatch
from mastra_memory.filters.ast import Path, Scalar
from mastra_memory.filters.facts import FactTranslator
from mastra_memory.filters.numbers import (
    EXACT_FLOAT_LIMIT,
    INT64_MAX,
    INT64_MIN,
    compare,
    distinct,
    in_int64,
    ints_rounding_to,
)
from qdrant_client import models

from .capabilities import QDRANT_CAPABILITIES
from .layout import (
    ELEMENTS_PREFIX,
    FACTS_KEY,
    FILTER_ROOT,
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


class QdrantFilterTranslator(FactTranslator[Condition]):
    """AST -> neutral Qdrant condition. ``prefix`` is where the filter document's keys live."""

    capabilities = QDRANT_CAPABILITIES
    backend = "Qdrant"
    scalar_elements = (
        "Qdrant's nested condition tests object elements only; $elemMatch with an operator document "
        "(scalar elements) has no exact translation"
    )
    #: ``$and`` is ``must``, ``$or`` ``should``, ``$nor`` and ``$not`` ``must_not``.
    all_of = staticmethod(_all_of)
    any_of = staticmethod(_any_of)
    none_of = staticmethod(_none_of)

    def __init__(self, prefix: str = ROOT_PREFIX) -> None:
        self.prefix = prefix

    # --- keys and facts ------------------------------------------------------------------------

    def _values(self, path: Path) -> str:
        return self.prefix + VALUES_PREFIX + path_code(path)

    def has_fact(self, tag: str, path: Path, extra: int | None = None) -> Condition:
        return QMatch(self.prefix + FACTS_KEY, fact(tag, path, extra))

    def false(self) -> Condition:
        """A condition no record satisfies."""
        return QMatch(self.prefix + FACTS_KEY, _NEVER)

    def true(self) -> Condition:
        """A condition every record satisfies."""
        return _none_of([self.false()])

    # --- leaves ---------------------------------------------------------------------------------

    def value_equals(self, node: Comparison, value: str | int | float) -> Condition:
        if isinstance(value, str):
            return QMatch(self._values(node.path), value)
        return self._number_equals(node, value)

    def _int64(self, value: int | float) -> int | None:
        """``value`` as the int64 it is stored as, if it is one (integral floats are stored as ints)."""
        if isinstance(value, float) and not value.is_integer():
            return None
        if in_int64(value):
            return int(value)
        return None

    def _number_equals(self, node: Comparison, value: int | float) -> Condition:
        key = self._values(node.path)
        integer = self._int64(value)
        if integer is not None:
            return QMatch(key, integer)
        target = self.exact_float64(node, value)
        # Integers that are not `value` but round to the same float64 are excluded by name.
        return _without(QRange(key, gte=target, lte=target), key, ints_rounding_to(target))

    def in_values(self, node: Comparison, values: tuple[Scalar, ...]) -> Condition:
        if not values:
            return self.false()
        key = self._values(node.path)
        strings: list[str] = []
        integers: list[int] = []
        others: list[Condition] = []
        for value in distinct(values):
            integer = None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                integer = self._int64(value)
            if isinstance(value, str):
                strings.append(value)
            elif integer is not None:
                integers.append(integer)
            else:
                others.append(self.equals(node, value))
        conditions: list[Condition] = []
        if strings:
            conditions.append(
                QMatch(key, strings[0]) if len(strings) == 1 else QMatchAny(key, tuple(strings))
            )
        if integers:
            unique = tuple(dict.fromkeys(integers))
            conditions.append(QMatch(key, unique[0]) if len(unique) == 1 else QMatchAny(key, unique))
        return _any_of([*conditions, *others])

    def ordered(self, node: Comparison, value: Scalar) -> Condition:
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
        target = self.exact_float64(node, number)
        bound = {"$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}[op]
        if abs(target) < EXACT_FLOAT_LIMIT:
            return QRange(key, **{bound: target})
        # Beyond 2^53 an engine may compare a stored integer as its float64 (the Rust engine does) or
        # exactly (qdrant-client's local mode does): the two differ only for the integers strictly
        # between the operand's neighbouring floats. The range stops at the neighbour, where both readings
        # agree, and those integers are decided here one by one. Each part is a test of one value, so a
        # record holding several values at the path matches when any one does (docs/spec.md §2.4): an
        # exclusion of the colliding integers over the whole record would drop [1, 2^63 - 1] from
        # {"$lt": 2^63 - 1} (found by the deep random filters on qdrant-edge).
        lower = op in ("$lt", "$lte")
        below, above = math.nextafter(target, -math.inf), math.nextafter(target, math.inf)
        parts: list[Condition] = [QRange(key, lte=below) if lower else QRange(key, gte=above)]
        between = range(max(INT64_MIN, math.floor(below) + 1), min(INT64_MAX, math.ceil(above) - 1) + 1)
        wanted = tuple(n for n in between if compare(op, n, number))
        if wanted:
            parts.append(QMatchAny(key, wanted))
        if not in_int64(target) and compare(op, target, number):
            # A stored float equal to the operand's float64 (beyond int64, so no integer is stored as it);
            # the Rust engine would read the colliding integers as it too.
            parts.append(_without(QRange(key, gte=target, lte=target), key, ints_rounding_to(target)))
        return _any_of(parts)

    # --- visitor methods ----------------------------------------------------------------------

    def all_values(self, node: Comparison, values: tuple[Scalar, ...]) -> Condition:
        """``$all``: a ``must`` of equalities (none given: false)."""
        return super().all_values(node, values) if values else self.false()

    def nested(self, node: ElemMatch) -> Condition:
        """``nested`` over the object elements of the arrays reached at the path."""
        inner = QdrantFilterTranslator(prefix="").visit(node.condition)
        return QNested(self.prefix + ELEMENTS_PREFIX + path_code(node.path), as_filter(inner))


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
