"""Differential filters (docs/spec.md §2.7.5, §8.4): the adapter's hits must equal the reference evaluator's.

``DifferentialFilterSuite`` lets hypothesis build batches of filters from the operators the manifest
declares (see :mod:`._generators`) and compares every filter — and its root ``$not`` negation, when
``$not`` is declared, so a translation that leaks SQL NULL or drops records from both sides is caught —
with :func:`~mastra_memory_conformance.suite.expect`, twice over:

* random record sets of hostile metadata (quotes, backslashes, SQL, ``$`` in names, unicode, JSON
  fragments, a 200-character key, lists of documents sharing keys), written fresh for each example, with
  filters drawn knowing them (paths and values the records have, besides random ones);
* the products of D9, with filters in their own words (docs/spec.md §8.4's seeded generator).

The examples come from the run's seed (:mod:`..seeding`), a new one per commit under CI; what a random run
once failed on is kept in :data:`FOUND_CASES` and replayed on every target.

``top_k`` covers every record, so each query returns the whole matching set; on targets with a
metadata-only query every other comparison of the random records uses it. Filters that cross a list in
the middle of a path are compared only on targets declaring ``implicit_array_traversal``.

Counts: a batch holds 6–10 filters, so with ``$not`` declared an example makes 12–20 comparisons and
the ``ci`` profile (100 examples) at least 1,200 per target and test (about 1,500 on SQLite). Each test
records its total in ``user_properties`` as ``differential_comparisons`` (and hypothesis statistics show
the per-example count). A fixed sweep of every hostile key and value adds about 1,500 more.

The last test proves the comparison would catch a store that ignores filters, drops a conjunct or
treats ``$not`` as the identity (docs/spec.md §2.7.3, §7 first trap).
"""

from __future__ import annotations

import copy
import itertools
from typing import Any, Final

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from mastra_memory.capabilities import AdapterCapabilities
from mastra_memory.filters import evaluate

from ..datasets import make_vector, query_vector
from ..oracle import assert_same_ids
from ..plugin import set_item
from . import IndexUnderTest, Item, VectorSuiteBase, expect, product_items
from ._generators import HOSTILE, KEYS, PRODUCTS, STRINGS, Features, filters, metadata

__all__ = ["DifferentialFilterSuite"]

#: Records per example (every query's ``top_k`` covers them all).
MAX_RECORDS: Final = 8
MIN_RECORDS: Final = 3
MIN_FILTERS: Final = 6
MAX_FILTERS: Final = 10
_COUNT: Final = "differential_comparisons"
_ids = itertools.count()
_WRITTEN = pytest.StashKey[list[str]]()

#: (records, filters) a random run of this domain once failed on, as hypothesis printed them (``Draw 1
#: (records)``, ``Draw 2 (filters)``): each failure found at random is replayed here on every target from
#: then on (docs/conformance.md, "When a random test fails").
FOUND_CASES: Final[tuple[tuple[tuple[dict[str, Any], ...], tuple[dict[str, Any], ...]], ...]] = (
    # Issue 23: FerretDB decided $ne/$nin per element of a list of documents ("some element differs").
    (
        ({}, {"a": 1}, {"b": [{"a": None}, {"a": 3}]}),
        ({"b.a": {"$ne": 3}}, {"b.a": {"$nin": [3]}}, {"b.a": {"$not": {"$ne": 3}}}),
    ),
    (
        (
            {
                "a": None,
                "it'em": {"a": None},
                "😀": [{"a": None}, {"it'em": None, "😀": [{"😀": None}, {"it'em": True}]}],
            },
            {"a": [{"a": None}, {"a": [{"😀": None}, {"😀": True, "a": None}]}], "it'em": []},
            {"a": [{"a": 1}, {"a": 1.0}]},
        ),
        ({"😀.😀.it'em": {"$ne": True}}, {"a.a.😀": {"$nin": [True]}}, {"a.a": {"$ne": 1}}),
    ),
)


def _record_count(request: pytest.FixtureRequest, added: int) -> int:
    """Add ``added`` to the test's ``differential_comparisons`` user property; return the total."""
    props = request.node.user_properties
    total = added + sum(v for k, v in props if k == _COUNT and isinstance(v, int))
    props[:] = [(k, v) for k, v in props if k != _COUNT]
    props.append((_COUNT, total))
    return total


