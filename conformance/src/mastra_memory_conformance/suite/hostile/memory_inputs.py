"""Bad input through ``Memory`` (issue 12): a thread created with deeply nested or cyclic metadata by one
resource is refused, and another resource still saves and recalls.
"""

from __future__ import annotations

import uuid
from functools import partial

import pytest

from mastra_memory.errors import MastraMemoryError, ValidationError

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
