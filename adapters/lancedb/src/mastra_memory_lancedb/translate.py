"""Translate the filter AST into LanceDB SQL over the JSONB column, with exact bounds.

Every record keeps its metadata twice (see ``store.py``): verbatim JSON text for lossless reads, and a
JSONB copy (``pa.json_(pa.utf8())``, Lance's ``lance.json`` type) that filters read through Lance's JSON
functions. The workhorse is ``json_exists(col, '<path> ? (@ <op> <literal>)')``, a SQL/JSON-path filter
whose semantics were established by experiment against the installed engine:

* a path of one key, ``$["k"]``, reaches the value itself; a filter on it is also applied to each element
  when the value is an array (one level, like MongoDB's element-wise rule), never to elements of nested
  arrays; a missing key reaches nothing;
* comparisons are typed: ``5 == 5.0``, but ``5 != "5"``, ``1 != true``, numbers only order against
  numbers and strings against strings (by UTF-8 bytes, i.e. by code point, as Python does);
* integers compare exactly with integers; an integer and a float compare as float64, which is exact
  whenever the literal's magnitude is below 2^53 (a stored value beyond that rounds to a float64 of
  magnitude at least 2^53 and keeps its order against such a literal);
* the path parser takes no empty string literal and no number literal with a leading integer part and a
  fraction (``0.5``), so ``""`` is written as ``@ < "\\u0000"`` (only the empty string is smaller) and a
  fractional float as ``.5e0`` (the same decimal, hence the same correctly rounded float64);
* paths do not cross arrays (``$["a"]["b"]`` does not look into ``a: [{"b": 1}]``), which MongoDB's
  implicit array traversal does.

**Bounds.** A filter becomes a :class:`LanceFilter` with two SQL conditions: ``lower`` (every row it
selects matches) and ``upper`` (every matching row satisfies it). Where the translation is exact both
are the same string. A condition that SQL cannot decide exactly for every row has ``lower`` narrower
than ``upper``: the store then evaluates the reference evaluator over the rows of ``upper`` — the
exhaustive candidate set, never an ANN result — so results stay exact (docs/spec.md §2.7 item 4). This happens
for ``$regex``, ``$contains`` and ``$elemMatch`` (emulated), for paths of several keys on rows where a
prefix of the path is an array (implicit traversal), and for number literals of magnitude 2^53 or more.
``$not`` and ``$nor`` swap the bounds, so negations stay sound.

**Literals.** SQL string literals double their single quotes (Lance's SQL dialect reads backslashes
literally); JSON-path keys and strings are JSON string literals (``json.dumps``), which Lance's path
parser decodes. Nothing from the filter reaches the SQL text in any other way. Every fragment is TRUE or
FALSE for every row, never NULL, so ``NOT`` never loses rows to three-valued logic.

**Index columns.** For top-level keys named in ``create_index(metadata_indexes=...)`` the store keeps a
``list<string>`` column with the key's string values (the value itself, or the string elements of a list).
``{key: "v"}`` is then ``array_has_any(column, ['v'])`` — the same meaning, answered by a LabelList index.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Final, TypeAlias

from mastra_memory.filters.ast import And, Comparison, ElemMatch, Node, Nor, Not, Or, Path, Regex, Scalar
from mastra_memory.filters.numbers import EXACT_FLOAT_LIMIT
from mastra_memory.filters.visitor import FilterTranslator

from .capabilities import LANCEDB_CAPABILITIES

#: The JSONB column filters read.
JSON_COLUMN: Final = "_mastra_json"
TRUE: Final = "true"
FALSE: Final = "false"
#: A callback that renders one condition at a JSON path as a SQL boolean.
Render: TypeAlias = Callable[[str], str]
# The largest array index Lance's path parser takes (an i32).
_MAX_INDEX: Final = 2**31 - 1


@dataclass(frozen=True, slots=True)
class Bound:
    """A condition as two SQL booleans: ``lower`` implies the condition, the condition implies ``upper``."""

    lower: str
    upper: str

    @classmethod
    def exact(cls, sql: str) -> Bound:
        return cls(sql, sql)

    @property
    def is_exact(self) -> bool:
        return self.lower == self.upper


@dataclass(frozen=True, slots=True)
class LanceFilter:
    """A translated filter: the parsed ``node`` and its SQL bounds (see the module docstring)."""

    node: Node
    lower: str
    upper: str

    @property
    def exact(self) -> bool:
        """Whether ``lower`` (= ``upper``) selects exactly the matching rows."""
        return self.lower == self.upper


def sql_string(value: str) -> str:
    """A SQL string literal: single quotes doubled, everything else as it is."""
    return "'" + value.replace("'", "''") + "'"


def json_string(value: str) -> str:
    """A JSON string literal, as Lance's JSON-path parser reads keys and string values."""
    return json.dumps(value, ensure_ascii=False)


def json_path(path: Sequence[str]) -> str:
    """``$["a"]["b"]`` for the path ``("a", "b")``: every key quoted, whatever it contains."""
    return "$" + "".join(f"[{json_string(key)}]" for key in path)


