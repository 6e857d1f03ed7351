"""Translate the filter AST into MQL over the ``metadata`` sub-document, with the project's semantics.

MQL already means what docs/spec.md §2 says for most of the language: ``{f: null}`` matches null or
missing, ``$ne``/``$nin`` match missing fields, a list field matches when an element does, paths cross
lists of documents, comparisons stay within a type family (``true`` is never ``1``, ``"5"`` never ``5``)
and strings compare by code point (binary UTF-8 order). The reference evaluator follows MongoDB's path
rules (``mastra_memory.filters.evaluate``), so most nodes are written as they are. Where they differ:

* **Root ``$not``** has no MQL form: ``NOT f`` is ``{"$nor": [f]}`` (a field-level ``$not`` is the same
  node in the AST, so it is written the same way and matches missing fields, as §2.3 says).
* **``$contains``** is not an MQL operator. On a one-segment path it is "a string containing the text"
  (``$type: "string"``, not an array, ``$regex`` of the escaped text) or "a list with an equal element"
  (``$type: "array"`` and ``$eq``); a longer path descends an object by its dotted path and a list with
  ``$elemMatch`` over its documents, exactly as the evaluator reaches values. No ``$expr`` is needed.
* **``$all``** is the ``$and`` of one ``$eq`` per value (``[]`` matches nothing), as §2.3 defines it.
* **``$regex``** is sent as a pattern with ``$options``; the portable subset (§2.5: no shorthand
  classes, inline flags or lookaround) reads the same in PCRE. Patterns with U+0000 have no BSON form.
* **Paths.** A segment made only of digits raises UnsupportedFilterError: MongoDB reads it as an array
  position, the spec as a key. A segment no stored key can equal (one with U+0000, a leading ``$`` or a
  ``.``: upserts refuse such keys) makes the condition a constant, the value it has on a missing field.
* **Integers** beyond int64 are sent as the double they equal (MongoDB compares int64 and double
  exactly); one no double equals raises UnsupportedFilterError (deviation ``int64-range``).

Range on null cannot occur: the parser rejects a null range operand (§2.4).

:func:`translate` returns a :class:`MongoFilter`. On MongoDB it is one query. On FerretDB v1
(:mod:`.capabilities` lists its gaps) the top-level conjuncts FerretDB answers exactly are sent and the
others are kept as ``residual``, which the store decides per document with the reference evaluator;
``$ne``/``$nin`` are sent as ``$nor`` of ``$eq``/``$in``, because FerretDB decides them per element of a
list of documents on the path.
:func:`atlas_prefilter` gives the part of a filter ``$vectorSearch.filter`` can take exactly, or ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Final

from bson.int64 import Int64
from mastra_memory.filters import And, Comparison, ElemMatch, Node, Not, Or, Regex, matches
from mastra_memory.filters.ast import Scalar, dotted
from mastra_memory.filters.numbers import in_int64
from mastra_memory.filters.operators import RANGE
from mastra_memory.filters.visitor import CombiningTranslator

from .capabilities import FERRETDB_CAPABILITIES, MONGODB_CAPABILITIES

__all__ = [
    "FALSE",
    "METADATA",
    "TRUE",
    "FerretDBFilterTranslator",
    "MongoFilter",
    "MongoFilterTranslator",
    "atlas_prefilter",
    "ferretdb_exact",
    "ferretdb_key",
    "from_ferretdb",
    "plain",
    "to_ferretdb",
    "translate",
]

Document = dict[str, Any]

#: The field holding a record's metadata; filter paths are relative to it.
METADATA: Final = "metadata"
#: Matches every document / no document.
TRUE: Final[Document] = {}
FALSE: Final[Document] = {"$nor": [{}]}
_POSITION: Final = re.compile(r"[0-9]+")
#: The negations FerretDB gets wrong through lists of documents -> the condition they negate.
_NEGATED: Final = {"$ne": "$eq", "$nin": "$in"}


@dataclass(frozen=True, slots=True)
class MongoFilter:
    """A translated filter: ``mql`` runs on the server; ``residual`` (when not ``None``) is decided by the
    store per document with the reference evaluator, over the documents ``mql`` selects.

    With a residual, ``mql`` selects a superset of the matches; without one it selects exactly them.
    ``node`` is the whole filter.
    """

    mql: Document
    residual: Node | None
    node: Node

    @property
    def exact_on_server(self) -> bool:
        return self.residual is None


def _is_constant(doc: Document, value: Document) -> bool:
    return doc == value


def _combined(operator: str, parts: Sequence[Document], unit: Document, absorbing: Document) -> Document:
    """``parts`` joined by ``operator``, folded: ``unit`` parts are dropped and one ``absorbing`` part is
    the answer (``TRUE`` and ``FALSE`` for ``$and``, the other way round for ``$or``)."""
    parts = [p for p in parts if not _is_constant(p, unit)]
    if any(_is_constant(p, absorbing) for p in parts):
        return dict(absorbing)
    if not parts:
        return dict(unit)
    return parts[0] if len(parts) == 1 else {operator: list(parts)}


def _all_of(parts: Sequence[Document]) -> Document:
    return _combined("$and", parts, TRUE, FALSE)


def _any_of(parts: Sequence[Document]) -> Document:
    return _combined("$or", parts, FALSE, TRUE)


def _none_of(parts: Sequence[Document]) -> Document:
    if any(_is_constant(p, TRUE) for p in parts):
        return dict(FALSE)
    parts = [p for p in parts if not _is_constant(p, FALSE)]
    return {"$nor": list(parts)} if parts else dict(TRUE)


def _regex_literal(text: str) -> str:
    """``text`` as a PCRE pattern matching it literally (every non-alphanumeric character escaped)."""
    return "".join(c if c.isascii() and c.isalnum() else ("\\" + c if c.isascii() else c) for c in text)


class MongoFilterTranslator(CombiningTranslator[Document]):
    """AST -> MQL over ``metadata`` (every operator, the reference semantics; see the module docstring).

    ``prefix`` is the field the paths are relative to (``metadata``; ``""`` inside ``$elemMatch``).
    """

    capabilities = MONGODB_CAPABILITIES
    #: ``$and``, ``$or`` and ``$nor`` of the children; ``$not`` is ``$nor`` of the one condition.
    all_of = staticmethod(_all_of)
    any_of = staticmethod(_any_of)
    none_of = staticmethod(_none_of)

    def __init__(self, prefix: str = METADATA) -> None:
        self._prefix = prefix

    # --- values and paths ---------------------------------------------------------------------

    def _value(self, node: Node, value: Scalar) -> Scalar:
        if isinstance(value, int) and not isinstance(value, bool) and not in_int64(value):
            as_float = float(value)
            if int(as_float) != value:
                self.unsupported(
                    node, f"the integer {value} is beyond int64 and no double equals it (BSON has no form)"
                )
            return as_float
        return value

    def _values(self, node: Node, values: tuple[Scalar, ...]) -> list[Scalar]:
        # Unique by value *and* kind: in Python 0 == False and 1 == True, in BSON (and the spec) not.
        unique = {(isinstance(v, bool), v): v for v in (self._value(node, v) for v in values)}
        return list(unique.values())

    def _field(self, node: Node, path: tuple[str, ...], prefix: str | None = None) -> str | None:
        """The dotted MQL field of ``path``, or ``None`` when no stored key can be on it."""
        for segment in path:
            if _POSITION.fullmatch(segment):
                self.unsupported(
                    node,
                    f"the path segment {segment!r} is a number: MongoDB reads it as an array position, "
                    "docs/spec.md §2.1 as a key",
                )
        if any("\x00" in s or s.startswith("$") or "." in s for s in path):
            return None  # upserts refuse such keys, so the path is missing in every document
        base = self._prefix if prefix is None else prefix
        return ".".join([base, *path]) if base else ".".join(path)

    def _constant(self, node: Node) -> Document:
        """The node's value on a document where its path is missing."""
        return dict(TRUE) if matches(node, {}) else dict(FALSE)

    # --- node methods -----------------------------------------------------------------------------

    def comparison(self, node: Comparison) -> Document:
        field = self._field(node, node.path)
        if field is None:
            return self._constant(node)
        op, operand = node.op, node.value
        if isinstance(operand, tuple):
            values = self._values(node, operand)
            if op == "$all":
                return _all_of([{field: {"$eq": v}} for v in values]) if values else dict(FALSE)
            return {field: {op: values}}
        value = self._value(node, operand)
        if op in ("$eq", "$ne") or op in RANGE:
            return {field: {op: value}}
        if op == "$exists":
            return {field: {"$exists": bool(value)}}
        if op == "$size":
            return {field: {"$size": value}}
        if op == "$contains":
            return self._contains(node, self._prefix, node.path, value)
        self.unsupported(node)

    def _contains(self, node: Node, prefix: str, path: tuple[str, ...], value: Scalar) -> Document:
        field = self._field(node, path[:1], prefix)
        assert field is not None  # _field of the whole path was checked first
        if len(path) > 1:
            into_object = _all_of(
                [
                    {field: {"$type": "object"}},
                    {field: {"$not": {"$type": "array"}}},
                    self._contains(node, field, path[1:], value),
                ]
            )
            into_list = {field: {"$elemMatch": self._contains(node, "", path[1:], value)}}
            return _any_of([into_object, into_list])
        in_list = _all_of([{field: {"$type": "array"}}, {field: {"$eq": value}}])
        if not isinstance(value, str):
            return in_list
        if "\x00" in value:
            return in_list  # stored strings never hold U+0000: no substring match
        in_string = _all_of(
            [
                {field: {"$type": "string"}},
                {field: {"$not": {"$type": "array"}}},
                {field: {"$regex": _regex_literal(value)}},
            ]
        )
        return _any_of([in_string, in_list])

    def regex(self, node: Regex) -> Document:
        field = self._field(node, node.path)
        if field is None:
            return self._constant(node)
        return {field: self._regex_operator(node)}

    def _regex_operator(self, node: Regex) -> Document:
        if "\x00" in node.pattern:
            self.unsupported(node, "BSON regular expressions cannot hold U+0000")
        operator: Document = {"$regex": node.pattern}
        if node.options:
            operator["$options"] = node.options
        return operator

    def elem_match(self, node: ElemMatch) -> Document:
        field = self._field(node, node.path)
        if field is None:
            return self._constant(node)
        if node.on_documents:
            inner = MongoFilterTranslator(prefix="").visit(node.condition)
            return {field: {"$elemMatch": inner}}
        return {field: {"$elemMatch": self._operators(node.condition)}}

    def _operators(self, node: Node) -> Document:
        """The operator document of a value-form ``$elemMatch`` condition (paths ``()``)."""
        if isinstance(node, Comparison) and node.op not in ("$all", "$size", "$contains"):
            if isinstance(node.value, tuple):
                return {node.op: self._values(node, node.value)}
            return {node.op: self._value(node, node.value)}
        if isinstance(node, Regex):
            return self._regex_operator(node)
        if isinstance(node, Not):
            return {"$not": self._operators(node.child)}
        if isinstance(node, ElemMatch) and not node.path:
            if node.on_documents:
                return {"$elemMatch": MongoFilterTranslator(prefix="").visit(node.condition)}
            return {"$elemMatch": self._operators(node.condition)}
        if isinstance(node, And):
            merged: Document = {}
            for child in node.children:
                part = self._operators(child)
                if merged.keys() & part.keys():
                    self.unsupported(node, "two conditions with the same operator on one list element")
                merged.update(part)
            return merged
        self.unsupported(node, "no MQL form for this condition on a list element's value")


