"""The vector domains of the conformance kit, and the helpers they share.

Each domain module holds ``<Name>Suite`` classes of async test methods; a runner module subclasses them
(``class TestFilterOperators(FilterOperatorsSuite): pass``) so an adapter project can run the kit with
``pytest --pyargs mastra_memory_conformance --target <name>``:

=================  ==============================================================
module             suites
=================  ==============================================================
``vector_basics``  ``IndexLifecycleSuite``, ``VectorBasicsSuite``
``filters``        ``FilterOperatorsSuite``
``differential``   ``DifferentialFilterSuite``
``scores``         ``ScoresSuite``
``roundtrip``      ``MetadataRoundTripSuite``, ``DeclaredDeviationsSuite``
``errors``         ``ErrorsSuite``
``concurrency``    ``ConcurrencySuite``
=================  ==============================================================

**What a target must do is read from its manifest** (docs/spec.md §2.7, §2.9, §8.4). :func:`expect` turns a
filter and the records written into one :class:`Expectation`:

* a filter the core rejects must raise exactly the core's ``FilterError``;
* a filter using an operator the manifest does not declare (native or emulated) must raise
  ``UnsupportedFilterError`` naming one of those operators;
* every other filter must return exactly the oracle's ids — records that must be absent are checked to
  be absent — where the oracle is the reference evaluator, adjusted for the deviations below.

**Declared deviations the suite knows** (docs/spec.md §2.8, §3.6) change the expectation in a documented way,
and the test annotates its outcome with the code whenever the expected ids differ from the spec's:

====================  ==================================================================================
code                  how the suite models it
====================  ==================================================================================
``exists-empty-list``  ``$exists`` treats ``[]`` as absent (Qdrant, OpenSearch)
``null-dropped``       null values are not stored: dict entries whose value is ``None`` read as missing
``nested-flattened``   nested dicts are flattened and restored on read; an empty dict is not stored
``string-list-only``   lists must hold only strings: the suite writes datasets without other lists and
                       checks that the adapter rejects them
``no-string-ranges``   ``$gt``/``$gte``/``$lt``/``$lte`` with a string (or datetime) operand raise
                       ``UnsupportedFilterError``
``nul-character-rejected``  strings and keys containing U+0000 are rejected at upsert (never generated)
``int64-range``        integers outside the signed 64-bit range are rejected at upsert; a filter integer
                       beyond it that is not exactly a float raises ``UnsupportedFilterError``
``half-precision``,    scores are compared within 1e-2 instead of 1e-4 (docs/spec.md §3.4)
``quantised``
====================  ==================================================================================

``DeclaredDeviationsSuite`` checks that each declared known deviation really occurs.

A deviation code the suite does not know cannot change an expectation by itself. An adapter that needs
one to cover fixed cases of docs/spec.md §8.2 cites them in the deviation's ``description`` as ``§8.2
#<label>``
(for example ``"... (§8.2 #26)"``); on those cases, and only there, a result other than the expected one
is reported as that deviation (with the returned ids) instead of failing.

Why one module of this size: the base classes, the expectation helpers and the deviation bookkeeping are the
one API every domain imports; keeping them together keeps that API in one place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import pytest

from mastra_memory.capabilities import AdapterCapabilities
from mastra_memory.errors import FilterError, UnsupportedFilterError, error_id
from mastra_memory.filters import And, Comparison, ElemMatch, Node, Nor, Not, Or, Regex, matches, parse, walk
from mastra_memory.filters.operators import RANGE
from mastra_memory.vector import MastraVector, QueryResult

from ..datasets import Dataset, make_vector, products, sample_metadata
from ..oracle import assert_same_ids
from ..report import Outcome

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "KNOWN_DEVIATIONS",
    "Expectation",
    "Item",
    "as_stored",
    "check_filter",
    "cited_cases",
    "crosses_list",
    "declares",
    "expect",
    "expected_error_id",
    "load",
    "product_items",
    "query_limit",
    "sample_items",
    "settle",
    "writable",
]

INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1

#: Deviation codes whose behaviour the suite models (see the module docstring).
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
_CITATION: Final = re.compile(r"§8\.2 #(\d+[ab]?)\b")


def declares(capabilities: AdapterCapabilities, code: str) -> bool:
    """Whether the manifest declares the deviation ``code``."""
    return capabilities.deviation(code) is not None


def expected_error_id(capabilities: AdapterCapabilities, operation: str, status: str) -> str:
    """``MASTRA_VECTOR_<STORE>_<OPERATION>_<STATUS>`` for this adapter (docs/spec.md §3.3)."""
    return error_id("VECTOR", capabilities.name, operation, status)


def query_limit(capabilities: AdapterCapabilities, wanted: int) -> int:
    """``wanted`` as a ``top_k``, or the manifest's ``max_top_k`` when that is smaller."""
    limit = capabilities.max_top_k
    return wanted if limit is None else min(wanted, limit)


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
    rewritten = _rewrite_exists(node) if "exists-empty-list" in codes else node
    return frozenset(
        rid for rid, meta in records.items() if matches(rewritten, as_stored(capabilities, meta, codes))
    )


def _rewrite_exists(node: Node) -> Node:
    """``$exists`` as an adapter that treats ``[]`` as absent evaluates it (``exists-empty-list``)."""
    match node:
        case Comparison(path, "$exists", present):
            empty = Comparison(path, "$size", 0)
            if present:
                return And((node, Not(empty)))
            return Or((node, empty))
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


# --- loading records ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One record to write: id, vector and metadata (as the suite means it, before :func:`writable`)."""

    id: str
    vector: list[float]
    metadata: dict[str, Any] = field(default_factory=dict)


