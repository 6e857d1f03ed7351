"""``mastra_memory.sync.wrap(Memory(...))`` from plain, non-async code."""

from __future__ import annotations

from pathlib import Path

import pytest

from mastra_memory import sync
from mastra_memory.errors import ThreadOwnershipError
from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage

from .memory_helpers import msg, ts


def test_memory_through_the_sync_facade(tmp_path: Path) -> None:
    db = str(tmp_path / "memory.db")
    memory = sync.wrap(
        Memory(
            storage=SQLiteStorage(db),
            embedder="hash/32",
            options={"lastMessages": 2, "semanticRecall": {"topK": 1, "messageRange": 0}},
        )
    )
    thread = memory.create_thread("r", "t", title="Sync")
    assert thread.id == "t"
    saved = memory.save_messages(
        [
            msg(f"m{i}", "t", text, ts(i))
            for i, text in enumerate(["red apples", "blue sky", "green grass"], 1)
        ]
    )
    assert [m.id for m in saved.messages] == ["m1", "m2", "m3"]
    result = memory.recall("t", resource_id="r", vector_search_string="red apples")
    assert [m.id for m in result.messages] == ["m1", "m2", "m3"]
    assert [h.message_id for h in result.hits] == ["m1"]
    with pytest.raises(ThreadOwnershipError):
        memory.recall("t", resource_id="someone-else")
    memory.delete_messages(["m1"])
    assert [m.id for m in memory.recall("t", per_page=False).messages] == ["m2", "m3"]
    # The default vector store lives in the same file as the SQLite storage.
    assert memory.unwrap().vector.settings.url == db  # type: ignore[attr-defined]
    assert memory.options.last_messages == 2  # plain attributes pass through
    memory.close()


def test_nested_objects_block_too(tmp_path: Path) -> None:
    """``memory.storage``, ``memory.vector``, ``memory.embedder``, returned async objects: no asyncio."""
    db = str(tmp_path / "memory.db")
    with sync.wrap(
        Memory(
            storage=SQLiteStorage(db),
            embedder="hash/32",
            options={"lastMessages": 5, "semanticRecall": {"topK": 1, "messageRange": 0}},
        )
    ) as memory:
        memory.create_thread("r", "t", title="Nested")
        memory.save_messages([msg("m1", "t", "red apples", ts(1)), msg("m2", "t", "blue sky", ts(2))])
        memory.settled(timeout=10)

        storage = memory.storage
        assert isinstance(storage, sync.SyncProxy)
        page = storage.list_threads(filter={"resourceId": "r"})
        assert [t.id for t in page.threads] == ["t"]
        assert storage.get_thread_by_id("t").title == "Nested"

        embedded = memory.embedder.embed_many(["red apples"])
        assert len(embedded.embeddings) == 1
        vector = memory.vector
        indexes = vector.list_indexes()
        assert indexes
        hits = vector.query(indexes[0], embedded.embeddings[0], top_k=1)
        assert hits[0].metadata["message_id"] == "m1"

        indexer = memory.indexer()  # a plain method returning an async object
        assert isinstance(indexer, sync.SyncProxy)
        assert memory.options.last_messages == 5  # plain values pass through unwrapped
        assert not isinstance(memory.options, sync.SyncProxy)
    assert sync.wrap(memory) is memory  # wrapping twice is a no-op


class _Slow:
    async def wait(self, seconds: float) -> str:
        import asyncio

        await asyncio.sleep(seconds)
        return "done"

    async def count(self, n: int):  # type: ignore[no-untyped-def]
        for i in range(n):
            yield i


def test_timeout_bounds_calls_and_async_iterators_block() -> None:
    slow = sync.wrap(_Slow(), timeout=0.2)
    assert slow.wait(0) == "done"
    with pytest.raises(TimeoutError):
        slow.wait(5)
    assert list(slow.count(3)) == [0, 1, 2]


async def test_refuses_inside_a_running_loop() -> None:
    with pytest.raises(RuntimeError, match="await"):
        sync.wrap(_Slow()).wait(0)
