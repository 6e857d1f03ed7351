"""Translate the filter AST into one PostgreSQL boolean expression over a ``jsonb`` metadata column.

The expression means exactly what the reference evaluator (``mastra_memory.filters.evaluate``) computes:

* **Truth.** A record matches when the expression is TRUE. FALSE and NULL both mean "no match": AND and OR
  keep that reading under SQL's three-valued logic, and every negation (``$ne``, ``$nin``,
  ``$exists: false``, ``$not``, ``$nor``) is written ``(...) IS NOT TRUE``, so a missing field, which
  yields NULL, matches a negation as the spec requires (docs/spec.md §2.4, §7).
* **Paths.** ``doc -> 'key'`` is the value of a key, or NULL (*missing*) when the key is absent or the
  document is not an object. A longer path crosses lists the way the evaluator does: each step looks the
  next key up in an object, or in every *object* element of a list (other elements are skipped), and
  anything else ends the branch as missing. The steps are ``jsonb_array_elements`` sources in one
  ``EXISTS``; a condition holds when some reached value satisfies it.
* **Types.** Equality and ``$in`` use jsonb containment (``x @> v``): a scalar contains only an equal
  scalar of the same JSON type (numbers compare numerically, so ``1 = 1.0``; ``true`` is never ``1``) and
  a list contains its equal elements, which is exactly "equal, or a list with an equal element". Ranges
  are guarded by ``jsonb_typeof``: numbers compare as ``numeric`` (exact, never as text), strings as text
  under ``COLLATE "C"`` (code-point order).
* **Values** are always bound parameters. Keys are bound too, except keys made only of identifier
  characters, which are written inline as string literals (nothing in them needs quoting) so that the
  planner can match the expression indexes built for ``metadata_indexes``.
* **Regex** is translated to an ARE with Python's meaning (:mod:`.regex`); ``$contains`` on a string is
  ``strpos`` (case-sensitive).

PostgreSQL text cannot hold U+0000 and stored strings never contain it (upsert rejects it), so an operand
containing it is folded: it equals nothing, and a range bound ``p + "\\0..."`` compares like ``p``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from mastra_memory.filters.ast import Comparison, Path, Regex, Scalar
from mastra_memory.vector.sql_translate import IDENTIFIER, SqlFilterTranslator

from .capabilities import PGVECTOR_CAPABILITIES
from .regex import RegexTranslationError, to_are

__all__ = ["PgFilterTranslator", "SqlFilter", "json_scalar", "json_text", "unstorable_text"]

# Up to this many values of an `$in` are tested one by one (index-friendly); longer lists travel as one
# jsonb[] parameter.
_INLINE_LIST_LIMIT: Final = 32
_SYMBOLS: Final = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


@dataclass(frozen=True, slots=True)
class SqlFilter:
    """A boolean SQL expression over the ``metadata`` column and its named parameters.

    The expression is TRUE for matching rows and FALSE or NULL otherwise; use it only where NULL means
    "no match" (a WHERE clause), or negate it with ``IS NOT TRUE``. Parameter names have the form
    ``f<n>`` (psycopg's ``%(f0)s`` placeholders); statements embedding it use other names.
    """

    sql: str
    params: Mapping[str, Any]


# --- JSON text -------------------------------------------------------------------------------------


def _float_text(value: float) -> str:
    """The exact decimal value of a float, always with a fractional part so that it reads back as a float.

    jsonb keeps numbers as ``numeric``: writing the exact value makes every comparison in SQL agree with
    Python's exact int/float comparisons, and ``1e300`` would otherwise come back as an integer.
    """
    text = format(Decimal(value), "f")
    return text if "." in text else text + ".0"


def json_scalar(value: Scalar) -> str:
    """JSON text of one scalar (floats exact, see :func:`_float_text`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float_text(value)
    return json.dumps(value, ensure_ascii=False)


def json_text(value: Any) -> str:
    """JSON text of normalised metadata (dicts, lists, scalars), with exact float text."""
    if isinstance(value, dict):
        items = (f"{json.dumps(k, ensure_ascii=False)}:{json_text(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(json_text(v) for v in value) + "]"
    return json_scalar(value)


def unstorable_text(text: str) -> bool:
    """Whether PostgreSQL cannot hold ``text``: it contains U+0000 or is not valid Unicode (lone
    surrogates)."""
    if "\x00" in text:
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


# --- locations ---------------------------------------------------------------------------------------

Pred = Callable[[str], str]
"""A test of one jsonb value, given as an SQL expression that is NULL for *missing*."""


def _join(operator: str, parts: Sequence[str]) -> str:
    if len(parts) == 1:
        return parts[0]
    return "(" + f" {operator} ".join(parts) + ")"


def _not(sql: str) -> str:
    return f"(({sql}) IS NOT TRUE)"


def _as_array(loc: str) -> str:
    """The value as a list to step through: a list as is, an object as [it], anything else as [{}]."""
    return (
        f"CASE jsonb_typeof({loc}) WHEN 'array' THEN {loc} WHEN 'object' THEN jsonb_build_array({loc}) "
        "ELSE '[{}]'::jsonb END"
    )


def _elements(loc: str) -> str:
    """The elements of the value when it is a list (no rows otherwise)."""
    return f"jsonb_array_elements(CASE WHEN jsonb_typeof({loc}) = 'array' THEN {loc} END)"


class PgFilterTranslator(SqlFilterTranslator[SqlFilter, str]):
    """AST -> :class:`SqlFilter` over a jsonb column (every operator, the reference semantics).

    A translator instance builds one filter; the store creates a fresh one per filter. ``column`` is the
    SQL expression of the jsonb metadata (``metadata`` in the store's tables). The walk is the shared one
    of :class:`~mastra_memory.vector.sql_translate.SqlFilterTranslator`; this class holds the PostgreSQL
    SQL. A location is a jsonb SQL expression that is NULL for *missing*.
    """

    capabilities = PGVECTOR_CAPABILITIES
    # The shared walk's fragment type and boolean connectives.
    _make = SqlFilter
    _join = staticmethod(_join)
    _negate = staticmethod(_not)
    placeholder = "%({})s"
    false_sql = "FALSE"

    # --- node methods ---------------------------------------------------------------------------------

    def regex(self, node: Regex) -> SqlFilter:
        if unstorable_text(node.pattern.replace("\x00", "")):
            self.unsupported(node, "patterns with unpaired surrogates cannot be matched in PostgreSQL")
        try:
            are = to_are(node.pattern, node.options)
        except RegexTranslationError as exc:
            self.unsupported(node, str(exc))
        pattern = self._bind(are)

        def matches(loc: str) -> str:
            text = f"({loc} #>> '{{}}') COLLATE \"C\""
            return f"CASE WHEN jsonb_typeof({loc}) = 'string' THEN {text} ~ {pattern} END"

        return self._fragment(self._some(node.path, matches, expand=True))

    # --- hooks of the shared walk ------------------------------------------------------------------

    def _elements_from(self, loc: str, alias: str) -> str:
        return f"{_elements(loc)} AS {alias}(v)"

    def _row(self, alias: str) -> str:
        return f"{alias}.v"

    def _row_document(self, alias: str) -> str:
        return f"(CASE WHEN jsonb_typeof({alias}.v) = 'object' THEN {alias}.v ELSE '{{}}'::jsonb END)"

    def _row_is_container(self, alias: str) -> str:
        return f"jsonb_typeof({alias}.v) IN ('object', 'array')"

    # --- comparisons ------------------------------------------------------------------------------------

    def _equal(self, node: Comparison, value: Scalar) -> str:
        return self._some(node.path, self._equals(node, value), expand=False)

    def _has_size(self, node: Comparison, value: Scalar) -> Pred:
        size = self._bind(value)
        return lambda loc: (
            f"CASE WHEN jsonb_typeof({loc}) = 'array' THEN jsonb_array_length({loc}) = {size} END"
        )

    def _present(self, loc: str) -> str:
        return f"({loc} IS NOT NULL)"

    def _equals(self, node: Comparison, value: Scalar) -> Pred:
        """The value equals ``value`` or is a list with an equal element (``None``: also missing)."""
        if value is None:
            return lambda loc: f"({loc} IS NULL OR {loc} @> 'null'::jsonb)"
        if isinstance(value, str) and unstorable_text(value):
            return lambda loc: "FALSE"  # no stored string can contain it
        operand = self._bind(json_scalar(value))
        return lambda loc: f"({loc} @> {operand}::jsonb)"

    def _in(self, node: Comparison, values: tuple[Scalar, ...]) -> str:
        wanted = [v for v in values if not (isinstance(v, str) and unstorable_text(v))]
        with_null = any(v is None for v in wanted)
        others = list(dict.fromkeys(json_scalar(v) for v in wanted if v is not None))
        if not with_null and not others:
            return "FALSE"
        if len(others) > _INLINE_LIST_LIMIT:
            listed = self._bind(others)

            def any_of(loc: str) -> str:
                null = f"{loc} IS NULL OR {loc} @> 'null'::jsonb OR " if with_null else ""
                return f"({null}{loc} @> ANY({listed}::jsonb[]))"

            return self._some(node.path, any_of, expand=False)
        tests = [self._equals(node, None)] if with_null else []
        for text in others:
            tests.append(self._contained(self._bind(text)))
        return self._some(node.path, lambda loc: _join("OR", [t(loc) for t in tests]), expand=False)

    @staticmethod
    def _contained(bound: str) -> Pred:
        return lambda loc: f"({loc} @> {bound}::jsonb)"

    def _range(self, node: Comparison, value: Scalar) -> str:
        symbol = _SYMBOLS[node.op]
        if isinstance(value, str):
            text = value
            if "\x00" in text:
                # No stored string contains U+0000; against them p + "\0..." orders exactly like p
                # with > and >= turned into >, and < and <= into <=.
                text = text[: text.index("\x00")]
                symbol = ">" if symbol in (">", ">=") else "<="
            if unstorable_text(text):
                self.unsupported(node, "strings with unpaired surrogates cannot be compared in PostgreSQL")
            bound = self._bind(text)

            def in_range(loc: str) -> str:
                return (
                    f"CASE WHEN jsonb_typeof({loc}) = 'string' THEN "
                    f"({loc} #>> '{{}}') COLLATE \"C\" {symbol} {bound}::text END"
                )

        else:
            number = self._bind(json_scalar(value))

            def in_range(loc: str) -> str:
                compare = f"({loc})::numeric {symbol} {number}::numeric"
                return f"CASE WHEN jsonb_typeof({loc}) = 'number' THEN {compare} END"

        return self._some(node.path, in_range, expand=True)

    def _contains(self, node: Comparison, value: Scalar) -> Pred:
        """String field: substring (case-sensitive); list field: element membership."""
        if isinstance(value, str) and unstorable_text(value):
            return lambda loc: "FALSE"
        element = self._bind(json_scalar(value))
        if not isinstance(value, str):
            return lambda loc: (
                f"CASE WHEN jsonb_typeof({loc}) = 'array' THEN {loc} @> "
                f"jsonb_build_array({element}::jsonb) END"
            )
        needle = self._bind(value)
        return lambda loc: (
            f"CASE jsonb_typeof({loc}) WHEN 'string' THEN strpos({loc} #>> '{{}}', {needle}::text) > 0 "
            f"WHEN 'array' THEN {loc} @> jsonb_build_array({element}::jsonb) END"
        )

    # --- path resolution ----------------------------------------------------------------------------

    def _some(self, path: Path, test: Pred, *, expand: bool) -> str:
        """SQL that holds when some value ``path`` reaches satisfies ``test``.

        Values are reached as the reference evaluator reaches them, *missing* (NULL) included. With
        ``expand`` a list at the end of the path also offers each of its elements. The path ``()`` is
        the element of a value-form ``$elemMatch``, tested as one value.
        """
        final = self._elementwise(test) if expand else test
        if not path:
            if self._element is None:
                raise TypeError("an empty path is only valid inside a value-form $elemMatch")
            return final(self._element)
        loc = self._member(self._document, path[0])
        if len(path) == 1:
            return final(loc)
        sources: list[str] = []
        objects: list[str] = []
        for key in path[1:]:
            alias = self._alias("t")
            sources.append(f"jsonb_array_elements({_as_array(loc)}) AS {alias}(v)")
            objects.append(f"jsonb_typeof({alias}.v) = 'object'")
            loc = self._member(f"{alias}.v", key)
        conditions = " AND ".join([*objects, final(loc)])
        return f"EXISTS (SELECT 1 FROM {', '.join(sources)} WHERE {conditions})"

    def _member(self, doc: str, key: str) -> str:
        """Member ``key`` of the jsonb ``doc`` (NULL when absent or when ``doc`` is not an object)."""
        if IDENTIFIER.fullmatch(key):
            return f"({doc} -> '{key}')"
        if unstorable_text(key):
            # No stored key contains U+0000 or a lone surrogate: the member is always missing.
            return "(NULL::jsonb)"
        return f"({doc} -> {self._bind(key)}::text)"
