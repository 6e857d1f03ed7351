"""Translate the filter AST into one SQLite boolean expression over a JSON ``metadata`` column.

The expression means exactly what the reference evaluator (``filters/evaluate.py``) computes:

* A path is resolved the way the evaluator resolves it: each segment looks its key up in an object; a
  list met before the last segment is crossed by looking the key up in each of its *object* elements;
  a branch that ends early (a missing key, or a scalar where an object was needed) reaches *missing*,
  which here is a location whose ``json_type`` is NULL. A condition holds when some reached value
  satisfies it; equality, ranges, ``$in``, ``$all`` and ``$regex`` on a list also test its elements,
  and ``None`` equals null or missing. ``$ne``, ``$nin``, ``$exists: false``, ``$not`` and ``$nor`` are
  ``NOT`` of the positive condition, so a missing field matches them.
* Types are checked with ``json_type``: ``true``/``false`` are never numbers, ``integer`` and ``real``
  compare numerically (``1 == 1.0``), and text compares with SQLite's BINARY collation, which orders
  UTF-8 bytes and therefore code points, as Python does.
* Every fragment evaluates to 0 or 1, never NULL: type tests use ``IS`` or ``CASE``, and values are only
  compared once their type is known. So ``NOT`` of a fragment never loses rows to three-valued logic.
* Values are always bound parameters. Paths are bound too, as ``$."segment"``; a segment made of
  identifier characters is spelled inline instead (nothing in it can need quoting), so SQLite can match
  the expression indexes built for ``metadata_indexes``. A segment that a JSON path cannot express the
  same way on every SQLite version (it contains ``"``, ``\\`` or a control character) is looked up
  through ``json_each`` by comparing the decoded key.
* JSON functions only ever see JSON text or NULL: element values reach them only when ``json_each``
  says they are objects or arrays, and ``CASE`` (whose evaluation order SQLite guarantees) guards every
  such use.
* The finished expression is compiled once on a private in-memory connection. A filter nested deeper
  than SQLite's parser or join limits raises ``UnsupportedFilterError`` there, before any I/O.
* :func:`translate_cached` keeps the last translations, keyed by the filter's canonical form (every
  operand with its type: ``1``, ``1.0`` and ``True`` are different keys), so a filter used again — the
  recall scope of every turn — is not translated again.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ...filters.ast import And, Comparison, ElemMatch, Node, Nor, Not, Or, Path, Regex, Scalar
from ...filters.numbers import in_int64
from ...filters.regex import compile_regex
from ...vector.sql_translate import IDENTIFIER, SqlFilterTranslator
from .capabilities import SQLITE_CAPABILITIES

SqlValue = str | int | float

#: Name of the SQL function that evaluates ``$regex``; :func:`register_sql_functions` installs it.
REGEXP_FUNCTION: Final = "mastra_regexp"

# Characters a JSON writer escapes: a path label containing them is compared escaped by SQLite < 3.45
# and decoded by later versions, so they are looked up through json_each, which always decodes.
_ESCAPED_IN_JSON: Final = re.compile(r'["\\\x00-\x1f]')
# Up to this many values of one type are bound one by one (`IN (:a, :b)`); longer lists travel as one
# JSON array parameter, so no list can exceed SQLite's limit on bound parameters.
_INLINE_LIST_LIMIT: Final = 32
_NUMERIC_TYPES: Final = "('integer', 'real')"


@dataclass(frozen=True, slots=True)
class SqlFragment:
    """A boolean SQL expression over the ``metadata`` column and its named parameters.

    ``sql`` is always 0 or 1 for every row (never NULL). Parameter names have the form ``f<n>``; a
    statement embedding the fragment uses other names for its own parameters.
    """

    sql: str
    params: Mapping[str, SqlValue]
    #: The filter this fragment was translated from (the store evaluates it in memory when it can).
    node: Node | None = field(default=None, compare=False)


def regexp(pattern: str, options: str, value: object) -> int:
    """The ``mastra_regexp(pattern, options, value)`` SQL function: 1 if ``re.search`` finds a match."""
    if not isinstance(value, str):
        return 0
    return 1 if compile_regex(pattern, options).search(value) is not None else 0


def register_sql_functions(connection: sqlite3.Connection) -> None:
    """Install the SQL functions the translated filters call (once per connection)."""
    connection.create_function(REGEXP_FUNCTION, 3, regexp, deterministic=True)


_probe = threading.local()


def _unparsable(fragment: SqlFragment) -> str | None:
    """SQLite's complaint when it cannot compile ``fragment`` (None if it can), found without any I/O.

    The fragment is compiled on a private in-memory connection, inside one more level of nesting than
    the store's statements use, so whatever compiles here compiles there.
    """
    conn: sqlite3.Connection | None = getattr(_probe, "connection", None)
    if conn is None:
        conn = sqlite3.connect(":memory:")
        register_sql_functions(conn)
        _probe.connection = conn
    try:
        conn.execute(
            f"WITH r(metadata) AS (SELECT NULL WHERE 0) SELECT 1 FROM r WHERE ({fragment.sql})",
            fragment.params,
        )
    except sqlite3.OperationalError as exc:
        return str(exc)
    return None


#: How many distinct translations :func:`translate_cached` keeps.
TRANSLATION_CACHE_SIZE: Final = 512
_cache: OrderedDict[tuple[type, tuple[Any, ...]], SqlFragment] = OrderedDict()
_cache_lock = threading.Lock()


def _typed(value: Scalar | tuple[Scalar, ...]) -> tuple[Any, ...]:
    if isinstance(value, tuple):
        return tuple((type(v), v) for v in value)
    return (type(value), value)


def canonical(node: Node) -> tuple[Any, ...]:
    """A hashable key that equals another node's exactly when both translate to the same SQL.

    Every operand carries its type (Python's ``1 == 1.0 == True`` must not merge filters), and every
    field the translation reads is part of the key: paths, operators, operands, regex options.
    """
    if isinstance(node, Comparison):
        return ("c", node.path, node.op, _typed(node.value))
    if isinstance(node, Regex):
        return ("r", node.path, node.pattern, node.options)
    if isinstance(node, ElemMatch):
        return ("m", node.path, canonical(node.condition))
    if isinstance(node, Not):
        return ("not", canonical(node.child))
    tag = {And: "and", Or: "or", Nor: "nor"}[type(node)]
    return (tag, *(canonical(child) for child in node.children))


def translate_cached(node: Node, translator: type[SQLiteFilterTranslator] | None = None) -> SqlFragment:
    """``translator().translate(node)``, from the bounded cache when this filter was seen.

    The translation depends only on the filter and the translator class (not on the index, the tenant
    or the data), so one cache serves every store; the key holds the class and every operand, so two
    tenants' filters never share an entry. Translation errors are raised every time (never cached).
    """
    translator = translator or SQLiteFilterTranslator
    key = (translator, canonical(node))
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    fragment = translator().translate(node)
    with _cache_lock:
        _cache[key] = fragment
        if len(_cache) > TRANSLATION_CACHE_SIZE:
            _cache.popitem(last=False)
    return fragment


# --- locations: where a resolved JSON value lives, as SQL expressions --------------------------------


class _Loc:
    """A JSON value reached from the current row: SQL expressions for its ``json_type`` and its value.

    ``type`` is NULL when the value is missing (the reference evaluator's *missing*). ``value`` is the SQL
    value of a scalar and the JSON text of an object or array.
    """

    type: str
    value: str

    def elements(self) -> str:
        """A table-valued source over the elements of this value: none unless it is an array.

        The test sits inside the source, so the rows' conditions are parsed one level shallower.
        """
        return f"json_each(CASE WHEN {self.type} = 'array' THEN {self.value} END)"

    def length(self) -> str:
        """``json_array_length`` of this value; use only when it is an array."""
        return f"json_array_length({self.value})"


class _PathLoc(_Loc):
    """The value at JSON path ``path`` (an SQL expression) inside the JSON object text ``doc``."""

    def __init__(self, doc: str, path: str) -> None:
        self.doc = doc
        self.path = path
        self.type = f"json_type({doc}, {path})"
        self.value = f"json_extract({doc}, {path})"

    def elements(self) -> str:
        return f"json_each(CASE WHEN {self.type} = 'array' THEN {self.doc} END, {self.path})"

    def length(self) -> str:
        return f"json_array_length({self.doc}, {self.path})"


class _MemberLoc(_Loc):
    """Member ``key`` (an SQL expression) of the JSON object text ``doc``, found by its decoded name."""

    def __init__(self, doc: str, key: str, alias: str) -> None:
        member = f"FROM json_each({doc}) AS {alias} WHERE {alias}.key = {key}"
        self.type = f"(SELECT {alias}.type {member})"
        self.value = f"(SELECT {alias}.value {member})"


class _RowLoc(_Loc):
    """The value of one row of a ``json_each`` source aliased ``alias`` (an array element)."""

    def __init__(self, alias: str) -> None:
        self.type = f"{alias}.type"
        self.value = f"{alias}.value"


Pred = Callable[[_Loc], str]


def _join(operator: str, parts: Sequence[str]) -> str:
    """``a AND b AND c ...`` as a balanced tree, so long lists stay within SQLite's expression depth."""
    if len(parts) == 1:
        return parts[0]
    middle = len(parts) // 2
    return f"({_join(operator, parts[:middle])} {operator} {_join(operator, parts[middle:])})"


def _not(sql: str) -> str:
    return f"(NOT {sql})"


def _guard(test: str, then: str) -> str:
    """``then`` only where ``test`` holds, else 0; CASE guarantees ``then`` is not evaluated otherwise."""
    return f"CASE WHEN {test} THEN {then} ELSE 0 END"


class SQLiteFilterTranslator(SqlFilterTranslator[SqlFragment, _Loc]):
    """AST -> :class:`SqlFragment` for SQLite's JSON1 functions (every operator, exact semantics).

    A translator instance builds one fragment; the store creates a fresh one per filter. ``column`` is
    the SQL expression of the JSON metadata text (``metadata`` in the store's tables). The walk is the
    shared one of :class:`~mastra_memory.vector.sql_translate.SqlFilterTranslator`; this class holds the
    SQLite SQL.
    """

    capabilities = SQLITE_CAPABILITIES
    # The shared walk's fragment type and boolean connectives.
    _make = SqlFragment
    _join = staticmethod(_join)
    _negate = staticmethod(_not)
    placeholder = ":{}"
    false_sql = "0"

    # --- node methods ----------------------------------------------------------------------------

    def translate(self, node: Node) -> SqlFragment:
        """Check ``node`` against the manifest, build its SQL expression, and check SQLite can parse it.

        Raises:
            UnsupportedFilterError: the filter nests deeper than SQLite's parser, expression-depth or
                join limits allow (SQLite 3.40: about 30 nested ``$not`` or 7 nested ``$elemMatch``;
                later versions allow more; 64 path segments); raised before any I/O.
        """
        result = super().translate(node)
        problem = _unparsable(result)
        if problem:
            self.unsupported(
                node, f"the filter nests too deeply for SQLite ({problem}); simplify it", path=()
            )
        return SqlFragment(result.sql, result.params, node)

    def regex(self, node: Regex) -> SqlFragment:
        pattern = self._bind(self._text(node, node.pattern))
        options = self._bind(node.options)

        def matches(loc: _Loc) -> str:
            return _guard(f"{loc.type} = 'text'", f"{REGEXP_FUNCTION}({pattern}, {options}, {loc.value})")

        return self._fragment(self._some(node.path, matches, expand=True))

    # --- hooks of the shared walk ------------------------------------------------------------------

    def _elements_from(self, loc: _Loc, alias: str) -> str:
        return f"{loc.elements()} AS {alias}"

    def _row(self, alias: str) -> _Loc:
        return _RowLoc(alias)

    def _row_document(self, alias: str) -> str:
        return f"(CASE WHEN {alias}.type = 'object' THEN {alias}.value ELSE '{{}}' END)"

    def _row_is_container(self, alias: str) -> str:
        return f"{alias}.type IN ('object', 'array')"

    # --- comparisons -----------------------------------------------------------------------------

    def _has_size(self, node: Comparison, value: Scalar) -> Pred:
        size = self._bind(self._number(node, value))
        return lambda loc: _guard(f"{loc.type} = 'array'", f"{loc.length()} = {size}")

    def _equal(self, node: Comparison, value: Scalar) -> str:
        """Equality, element-wise on lists; ``None`` matches null, a null element, or a missing value."""
        equal = self._some(node.path, self._scalar_equals(node, value), expand=True)
        return self._with_index_hint(node, (value,), equal)

    def _in(self, node: Comparison, values: tuple[Scalar, ...]) -> str:
        if not values:
            return "0"
        tests: list[Pred] = []
        strings = [v for v in values if isinstance(v, str)]
        numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if strings:
            listed = self._list(node, strings)
            tests.append(lambda loc: _guard(f"{loc.type} = 'text'", f"{loc.value} IN {listed}"))
        if numbers:
            listed_numbers = self._list(node, numbers)
            tests.append(
                lambda loc: _guard(f"{loc.type} IN {_NUMERIC_TYPES}", f"{loc.value} IN {listed_numbers}")
            )
        for flag in (True, False, None):
            if any(v is flag for v in values):
                tests.append(self._scalar_equals(node, flag))
        some = self._some(node.path, lambda loc: _join("OR", [t(loc) for t in tests]), expand=True)
        return self._with_index_hint(node, values, some)

    def _with_index_hint(self, node: Comparison, values: tuple[Scalar, ...], exact: str) -> str:
        """``exact`` ANDed with a weaker condition SQLite can answer from a ``metadata_indexes`` index.

        For a top-level identifier key and string or number operands, a match needs the extracted value
        to be one of the operands or a list, whose JSON text sorts in ``['[', '\\')``. The conjunction
        means exactly ``exact``; the extra condition only lets the planner search the index.
        """
        path = node.path
        at_top = self._document == self.column and self._element is None
        if not at_top or len(path) != 1 or not IDENTIFIER.fullmatch(path[0]):
            return exact
        if any(v is None or isinstance(v, bool) for v in values):
            return exact
        listed = self._list(node, [v for v in values if isinstance(v, (str, int, float))])
        value = f"json_extract({self.column}, '$.\"{path[0]}\"')"
        return f"(({value} IN {listed} OR ({value} >= '[' AND {value} < '\\')) AND {exact})"

    def _range(self, node: Comparison, value: Scalar) -> str:
        symbol = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}[node.op]
        if isinstance(value, str):
            bound = self._bind(self._text(node, value))
            types = "= 'text'"
        else:
            bound = self._bind(self._number(node, value))
            types = f"IN {_NUMERIC_TYPES}"

        def in_range(loc: _Loc) -> str:
            return _guard(f"{loc.type} {types}", f"{loc.value} {symbol} {bound}")

        return self._some(node.path, in_range, expand=True)

    def _contains(self, node: Comparison, value: Scalar) -> Pred:
        element_equals = self._scalar_equals(node, value)
        needle = self._bind(self._text(node, value)) if isinstance(value, str) else None

        def contains(loc: _Loc) -> str:
            alias = self._alias("c")
            member = (
                f"EXISTS (SELECT 1 FROM {loc.elements()} AS {alias} WHERE {element_equals(_RowLoc(alias))})"
            )
            if needle is None:
                return member
            substring = _guard(f"{loc.type} = 'text'", f"instr({loc.value}, {needle}) > 0")
            return f"({substring} OR {member})"

        return contains

    def _scalar_equals(self, node: Comparison, value: Scalar) -> Pred:
        """The test "this one value equals ``value``" (``None``: it is null or missing)."""
        if value is None:
            return lambda loc: f"(IFNULL({loc.type}, 'null') = 'null')"
        if isinstance(value, bool):
            literal = "'true'" if value else "'false'"
            return lambda loc: f"({loc.type} IS {literal})"
        if isinstance(value, str):
            text = self._bind(self._text(node, value))
            return lambda loc: _guard(f"{loc.type} = 'text'", f"{loc.value} = {text}")
        number = self._bind(self._number(node, value))
        return lambda loc: _guard(f"{loc.type} IN {_NUMERIC_TYPES}", f"{loc.value} = {number}")

    def _present(self, loc: _Loc) -> str:
        return f"({loc.type} IS NOT NULL)"

    # --- path resolution -------------------------------------------------------------------------

    def _some(self, path: Path, test: Pred, *, expand: bool) -> str:
        """SQL that holds when some value ``path`` reaches satisfies ``test``.

        Values are reached as the reference evaluator reaches them, *missing* included (a location whose
        type is NULL). With ``expand`` a list at the end of the path also offers each of its elements.
        The path ``()`` is the element of a value-form ``$elemMatch``, tested as one value.
        """
        if not path:
            if self._element is None:
                raise TypeError("an empty path is only valid inside a value-form $elemMatch")
            return test(self._element)
        final = self._elementwise(test) if expand else test
        return self._follow(self._member(self._document, path[0]), path[1:], final)

    def _follow(self, loc: _Loc, rest: Path, test: Pred) -> str:
        if not rest:
            return test(loc)
        # Each step down: an object is searched for the key, a list in each of its object elements
        # (other elements are skipped), and anything else -- a scalar, null or missing -- ends the path
        # as missing. Presenting the object as a one-element array and anything else as [{}] lets one
        # json_each cover the three cases. The steps are joined in one FROM clause (each json_each reads
        # the row to its left) rather than nested, which keeps the SQL shallow for SQLite's parser.
        sources: list[str] = []
        objects: list[str] = []
        for key in rest:
            alias = self._alias("t")
            as_array = (
                f"CASE {loc.type} WHEN 'array' THEN {loc.value} "
                f"WHEN 'object' THEN '[' || {loc.value} || ']' ELSE '[{{}}]' END"
            )
            sources.append(f"json_each({as_array}) AS {alias}")
            objects.append(f"{alias}.type = 'object'")
            loc = self._member(f"(CASE WHEN {alias}.type = 'object' THEN {alias}.value END)", key)
        conditions = " AND ".join([*objects, test(loc)])
        return f"EXISTS (SELECT 1 FROM {', '.join(sources)} WHERE {conditions})"

    def _member(self, doc: str, key: str) -> _Loc:
        """Member ``key`` of the JSON object text ``doc`` (NULL ``doc``: missing)."""
        if IDENTIFIER.fullmatch(key):
            return _PathLoc(doc, f"'$.\"{key}\"'")
        if not _ESCAPED_IN_JSON.search(key):
            return _PathLoc(doc, self._bind(f'$."{key}"'))
        return _MemberLoc(doc, self._bind(key), self._alias("k"))

    # --- parameters --------------------------------------------------------------------------------

    def _list(self, node: Comparison, values: Sequence[str | int | float]) -> str:
        """``(:a, :b)`` for a short list; a sub-select over one bound JSON array for a long one."""
        checked: list[SqlValue] = [
            self._text(node, v) if isinstance(v, str) else self._number(node, v) for v in values
        ]
        if len(checked) <= _INLINE_LIST_LIMIT:
            return "(" + ", ".join(self._bind(v) for v in checked) + ")"
        # json_each would cut a string at U+0000; stored strings never contain it (upsert rejects it),
        # so such a value cannot match and is left out rather than truncated into a false match.
        kept = [v for v in checked if not (isinstance(v, str) and "\x00" in v)]
        return f"(SELECT value FROM json_each({self._bind(json.dumps(kept, ensure_ascii=False))}))"

    def _text(self, node: Node, value: str) -> str:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            self.unsupported(node, "strings with unpaired surrogates cannot be stored or compared in SQLite")
        return value

    def _number(self, node: Node, value: Scalar | tuple[Scalar, ...]) -> int | float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"not a number: {value!r}")  # pragma: no cover - the parser guarantees it
        if isinstance(value, int) and not in_int64(value):
            # SQLite holds such a number only as a float: exact when the float is the same number.
            as_float = float(value)
            if int(as_float) != value:
                self.unsupported(
                    node, "integers beyond 64 bits that are not exactly a float cannot be compared"
                )
            return as_float
        return value
