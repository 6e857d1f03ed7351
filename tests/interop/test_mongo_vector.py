"""Mastra's ``MongoDBVector`` (``@mastra/mongodb`` 1.18.9) on the mongodb adapter's test server, FerretDB v1
(issue 25, item 3's vector half; docs/spec.md §4.7 "MongoDB: vectors").

Mastra's vector store is built on Atlas Vector Search: ``createIndex`` creates the collection, records the
index in ``__mastra_vector_indexes__`` and then sends ``createSearchIndexes`` (a ``vectorSearch`` index
over ``embedding``); ``describeIndex`` and ``upsert`` read ``$listSearchIndexes``; ``query`` runs
``$vectorSearch``. FerretDB implements none of the three, so Mastra's semantic recall cannot run there, and
this project's ``layout="mastra"`` stops at the storage. This test runs Mastra itself
(``mastra/mongo_vector.mjs``) and asserts the exact refusals, so the statement in the spec stays true: when a
FerretDB or ``@mastra/mongodb`` release changes them, this test fails and the spec must be revisited.

The refusals asserted are FerretDB's wording, so with ``MASTRA_MEMORY_TEST_MONGODB_URI`` naming another
server the test skips, saying so. Where the adapter or Go (to build FerretDB) is missing it skips, and fails
under CI (``mastra_memory_conformance.missing``).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from mastra_memory_conformance.missing import missing, started

from .mastra_runner import run_mastra

try:
    from mastra_memory_mongodb.testing.ferretdb import ferretdb_server
    from pymongo import MongoClient
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    missing(f"the mongodb adapter is not installed ({exc}); pip install -e adapters/mongodb")

SCRIPT = "mongo_vector.mjs"
INDEX = "memory_messages_4"
#: Mastra's registry of its vector indexes (``MongoDBVector.REGISTRY_COLLECTION``).
REGISTRY = "__mastra_vector_indexes__"


def _refusal(step: dict[str, Any]) -> tuple[str, int, str]:
    """``(command, code, message)`` of the one server command that failed during a step."""
    assert step["ok"] is False, step
    (failed,) = step["failed"]
    return failed["commandName"], failed["code"], failed["message"]


def test_mastra_vector_store_needs_atlas_search(tmp_path: Path) -> None:
    if os.environ.get("MASTRA_MEMORY_TEST_MONGODB_URI", "").strip():
        pytest.skip("asserts FerretDB's refusals; MASTRA_MEMORY_TEST_MONGODB_URI names another server")
    db_name = f"interop_{uuid.uuid4().hex[:10]}"
    with started(ferretdb_server(tmp_path), "FerretDB (the mongodb adapter's test server)") as uri:
        answer = run_mastra(
            {
                "url": uri,
                "dbName": db_name,
                "indexName": INDEX,
                "dimension": 4,
                "vectors": [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]],
                "metadata": [{"message_id": "m-1"}, {"message_id": "m-2"}],
                "ids": ["v-1", "v-2"],
                "queryVector": [1.0, 0.0, 0.0, 0.0],
            },
            script=SCRIPT,
        )
        client: MongoClient[dict[str, Any]] = MongoClient(
            uri, serverSelectionTimeoutMS=10_000, timeoutMS=30_000
        )
        try:
            db = client[db_name]
            collections = sorted(db.list_collection_names())
            registry = list(db[REGISTRY].find())
            stored = db[INDEX].count_documents({})
        finally:
            client.close()
    steps = answer["steps"]

    # createIndex: the collection and the registry entry are written, then the Atlas Search index is refused.
    assert steps["createIndex"]["error"]["id"] == "MASTRA_VECTOR_MONGODB_CREATE_INDEX_FAILED"
    assert _refusal(steps["createIndex"]) == (
        "createSearchIndexes",
        59,
        "no such command: 'createSearchIndexes'",
    )
    assert answer["started"]["createIndex"][-1] == "createSearchIndexes"
    assert collections == sorted([REGISTRY, INDEX])
    assert [(entry["_id"], entry["searchIndexName"], entry["dimension"]) for entry in registry] == [
        (INDEX, f"{INDEX}_vector_index", 4)
    ]
    # listIndexes reads only the registry and the collection list, so the half-made index is listed...
    assert steps["listIndexes"] == {"ok": True, "result": [INDEX]}
    # ...but describeIndex and upsert (which describes the index first) need $listSearchIndexes,
    listing = ("aggregate", 40234, 'Unrecognized pipeline stage name: "$listSearchIndexes"')
    assert steps["describeIndex"]["error"]["id"] == "MASTRA_VECTOR_MONGODB_DESCRIBE_INDEX_FAILED"
    assert _refusal(steps["describeIndex"]) == listing
    assert steps["upsert"]["error"]["id"] == "MASTRA_VECTOR_MONGODB_UPSERT_FAILED"
    assert _refusal(steps["upsert"]) == listing
    assert stored == 0  # nothing was embedded
    # ...and query needs $vectorSearch.
    assert steps["query"]["error"]["id"] == "MASTRA_VECTOR_MONGODB_QUERY_FAILED"
    assert _refusal(steps["query"]) == (
        "aggregate",
        40234,
        'Unrecognized pipeline stage name: "$vectorSearch"',
    )