def product_items(dataset: Dataset, dimension: int) -> list[Item]:
    """The §8.1 products of ``dataset`` with their vectors in ``dimension`` dimensions."""
    return [Item(r.id, r.vector(dimension), r.metadata) for r in products(dataset)]


def sample_items(dimension: int) -> list[Item]:
    """The §2.2 sample records r1–r5 (vectors of seeds 1–5)."""
    return [
        Item(rid, make_vector(seed, dimension), meta)
        for seed, (rid, meta) in enumerate(sorted(sample_metadata().items()), start=1)
    ]


async def settle(store: MastraVector, capabilities: AdapterCapabilities, index: str) -> None:
    """Wait until writes are visible on an eventually consistent target (a no-op elsewhere)."""
    if capabilities.eventually_consistent:
        await store.wait_for_indexing(index)


async def load(
    store: MastraVector,
    capabilities: AdapterCapabilities,
    index: str,
    items: Sequence[Item],
    dimension: int,
    metric: Literal["cosine", "euclidean", "dotproduct"] = "cosine",
) -> dict[str, dict[str, Any]]:
    """Create ``index`` and write ``items`` (as :func:`writable` makes them).

    Returns the records as the suite means them, id -> metadata: what :func:`expect` and
    :func:`check_filter` take (they apply the adapter's declared data deviations themselves).
    """
    await store.create_index(index, dimension, metric)
    if items:
        ids = await store.upsert(
            index,
            [item.vector for item in items],
            [writable(capabilities, item.metadata) for item in items],
            [item.id for item in items],
        )
        assert ids == [item.id for item in items], f"upsert returned {ids}, not the ids given in order"
    await settle(store, capabilities, index)
    return {item.id: item.metadata for item in items}


# --- the comparison --------------------------------------------------------------------------------


async def check_filter(
    store: MastraVector,
    capabilities: AdapterCapabilities,
    outcome: Outcome | None,
    index: str,
    flt: Any,
    records: Mapping[str, Mapping[str, Any]],
    *,
    query: Sequence[float] | None,
    top_k: int,
    label: str = "",
) -> str:
    """Query ``index`` with ``flt`` and hold the result to :func:`expect`; return what happened.

    ``query=None`` runs a metadata-only query. ``top_k`` must be at least the number of records, so the
    result is the whole matching set. The result is one of ``"match"``, ``"deviation"``,
    ``"filter-error"``, ``"unsupported"``. ``outcome`` (``None`` inside property tests) receives the
    annotations; ``label`` names a fixed case for deviations that cite it (:func:`cited_cases`).
    """
    assert top_k >= len(records), f"top_k {top_k} cannot return all {len(records)} records"
    expectation = expect(capabilities, flt, records)
    if expectation.kind == "filter-error":
        with pytest.raises(FilterError) as raised:
            await store.query(index, query, top_k=top_k, filter=flt)
        assert not isinstance(raised.value, UnsupportedFilterError), (
            f"filter {flt!r} is invalid, so the core must reject it with FilterError before the adapter "
            f"sees it; got {raised.value!r}"
        )
        assert str(raised.value) == expectation.message, (
            f"filter {flt!r}: expected FilterError {expectation.message!r}, got {str(raised.value)!r}"
        )
        return "filter-error"
    if expectation.kind == "unsupported":
        with pytest.raises(UnsupportedFilterError) as unsupported:
            await store.query(index, query, top_k=top_k, filter=flt)
        error = unsupported.value
        assert error.operator in expectation.operators, (
            f"filter {flt!r}: UnsupportedFilterError names {error.operator}, expected one of "
            f"{sorted(expectation.operators)}"
        )
        assert error.adapter == capabilities.name, f"UnsupportedFilterError names adapter {error.adapter!r}"
        if outcome is not None:
            if expectation.deviations:
                outcome.deviation(expectation.deviations[0], f"{flt!r}: {error}")
            else:
                outcome.unsupported(error.operator, f"{flt!r}: {error}")
        return "unsupported"
    try:
        hits = await store.query(index, query, top_k=top_k, filter=flt)
    except UnsupportedFilterError as exc:
        if not expectation.traversal:
            raise AssertionError(
                f"filter {flt!r} uses only declared operators, but {capabilities.name} raised {exc}"
            ) from exc
        if outcome is not None:
            outcome.unsupported("implicit_array_traversal", f"{flt!r}: {exc}")
        return "unsupported"
    returned = [hit.id for hit in hits]
    _check_hits(hits, records, flt)
    cited = cited_cases(capabilities).get(label) if label else None
    if cited is not None and set(returned) != expectation.ids:
        if outcome is not None:
            outcome.deviation(cited, f"case {label}: returned {sorted(returned)}")
        return "deviation"
    notes = []
    if expectation.deviations:
        notes.append(f"declared deviations {', '.join(expectation.deviations)} applied")
    if expectation.traversal:
        notes.append(
            "the filter crosses a list mid-path: without implicit_array_traversal the adapter must raise "
            "UnsupportedFilterError or match exactly"
        )
    note = "; ".join(notes)
    assert_same_ids(returned, expectation.ids, filter=flt, target=capabilities.name, note=note)
    if expectation.deviations:
        if outcome is not None:
            for code in expectation.deviations:
                outcome.deviation(
                    code, f"{flt!r}: {sorted(expectation.ids)} instead of {sorted(expectation.spec_ids)}"
                )
        return "deviation"
    return "match"


def _check_hits(hits: Sequence[QueryResult], records: Mapping[str, Mapping[str, Any]], flt: Any) -> None:
    ids = [hit.id for hit in hits]
    assert len(ids) == len(set(ids)), f"filter {flt!r}: a query returned duplicate ids: {ids}"
    unknown = sorted(set(ids) - set(records))
    assert not unknown, f"filter {flt!r}: a query returned ids that are not in the index: {unknown}"
