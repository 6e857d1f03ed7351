"""Clone lineage of threads: Mastra's ``isClone``, ``getCloneMetadata``, ``getSourceThread``, ``listClones``
and ``getCloneHistory`` (docs/spec.md §5.11), composed from ``MemoryStorage`` reads alone.

A thread is a clone when its metadata says where it came from: this project's flat keys
(``source_thread_id``, ``cloned_at``, ``last_message_id``, written by ``clone_thread``) or Mastra's nested
``clone`` object (``{sourceThreadId, clonedAt, lastMessageId}``, written by a Mastra app over a shared
database). Both are read, so lineage survives either writer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..errors import ValidationError
from ..storage import MemoryStorage, Thread

__all__ = ["CloneMetadata", "clone_history", "clone_metadata", "list_clones", "source_thread"]


class CloneMetadata(BaseModel):
    """Where a clone came from (Mastra's ``ThreadCloneMetadata``): the source thread, when it was cloned
    and the id of the last message copied (None when none was)."""

    model_config = ConfigDict(frozen=True)

    source_thread_id: str
    cloned_at: Any = None
    last_message_id: str | None = None


def clone_metadata(thread: Thread | None) -> CloneMetadata | None:
    """The clone metadata of ``thread``, or None when it is not a clone (or is None). No I/O."""
    if thread is None:
        return None
    if not isinstance(thread, Thread):
        raise ValidationError(
            f"thread must be a Thread (as get_thread_by_id returns) or None, not {type(thread).__name__}",
            id="MASTRA_MEMORY_CLONE_METADATA_INVALID_ARGS",
            domain="MEMORY",
        )
    metadata = thread.metadata or {}
    nested = metadata.get("clone")
    if isinstance(nested, Mapping) and _is_id(nested.get("sourceThreadId")):
        last = nested.get("lastMessageId")
        return CloneMetadata(
            source_thread_id=nested["sourceThreadId"],
            cloned_at=nested.get("clonedAt"),
            last_message_id=last if isinstance(last, str) else None,
        )
    if _is_id(metadata.get("source_thread_id")):
        last = metadata.get("last_message_id")
        return CloneMetadata(
            source_thread_id=metadata["source_thread_id"],
            cloned_at=metadata.get("cloned_at"),
            last_message_id=last if isinstance(last, str) else None,
        )
    return None


def _is_id(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


async def source_thread(storage: MemoryStorage, thread_id: str, resource_id: str | None) -> Thread | None:
    """The thread ``thread_id`` was cloned from; None when it is missing, not a clone, or its source is
    gone. With ``resource_id``, both the clone and the source must be that resource's (otherwise None):
    a caller never reads another resource's thread through a clone (docs/spec.md §4.5)."""
    meta = clone_metadata(await storage.get_thread_by_id(thread_id, resource_id))
    if meta is None:
        return None
    return await storage.get_thread_by_id(meta.source_thread_id, resource_id)


async def list_clones(storage: MemoryStorage, source_thread_id: str, resource_id: str | None) -> list[Thread]:
    """The threads of ``resource_id`` (default: the source's resource) cloned directly from
    ``source_thread_id``, newest first; archived clones included (they are still clones)."""
    if resource_id is None:
        source = await storage.get_thread_by_id(source_thread_id)
        if source is None:
            return []
        resource_id = source.resource_id
    # Mastra's listThreads order (created_at, newest first).
    page = await storage.list_threads(
        filter={"resource_id": resource_id}, per_page=False, include_archived=True
    )
    return [
        t
        for t in page.threads
        if (m := clone_metadata(t)) is not None and m.source_thread_id == source_thread_id
    ]


async def clone_history(storage: MemoryStorage, thread_id: str, resource_id: str | None) -> list[Thread]:
    """``thread_id`` and its ancestors, the original first. The walk stops at a missing ancestor, at one of
    another resource than ``resource_id`` (when given), and at a thread seen already: metadata is writable,
    so a cycle must not loop forever **[Δ]** (Mastra's walk has no such guard)."""
    history: list[Thread] = []
    seen: set[str] = set()
    current: str | None = thread_id
    while current is not None and current not in seen:
        seen.add(current)
        thread = await storage.get_thread_by_id(current, resource_id)
        if thread is None:
            break
        history.append(thread)
        meta = clone_metadata(thread)
        current = meta.source_thread_id if meta is not None else None
    history.reverse()
    return history
