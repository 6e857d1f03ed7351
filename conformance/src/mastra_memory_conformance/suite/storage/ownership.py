"""Write ownership (docs/spec.md §4.5): no write of one resource takes, moves or copies another resource's
thread or message, and a refused write never names the owner.
"""

from __future__ import annotations

from typing import Any

import pytest

from mastra_memory.capabilities import AdapterCapabilities
from mastra_memory.errors import ThreadOwnershipError, ValidationError
from mastra_memory.storage import MemoryStorage

from ...report import Outcome
from ...scenarios import message
from .base import alice_and_bob, as_resource, assert_refused, declared, thread_snapshot

__all__ = ["WriteOwnershipSuite"]


@pytest.mark.asyncio
class WriteOwnershipSuite:
    """§4.5 write ownership (a part of ``MemoryStorageSuite``)."""

    # --- write ownership (§4.5) -----------------------------------------------------------------

    @pytest.mark.conformance(domain="storage", item="write ownership")
    async def test_save_messages_never_takes_another_resources_message(self, storage: MemoryStorage) -> None:
        """§4.5: a saved message belongs to a resource (its resource_id, else its thread's); an existing id
        of another resource, or a thread of another resource, is refused and nothing of the batch is saved."""
        p = await alice_and_bob(storage)
        before = await thread_snapshot(storage, [p + "ta", p + "tb"])
        own = message(p + "b2", p + "tb", "bob's own", seconds=5)
        attacks: list[tuple[str, dict[str, Any]]] = [
            (
                "her id into his thread, naming him",
                as_resource(p + "bob", message(p + "a1", p + "tb", "stolen")),
            ),
            ("her id into his thread, naming no one", message(p + "a1", p + "tb", "stolen")),
            (
                "her id in her thread, naming him",
                as_resource(p + "bob", message(p + "a1", p + "ta", "stolen")),
            ),
            (
                "a new id into her thread, naming him",
                as_resource(p + "bob", message(p + "b3", p + "ta", "spam")),
            ),
        ]
        for label, attack in attacks:
            with pytest.raises(ThreadOwnershipError) as info:
                await storage.save_messages([own, attack])
            assert_refused(info.value, storage, "SAVE_MESSAGES", p)
            assert await thread_snapshot(storage, [p + "ta", p + "tb"]) == before, (
                f"a refused save ({label}) changed stored state: nothing of the batch may be written"
            )
        # Her own re-save and a move between her own threads still work (Mastra's upsert, §4.5).
        [resaved] = await storage.save_messages([message(p + "a1", p + "ta2", "moved by alice", seconds=1)])
        assert (resaved.thread_id, resaved.resource_id) == (p + "ta2", p + "alice")

    @pytest.mark.conformance(domain="storage", item="write ownership")
    async def test_update_messages_never_moves_a_message_to_another_resource(
        self, storage: MemoryStorage
    ) -> None:
        """§4.5: a move into a thread of another resource is refused whether or not a resource is named;
        with ``resource_id``, every message updated must belong to it. Nothing of the batch is written."""
        p = await alice_and_bob(storage)
        before = await thread_snapshot(storage, [p + "ta", p + "ta2", p + "tb"])
        own = {"id": p + "b1", "content": {"content": "bob edits his own"}}
        attacks: list[tuple[str, list[dict[str, Any]], str | None]] = [
            ("her message into his thread", [own, {"id": p + "a1", "threadId": p + "tb"}], None),
            (
                "her message into his thread, naming him",
                [own, {"id": p + "a1", "thread_id": p + "tb"}],
                p + "bob",
            ),
            ("his message into her thread", [own, {"id": p + "b1", "thread_id": p + "ta"}], None),
            ("her content, naming him", [own, {"id": p + "a1", "content": {"content": "stolen"}}], p + "bob"),
            (
                "her message within her threads, naming him",
                [{"id": p + "a1", "thread_id": p + "ta2"}],
                p + "bob",
            ),
        ]
        for label, batch, resource in attacks:
            with pytest.raises(ThreadOwnershipError) as info:
                await storage.update_messages(batch, resource_id=resource)
            assert_refused(info.value, storage, "UPDATE_MESSAGES", p)
            assert await thread_snapshot(storage, [p + "ta", p + "ta2", p + "tb"]) == before, (
                f"a refused update ({label}) changed stored state: nothing of the batch may be written"
            )
        with pytest.raises(ValidationError):
            await storage.update_messages([own], resource_id="")
        # Named and owned, or unnamed and within one resource: allowed (unknown ids are still ignored).
        [edited] = await storage.update_messages(
            [own, {"id": p + "ghost", "role": "user"}], resource_id=p + "bob"
        )
        assert (edited.id, edited.content.content) == (p + "b1", "bob edits his own")
        [moved] = await storage.update_messages(
            [{"id": p + "a1", "thread_id": p + "ta2"}], resource_id=p + "alice"
        )
        assert (moved.thread_id, moved.resource_id) == (p + "ta2", p + "alice")
        [unnamed] = await storage.update_messages([{"id": p + "a1", "content": {"content": "edited"}}])
        assert unnamed.content.content == "edited", (
            "an update that names no resource and moves nothing is allowed"
        )

    @pytest.mark.conformance(domain="storage", item="write ownership")
    async def test_save_thread_never_takes_another_resources_thread(self, storage: MemoryStorage) -> None:
        """§4.5: ``save_thread`` over an existing id of another resource is refused; its owner replaces it."""
        p = await alice_and_bob(storage)
        before = await thread_snapshot(storage, [p + "ta"])
        with pytest.raises(ThreadOwnershipError) as info:
            await storage.save_thread({"id": p + "ta", "resource_id": p + "bob", "title": "mine now"})
        assert_refused(info.value, storage, "SAVE_THREAD", p)
        assert await thread_snapshot(storage, [p + "ta"]) == before, (
            "a refused save_thread changed the thread"
        )
        assert await storage.get_thread_by_id(p + "ta", resource_id=p + "bob") is None
        replaced = await storage.save_thread({"id": p + "ta", "resource_id": p + "alice", "title": "renamed"})
        assert await storage.get_thread_by_id(p + "ta", resource_id=p + "alice") == replaced

    @pytest.mark.conformance(domain="storage", item="write ownership")
    async def test_clone_thread_copies_only_the_named_resources_thread(
        self, storage: MemoryStorage, capabilities: AdapterCapabilities, outcome: Outcome
    ) -> None:
        """§4.5: with ``resource_id`` the source must belong to it, and the clone does too; without one the
        clone stays in the source's resource. Nothing is created when refused."""
        if not declared(storage, capabilities).clone_thread:
            outcome.unsupported("clone_thread", "declared clone_thread=False")
            return
        p = await alice_and_bob(storage)
        with pytest.raises(ThreadOwnershipError) as info:
            await storage.clone_thread(p + "ta", new_thread_id=p + "stolen", resource_id=p + "bob")
        assert_refused(info.value, storage, "CLONE_THREAD", p)
        assert await storage.get_thread_by_id(p + "stolen") is None, "a refused clone created a thread"
        bobs = await storage.list_threads(filter={"resource_id": p + "bob"}, per_page=False)
        assert [t.id for t in bobs.threads] == [p + "tb"]
        named = await storage.clone_thread(p + "ta", new_thread_id=p + "copy", resource_id=p + "alice")
        unnamed = await storage.clone_thread(p + "ta", new_thread_id=p + "copy2")
        for clone in (named, unnamed):
            assert clone.thread.resource_id == p + "alice"
            assert {m.resource_id for m in clone.messages} == {p + "alice"}
