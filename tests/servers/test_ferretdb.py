"""Smoke test of the FerretDB target through pymongo: CRUD, filters, updates, deletes and indexes on the
docs/spec.md
§8.1 products, every §8.2 case compared with the reference evaluator, and a record of which MQL operators
and aggregation stages FerretDB v1 implements (docs/targets.md has the same table).

Where FerretDB v1 falls short, the test asserts the shortfall, so a table that stops being true fails."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mastra_memory_mongodb.testing.ferretdb import FERRETDB_VERSION

from mastra_memory.filters.evaluate import evaluate
from mastra_memory_conformance.datasets import FILTER_CASES, FilterCase, products
from mastra_memory_conformance.missing import missing

# The module fixture builds the server on a fresh machine (Maven / Go, minutes): a generous per-test bound.
pytestmark = pytest.mark.timeout(1200)

try:
    from pymongo import ASCENDING, DESCENDING, MongoClient, ReturnDocument
    from pymongo.collection import Collection
    from pymongo.database import Database
    from pymongo.errors import DuplicateKeyError, OperationFailure
except ImportError:  # pragma: no cover - depends on the environment
    missing("the client pymongo is not installed (pip install pymongo)")

Document = dict[str, Any]


@pytest.fixture(scope="module")
def client(ferretdb_uri: str) -> Iterator[MongoClient[Document]]:
    client: MongoClient[Document] = MongoClient(ferretdb_uri, serverSelectionTimeoutMS=30_000)
    yield client
    client.close()


@pytest.fixture
def db(client: MongoClient[Document], request: pytest.FixtureRequest) -> Database[Document]:
    """A database of its own for each test (FerretDB's SQLite backend keeps one file per database)."""
    name = "t_" + "".join(c if c.isalnum() else "_" for c in request.node.name)[:50]
    client.drop_database(name)
    return client[name]


def _documents() -> list[Document]:
    return [{"_id": r.id, **r.metadata} for r in products("D9")]


@pytest.fixture(scope="module")
def catalogue(client: MongoClient[Document]) -> Collection[Document]:
    """The D9 products, inserted once for the read-only filter tests."""
    collection = client["catalogue"]["products"]
    collection.drop()
    result = collection.insert_many(_documents())
    assert sorted(result.inserted_ids) == sorted(r.id for r in products("D9"))
    return collection


def _ids(collection: Collection[Document], filter: Document) -> set[str]:
    return {doc["_id"] for doc in collection.find(filter, {"_id": 1})}


def _reference(filter: Document) -> set[str]:
    return {r.id for r in products("D9") if evaluate(filter, r.metadata)}


def test_the_server_is_ferretdb_v1(client: MongoClient[Document]) -> None:
    info = client.admin.command("buildInfo")
    assert info["ferretdbVersion"] == FERRETDB_VERSION
    assert info["version"].startswith("7.")  # the MongoDB version it answers as
    assert client.admin.command("ping")["ok"] == 1.0


# --- find: filters that mean the same in MQL and in docs/spec.md §2, checked against the reference evaluator

FIND_FILTERS: list[tuple[str, Document]] = [
    ("$eq", {"category": {"$eq": "home"}}),
    ("implicit equality", {"category": "books"}),
    ("$ne (includes missing)", {"available": {"$ne": True}}),
    ("$gt", {"price": {"$gt": 50}}),
    ("$gte $lte", {"price": {"$gte": 20, "$lte": 80}}),
    ("$lt on floats", {"rating": {"$lt": 4.0}}),
    ("$in", {"category": {"$in": ["books", "test"]}}),
    ("$in with null", {"price": {"$in": [10, None]}}),
    ("$nin", {"tags": {"$nin": ["sale", "new"]}}),
    ("string range", {"name": {"$gte": "Product C", "$lt": "Product F"}}),
    ("no cross-type match", {"price": {"$gt": "50"}}),
    ("$and", {"$and": [{"category": "home"}, {"price": {"$lt": 150}}]}),
    ("$or", {"$or": [{"price": {"$gt": 100}}, {"category": "books"}]}),
    ("$nor", {"$nor": [{"category": "electronics"}, {"available": True}]}),
    ("field $not", {"price": {"$not": {"$gt": 50}}}),
    ("element equality", {"tags": "premium"}),
    ("$all", {"tags": {"$all": ["premium", "sale"]}}),
    ("$size", {"tags": {"$size": 2}}),
    ("$size 0", {"tags": {"$size": 0}}),
    ("$exists true", {"description": {"$exists": True}}),
    ("$exists false", {"rating": {"$exists": False}}),
    ("null or missing", {"price": None}),
    ("$elemMatch with operators", {"tags": {"$elemMatch": {"$in": ["luxury", "new"]}}}),
    ("$regex", {"name": {"$regex": "^Product [A-C]"}}),
    ("$regex $options i", {"category": {"$regex": "ELECTRONICS", "$options": "i"}}),
    ("nested path through a list", {"reviews.score": 5}),
    ("nested path through a list, range", {"reviews.author": {"$gte": "user4"}}),
]


@pytest.mark.parametrize("filter", [f for _, f in FIND_FILTERS], ids=[n for n, _ in FIND_FILTERS])
def test_find_matches_the_reference_evaluator(catalogue: Collection[Document], filter: Document) -> None:
    assert _ids(catalogue, filter) == _reference(filter)


def test_find_with_projection_sort_skip_limit(catalogue: Collection[Document]) -> None:
    cursor = catalogue.find({"price": {"$ne": None}}, {"price": 1, "_id": 1}).sort("price", DESCENDING)
    rows = list(cursor.skip(1).limit(3))
    assert rows == [{"_id": "D", "price": 100}, {"_id": "F", "price": 75}, {"_id": "C", "price": 50}]
    assert catalogue.count_documents({"category": "home"}) == 3
    assert sorted(catalogue.distinct("category")) == ["books", "electronics", "home", "test"]


# --- writes ---------------------------------------------------------------------------------------------


def test_insert_update_and_upsert(db: Database[Document]) -> None:
    products_ = db["products"]
    products_.insert_many(_documents())
    assert products_.estimated_document_count() == 9

    result = products_.update_one(
        {"_id": "A"}, {"$set": {"price": 12, "extra.note": "x"}, "$inc": {"rating": 0.5}}
    )
    assert (result.matched_count, result.modified_count) == (1, 1)
    result = products_.update_one({"_id": "A"}, {"$push": {"tags": "clearance"}, "$unset": {"available": ""}})
    assert result.modified_count == 1
    a = products_.find_one({"_id": "A"})
    assert a is not None
    assert (a["price"], a["rating"], a["extra"], a["tags"]) == (
        12,
        5.0,
        {"note": "x"},
        ["new", "sale", "clearance"],
    )
    assert "available" not in a

    many = products_.update_many({"category": "books"}, {"$addToSet": {"tags": "sale"}})
    assert (many.matched_count, many.modified_count) == (2, 1)  # G already has "sale"
    assert _ids(products_, {"tags": "sale"}) == {"A", "C", "E", "G"}
    pulled = products_.update_many({}, {"$pull": {"tags": "premium"}})
    assert pulled.modified_count == 4
    assert _ids(products_, {"tags": "premium"}) == set()

    after = products_.find_one_and_update(
        {"_id": "Z"}, {"$set": {"name": "Product Z"}}, upsert=True, return_document=ReturnDocument.AFTER
    )
    assert after == {"_id": "Z", "name": "Product Z"}
    replaced = products_.replace_one({"_id": "Z"}, {"name": "Z2"})
    assert replaced.modified_count == 1
    assert products_.find_one({"_id": "Z"}) == {"_id": "Z", "name": "Z2"}


def test_delete(db: Database[Document]) -> None:
    products_ = db["products"]
    products_.insert_many(_documents())
    assert products_.delete_one({"category": "test"}).deleted_count == 1
    assert products_.delete_many({"price": {"$lt": 30}}).deleted_count == 3
    assert _ids(products_, {}) == {"C", "D", "F", "G", "H"}
    assert products_.delete_many({"tags": {"$all": ["premium", "luxury"]}}).deleted_count == 1
    assert products_.delete_many({}).deleted_count == 4
    assert products_.count_documents({}) == 0


def test_indexes(db: Database[Document]) -> None:
    products_ = db["products"]
    products_.insert_many(_documents())
    assert products_.create_index([("category", ASCENDING)]) == "category_1"
    assert products_.create_index([("category", ASCENDING), ("price", DESCENDING)]) == "category_1_price_-1"
    assert products_.create_index([("name", ASCENDING)], unique=True, name="unique_name") == "unique_name"
    assert {i["name"] for i in products_.list_indexes()} == {
        "_id_",
        "category_1",
        "category_1_price_-1",
        "unique_name",
    }
    info = products_.index_information()
    assert info["unique_name"].get("unique") is True
    assert info["category_1_price_-1"]["key"] == [("category", 1), ("price", -1)]

    with pytest.raises(DuplicateKeyError):
        products_.insert_one({"_id": "dup", "name": "Product A"})
    with pytest.raises(DuplicateKeyError):
        products_.insert_one({"_id": "A"})
    # Queries still answer exactly with the indexes in place.
    assert _ids(products_, {"category": "home", "price": {"$gte": 100}}) == {"D", "H"}

    products_.drop_index("category_1")
    assert {i["name"] for i in products_.list_indexes()} == {"_id_", "category_1_price_-1", "unique_name"}
    products_.drop_indexes()
    assert [i["name"] for i in products_.list_indexes()] == ["_id_"]


# --- docs/spec.md §8.2 on FerretDB, compared with the reference evaluator ---

#: §8.2 cases FerretDB v1 gets wrong. ``$elemMatch`` with a document of field conditions: with one field it
#: matches nothing; with two it reads the field names as operators (``$elemMatch`` with operators works).
#: On a path through a list of documents (``reviews.score``) it decides ``$ne``, ``$nin``, a field-level
#: ``$not``, ``$all`` and an operator document as a whole per element ("some element differs"), where
#: docs/spec.md §2.4 and MongoDB negate the whole path and let each operator meet its own element;
#: ``$eq``, ``$in``, ranges and ``$nor`` are right there, which is what the adapter sends instead.
#: label -> (``"wrong"`` result or ``"error"``, what happens).
FERRETDB_GAPS: dict[str, tuple[str, str]] = {
    "40": ("wrong", "$elemMatch over documents matches nothing"),
    "41": ("wrong", "$elemMatch over documents matches nothing"),
    "43": ("error", "$elemMatch over documents with two fields: BadValue 'unknown operator: score'"),
    "49": ("wrong", "$ne through a list of documents: G (scores 3, 5) matches $ne 3"),
    "50": ("wrong", "$nin through a list of documents matches when some element is outside"),
    "53": ("wrong", "field $not through a list of documents negates per element"),
    "55": ("wrong", "$gt and $lt in one operator document must meet one element together"),
    "56": ("wrong", "$all through a list of documents must meet one element with every value"),
    "60": ("wrong", "$ne with $exists through a list of documents: per element"),
}
#: §8.2 cases that are not MQL: ``$contains`` is this project's operator (docs/spec.md §2.3); the MongoDB
#: adapter
#: emulates it.
NOT_MQL: frozenset[str] = frozenset({"31", "32"})


def to_mql(filter: Any) -> Any:
    """docs/spec.md §2 → MQL where they differ in spelling: a plain list condition is ``$in`` (in MQL it is
    array
    equality) and a root ``$not`` is ``$nor`` of its sub-filter (MQL has no root ``$not``)."""
    if isinstance(filter, dict):
        out: Document = {}
        for key, value in filter.items():
            if key == "$not" and isinstance(value, dict) and not any(k.startswith("$") for k in value):
                out["$nor"] = [to_mql(value)]
            elif key in ("$and", "$or", "$nor"):
                out[key] = [to_mql(v) for v in value]
            elif not key.startswith("$") and isinstance(value, list):
                out[key] = {"$in": value}
            elif not key.startswith("$") and isinstance(value, dict):
                out[key] = to_mql(value)
            else:
                out[key] = value
        return out
    return filter


def _comparable(case: FilterCase) -> bool:
    return not case.raises_filter_error and case.label not in NOT_MQL


SUPPORTED_CASES = [c for c in FILTER_CASES if _comparable(c) and c.label not in FERRETDB_GAPS]
GAP_CASES = [c for c in FILTER_CASES if c.label in FERRETDB_GAPS]


@pytest.mark.parametrize("case", SUPPORTED_CASES, ids=[f"#{c.label}" for c in SUPPORTED_CASES])
def test_spec_case_equals_the_reference_evaluator(catalogue: Collection[Document], case: FilterCase) -> None:
    reference = _reference(case.filter)
    assert reference == case.expected("D9")
    assert _ids(catalogue, to_mql(case.filter)) == reference, (
        f"filter {case.filter} as MQL {to_mql(case.filter)}"
    )


@pytest.mark.parametrize("case", GAP_CASES, ids=[f"#{c.label}" for c in GAP_CASES])
def test_the_ferretdb_gap_is_real(catalogue: Collection[Document], case: FilterCase) -> None:
    """The gap is real. (If this fails, FerretDB has gained the feature: move the case to the others.)"""
    behaviour, _ = FERRETDB_GAPS[case.label]
    if behaviour == "error":
        with pytest.raises(OperationFailure, match="unknown operator"):
            _ids(catalogue, to_mql(case.filter))
    else:
        assert _ids(catalogue, to_mql(case.filter)) != case.expected("D9")


def test_every_spec_case_is_accounted_for() -> None:
    labels = {c.label for c in FILTER_CASES}
    raising = {c.label for c in FILTER_CASES if c.raises_filter_error}
    assert set(FERRETDB_GAPS) <= labels
    assert labels >= NOT_MQL
    assert {c.label for c in SUPPORTED_CASES} | set(FERRETDB_GAPS) | NOT_MQL | raising == labels


def test_contains_is_not_mql(catalogue: Collection[Document]) -> None:
    with pytest.raises(OperationFailure, match=r"unknown operator: \$contains"):
        _ids(catalogue, {"description": {"$contains": "novel"}})


# --- what FerretDB v1 implements: query operators and aggregation stages ---------------------------------

#: (name, kind, query or pipeline, implemented by FerretDB v1). docs/targets.md shows the same table.
SUPPORT: list[tuple[str, str, Any, bool]] = [
    (
        "$eq $ne $gt $gte $lt $lte",
        "find",
        {"price": {"$gt": 1, "$gte": 1, "$lt": 500, "$lte": 500, "$ne": 7}},
        True,
    ),
    ("$in $nin", "find", {"price": {"$in": [10, 25], "$nin": [25]}}, True),
    ("$and $or $nor", "find", {"$and": [{"$or": [{"price": 10}]}, {"$nor": [{"price": 25}]}]}, True),
    ("$not", "find", {"price": {"$not": {"$gt": 50}}}, True),
    ("$exists", "find", {"price": {"$exists": True}}, True),
    ("$type", "find", {"price": {"$type": "number"}}, True),
    ("$all", "find", {"tags": {"$all": ["sale"]}}, True),
    ("$size", "find", {"tags": {"$size": 1}}, True),
    ("$elemMatch (operators)", "find", {"tags": {"$elemMatch": {"$eq": "sale"}}}, True),
    ("$regex $options", "find", {"name": {"$regex": "a", "$options": "i"}}, True),
    ("$mod", "find", {"price": {"$mod": [10, 0]}}, True),
    ("$bitsAllSet", "find", {"price": {"$bitsAllSet": 2}}, True),
    ("$comment", "find", {"price": 10, "$comment": "smoke"}, True),
    ("$expr", "find", {"$expr": {"$gt": ["$price", 50]}}, False),
    ("$where", "find", {"$where": "this.price > 1"}, False),
    ("$text", "find", {"$text": {"$search": "novel"}}, False),
    ("$jsonSchema", "find", {"$jsonSchema": {"required": ["price"]}}, False),
    ("$match", "aggregate", [{"$match": {"price": {"$gt": 10}}}], True),
    ("$project", "aggregate", [{"$project": {"price": 1}}], True),
    ("$addFields / $set", "aggregate", [{"$addFields": {"x": 1}}, {"$set": {"y": "$price"}}], True),
    ("$unset", "aggregate", [{"$unset": "price"}], True),
    ("$sort $skip $limit", "aggregate", [{"$sort": {"price": -1}}, {"$skip": 1}, {"$limit": 2}], True),
    (
        "$group $count",
        "aggregate",
        [{"$group": {"_id": "$category", "n": {"$sum": 1}}}, {"$count": "n"}],
        True,
    ),
    ("$unwind", "aggregate", [{"$unwind": "$tags"}], True),
    ("$replaceRoot", "aggregate", [{"$replaceRoot": {"newRoot": {"p": "$price"}}}], False),
    (
        "$lookup",
        "aggregate",
        [{"$lookup": {"from": "x", "localField": "_id", "foreignField": "_id", "as": "y"}}],
        False,
    ),
    ("$facet", "aggregate", [{"$facet": {"a": [{"$limit": 1}]}}], False),
    (
        "$project with an operator expression",
        "aggregate",
        [{"$project": {"p": {"$multiply": ["$price", 2]}}}],
        False,
    ),
    ("$meta (vectorSearchScore)", "aggregate", [{"$project": {"s": {"$meta": "vectorSearchScore"}}}], False),
    ("$search (Atlas Search)", "aggregate", [{"$search": {"text": {"query": "x", "path": "name"}}}], False),
    (
        "$vectorSearch (Atlas)",
        "aggregate",
        [
            {
                "$vectorSearch": {
                    "index": "v",
                    "path": "e",
                    "queryVector": [1.0],
                    "numCandidates": 1,
                    "limit": 1,
                }
            }
        ],
        False,
    ),
]


@pytest.mark.parametrize(
    ("kind", "query", "implemented"), [s[1:] for s in SUPPORT], ids=[s[0] for s in SUPPORT]
)
def test_operator_support(catalogue: Collection[Document], kind: str, query: Any, implemented: bool) -> None:
    def run() -> list[Document]:
        return list(catalogue.find(query) if kind == "find" else catalogue.aggregate(query))

    if implemented:
        assert run(), "each implemented probe is written to return some documents"
    else:
        with pytest.raises(OperationFailure):
            run()
