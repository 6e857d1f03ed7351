"""The base class adapter translators subclass: AST in, native filter out.

``translate()`` first checks every operator of the tree against the adapter's capability manifest and
raises :class:`UnsupportedFilterError` for anything undeclared — before any I/O and before any
translation method runs — then walks the tree bottom-up. A method that meets a case it cannot express
exactly calls :meth:`FilterTranslator.unsupported`; the base never returns a weaker filter.

:class:`CombiningTranslator` is the base of translators whose native form combines conditions itself (a
``bool`` query, ``must``/``should``/``must_not``, a tree pushed to negation normal form): they give three
combinators and the four logical methods follow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar, Generic, NoReturn, TypeVar

from ..errors import UnsupportedFilterError
from .ast import And, Comparison, ElemMatch, Node, Nor, Not, Or, Path, Regex, Scalar, dotted, walk
from .numbers import beyond_int64, distinct, float64_of
from .operators import RANGE

if TYPE_CHECKING:  # the manifest imports the AST; avoid the import cycle at runtime
    from ..capabilities import AdapterCapabilities

T = TypeVar("T")


class FilterTranslator(Generic[T]):
    """Translate a parsed filter into a backend's native form ``T``.

    Subclasses set ``capabilities`` and implement the node methods they declare support for. The
    defaults raise `UnsupportedFilterError`, so a forgotten case fails loudly.
    """

    capabilities: ClassVar[AdapterCapabilities]

    def translate(self, node: Node) -> T:
        """Check ``node`` against the manifest, then translate it."""
        self.check(node)
        return self.visit(node)

    def check(self, node: Node) -> None:
        """Raise UnsupportedFilterError for the first operator the manifest does not declare."""
        supported = self.capabilities.supported_operators
        for current in walk(node):
            if current.operator not in supported:
                path = getattr(current, "path", None)
                self.unsupported(current, "operator not declared in the capability manifest", path=path)

    def visit(self, node: Node) -> T:
        """Dispatch one node (children are translated by the logical methods via ``visit``)."""
        match node:
            case Comparison():
                return self.comparison(node)
            case Regex():
                return self.regex(node)
            case ElemMatch():
                return self.elem_match(node)
            case And():
                return self.logical_and(node, [self.visit(c) for c in node.children])
            case Or():
                return self.logical_or(node, [self.visit(c) for c in node.children])
            case Nor():
                return self.logical_nor(node, [self.visit(c) for c in node.children])
            case Not():
                return self.logical_not(node, self.visit(node.child))
        raise TypeError(f"not a filter node: {node!r}")  # pragma: no cover - exhaustive match

    # --- node methods: override what the adapter supports -------------------------------------

    def comparison(self, node: Comparison) -> T:
        self.unsupported(node)

    def regex(self, node: Regex) -> T:
        self.unsupported(node)

    def elem_match(self, node: ElemMatch) -> T:
        self.unsupported(node)

    def logical_and(self, node: And, children: list[T]) -> T:
        self.unsupported(node)

    def logical_or(self, node: Or, children: list[T]) -> T:
        self.unsupported(node)

    def logical_nor(self, node: Nor, children: list[T]) -> T:
        self.unsupported(node)

    def logical_not(self, node: Not, child: T) -> T:
        self.unsupported(node)

    # --- helpers ------------------------------------------------------------------------------

    def unsupported(
        self, node: Node, reason: str | None = None, *, path: tuple[str, ...] | None = None
    ) -> NoReturn:
        """Raise UnsupportedFilterError naming the operator, the path and this adapter."""
        if path is None:
            path = getattr(node, "path", None)
        raise UnsupportedFilterError(
            node.operator,
            dotted(path) if path else None,
            self.capabilities.name,
            reason or "no exact translation for this backend",
        )

    def exact_float64(self, node: Comparison, value: int | float) -> float:
        """``value`` as the float64 the backend compares it as (``filters.numbers.float64_of``); an integer
        beyond int64 that is not exactly a float64 is refused (declared deviation ``int64-range``)."""
        converted = float64_of(value)
        if converted is None:
            self.unsupported(node, beyond_int64(value))
        return converted


class CombiningTranslator(FilterTranslator[T]):
    """A translator whose native form has its own all-of, any-of and none-of.

    ``$and`` is :attr:`all_of`, ``$or`` :attr:`any_of`, ``$nor`` :attr:`none_of` and ``$not``
    :meth:`negate`. Comparisons are dispatched here (:meth:`comparison`), so that ``$ne``, ``$nin`` and
    ``$exists: false`` are always the negations of ``$eq``, ``$in`` and ``$exists: true`` — a missing
    field matches them (docs/spec.md §2.4) — and a subclass gives the positive leaves: :meth:`equals`,
    :meth:`in_values`, :meth:`ordered`, :meth:`present` and, if it declares ``$size``, :meth:`size`.

    Subclasses set the three combinators to module functions (``all_of = staticmethod(_all_of)``); each
    must keep the exact meaning of the node it builds.
    """

    #: How messages name the backend (``"Qdrant"``).
    backend: ClassVar[str]
    #: Every child holds.
    all_of: Callable[[list[T]], T]
    #: At least one child holds.
    any_of: Callable[[list[T]], T]
    #: No child holds.
    none_of: Callable[[list[T]], T]

    def negate(self, child: T) -> T:
        """``child`` does not hold."""
        return self.none_of([child])

    def logical_and(self, node: And, children: list[T]) -> T:
        return self.all_of(children)

    def logical_or(self, node: Or, children: list[T]) -> T:
        return self.any_of(children)

    def logical_nor(self, node: Nor, children: list[T]) -> T:
        return self.none_of(children)

    def logical_not(self, node: Not, child: T) -> T:
        return self.negate(child)

    # --- comparisons ----------------------------------------------------------------------------

    def comparison(self, node: Comparison) -> T:
        """One field condition, from the positive leaves."""
        if not node.path:
            self.unsupported(
                node, f"a condition on an array element itself has no {self.backend} translation"
            )
        op, value = node.op, node.value
        if isinstance(value, tuple):
            if op == "$in":
                return self.in_values(node, value)
            if op == "$nin":
                return self.negate(self.in_values(node, value))
            if op == "$all":
                return self.all_values(node, value)
        elif op == "$eq":
            return self.equals(node, value)
        elif op == "$ne":
            return self.negate(self.equals(node, value))
        elif op in RANGE:
            return self.ordered(node, value)
        elif op == "$exists":
            present = self.present(node.path)
            return present if value else self.negate(present)
        elif op == "$size" and isinstance(value, int) and not isinstance(value, bool):
            return self.size(node, value)
        self.unsupported(node)

    def equals(self, node: Comparison, value: Scalar) -> T:
        """Some value reached at the path equals ``value`` (``$eq``)."""
        self.unsupported(node)

    def in_values(self, node: Comparison, values: tuple[Scalar, ...]) -> T:
        """Some value reached at the path equals one of ``values`` (``$in``)."""
        self.unsupported(node)

    def all_values(self, node: Comparison, values: tuple[Scalar, ...]) -> T:
        """Every one of ``values`` is reached at the path (``$all``; none given matches nothing)."""
        if not values:
            return self.any_of([])
        return self.all_of([self.in_values(node, (value,)) for value in distinct(values)])

    def ordered(self, node: Comparison, value: Scalar) -> T:
        """Some value reached at the path compares to ``value`` by ``node.op`` (a range operator)."""
        self.unsupported(node)

    def present(self, path: Path) -> T:
        """Some value, even null or ``[]``, is reached at ``path`` (``$exists: true``)."""
        raise NotImplementedError

    def size(self, node: Comparison, length: int) -> T:
        """An array of ``length`` elements is reached at the path (``$size``)."""
        self.unsupported(node)
