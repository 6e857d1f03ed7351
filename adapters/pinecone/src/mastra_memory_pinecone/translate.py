"""Filter translation: the filter AST in, a Pinecone filter out (docs/spec.md §2.7, §2.8).

The translator builds a small tree of *leaves* — each a Pinecone condition on the stored record of
:mod:`.layout`, paired with its exact Pinecone negation — joined by ``all``/``any``. ``$not`` and
``$nor`` push negation down to the leaves (De Morgan), so every emitted condition is positive Pinecone
syntax; then the tree is rendered with ``$and``/``$or``.

The forms never depend on how Pinecone treats a *missing* field under ``$ne``/``$nin`` (undocumented):
a negated equality is ``{"$or": [{f: {"$exists": false}}, {f: {"$ne": v}}]}``, true for a missing field
whichever way ``$ne`` reads it. They do rely on what Pinecone documents — a list of strings matches
``$eq``/``$in`` when any element does — and on ``$ne``/``$nin`` of a present list being the negation of
``$eq``/``$in`` (MongoDB's rule, on which Pinecone says its language is based).

Leaves and what they mean (``P`` is the dotted path, ``S`` the reserved ``_mastra_shape`` list):

* equality with a string or boolean: ``{P: {"$eq": v}}``; with a number below 2^53: the same (Pinecone
  compares 64-bit floats, exact there); ``None``: the path is logically absent (no key, no ``d:``/``l:``
  entry) and no prefix of it is a list;
* ranges: numbers only (a string or datetime operand raises ``UnsupportedFilterError``, declared
  ``no-string-ranges``); the negation of ``P > v`` is "no ``n:P`` entry, or ``P <= v``";
* operands of 2^53 or more: ``float(v)`` is not exact, so equality and ranges also consult the ``b:``/
  ``i:`` entries that hold integers beyond 2^53 exactly, deciding the int64 values that share
  ``float(v)`` one by one (``int64-range``: integers beyond int64 that are not exactly a float raise);
* ``$in`` is an ``$or`` of one ``$in`` per type (strings, numbers) and equalities; ``$all`` an ``$and`` of
  equalities; ``$exists`` a presence test (key, or a ``d:``/``l:`` entry for dicts and empty lists).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Final, TypeAlias

from mastra_memory.filters import Comparison
from mastra_memory.filters.ast import Path, Scalar
from mastra_memory.filters.numbers import (
    EXACT_FLOAT_LIMIT,
    compare,
    ints_rounding_to,
)
from mastra_memory.filters.visitor import CombiningTranslator

from .capabilities import PINECONE_CAPABILITIES
from .layout import SHAPE_KEY

__all__ = ["PineconeFilter", "PineconeFilterTranslator", "Tree", "negate", "to_pinecone"]

_COMPLEMENT: Final = {"$gt": "$lte", "$gte": "$lt", "$lt": "$gte", "$lte": "$gt"}
_STRICT: Final = {"$gt": "$gt", "$gte": "$gt", "$lt": "$lt", "$lte": "$lt"}


@dataclass(frozen=True, slots=True, eq=False)
class Leaf:
    """A Pinecone condition and a function building its exact negation."""

    expr: dict[str, Any]
    negation: Callable[[], Tree]


@dataclass(frozen=True, slots=True)
class AllOf:
    children: tuple[Tree, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    children: tuple[Tree, ...]


@dataclass(frozen=True, slots=True)
class Const:
    value: bool


Tree: TypeAlias = Leaf | AllOf | AnyOf | Const
TRUE: Final = Const(True)
FALSE: Final = Const(False)


def negate(tree: Tree) -> Tree:
    """The exact negation of ``tree`` (De Morgan down to the leaves)."""
    match tree:
        case Leaf():
            return tree.negation()
        case AllOf(children):
            return any_of([negate(c) for c in children])
        case AnyOf(children):
            return all_of([negate(c) for c in children])
        case Const(value):
            return Const(not value)
    raise TypeError(tree)  # pragma: no cover


def none_hold(children: list[Tree]) -> Tree:
    """No child holds: the ``$and`` of their negations."""
    return all_of([negate(c) for c in children])


def _combined(group: type[AllOf | AnyOf], children: list[Tree], unit: bool) -> Tree:
    """``children`` as one ``group``, flattened and folded: constants equal to ``unit`` (true for
    :class:`AllOf`, false for :class:`AnyOf`) are dropped and the other constant is the answer."""
    flat: list[Tree] = []
    for child in children:
        if isinstance(child, Const):
            if child.value != unit:
                return child
            continue
        flat.extend(child.children if isinstance(child, group) else (child,))
    if not flat:
        return Const(unit)
    return flat[0] if len(flat) == 1 else group(tuple(flat))


def all_of(children: list[Tree]) -> Tree:
    return _combined(AllOf, children, True)


def any_of(children: list[Tree]) -> Tree:
    return _combined(AnyOf, children, False)


def render(tree: Tree) -> dict[str, Any]:
    """A Pinecone filter expression (not a constant)."""
    match tree:
        case Leaf(expr):
            return expr
        case AllOf(children):
            return {"$and": [render(c) for c in children]}
        case AnyOf(children):
            return {"$or": [render(c) for c in children]}
    raise TypeError(f"a constant has no Pinecone form: {tree!r}")  # pragma: no cover


@dataclass(frozen=True, slots=True)
class PineconeFilter:
    """A translated filter: ``expression`` for Pinecone, or ``never`` (matches nothing, no query needed)."""

    expression: dict[str, Any] | None
    never: bool = False


# --- leaves ---------------------------------------------------------------------------------------


def key_exists(key: str) -> Leaf:
    """The Pinecone key is present."""
    return Leaf({key: {"$exists": True}}, lambda: key_missing(key))


def key_missing(key: str) -> Leaf:
    return Leaf({key: {"$exists": False}}, lambda: key_exists(key))


def equals(key: str, value: str | bool | int | float) -> Leaf:
    """The Pinecone key holds ``value`` (or a list with it); negation: no key, or ``$ne``."""
    return Leaf({key: {"$eq": value}}, lambda: differs(key, value))


def differs(key: str, value: str | bool | int | float) -> Leaf:
    expr = {"$or": [{key: {"$exists": False}}, {key: {"$ne": value}}]}
    return Leaf(expr, lambda: equals(key, value))


def one_of(key: str, values: list[Any]) -> Leaf:
    """The Pinecone key holds one of ``values`` (or a list with one); negation: no key, or ``$nin``."""
    return Leaf({key: {"$in": values}}, lambda: none_of(key, values))


def none_of(key: str, values: list[Any]) -> Leaf:
    expr = {"$or": [{key: {"$exists": False}}, {key: {"$nin": values}}]}
    return Leaf(expr, lambda: one_of(key, values))


def shape_has(entries: list[str]) -> Leaf:
    return one_of(SHAPE_KEY, entries)


def shape_lacks(entries: list[str]) -> Leaf:
    return none_of(SHAPE_KEY, entries)


def number_range(key: str, op: str, value: float) -> Leaf:
    """A number is stored at ``key`` and it satisfies ``op value``.

    Negation: no number is stored there (no ``n:`` entry: missing, a string, a boolean or a list), or the
    complementary range holds.
    """
    return Leaf(
        {key: {op: value}},
        lambda: any_of([shape_lacks(["n:" + key]), number_range(key, _COMPLEMENT[op], value)]),
    )


class PineconeFilterTranslator(CombiningTranslator[Tree]):
    """AST -> :class:`Tree` (``translate_filter`` wraps the result in a :class:`PineconeFilter`)."""

    capabilities: ClassVar = PINECONE_CAPABILITIES
    backend = "Pinecone"
    #: ``$not`` and ``$nor`` push negation down to the leaves (De Morgan).
    all_of = staticmethod(all_of)
    any_of = staticmethod(any_of)
    none_of = staticmethod(none_hold)

    # --- presence ---------------------------------------------------------------------------------

    def present(self, path: Path) -> Tree:
        """The path holds something (a stored value, a dict with content, or a list)."""
        key = ".".join(path)
        return any_of([key_exists(key), shape_has(["d:" + key, "l:" + key])])

    def null_equal(self, path: Path) -> Tree:
        """``{path: None}`` over stored records (nulls are dropped): absent, and no prefix is a list."""
        prefixes = ["l:" + ".".join(path[:i]) for i in range(1, len(path))]
        parts = [negate(self.present(path))]
        if prefixes:
            parts.append(shape_lacks(prefixes))
        return all_of(parts)

    # --- numbers ------------------------------------------------------------------------------------

    def number_compare(self, node: Comparison, op: str, value: int | float) -> Tree:
        """``stored number <op> value`` (``op`` is ``$eq`` or a range), exact for every int64 and float."""
        key = ".".join(node.path)
        target = self.exact_float64(node, value)
        if abs(target) < EXACT_FLOAT_LIMIT:
            if op == "$eq":
                return equals(key, value if isinstance(value, int) else target)
            return number_range(key, op, target)
        # Beyond 2^53 a stored integer is held as its nearest float (marked b:, exact in i:) and a stored
        # float as itself: only values whose float equals `target` can compare differently from their
        # floats, so those are decided here — floats by `target` itself, integers one by one.
        parts: list[Tree] = []
        if op != "$eq":
            parts.append(number_range(key, _STRICT[op], target))
        if compare(op, target, value):
            parts.append(all_of([equals(key, target), shape_lacks(["b:" + key])]))
        wanted = [f"i:{n}:{key}" for n in ints_rounding_to(target) if compare(op, n, value)]
        if wanted:
            parts.append(shape_has(wanted))
        return any_of(parts)

    # --- leaves -------------------------------------------------------------------------------------

    def equals(self, node: Comparison, value: Scalar) -> Tree:
        if value is None:
            return self.null_equal(node.path)
        if isinstance(value, (bool, str)):
            return equals(".".join(node.path), value)
        return self.number_compare(node, "$eq", value)

    def in_values(self, node: Comparison, values: tuple[Scalar, ...]) -> Tree:
        key = ".".join(node.path)
        strings = list(dict.fromkeys(v for v in values if isinstance(v, str)))
        small: list[int | float] = []
        others: list[Tree] = []
        for value in values:
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if number and abs(self.exact_float64(node, value)) < EXACT_FLOAT_LIMIT:  # type: ignore[arg-type]
                if value not in small:
                    small.append(value)  # type: ignore[arg-type]
                continue
            if not isinstance(value, str):
                others.append(self.equals(node, value))
        parts: list[Tree] = []
        if strings:
            parts.append(one_of(key, strings))
        if small:
            parts.append(one_of(key, small))
        return any_of([*parts, *others])

    def all_values(self, node: Comparison, values: tuple[Scalar, ...]) -> Tree:
        """``$all``: an ``$and`` of equalities (none given: false)."""
        return all_of([self.equals(node, item) for item in values]) if values else FALSE

    def ordered(self, node: Comparison, value: Scalar) -> Tree:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.unsupported(
                node,
                "Pinecone's range operators compare numbers only (declared deviation no-string-ranges)",
            )
        return self.number_compare(node, node.op, value)


def to_pinecone(tree: Tree) -> PineconeFilter:
    """The translated tree as what the store sends (``None`` for match-all)."""
    if isinstance(tree, Const):
        return PineconeFilter(None, never=not tree.value)
    return PineconeFilter(render(tree))
