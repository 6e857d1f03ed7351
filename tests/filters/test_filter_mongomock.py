"""The reference evaluator against an independent oracle: mongomock's implementation of MongoDB queries.

docs/spec.md §2.7 item 6: within the operators whose meaning here is MongoDB's (``$eq $ne $gt $gte $lt $lte
$in
$nin $all $size $exists $elemMatch $and $or $nor`` and field-level ``$not``), the evaluator and mongomock must
select the same records. Two syntax differences are translated before a filter is handed to mongomock: a
plain list is ``$in`` here but array equality in MongoDB, and a nested dict is a path here but sub-document
equality there.

mongomock is not MongoDB. Where it departs from MongoDB's documented behaviour the affected records are
left out of the comparison, each case narrowly (see ``_mongomock_departure``), and
``test_mongomock_known_divergences`` pins every such case with the MongoDB answer, so an exclusion that is no
longer needed shows up. The MongoDB answers come from the server's own tests
(``jstests/core/null_query_semantics.js``) and its query documentation; the evaluator is never bent towards
mongomock.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import mongomock
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mastra_memory.filters import evaluate, operators_used, parse
from mastra_memory_conformance.datasets import (
    FILTER_CASES,
    OPERATOR_EXAMPLES,
    ExampleCase,
    FilterCase,
    products,
    sample_metadata,
)

_LOGICAL = ("$and", "$or", "$nor")
# Operators whose meaning differs from MongoDB's by design (docs/spec.md §2.7 item 6).
_NOT_MONGO = frozenset({"$contains", "$regex"})


# --- translation to MongoDB syntax -----------------------------------------------------------------


def to_mongo(document: Mapping[str, Any]) -> dict[str, Any]:
    """The same filter in MongoDB syntax: plain lists become ``$in``, nested path dicts become dotted keys."""
    entries: list[tuple[str, Any]] = []
    for key, value in document.items():
        if key in _LOGICAL:
            entries.append((key, [to_mongo(d) for d in value]))
        else:
            entries.extend(_condition_to_mongo(key, value))
    out: dict[str, Any] = {}
    for key, value in entries:
        if key in out:  # two spellings of one path: keep both conditions, ANDed
            return {"$and": [{k: v} for k, v in entries]}
        out[key] = value
    return out


def _condition_to_mongo(path: str, condition: Any) -> list[tuple[str, Any]]:
    if isinstance(condition, list):
        return [(path, {"$in": condition})]
    if not isinstance(condition, dict):
        return [(path, condition)]
    if not all(k.startswith("$") for k in condition):
        return [pair for k, v in condition.items() for pair in _condition_to_mongo(f"{path}.{k}", v)]
    ops: dict[str, Any] = {}
    for op, operand in condition.items():
        if op == "$elemMatch" and not _is_value_form(operand):
            ops[op] = to_mongo(operand)
        elif op in ("$elemMatch", "$not"):
            ops[op] = dict(operand)
        else:
            ops[op] = operand
    return [(path, ops)]


def _is_value_form(elem_match: Mapping[str, Any]) -> bool:
    return all(k.startswith("$") for k in elem_match) and not any(k in _LOGICAL for k in elem_match)


# --- where mongomock departs from MongoDB ----------------------------------------------------------


@dataclass
class _Reach:
    """What a path reaches in one record, walked independently of the evaluator."""

    leaves: list[Any] = field(default_factory=list)
    missing: bool = False
    # The walk met a scalar, a null, an empty list or a non-object list element where an object was needed.
    crossed_non_object: bool = False
    # The walk went through a list before the end of the path (implicit array traversal).
    crossed_list: bool = False


def _reach(document: Any, path: tuple[str, ...], out: _Reach) -> _Reach:
    if not path:
        out.leaves.append(document)
    elif isinstance(document, dict):
        if path[0] in document:
            _reach(document[path[0]], path[1:], out)
        else:
            out.missing = True
    elif isinstance(document, list):
        out.crossed_list = True
        if not document:
            out.crossed_non_object = True
        for element in document:
            if isinstance(element, dict):
                _reach(element, path, out)
            else:
                out.crossed_non_object = True
    else:
        out.crossed_non_object = True
    return out


def _uses(document: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """(absolute path, kind) for every condition of a MongoDB-syntax filter that a divergence can touch.

    Inside a document-form ``$elemMatch`` paths are joined to the list's path, which walks the elements like
    implicit traversal: an over-approximation, so it only ever leaves out more records.
    """
    for key, value in document.items():
        if key in _LOGICAL:
            for sub in value:
                yield from _uses(sub, prefix)
        else:
            yield from _condition_uses((*prefix, *key.split(".")), value)


def _condition_uses(path: tuple[str, ...], condition: Any) -> Iterator[tuple[tuple[str, ...], str]]:
    if not isinstance(condition, dict):
        if condition is None:
            yield path, "null"
        return
    if len(condition) > 1:
        yield path, "several"
    for op, operand in condition.items():
        if (op in ("$eq", "$ne") and operand is None) or (op in ("$in", "$nin") and None in operand):
            yield path, "null"
        elif op == "$all":
            yield path, "all-null" if None in operand else "all"
        elif op == "$size":
            yield path, "size"
        elif op == "$exists" and operand is False:
            yield path, "exists-false"
        elif op == "$not":
            yield path, "not"
            yield from _condition_uses(path, operand)
        elif op == "$elemMatch":
            if _is_value_form(operand):
                if _mentions_size(operand):
                    yield path, "element-size"
            else:
                yield path, "element-document"
                yield from _uses(operand, path)


def _mentions_size(operators: Mapping[str, Any]) -> bool:
    return "$size" in operators or ("$not" in operators and _mentions_size(operators["$not"]))


def _mongomock_departure(record: Mapping[str, Any], mongo_filter: Mapping[str, Any]) -> str | None:
    """Which of mongomock's departures from MongoDB ``record`` falls into for this filter, if any.

    1. ``True == 1`` (docs/spec.md §2.7): cannot occur, the generated numbers avoid 0 and 1.
    2. ``$size`` on a value that is not a list: mongomock counts a scalar as one element and a dict's keys
       (docs/spec.md §2.7 names the string case); MongoDB's ``$size`` matches only arrays.
    3. Null equality (``None`` in ``$eq``/``$ne``/``$in``/``$nin``) on a dotted path that crosses a scalar
       or null: MongoDB treats the path as missing, so ``{"a.b": None}`` matches ``{"a": 4}``; mongomock
       does not.
    4. Field-level ``$not`` on such a path: mongomock never matches; MongoDB negates (``$not: {$eq: 5}`` is
       ``$ne: 5``, which matches).
    5. ``$all`` containing ``None``: MongoDB's ``$all`` is an AND of equalities, so ``None`` matches a missing
       field; mongomock requires the field to be present.
    6. Document-form ``$elemMatch`` over a list with non-object elements: MongoDB only tries object
       elements; mongomock also tries scalars, whose fields all count as missing.
    7. ``$all: []``: MongoDB matches nothing, mongomock everything. Not generated (the strategy draws
       non-empty ``$all`` lists).
    8. ``$all`` on a path through a list of objects whose values include lists: mongomock misses matches
       (``{"g.h": {"$all": [5]}}`` and ``{"g": [{}, {"h": [5]}]}``) or raises (``mongomock_verdicts``).
    9. ``$exists: False`` on a path through a list of objects: MongoDB's is NOT(``$exists: True``), false as
       soon as one element has the key; mongomock matches when some element lacks it.
    10. An operator document with several operators on a path that crosses a list, a scalar or a null:
        mongomock misjudges records that each operator alone (or an ``$and`` of them) judges right, e.g.
        ``{"g.h": {"$eq": 2, "$ne": 7}}`` misses ``{"g": [{"h": 2}]}``.
    """
    for path, kind in _uses(mongo_filter):
        reach = _reach(record, path, _Reach())
        if kind in ("null", "not") and reach.crossed_non_object:
            return f"{kind} across a non-object"
        if kind == "several" and (reach.crossed_non_object or reach.crossed_list):
            return "several operators across a list or a non-object"
        if kind == "exists-false" and reach.crossed_list:
            return "$exists: False across a list"
        if kind == "all-null" and (reach.missing or reach.crossed_non_object):
            return "$all with None on a missing path"
        if (
            kind in ("all", "all-null")
            and reach.crossed_list
            and any(isinstance(v, list) for v in reach.leaves)
        ):
            return "$all across a list reaching lists"
        if kind == "size" and any(not isinstance(v, list) for v in reach.leaves):
            return "$size on a non-list"
        if kind == "element-size" and any(
            isinstance(v, list) and any(not isinstance(e, list) for e in v) for v in reach.leaves
        ):
            return "$size on a non-list element"
        if kind == "element-document" and any(
            isinstance(v, list) and any(not isinstance(e, dict) for e in v) for v in reach.leaves
        ):
            return "document $elemMatch over scalar elements"
    return None


# --- running both oracles -------------------------------------------------------------------------


_COLLECTION = mongomock.MongoClient().db.records


def mongomock_ids(records: Mapping[str, Mapping[str, Any]], flt: Mapping[str, Any]) -> set[str]:
    """The ids of the records mongomock's ``find()`` returns for ``flt`` (already in MongoDB syntax)."""
    _COLLECTION.delete_many({})
    _COLLECTION.insert_many([{"_id": rid, **meta} for rid, meta in records.items()])
    return {doc["_id"] for doc in _COLLECTION.find(flt)}


