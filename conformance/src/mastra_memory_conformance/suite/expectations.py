"""What a target must do with a filter, read from its manifest (docs/spec.md §2.7, §2.9, §8.4).

:func:`expect` turns a filter and the records written into one :class:`Expectation`; :func:`writable` and
:func:`as_stored` say what the suite writes and what an adapter holds after the deviations it declares
(the table of known deviations is in :mod:`mastra_memory_conformance.suite`). :func:`cited_cases` reads the
fixed cases a deviation the suite does not know cites.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from mastra_memory.capabilities import AdapterCapabilities
from mastra_memory.errors import FilterError, error_id
from mastra_memory.filters import And, Comparison, ElemMatch, Node, Nor, Not, Or, Regex, matches, parse, walk
from mastra_memory.filters.numbers import INT64_MAX, INT64_MIN
from mastra_memory.filters.operators import RANGE

__all__ = [
    "EXACT_TOLERANCE",
    "INT64_MAX",
    "INT64_MIN",
    "KNOWN_DEVIATIONS",
    "LOW_PRECISION_TOLERANCE",
    "Expectation",
    "as_stored",
    "cited_cases",
    "crosses_list",
    "declares",
    "expect",
    "expected_error_id",
    "score_tolerance",
    "writable",
]


#: Deviation codes whose behaviour the suite models (the table in :mod:`mastra_memory_conformance.suite`).
KNOWN_DEVIATIONS: Final = frozenset(
    {
        "exists-empty-list",
        "null-dropped",
        "nested-flattened",
        "string-list-only",
        "no-string-ranges",
        "nul-character-rejected",
        "int64-range",
        "half-precision",
        "quantised",
    }
)
#: Score tolerances (docs/spec.md §3.4): exact, and for ``half-precision`` or ``quantised`` adapters.
EXACT_TOLERANCE: Final = 1e-4
LOW_PRECISION_TOLERANCE: Final = 1e-2
_CITATION: Final = re.compile(r"§8\.2 #(\d+[ab]?)\b")


def declares(capabilities: AdapterCapabilities, code: str) -> bool:
    """Whether the manifest declares the deviation ``code``."""
    return capabilities.deviation(code) is not None


def score_tolerance(capabilities: AdapterCapabilities) -> float:
    """How close a score must be to the exact one (docs/spec.md §3.4): 1e-4, or 1e-2 when the adapter
    declares ``half-precision`` or ``quantised``."""
    low = declares(capabilities, "half-precision") or declares(capabilities, "quantised")
    return LOW_PRECISION_TOLERANCE if low else EXACT_TOLERANCE


def expected_error_id(capabilities: AdapterCapabilities, operation: str, status: str) -> str:
    """``MASTRA_VECTOR_<STORE>_<OPERATION>_<STATUS>`` for this adapter (docs/spec.md §3.3)."""
    return error_id("VECTOR", capabilities.name, operation, status)


# --- records: what the suite writes and what the adapter holds ------------------------------------


def writable(capabilities: AdapterCapabilities, metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata the suite writes: without non-string lists when ``string-list-only`` is declared."""
    if not declares(capabilities, "string-list-only"):
        return dict(metadata)
    return _without_non_string_lists(metadata)


