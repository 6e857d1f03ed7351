"""Filter AST -> an S3 Vectors filter document over the typed keys of :mod:`.layout` (docs/spec.md §2.7).

The translation first builds a small neutral tree in negation normal form, then renders it:

* :class:`Eq` (``$eq``: the key holds the value, or a list holding it — documented for arrays),
  :class:`Ne`, :class:`Range`, :class:`In`, :class:`Nin` — each *requires the key to be present*;
  :class:`Exists`; :class:`All` / :class:`Any` (``$and`` / ``$or``; empty ones are true / false).
* ``$ne``, ``$nin``, ``$not`` and ``$nor`` are pushed down by De Morgan (:func:`negate`): every leaf is
  exactly negatable, e.g. ``not Eq(k, v)`` is ``Any(Exists(k, false), Ne(k, v))``.
* **Nothing relies on how the service treats a missing key in ``$ne``/``$nin``/ranges** (undocumented;
  S3Mock matches missing keys with ``$ne``, ``$nin``, ``$lt`` and ``$lte``): a rendered ``$ne``/``$nin``/
  range is guarded by ``$exists: true`` unless an ``$exists: false`` on the same key is a sibling in an
  enclosing ``$or`` (then the key is present wherever the guarded leaf decides anything).
* **One documented-by-example reading is relied on:** ``$ne`` on a list of strings means "no element
  equals" (the negation of the documented element-wise ``$eq``). S3Mock reads it so; the conformance kit
  checks it on any S3 Vectors target it runs against.
* ``{f: None}`` is ``z:f`` (a stored null) or *missing* as the reference evaluator means it: no typed key at
  the path and no list on the way (a path that crosses a list reaches no value at all, which is not
  missing). ``$exists`` is whether any typed key of the path is present.
* Numbers: integral values within int64 are compared as ints (as stored). Ranges whose operand is at least
  2^53 in magnitude keep out the integers that round to the operand's float64 and decide each of them by
  name, so that an engine comparing in float64 (S3Mock does) still answers exactly.
* Refused (``UnsupportedFilterError``): string and datetime range operands (``no-string-ranges``),
  integers beyond int64 that are not exactly a float (``int64-range``), and any path under a key of
  ``non_filterable_metadata_keys`` (``non-filterable-keys``). Undeclared operators are refused by the base.
* Constant folding: ``$in: []`` and ``$all: []`` are false; a filter folded to false is answered without
  a request, one folded to true is sent as no filter.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Final, TypeAlias

from mastra_memory.filters.ast import Comparison, Path, Scalar
from mastra_memory.filters.numbers import (
    EXACT_FLOAT_LIMIT,
    compare,
    distinct,
    in_int64,
    ints_rounding_to,
)
from mastra_memory.filters.visitor import CombiningTranslator
from mastra_memory.timestamps import canonical_timestamp

from .capabilities import S3VECTORS_CAPABILITIES
from .layout import TAGS, key, number
from .settings import DEFAULT_NON_FILTERABLE

__all__ = [
    "FALSE",
    "TRUE",
    "All",
    "Any_",
    "Eq",
    "Exists",
    "In",
    "Native",
    "Ne",
    "Nin",
    "Range",
    "S3VectorsFilterTranslator",
    "negate",
    "render",
]

_FLIP: Final = {"$gt": "$lte", "$gte": "$lt", "$lt": "$gte", "$lte": "$gt"}


@dataclass(frozen=True, slots=True)
class Exists:
    """Some value of the key's type is stored (``present``), or none is."""

    key: str
    present: bool


@dataclass(frozen=True, slots=True)
class _Test:
    """A test of one typed key against one value (requires the key present)."""

    key: str
    value: str | int | float | bool


class Eq(_Test):
    """The key holds ``value``, or a list holding it."""

    __slots__ = ()


class Ne(_Test):
    """The key holds something else (on a list: no element equals ``value``)."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Range:
    """The number at the key compares to ``value`` by ``op``."""

    key: str
    op: str
    value: int | float


@dataclass(frozen=True, slots=True)
class _Members:
    """A test of a number key against a set of numbers (number keys never hold lists)."""

    key: str
    values: tuple[int | float, ...]


class In(_Members):
    """The number key holds one of ``values``."""

    __slots__ = ()


class Nin(_Members):
    """The number key holds none of ``values``."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class _Group:
    children: tuple[Native, ...]


