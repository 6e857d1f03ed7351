"""The storage against a real server: what holds without transactions (FerretDB v1 has none)."""

from __future__ import annotations

import asyncio

from mastra_memory_mongodb.storage import MongoDBStorage


async def test_concurrent_bumps_stay_strictly_increasing(storage: MongoDBStorage) -> None:
    """FerretDB's conditional updates are not atomic; the lock documents keep read-modify-writes apart."""
    await storage.save_thread({"id": "t", "resource_id": "r"})
    results = await asyncio.gather(*(storage.update_thread("t", metadata={str(i): i}) for i in range(12)))
    stamps = sorted(r.updated_at for r in results)
    assert len(set(stamps)) == len(stamps)
    final = await storage.get_thread_by_id("t")
    assert final is not None
    assert final.metadata == {str(i): i for i in range(12)}


async def test_concurrent_resource_updates_lose_nothing(storage: MongoDBStorage) -> None:
    await asyncio.gather(*(storage.update_resource("u", metadata={f"k{i}": i}) for i in range(10)))
    resource = await storage.get_resource_by_id("u")
    assert resource is not None
    assert resource.metadata == {f"k{i}": i for i in range(10)}


async def test_include_windows_are_cursor_queries_on_the_thread(storage: MongoDBStorage) -> None:
    await storage.save_thread({"id": "w", "resource_id": "r"})
    messages = [
        {
            "id": f"m{i}",
            "thread_id": "w",
            "role": "user",
            "content": f"text {i}",
            "created_at": 1_700_000_000_000,
        }
        for i in range(6)
    ]
    await storage.save_messages(messages)
    page = await storage.list_messages(
        "w", per_page=0, include=[{"id": "m3", "withPreviousMessages": 2, "withNextMessages": 1}]
    )
    assert [m.id for m in page.messages] == ["m1", "m2", "m3", "m4"]  # equal created_at: ordered by id


async def test_concurrent_message_updates_lose_nothing(storage: MongoDBStorage) -> None:
    """``update_messages`` reads each message with ``lock=True`` and merges ``content.metadata``: without
    transactions the hook must hold a lock per message, or concurrent merges overwrite each other."""
    await storage.save_thread({"id": "tm", "resource_id": "r"})
    await storage.save_messages([{"id": "m", "thread_id": "tm", "role": "user", "content": "x"}])
    await asyncio.gather(
        *(
            storage.update_messages([{"id": "m", "content": {"metadata": {f"k{i}": i}}}], resource_id="r")
            for i in range(10)
        )
    )
    [stored] = await storage.list_messages_by_id(["m"])
    assert stored.content.metadata == {f"k{i}": i for i in range(10)}
