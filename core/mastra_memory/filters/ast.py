"""The filter AST: frozen, normalised nodes produced by :func:`mastra_memory.filters.parse`.

Normal form guarantees (adapters rely on them):

* paths are tuples of non-empty segments (``{"a": {"b": 1}}`` and ``{"a.b": 1}`` both give ``("a", "b")``);
  inside ``$elemMatch`` paths are relative to the element, and ``()`` means the element itself;
* implicit equality is ``$eq``, a plain list is ``$in``, several entries in one document are an ``And``;
* values are JSON scalars: ``datetime`` became its canonical timestamp string, ``-0.0`` became ``0``,
  NaN/inf never appear; ``$in``/``$nin``/``$all`` values are tuples of scalars;
* ``$regex`` is a :class:`Regex` node whose pattern passed the portable-subset check;
* a field-level ``$not`` is a :class:`Not` over the field's conditions (so it matches missing fields).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal, TypeAlias

from .operators import ALL_OPERATORS as ALL_OPERATORS

Scalar: TypeAlias = str | int | float | bool | None
Path: TypeAlias = tuple[str, ...]

ComparisonOp = Literal[
    "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$all", "$size", "$exists", "$contains"
]


def dotted(path: Path) -> str:
    """The dotted form of a path, used in messages (``("a", "b")`` -> ``"a.b"``)."""
    return ".".join(path)


@dataclass(frozen=True, slots=True)
class Comparison:
    """``path <op> value``. For ``$in``/``$nin``/``$all`` ``value`` is a tuple of scalars."""

    path: Path
    op: ComparisonOp
    value: Scalar | tuple[Scalar, ...]

    @property
    def operator(self) -> str:
        return self.op


@dataclass(frozen=True, slots=True)
class Regex:
    """Unanchored regular-expression search (portable subset); ``options`` is a subset of ``"ims"``."""

    path: Path
    pattern: str
    options: str = ""

    @property
    def operator(self) -> str:
        return "$regex"


@dataclass(frozen=True, slots=True)
class ElemMatch:
    """Some single element of the list at ``path`` satisfies ``condition`` (paths relative to the element)."""

    path: Path
    condition: Node

    @property
    def operator(self) -> str:
        return "$elemMatch"

    @property
    def on_documents(self) -> bool:
        """Whether ``condition`` tests fields of object elements (``{"$elemMatch": {"k": 1}}``).

        ``False`` means it tests each element's own value (``{"$elemMatch": {"$gte": 2}}``, paths ``()``).
        In the document form only object elements can match (and nested lists, which MongoDB treats as
        objects without such fields): a scalar element matches neither ``{"k": None}`` nor
        ``{"k": {"$ne": 1}}``.
        """
        pending: list[Node] = [self.condition]
        while pending:
            node = pending.pop()
            if isinstance(node, (Comparison, Regex, ElemMatch)):
                return node.path != ()
            if isinstance(node, Not):
                pending.append(node.child)
            else:
                pending.extend(node.children)
        return False  # pragma: no cover - every condition has a leaf


@dataclass(frozen=True, slots=True)
class _Logical:
    """``children`` combined by the logical ``operator`` each subclass names (equal only within a class)."""

    children: tuple[Node, ...]
    operator: ClassVar[str]


class And(_Logical):
    __slots__ = ()
    operator = "$and"


class Or(_Logical):
    __slots__ = ()
    operator = "$or"


class Nor(_Logical):
    __slots__ = ()
    operator = "$nor"


@dataclass(frozen=True, slots=True)
class Not:
    """NOT of the whole sub-filter (root ``$not``) or of a field's operator document (field ``$not``)."""

    child: Node

    @property
    def operator(self) -> str:
        return "$not"


Node: TypeAlias = Comparison | Regex | ElemMatch | And | Or | Nor | Not


def walk(node: Node) -> list[Node]:
    """Every node of the tree, depth first, the root first."""
    out: list[Node] = []
    stack: list[Node] = [node]
    while stack:
        current = stack.pop()
        out.append(current)
        match current:
            case And(children) | Or(children) | Nor(children):
                stack.extend(reversed(children))
            case Not(child):
                stack.append(child)
            case ElemMatch(_, condition):
                stack.append(condition)
            case _:
                pass
    return out


def operators_used(node: Node | None) -> frozenset[str]:
    """The operator names a filter uses (for checking it against a capability manifest)."""
    if node is None:
        return frozenset()
    return frozenset(n.operator for n in walk(node))
