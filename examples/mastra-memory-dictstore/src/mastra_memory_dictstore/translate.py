"""Compile the filter AST into a Python predicate over one record's metadata.

The store has no query language of its own, so its "native filter" is a function ``metadata -> bool``.
Only the operators of the manifest are compiled; the ``FilterTranslator`` base rejects every other one
with ``UnsupportedFilterError`` before the store is touched. The meaning follows docs/spec.md §2.3/§2.4,
written
out here rather than borrowed from the core's reference evaluator: the conformance kit compares this code
with that evaluator, which would prove nothing if one called the other.

Rules implemented (one place each):

* a path descends through dicts; a list in the middle of a path is crossed through its dict elements;
  a branch that ends early reaches *absent*;
* equality, ranges and ``$in`` test each element of a list value (and never the list itself);
* values compare only within a type: numbers with numbers (``bool`` is not a number), strings with
  strings by code point, ``None`` equals null and absent;
* ``$ne``/``$nin``/``$not``/``$nor`` are plain negations, so they match absent fields;
* ``$exists`` asks whether the key is there — except that an empty list counts as absent, the deviation
  ``exists-empty-list`` declared in the manifest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final, TypeAlias

from mastra_memory.filters import And, Comparison, FilterTranslator, Nor, Not, Or, Path, Scalar

from .capabilities import CAPABILITIES

Predicate: TypeAlias = Callable[[Mapping[str, Any]], bool]


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Final = _Absent()


def reach(metadata: Mapping[str, Any], path: Path) -> list[Any]:
    """Every value ``path`` reaches in ``metadata``; ``ABSENT`` for each branch that ends early."""
    frontier: list[Any] = [metadata]
    last = len(path) - 1
    for depth, key in enumerate(path):
        following: list[Any] = []
        for node in frontier:
            if not isinstance(node, dict) or key not in node:
                following.append(ABSENT)
                continue
            value = node[key]
            if depth < last and isinstance(value, list):
                following.extend(element for element in value if isinstance(element, dict))
            else:
                following.append(value)
        frontier = following
    return frontier


def _candidates(values: list[Any]) -> Iterator[Any]:
    """The values element-wise operators test: a list contributes its elements."""
    for value in values:
        if isinstance(value, list):
            yield from value
        else:
            yield value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def same(value: Any, operand: Scalar) -> bool:
    """Typed equality of one stored value with a scalar operand."""
    if operand is None:
        return value is None or value is ABSENT
    if isinstance(operand, bool):
        return isinstance(value, bool) and value == operand
    if isinstance(operand, str):
        return isinstance(value, str) and value == operand
    return _is_number(value) and value == operand


def _in_order(value: Any, op: str, operand: Scalar) -> bool:
    if isinstance(operand, str):
        if not isinstance(value, str):
            return False
    elif not _is_number(value):
        return False
    if op == "$gt":
        return bool(value > operand)
    if op == "$gte":
        return bool(value >= operand)
    if op == "$lt":
        return bool(value < operand)
    return bool(value <= operand)


def _present(value: Any) -> bool:
    # The declared deviation: [] reads as absent.
    return value is not ABSENT and value != []


class DictStoreTranslator(FilterTranslator[Predicate]):
    """AST in, predicate out. Unimplemented node methods keep the base's ``unsupported()`` behaviour."""

    capabilities = CAPABILITIES

    def comparison(self, node: Comparison) -> Predicate:
        path, op, operand = node.path, node.op, node.value
        if op in ("$eq", "$ne") and not isinstance(operand, tuple):
            scalar: Scalar = operand
            equal = op == "$eq"
            return lambda md: any(same(v, scalar) for v in _candidates(reach(md, path))) is equal
        if op in ("$in", "$nin") and isinstance(operand, tuple):
            options = operand
            member = op == "$in"
            return lambda md: any(same(v, o) for v in _candidates(reach(md, path)) for o in options) is member
        if op in ("$gt", "$gte", "$lt", "$lte") and isinstance(operand, str | int | float):
            bound: Scalar = operand
            return lambda md: any(_in_order(v, op, bound) for v in _candidates(reach(md, path)))
        if op == "$exists" and isinstance(operand, bool):
            wanted = operand
            return lambda md: any(_present(v) for v in reach(md, path)) is wanted
        self.unsupported(node)

    def logical_and(self, node: And, children: list[Predicate]) -> Predicate:
        return lambda md: all(child(md) for child in children)

    def logical_or(self, node: Or, children: list[Predicate]) -> Predicate:
        return lambda md: any(child(md) for child in children)

    def logical_nor(self, node: Nor, children: list[Predicate]) -> Predicate:
        return lambda md: not any(child(md) for child in children)

    def logical_not(self, node: Not, child: Predicate) -> Predicate:
        return lambda md: not child(md)
