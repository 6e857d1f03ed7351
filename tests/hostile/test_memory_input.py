"""Bad arguments to ``Memory``'s thread API are typed errors before any I/O (issue 12, finding 7)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from mastra_memory.errors import ValidationError
from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector


@pytest.fixture
async def memory() -> AsyncIterator[Memory]:
    m = Memory(storage=SQLiteStorage(":memory:"), vector=SQLiteVector(":memory:"), embedder="hash/64")
    await m.create_thread("alice", "kept", title="kept", metadata={"topic": "travel"})
    yield m
    await m.close()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"metadata": "x"},
        {"metadata": ["topic", "travel"]},
        {"metadata": 5},
        {"title": 5},
        {"title": None},
    ],
    ids=["metadata-str", "metadata-list", "metadata-int", "title-int", "title-none"],
)
async def test_create_thread_refuses_bad_arguments_and_keeps_what_was_stored(
    memory: Memory, kwargs: dict[str, Any]
) -> None:
    with pytest.raises(ValidationError, match="must be"):
        await memory.create_thread("alice", "kept", **kwargs)
    kept = await memory.get_thread_by_id("kept", "alice")
    assert kept is not None
    assert (kept.title, kept.metadata) == ("kept", {"topic": "travel"})