def _declared_features(capabilities: AdapterCapabilities) -> Features:
    """What the manifest declares, for the generators; a target that declares no operator fails."""
    features = Features.of(capabilities)
    if not features.operators:
        raise AssertionError(f"{capabilities.name} declares no filter operator; nothing to compare")
    return features


def _with_negation(features: Features, flt: dict[str, Any]) -> list[dict[str, Any]]:
    """``flt``, and its root ``$not`` negation when ``$not`` is declared."""
    return [flt, {"$not": flt}] if features.has("$not") else [flt]


def _comparable(
    capabilities: AdapterCapabilities, flt: dict[str, Any], records: dict[str, dict[str, Any]]
) -> bool:
    """Filters a target must answer exactly: all of them, except mid-path list crossings without
    ``implicit_array_traversal`` (a feature the target does not declare)."""
    if capabilities.implicit_array_traversal:
        return True
    expectation = expect(capabilities, flt, records)
    return not expectation.traversal


@pytest.mark.asyncio
class DifferentialFilterSuite(VectorSuiteBase):
    """Random filters over random records, compared with the reference evaluator."""

    @given(data=st.data())
    async def test_random_filters_match_the_reference_evaluator(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest, data: st.DataObject
    ) -> None:
        set_item(request, "random filters")
        features = _declared_features(idx.capabilities)
        limit = idx.limit(MAX_RECORDS)
        metadatas = data.draw(
            st.lists(metadata(features), min_size=min(MIN_RECORDS, limit), max_size=limit), label="records"
        )
        # Filters are drawn knowing the records' paths, so that they also reach into lists of documents.
        flts = data.draw(
            st.lists(
                filters(features, HOSTILE.meeting(metadatas)), min_size=MIN_FILTERS, max_size=MAX_FILTERS
            ),
            label="filters",
        )
        # Fresh ids per example: a stale record from an earlier example would show up as an extra id.
        batch = next(_ids)
        items = [
            Item(f"e{batch}-{i}", make_vector(i + 1, idx.dimension), meta) for i, meta in enumerate(metadatas)
        ]
        # One index for every example (creating indexes is slow on some services): the previous example's
        # records are deleted, and must not come back.
        previous = request.node.stash.get(_WRITTEN, [])
        if previous:
            await idx.store.delete_vectors(idx.name, ids=previous)
        request.node.stash[_WRITTEN] = [item.id for item in items]
        records = await idx.load(items)
        query = query_vector(idx.dimension)
        compared = 0
        for position, flt in enumerate(flts):
            for variant in _with_negation(features, flt):
                if not _comparable(idx.capabilities, variant, records):
                    continue
                metadata_only = idx.capabilities.metadata_only_query and (position + compared) % 2 == 1
                await idx.check(None, variant, records, query=None if metadata_only else query, top_k=limit)
                compared += 1
        event("comparisons per example", compared)
        _record_count(request, compared)
        # Nothing in a field name or value ran as a statement: the index and every record are intact.
        assert (await idx.store.describe_index(idx.name)).count == len(items)
        assert idx.native_name in await idx.store.list_indexes()

    @given(data=st.data())
    async def test_random_filters_over_d9(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest, data: st.DataObject
    ) -> None:
        """§8.4: random filters in the products' own words (keys, values, patterns) over D9."""
        set_item(request, "random filters over D9")
        features = _declared_features(idx.capabilities)
        items = product_items("D9", idx.dimension)
        records = {item.id: item.metadata for item in items}
        if not request.node.stash.get(_WRITTEN, []):
            await idx.load(items)
            request.node.stash[_WRITTEN] = [item.id for item in items]
        flts = data.draw(
            st.lists(filters(features, PRODUCTS), min_size=MIN_FILTERS, max_size=MAX_FILTERS), label="filters"
        )
        query = query_vector(idx.dimension)
        top_k = idx.limit(len(items))
        compared = 0
        for flt in flts:
            for variant in _with_negation(features, flt):
                if _comparable(idx.capabilities, variant, records):
                    await idx.check(None, variant, records, query=query, top_k=top_k)
                    compared += 1
        event("comparisons per example", compared)
        _record_count(request, compared)
        assert (await idx.store.describe_index(idx.name)).count == len(items)

    @pytest.mark.parametrize("case", range(len(FOUND_CASES)), ids=lambda i: f"found-{i}")
    async def test_cases_random_runs_found(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest, case: int
    ) -> None:
        """Every record set and filter a random run once failed on (:data:`FOUND_CASES`), on every target."""
        set_item(request, "random filters")
        metadatas, flts = FOUND_CASES[case]
        limit = idx.limit(len(metadatas))
        items = [
            Item(f"f{case}-{i}", make_vector(i + 1, idx.dimension), copy.deepcopy(meta))
            for i, meta in enumerate(metadatas[:limit])
        ]
        records = await idx.load(items)
        query = query_vector(idx.dimension)
        features = Features.of(idx.capabilities)
        for flt in flts:
            for variant in _with_negation(features, flt):
                if _comparable(idx.capabilities, variant, records):
                    await idx.check(None, variant, records, query=query, top_k=limit)

    async def test_hostile_names_and_values_are_data(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest
    ) -> None:
        """Every hostile key with hostile values, written and filtered on: equality, ranges, regex,
        ``$exists`` — each compared with the reference evaluator (docs/spec.md §2.1: names are bound, never
        spliced).
        """
        set_item(request, "hostile names and values")
        features = Features.of(idx.capabilities)
        limit = idx.limit(12)
        # Every key in every record but the last (which has none), each with a different value.
        items = [
            Item(
                f"h{i}",
                make_vector(i + 1, idx.dimension),
                {key: STRINGS[(7 * i + k) % len(STRINGS)] for k, key in enumerate(KEYS)}
                if i < limit - 1
                else {},
            )
            for i in range(limit)
        ]
        records = await idx.load(items)
        query = query_vector(idx.dimension)
        flts: list[dict[str, Any]] = []
        for key in KEYS:
            for value in STRINGS:
                if features.has("$eq"):
                    flts.append({key: value})
                if features.has("$ne"):
                    flts.append({key: {"$ne": value}})
                if features.has("$gte") and features.string_ranges:
                    flts.append({key: {"$gte": value}})
            if features.has("$regex"):
                flts.append({key: {"$regex": "'; DROP"}})
            if features.has("$exists"):
                flts.append({key: {"$exists": True}})
        compared = 0
        for flt in flts:
            await idx.check(None, flt, records, query=query, top_k=limit)
            compared += 1
        _record_count(request, compared)
        assert compared == len(flts) > 0
        assert (await idx.store.describe_index(idx.name)).count == len(items)
        assert idx.native_name in await idx.store.list_indexes()

    async def test_the_comparison_catches_ignored_filters(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest
    ) -> None:
        """§7 first trap: results of a store that ignores the filter, drops a conjunct, or treats ``$not``
        as the identity are rejected by the comparison every filter test uses."""
        set_item(request, "silent drops are caught")
        records = await idx.load_products()
        query = query_vector(idx.dimension)
        top_k = idx.limit(10)

        async def ids_of(flt: dict[str, Any] | None) -> list[str]:
            return [h.id for h in await idx.store.query(idx.name, query, top_k=top_k, filter=flt)]

        def oracle(flt: dict[str, Any]) -> set[str]:
            return {rid for rid, meta in records.items() if evaluate(flt, meta)}

        home = {"category": "home"}
        both = {"category": "home", "price": {"$lt": 100}}
        negated = {"$not": {"category": "home"}}
        silent_drops: list[tuple[dict[str, Any], dict[str, Any] | None, str]] = [
            (home, None, "a store that ignores the filter"),
            (both, home, "a store that drops a conjunct"),
            (negated, home, "a store that treats $not as the identity"),
        ]
        for flt, what_it_runs, what in silent_drops:
            returned = await ids_of(what_it_runs)
            expected = oracle(flt)
            with pytest.raises(AssertionError) as caught:
                assert_same_ids(returned, expected, filter=flt, target=idx.capabilities.name)
            message = str(caught.value)
            for shown in (repr(flt), str(sorted(expected)), str(sorted(returned))):
                assert shown in message, f"{what}: the failure must show {shown}: {message}"
        # And the adapter itself, on the filters it declares, is not such a store.
        for flt, _, _ in silent_drops:
            await idx.check(None, flt, records, query=query, top_k=top_k)
