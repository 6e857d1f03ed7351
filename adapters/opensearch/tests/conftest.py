"""Fixtures: one real OpenSearch node per test session (the kit's native launcher, or
``MASTRA_MEMORY_TEST_OPENSEARCH_URL``), and a store on it with a private index prefix per test. Without Java
and Maven the tests that need the node skip with the reason, and fail under CI
(:mod:`mastra_memory_conformance.missing`)."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from mastra_memory_opensearch import OpenSearchSettings
from mastra_memory_opensearch.store import OpenSearchVector


@pytest.fixture(scope="session")
def opensearch_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real node: the one named by ``MASTRA_MEMORY_TEST_OPENSEARCH_URL``, else a private native node."""
    url = os.environ.get("MASTRA_MEMORY_TEST_OPENSEARCH_URL", "").strip()
    if url:
        yield url
        return
    from mastra_memory_conformance.missing import started

    from mastra_memory_opensearch.testing.server import opensearch_server

    with started(
        opensearch_server(Path(tmp_path_factory.mktemp("opensearch"))), "OpenSearch (the tests' node)"
    ) as url:
        yield url


@pytest.fixture
async def store(opensearch_url: str) -> AsyncIterator[OpenSearchVector]:
    """A store whose indexes live under a prefix of their own (removed afterwards)."""
    prefix = f"t{uuid.uuid4().hex[:8]}_"
    vector = OpenSearchVector(OpenSearchSettings(url=opensearch_url, index_prefix=prefix))
    try:
        yield vector
    finally:
        for name in await vector.list_indexes():
            await vector.delete_index(name)
        await vector.close()
