"""What every SQL filter translator shares (docs/spec.md §2.7): binding, aliases, logic, ``$elemMatch`` scope.

The SQLite (``stores/sqlite/translate.py``) and pgvector (``mastra_memory_pgvector.translate``) translators
build one boolean SQL expression over a JSON metadata column. They differ in SQL — JSON1 versus jsonb,
0/1 versus three-valued truth, ``:name`` versus ``%(name)s`` placeholders — but not in how a filter is
walked. :class:`SqlFilterTranslator` holds the walk once:

* parameters are bound as ``f<n>`` in the backend's placeholder style, aliases are numbered per filter;
* ``$and``/``$or``/``$nor``/``$not`` are the backend's join and negation of the children (docs/spec.md
  §2.3, §2.4: a negation matches a missing field);
* the comparison operators dispatch to a few backend hooks (equality, ``$in``, ranges, ``$size``,
  presence, ``$contains``), with ``$ne``/``$nin``/``$exists: false`` as negations and ``$all`` as a
  conjunction of equalities;
* ``$elemMatch`` and element-wise tests re-scope paths to one element of a list (docs/spec.md §2.3).

A subclass supplies the SQL of one location (``L``: what a path reaches) through the ``_`` hooks below and
resolves paths in :meth:`_some`.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Final, Generic, Protocol, TypeVar

from ..filters.ast import And, Comparison, ElemMatch, Node, Nor, Not, Or, Path, Scalar
from ..filters.visitor import FilterTranslator

__all__ = ["IDENTIFIER", "SqlFilterTranslator", "SqlFragmentLike"]

#: A JSON key made only of identifier characters: written inline in SQL (nothing in it needs quoting), so
#: that the planner can match the expression indexes built for ``metadata_indexes`` (docs/spec.md §3.9).
IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class SqlFragmentLike(Protocol):
    """A translated filter: SQL text and its named parameters."""

    @property
    def sql(self) -> str: ...

    @property
    def params(self) -> Mapping[str, Any]: ...


F = TypeVar("F", bound=SqlFragmentLike)
L = TypeVar("L")


class SqlFilterTranslator(FilterTranslator[F], Generic[F, L]):
    """AST -> one SQL boolean expression over the JSON column ``column`` (one instance per filter)."""

    #: How a bound parameter is written, given its name (``":{}"`` for SQLite, ``"%({})s"`` for psycopg).
    placeholder: ClassVar[str]
    #: The SQL of a condition no row satisfies (an empty ``$in`` or ``$all``).
    false_sql: ClassVar[str]

    def __init__(self, column: str = "metadata") -> None:
        self.column = column
        self._params: dict[str, Any] = {}
        self._aliases = 0
        # What paths are relative to: the JSON object paths are looked up in (the row's metadata, or an
        # element of an enclosing document-form $elemMatch), or, inside a value-form $elemMatch, the
        # element itself (its conditions all have the path ``()``).
        self._document = column
        self._element: L | None = None

    # --- backend hooks -------------------------------------------------------------------------------

    #: The backend's fragment type, made from SQL and its parameters.
    _make: Callable[[str, Mapping[str, Any]], F]
    #: ``AND``/``OR`` of ``parts`` (each a condition): ``_join(operator, parts)``.
    _join: Callable[[str, Sequence[str]], str]
    #: NOT of a condition such that a row without the field matches (docs/spec.md §2.4).
    _negate: Callable[[str], str]

    @abstractmethod
    def _some(self, path: Path, test: Callable[[L], str], *, expand: bool) -> str:
        """SQL that holds when some value ``path`` reaches satisfies ``test`` (``expand``: also elements)."""

    @abstractmethod
    def _elements_from(self, loc: L, alias: str) -> str:
        """A FROM source ``alias`` over the elements of ``loc`` (no rows unless it is a list)."""

    @abstractmethod
    def _row(self, alias: str) -> L:
        """The location of the current element of source ``alias``."""

    @abstractmethod
    def _row_document(self, alias: str) -> str:
        """The element of ``alias`` as a document: itself when an object, ``{}`` otherwise."""

    @abstractmethod
    def _row_is_container(self, alias: str) -> str:
        """Whether the element of ``alias`` is an object or a list (the document form's candidates)."""

    @abstractmethod
    def _equal(self, node: Comparison, value: Scalar) -> str:
        """``path`` equals ``value`` (element-wise on lists; ``None`` also matches missing)."""

    @abstractmethod
    def _in(self, node: Comparison, values: tuple[Scalar, ...]) -> str:
        """``path`` equals one of ``values``."""

    @abstractmethod
    def _range(self, node: Comparison, value: Scalar) -> str:
        """``path`` compares to ``value`` by ``node.op`` (``$gt``, ``$gte``, ``$lt``, ``$lte``)."""

    @abstractmethod
    def _has_size(self, node: Comparison, value: Scalar) -> Callable[[L], str]:
        """The test "this value is a list of ``value`` elements"."""

    @abstractmethod
    def _present(self, loc: L) -> str:
        """Whether ``loc`` is not missing."""

    @abstractmethod
    def _contains(self, node: Comparison, value: Scalar) -> Callable[[L], str]:
        """The test of ``$contains``: a substring of a string, or an element of a list."""

    # --- the walk --------------------------------------------------------------------------------------

    def translate(self, node: Node) -> F:
        """Check ``node`` against the manifest and build its SQL expression (no I/O)."""
        fragment = super().translate(node)
        return self._make(fragment.sql, dict(self._params))

    def comparison(self, node: Comparison) -> F:
        return self._fragment(self._comparison(node))

    def logical_and(self, node: And, children: list[F]) -> F:
        return self._fragment(self._join("AND", [c.sql for c in children]))

    def logical_or(self, node: Or, children: list[F]) -> F:
        return self._fragment(self._join("OR", [c.sql for c in children]))

    def logical_nor(self, node: Nor, children: list[F]) -> F:
        return self._fragment(self._negate(self._join("OR", [c.sql for c in children])))

    def logical_not(self, node: Not, child: F) -> F:
        return self._fragment(self._negate(child.sql))

    def elem_match(self, node: ElemMatch) -> F:
        on_documents = node.on_documents

        def some_element(loc: L) -> str:
            alias = self._alias("m")
            saved = self._document, self._element
            if on_documents:
                # Object elements are documents; a nested list reads as a document without fields.
                self._document = self._row_document(alias)
                self._element = None
                wanted = f"{self._row_is_container(alias)} AND "
            else:
                self._element = self._row(alias)
                wanted = ""
            try:
                inner = self.visit(node.condition).sql
            finally:
                self._document, self._element = saved
            return f"EXISTS (SELECT 1 FROM {self._elements_from(loc, alias)} WHERE {wanted}{inner})"

        return self._fragment(self._some(node.path, some_element, expand=False))

    def _comparison(self, node: Comparison) -> str:
        value = node.value
        match node.op:
            case "$eq":
                return self._equal(node, self._scalar(value))
            case "$ne":
                return self._negate(self._equal(node, self._scalar(value)))
            case "$in":
                return self._in(node, self._values(value))
            case "$nin":
                return self._negate(self._in(node, self._values(value)))
            case "$all":
                values = self._values(value)
                if not values:
                    return self.false_sql
                return self._join("AND", [self._equal(node, v) for v in values])
            case "$gt" | "$gte" | "$lt" | "$lte":
                return self._range(node, self._scalar(value))
            case "$size":
                return self._some(node.path, self._has_size(node, self._scalar(value)), expand=False)
            case "$exists":
                present = self._some(node.path, self._present, expand=False)
                return present if value is True else self._negate(present)
            case "$contains":
                return self._some(node.path, self._contains(node, self._scalar(value)), expand=False)
        self.unsupported(node)  # pragma: no cover - the match is exhaustive over ComparisonOp

    def _elementwise(self, test: Callable[[L], str]) -> Callable[[L], str]:
        """``test`` on the value itself, or on some element when the value is a list."""

        def some(loc: L) -> str:
            alias = self._alias("e")
            inner = test(self._row(alias))
            elements = f"EXISTS (SELECT 1 FROM {self._elements_from(loc, alias)} WHERE {inner})"
            return f"({test(loc)} OR {elements})"

        return some

    # --- parameters ------------------------------------------------------------------------------------

    def _fragment(self, sql: str) -> F:
        return self._make(sql, self._params)

    def _bind(self, value: Any) -> str:
        name = f"f{len(self._params)}"
        self._params[name] = value
        return self.placeholder.format(name)

    def _alias(self, prefix: str) -> str:
        self._aliases += 1
        return f"{prefix}{self._aliases}"

    @staticmethod
    def _scalar(value: Scalar | tuple[Scalar, ...]) -> Scalar:
        if isinstance(value, tuple):
            raise TypeError(f"expected a scalar operand, got {value!r}")  # pragma: no cover - parser
        return value

    @staticmethod
    def _values(value: Scalar | tuple[Scalar, ...]) -> tuple[Scalar, ...]:
        if not isinstance(value, tuple):
            raise TypeError(f"expected a list operand, got {value!r}")  # pragma: no cover - parser
        return value
