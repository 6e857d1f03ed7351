"""Fixtures: a store on each real engine, and an edge store whose backend logs its requests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mastra_memory_qdrant.store import QdrantVector
from qdrant_helpers import MODES, RecordingEdge, settings_for


@pytest.fixture(params=MODES)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[QdrantVector]:
    """A store on each engine (edge, client in memory, client on disk)."""
    vector = QdrantVector(settings_for(request.param, tmp_path))
    try:
        yield vector
    finally:
        await vector.close()


@pytest.fixture
async def recording(tmp_path: Path) -> AsyncIterator[tuple[QdrantVector, RecordingEdge]]:
    """An edge store whose backend logs what it sends."""
    settings = settings_for("edge", tmp_path)
    backend = RecordingEdge(settings)
    vector = QdrantVector(settings, backend=backend)
    try:
        yield vector, backend
    finally:
        await vector.close()