def mongomock_verdicts(
    records: Mapping[str, Mapping[str, Any]], flt: Mapping[str, Any]
) -> dict[str, bool | None]:
    """Per record: whether mongomock's ``find()`` returns it, or ``None`` where mongomock raises.

    Departure 8: mongomock raises ``TypeError`` for some ``$all`` conditions on a path that crosses a list
    (one element's value is a list, another's is missing or a scalar); MongoDB simply evaluates them.
    """
    try:
        found = mongomock_ids(records, flt)
    except TypeError:
        verdicts: dict[str, bool | None] = {}
        for rid, meta in records.items():
            try:
                verdicts[rid] = bool(mongomock_ids({rid: meta}, flt))
            except TypeError:
                verdicts[rid] = None
        return verdicts
    return {rid: rid in found for rid in records}


def evaluator_ids(records: Mapping[str, Mapping[str, Any]], flt: Any) -> set[str]:
    node = parse(flt)
    return {rid for rid, meta in records.items() if evaluate(node, meta)}


def _is_mongo_comparable(flt: Any) -> bool:
    """Whether a filter uses only operators whose meaning equals MongoDB's (no root ``$not``)."""
    if operators_used(parse(flt)) & _NOT_MONGO:
        return False
    return not _has_root_not(flt)


def _has_root_not(document: Mapping[str, Any]) -> bool:
    return any(
        key == "$not" or (key in _LOGICAL and any(_has_root_not(d) for d in value))
        for key, value in document.items()
    )