def number_literal(value: int | float) -> str:
    """A JSON-path number literal for ``value`` (|value| < 2^53) that the parser reads as this number.

    Integers and integral floats are written as integers; other floats as ``[-].<digits>e<exp>``, the
    shortest decimal that round-trips, rewritten so the parser cannot stop after an integer part.
    """
    if isinstance(value, int) or value.is_integer():
        return str(int(value))
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)  # finite: the parser rejects NaN and infinities
    text = "".join(str(d) for d in digits)
    stripped = text.lstrip("0")
    scale = exponent + len(text) - (len(text) - len(stripped))
    return f"{'-' if sign else ''}.{stripped}e{scale}"


def _join(operator: str, parts: Sequence[str]) -> str:
    """``(a AND b AND ...)`` with constant folding; a balanced tree keeps deep lists shallow."""
    absorbing, neutral = (FALSE, TRUE) if operator == "AND" else (TRUE, FALSE)
    kept = [p for p in parts if p != neutral]
    if absorbing in kept:
        return absorbing
    if not kept:
        return neutral
    if len(kept) == 1:
        return kept[0]
    middle = len(kept) // 2
    return f"({_join(operator, kept[:middle])} {operator} {_join(operator, kept[middle:])})"


def _not(sql: str) -> str:
    if sql == TRUE:
        return FALSE
    if sql == FALSE:
        return TRUE
    return f"(NOT {sql})"


def _and(parts: Sequence[Bound]) -> Bound:
    return Bound(_join("AND", [p.lower for p in parts]), _join("AND", [p.upper for p in parts]))


def _or(parts: Sequence[Bound]) -> Bound:
    return Bound(_join("OR", [p.lower for p in parts]), _join("OR", [p.upper for p in parts]))


def _negate(bound: Bound) -> Bound:
    return Bound(_not(bound.upper), _not(bound.lower))


def _inexact_number(value: Scalar) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) >= EXACT_FLOAT_LIMIT


