"""Differential test of the SQLite filter translator against the reference evaluator (docs/spec.md §2.7.5).

Random metadata and random filters over every operator, with hostile field names and values; the ids a
real SQLiteVector returns must EQUAL the evaluator's matches — what is left out matters as much as what
is found. Each filter is also checked negated under a root ``$not``: a fragment that evaluated to SQL
NULL anywhere would drop the row from both, so the pair proves the SQL never leaks three-valued logic.

The last tests break the translator on purpose ($ne that excludes missing fields) and show that this
check catches it, with a message naming the filter, the expected ids and the returned ids.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from mastra_memory.filters.ast import And, Comparison
from mastra_memory.filters.evaluate import evaluate
from mastra_memory.stores.sqlite.store import SQLiteVector
from mastra_memory.stores.sqlite.translate import SqlFragment, SQLiteFilterTranslator

INDEX = "diff"
DIMENSION = 2

# Field names a translator must bind or quote: quotes, backslashes, SQL, JSON-path syntax, unicode,
# a JSON fragment, a 200-character name, a newline. "dot.ted" is a metadata key that a filter can only
# address as the path ("dot", "ted"), which must not find it.
KEYS = (
    "a",
    "b",
    "tags",
    "it'em",
    'qu"ote',
    "back\\slash",
    "'; DROP TABLE x; --",
    "d$ollar",
    "br[ack]et",
    "st*ar",
    "é",
    "😀",
    "שלום",
    '{"a":1}',
    "k" * 200,
    'q"[x',
    "new\nline",
    "dot.ted",
    "dot",
    "ted",
)
FILTER_SEGMENTS = tuple(k for k in KEYS if "." not in k)
STRINGS = (
    "",
    "a",
    "b",
    "A",
    "ab",
    "ba",
    "apple",
    "Ab",
    "'; DROP TABLE x; --",
    '{"a":1}',
    "é",
    "😀",
    "שלום",
    'a"b',
    "back\\slash",
    "[",
    "]",
    "*",
    "$x",
    "line\nbreak",
    "2024-01-01T00:00:00.000Z",
    "2024-06-01T12:30:00.000Z",
)
NUMBERS = (-2, -1, 0, 1, 2, 3, 0.5, -1.5, 2.0, 1e300, 2**53 - 1)
PATTERNS = (
    "a",
    "^a",
    "b$",
    "a|b",
    "[a-c]",
    "[^a]",
    "^$",
    ".",
    "A",
    "\\\\",
    '"',
    "'",
    "é",
    "(ab)+",
    "^.*e$",
    "\\[",
)

scalars = st.one_of(
    st.sampled_from((None, True, False)),
    st.sampled_from(NUMBERS),
    st.sampled_from(STRINGS),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
    max_leaves=8,
)
metadata = st.dictionaries(st.sampled_from(KEYS), values, max_size=5)
paths = st.lists(st.sampled_from(FILTER_SEGMENTS), min_size=1, max_size=3).map(".".join)
range_operands = st.sampled_from(NUMBERS) | st.sampled_from(STRINGS)
scalar_lists = st.lists(scalars, max_size=4)


def reads_as_document(doc: Mapping[str, Any]) -> bool:
    """Whether ``$elemMatch`` reads ``doc`` as fields of object elements rather than as operators.

    A document that is only ``$not`` over operators (``{"$not": {"$not": {...}}}``) reads as an operator
    document, where a root-level ``$not`` is invalid; the generator leaves those out.
    """
    if list(doc) != ["$not"]:
        return True
    inner = doc["$not"]
    return not all(k.startswith("$") for k in inner)


def operator_documents(documents: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """``{"$op": operand, ...}`` documents over one field, every operator of the language."""
    single = st.one_of(
        st.builds(lambda v: {"$eq": v}, scalars),
        st.builds(lambda v: {"$ne": v}, scalars),
        st.builds(lambda op, v: {op: v}, st.sampled_from(("$gt", "$gte", "$lt", "$lte")), range_operands),
        st.builds(lambda v: {"$in": v}, scalar_lists),
        st.builds(lambda v: {"$nin": v}, scalar_lists),
        st.builds(lambda v: {"$all": v}, scalar_lists),
        st.builds(lambda n: {"$size": n}, st.integers(0, 3)),
        st.builds(lambda b: {"$exists": b}, st.booleans()),
        st.builds(
            lambda p, o: {"$regex": p, "$options": o} if o else {"$regex": p},
            st.sampled_from(PATTERNS),
            st.sampled_from(("", "i", "m", "s", "ims")),
        ),
        st.builds(lambda v: {"$contains": v}, scalars),
        st.builds(lambda d: {"$elemMatch": d}, documents.filter(reads_as_document)),
    )
    value_form = st.lists(single, min_size=1, max_size=2).map(
        lambda ds: {k: v for d in ds for k, v in d.items()}
    )
    return st.one_of(value_form, st.builds(lambda d: {"$not": d}, value_form))


def filters() -> st.SearchStrategy[dict[str, Any]]:
    """Random valid filter documents: field conditions, nested paths, $and/$or/$nor/$not, $elemMatch."""

    def extend(documents: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        operators = operator_documents(documents)
        # A value-form $elemMatch tests elements themselves: its document holds operators only.
        value_elem_match = st.builds(lambda d: {"$elemMatch": d}, operator_documents(st.nothing()))
        condition = st.one_of(scalars, scalar_lists, operators, value_elem_match)
        field = st.builds(lambda p, c: {p: c}, paths, condition)
        nested = st.builds(lambda a, b, c: {a: {b: c}}, st.sampled_from(FILTER_SEGMENTS), paths, condition)
        children = st.lists(documents, min_size=1, max_size=3)
        return st.one_of(
            field,
            nested,
            st.lists(field, min_size=2, max_size=3).map(lambda fs: {k: v for f in fs for k, v in f.items()}),
            st.builds(lambda op, cs: {op: cs}, st.sampled_from(("$and", "$or", "$nor")), children),
            st.builds(lambda d: {"$not": d}, documents),
        )

    base = st.builds(lambda p, v: {p: v}, paths, scalars)
    # Half the filters are one field condition, where a single operator's mistake cannot hide behind
    # the other conjuncts of a large filter.
    single = st.builds(lambda p, c: {p: c}, paths, operator_documents(base))
    return st.one_of(single, st.recursive(base, extend, max_leaves=6))


def expected_ids(flt: Mapping[str, Any], records: Mapping[str, Mapping[str, Any]]) -> set[str]:
    return {rid for rid, meta in records.items() if evaluate(flt, meta)}


async def assert_same_ids(
    store: SQLiteVector, flt: Mapping[str, Any], records: Mapping[str, Mapping[str, Any]]
) -> None:
    """The store's matches for ``flt`` equal the evaluator's, by a scored and a metadata-only query.

    The failure message shows the filter, the expected ids, the returned ids and the difference.
    """
    expected = expected_ids(flt, records)
    top_k = max(len(records), 1)
    scored = await store.query(INDEX, [1.0, 0.5], top_k=top_k, filter=flt)
    listed = await store.query(INDEX, None, top_k=top_k, filter=flt)
    for kind, hits in (("scored query", scored), ("metadata-only query", listed)):
        returned = {h.id for h in hits}
        assert returned == expected, (
            f"{kind} disagrees with the reference evaluator\n"
            f"  filter:   {flt!r}\n"
            f"  expected: {sorted(expected)}\n"
            f"  returned: {sorted(returned)}\n"
            f"  missing:  {sorted(expected - returned)}\n"
            f"  extra:    {sorted(returned - expected)}"
        )


async def check_record_set(
    store: SQLiteVector, metadatas: Sequence[dict[str, Any]], flts: Sequence[dict[str, Any]]
) -> int:
    """Store ``metadatas`` in a fresh index and compare every filter and its negation; return the count."""
    records = {f"r{i}": meta for i, meta in enumerate(metadatas)}
    await store.delete_index(INDEX)
    await store.create_index(INDEX, DIMENSION)
    if records:
        vectors = [[1.0, float(i)] for i in range(len(records))]
        await store.upsert(INDEX, vectors, list(records.values()), list(records))
    checked = 0
    for flt in flts:
        for variant in (flt, {"$not": flt}):
            await assert_same_ids(store, variant, records)
            checked += 1
    # Nothing in a field name or value ran as SQL: the index and every record are still there.
    stats = await store.describe_index(INDEX)
    assert stats.count == len(records)
    assert await store.list_indexes() == [INDEX]
    return checked


def run_differential(store_class: type[SQLiteVector], config: settings) -> int:
    """Run the differential property with ``config``; return how many filters were compared."""
    counted = [0]

    @config
    @given(records=st.lists(metadata, max_size=8), flts=st.lists(filters(), min_size=4, max_size=8))
    def compare(records: list[dict[str, Any]], flts: list[dict[str, Any]]) -> None:
        async def scenario() -> int:
            store = store_class(":memory:")
            try:
                return await check_record_set(store, records, flts)
            finally:
                await store.close()

        counted[0] += asyncio.run(scenario())

    compare()
    return counted[0]


def test_sqlite_results_equal_the_reference_evaluator() -> None:
    profile = settings()
    # Each example stores one record set and compares 4-8 filters, each also negated.
    compared = run_differential(
        SQLiteVector, settings(profile, max_examples=max(profile.max_examples // 2, 50))
    )
    print(f"\nsqlite differential: {compared} filter comparisons (2 queries each)")
    assert compared >= 8 * max(profile.max_examples // 2, 50)


def test_hostile_names_and_values_are_data_not_sql(tmp_path: Path) -> None:
    """A fixed run over a file database: every hostile key and value as filter and metadata."""

    async def scenario() -> int:
        store = SQLiteVector(str(tmp_path / "hostile.db"))
        try:
            records = [{key: value} for key in KEYS for value in STRINGS[:12]]
            flts: list[dict[str, Any]] = []
            for key in FILTER_SEGMENTS:
                for value in STRINGS:
                    flts.append({key: value})
                    flts.append({key: {"$gte": value}})
                flts.append({key: {"$regex": "'; DROP"}})
                flts.append({key: {"$exists": True}})
            return await check_record_set(store, records, flts)
        finally:
            await store.close()

    assert asyncio.run(scenario()) == 2 * len(FILTER_SEGMENTS) * (2 * len(STRINGS) + 2)
    with sqlite3.connect(tmp_path / "hostile.db") as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"mastra_vector_indexes", f"mastra_vectors__{INDEX}"}


# --- breaking the translator on purpose ----------------------------------------------------------


class MissingExcludingNe(SQLiteFilterTranslator):
    """A deliberately WRONG translator: ``$ne`` also requires the field to exist (a classic SQL bug)."""

    def comparison(self, node: Comparison) -> SqlFragment:
        fragment = super().comparison(node)
        if node.op != "$ne":
            return fragment
        exists = Comparison(node.path, "$exists", True)
        return self.logical_and(And((node, exists)), [fragment, super().comparison(exists)])


class BrokenStore(SQLiteVector):
    translator = MissingExcludingNe


async def test_the_comparison_names_filter_expected_and_returned_ids() -> None:
    store = BrokenStore(":memory:")
    try:
        await store.create_index(INDEX, DIMENSION)
        records = {"r0": {"a": 1}, "r1": {"a": 2}, "r2": {"b": 1}}
        await store.upsert(INDEX, [[1.0, 0.0]] * 3, list(records.values()), list(records))
        with pytest.raises(AssertionError) as failure:
            await assert_same_ids(store, {"a": {"$ne": 1}}, records)
    finally:
        await store.close()
    message = str(failure.value)
    assert "filter:   {'a': {'$ne': 1}}" in message
    assert "expected: ['r1', 'r2']" in message
    assert "returned: ['r1']" in message
    assert "missing:  ['r2']" in message


def test_the_differential_check_catches_a_ne_that_drops_missing_fields() -> None:
    quick = settings(settings(), max_examples=200, phases=[Phase.generate], derandomize=True)
    with pytest.raises(AssertionError, match=r"\$ne") as failure:
        run_differential(BrokenStore, quick)
    assert "expected:" in str(failure.value)
    assert "returned:" in str(failure.value)