# --- fixed cases: §2.3 examples and §8.2 rows ------------------------------------------------------


# Known mongomock bugs of docs/spec.md §2.7 item 6, as (example filter, the record mongomock wrongly adds).
_SPEC_BUGS = {
    repr({"ok": 1}): {"r1"},  # True == 1
    repr({"tags": {"$size": 1}}): {"r5"},  # $size on the string "a"
}


@pytest.mark.parametrize(
    "example",
    [e for e in OPERATOR_EXAMPLES if _is_mongo_comparable(e.filter)],
    ids=lambda e: repr(e.filter),
)
def test_mongomock_agrees_on_operator_examples(example: ExampleCase) -> None:
    records = sample_metadata()
    ours = evaluator_ids(records, example.filter)
    assert ours == example.expected
    theirs = mongomock_ids(records, to_mongo(example.filter))
    assert theirs == ours | _SPEC_BUGS.get(repr(example.filter), set())


def test_operator_examples_outside_mongodb_are_the_documented_ones() -> None:
    left_out = {repr(e.filter) for e in OPERATOR_EXAMPLES if not _is_mongo_comparable(e.filter)}
    assert left_out == {
        repr({"s": {"$regex": "an"}}),
        repr({"s": {"$regex": "^b", "$options": "i"}}),
        repr({"s": {"$regex": "e$"}}),
        repr({"s": {"$contains": "an"}}),
        repr({"s": {"$contains": "AN"}}),
        repr({"tags": {"$contains": "b"}}),
        repr({"$not": {"n": 5, "s": "Banana"}}),
    }


_COMPARABLE_CASES = [c for c in FILTER_CASES if not c.raises_filter_error and _is_mongo_comparable(c.filter)]
# §8.2 rows in one of mongomock's departures -> what mongomock returns instead. #55 is departure 10: MongoDB
# lets $gt and $lt each meet its own element of a list of documents ("Query an Array of Embedded
# Documents": {"instock.qty": {$gt: 10, $lte: 20}} needs "not necessarily the same embedded document").
_CASE_DEPARTURES: dict[str, frozenset[str]] = {"55": frozenset()}


