"""What the domains share: the records a vector domain writes, how it loads them, the one comparison of a
filter's result with :func:`~.expectations.expect`, the ``idx`` fixture of :class:`VectorSuiteBase`, small
helpers of the tests (:func:`by_label`, :func:`float32_close`, :func:`ill_typed`) and the storage a
``Memory`` test runs on (:func:`target_storage`).

A vector suite class derives from :class:`VectorSuiteBase`; its tests take ``idx``, an
:class:`IndexUnderTest`: the target's vector store, its manifest, the test's own index name (deleted after
the test by the ``index_name`` fixture) and the dimension to use on this target.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, NotRequired, TypedDict, Unpack

import pytest

from mastra_memory.capabilities import AdapterCapabilities, Metric
from mastra_memory.errors import FilterError, UnsupportedFilterError
from mastra_memory.plugins import create_storage
from mastra_memory.storage import MemoryStorage
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.vector import MastraVector, QueryResult

from ..datasets import Dataset, make_vector, products, sample_metadata
from ..oracle import assert_same_ids
from ..report import Outcome
from ..targets import ConformanceTarget, TargetSettings
from .expectations import cited_cases, expect, writable

__all__ = [
    "METRICS",
    "CheckOptions",
    "IndexUnderTest",
    "Item",
    "VectorSuiteBase",
    "by_label",
    "check_filter",
    "float32_close",
    "ill_typed",
    "load",
    "product_items",
    "query_limit",
    "sample_items",
    "settle",
    "target_storage",
]

#: float32 storage is acceptable (docs/spec.md §3.2): relative error of one float32 rounding, plus a floor.
FLOAT32_RTOL: Final = 2e-7
FLOAT32_ATOL: Final = 1e-7
#: Every metric a manifest can declare (``AdapterCapabilities.metrics``).
METRICS: Final[tuple[Metric, ...]] = ("cosine", "euclidean", "dotproduct")


def by_label(cases: Iterable[Any]) -> list[Any]:
    """``cases`` as pytest parameters, each named by its ``label`` with dashes for spaces."""
    return [pytest.param(case, id=case.label.replace(" ", "-")) for case in cases]


def float32_close(stored: Sequence[float] | None, written: Sequence[float]) -> bool:
    """Whether a vector read back is the one written, within float32 precision (docs/spec.md §3.2)."""
    return (
        stored is not None
        and len(stored) == len(written)
        and all(
            math.isclose(s, w, rel_tol=FLOAT32_RTOL, abs_tol=FLOAT32_ATOL)
            for s, w in zip(stored, written, strict=True)
        )
    )


def ill_typed(value: object) -> Any:
    """A deliberately ill-typed argument (the validation under test is what rejects it)."""
    return value


def query_limit(capabilities: AdapterCapabilities, wanted: int) -> int:
    """``wanted`` as a ``top_k``, or the manifest's ``max_top_k`` when that is smaller."""
    limit = capabilities.max_top_k
    return wanted if limit is None else min(wanted, limit)


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
    metric: Metric = "cosine",
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


class CheckOptions(TypedDict):
    """The query of a filter check (:func:`check_filter`, :meth:`IndexUnderTest.check`)."""

    query: Sequence[float] | None
    top_k: int
    label: NotRequired[str]


async def check_filter(
    store: MastraVector,
    capabilities: AdapterCapabilities,
    outcome: Outcome | None,
    index: str,
    flt: Any,
    records: Mapping[str, Mapping[str, Any]],
    **options: Unpack[CheckOptions],
) -> str:
    """Query ``index`` with ``flt`` and hold the result to :func:`expect`; return what happened.

    ``query=None`` runs a metadata-only query. ``top_k`` must be at least the number of records, so the
    result is the whole matching set. The result is one of ``"match"``, ``"deviation"``,
    ``"filter-error"``, ``"unsupported"``. ``outcome`` (``None`` inside property tests) receives the
    annotations; ``label`` names a fixed case for deviations that cite it (:func:`cited_cases`).
    """
    query, top_k, label = options["query"], options["top_k"], options.get("label", "")
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


# --- the index of one test -------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexUnderTest:
    """One test's index on the target: what the ``idx`` fixture of :class:`VectorSuiteBase` gives.

    ``store`` is the target's fresh vector store, ``capabilities`` its manifest, ``name`` the test's own
    portable index name (the ``index_name`` fixture deletes the index afterwards) and ``dimension`` the
    vector dimension to use on this target. The methods are the module's functions on this index.
    """

    store: MastraVector
    capabilities: AdapterCapabilities
    name: str
    dimension: int

    @property
    def native_name(self) -> str:
        """The index's name as the store lists it (``to_native_index_name``)."""
        return self.store.to_native_index_name(self.name)

    def limit(self, wanted: int) -> int:
        """``wanted`` as a ``top_k`` this target accepts (:func:`query_limit`)."""
        return query_limit(self.capabilities, wanted)

    async def settle(self) -> None:
        """Wait until writes are visible (:func:`settle`)."""
        await settle(self.store, self.capabilities, self.name)

    async def load(
        self, items: Sequence[Item], metric: Metric = "cosine", *, dimension: int | None = None
    ) -> dict[str, dict[str, Any]]:
        """Create the index and write ``items`` (:func:`load`); ``dimension`` defaults to the target's."""
        size = self.dimension if dimension is None else dimension
        return await load(self.store, self.capabilities, self.name, items, size, metric)

    async def load_products(self, dataset: Dataset = "D9") -> dict[str, dict[str, Any]]:
        """Create the index and write the §8.1 products of ``dataset`` (:func:`product_items`)."""
        return await self.load(product_items(dataset, self.dimension))

    async def check(
        self,
        outcome: Outcome | None,
        flt: Any,
        records: Mapping[str, Mapping[str, Any]],
        **options: Unpack[CheckOptions],
    ) -> str:
        """Query the index with ``flt`` and hold the result to the expectation (:func:`check_filter`)."""
        return await check_filter(self.store, self.capabilities, outcome, self.name, flt, records, **options)


class VectorSuiteBase:
    """The base of every vector suite class: its tests take ``idx`` (an :class:`IndexUnderTest`)."""

    @pytest.fixture
    def idx(
        self,
        vector_store: MastraVector,
        capabilities: AdapterCapabilities,
        index_name: str,
        conformance_dimension: int,
    ) -> IndexUnderTest:
        """The test's index on the target (the index itself is created by the test)."""
        return IndexUnderTest(vector_store, capabilities, index_name, conformance_dimension)


# --- the storage of a Memory test ------------------------------------------------------------------


def target_storage(target: ConformanceTarget, settings: TargetSettings, path: Path) -> MemoryStorage:
    """The storage a ``Memory`` test runs on: the target's ``MemoryStorage``, or, when the target has none,
    the embedded SQLite storage in the file ``path``. Not initialised (``Memory`` initialises it)."""
    if target.has_storage and settings.storage is not None:
        return create_storage(target.adapter, **settings.storage)
    return SQLiteStorage(str(path))
