"""Numeric exactness, defined once for the evaluator, the core and every adapter (docs/spec.md §2.4, §3.6).

Metadata integers are kept exactly within the signed 64-bit range (:data:`INT64_MIN` .. :data:`INT64_MAX`;
beyond it a store refuses them, declared deviation ``int64-range``). Many backends compare numbers as
float64, which is exact for integers up to :data:`EXACT_FLOAT_LIMIT` (2^53) in magnitude; beyond it
several int64 values share one float64, and a translator that must stay exact decides those integers one by
one (:func:`ints_rounding_to`). A filter integer beyond int64 can be compared exactly only when it is
exactly a float64 (:func:`float64_of`); otherwise translators refuse it with :func:`beyond_int64`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, Final

__all__ = [
    "COMPARISONS",
    "EXACT_FLOAT_LIMIT",
    "INT64_MAX",
    "INT64_MIN",
    "beyond_int64",
    "compare",
    "distinct",
    "float64_of",
    "in_int64",
    "integer_out_of_range",
    "ints_rounding_to",
]

#: The signed 64-bit range in which stores keep metadata integers exactly.
INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1
#: Integers up to this magnitude are exact as float64.
EXACT_FLOAT_LIMIT: Final = 2**53
#: Integers closer than this to a float64 beyond 2^53 may round to it (the spacing is at most 2048 in int64).
_ROUNDING_REACH: Final = 2048

#: ``left <op> right`` for equality and the range operators; Python compares ints and floats by value
#: (exactly), and numpy arrays element-wise.
COMPARISONS: Final[Mapping[str, Callable[[Any, Any], Any]]] = MappingProxyType(
    {"$eq": operator.eq, "$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le}
)


def compare(op: str, left: Any, right: Any) -> bool:
    """Exact ``left <op> right`` for ``op`` one of ``$eq``, ``$gt``, ``$gte``, ``$lt``, ``$lte``."""
    return bool(COMPARISONS[op](left, right))


def distinct(values: Iterable[Any]) -> list[Any]:
    """``values`` without repeats, in order, keeping ``True`` apart from ``1`` and ``False`` from ``0``
    (Python's ``==`` equates them; filters do not, docs/spec.md §2.4)."""
    seen: dict[tuple[bool, Any], Any] = {}
    for value in values:
        seen.setdefault((isinstance(value, bool), value), value)
    return list(seen.values())


def in_int64(value: int | float) -> bool:
    """Whether ``value`` lies within the signed 64-bit range."""
    return INT64_MIN <= value <= INT64_MAX


def integer_out_of_range(value: Any, path: str = "") -> str | None:
    """The key path of the first integer outside int64 in ``value`` (declared deviation ``int64-range``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return None if in_int64(value) else (path or "<root>")
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = integer_out_of_range(item, f"{path}.{key}" if path else str(key))
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = integer_out_of_range(item, f"{path}[{i}]")
            if found is not None:
                return found
    return None


def float64_of(value: int | float) -> float | None:
    """``value`` as the float64 a backend compares it as, or None when no float64 comparison is exact.

    A float is itself; an integer within int64 is its nearest float64 (translators decide the integers
    sharing that float, :func:`ints_rounding_to`); an integer beyond int64 must be exactly a float64.
    """
    try:
        converted = float(value)
    except OverflowError:
        return None
    if converted != value and not (isinstance(value, int) and in_int64(value)):
        return None
    return converted


def beyond_int64(value: int | float) -> str:
    """Why a translator refuses the filter integer ``value`` (:func:`float64_of` gave None)."""
    return f"the integer {value} is outside int64 and not exactly a float64 (declared deviation int64-range)"


def ints_rounding_to(target: float) -> tuple[int, ...]:
    """The int64 values whose float64 is ``target`` (none unless ``target`` is integral beyond 2^53)."""
    if not target.is_integer() or abs(target) < EXACT_FLOAT_LIMIT:
        return ()
    centre = int(target)
    low = max(INT64_MIN, centre - _ROUNDING_REACH)
    high = min(INT64_MAX, centre + _ROUNDING_REACH)
    return tuple(n for n in range(low, high + 1) if float(n) == target)
