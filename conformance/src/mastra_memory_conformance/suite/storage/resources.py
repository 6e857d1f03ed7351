"""Resources (docs/spec.md §4.2) and the optional features a storage declares:
``list_messages_by_resource_id`` and ``clone_thread`` (``CapabilityError`` when not declared).
"""

from __future__ import annotations

import pytest

from mastra_memory.capabilities import AdapterCapabilities
from mastra_memory.errors import CapabilityError, ThreadNotFoundError, ValidationError
from mastra_memory.storage import MemoryStorage

from ...report import Outcome
from ...scenarios import at
from .base import declared, ids_of, new_prefix, seeded_scenario, strip

__all__ = ["ResourcesSuite"]


@pytest.mark.asyncio
class ResourcesSuite:
    """Resources and the optional features (a part of ``MemoryStorageSuite``)."""

    # --- resources ------------------------------------------------------------------------------

    @pytest.mark.conformance(domain="storage", item="resources")
    async def test_resources(self, storage: MemoryStorage) -> None:
        r = new_prefix() + "r"
        assert await storage.get_resource_by_id(r) is None
        created = await storage.update_resource(r, working_memory="# Notes", metadata={"a": 1, "b": {"x": 1}})
        assert (created.id, created.working_memory, created.metadata) == (
            r,
            "# Notes",
            {"a": 1, "b": {"x": 1}},
        )
        assert await storage.get_resource_by_id(r) == created, "update_resource creates a missing resource"
        merged = await storage.update_resource(r, metadata={"b": {"y": 2}, "c": 3})
        assert (merged.working_memory, merged.metadata) == ("# Notes", {"a": 1, "b": {"y": 2}, "c": 3})
        assert merged.updated_at > created.updated_at
        replaced = await storage.update_resource(r, working_memory="new")
        assert (replaced.working_memory, replaced.metadata) == ("new", {"a": 1, "b": {"y": 2}, "c": 3})
        assert replaced.updated_at > merged.updated_at
        assert await storage.get_resource_by_id(r) == replaced
        saved = await storage.save_resource({"id": r, "workingMemory": None, "createdAt": at(0)})
        assert (saved.working_memory, saved.metadata, saved.created_at) == (None, None, at(0))
        assert await storage.get_resource_by_id(r) == saved, "save_resource replaces the whole resource"

    # --- optional capabilities ------------------------------------------------------------------

    @pytest.mark.conformance(domain="storage", item="list_messages_by_resource_id")
    async def test_list_messages_by_resource_id(
        self, storage: MemoryStorage, capabilities: AdapterCapabilities, outcome: Outcome
    ) -> None:
        scenario = await seeded_scenario(storage)
        a, b, s = scenario.id("A"), scenario.id("B"), scenario.prefix
        if not declared(storage, capabilities).list_by_resource:
            with pytest.raises(CapabilityError):
                await storage.list_messages_by_resource_id(a)
            outcome.unsupported("list_messages_by_resource_id", "declared list_by_resource=False")
            return
        page = await storage.list_messages_by_resource_id(a, per_page=3)
        assert (strip(s, ids_of(page)), page.total, page.has_more) == (["a1", "a2", "a3"], 4, True)
        page = await storage.list_messages_by_resource_id(a, per_page=2, include=[scenario.window("a4")])
        assert (strip(s, ids_of(page)), page.has_more) == (["a1", "a2", "a4"], True)
        page = await storage.list_messages_by_resource_id(b, include=[scenario.window("a2", 1, 1)])
        assert strip(s, ids_of(page)) == ["b1"], "include windows never cross resources"
        with pytest.raises(ValidationError, match="resource_id must be a non-empty string"):
            await storage.list_messages_by_resource_id(" ")

    @pytest.mark.conformance(domain="storage", item="clone_thread")
    async def test_clone_thread(
        self, storage: MemoryStorage, capabilities: AdapterCapabilities, outcome: Outcome
    ) -> None:
        scenario = await seeded_scenario(storage)
        a1, s = scenario.id("A1"), scenario.prefix
        if not declared(storage, capabilities).clone_thread:
            with pytest.raises(CapabilityError):
                await storage.clone_thread(a1)
            outcome.unsupported("clone_thread", "declared clone_thread=False")
            return
        await storage.update_thread(a1, title="Fruit", metadata={"project": "p"})
        result = await storage.clone_thread(a1, new_thread_id=s + "copy")
        thread = result.thread
        assert (thread.id, thread.resource_id) == (s + "copy", scenario.id("A"))
        assert thread.metadata is not None
        assert (thread.metadata["source_thread_id"], thread.metadata["last_message_id"]) == (
            a1,
            scenario.id("a3"),
        )
        assert thread.metadata["project"] == "p"
        assert "cloned_at" in thread.metadata
        originals = scenario.ids(["a1", "a2", "a3"])
        assert list(result.message_id_map) == originals
        assert set(result.message_id_map.values()).isdisjoint(originals), "clones get new ids"
        stored = (await storage.list_messages(s + "copy")).messages
        assert stored == result.messages
        assert [m.content.content for m in stored] == ["alpha apples", "alpha bananas", "alpha cherries"]
        assert [m.id for m in stored] == [result.message_id_map[i] for i in originals]
        assert all(m.thread_id == s + "copy" and m.resource_id == scenario.id("A") for m in stored)
        assert ids_of(await storage.list_messages(a1)) == originals, "the source thread is unchanged"
        newest = await storage.clone_thread(a1, message_limit=2, resource_id=scenario.id("A"), title="mine")
        assert list(newest.message_id_map) == scenario.ids(["a2", "a3"]), "message_limit keeps the newest"
        assert (newest.thread.resource_id, newest.thread.title) == (scenario.id("A"), "mine")
        assert all(m.resource_id == scenario.id("A") for m in newest.messages)
        picked = await storage.clone_thread(
            a1, message_filter={"message_ids": scenario.ids(["a3", "a1", "b1"])}
        )
        assert list(picked.message_id_map) == scenario.ids(["a1", "a3"])
        ranged = await storage.clone_thread(a1, message_filter={"startDate": at(2), "endDate": at(2)})
        assert list(ranged.message_id_map) == [scenario.id("a2")]
        with pytest.raises(ThreadNotFoundError):
            await storage.clone_thread(s + "missing")
