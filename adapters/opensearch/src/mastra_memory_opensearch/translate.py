"""Filter translation: the filter AST in, an OpenSearch query DSL clause out (docs/spec.md §2.7).

Every clause the translator emits is exact: it holds for a document exactly when the reference evaluator
says the AST node holds for the record's metadata. It reads the filter fields of :mod:`.layout`
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

from mastra_memory.filters import Comparison, ElemMatch
from mastra_memory.filters.ast import Path, Scalar
from mastra_memory.filters.facts import FactTranslator
from mastra_memory.filters.numbers import INT64_MAX, INT64_MIN, distinct, in_int64

from .capabilities import OPENSEARCH_CAPABILITIES
from .layout import (
    DOUBLE_FIELD,
    ELEMENT_DEPTH,
    ELEMENTS_FIELD,
    FACTS_FIELD,
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


def _combined(
    occur: str, clauses: Sequence[Clause], unit: Clause, absorbing: Clause, **options: Any
) -> Clause:
    """The ``bool`` query of ``clauses`` under ``occur``, folded: ``unit`` clauses are dropped, one
    ``absorbing`` clause is the answer and a single clause stands alone."""
    if any(c == absorbing for c in clauses):
        return absorbing
    kept = [c for c in clauses if c != unit]
    if not kept:
        return unit
    return kept[0] if len(kept) == 1 else {"bool": {occur: kept, **options}}


def _all_of(clauses: Sequence[Clause]) -> Clause:
    return _combined("filter", clauses, MATCH_ALL, MATCH_NONE)


def _any_of(clauses: Sequence[Clause]) -> Clause:
    return _combined("should", clauses, MATCH_NONE, MATCH_ALL, minimum_should_match=1)


def _none_of(clauses: Sequence[Clause]) -> Clause:
    if any(c == MATCH_ALL for c in clauses):
        return MATCH_NONE
    kept = [c for c in clauses if c != MATCH_NONE]
    if not kept:
        return MATCH_ALL
    return {"bool": {"must_not": kept}}


class OpenSearchFilterTranslator(FactTranslator[Clause]):
    """AST -> query DSL clause. ``prefix`` is where the filter fields live (``""`` at the root,
    ``"elems."`` inside one ``$elemMatch``, ...); ``depth`` counts the ``$elemMatch`` levels."""

    capabilities = OPENSEARCH_CAPABILITIES
    backend = "OpenSearch"
    scalar_elements = (
        "array elements are indexed as nested documents of object elements only; $elemMatch with an "
        "operator document (scalar elements) has no exact translation"
    )
    #: ``$and`` is ``bool.filter``, ``$or`` ``bool.should`` (``minimum_should_match: 1``), ``$nor`` and
    #: ``$not`` ``bool.must_not``.
    all_of = staticmethod(_all_of)
    any_of = staticmethod(_any_of)
    none_of = staticmethod(_none_of)

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

    def has_fact(self, tag: str, path: Path, extra: int | None = None) -> Clause:
        return {"term": {self.prefix + FACTS_FIELD: fact(tag, path, extra)}}

    # --- leaves ---------------------------------------------------------------------------------

    def _check_int(self, node: Comparison, value: Scalar) -> None:
        if isinstance(value, int) and not isinstance(value, bool):
            self.exact_float64(node, value)

    def value_equals(self, node: Comparison, value: str | int | float) -> Clause:
        path = node.path
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
        if isinstance(value, float) and value.is_integer() and in_int64(value):
            return INT_FIELD, encode_int(int(value))
        if isinstance(value, int):
            if in_int64(value):
                return INT_FIELD, encode_int(value)
            return DOUBLE_FIELD, encode_double(float(value))  # exactly a float (checked above)
        return DOUBLE_FIELD, encode_double(value)

    def in_values(self, node: Comparison, values: tuple[Scalar, ...]) -> Clause:
        grouped: dict[str, list[str]] = {}
        others: list[Clause] = []
        for value in distinct(values):
            if isinstance(value, str) and is_short(value):
                grouped.setdefault(STRING_FIELD, []).append(value)
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                field, encoded = self._number_encoding(node, value)
                if field is not None:
                    grouped.setdefault(field, []).append(encoded)
            else:
                others.append(self.equals(node, value))
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

    def ordered(self, node: Comparison, value: Scalar) -> Clause:
        """A keyword range over strings, or exact integer and float64 ranges over numbers."""
        if isinstance(value, str):
            return self._string_range(node, value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.unsupported(node, f"{node.op} needs a number or a string")  # the core rejects it earlier
        return self._number_range(node, value)

    def nested(self, node: ElemMatch) -> Clause:
        """A ``nested`` query over the object elements of the arrays reached at the path."""
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
        return {"nested": {"path": nested_path, "query": query, "score_mode": "none"}}
