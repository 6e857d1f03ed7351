"""Pinecone's metadata filter language, as Pinecone documents it, checked and evaluated.

Written from Pinecone's documentation ("Filter by metadata", "Understanding metadata"), independently
of mastra-memory's reference evaluator:

* operators ``$eq $ne`` (number, string, boolean), ``$gt $gte $lt $lte`` (number), ``$in $nin``
  (array of strings or numbers), ``$exists`` (boolean), ``$and $or`` (arrays of filters); anything else
  is an invalid query (HTTP 400);
* a bare value ``{"genre": "drama"}`` is ``$eq``; a bare array or an array under ``$eq`` is invalid
  ("they will result in a query compilation error");
* a metadata value that is a list of strings "takes on both values": ``$eq`` and ``$in`` match when
  any element matches, so ``{"$and": [{"genre": "comedy"}, {"genre": "documentary"}]}`` matches
  ``["comedy", "documentary"]``;
* numbers are 64-bit floats (integers and floats with one value are equal); booleans are not numbers;
  ranges compare numbers only (a string is never in a numeric range);
* null is not a value: a ``null`` operand is invalid.

Pinecone does not document how ``$ne`` and ``$nin`` treat a record *without* the field, nor how they read
a list: ``negation_matches_missing`` chooses the first (default ``False``: a missing field matches
neither), and on a list they are the negations of ``$eq``/``$in`` (no element equals / is in the array),
as in MongoDB, on which Pinecone says its language is based. Adapters must not depend on the first
choice; the emulator lets a test flip it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["FilterRejected", "check_filter", "matches"]

_COMPARISON: Final = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists"})
_RANGES: Final = frozenset({"$gt", "$gte", "$lt", "$lte"})
_LOGICAL: Final = frozenset({"$and", "$or"})


class FilterRejected(ValueError):
    """The filter is not a valid Pinecone filter (the service answers HTTP 400)."""


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (str, bool)) or _is_number(value)


def check_filter(flt: Any) -> None:
    """Raise :class:`FilterRejected` unless ``flt`` is a valid Pinecone filter."""
    if not isinstance(flt, Mapping):
        raise FilterRejected("filter must be a JSON object")
    for key, value in flt.items():
        if not isinstance(key, str):
            raise FilterRejected(f"invalid filter key {key!r}")
        if key in _LOGICAL:
            if not isinstance(value, list) or not value:
                raise FilterRejected(f"{key} must be a non-empty array of filters")
            for child in value:
                check_filter(child)
        elif key.startswith("$"):
            raise FilterRejected(f"unknown operator {key} at the top level of a filter")
        else:
            _check_condition(key, value)


def _check_condition(field: str, condition: Any) -> None:
    if isinstance(condition, Mapping):
        if not condition:
            raise FilterRejected(f"empty condition for field {field!r}")
        for op, operand in condition.items():
            _check_operator(field, op, operand)
        return
    _check_operator(field, "$eq", condition)


def _check_operator(field: str, op: Any, operand: Any) -> None:
    if op not in _COMPARISON:
        raise FilterRejected(f"unknown operator {op!r} for field {field!r}")
    if operand is None:
        raise FilterRejected(f"{op} does not accept null (field {field!r})")
    if op in ("$eq", "$ne"):
        if not _is_scalar(operand):
            raise FilterRejected(f"{op} requires a number, string or boolean (field {field!r})")
    elif op in _RANGES:
        if not _is_number(operand):
            raise FilterRejected(f"{op} requires a number (field {field!r})")
    elif op in ("$in", "$nin"):
        if not isinstance(operand, list):
            raise FilterRejected(f"{op} requires an array (field {field!r})")
        for item in operand:
            if not (isinstance(item, str) or _is_number(item)):
                raise FilterRejected(f"{op} accepts only strings and numbers (field {field!r})")
    elif not isinstance(operand, bool):
        raise FilterRejected(f"$exists requires a boolean (field {field!r})")
    if _is_number(operand) and not math.isfinite(float(operand)):
        raise FilterRejected(f"{op} requires a finite number (field {field!r})")


def matches(flt: Mapping[str, Any], metadata: Mapping[str, Any], *, negation_matches_missing: bool) -> bool:
    """Whether a record with ``metadata`` (as stored: numbers are floats) satisfies the valid ``flt``."""
    for key, value in flt.items():
        if key == "$and":
            if not all(
                matches(c, metadata, negation_matches_missing=negation_matches_missing) for c in value
            ):
                return False
        elif key == "$or":
            if not any(
                matches(c, metadata, negation_matches_missing=negation_matches_missing) for c in value
            ):
                return False
        else:
            condition = value if isinstance(value, Mapping) else {"$eq": value}
            for op, operand in condition.items():
                if not _holds(op, operand, key in metadata, metadata.get(key), negation_matches_missing):
                    return False
    return True


def _same(stored: Any, operand: Any) -> bool:
    if isinstance(operand, bool) or isinstance(stored, bool):
        return isinstance(operand, bool) and isinstance(stored, bool) and stored is operand
    if _is_number(operand):
        return _is_number(stored) and float(stored) == float(operand)
    return isinstance(stored, str) and stored == operand


def _any_element(stored: Any, test: Any) -> bool:
    values = stored if isinstance(stored, list) else [stored]
    return any(test(v) for v in values)


def _holds(op: str, operand: Any, present: bool, stored: Any, negation_matches_missing: bool) -> bool:
    if op == "$exists":
        return present is operand
    if not present:
        return negation_matches_missing and op in ("$ne", "$nin")
    if op == "$eq":
        return _any_element(stored, lambda v: _same(v, operand))
    if op == "$ne":
        return not _any_element(stored, lambda v: _same(v, operand))
    if op == "$in":
        return _any_element(stored, lambda v: any(_same(v, o) for o in operand))
    if op == "$nin":
        return not _any_element(stored, lambda v: any(_same(v, o) for o in operand))
    if not _is_number(stored):
        return False
    left, right = float(stored), float(operand)
    if op == "$gt":
        return left > right
    if op == "$gte":
        return left >= right
    if op == "$lt":
        return left < right
    return left <= right
