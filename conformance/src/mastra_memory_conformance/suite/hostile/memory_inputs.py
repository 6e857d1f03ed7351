"""Bad input through ``Memory`` (issue 12): a thread created with deeply nested or cyclic metadata by one
resource is refused, and another resource still saves and recalls. The ``updateWorkingMemory`` tool refuses a
request whose thread belongs to another resource (issue 26; docs/spec.md §4.5).
"""

from __future__ import annotations

import uuid
from functools import partial

import pytest

from mastra_memory.errors import MastraMemoryError, ThreadOwnershipError, ValidationError
from mastra_memory.memory import Memory

from ...plugin import set_item
from .base import (
    HostileSuiteBase,
    MemoryBackend,
    cyclic,
    nested,
    raised_by,
)

__all__ = ["HostileMemoryInputSuite"]


@pytest.mark.asyncio
class HostileMemoryInputSuite(HostileSuiteBase):
    """Bad ``Memory`` input (a part of ``HostileInputSuite``)."""

    async def test_deep_thread_metadata_does_not_break_other_resources(
        self, request: pytest.FixtureRequest, backend: MemoryBackend
    ) -> None:
        """A thread created with metadata nested 126 levels deep (which once corrupted a Qdrant shard, so
        the next save_messages of every resource failed) is refused; another resource saves and recalls."""
        set_item(request, "memory: deep thread metadata")
        before = set(await backend.vector.list_indexes())
        prefix = f"h{uuid.uuid4().hex[:8]}-"
        memory = backend.memory({"lastMessages": 1, "semanticRecall": {"topK": 2, "messageRange": 0}})
        try:
            for metadata in (nested(126), nested(10_000), cyclic()):
                error = await raised_by(partial(memory.create_thread, f"{prefix}a", metadata=metadata))
                assert isinstance(error, ValidationError), f"create_thread with bad metadata: {error!r}"
                assert isinstance(error, MastraMemoryError)
            await memory.create_thread(f"{prefix}b", f"{prefix}tb", metadata={"plan": "pro"})
            await memory.save_messages(
                [
                    {
                        "id": f"{prefix}m1",
                        "thread_id": f"{prefix}tb",
                        "role": "user",
                        "content": "apples and pears",
                    },
                    {"id": f"{prefix}m2", "thread_id": f"{prefix}tb", "role": "user", "content": "rockets"},
                ]
            )
            for name in set(await backend.vector.list_indexes()) - before:
                await backend.settle(name)
            result = await memory.recall(
                f"{prefix}tb", resource_id=f"{prefix}b", vector_search_string="apples and pears"
            )
            assert f"{prefix}m1" in [h.message_id for h in result.hits]
        finally:
            await memory.flush()
            for name in set(await backend.vector.list_indexes()) - before:
                await backend.vector.delete_index(name)

    @pytest.mark.parametrize("scope", ["resource", "thread"])
    async def test_working_memory_tool_refuses_a_thread_of_another_resource(
        self, request: pytest.FixtureRequest, backend: MemoryBackend, scope: str
    ) -> None:
        """The ``updateWorkingMemory`` tool called for alice's thread with bob's resource raises
        ``ThreadOwnershipError`` and writes nothing: neither her thread nor his working memory."""
        set_item(request, f"memory: updateWorkingMemory across resources ({scope} scope)")
        prefix = f"h{uuid.uuid4().hex[:8]}-"
        alice, bob, thread_id = f"{prefix}alice", f"{prefix}bob", f"{prefix}her-thread"
        memory = Memory(storage=backend.storage, options={"workingMemory": {"enabled": True, "scope": scope}})
        await memory.create_thread(alice, thread_id, metadata={"plan": "pro"})
        await memory.update_working_memory(thread_id, alice, "# alice's notes")
        before = await backend.storage.get_thread_by_id(thread_id)
        tool = memory.get_tools()["updateWorkingMemory"]
        for context in (
            {"thread": {"id": thread_id}, "resourceId": bob},
            {"thread": {"id": thread_id, "resourceId": bob}},
        ):
            error = await raised_by(
                partial(tool.execute, {"memory": "# written by bob"}, {"MastraMemory": context})
            )
            assert isinstance(error, ThreadOwnershipError), f"updateWorkingMemory as bob: {error!r}"
            assert alice not in str(error), "the error must not name the owning resource"
        assert await backend.storage.get_thread_by_id(thread_id) == before
        assert await memory.get_working_memory(thread_id, alice) == "# alice's notes"
        assert await backend.storage.get_resource_by_id(bob) is None
        # The owner still writes.
        assert await tool.execute(
            {"memory": "# hers"}, {"MastraMemory": {"thread": {"id": thread_id}, "resourceId": alice}}
        ) == {"success": True}
        assert await memory.get_working_memory(thread_id, alice) == "# hers"
