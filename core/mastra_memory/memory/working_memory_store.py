"""Working memory's text in storage (docs/spec.md §5.8).

The text lives in ``Resource.working_memory`` (resource scope) or in the thread's metadata key
``workingMemory`` (thread scope); writes are serialised per resource or thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Literal

from ..errors import ConfigError, ResourceScopeError
from ..storage import MemoryStorage, Thread
from .arguments import optional_resource, require_id
from .config import WorkingMemoryConfig

#: Where the text lives: ``("resource", id)`` or ``("thread", id)``.
Target = tuple[Literal["thread", "resource"], str]


class WorkingMemoryStore:
    """Reads and writes the working-memory text of one storage (docs/spec.md §5.8)."""

    def __init__(self, storage: MemoryStorage) -> None:
        self.storage = storage
        self._locks: dict[str, asyncio.Lock] = {}

    @staticmethod
    def target(config: WorkingMemoryConfig, thread_id: str, resource_id: str | None) -> Target:
        """Where the text lives: ``("resource", id)`` or ``("thread", id)``; raises before any I/O."""
        if not config.enabled:
            raise ConfigError("working memory is disabled; set options.working_memory.enabled = True")
        if config.scope == "resource":
            if resource_id is None:
                raise ResourceScopeError("resource-scoped working memory needs a resource_id")
            return "resource", optional_resource(resource_id) or ""
        return "thread", require_id(thread_id, "thread_id")

    async def get(self, target: Target) -> str | None:
        """The text at ``target``; None when unset."""
        scope, key = target
        if scope == "resource":
            res = await self.storage.get_resource_by_id(key)
            return res.working_memory if res else None
        thread = await self.storage.get_thread_by_id(key)
        value = (thread.metadata or {}).get("workingMemory") if thread else None
        return value if isinstance(value, str) else None

    async def update(self, target: Target, text: str) -> None:
        """Replace the text at ``target`` (serialised per resource or thread)."""
        scope, key = target
        lock = self._locks.setdefault(f"{scope}:{key}", asyncio.Lock())
        async with lock:
            if scope == "resource":
                await self.storage.update_resource(key, working_memory=text)
            else:
                await self.storage.update_thread(key, metadata={"workingMemory": text})

    async def sync_from_thread(
        self, config: WorkingMemoryConfig, thread: Thread, metadata: Mapping[str, Any] | None
    ) -> None:
        """Mastra's rule for a thread written with a ``workingMemory`` string in the given ``metadata``: with
        working memory on in resource scope, that text becomes the thread's resource's working memory too
        (in thread scope the metadata already is the working memory). docs/spec.md §5.8."""
        text = metadata.get("workingMemory") if isinstance(metadata, Mapping) else None
        if not isinstance(text, str) or not text or not config.enabled or config.scope != "resource":
            return
        if thread.resource_id:
            await self.update(("resource", thread.resource_id), text)
