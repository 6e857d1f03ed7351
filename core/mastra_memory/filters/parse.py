"""Validate a Mongo-style filter dict and normalise it into the AST (docs/spec.md §2.1, §2.4, §2.6).

First the size limits of docs/spec.md §2.10 are checked without recursion (`limits`), so the
recursive walk below only ever sees a filter of bounded depth and size. Then the whole tree is walked and
every problem collected; `parse` raises one `FilterError` listing them
all, so a caller fixes a filter in one round. Text that no store can hold — strings with unpaired
surrogates, integers beyond the float range, datetimes outside the UTC calendar — is refused here too,
so it never reaches a backend as an untyped encoding or overflow error.
Locations in messages are dotted: field keys as written, logical operators with the index of the list
element (``$or.1.price``), and the operator that holds a nested document (``items.$elemMatch.k``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final, TypeGuard

from ..errors import FilterError, ValidationError
from ..metadata_limits import is_unicode, shown
from ..timestamps import canonical_timestamp
from .ast import (
    And,
    Comparison,
    ComparisonOp,
    ElemMatch,
    Node,
    Nor,
    Not,
    Or,
    Path,
    Regex,
    Scalar,
)
from .limits import limit_problems
from .numbers import INT64_MAX
from .operators import EQUALITY, FIELD_OPERATORS, LIST, RANGE
from .regex import normalise_options, option_problems, regex_problems

_LOGICAL_LISTS: Final[dict[str, type[And] | type[Or] | type[Nor]]] = {"$and": And, "$or": Or, "$nor": Nor}
# Operators that make a document an operator document when they are its only keys (``$not`` is both).
_BARE_OPERATORS: Final[frozenset[str]] = FIELD_OPERATORS - {"$not"}

Location = tuple[str, ...]


class _Invalid:
    """Marker for an operand that produced a problem (distinct from a valid ``None``)."""


_INVALID: Final = _Invalid()


def _where(loc: Location) -> str:
    return ".".join(loc)


def _is_operator_key(key: object) -> bool:
    return isinstance(key, str) and key.startswith("$")


def _all_of(nodes: list[Node]) -> Node | None:
    """One node for an implicit conjunction: the node itself, an ``And``, or ``None`` when empty."""
    if not nodes:
        return None
    return nodes[0] if len(nodes) == 1 else And(tuple(nodes))


class _Parser:
    """Walks one filter. Methods return the conjuncts they produced and record problems as they go.

    After a problem the returned nodes are incomplete; `parse` discards them and raises.
    """

    def __init__(self) -> None:
        self.problems: list[str] = []

    def problem(self, message: str) -> None:
        self.problems.append(shown(message))

    # --- documents: root, logical list elements, root $not, $elemMatch over objects -------------

    def document(self, doc: Mapping[Any, Any], loc: Location, *, logical_content: bool) -> list[Node]:
        if logical_content and all(isinstance(k, str) and k in _BARE_OPERATORS for k in doc):
            self.problem(
                f"Logical operators must contain field conditions, not direct operators: {_where(loc)}"
            )
            return []
        nodes: list[Node] = []
        for key, value in doc.items():
            if key in _LOGICAL_LISTS:
                nodes.extend(self.logical_list(key, value, (*loc, key)))
            elif key == "$not":
                nodes.extend(self.root_not(value, (*loc, key)))
            elif _is_operator_key(key):
                if key in FIELD_OPERATORS:
                    self.problem(f"Invalid top-level operator: {key}")
                else:
                    self.problem(f"Unsupported operator: {key}")
            else:
                key_loc = (*loc, str(key))
                path = self.field_path(key, key_loc)
                if path is not None:
                    nodes.extend(self.condition(path, value, key_loc))
        return nodes

    def logical_list(self, op: str, value: Any, loc: Location) -> list[Node]:
        if not isinstance(value, (list, tuple)) or not value:
            self.problem(f"{op} requires a non-empty list: {_where(loc)}")
            return []
        children: list[Node] = []
        for index, item in enumerate(value):
            item_loc = (*loc, str(index))
            if not isinstance(item, Mapping):
                self.problem(f"{op} elements must be documents: {_where(item_loc)}")
            elif not item:
                self.problem(f"Empty object is not a valid condition: {_where(item_loc)}")
            else:
                child = _all_of(self.document(item, item_loc, logical_content=True))
                if child is not None:
                    children.append(child)
        return [_LOGICAL_LISTS[op](tuple(children))]

    def not_operand(self, value: Any, loc: Location) -> TypeGuard[Mapping[Any, Any]]:
        """Whether ``value``, the operand of a ``$not``, is a non-empty object (else a problem)."""
        if not isinstance(value, Mapping):
            self.problem(f"$not operator requires an object: {_where(loc)}")
            return False
        if not value:
            self.problem(f"$not operator cannot be empty: {_where(loc)}")
            return False
        return True

    def root_not(self, value: Any, loc: Location) -> list[Node]:
        if not self.not_operand(value, loc):
            return []
        child = _all_of(self.document(value, loc, logical_content=True))
        return [Not(child)] if child is not None else []

    def field_path(self, key: Any, loc: Location) -> Path | None:
        if not isinstance(key, str):
            self.problem(f"Invalid field path: {_where(loc)}")
            return None
        if not is_unicode(key):
            self.problem(
                f"Invalid field path: {_where(loc)} (unpaired surrogate; field names must be valid Unicode)"
            )
            return None
        segments = tuple(key.split("."))
        if not all(segments):
            self.problem(f"Invalid field path: {_where(loc)}")
            return None
        bad = [s for s in segments if s.startswith("$")]
        for segment in bad:
            self.problem(f"Unsupported operator: {segment}")
        return None if bad else segments

    # --- conditions on a field -------------------------------------------------------------------

    def condition(self, path: Path, value: Any, loc: Location) -> list[Node]:
        if isinstance(value, Mapping):
            if not value:
                self.problem(f"Empty object is not a valid condition: {_where(loc)}")
                return []
            operator_keys = [_is_operator_key(k) for k in value]
            if all(operator_keys):
                return self.operators(path, value, loc)
            if any(operator_keys):
                self.problem(f"Cannot mix operators and field names: {_where(loc)}")
                return []
            nodes: list[Node] = []
            for key, sub in value.items():
                key_loc = (*loc, str(key))
                sub_path = self.field_path(key, key_loc)
                if sub_path is not None:
                    nodes.extend(self.condition(path + sub_path, sub, key_loc))
            return nodes
        if isinstance(value, (list, tuple)):
            values = self.scalars("$in", value, loc)
            return [Comparison(path, "$in", values)] if values is not None else []
        operand = self.scalar("$eq", value, loc)
        return [] if isinstance(operand, _Invalid) else [Comparison(path, "$eq", operand)]

    def operators(self, path: Path, doc: Mapping[str, Any], loc: Location) -> list[Node]:
        nodes: list[Node] = []
        for op, operand in doc.items():
            if op == "$options":
                if "$regex" not in doc:
                    self.problem(f"$options requires $regex: {_where(loc)}")
                continue  # validated together with $regex
            nodes.extend(self.operator(path, op, operand, doc, loc))
        return nodes

    def operator(
        self, path: Path, op: str, operand: Any, doc: Mapping[str, Any], loc: Location
    ) -> list[Node]:
        where = _where(loc)
        if op in _LOGICAL_LISTS:
            self.problem(f"Logical operator {op} cannot be used at field level: {where}")
            return []
        if op in EQUALITY or op in RANGE:
            if op in RANGE and (isinstance(operand, bool) or not isinstance(operand, _RANGE_TYPES)):
                self.problem(f"{op} requires a number, string or datetime: {where}")
                return []
            value = self.scalar(op, operand, loc)
            return [] if isinstance(value, _Invalid) else [Comparison(path, _COMPARISON_OPS[op], value)]
        if op in LIST:
            values = self.scalars(op, operand, loc)
            return [Comparison(path, _COMPARISON_OPS[op], values)] if values is not None else []
        if op == "$exists":
            if not isinstance(operand, bool):
                self.problem(f"$exists requires a boolean: {where}")
                return []
            return [Comparison(path, "$exists", operand)]
        if op == "$size":
            if isinstance(operand, bool) or not isinstance(operand, int) or operand < 0:
                self.problem(f"$size requires a non-negative integer: {where}")
                return []
            if operand > INT64_MAX:
                self.problem(f"$size requires a non-negative integer: {where} (at most 2**63 - 1)")
                return []
            return [Comparison(path, "$size", int(operand))]
        if op == "$regex":
            return self.regex(path, operand, doc.get("$options", ""), loc)
        if op == "$elemMatch":
            return self.elem_match(path, operand, loc)
        if op == "$not":
            return self.field_not(path, operand, loc)
        self.problem(f"Unsupported operator: {op}")
        return []

    def regex(self, path: Path, pattern: Any, options: Any, loc: Location) -> list[Node]:
        problems: list[str] = []
        if not isinstance(pattern, str):
            problems.append(f"$regex requires a string: {_where(loc)}")
        elif not is_unicode(pattern):
            problems.append(_invalid_string(loc))
        else:
            problems.extend(regex_problems(pattern))
        if isinstance(options, str):
            problems.extend(option_problems(options))
        else:
            problems.append(f"$options requires a string: {_where(loc)}")
        for message in problems:
            self.problem(message)
        if problems or not isinstance(pattern, str) or not isinstance(options, str):
            return []
        return [Regex(path, str(pattern), normalise_options(options))]

    def elem_match(self, path: Path, operand: Any, loc: Location) -> list[Node]:
        if not isinstance(operand, Mapping) or not operand:
            self.problem(f"$elemMatch requires an object with conditions: {_where(loc)}")
            return []
        inner_loc = (*loc, "$elemMatch")
        if _is_value_condition(operand):
            nodes = self.operators((), operand, inner_loc)
        else:
            nodes = self.document(operand, inner_loc, logical_content=False)
        condition = _all_of(nodes)
        return [ElemMatch(path, condition)] if condition is not None else []

    def field_not(self, path: Path, operand: Any, loc: Location) -> list[Node]:
        if not self.not_operand(operand, loc):
            return []
        inner_loc = (*loc, "$not")
        operator_keys = [_is_operator_key(k) for k in operand]
        if not all(operator_keys):
            if any(operator_keys):
                self.problem(f"Cannot mix operators and field names: {_where(inner_loc)}")
            else:
                self.problem(f"$not operator requires an object of operators at field level: {_where(loc)}")
            return []
        child = _all_of(self.operators(path, operand, inner_loc))
        return [Not(child)] if child is not None else []

    # --- operands --------------------------------------------------------------------------------

    def scalars(self, op: str, operand: Any, loc: Location) -> tuple[Scalar, ...] | None:
        if not isinstance(operand, (list, tuple)):
            self.problem(f"{op} requires a list: {_where(loc)}")
            return None
        values: list[Scalar] = []
        for item in operand:
            value = self.scalar(op, item, loc)
            if not isinstance(value, _Invalid):
                values.append(value)
        return tuple(values) if len(values) == len(operand) else None

    def scalar(self, op: str, value: Any, loc: Location) -> Scalar | _Invalid:
        """The normalised scalar, or ``_INVALID`` after recording the problem."""
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, str):
            if not is_unicode(value):
                self.problem(_invalid_string(loc))
                return _INVALID
            return value if type(value) is str else str.__str__(value)  # StrEnum members: their plain text
        if isinstance(value, int):
            try:
                float(value)
            except OverflowError:
                where = _where(loc)
                self.problem(f"Invalid number: {where} (an integer beyond the float range, about ±1.8e308)")
                return _INVALID
            return int(value)
        if isinstance(value, float):
            if not math.isfinite(value):
                self.problem(f"Invalid number: {_where(loc)}")
                return _INVALID
            return float(value) + 0.0  # -0.0 + 0.0 == +0.0: one zero, one spelling
        if isinstance(value, datetime):
            try:
                return canonical_timestamp(value)
            except ValidationError:
                where = _where(loc)
                self.problem(f"Naive datetime is not allowed: {where} (attach a tzinfo, e.g. timezone.utc)")
                return _INVALID
            except OverflowError:
                self.problem(
                    f"Invalid datetime: {_where(loc)} (outside the years 1-9999 once converted to UTC)"
                )
                return _INVALID
        self.problem(f"{op} requires a scalar operand: {_where(loc)}")
        return _INVALID


_COMPARISON_OPS: Final[dict[str, ComparisonOp]] = {
    "$eq": "$eq", "$ne": "$ne", "$gt": "$gt", "$gte": "$gte", "$lt": "$lt", "$lte": "$lte",
    "$in": "$in", "$nin": "$nin", "$all": "$all", "$contains": "$contains",
}  # fmt: skip
_RANGE_TYPES: Final = (int, float, str, datetime)


def _invalid_string(loc: Location) -> str:
    return f"Invalid string: {_where(loc)} (unpaired surrogate; filter text must be valid Unicode)"


def _is_value_condition(doc: Mapping[Any, Any]) -> bool:
    """Whether an ``$elemMatch`` document tests the element's value rather than fields of object elements.

    An operator document (``{"$gte": 2}``) tests the value. Field names or ``$and``/``$or``/``$nor`` make it
    a document over object elements; so does a lone ``$not`` whose content has field names.
    """
    if not all(_is_operator_key(k) for k in doc) or any(k in _LOGICAL_LISTS for k in doc):
        return False
    if list(doc) == ["$not"]:
        inner = doc["$not"]
        return not (isinstance(inner, Mapping) and inner and not any(_is_operator_key(k) for k in inner))
    return True


def parse(filter: Any) -> Node | None:
    """Validate ``filter`` and return its normalised AST; ``None`` (or ``{}``) means "match everything".

    Args:
        filter: a Mongo-style filter dict (docs/spec.md §2), ``None`` or ``{}``.

    Returns:
        The filter's tree, or ``None`` when it matches everything.

    Raises:
        FilterError: listing every problem in the filter (``FilterError.problems``).
    """
    if filter is None:
        return None
    if not isinstance(filter, Mapping):
        raise FilterError(["Filter must be a dict"], details={"type": type(filter).__name__})
    if not filter:
        return None
    too_large = limit_problems(filter)  # before the recursive walk: bounded depth and size from here on
    if too_large:
        raise FilterError(too_large, details={"problems": too_large})
    parser = _Parser()
    node = _all_of(parser.document(filter, (), logical_content=False))
    if parser.problems:
        problems = list(dict.fromkeys(parser.problems))
        raise FilterError(problems, details={"problems": problems})
    return node


def validate_filter(filter: Any) -> None:
    """Raise `FilterError` listing every problem in ``filter``; return quietly if it is valid."""
    parse(filter)
