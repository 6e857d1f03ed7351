"""The translator: filter AST in, Pinecone filter out — exact forms, and exactness against the oracle.

The differential tests run the translated filter through the *emulator's* evaluator (written from
Pinecone's documentation, not from the core's) over records as :mod:`mastra_memory_pinecone.layout`
stores them, and compare with the reference evaluator over the same records as the spec means them —
under both readings of ``$ne``/``$nin`` on a missing field, which Pinecone leaves undocumented.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mastra_memory.errors import UnsupportedFilterError
from mastra_memory.filters import matches as reference_matches
from mastra_memory.filters import parse
from mastra_memory.vector import normalise_metadata
from mastra_memory_conformance.datasets import products, sample_metadata
from mastra_memory_conformance.suite import as_stored, writable
from mastra_memory_conformance.suite._generators import Features, filters, metadata

from mastra_memory_pinecone.capabilities import PINECONE_CAPABILITIES
from mastra_memory_pinecone.layout import encode
from mastra_memory_pinecone.testing.emulator import check_filter
from mastra_memory_pinecone.testing.emulator import matches as pinecone_matches
from mastra_memory_pinecone.translate import PineconeFilter, PineconeFilterTranslator, to_pinecone

CAPS = PINECONE_CAPABILITIES


def translate(flt: dict[str, Any]) -> PineconeFilter:
    node = parse(flt)
    assert node is not None
    return to_pinecone(PineconeFilterTranslator().translate(node))


def as_pinecone_stores(meta: dict[str, Any], rid: str = "r") -> dict[str, Any]:
    """What Pinecone holds after the adapter writes ``meta``: numbers become 64-bit floats."""
    stored = encode(normalise_metadata(writable(CAPS, meta)), rid)
    return {k: float(v) if isinstance(v, int) and not isinstance(v, bool) else v for k, v in stored.items()}


def pinecone_ids(
    flt: dict[str, Any], records: dict[str, dict[str, Any]], negation_matches_missing: bool
) -> set[str]:
    translated = translate(flt)
    if translated.never:
        return set()
    if translated.expression is None:
        return set(records)
    check_filter(translated.expression)  # Pinecone would accept it
    return {
        rid
        for rid, meta in records.items()
        if pinecone_matches(
            translated.expression,
            as_pinecone_stores(meta, rid),
            negation_matches_missing=negation_matches_missing,
        )
    }


def oracle_ids(flt: dict[str, Any], records: dict[str, dict[str, Any]]) -> set[str]:
    node = parse(flt)
    return {
        rid
        for rid, meta in records.items()
        if reference_matches(node, as_stored(CAPS, normalise_metadata(writable(CAPS, meta))))
    }


# --- forms ------------------------------------------------------------------------------------------


def test_equality_is_native() -> None:
    assert translate({"thread_id": "t1"}).expression == {"thread_id": {"$eq": "t1"}}
    assert translate({"n": 5}).expression == {"n": {"$eq": 5}}


def test_ne_does_not_depend_on_missing_field_semantics() -> None:
    assert translate({"n": {"$ne": 5}}).expression == {"$or": [{"n": {"$exists": False}}, {"n": {"$ne": 5}}]}


def test_nin_and_in_split_by_type() -> None:
    assert translate({"f": {"$in": ["a", 1, True]}}).expression == {
        "$or": [{"f": {"$in": ["a"]}}, {"f": {"$in": [1]}}, {"f": {"$eq": True}}]
    }
    assert translate({"f": {"$nin": ["a"]}}).expression == {
        "$or": [{"f": {"$exists": False}}, {"f": {"$nin": ["a"]}}]
    }


def test_none_is_absence_of_key_dict_and_list() -> None:
    assert translate({"f": None}).expression == {
        "$and": [
            {"f": {"$exists": False}},
            {"$or": [{"_mastra_shape": {"$exists": False}}, {"_mastra_shape": {"$nin": ["d:f", "l:f"]}}]},
        ]
    }


def test_negated_range_tells_numbers_from_other_types() -> None:
    assert translate({"n": {"$not": {"$gt": 5}}}).expression == {
        "$or": [
            {"$or": [{"_mastra_shape": {"$exists": False}}, {"_mastra_shape": {"$nin": ["n:n"]}}]},
            {"n": {"$lte": 5.0}},
        ]
    }


def test_all_is_an_and_of_equalities_and_empty_lists_fold() -> None:
    assert translate({"tags": {"$all": ["a", "b"]}}).expression == {
        "$and": [{"tags": {"$eq": "a"}}, {"tags": {"$eq": "b"}}]
    }
    assert translate({"tags": {"$in": []}}).never
    assert translate({"tags": {"$nin": []}}) == PineconeFilter(None)
    assert translate({"$and": [{"a": 1}, {"tags": {"$all": []}}]}).never


def test_string_ranges_are_unsupported() -> None:
    with pytest.raises(UnsupportedFilterError, match="no-string-ranges"):
        translate({"s": {"$gt": "a"}})


@pytest.mark.parametrize(
    "flt",
    [{"s": {"$regex": "a"}}, {"t": {"$size": 1}}, {"t": {"$elemMatch": {"k": 1}}}, {"s": {"$contains": "a"}}],
)
def test_undeclared_operators_raise(flt: dict[str, Any]) -> None:
    with pytest.raises(UnsupportedFilterError):
        translate(flt)


def test_integers_beyond_int64_that_are_not_floats_raise() -> None:
    with pytest.raises(UnsupportedFilterError, match="int64-range"):
        translate({"n": 2**64 + 1})


# --- exactness ----------------------------------------------------------------------------------------

BIG: dict[str, dict[str, Any]] = {
    "exact": {"n": 2**53},
    "above": {"n": 2**53 + 1},
    "int64max": {"n": 2**63 - 1},
    "below": {"n": 2**63 - 1025},
    "float": {"n": 9.223372036854776e18},
    "string": {"n": "9223372036854775807"},
    "none": {},
}


@pytest.mark.parametrize("op", ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"])
@pytest.mark.parametrize(
    "value", [2**53, 2**53 + 1, 2**63 - 1, 2**63 - 1024, 2**63, 9.223372036854776e18, 1e300, -(2**63)]
)
@pytest.mark.parametrize("negation_matches_missing", [False, True])
def test_numbers_beyond_two_to_the_53_compare_exactly(
    op: str, value: int | float, negation_matches_missing: bool
) -> None:
    flt = {"n": {op: value}}
    assert pinecone_ids(flt, BIG, negation_matches_missing) == oracle_ids(flt, BIG)
    negated = {"n": {"$not": {op: value}}}
    assert pinecone_ids(negated, BIG, negation_matches_missing) == oracle_ids(negated, BIG)


def _fixed_records() -> dict[str, dict[str, Any]]:
    records = {r.id: r.metadata for r in products("D9")}
    records.update(sample_metadata())
    records["nested"] = {"sub": {"k": 1, "deep": {"x": "y"}}, "empty": {}, "lst": []}
    return records


@pytest.mark.parametrize("negation_matches_missing", [False, True])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_filters_equal_the_reference_evaluator(
    negation_matches_missing: bool, data: st.DataObject
) -> None:
    features = Features.of(CAPS)
    records = {
        f"g{i}": m for i, m in enumerate(data.draw(st.lists(metadata(features), min_size=1, max_size=6)))
    }
    records.update(_fixed_records())
    flt = data.draw(filters(features))
    try:
        expected = oracle_ids(flt, records)
    except Exception:  # pragma: no cover - every generated filter is valid
        raise
    try:
        got = pinecone_ids(flt, records, negation_matches_missing)
    except UnsupportedFilterError:
        node = parse(flt)
        assert node is not None
        pytest.fail(f"{flt!r} uses only declared operators but raised")
    assert got == expected, f"{flt!r}: pinecone {sorted(got)} != oracle {sorted(expected)}"
