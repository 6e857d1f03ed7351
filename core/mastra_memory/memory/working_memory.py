"""Working memory (docs/spec.md §5.8) and the working-memory markup that is never stored (§5.4 step 1).

The text lives in ``Resource.working_memory`` (resource scope) or in the thread's metadata key
``workingMemory`` (thread scope); writes are serialised per resource or thread.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Literal

from ..errors import ConfigError, ResourceScopeError, ValidationError
from ..messages import MastraDBMessage, MessageInput, TextPart, ToolInvocationPart, normalize_messages
from ..storage import MemoryStorage
from .config import WorkingMemoryConfig
from .recall import optional_resource, require_id

#: The tool whose invocation parts update working memory; they are not persisted (docs/spec.md §5.4).
WORKING_MEMORY_TOOL = "updateWorkingMemory"
_WORKING_MEMORY_MARKUP = re.compile(r"<working_memory>.*?</working_memory>", re.DOTALL)

Target = tuple[Literal["thread", "resource"], str]


def strip_working_memory(message: MastraDBMessage) -> MastraDBMessage | None:
    """Remove working-memory markup and update-tool parts; None when nothing is left.

    See docs/spec.md §5.4 step 1."""
    content = message.content
    parts = []
    for part in content.parts:
        if isinstance(part, ToolInvocationPart) and part.tool_invocation.tool_name == WORKING_MEMORY_TOOL:
            continue
        if isinstance(part, TextPart) and "<working_memory>" in part.text:
            text = _WORKING_MEMORY_MARKUP.sub("", part.text)
            if not text.strip():
                continue
            part = part.model_copy(update={"text": text})
        parts.append(part)
    text_shortcut = content.content
    if isinstance(text_shortcut, str) and "<working_memory>" in text_shortcut:
        text_shortcut = _WORKING_MEMORY_MARKUP.sub("", text_shortcut)
        if not text_shortcut.strip():
            text_shortcut = None
    if parts == list(content.parts) and text_shortcut == content.content:
        return message
    if not parts and not (isinstance(text_shortcut, str) and text_shortcut.strip()):
        return None
    new_content = content.model_copy(update={"parts": parts, "content": text_shortcut})
    return message.model_copy(update={"content": new_content})


def messages_to_store(messages: Sequence[MessageInput]) -> list[MastraDBMessage]:
    """What ``save_messages`` persists (docs/spec.md §5.4 step 1): the messages normalised, without
    system and signal messages, working-memory markup stripped, emptied messages dropped.

    Raises ValidationError (before any I/O) when one call repeats a message id.
    """
    normalised = normalize_messages(messages)
    seen: set[str] = set()
    for msg in normalised:
        if msg.id in seen:
            raise ValidationError(
                f"duplicate message id {msg.id!r} in one save_messages call; ids must be unique"
            )
        seen.add(msg.id)
    kept: list[MastraDBMessage] = []
    for msg in normalised:
        if msg.role in ("system", "signal"):
            continue
        stripped = strip_working_memory(msg)
        if stripped is not None:
            kept.append(stripped)
    return kept


class WorkingMemory:
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
