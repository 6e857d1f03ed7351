"""Fixtures for the memory tests: real SQLite stores in memory, a clean embedding cache, and the §8.3
memory scenario (resources A and B, threads A1, A2, B1, messages a1..a4 and b1)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from mastra_memory.embedders import get_embedding_cache
from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

from .memory_helpers import SCENARIO_OPTIONS, seed


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    """The process-wide embedding cache starts empty in every test (tests count provider calls)."""
    get_embedding_cache().clear()
    yield
    get_embedding_cache().clear()


@pytest.fixture
def storage() -> SQLiteStorage:
    return SQLiteStorage(":memory:")


@pytest.fixture
def vector() -> SQLiteVector:
    return SQLiteVector(":memory:")


@pytest.fixture
async def scenario(storage: SQLiteStorage, vector: SQLiteVector) -> AsyncIterator[Memory]:
    """§8.3: hash/64, last_messages=1, semantic_recall={top_k: 1, message_range: 1} (resource scope)."""
    memory = Memory(storage=storage, vector=vector, embedder="hash/64", options=SCENARIO_OPTIONS)
    await seed(memory)
    yield memory
    await memory.close()