def _without_non_string_lists(metadata: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        if isinstance(value, list):
            if all(isinstance(v, str) for v in value):
                out[key] = list(value)
        elif isinstance(value, Mapping):
            out[key] = _without_non_string_lists(value)
        else:
            out[key] = value
    return out


def as_stored(
    capabilities: AdapterCapabilities, metadata: Mapping[str, Any], codes: Iterable[str] | None = None
) -> dict[str, Any]:
    """The metadata an adapter holds (and returns) after writing ``metadata``, per its deviations.

    ``codes`` restricts the data deviations applied (default: every declared one).
    """
    wanted = set(codes) if codes is not None else {d.code for d in capabilities.deviations}
    out: dict[str, Any] = dict(metadata)
    if "string-list-only" in wanted and declares(capabilities, "string-list-only"):
        out = _without_non_string_lists(out)
    if "null-dropped" in wanted and declares(capabilities, "null-dropped"):
        out = _without_nulls(out)
    if "nested-flattened" in wanted and declares(capabilities, "nested-flattened"):
        out = _without_empty_dicts(out)
    return out


def _without_nulls(metadata: Mapping[str, Any]) -> dict[str, Any]:
    return {
        k: _without_nulls(v) if isinstance(v, Mapping) else v for k, v in metadata.items() if v is not None
    }


def _without_empty_dicts(metadata: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        if isinstance(value, Mapping):
            value = _without_empty_dicts(value)
            if not value:
                continue
        out[key] = value
    return out


# --- expectations ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expectation:
    """What a target must do with one filter over one record set.

    ``kind``: ``"match"`` (return exactly ``ids``), ``"filter-error"`` (raise the core's ``FilterError``
    with ``message``) or ``"unsupported"`` (raise ``UnsupportedFilterError`` naming one of ``operators``).
    ``deviations`` are the declared codes that make the expectation differ from the spec's result;
    ``traversal`` is set when the filter crosses a list in the middle of a path on a target without
    ``implicit_array_traversal`` — it may then raise ``UnsupportedFilterError`` instead.
    """

    kind: Literal["match", "filter-error", "unsupported"]
    ids: frozenset[str] = frozenset()
    spec_ids: frozenset[str] = frozenset()
    operators: frozenset[str] = frozenset()
    deviations: tuple[str, ...] = ()
    message: str = ""
    traversal: bool = False


def expect(
    capabilities: AdapterCapabilities, flt: Any, records: Mapping[str, Mapping[str, Any]]
) -> Expectation:
    """The expectation for ``flt`` on a target with ``capabilities`` holding ``records`` (id -> metadata).

    ``records`` are the metadata as the suite means them, before :func:`writable`; the declared data
    deviations are applied here (:func:`as_stored`), and ``spec_ids`` are the ids the spec expects.
    """
    try:
        node = parse(flt)
    except FilterError as exc:
        return Expectation("filter-error", message=str(exc))
    if node is None:
        ids = frozenset(records)
        return Expectation("match", ids=ids, spec_ids=ids)
    used = {n.operator for n in walk(node)}
    undeclared = frozenset(used - capabilities.supported_operators)
    if undeclared:
        return Expectation("unsupported", operators=undeclared)
    raising = next(iter(_filter_deviations(capabilities, node)), None)
    if raising is not None:
        code, operators = raising
        return Expectation("unsupported", operators=operators, deviations=(code,))
    spec_ids = frozenset(rid for rid, meta in records.items() if matches(node, meta))
    declared = {d.code for d in capabilities.deviations} & KNOWN_DEVIATIONS
    ids = _ids_under(capabilities, node, records, declared)
    codes: tuple[str, ...] = ()
    if ids != spec_ids:
        codes = tuple(
            sorted(c for c in declared if _ids_under(capabilities, node, records, {c}) != spec_ids)
        ) or tuple(sorted(declared))
    traversal = not capabilities.implicit_array_traversal and any(
        crosses_list(node, meta) for meta in records.values()
    )
    return Expectation("match", ids=ids, spec_ids=spec_ids, deviations=codes, traversal=traversal)


def _filter_deviations(capabilities: AdapterCapabilities, node: Node) -> Iterable[tuple[str, frozenset[str]]]:
    """Declared deviations under which this filter must raise ``UnsupportedFilterError``."""
    for current in walk(node):
        if not isinstance(current, Comparison):
            continue
        if (
            declares(capabilities, "no-string-ranges")
            and current.op in RANGE
            and isinstance(current.value, str)
        ):
            yield "no-string-ranges", frozenset({current.op})
        if declares(capabilities, "int64-range"):
            values = current.value if isinstance(current.value, tuple) else (current.value,)
            if any(_beyond_int64(v) for v in values):
                yield "int64-range", frozenset({current.op})


def _beyond_int64(value: Any) -> bool:
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and not INT64_MIN <= value <= INT64_MAX
        and float(value) != value
    )


def _ids_under(
    capabilities: AdapterCapabilities,
    node: Node,
    records: Mapping[str, Mapping[str, Any]],
    codes: set[str],
) -> frozenset[str]:
    if "exists-empty-list" not in codes:
        return frozenset(
            rid for rid, meta in records.items() if matches(node, as_stored(capabilities, meta, codes))
        )
    rewritten = _rewrite_exists(node)
    return frozenset(
        rid
        for rid, meta in records.items()
        if matches(rewritten, _with_shadow(as_stored(capabilities, meta, codes)))
    )


#: A key no filter path can name (it holds a dot, the path separator): under ``exists-empty-list`` each
#: document carries, beside its own keys, a copy of itself without empty lists, where ``$exists`` looks.
_SHADOW: Final = "\x00.without-empty-lists"


def _rewrite_exists(node: Node) -> Node:
    """``$exists`` as an adapter that treats ``[]`` as absent evaluates it (``exists-empty-list``).

    The test is per reached value, as the words say: ``{"a.b": {"$exists": false}}`` over
    ``a = [{b: null}, {b: []}]`` does not match, since one ``b`` is there and not empty. So ``$exists``
    reads the document's shadow copy (:func:`_with_shadow`), where every ``[]`` is absent, and every other
    operator the document as stored.
    """
    match node:
        case Comparison(path, "$exists", present):
            return Comparison((_SHADOW, *path), "$exists", present)
        case And(children):
            return And(tuple(_rewrite_exists(c) for c in children))
        case Or(children):
            return Or(tuple(_rewrite_exists(c) for c in children))
        case Nor(children):
            return Nor(tuple(_rewrite_exists(c) for c in children))
        case Not(child):
            return Not(_rewrite_exists(child))
        case ElemMatch(path, condition):
            return ElemMatch(path, _rewrite_exists(condition))
    return node


def _with_shadow(value: Any) -> Any:
    """``value`` with :data:`_SHADOW` added to every document in it (elements of lists too, for
    ``$elemMatch``); the shadow is the document without its empty lists, at any depth."""
    if isinstance(value, list):
        return [_with_shadow(element) for element in value]
    if not isinstance(value, Mapping):
        return value
    out = {key: _with_shadow(inner) for key, inner in value.items()}
    out[_SHADOW] = _without_empty_lists(value)
    return out


def _without_empty_lists(value: Any) -> Any:
    if isinstance(value, list):
        return [_without_empty_lists(element) for element in value]
    if not isinstance(value, Mapping):
        return value
    return {key: _without_empty_lists(inner) for key, inner in value.items() if inner != []}


def crosses_list(node: Node, document: Any) -> bool:
    """Whether a path of ``node`` meets a list before its last segment in ``document``.

    Such a filter relies on implicit array traversal (docs/spec.md §2.4); ``$elemMatch`` crosses its list
    explicitly, so only the paths inside its condition are checked, against each object element.
    """
    match node:
        case Comparison(path) | Regex(path):
            return _path_crosses(document, path)
        case ElemMatch(path, condition):
            if _path_crosses(document, path):
                return True
            return any(
                crosses_list(condition, element)
                for value in _reached(document, path)
                if isinstance(value, list)
                for element in value
                if isinstance(element, Mapping)
            )
        case And(children) | Or(children) | Nor(children):
            return any(crosses_list(c, document) for c in children)
        case Not(child):
            return crosses_list(child, document)
    return False  # pragma: no cover - every node type is matched above


def _path_crosses(document: Any, path: tuple[str, ...]) -> bool:
    current = document
    for depth, key in enumerate(path):
        if not isinstance(current, Mapping) or key not in current:
            return False
        current = current[key]
        if depth < len(path) - 1 and isinstance(current, list):
            return True
    return False


def _reached(document: Any, path: tuple[str, ...]) -> list[Any]:
    current = document
    for key in path:
        if not isinstance(current, Mapping) or key not in current:
            return []
        current = current[key]
    return [current]


def cited_cases(capabilities: AdapterCapabilities) -> dict[str, str]:
    """Fixed-case labels cited (``§8.2 #<label>``) by deviations the suite does not know -> their code."""
    cited: dict[str, str] = {}
    for deviation in capabilities.deviations:
        if deviation.code in KNOWN_DEVIATIONS:
            continue
        for label in _CITATION.findall(deviation.description):
            cited.setdefault(label, deviation.code)
    return cited
