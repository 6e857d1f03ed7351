"""Observational memory in one MongoDB database, two languages: ``@mastra/mongodb``'s ``MongoDBStore`` and
this project's ``MongoDBStorage(layout="mastra")`` (issue 27; docs/spec.md §4.8), proved by running Mastra
itself (``mastra/om_store.mjs``, one Node process for the module; records and checks from
:mod:`.om_exchange`).

* Mastra reads back equal what this project wrote (two generations of a thread, a resource's record), and
  this project reads Mastra's equal to what Mastra returns.
* The collection's indexes this project creates in a new database are the ones Mastra creates.
* On FerretDB, Mastra's own ``updateBufferedObservations`` fails (an aggregation-pipeline update FerretDB v1
  refuses); this project's buffering works there, and Mastra reads its chunks.
* [Δ] Mastra finds a thread's record under any resource id; this project only under the owner's.

The server comes from ``mastra_memory_mongodb.testing.ferretdb`` (or ``MASTRA_MEMORY_TEST_MONGODB_URI``).
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mastra_memory_conformance.missing import missing, started

from . import om_exchange as om
from .mastra_runner import run_mastra

try:
    from mastra_memory_mongodb import MongoDBSettings
    from mastra_memory_mongodb.storage import MongoDBStorage
    from mastra_memory_mongodb.testing.ferretdb import ferretdb_server
    from pymongo import MongoClient
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    missing(f"the mongodb adapter is not installed ({exc}); pip install -e adapters/mongodb")

COLLECTION = "mastra_observational_memory"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    existing = os.environ.get("MASTRA_MEMORY_TEST_MONGODB_URI", "").strip()
    if existing:
        yield existing, "mongodb"
        return
    ferretdb = ferretdb_server(Path(tmp_path_factory.mktemp("ferretdb")))
    with started(ferretdb, "FerretDB (the mongodb adapter's test server)") as uri:
        yield uri, "ferretdb"


async def _use(server: tuple[str, str], db_name: str, job: Any) -> Any:
    uri, dialect = server
    storage = MongoDBStorage(
        MongoDBSettings(url=uri, db_name=db_name, dialect=dialect, layout="mastra", max_pool_size=2)
    )
    try:
        await storage.init()
        return await job(storage)
    finally:
        await storage.close()


async def _touch(storage: MongoDBStorage) -> None:
    await storage.get_observational_memory(None, "nobody")  # creates the collection's indexes


def om_indexes(uri: str, db_name: str) -> list[Any]:
    client: MongoClient[dict[str, Any]] = MongoClient(uri, serverSelectionTimeoutMS=10_000, timeoutMS=30_000)
    try:
        return sorted(
            (index["name"], list(index["key"].items()), bool(index.get("unique")))
            for index in client[db_name][COLLECTION].list_indexes()
        )
    finally:
        client.close()


@pytest.fixture(scope="module")
def exchange(server: tuple[str, str]) -> dict[str, Any]:
    tag = uuid.uuid4().hex[:8]
    shared, ours_new, mastras_new = f"om_{tag}", f"om_{tag}_ours", f"om_{tag}_mastra"
    ours = asyncio.run(_use(server, shared, om.write_ours))
    asyncio.run(_use(server, ours_new, _touch))
    answer = run_mastra(
        {
            "store": "mongodb",
            "url": server[0],
            "dbName": shared,
            "fresh": mastras_new,
            "read": om.READS,
            "write": om.WRITE,
        },
        script=om.SCRIPT,
    )
    theirs = asyncio.run(_use(server, shared, om.read_theirs))
    indexes = (om_indexes(server[0], ours_new), om_indexes(server[0], mastras_new))
    return {"ours": ours, "answer": answer, "theirs": theirs, "indexes": indexes}


def test_mastra_reads_what_python_wrote(exchange: dict[str, Any]) -> None:
    om.check_mastra_reads_ours(exchange["ours"], exchange["answer"])


def test_python_reads_what_mastra_wrote(exchange: dict[str, Any]) -> None:
    om.check_we_read_mastras(exchange["theirs"], exchange["answer"])


def test_the_indexes_are_mastras(exchange: dict[str, Any]) -> None:
    ours, theirs = exchange["indexes"]
    assert len(ours) == 3, ours  # _id, id (unique), lookupKey + generationCount
    assert ours == theirs


def test_only_the_owner_reads_a_thread_record(exchange: dict[str, Any]) -> None:
    om.check_only_the_owner_reads(exchange["theirs"], exchange["answer"])
