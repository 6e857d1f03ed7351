"""The base class adapter translators subclass: AST in, native filter out.

``translate()`` first checks every operator of the tree against the adapter's capability manifest and
raises :class:`UnsupportedFilterError` for anything undeclared — before any I/O and before any
translation method runs — then walks the tree bottom-up. A method that meets a case it cannot express
exactly calls :meth:`FilterTranslator.unsupported`; the base never returns a weaker filter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Generic, NoReturn, TypeVar

from ..errors import UnsupportedFilterError
from .ast import And, Comparison, ElemMatch, Node, Nor, Not, Or, Regex, dotted, walk

if TYPE_CHECKING:  # the manifest imports the AST; avoid the import cycle at runtime
    from ..capabilities import AdapterCapabilities

T = TypeVar("T")


class FilterTranslator(Generic[T]):
    """Translate a parsed filter into a backend's native form ``T``.

    Subclasses set ``capabilities`` and implement the node methods they declare support for. The
    defaults raise :class:`UnsupportedFilterError`, so a forgotten case fails loudly.
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