class LanceDBTranslator(FilterTranslator[LanceFilter]):
    """AST -> :class:`LanceFilter` (SQL bounds over the JSONB column; see the module docstring).

    ``indexed`` maps top-level metadata keys to the ``list<string>`` index columns of the table being
    queried; the store re-translates with it once it knows the table (translation is pure).
    """

    capabilities = LANCEDB_CAPABILITIES

    def __init__(self, indexed: Mapping[str, str] | None = None, column: str = JSON_COLUMN) -> None:
        self.indexed = dict(indexed or {})
        self.column = column

    def translate(self, node: Node) -> LanceFilter:
        """Check ``node`` against the manifest, then build its bounds."""
        self.check(node)
        bound = self._bound(node)
        return LanceFilter(node, bound.lower, bound.upper)

    # --- the walk (bounds are built directly; ``visit`` would force one result type per node) ---------

    def _bound(self, node: Node) -> Bound:
        match node:
            case Comparison():
                return self._comparison(node)
            case Regex() | ElemMatch():
                # Emulated: the reference evaluator decides over the rows where the field is present.
                return Bound(FALSE, self._on_path(node.path, lambda p: self._exists(p)).upper)
            case And(children):
                return _and([self._bound(c) for c in children])
            case Or(children):
                return _or([self._bound(c) for c in children])
            case Nor(children):
                return _negate(_or([self._bound(c) for c in children]))
            case Not(child):
                return _negate(self._bound(child))
        raise TypeError(f"not a filter node: {node!r}")  # pragma: no cover - exhaustive match

    # --- comparisons -------------------------------------------------------------------------------

    def _comparison(self, node: Comparison) -> Bound:
        value = node.value
        match node.op:
            case "$eq":
                return self._equals(node.path, self._scalar(node, value))
            case "$ne":
                return _negate(self._equals(node.path, self._scalar(node, value)))
            case "$in":
                return self._in(node.path, self._values(node, value))
            case "$nin":
                return _negate(self._in(node.path, self._values(node, value)))
            case "$all":
                values = self._values(node, value)
                if not values:
                    return Bound.exact(FALSE)
                return _and([self._equals(node.path, v) for v in values])
            case "$gt" | "$gte" | "$lt" | "$lte":
                return self._range(node, self._scalar(node, value))
            case "$exists":
                present = self._on_path(node.path, self._exists)
                return present if value is True else _negate(present)
            case "$size":
                size = self._scalar(node, value)
                assert isinstance(size, int)
                return self._on_path(node.path, lambda p: self._has_size(p, size))
            case "$contains":
                return Bound(FALSE, self._on_path(node.path, self._exists).upper)
        self.unsupported(node)  # pragma: no cover - the match is exhaustive over ComparisonOp

    def _equals(self, path: Path, value: Scalar) -> Bound:
        return self._in(path, (value,))

    def _in(self, path: Path, values: tuple[Scalar, ...]) -> Bound:
        """Some reached value (or element) equals one of ``values``; ``None`` also matches missing."""
        if not values:
            return Bound.exact(FALSE)
        column = self.indexed.get(path[0]) if len(path) == 1 else None
        strings = [v for v in values if isinstance(v, str)]
        parts: list[Bound] = []
        if column is not None and strings:
            # The index column holds exactly the strings equality reaches, elements of lists included.
            listed = ", ".join(sql_string(s) for s in strings)
            parts.append(Bound.exact(f"array_has_any({column}, [{listed}])"))
            values = tuple(v for v in values if not isinstance(v, str))
        for value in values:
            if _inexact_number(value):
                # float64 could confuse neighbours this large: the evaluator decides where it is present.
                parts.append(Bound(FALSE, self._on_path(path, self._exists).upper))
                continue
            parts.append(self._on_path(path, self._filtered(self._equality_test(value)), elementwise=True))
        if None in values:
            parts.append(_negate(self._on_path(path, self._exists)))
        return _or(parts)

    def _equality_test(self, value: Scalar) -> str:
        if value == "":
            return '@ < "\\u0000"'  # the parser takes no empty literal; only "" sorts before "\0"
        return f"@ == {self._literal(value)}"

    def _range(self, node: Comparison, value: Scalar) -> Bound:
        if _inexact_number(value):
            return Bound(FALSE, self._on_path(node.path, self._exists).upper)
        symbol = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}[node.op]
        if value == "":
            test = {
                ">": '@ >= "\\u0000"',
                ">=": '@ >= "\\u0000" || @ < "\\u0000"',
                "<": None,
                "<=": '@ < "\\u0000"',
            }[symbol]
            if test is None:
                return Bound.exact(FALSE)  # no string sorts before ""
        else:
            test = f"@ {symbol} {self._literal(value)}"
        return self._on_path(node.path, self._filtered(test), elementwise=True)

    def _has_size(self, path: str, size: int) -> str:
        """The value at ``path`` is an array of exactly ``size`` elements."""
        if size == 0:
            return f"COALESCE(json_extract({self.column}, {sql_string(path)}) = '[]', false)"
        if size > _MAX_INDEX:
            return FALSE  # no stored array is that long
        is_array = self._is_array(path)
        last = self._exists(f"{path}[{size - 1}]")
        beyond = self._exists(f"{path}[{size}]") if size < _MAX_INDEX else FALSE
        return _join("AND", [is_array, last, _not(beyond)])

    # --- paths -------------------------------------------------------------------------------------

    def _on_path(self, path: Path, render: Render, *, elementwise: bool = False) -> Bound:
        """``render(json_path)`` where it is exact, with the other rows left to the reference evaluator.

        Lance's paths do not cross arrays, so a row where a proper prefix of the path holds an array is
        uncertain (MongoDB would look into the array's objects). With ``elementwise`` the row is also
        uncertain when the value itself is an array: Lance's filter over an array's elements stops at
        the first element of another type (``["s", 2]`` never equals ``2``), so only scalars and
        objects are decided in SQL.
        """
        sql = render(json_path(path))
        prefixes = range(1, len(path) + 1) if elementwise else range(1, len(path))
        uncertain = _join("OR", [self._is_array(json_path(path[:depth])) for depth in prefixes])
        if uncertain == FALSE:
            return Bound.exact(sql)
        return Bound(_join("AND", [_not(uncertain), sql]), _join("OR", [uncertain, sql]))

    def _is_array(self, path: str) -> str:
        return f"COALESCE(starts_with(json_extract({self.column}, {sql_string(path)}), '['), false)"

    def _filtered(self, test: str) -> Render:
        """Render "some value at the path passes ``test``" (a JSON-path filter expression on ``@``)."""

        def render(path: str) -> str:
            return self._exists(f"{path} ? ({test})")

        return render

    def _exists(self, path: str) -> str:
        return f"json_exists({self.column}, {sql_string(path)})"

    # --- literals ----------------------------------------------------------------------------------

    def _literal(self, value: Scalar) -> str:
        if isinstance(value, str):
            return json_string(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return number_literal(value)
        return json.dumps(value)  # null, true, false

    def _scalar(self, node: Comparison, value: Scalar | tuple[Scalar, ...]) -> Scalar:
        if isinstance(value, tuple):
            raise TypeError(f"expected a scalar operand, got {value!r}")  # pragma: no cover - parser
        self._check_text(node, value)
        return value

    def _values(self, node: Comparison, value: Scalar | tuple[Scalar, ...]) -> tuple[Scalar, ...]:
        if not isinstance(value, tuple):
            raise TypeError(f"expected a list operand, got {value!r}")  # pragma: no cover - parser
        for item in value:
            self._check_text(node, item)
        return value

    def _check_text(self, node: Node, value: Scalar) -> None:
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                self.unsupported(node, "strings with unpaired surrogates cannot be stored or compared")


def sql_list(values: Sequence[str]) -> str:
    """``('a', 'b')`` for an ``IN`` list of string literals."""
    return "(" + ", ".join(sql_string(v) for v in values) + ")"


__all__ = [
    "FALSE",
    "JSON_COLUMN",
    "TRUE",
    "Bound",
    "LanceDBTranslator",
    "LanceFilter",
    "json_path",
    "json_string",
    "number_literal",
    "sql_list",
    "sql_string",
]