@pytest.mark.parametrize("dataset", ["D8", "D9"])
@pytest.mark.parametrize("case", _COMPARABLE_CASES, ids=lambda c: f"#{c.label}")
def test_mongomock_agrees_on_dataset_cases(case: FilterCase, dataset: Any) -> None:
    records = {r.id: r.metadata for r in products(dataset)}
    ours = evaluator_ids(records, case.filter)
    assert ours == case.expected(dataset)
    theirs = mongomock_ids(records, to_mongo(case.filter))
    assert theirs == _CASE_DEPARTURES.get(case.label, ours)
    if case.label in _CASE_DEPARTURES:
        assert _mongomock_departure(records["G"], to_mongo(case.filter)) is not None


def test_dataset_cases_outside_mongodb_are_the_documented_ones() -> None:
    left_out = {c.label for c in FILTER_CASES if not c.raises_filter_error} - {
        c.label for c in _COMPARABLE_CASES
    }
    assert left_out == {"28", "29", "31", "32", "37", "62"}  # $regex, $contains, root $not


# --- mongomock's departures, pinned --------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "flt", "mongodb"),
    [
        # null_query_semantics.js: {"a.b": {$eq: null}} matches a non-object, non-array "a".
        ({"a": 4}, {"a.b": None}, True),
        ({"a": None}, {"a.b": {"$in": [None, 75]}}, True),
        ({"a": 4}, {"a.b": {"$ne": None}}, False),
        # $not negates: {$not: {$eq: 5}} is {$ne: 5}, which matches when a.b is missing.
        ({"a": 4}, {"a.b": {"$not": {"$eq": 5}}}, True),
        # $all is an AND of equalities; {a: null} matches a missing field.
        ({}, {"a": {"$all": [None]}}, True),
        # null_query_semantics.js: {a: {$elemMatch: {b: {$ne: null}}}} skips scalar elements.
        ({"a": [1, "string", 4]}, {"a": {"$elemMatch": {"b": {"$ne": None}}}}, False),
        ({"a": "xy"}, {"a": {"$size": 1}}, False),
        ({"a": {"p": 1, "q": 2}}, {"a": {"$size": 2}}, False),
        ({"a": True}, {"a": 1}, False),
        ({"a": [1]}, {"a": {"$all": []}}, False),
        # $exists: false is NOT($exists: true) (expression_parser.cpp); one element has "e".
        ({"d": [{"e": 2}, {}]}, {"d.e": {"$exists": False}}, False),
        # Each operator alone matches; so does their AND.
        ({"d": 2}, {"d.e": {"$ne": 2, "$exists": False}}, True),
        # $all is an AND of equalities; h of the second element holds 5.
        ({"g": [{}, {"h": [5]}]}, {"g.h": {"$all": [5]}}, True),
        # One element of g has h == 2 and none has h == 7.
        ({"g": [{"h": 1}, {"h": 2}]}, {"g.h": {"$eq": 2, "$ne": 7}}, True),
        # $ne 5 and $exists both hold for a.h (one element has h: "x"), so their negation does not.
        ({"a": [{"h": "x"}, {}]}, {"a.h": {"$not": {"$ne": 5, "$exists": True}}}, False),
    ],
)
def test_mongomock_known_divergences(record: dict[str, Any], flt: dict[str, Any], mongodb: bool) -> None:
    """The evaluator gives MongoDB's answer; mongomock still gives the other (else drop the exclusion)."""
    assert evaluate(flt, record) is mongodb
    assert (mongomock_ids({"x": record}, flt) == {"x"}) is not mongodb


def test_mongomock_raises_on_all_across_uneven_lists() -> None:
    """Departure 8, pinned: MongoDB finds an element ``e`` containing 5; mongomock raises."""
    record = {"b": [{"e": [5]}, {}]}
    assert evaluate({"b.e": {"$all": [5]}}, record) is True
    assert mongomock_verdicts({"x": record}, {"b.e": {"$all": [5]}}) == {"x": None}


# --- the differential property ---------------------------------------------------------------------

# Small pools make equal values likely. Numbers avoid 0 and 1 so that mongomock's True == 1 cannot arise
# (departure 1); "7" and 7 tempt cross-type matches, "X" < "x" and "é" test code-point order.
_NUMBERS = st.sampled_from([2, 7, 2.0, 2.5, 10**15])
_STRINGS = st.sampled_from(["", "x", "X", "é", "7"])
_SCALARS = st.one_of(_NUMBERS, _STRINGS, st.booleans(), st.none())
_ORDERED = st.one_of(_NUMBERS, _STRINGS)
_SUB_KEYS = ["e", "h"]
# Paths that usually exist come up more often than the ones that cross scalars or go deep.
_PATHS = st.sampled_from(["a", "b", "d.e", "g.h", "a", "b", "d.e", "g.h", "d", "g", "a.e", "d.e.h", "g.h.e"])


