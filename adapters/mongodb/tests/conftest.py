"""A real MongoDB wire-protocol server for the adapter's own tests: FerretDB v1, one per test session.

The server comes from :func:`mastra_memory_mongodb.testing.ferretdb.ferretdb_server` (built once from the Go
module proxy); ``MASTRA_MEMORY_TEST_MONGODB_URI`` points the tests at an existing MongoDB instead (then
with ``dialect="mongodb"``). Each test gets a database of its own. Without Go (and no build in the
cache) the tests that need the server skip with the reason, and fail under CI
(:mod:`mastra_memory_conformance.missing`).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from mastra_memory_conformance.missing import started

from mastra_memory_mongodb import MongoDBSettings
from mastra_memory_mongodb.storage import MongoDBStorage
from mastra_memory_mongodb.store import MongoDBVector
from mastra_memory_mongodb.testing.ferretdb import ferretdb_server

URI_ENV = "MASTRA_MEMORY_TEST_MONGODB_URI"


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """``(uri, dialect)`` of the test server."""
    existing = os.environ.get(URI_ENV, "").strip()
    if existing:
        yield existing, "mongodb"
        return
    ferretdb = ferretdb_server(Path(tmp_path_factory.mktemp("ferretdb")))
    with started(ferretdb, "FerretDB (the tests' MongoDB server)") as uri:
        yield uri, "ferretdb"


@pytest.fixture
def settings(server: tuple[str, str]) -> MongoDBSettings:
    """Settings for a fresh database on the test server (exact search)."""
    uri, dialect = server
    return MongoDBSettings(
        url=uri, db_name=f"t_{uuid.uuid4().hex[:10]}", dialect=dialect, search_mode="exact"
    )


@pytest_asyncio.fixture
async def store(settings: MongoDBSettings) -> AsyncIterator[MongoDBVector]:
    vector = MongoDBVector(settings)
    try:
        yield vector
    finally:
        await vector.close()


@pytest_asyncio.fixture
async def storage(settings: MongoDBSettings) -> AsyncIterator[MongoDBStorage]:
    memory = MongoDBStorage(settings)
    await memory.init()
    try:
        yield memory
    finally:
        await memory.close()