class All(_Group):
    """``$and`` of the children (none: true)."""

    __slots__ = ()


class Any_(_Group):
    """``$or`` of the children (none: false)."""

    __slots__ = ()


Native: TypeAlias = Exists | Eq | Ne | Range | In | Nin | All | Any_
TRUE: Final = All(())
FALSE: Final = Any_(())


def all_of(children: Iterable[Native]) -> Native:
    """``$and`` of ``children``, flattened and folded."""
    out: list[Native] = []
    for child in children:
        if child == FALSE:
            return FALSE
        out.extend(child.children if isinstance(child, All) else (child,))
    unique = tuple(dict.fromkeys(out))
    return unique[0] if len(unique) == 1 else All(unique)


def any_of(children: Iterable[Native]) -> Native:
    """``$or`` of ``children``, flattened and folded."""
    out: list[Native] = []
    for child in children:
        if child == TRUE:
            return TRUE
        out.extend(child.children if isinstance(child, Any_) else (child,))
    unique = tuple(dict.fromkeys(out))
    return unique[0] if len(unique) == 1 else Any_(unique)


def negate(node: Native) -> Native:
    """The exact negation of ``node`` (De Morgan down to the leaves)."""
    match node:
        case Exists(k, present):
            return Exists(k, not present)
        case Eq(k, v):
            return any_of([Exists(k, False), Ne(k, v)])
        case Ne(k, v):
            return any_of([Exists(k, False), Eq(k, v)])
        case Range(k, op, v):
            return any_of([Exists(k, False), Range(k, _FLIP[op], v)])
        case In(k, values):
            return any_of([Exists(k, False), Nin(k, values)])
        case Nin(k, values):
            return any_of([Exists(k, False), In(k, values)])
        case All(children):
            return any_of(negate(c) for c in children)
        case Any_(children):
            return all_of(negate(c) for c in children)
    raise TypeError(f"not a native node: {node!r}")  # pragma: no cover


def none_hold(children: list[Native]) -> Native:
    """No child holds: the ``$and`` of their negations."""
    return all_of([negate(c) for c in children])


def _guarded(k: str, condition: dict[str, Any], unguarded: frozenset[str]) -> dict[str, Any]:
    """``{k: condition}``, required to find ``k`` present unless an enclosing ``$or`` covers its absence."""
    if k in unguarded:
        return {k: condition}
    return {"$and": [{k: {"$exists": True}}, {k: condition}]}


