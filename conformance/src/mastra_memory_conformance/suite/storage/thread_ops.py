"""Thread operations (docs/spec.md §4.2, §4.4): moving a thread and its messages to another resource,
archiving (listed only when asked), and cloning into another resource.
"""

from __future__ import annotations

import pytest

from mastra_memory.capabilities import AdapterCapabilities
from mastra_memory.errors import ThreadNotFoundError, ThreadOwnershipError, ValidationError
from mastra_memory.storage import MemoryStorage
from mastra_memory.storage.archive import ARCHIVED_AT_KEY, ARCHIVED_KEY

from ...report import Outcome
from .base import (
    alice_and_bob,
    assert_refused,
    declared,
    ids_of,
    new_prefix,
    save_threads,
    strip,
    thread_snapshot,
    updated_at_of,
)

__all__ = ["ThreadOperationsSuite"]


@pytest.mark.asyncio
class ThreadOperationsSuite:
    """Moving, archiving and cloning threads (a part of ``MemoryStorageSuite``)."""

    # --- thread operations: move, archive, clone into a resource (docs/spec.md §4.2, §4.4) ---------

    @pytest.mark.conformance(domain="storage", item="thread operations")
    async def test_update_thread_resource_id_moves_the_thread_and_its_messages(
        self, storage: MemoryStorage
    ) -> None:
        """§4.5: one transaction moves the thread and every message; the old resource sees none of it."""
        p = await alice_and_bob(storage)
        before = await updated_at_of(storage, p + "ta")
        moved = await storage.update_thread_resource_id(
            p + "ta", p + "carol", expected_resource_id=p + "alice"
        )
        assert (moved.id, moved.resource_id) == (p + "ta", p + "carol")
        assert moved.updated_at > before, "a move bumps updated_at"
        assert await storage.get_thread_by_id(p + "ta") == moved
        assert await storage.get_thread_by_id(p + "ta", resource_id=p + "alice") is None
        page = await storage.list_messages(p + "ta", per_page=False)
        assert (strip(p, ids_of(page)), {m.resource_id for m in page.messages}) == (
            ["a1", "a2"],
            {p + "carol"},
        )
        old = await storage.list_messages(p + "ta", resource_id=p + "alice", per_page=False)
        assert old.messages == [], "the old resource reads none of the moved messages"
        window = await storage.list_messages(
            p + "ta2", resource_id=p + "alice", include=[{"id": p + "a1", "with_next_messages": 1}]
        )
        assert window.messages == [], "include windows of the old resource skip the moved messages"
        alices = await storage.list_threads(filter={"resource_id": p + "alice"}, per_page=False)
        carols = await storage.list_threads(filter={"resource_id": p + "carol"}, per_page=False)
        assert ([t.id for t in alices.threads], [t.id for t in carols.threads]) == ([p + "ta2"], [p + "ta"])
        same = await storage.update_thread_resource_id(p + "ta", p + "carol")
        assert same == moved, "moving to the owner changes nothing"

    @pytest.mark.conformance(domain="storage", item="write ownership")
    async def test_update_thread_resource_id_moves_only_the_named_resources_thread(
        self, storage: MemoryStorage
    ) -> None:
        """§4.5: with ``expected_resource_id`` the thread must belong to it; refused, nothing changes."""
        p = await alice_and_bob(storage)
        snapshot = await thread_snapshot(storage, [p + "ta"])
        with pytest.raises(ThreadOwnershipError) as info:
            await storage.update_thread_resource_id(p + "ta", p + "bob", expected_resource_id=p + "bob")
        assert_refused(info.value, storage, "UPDATE_THREAD_RESOURCE_ID", p)
        assert await thread_snapshot(storage, [p + "ta"]) == snapshot, "a refused move changed the thread"
        with pytest.raises(ThreadNotFoundError):
            await storage.update_thread_resource_id(p + "missing", p + "bob")
        with pytest.raises(ValidationError):
            await storage.update_thread_resource_id(p + "ta", "")

    @pytest.mark.conformance(domain="storage", item="thread operations")
    async def test_archived_threads_are_listed_only_when_asked(self, storage: MemoryStorage) -> None:
        """§4.4: the archive mark (``mastraMemoryArchived=True``) hides a thread from ``list_threads``
        (totals and pages included) unless ``include_archived=True``; unarchiving lists it again."""
        p = new_prefix()
        names = [f"t{n}" for n in range(5)]
        await save_threads(storage, p, *((name, "alice") for name in names))
        flt = {"resource_id": p + "alice"}
        order = {"field": "created_at", "direction": "ASC"}
        archived = await storage.archive_thread(p + "t1", resource_id=p + "alice")
        assert archived.metadata is not None
        assert (archived.metadata[ARCHIVED_KEY], ARCHIVED_AT_KEY in archived.metadata) == (True, True)
        await storage.archive_thread(p + "t3")
        assert await storage.archive_thread(p + "t3") == await storage.get_thread_by_id(p + "t3")
        everything = await storage.list_threads(
            filter=flt, per_page=False, order_by=order, include_archived=True
        )
        assert len(everything.threads) == 5
        visible = [t.id for t in everything.threads if t.id not in (p + "t1", p + "t3")]
        listed = await storage.list_threads(filter=flt, per_page=False, order_by=order)
        assert ([t.id for t in listed.threads], listed.total) == (visible, 3)
        pages = [await storage.list_threads(filter=flt, per_page=2, page=n, order_by=order) for n in (0, 1)]
        assert [t.id for page in pages for t in page.threads] == visible
        assert [(page.total, page.has_more) for page in pages] == [(3, True), (3, False)]
        marked = {"resource_id": p + "alice", "metadata": {ARCHIVED_KEY: True}}
        assert (await storage.list_threads(filter=marked)).threads == []
        assert {t.id for t in (await storage.list_threads(filter=marked, include_archived=True)).threads} == {
            p + "t1",
            p + "t3",
        }
        restored = await storage.unarchive_thread(p + "t1")
        assert ARCHIVED_KEY not in (restored.metadata or {})
        assert (await storage.list_threads(filter=flt)).total == 4
        with pytest.raises(ThreadOwnershipError):
            await storage.archive_thread(p + "t0", resource_id=p + "bob")
        with pytest.raises(ThreadNotFoundError):
            await storage.unarchive_thread(p + "missing")

    @pytest.mark.conformance(domain="storage", item="thread operations")
    async def test_a_users_archived_key_is_just_metadata(self, storage: MemoryStorage) -> None:
        """§4.4: the archive mark is storage-owned. A thread whose own metadata says ``archived: true``
        (its user's, or a Mastra app's) is listed like any other and filters on it as metadata; a caller's
        metadata neither sets nor clears the mark; a clone starts unarchived. A row archived by an earlier
        version (``archived: true`` beside a canonical ``archived_at``) stays archived, and unarchiving it
        removes that old mark."""
        p = new_prefix()
        flt = {"resource_id": p + "alice"}
        user = {"archived": True, "project": "x"}
        await storage.save_thread({"id": p + "mine", "resource_id": p + "alice", "metadata": user})
        await save_threads(storage, p, ("other", "alice"), ("kept", "alice"))
        listed = await storage.list_threads(filter=flt, per_page=False)
        assert ({t.id for t in listed.threads}, listed.total) == ({p + "mine", p + "other", p + "kept"}, 3)
        by_key = await storage.list_threads(filter={**flt, "metadata": {"archived": True}})
        assert ([t.id for t in by_key.threads], by_key.total) == ([p + "mine"], 1)
        # Archiving keeps the user's key; unarchiving leaves it too.
        archived = await storage.archive_thread(p + "mine")
        assert archived.metadata is not None
        assert {k: archived.metadata[k] for k in user} == user
        assert (await storage.list_threads(filter=flt)).total == 2
        restored = await storage.unarchive_thread(p + "mine")
        assert restored.metadata == user
        # A caller's metadata never sets nor clears the mark.
        await storage.save_thread(
            {"id": p + "other", "resource_id": p + "alice", "metadata": {ARCHIVED_KEY: True}}
        )
        updated = await storage.update_thread(p + "other", metadata={ARCHIVED_KEY: True, "archived": True})
        assert ARCHIVED_KEY not in (updated.metadata or {})
        await storage.archive_thread(p + "kept")
        await storage.update_thread(p + "kept", metadata={ARCHIVED_KEY: False, "archived": False})
        await storage.save_thread({"id": p + "kept", "resource_id": p + "alice", "metadata": {"a": 1}})
        kept = await storage.get_thread_by_id(p + "kept")
        assert kept is not None
        assert kept.metadata is not None
        assert (kept.metadata["a"], kept.metadata[ARCHIVED_KEY]) == (1, True)
        listed = await storage.list_threads(filter=flt, per_page=False)
        assert {t.id for t in listed.threads} == {p + "mine", p + "other"}
        # The old form an earlier version wrote still means archived; unarchiving removes it.
        old = {"archived": True, "archived_at": "2025-01-02T03:04:05.006Z", "n": 1}
        await storage.save_thread({"id": p + "old", "resource_id": p + "bob", "metadata": old})
        assert (await storage.list_threads(filter={"resource_id": p + "bob"})).total == 0
        assert (await storage.unarchive_thread(p + "old")).metadata == {"n": 1}
        assert (await storage.list_threads(filter={"resource_id": p + "bob"})).total == 1

    @pytest.mark.conformance(domain="storage", item="clone_thread")
    async def test_clone_thread_into_another_resource(
        self, storage: MemoryStorage, capabilities: AdapterCapabilities, outcome: Outcome
    ) -> None:
        """§4.2: ``new_resource_id`` gives the clone and its messages another resource (Mastra's
        ``resourceId``); ``metadata`` is merged over the source's, under the clone keys."""
        if not declared(storage, capabilities).clone_thread:
            outcome.unsupported("clone_thread", "declared clone_thread=False")
            return
        p = await alice_and_bob(storage)
        clone = await storage.clone_thread(
            p + "ta", new_thread_id=p + "copy", new_resource_id=p + "carol", metadata={"branch": "x"}
        )
        assert clone.thread.resource_id == p + "carol"
        assert clone.thread.metadata is not None
        assert (clone.thread.metadata["branch"], clone.thread.metadata["source_thread_id"]) == ("x", p + "ta")
        page = await storage.list_messages(p + "copy", resource_id=p + "carol", per_page=False)
        assert [m.id for m in page.messages] == list(clone.message_id_map.values())
        assert {m.resource_id for m in page.messages} == {p + "carol"}
        source = await storage.list_messages(p + "ta", resource_id=p + "alice", per_page=False)
        assert strip(p, ids_of(source)) == ["a1", "a2"], "the source stays alice's"
