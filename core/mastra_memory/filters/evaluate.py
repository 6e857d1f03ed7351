"""The reference evaluator: what a filter means for one metadata dict (docs/spec.md §2.3, §2.4).

It is the oracle every adapter is compared with, so it follows MongoDB's matcher wherever the spec says
"Mongo semantics", including the corners:

* A path is resolved the way MongoDB's element iterator does it. Objects are descended; a list in the
  middle of a path is crossed by descending into each of its object elements (implicit array traversal;
  scalar elements are skipped); a path that ends early — a missing key, or a scalar where an object was
  needed — yields *missing*. At the end of the path a list yields its elements and then itself for the
  element-wise operators (equality, ranges, ``$in``, ``$all``, ``$regex``), and only itself for the
  operators that look at the list (``$size``, ``$elemMatch``, ``$exists``, ``$contains``).
* A leaf condition holds when some yielded value satisfies it. ``$ne`` and ``$nin`` are the negations of
  ``$eq`` and ``$in`` over the whole path, which is why they match missing fields.
* ``$elemMatch`` over documents (``{"k": 1}``) tries only object elements — a nested list counts as an
  object without such fields, scalars are skipped; an operator document (``{"$gt": 1}``) tests each element
  as one value, without expanding a nested list.
* Values compare only within a type family: numbers (``int`` and ``float``, never ``bool``), strings (by code
  point), booleans, null. ``datetime`` values compare as their canonical timestamp strings.

Metadata is read as plain Python data: mappings are objects, lists and tuples are lists.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from ..timestamps import canonical_timestamp
from .ast import And, Comparison, ElemMatch, Node, Nor, Not, Or, Path, Regex, Scalar
from .numbers import compare
from .operators import RANGE
from .parse import parse
from .regex import compile_regex


class _Missing:
    """The value of a path that does not exist in the document."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Final = _Missing()
_NODE_TYPES: Final = (Comparison, Regex, ElemMatch, And, Or, Nor, Not)
_NO_FIELDS: Final[Mapping[str, Any]] = {}


def evaluate(filter: Mapping[str, Any] | Node | None, metadata: Mapping[str, Any] | None) -> bool:
    """Whether ``metadata`` matches ``filter`` (a filter dict, a parsed node, or ``None`` = everything).

    Args:
        filter: a filter dict (validated first), a tree from `parse`, or ``None`` (matches everything).
        metadata: the document to test; ``None`` is read as an empty document.

    Returns:
        ``True`` when the document matches, as every conforming store must answer.

    Raises:
        FilterError: ``filter`` is a dict that is not a valid filter.
    """
    node = filter if filter is None or isinstance(filter, _NODE_TYPES) else parse(filter)
    return matches(node, metadata)


def matches(node: Node | None, metadata: Mapping[str, Any] | None) -> bool:
    """Whether ``metadata`` matches an already parsed filter (``None`` matches everything)."""
    if node is None:
        return True
    return _match(node, _NO_FIELDS if metadata is None else metadata)


def _match(node: Node, document: Any) -> bool:
    if isinstance(node, Comparison):
        return _comparison(node, document)
    if isinstance(node, And):
        return all(_match(child, document) for child in node.children)
    if isinstance(node, Or):
        return any(_match(child, document) for child in node.children)
    if isinstance(node, Nor):
        return not any(_match(child, document) for child in node.children)
    if isinstance(node, Not):
        return not _match(node.child, document)
    if isinstance(node, Regex):
        pattern = compile_regex(node.pattern, node.options)
        return any(
            isinstance(v, str) and pattern.search(v) is not None for v in _values(document, node.path, True)
        )
    return _elem_match(node, document)


# --- path resolution -----------------------------------------------------------------------------


def _values(document: Any, path: Path, expand: bool) -> list[Any]:
    """The values ``path`` reaches in ``document`` (``MISSING`` where a branch ends early).

    ``path == ()`` is the document itself (an element inside ``$elemMatch``), tested as a single value.
    With ``expand`` a list at the end of the path contributes its elements and then itself.
    """
    if not path:
        return [_plain(document)]
    out: list[Any] = []
    _collect(document, path, expand, out)
    return out


def _collect(document: Any, path: Path, expand: bool, out: list[Any]) -> None:
    current = document
    last = len(path) - 1
    for depth, key in enumerate(path):
        if not isinstance(current, Mapping) or key not in current:
            out.append(MISSING)
            return
        current = current[key]
        if depth < last and isinstance(current, (list, tuple)):
            rest = path[depth + 1 :]
            for element in current:
                if isinstance(element, Mapping):
                    _collect(element, rest, expand, out)
            return
    if expand and isinstance(current, (list, tuple)):
        out.extend(_plain(v) for v in current)
    out.append(_plain(current))


def _plain(value: Any) -> Any:
    """Datetimes compare as their canonical timestamp text; everything else as it is."""
    return canonical_timestamp(value) if isinstance(value, datetime) else value


# --- leaf tests ----------------------------------------------------------------------------------


def _equal(value: Any, operand: Scalar) -> bool:
    """Typed equality of one reached value and a scalar operand (``None`` also matches missing)."""
    if operand is None:
        return value is None or value is MISSING
    if isinstance(operand, bool):
        return isinstance(value, bool) and value == operand
    if isinstance(operand, str):
        return isinstance(value, str) and value == operand
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == operand


def _ordered(value: Any, op: str, operand: Scalar) -> bool:
    """``value <op> operand`` within the operand's type family (numbers or strings)."""
    if isinstance(operand, str):
        if not isinstance(value, str):
            return False
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return compare(op, value, operand)


def _contains(value: Any, operand: Scalar) -> bool:
    if isinstance(value, str):
        return isinstance(operand, str) and operand in value
    if isinstance(value, (list, tuple)):
        return any(_equal(_plain(element), operand) for element in value)
    return False


def _any_equal(values: list[Any], operand: Scalar) -> bool:
    return any(_equal(v, operand) for v in values)


def _comparison(node: Comparison, document: Any) -> bool:
    op, operand = node.op, node.value
    if isinstance(operand, tuple):
        values = _values(document, node.path, True)
        if op == "$all":
            return bool(operand) and all(_any_equal(values, item) for item in operand)
        found = any(_any_equal(values, item) for item in operand)
        if op == "$in" or op == "$nin":
            return found if op == "$in" else not found
    elif op == "$eq" or op == "$ne":
        found = _any_equal(_values(document, node.path, True), operand)
        return found if op == "$eq" else not found
    elif op in RANGE:
        return any(_ordered(v, op, operand) for v in _values(document, node.path, True))
    elif op == "$exists":
        present = any(v is not MISSING for v in _values(document, node.path, False))
        return present == operand
    elif op == "$size":
        return any(
            isinstance(v, (list, tuple)) and len(v) == operand for v in _values(document, node.path, False)
        )
    elif op == "$contains":
        return any(_contains(v, operand) for v in _values(document, node.path, False))
    raise TypeError(f"malformed comparison node (operand does not fit {op}): {node!r}")


def _elem_match(node: ElemMatch, document: Any) -> bool:
    on_documents = node.on_documents
    for value in _values(document, node.path, False):
        if not isinstance(value, (list, tuple)):
            continue
        for element in value:
            if on_documents:
                if isinstance(element, Mapping):
                    target: Any = element
                elif isinstance(element, (list, tuple)):
                    target = _NO_FIELDS  # MongoDB reads a nested list as an object with no such fields
                else:
                    continue
            else:
                target = element
            if _match(node.condition, target):
                return True
    return False