def render(node: Native, unguarded: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The S3 Vectors filter document of ``node`` (not TRUE or FALSE, which the store handles)."""
    match node:
        case Exists(k, present):
            return {k: {"$exists": present}}
        case Eq(k, v):
            return {k: {"$eq": v}}
        case In(k, values):
            return {k: {"$in": list(values)}}
        case Ne(k, v):
            return _guarded(k, {"$ne": v}, unguarded)
        case Nin(k, values):
            return _guarded(k, {"$nin": list(values)}, unguarded)
        case Range(k, op, v):
            return _guarded(k, {op: v}, unguarded)
        case All(children):
            return {"$and": [render(c, unguarded) for c in children]}
        case Any_(children):
            absent = unguarded | {c.key for c in children if isinstance(c, Exists) and not c.present}
            return {"$or": [render(c, frozenset(absent)) for c in children]}
    raise TypeError(f"not a native node: {node!r}")  # pragma: no cover


class S3VectorsFilterTranslator(CombiningTranslator[Native]):
    """AST -> :data:`Native`; ``non_filterable`` are the top-level keys that cannot be filtered on."""

    capabilities = S3VECTORS_CAPABILITIES
    backend = "S3 Vectors"
    #: ``$not`` and ``$nor`` push negation down to the leaves (De Morgan).
    all_of = staticmethod(all_of)
    any_of = staticmethod(any_of)
    none_of = staticmethod(none_hold)

    def __init__(self, non_filterable: Iterable[str] = DEFAULT_NON_FILTERABLE) -> None:
        self.non_filterable = frozenset(non_filterable)

    # --- paths ----------------------------------------------------------------------------------

    def present(self, path: Path) -> Native:
        """Some value is reached at ``path`` (``$exists: true``)."""
        return any_of(Exists(key(tag, path), True) for tag in TAGS)

    @staticmethod
    def missing(path: Path) -> Native:
        """The reference evaluator's *missing*: no typed key at ``path``, and no list on the way to it."""
        absent = [Exists(key(tag, path), False) for tag in TAGS]
        lists = [Exists(key("l", path[:depth]), False) for depth in range(1, len(path))]
        return all_of([*absent, *lists])

    # --- leaves ---------------------------------------------------------------------------------

    def _number(self, node: Comparison, value: int | float) -> int | float:
        """``value`` as stored numbers are compared; integers beyond int64 must be exactly a float."""
        if isinstance(value, int) and not in_int64(value):
            return self.exact_float64(node, value)
        return number(value)

    def equals(self, node: Comparison, value: Scalar) -> Native:
        path = node.path
        if value is None:
            return any_of([Exists(key("z", path), True), self.missing(path)])
        if isinstance(value, bool):
            return Eq(key("b", path), value)
        if isinstance(value, str):
            return Eq(key("s", path), value)
        return Eq(key("n", path), self._number(node, value))

    def in_values(self, node: Comparison, values: tuple[Scalar, ...]) -> Native:
        numbers: list[int | float] = []
        others: list[Native] = []
        for value in distinct(values):
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                numbers.append(self._number(node, value))
            else:
                others.append(self.equals(node, value))
        unique = tuple(dict.fromkeys(numbers))
        nkey = key("n", node.path)
        numeric: list[Native] = []
        if len(unique) == 1:
            numeric.append(Eq(nkey, unique[0]))
        elif unique:
            numeric.append(In(nkey, unique))
        return any_of([*numeric, *others])

    def ordered(self, node: Comparison, value: Scalar) -> Native:
        op = node.op
        if isinstance(value, str):
            self.unsupported(
                node, "S3 Vectors ranges take numbers only (declared deviation no-string-ranges)"
            )
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.unsupported(node, f"{op} needs a number")  # the core rejects other operands earlier
        operand = self._number(node, value)
        k = key("n", node.path)
        target = float(operand)
        if abs(target) < EXACT_FLOAT_LIMIT:
            return Range(k, op, operand)
        # Beyond 2^53 the engine may compare stored integers as float64: keep the integers that round to the
        # operand's float64 out of the range and decide each of them here.
        colliding = ints_rounding_to(target)
        strict = "$gt" if op in ("$gt", "$gte") else "$lt"

        def without(condition: Native) -> Native:
            return all_of([condition, Nin(k, colliding)]) if colliding else condition

        parts: list[Native] = [without(Range(k, strict, target))]
        wanted = tuple(n for n in colliding if compare(op, n, value))
        if wanted:
            parts.append(In(k, wanted) if len(wanted) > 1 else Eq(k, wanted[0]))
        if not in_int64(target) and compare(op, target, value):
            parts.append(without(all_of([Range(k, "$gte", target), Range(k, "$lte", target)])))
        return any_of(parts)

    # --- visitor methods ------------------------------------------------------------------------

    def comparison(self, node: Comparison) -> Native:
        """One field condition (datetime operands as the canonical timestamps they are stored as)."""
        if node.path and node.path[0] in self.non_filterable:
            self.unsupported(
                node,
                f"{node.path[0]!r} is in non_filterable_metadata_keys: stored, but S3 Vectors cannot filter "
                "on it (declared deviation non-filterable-keys)",
            )
        value = node.value
        if isinstance(value, datetime):
            node = replace(node, value=canonical_timestamp(value))
        elif isinstance(value, tuple) and any(isinstance(v, datetime) for v in value):
            items = tuple(canonical_timestamp(v) if isinstance(v, datetime) else v for v in value)
            node = replace(node, value=items)
        return super().comparison(node)
