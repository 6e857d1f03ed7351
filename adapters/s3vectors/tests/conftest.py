"""One S3Mock (S3 Vectors emulator) per test session, on loopback; every store uses dummy credentials.

The server comes from :func:`mastra_memory_s3vectors.testing.s3mock.s3mock_server` (the Maven Central jar,
built once into ``~/.cache/mastra-memory/s3mock``); without Java the tests that need it skip with the
reason, and fail under CI (:mod:`mastra_memory_conformance.missing`). Nothing here can reach AWS: the
endpoint is always the loopback S3Mock, the credentials are dummies, the instance-metadata lookup is
disabled, and pytest-socket allows only loopback hosts (``addopts``).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from mastra_memory_conformance.missing import started

from mastra_memory_s3vectors import S3VectorsSettings
from mastra_memory_s3vectors.store import S3VectorsVector
from mastra_memory_s3vectors.testing.s3mock import S3MockEndpoints, s3mock_server

# Never the instance metadata service, never a profile or a real key from the environment.
for _name in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
    os.environ.pop(_name, None)
os.environ["AWS_EC2_METADATA_DISABLED"] = "true"

DUMMY: dict[str, Any] = {"aws_access_key_id": "mastra-test", "aws_secret_access_key": "mastra-test"}


@pytest.fixture(scope="session")
def s3mock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3MockEndpoints]:
    """The session's S3Mock."""
    with started(
        s3mock_server(Path(tmp_path_factory.mktemp("s3mock"))), "S3Mock (the tests' S3 Vectors server)"
    ) as server:
        yield server


def make_settings(s3mock: S3MockEndpoints, **overrides: Any) -> S3VectorsSettings:
    """Settings for a fresh bucket on the test server."""
    values: dict[str, Any] = {
        "bucket": f"t-{uuid.uuid4().hex[:12]}",
        "region": "us-east-1",
        "endpoint_url": s3mock.vectors,
        "create_bucket": True,
        **DUMMY,
    }
    values.update(overrides)
    return S3VectorsSettings(**values)


@pytest.fixture
def settings(s3mock: S3MockEndpoints) -> S3VectorsSettings:
    return make_settings(s3mock)


@pytest_asyncio.fixture
async def store(settings: S3VectorsSettings) -> AsyncIterator[S3VectorsVector]:
    """A vector store on a fresh bucket."""
    vector = S3VectorsVector(settings)
    try:
        yield vector
    finally:
        await vector.close()
