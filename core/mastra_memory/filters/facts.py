"""Facts: how a backend that only matches terms answers null, missing, ``$exists``, ``$size`` exactly.

A term index cannot tell ``null`` from a missing key, ``[]`` from a missing key, or a scalar from an
object that a longer path would step into. So the layout stores, beside the values, the *facts* of each
metadata document: one keyword ``<tag>:<path code>`` each (``n:<path code>:<k>`` for array lengths).

====  ==========================================================================================
tag   the path ...
====  ==========================================================================================
p     is present: a value, even null or ``[]``, is reached
a     is held by every container one level up (no branch lacks the last key)
c     reaches containers to step into (objects, or arrays holding objects)
s     reaches a scalar or null: a dead end for longer paths
z     reaches null (or an array holding null); ``t``/``f`` likewise true/false
n     reaches an array of ``k`` elements
l     reaches an array that holds an array (which ``$elemMatch`` over documents reads as ``{}``)
====  ==========================================================================================

Paths are resolved the way the reference evaluator resolves them (docs/spec.md §2.4): objects are
descended, an array in the middle of a path is crossed into its object elements (other elements are
skipped), and a path that ends early — a missing key, or a scalar where an object was needed — is
*missing*. :func:`document_facts` computes the facts; :class:`FactTranslator` builds the conditions that
read them; :func:`manifest` declares what that gives an adapter. The Qdrant (filter document) and
OpenSearch (filter fields) layouts both store them, each with its own path code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final

from ..capabilities import AdapterCapabilities
from .ast import Comparison, ElemMatch, Path, Scalar
from .evaluate import matches
from .visitor import CombiningTranslator, T

__all__ = ["EMULATED_OPERATORS", "NATIVE_OPERATORS", "FactTranslator", "document_facts", "fact", "manifest"]

#: Conditions on the values reached at a path, and their combinations: term queries of the layout.
NATIVE_OPERATORS: Final = frozenset(
    {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$and", "$or", "$not", "$nor"}
)
#: What the facts decide: ``$all`` (equalities), ``$size`` (``n``), ``$elemMatch`` (elements, ``l``),
#: ``$exists`` (``p``).
EMULATED_OPERATORS: Final = frozenset({"$all", "$size", "$elemMatch", "$exists"})


def manifest(**fields: Any) -> AdapterCapabilities:
    """The capability manifest of an adapter whose layout stores these facts: its own ``fields``, and the
    operators and the implicit array traversal (docs/spec.md §2.4) that the layout gives."""
    return AdapterCapabilities(
        native_operators=NATIVE_OPERATORS,
        emulated_operators=EMULATED_OPERATORS,
        implicit_array_traversal=True,
        **fields,
    )


def fact(tag: str, code: str, extra: int | None = None) -> str:
    """The fact keyword ``<tag>:<code>`` (``<tag>:<code>:<extra>`` for array lengths)."""
    text = f"{tag}:{code}"
    return text if extra is None else f"{text}:{extra}"


def _scalar(value: Any, code: str, scalars: list[Any], facts: set[str]) -> None:
    """One reached scalar: a null or boolean fact, or a string or number to match."""
    if value is None:
        facts.add(f"z:{code}")
    elif value is True:
        facts.add(f"t:{code}")
    elif value is False:
        facts.add(f"f:{code}")
    elif isinstance(value, (str, int, float)):
        scalars.append(value)


def document_facts(
    root: Mapping[str, Any],
    code_of: Callable[[tuple[str, ...]], str],
    visit: Callable[[str, list[Any], list[Mapping[str, Any]]], None],
) -> set[str]:
    """The facts of one object (the metadata, or an object element of an array), paths named by ``code_of``.

    For each path reached, in document order and before the paths below it, ``visit(code, scalars,
    objects)`` receives the strings and numbers reached there (array elements included) and the object
    elements of the arrays reached there, which a layout indexes for ``$elemMatch``.
    """
    facts: set[str] = set()

    def walk(prefix: tuple[str, ...], containers: list[Mapping[str, Any]]) -> None:
        keys: dict[str, None] = {}
        for container in containers:
            keys.update(dict.fromkeys(container))
        for key in keys:
            path = (*prefix, key)
            code = code_of(path)
            holders = [c for c in containers if key in c]
            facts.add(f"p:{code}")
            if len(holders) == len(containers):
                facts.add(f"a:{code}")
            scalars: list[Any] = []
            objects: list[Mapping[str, Any]] = []
            inner: list[Mapping[str, Any]] = []
            for holder in holders:
                value = holder[key]
                if isinstance(value, Mapping):
                    inner.append(value)
                elif isinstance(value, (list, tuple)):
                    facts.add(f"n:{code}:{len(value)}")
                    for element in value:
                        if isinstance(element, Mapping):
                            inner.append(element)
                            objects.append(element)
                        elif isinstance(element, (list, tuple)):
                            facts.add(f"l:{code}")
                        else:
                            _scalar(element, code, scalars, facts)
                else:
                    facts.add(f"s:{code}")
                    _scalar(value, code, scalars, facts)
            visit(code, scalars, objects)
            if inner:
                facts.add(f"c:{code}")
                walk(path, inner)

    walk((), [root])
    return facts


class FactTranslator(CombiningTranslator[T]):
    """A translator over a layout that stores the facts of :func:`document_facts`: null, booleans,
    missing, ``$exists``, ``$size`` and arrays of arrays read facts; the subclass gives :meth:`has_fact`,
    the equality of strings and numbers (:meth:`value_equals`) and its ``$elemMatch`` over object elements
    (:meth:`nested`)."""

    #: Why ``$elemMatch`` with an operator document (over scalar elements) has no translation.
    scalar_elements: ClassVar[str]

    def has_fact(self, tag: str, path: Path, extra: int | None = None) -> T:
        """The document has the fact ``tag`` of ``path``."""
        raise NotImplementedError

    def value_equals(self, node: Comparison, value: str | int | float) -> T:
        """A string or number reached at the path equals ``value``."""
        self.unsupported(node)

    def missing(self, path: Path) -> T:
        """Some branch of ``path`` ends early: a key is absent, or a scalar stands where an object is."""
        terms: list[T] = [self.none_of([self.has_fact("a", path[:1])])]
        for depth in range(1, len(path)):
            prefix = path[:depth]
            terms.append(
                self.all_of(
                    [self.has_fact("c", prefix), self.none_of([self.has_fact("a", path[: depth + 1])])]
                )
            )
            terms.append(self.has_fact("s", prefix))
        return self.any_of(terms)

    def equals(self, node: Comparison, value: Scalar) -> T:
        """``{path: None}`` is a reached null or a missing path; booleans are facts."""
        if value is None:
            return self.any_of([self.has_fact("z", node.path), self.missing(node.path)])
        if value is True or value is False:
            return self.has_fact("t" if value else "f", node.path)
        return self.value_equals(node, value)

    def present(self, path: Path) -> T:
        """``$exists``: the fact ``p``."""
        return self.has_fact("p", path)

    def size(self, node: Comparison, length: int) -> T:
        """``$size``: the fact ``n`` with the length."""
        return self.has_fact("n", node.path, length)

    def elem_match(self, node: ElemMatch) -> T:
        """``$elemMatch`` over documents: some object element matches (:meth:`nested`), or an array element
        that is itself an array, which ``$elemMatch`` reads as ``{}``, when ``{}`` satisfies the condition.
        An operator document (scalar elements) is refused with :attr:`scalar_elements`."""
        if not node.on_documents:
            self.unsupported(node, self.scalar_elements)
        nested = self.nested(node)
        if matches(node.condition, {}):
            return self.any_of([nested, self.has_fact("l", node.path)])
        return nested

    def nested(self, node: ElemMatch) -> T:
        """Some object element of the arrays reached at the path satisfies ``node.condition``."""
        raise NotImplementedError
