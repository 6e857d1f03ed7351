"""Message writes (docs/spec.md §4.5): saves fill the resource and bump the thread, a batch is atomic,
saving an existing id under another thread moves it, updates merge content and move messages, deletes
bump only the threads that lost a message; ``list_messages_by_id``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from mastra_memory.errors import ThreadNotFoundError, ValidationError
from mastra_memory.storage import MemoryStorage

from ...scenarios import at, message
from .base import ids_of, new_prefix, save_threads, seeded_scenario, strip, thread_snapshot, updated_at_of

__all__ = ["MessageWritesSuite"]


@pytest.mark.asyncio
class MessageWritesSuite:
    """Saving, updating and deleting messages (a part of ``MemoryStorageSuite``)."""

    # --- save_messages --------------------------------------------------------------------------

    @pytest.mark.conformance(domain="storage", item="save_messages")
    async def test_save_messages_fills_resource_and_bumps_the_thread(self, storage: MemoryStorage) -> None:
        p = new_prefix()
        await save_threads(storage, p, ("t", "r"))
        before = await updated_at_of(storage, p + "t")
        saved = await storage.save_messages([{"role": "user", "content": "hi", "threadId": p + "t"}])
        assert saved[0].resource_id == p + "r", "resource_id=None is filled from the thread"
        assert saved[0].content.content == "hi"
        assert saved[0].id, "a missing id is generated"
        assert ids_of(await storage.list_messages(p + "t")) == [saved[0].id]
        assert await updated_at_of(storage, p + "t") > before
        assert await storage.save_messages([]) == []

    @pytest.mark.conformance(domain="storage", item="save_messages")
    async def test_save_without_timestamps_keeps_list_order(self, storage: MemoryStorage) -> None:
        p = new_prefix()
        await save_threads(storage, p, ("t", "r"))
        batch = [
            {"id": f"{p}z{9 - i}", "role": "user", "content": str(i), "thread_id": p + "t"} for i in range(10)
        ]
        await storage.save_messages(batch)
        await storage.save_messages(
            [{"id": p + "a-last", "role": "assistant", "content": "x", "thread_id": p + "t"}]
        )
        expected = [f"z{9 - i}" for i in range(10)] + ["a-last"]
        assert strip(p, ids_of(await storage.list_messages(p + "t"))) == expected

    @pytest.mark.conformance(domain="storage", item="atomic save")
    async def test_a_batch_with_one_invalid_message_saves_nothing(self, storage: MemoryStorage) -> None:
        p = new_prefix()
        await save_threads(storage, p, ("t", "r"), ("u", "r2"))
        await storage.save_messages([message(p + "m1", p + "t", "one", seconds=1)])
        before = await thread_snapshot(storage, [p + "t", p + "u"])
        good = message(p + "m2", p + "t", "two", seconds=2)
        changed = message(p + "m1", p + "t", "changed", seconds=1)
        moved = message(p + "m1", p + "u", "moved", seconds=1)
        bad_batches: list[tuple[str, list[dict[str, Any]], type[Exception]]] = [
            ("missing thread", [good, message(p + "x", p + "nope")], ThreadNotFoundError),
            ("blank thread", [changed, {**message(p + "x", p + "t"), "thread_id": ""}], ValidationError),
            (
                "resource mismatch",
                [moved, {**message(p + "x", p + "t"), "resource_id": p + "other"}],
                ValidationError,
            ),
            ("bad role", [good, {**message(p + "x", p + "t"), "role": "robot"}], ValidationError),
            (
                "naive datetime",
                [changed, {**message(p + "x", p + "t"), "created_at": datetime(2024, 1, 1)}],
                ValidationError,
            ),
            ("no content", [good, {"id": p + "x", "role": "user", "thread_id": p + "t"}], ValidationError),
        ]
        for label, batch, error in bad_batches:
            with pytest.raises(error):
                await storage.save_messages(batch)
            assert await thread_snapshot(storage, [p + "t", p + "u"]) == before, (
                f"a failed save ({label}) changed stored state: saves must be atomic and must not "
                "bump updated_at"
            )

    @pytest.mark.conformance(domain="storage", item="moves")
    async def test_saving_an_existing_id_under_another_thread_moves_it(self, storage: MemoryStorage) -> None:
        p = new_prefix()
        await save_threads(storage, p, ("t1", "r1"), ("t2", "r1"))
        await storage.save_messages(
            [message(p + "m", p + "t1", "first"), message(p + "k", p + "t1", seconds=1)]
        )
        t1, t2 = await updated_at_of(storage, p + "t1"), await updated_at_of(storage, p + "t2")
        [stored] = await storage.save_messages([message(p + "m", p + "t2", "second", seconds=2)])
        assert (stored.thread_id, stored.resource_id, stored.content.content) == (
            p + "t2",
            p + "r1",
            "second",
        )
        assert strip(p, ids_of(await storage.list_messages(p + "t1"))) == ["k"]
        assert strip(p, ids_of(await storage.list_messages(p + "t2", resource_id=p + "r1"))) == ["m"]
        found = await storage.list_messages_by_id([p + "m"])
        assert [(m.id, m.thread_id) for m in found] == [(p + "m", p + "t2")], (
            "the id must never be duplicated"
        )
        assert await updated_at_of(storage, p + "t1") > t1, "the thread a message moved away from is bumped"
        assert await updated_at_of(storage, p + "t2") > t2, "the thread that received the message is bumped"

    # --- update_messages / delete_messages ------------------------------------------------------

    @pytest.mark.conformance(domain="storage", item="update_messages")
    async def test_update_merges_content_and_changes_only_given_fields(self, storage: MemoryStorage) -> None:
        p = new_prefix()
        await save_threads(storage, p, ("t", "r"))
        await storage.save_messages(
            [
                {
                    **message(p + "m", p + "t", "old", seconds=1, metadata={"a": 1, "b": 2}),
                    "content": {
                        "format": 2,
                        "content": "old",
                        "parts": [{"type": "text", "text": "old"}],
                        "metadata": {"a": 1, "b": 2},
                        "providerMetadata": {"x": 1},
                    },
                }
            ]
        )
        before = await updated_at_of(storage, p + "t")
        updated = await storage.update_messages(
            [
                {"id": p + "m", "content": {"content": "new", "metadata": {"b": 3, "c": None}}},
                {"id": p + "ghost", "role": "user"},
            ]
        )
        assert ids_of(updated) == [p + "m"], "unknown ids are ignored"
        [stored] = (await storage.list_messages(p + "t")).messages
        assert stored.content.content == "new"
        assert stored.content.metadata == {"a": 1, "b": 3, "c": None}, (
            "content.metadata merges one level deeper"
        )
        assert stored.content.provider_metadata == {"x": 1}, "content keys not given are kept"
        assert [part.model_dump() for part in stored.content.parts] == [{"type": "text", "text": "old"}]
        assert stored == updated[0]
        assert await updated_at_of(storage, p + "t") > before
        [changed] = await storage.update_messages(
            [{"id": p + "m", "role": "assistant", "createdAt": "2024-01-01T00:00:09Z", "type": "v2"}]
        )
        assert (changed.role, changed.created_at, changed.content.content) == ("assistant", at(9), "new")
        assert await storage.update_messages([]) == []

    @pytest.mark.conformance(domain="storage", item="moves")
    async def test_update_moves_between_threads_and_bumps_both(self, storage: MemoryStorage) -> None:
        p = new_prefix()
        await save_threads(storage, p, ("t1", "r1"), ("t2", "r1"))
        await storage.save_messages([message(p + "m", p + "t1")])
        t1, t2 = await updated_at_of(storage, p + "t1"), await updated_at_of(storage, p + "t2")
        [moved] = await storage.update_messages([{"id": p + "m", "threadId": p + "t2"}])
        assert (moved.thread_id, moved.resource_id) == (p + "t2", p + "r1")
        assert ids_of(await storage.list_messages(p + "t1")) == []
        assert ids_of(await storage.list_messages(p + "t2", resource_id=p + "r1")) == [p + "m"]
        assert await updated_at_of(storage, p + "t1") > t1
        assert await updated_at_of(storage, p + "t2") > t2

    @pytest.mark.conformance(domain="storage", item="atomic save")
    async def test_update_is_atomic(self, storage: MemoryStorage) -> None:
        p = new_prefix()
        await save_threads(storage, p, ("t", "r"))
        await storage.save_messages(
            [message(p + "m1", p + "t", "one"), message(p + "m2", p + "t", "two", seconds=1)]
        )
        before = await thread_snapshot(storage, [p + "t"])
        change = {"id": p + "m1", "content": {"content": "changed"}}
        for label, second, error in [
            ("move to a missing thread", {"id": p + "m2", "thread_id": p + "nope"}, ThreadNotFoundError),
            ("bad role", {"id": p + "m2", "role": "tool"}, ValidationError),
            ("unknown field", {"id": p + "m2", "colour": "red"}, ValidationError),
        ]:
            with pytest.raises(error):
                await storage.update_messages([change, second])
            assert await thread_snapshot(storage, [p + "t"]) == before, (
                f"a failed update ({label}) changed stored state"
            )

    @pytest.mark.conformance(domain="storage", item="delete_messages")
    async def test_delete_messages_bumps_only_threads_that_lost_a_message(
        self, storage: MemoryStorage
    ) -> None:
        scenario = await seeded_scenario(storage)
        a1, b1 = scenario.id("A1"), scenario.id("B1")
        before_a1 = await updated_at_of(storage, a1)
        b1_thread = await storage.get_thread_by_id(b1)
        await storage.delete_messages([scenario.id("a2"), scenario.id("nope")])
        await storage.delete_messages([])
        assert strip(scenario.prefix, ids_of(await storage.list_messages(a1))) == ["a1", "a3"]
        assert await updated_at_of(storage, a1) > before_a1
        assert await storage.get_thread_by_id(b1) == b1_thread, "a thread that lost nothing is not bumped"
        with pytest.raises(ValidationError):
            await storage.delete_messages([" "])

    @pytest.mark.conformance(domain="storage", item="list_messages_by_id")
    async def test_list_messages_by_id(self, storage: MemoryStorage) -> None:
        scenario = await seeded_scenario(storage)
        found = await storage.list_messages_by_id(scenario.ids(["b1", "a3", "a1", "zz"]))
        assert strip(scenario.prefix, ids_of(found)) == ["a1", "a3", "b1"], "ascending (created_at, id)"
        assert found[0].content.content == "alpha apples"
        assert await storage.list_messages_by_id([]) == []
        with pytest.raises(ValidationError):
            await storage.list_messages_by_id([""])
