"""Filter translation: the filter AST in, an OpenSearch query DSL clause out (docs/spec.md §2.7).

Every clause the translator emits is exact: it holds for a document exactly when the reference evaluator
says the AST node holds for the record's metadata. It reads the filter fields of :mod:`.document`
(``str``/``lstr``/``lhash``/``int``/``dbl`` terms ``<path code>:<value>``, ``facts``, ``nested`` ``elems``):

* ``$and`` is ``bool.filter``, ``$or`` ``bool.should`` (``minimum_should_match: 1``), and every negation
  (``$ne``, ``$nin``, ``$not``, ``$nor``) a plain ``bool.must_not`` — a missing field matches, as MongoDB
  says, because the positive clause is false for it;
* equality with a string is a ``term`` on ``str`` (``lhash`` for a long operand); with a number a ``term``
  on ``int`` (int64 and integral floats: ``{"n": 1}`` finds ``1.0``) or ``dbl``; ``True``/``False``/
  ``None`` are facts (``{"f": None}`` is "a null is reached, or the path is missing somewhere", spelled
  out from the facts of each prefix);
* ranges are keyword ``range`` queries over the order-preserving encodings, with integer bounds computed
  exactly (``$gt 5.5`` on integers is ``>= 6``) and float bounds chosen so that no int-vs-float rounding
  can change an answer;
* ``$in`` is a ``terms`` per field in a ``should``, ``$all`` a ``filter`` of equalities, ``$size`` and
  ``$exists`` facts, ``$elemMatch`` a ``nested`` query over the object elements (plus a fact for nested
  arrays, which MongoDB reads as empty objects).

Rejected with :class:`~mastra_memory.errors.UnsupportedFilterError` before any I/O: ``$regex`` and
``$contains`` (not declared), integers beyond int64 that are not exactly a float (``int64-range``), string
range operands longer than the indexed prefix (``long-string-range``), ``$elemMatch`` deeper than the
mapped nesting (``elemmatch-depth``), and ``$elemMatch`` with an operator document (scalar elements),
which a ``nested`` query over object elements cannot test.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final, TypeAlias

from mastra_memory.filters import Comparison, ElemMatch, matches
from mastra_memory.filters.ast import And, Nor, Not, Or, Path, Scalar
from mastra_memory.filters.visitor import FilterTranslator

from .capabilities import OPENSEARCH_CAPABILITIES
from .document import (
    DOUBLE_FIELD,
    ELEMENT_DEPTH,
    ELEMENTS_FIELD,
    FACTS_FIELD,
    INT64_MAX,
    INT64_MIN,
    INT_FIELD,
    LONG_HASH_FIELD,
    LONG_STRING_FIELD,
    PATH_FIELD,
    SHORT_STRING_BYTES,
    STRING_FIELD,
    encode_double,
    encode_int,
    fact,
    is_short,
    path_code,
    string_hash,
    string_prefix,
)

__all__ = ["MATCH_ALL", "MATCH_NONE", "Clause", "OpenSearchFilterTranslator"]

Clause: TypeAlias = dict[str, Any]

MATCH_ALL: Final[Clause] = {"match_all": {}}
MATCH_NONE: Final[Clause] = {"match_none": {}}
#: The character after ``:`` — the exclusive upper bound of every ``<code>:…`` term.
_AFTER_COLON: Final = ";"
#: A string range operand up to this many UTF-8 bytes cannot extend a stored long-string prefix.
_LONG_RANGE_LIMIT: Final = SHORT_STRING_BYTES - 4


def _all_of(clauses: Sequence[Clause]) -> Clause:
    if any(c == MATCH_NONE for c in clauses):
        return MATCH_NONE
    kept = [c for c in clauses if c != MATCH_ALL]
    if not kept:
        return MATCH_ALL
    return kept[0] if len(kept) == 1 else {"bool": {"filter": kept}}


def _any_of(clauses: Sequence[Clause]) -> Clause:
    if any(c == MATCH_ALL for c in clauses):
        return MATCH_ALL
    kept = [c for c in clauses if c != MATCH_NONE]
    if not kept:
        return MATCH_NONE
    return kept[0] if len(kept) == 1 else {"bool": {"should": kept, "minimum_should_match": 1}}


def _none_of(clauses: Sequence[Clause]) -> Clause:
    if any(c == MATCH_ALL for c in clauses):
        return MATCH_NONE
    kept = [c for c in clauses if c != MATCH_NONE]
    if not kept:
        return MATCH_ALL
    return {"bool": {"must_not": kept}}


def _distinct(values: tuple[Scalar, ...]) -> list[Scalar]:
    """``values`` without repeats, keeping ``True`` apart from ``1`` (which Python's ``==`` does not)."""
    seen: dict[tuple[bool, Scalar], Scalar] = {}
    for value in values:
        seen.setdefault((isinstance(value, bool), value), value)
    return list(seen.values())


class OpenSearchFilterTranslator(FilterTranslator[Clause]):
    """AST -> query DSL clause. ``prefix`` is where the filter fields live (``""`` at the root,
    ``"elems."`` inside one ``$elemMatch``, ...); ``depth`` counts the ``$elemMatch`` levels."""

    capabilities = OPENSEARCH_CAPABILITIES

    def __init__(self, prefix: str = "", depth: int = 0) -> None:
        self.prefix = prefix
        self.depth = depth

    # --- terms and facts ------------------------------------------------------------------------

    def _term(self, field: str, path: Path, encoded: str) -> Clause:
        return {"term": {self.prefix + field: f"{path_code(path)}:{encoded}"}}

    def _terms(self, field: str, path: Path, encoded: list[str]) -> Clause:
        if len(encoded) == 1:
            return self._term(field, path, encoded[0])
        code = path_code(path)
        return {"terms": {self.prefix + field: [f"{code}:{e}" for e in encoded]}}

    def _range(self, field: str, path: Path, **bounds: str) -> Clause:
        """A keyword range within the terms of ``path`` (bounds are encoded values)."""
        code = path_code(path)
        spec: dict[str, str] = {}
        for name, value in bounds.items():
            spec[name] = f"{code}:{value}"
        if "gt" not in spec and "gte" not in spec:
            spec["gte"] = f"{code}:"
        if "lt" not in spec and "lte" not in spec:
            spec["lt"] = f"{code}{_AFTER_COLON}"
        return {"range": {self.prefix + field: spec}}

    def _fact(self, tag: str, path: Path, extra: int | None = None) -> Clause:
        return {"term": {self.prefix + FACTS_FIELD: fact(tag, path, extra)}}

    def missing(self, path: Path) -> Clause:
        """Some branch of ``path`` ends early: a key is absent, or a scalar stands where an object is."""
        terms: list[Clause] = [_none_of([self._fact("a", path[:1])])]
        for depth in range(1, len(path)):
            prefix = path[:depth]
            terms.append(_all_of([self._fact("c", prefix), _none_of([self._fact("a", path[: depth + 1])])]))
            terms.append(self._fact("s", prefix))
        return _any_of(terms)

    # --- leaves ---------------------------------------------------------------------------------

    def _check_int(self, node: Comparison, value: Scalar) -> None:
        if (
            isinstance(value, int)
            and not isinstance(value, bool)
            and not INT64_MIN <= value <= INT64_MAX
            and float(value) != value
        ):
            self.unsupported(
                node,
                f"the integer {value} is outside int64 and not exactly a float64 (declared deviation "
                "int64-range)",
            )

    def _equals(self, node: Comparison, value: Scalar) -> Clause:
        path = node.path
        if value is None:
            return _any_of([self._fact("z", path), self.missing(path)])
        if value is True or value is False:
            return self._fact("t" if value else "f", path)
        if isinstance(value, str):
            if is_short(value):
                return self._term(STRING_FIELD, path, value)
            return _all_of(
                [
                    self._term(LONG_HASH_FIELD, path, string_hash(value)),
                    self._term(LONG_STRING_FIELD, path, string_prefix(value)),
                ]
            )
        return self._number_term(node, value)

    def _number_term(self, node: Comparison, value: int | float) -> Clause:
        field, encoded = self._number_encoding(node, value)
        if field is None:
            return MATCH_NONE
        return self._term(field, node.path, encoded)

    def _number_encoding(self, node: Comparison, value: int | float) -> tuple[str | None, str]:
        """The field and term a stored number equal to ``value`` has (``None``: no number is equal)."""
        self._check_int(node, value)
        if isinstance(value, float) and value.is_integer() and INT64_MIN <= value <= INT64_MAX:
            return INT_FIELD, encode_int(int(value))
        if isinstance(value, int):
            if INT64_MIN <= value <= INT64_MAX:
                return INT_FIELD, encode_int(value)
            return DOUBLE_FIELD, encode_double(float(value))  # exactly a float (checked above)
        return DOUBLE_FIELD, encode_double(value)

    def _in(self, node: Comparison, values: tuple[Scalar, ...]) -> Clause:
        grouped: dict[str, list[str]] = {}
        others: list[Clause] = []
        for value in _distinct(values):
            if isinstance(value, str) and is_short(value):
                grouped.setdefault(STRING_FIELD, []).append(value)
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                field, encoded = self._number_encoding(node, value)
                if field is not None:
                    grouped.setdefault(field, []).append(encoded)
            else:
                others.append(self._equals(node, value))
        clauses = [self._terms(f, node.path, list(dict.fromkeys(v))) for f, v in grouped.items()]
        return _any_of([*clauses, *others])

    def _number_range(self, node: Comparison, value: int | float) -> Clause:
        op = node.op
        self._check_int(node, value)
        path = node.path
        parts: list[Clause] = []
        # Integers: exact integer bounds, clamped to int64.
        if op in ("$gt", "$gte"):
            low = math.floor(value) + 1 if op == "$gt" else math.ceil(value)
            if low <= INT64_MAX:
                parts.append(self._range(INT_FIELD, path, gte=encode_int(max(low, INT64_MIN))))
        else:
            high = math.ceil(value) - 1 if op == "$lt" else math.floor(value)
            if high >= INT64_MIN:
                parts.append(self._range(INT_FIELD, path, lte=encode_int(min(high, INT64_MAX))))
        # Other numbers (non-integral, or integral beyond int64) are float64: compare with the operand
        # exactly, also when the operand is an integer that no float64 equals.
        target = float(value)
        bound = op[1:]
        if target != value:  # an int64 beyond 2^53 between two float64s: no stored float equals it
            if op in ("$gt", "$gte"):
                bound = "gte" if target > value else "gt"
            else:
                bound = "lte" if target < value else "lt"
        parts.append(self._range(DOUBLE_FIELD, path, **{bound: encode_double(target)}))
        return _any_of(parts)

    def _string_range(self, node: Comparison, value: str) -> Clause:
        op = node.op
        if len(value.encode("utf-8")) > _LONG_RANGE_LIMIT:
            self.unsupported(
                node,
                f"a string range operand longer than {_LONG_RANGE_LIMIT} UTF-8 bytes can extend the indexed "
                "prefix of a long stored string (declared deviation long-string-range)",
            )
        bound = op[1:]
        path = node.path
        short = self._range(STRING_FIELD, path, **{bound: value})
        # A long stored string S with prefix P (longer than the operand x): S > x exactly when P >= x.
        if op in ("$gt", "$gte"):
            long = self._range(LONG_STRING_FIELD, path, gte=value)
        else:
            long = self._range(LONG_STRING_FIELD, path, lt=value)
        return _any_of([short, long])

    # --- visitor methods ------------------------------------------------------------------------

    def comparison(self, node: Comparison) -> Clause:
        """One field condition."""
        op, value = node.op, node.value
        if not node.path:
            self.unsupported(node, "a condition on an array element itself has no OpenSearch translation")
        if isinstance(value, tuple):
            if op == "$in":
                return self._in(node, value)
            if op == "$nin":
                return _none_of([self._in(node, value)])
            if op == "$all":
                if not value:
                    return MATCH_NONE
                return _all_of([self._in(node, (item,)) for item in _distinct(value)])
            self.unsupported(node)
        if op == "$eq":
            return self._equals(node, value)
        if op == "$ne":
            return _none_of([self._equals(node, value)])
        if op in ("$gt", "$gte", "$lt", "$lte"):
            if isinstance(value, str):
                return self._string_range(node, value)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self.unsupported(node, f"{op} needs a number or a string")  # the core rejects it earlier
            return self._number_range(node, value)
        if op == "$exists":
            present = self._fact("p", node.path)
            return present if value else _none_of([present])
        if op == "$size" and isinstance(value, int) and not isinstance(value, bool):
            return self._fact("n", node.path, value)
        self.unsupported(node)

    def elem_match(self, node: ElemMatch) -> Clause:
        """A ``nested`` query over the object elements of the arrays reached at the path."""
        if not node.on_documents:
            self.unsupported(
                node,
                "array elements are indexed as nested documents of object elements only; $elemMatch with an "
                "operator document (scalar elements) has no exact translation",
            )
        if self.depth >= ELEMENT_DEPTH:
            self.unsupported(
                node,
                f"$elemMatch nested more than {ELEMENT_DEPTH} levels deep "
                "(declared deviation elemmatch-depth)",
            )
        nested_path = self.prefix + ELEMENTS_FIELD
        inner = OpenSearchFilterTranslator(prefix=nested_path + ".", depth=self.depth + 1).visit(
            node.condition
        )
        query = _all_of([{"term": {f"{nested_path}.{PATH_FIELD}": path_code(node.path)}}, inner])
        nested: Clause = {"nested": {"path": nested_path, "query": query, "score_mode": "none"}}
        if matches(node.condition, {}):  # an array element that is itself an array reads as {}
            return _any_of([nested, self._fact("l", node.path)])
        return nested

    def logical_and(self, node: And, children: list[Clause]) -> Clause:
        """``bool.filter``."""
        return _all_of(children)

    def logical_or(self, node: Or, children: list[Clause]) -> Clause:
        """``bool.should`` with ``minimum_should_match: 1``."""
        return _any_of(children)

    def logical_nor(self, node: Nor, children: list[Clause]) -> Clause:
        """``bool.must_not`` of every child."""
        return _none_of(children)

    def logical_not(self, node: Not, child: Clause) -> Clause:
        """``bool.must_not`` of the child (root or field level)."""
        return _none_of([child])