class FerretDBFilterTranslator(MongoFilterTranslator):
    """The same MQL over FerretDB's stored form (keys escaped by :func:`ferretdb_key`), checked against
    the FerretDB manifest (see :func:`translate` for the split)."""

    capabilities = FERRETDB_CAPABILITIES

    def _field(self, node: Node, path: tuple[str, ...], prefix: str | None = None) -> str | None:
        return super()._field(node, tuple(ferretdb_key(s) for s in path), prefix)

    def comparison(self, node: Comparison) -> Document:
        # FerretDB v1 decides $ne/$nin per element of a list of documents on the path ("some element
        # differs"); docs/spec.md §2.4 negates the whole path ("no element equals"). It answers $eq/$in
        # and $nor exactly there, so NOT(eq) is sent instead: the same meaning on every path.
        sent = super().comparison(node)
        if node.op not in _NEGATED or _is_constant(sent, TRUE) or _is_constant(sent, FALSE):
            return sent
        ((field, operator),) = sent.items()
        return _none_of([{field: {_NEGATED[node.op]: operator[node.op]}}])


# --- FerretDB's stored form ----------------------------------------------------------------------------
#
# FerretDB v1 cannot store a list directly inside a list ("nested arrays are not supported"). On FerretDB
# such an inner list is stored as the one-key document {"": [...]}, and keys that are empty or start with
# "~" get a "~" prepended, so that wrapper is never a user's document. No filter path can name the key ""
# (segments are non-empty), so the wrapper is invisible to every condition FerretDB is sent: a wrapped
# list equals no scalar, is in no range, and a path through the outer list finds no field in it -- as the
# reference evaluator, which skips lists inside lists on a path.


