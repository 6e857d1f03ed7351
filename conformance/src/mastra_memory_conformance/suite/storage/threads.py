"""Threads by id (docs/spec.md §4.2): get with its resource check, save (insert or replace), update (title
replaced, metadata merged), strictly increasing ``updated_at`` bumps that reads never cause, and a delete
that cascades to the thread's messages only.
"""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime, timedelta

import pytest

from mastra_memory.errors import ThreadNotFoundError, ValidationError
from mastra_memory.storage import MemoryStorage

from ...scenarios import at
from .base import ids_of, new_prefix, seeded_scenario, strip, updated_at_of

__all__ = ["ThreadsSuite"]

_ONE_MS = timedelta(milliseconds=1)


@pytest.mark.asyncio
class ThreadsSuite:
    """Threads by id and their ``updated_at`` (a part of ``MemoryStorageSuite``)."""

    # --- threads --------------------------------------------------------------------------------

    @pytest.mark.conformance(domain="storage", item="threads")
    async def test_get_thread_checks_the_resource(self, storage: MemoryStorage) -> None:
        scenario = await seeded_scenario(storage)
        a1, a, b = scenario.id("A1"), scenario.id("A"), scenario.id("B")
        thread = await storage.get_thread_by_id(a1)
        assert thread is not None
        assert (thread.id, thread.resource_id) == (a1, a)
        assert await storage.get_thread_by_id(a1, resource_id=a) == thread
        assert await storage.get_thread_by_id(a1, resource_id=b) is None, "another resource's thread leaked"
        assert await storage.get_thread_by_id(scenario.id("missing")) is None
        with pytest.raises(ValidationError):
            await storage.get_thread_by_id(a1, resource_id="")

    @pytest.mark.conformance(domain="storage", item="threads")
    async def test_save_thread_inserts_or_replaces(self, storage: MemoryStorage) -> None:
        p = new_prefix()
        saved = await storage.save_thread(
            {"id": p + "t", "resourceId": p + "r", "title": "one", "metadata": {"a": 1, "nested": {"x": [1]}}}
        )
        assert (saved.title, saved.metadata) == ("one", {"a": 1, "nested": {"x": [1]}})
        assert await storage.get_thread_by_id(p + "t") == saved
        replaced = await storage.save_thread(saved.model_copy(update={"title": "two", "metadata": None}))
        assert (replaced.title, replaced.metadata) == ("two", None)
        assert await storage.get_thread_by_id(p + "t") == replaced
        with pytest.raises(ValidationError):
            await storage.save_thread({"id": p + "orphan"})  # resource_id is required

    @pytest.mark.conformance(domain="storage", item="threads")
    async def test_update_thread_replaces_title_and_merges_metadata(self, storage: MemoryStorage) -> None:
        p = new_prefix()
        original = await storage.save_thread(
            {"id": p + "t", "resource_id": p + "r", "title": "old", "metadata": {"a": 1, "b": {"x": 1}}}
        )
        updated = await storage.update_thread(p + "t", metadata={"b": {"y": 2}, "c": None})
        assert (updated.title, updated.metadata) == ("old", {"a": 1, "b": {"y": 2}, "c": None}), (
            "metadata must be merged one level deep (shallow): given keys replace stored keys"
        )
        assert updated.updated_at > original.updated_at
        assert updated.created_at == original.created_at
        renamed = await storage.update_thread(p + "t", title="new")
        assert (renamed.title, renamed.metadata) == ("new", {"a": 1, "b": {"y": 2}, "c": None})
        assert renamed.updated_at > updated.updated_at
        assert await storage.get_thread_by_id(p + "t") == renamed
        with pytest.raises(ThreadNotFoundError):
            await storage.update_thread(p + "missing", title="x")
        assert await storage.get_thread_by_id(p + "missing") is None

    @pytest.mark.conformance(domain="storage", item="updated_at")
    async def test_bumps_are_strictly_increasing_within_one_millisecond(self, storage: MemoryStorage) -> None:
        """``updated_at = max(now, previous + 1 ms)``: a stamp ahead of the clock still moves forward."""
        p = new_prefix()
        ahead = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=1)
        await storage.save_thread(
            {"id": p + "t", "resource_id": p + "r", "created_at": at(0), "updated_at": ahead}
        )
        first = await storage.update_thread(p + "t", title="one")
        second = await storage.update_thread(p + "t", title="two")
        assert (first.updated_at, second.updated_at) == (ahead + _ONE_MS, ahead + 2 * _ONE_MS), (
            "two bumps of a thread whose updated_at is ahead of the clock must each add exactly 1 ms"
        )
        await storage.save_thread({"id": p + "u", "resource_id": p + "r"})
        stamps = [(await storage.update_thread(p + "u", metadata={"n": n})).updated_at for n in range(10)]
        assert all(a < b for a, b in itertools.pairwise(stamps)), f"bumps not strictly increasing: {stamps}"
        results = await asyncio.gather(
            *(storage.update_thread(p + "u", metadata={str(i): i}) for i in range(10))
        )
        concurrent = sorted(r.updated_at for r in results)
        assert len(set(concurrent)) == 10, "concurrent bumps of one thread produced equal updated_at values"
        assert concurrent[0] > stamps[-1]
        final = await storage.get_thread_by_id(p + "u")
        assert final is not None
        assert final.metadata == {"n": 9, **{str(i): i for i in range(10)}}

    @pytest.mark.conformance(domain="storage", item="updated_at")
    async def test_reads_never_bump(self, storage: MemoryStorage) -> None:
        scenario = await seeded_scenario(storage)
        a1 = scenario.id("A1")
        before = await updated_at_of(storage, a1)
        await storage.list_messages(a1, include=[scenario.window("a2", 1, 1)])
        await storage.list_messages_by_id(scenario.ids(["a1", "a2"]))
        await storage.list_threads(filter={"resource_id": scenario.id("A")})
        await storage.get_thread_by_id(a1, resource_id=scenario.id("A"))
        assert await updated_at_of(storage, a1) == before

    @pytest.mark.conformance(domain="storage", item="threads")
    async def test_delete_thread_cascades_to_its_messages_only(self, storage: MemoryStorage) -> None:
        scenario = await seeded_scenario(storage)
        await storage.delete_thread(scenario.id("A1"))
        await storage.delete_thread(scenario.id("never-existed"))  # a no-op
        assert await storage.get_thread_by_id(scenario.id("A1")) is None
        left = await storage.list_messages_by_id(scenario.ids(["a1", "a2", "a3", "a4", "b1"]))
        assert strip(scenario.prefix, ids_of(left)) == ["a4", "b1"]
        assert ids_of(await storage.list_messages(scenario.id("A1"))) == []
        assert await storage.get_thread_by_id(scenario.id("A2")) is not None