def records(scalars: st.SearchStrategy[Any]) -> st.SearchStrategy[list[dict[str, Any]]]:
    """4–8 metadata records whose scalars come from ``scalars``.

    Every key can hold anything or be missing, but "a"/"b" lean to scalars and lists of scalars, "d" to
    objects and "g" to lists of objects, so that dotted paths usually lead somewhere.
    """
    scalar_lists = st.lists(scalars, max_size=3)
    inner_docs = st.dictionaries(st.sampled_from(_SUB_KEYS), scalars, max_size=2)
    small_docs = st.dictionaries(
        st.sampled_from(_SUB_KEYS),
        st.one_of(scalars, scalar_lists, st.lists(inner_docs, max_size=2)),
        max_size=2,
    )
    anything = st.one_of(scalars, st.lists(st.one_of(scalars, small_docs), max_size=3), small_docs)
    record = st.fixed_dictionaries(
        {},
        optional={
            "a": st.one_of(scalars, scalar_lists, anything),
            "b": st.one_of(scalars, scalar_lists, anything),
            "d": st.one_of(small_docs, anything),
            "g": st.one_of(st.lists(small_docs, max_size=3), anything),
        },
    )
    return st.lists(record, min_size=4, max_size=8)


def filters(scalars: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Random filters of the MongoDB-equivalent operators, with operands drawn from ``scalars``."""
    ordered = scalars.filter(lambda v: isinstance(v, (int, float, str)) and not isinstance(v, bool))
    value_operators = st.one_of(
        st.tuples(st.sampled_from(["$eq", "$ne"]), scalars),
        st.tuples(st.sampled_from(["$gt", "$gte", "$lt", "$lte"]), ordered),
        st.tuples(st.sampled_from(["$in", "$nin"]), st.lists(scalars, max_size=3)),
        st.tuples(st.just("$all"), st.lists(scalars, min_size=1, max_size=2)),
        st.tuples(st.just("$size"), st.integers(0, 3)),
        st.tuples(st.just("$exists"), st.booleans()),
    )
    value_docs = st.lists(value_operators, min_size=1, max_size=2).map(dict)

    def conditions(documents: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[Any]:
        nested = st.one_of(
            st.tuples(st.just("$elemMatch"), st.one_of(value_docs, documents)),
            st.tuples(st.just("$not"), value_docs),
        )
        operator_docs = st.lists(st.one_of(value_operators, nested), min_size=1, max_size=2).map(dict)
        return st.one_of(scalars, st.lists(scalars, max_size=3), operator_docs)

    def documents(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        path_dicts = st.tuples(  # {"d": {"e": ...}} is a nested path, the same as {"d.e": ...}
            st.sampled_from(["a", "d", "g"]),
            st.dictionaries(st.sampled_from(_SUB_KEYS), conditions(children), min_size=1, max_size=2),
        )
        entries = st.one_of(
            st.tuples(_PATHS, conditions(children)),
            path_dicts,
            st.tuples(st.sampled_from(list(_LOGICAL)), st.lists(children, min_size=1, max_size=2)),
        )
        return st.lists(entries, min_size=1, max_size=2).map(dict)

    leaves = st.lists(st.tuples(_PATHS, conditions(st.nothing())), min_size=1, max_size=2).map(dict)
    return st.recursive(leaves, documents, max_leaves=6)


# Each example draws a small vocabulary of scalars, shared by all its draws, and builds its records and most
# operands from it, so that conditions hold for some records and not for others.
_WORDS = st.shared(st.lists(_SCALARS, min_size=1, max_size=4, unique_by=repr), key="vocabulary").flatmap(
    st.sampled_from
)
_RECORD_LISTS = records(_WORDS)
_FILTERS = filters(st.one_of(_WORDS, _SCALARS))


# Twice the profile's example count: 400 in dev, 2,000 in CI (one filter per example).
@settings(max_examples=2 * settings().max_examples)
@given(metadata=_RECORD_LISTS, flt=_FILTERS)
def test_evaluator_matches_mongomock(metadata: list[dict[str, Any]], flt: dict[str, Any]) -> None:
    by_id = {f"r{i}": r for i, r in enumerate(metadata)}
    mongo_filter = to_mongo(flt)
    node = parse(flt)
    for rid, verdict in mongomock_verdicts(by_id, mongo_filter).items():
        if verdict is not None and _mongomock_departure(by_id[rid], mongo_filter) is None:
            assert evaluate(node, by_id[rid]) is verdict, rid