def ferretdb_key(key: str) -> str:
    """A metadata key as FerretDB stores it (``""`` -> ``"~"``, ``"~x"`` -> ``"~~x"``, others unchanged)."""
    return "~" + key if not key or key.startswith("~") else key


def to_ferretdb(value: Any, in_list: bool = False) -> Any:
    """Metadata in FerretDB's stored form (see above)."""
    if isinstance(value, dict):
        return {ferretdb_key(k): to_ferretdb(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [to_ferretdb(v, True) for v in value]
        return {"": items} if in_list else items
    return value


def from_ferretdb(value: Any) -> Any:
    """Metadata read back from FerretDB's stored form (integers as plain ``int``, see :func:`plain`)."""
    if isinstance(value, dict):
        if list(value) == [""] and isinstance(value[""], list):
            return [from_ferretdb(v) for v in value[""]]
        return {(k[1:] if k.startswith("~") else k): from_ferretdb(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_ferretdb(v) for v in value]
    return int(value) if type(value) is Int64 else value


def plain(value: Any) -> Any:
    """Metadata as read from BSON with ``Int64`` values (pymongo's type for BSON int64) as ``int``."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return int(value) if type(value) is Int64 else value


def _conjuncts(node: Node) -> list[Node]:
    if isinstance(node, And):
        return [c for child in node.children for c in _conjuncts(child)]
    return [node]


def _tests_missing(node: Comparison) -> bool:
    """Whether the comparison's answer depends on a path being missing (null, ``$exists``)."""
    if node.op == "$exists":
        return True
    if isinstance(node.value, tuple):
        return None in node.value
    return node.value is None and node.op in ("$eq", "$ne")


def ferretdb_exact(node: Node) -> bool:
    """Whether FerretDB v1 answers the MQL of ``node`` exactly (see :mod:`.capabilities`)."""
    if isinstance(node, Comparison):
        return node.op != "$contains" and (len(node.path) == 1 or not _tests_missing(node))
    if isinstance(node, (Regex, ElemMatch)):
        return False
    if isinstance(node, Not):
        return ferretdb_exact(node.child)
    return all(ferretdb_exact(child) for child in node.children)


def translate(node: Node, dialect: str) -> MongoFilter:
    """Check ``node`` against the dialect's manifest and translate it (UnsupportedFilterError first)."""
    if dialect != "ferretdb":
        return MongoFilter(MongoFilterTranslator().translate(node), None, node)
    translator = FerretDBFilterTranslator()
    translator.check(node)
    translator.visit(node)  # the same checks as MongoDB: int64 operands, positional segments
    sent: list[Document] = []
    kept: list[Node] = []
    for part in _conjuncts(node):
        if ferretdb_exact(part):
            sent.append(translator.visit(part))
        else:
            kept.append(part)
    residual: Node | None = None
    if kept:
        residual = kept[0] if len(kept) == 1 else And(tuple(kept))
    return MongoFilter(_all_of(sent), residual, node)


# --- Atlas $vectorSearch pre-filter ------------------------------------------------------------------

_ATLAS_EQUALITY: Final = frozenset({"$eq", "$in"})


def _atlas_scalar(value: Scalar) -> bool:
    if isinstance(value, (bool, str)):
        return True
    return isinstance(value, (int, float)) and (not isinstance(value, int) or in_int64(value))


def atlas_prefilter(node: Node, fields: Collection[str]) -> Document | None:
    """``node`` as a ``$vectorSearch.filter`` on the indexed filter ``fields`` (dotted metadata paths), or
    ``None`` when it has no exact form there.

    Only conditions whose meaning Atlas shares with docs/spec.md §2 are sent: ``$eq`` and ``$in`` with
    non-null strings, numbers and booleans, ranges with numbers, and ``$and``/``$or`` of them. Negations,
    null (missing fields), string ranges and every other operator are not: the store then searches
    exactly instead, and never filters after the ANN stage.
    """
    if isinstance(node, Comparison):
        path = dotted(node.path)
        if path not in fields or any(_POSITION.fullmatch(s) for s in node.path):
            return None
        field = f"{METADATA}.{path}"
        if node.op in _ATLAS_EQUALITY:
            values = node.value if isinstance(node.value, tuple) else (node.value,)
            if not values or not all(_atlas_scalar(v) for v in values):
                return None
            return {field: {"$in": list(values)}} if node.op == "$in" else {field: {"$eq": values[0]}}
        if node.op in RANGE:
            value = node.value
            if isinstance(value, (bool, str, tuple)) or value is None or not _atlas_scalar(value):
                return None
            return {field: {node.op: value}}
        return None
    if isinstance(node, (And, Or)):
        parts = [atlas_prefilter(child, fields) for child in node.children]
        if any(p is None for p in parts):
            return None
        key = "$and" if isinstance(node, And) else "$or"
        return {key: parts}
    return None
