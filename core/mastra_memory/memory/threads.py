"""Thread operations of ``Memory`` (docs/spec.md §5.11); its background work is :mod:`.background`.

* :func:`clone_thread` / :func:`move_thread` — the storage copies or moves the thread and its messages
  in one transaction (the ``MemoryStorage`` template, docs/spec.md §4.2), then the vectors follow through
  the single write path: copies are embedded under their new ids, moved messages re-indexed with their
  new ``resource_id``, so recall finds exactly what storage holds.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from pydantic import BaseModel, Field

from ..errors import IndexingError, MastraMemoryError
from ..storage import CloneMessageFilterInput, CloneResult, MemoryStorage, Thread
from .index.indexer import MessageIndexer
from .index.reindex import reindex_messages
from .results import SkippedMessage

if TYPE_CHECKING:
    from .config import MemoryConfig

logger = logging.getLogger("mastra_memory.indexing")

__all__ = ["CloneThreadOptions", "CloneThreadResult", "CopyThreadResult", "clone_thread", "move_thread"]


class CloneThreadResult(CloneResult):
    """What ``Memory.clone_thread`` returns: the storage's clone (``thread``, ``messages``,
    ``message_id_map``) plus the copies that could not be indexed (``skipped``; docs/spec.md §5.4)."""

    skipped: list[SkippedMessage] = Field(default_factory=list)

    @property
    def cloned_messages(self) -> list[Any]:
        """Mastra's name for [`messages`][mastra_memory.memory.MessageSearchResult.messages]."""
        return list(self.messages)


class CloneThreadOptions(TypedDict, total=False):
    """The keyword arguments of ``Memory.clone_thread``, which ``Memory.copy_thread`` takes as they are."""

    new_thread_id: str | None
    resource_id: str | None
    title: str | None
    metadata: Mapping[str, Any] | None
    message_limit: int | None
    message_filter: CloneMessageFilterInput | None
    source_resource_id: str | None
    thread_config: MemoryConfig | Mapping[str, Any] | None


class CopyThreadResult(BaseModel):
    """What ``Memory.copy_thread`` returns (Mastra's ``copyThread``): the new thread, old id → new id, and
    the copies that could not be indexed — not the copied messages."""

    thread: Thread
    message_id_map: dict[str, str]
    skipped: list[SkippedMessage] = Field(default_factory=list)


async def clone_thread(
    storage: MemoryStorage,
    indexer: MessageIndexer | None,
    source_thread_id: str,
    *,
    new_thread_id: str | None,
    resource_id: str | None,
    source_resource_id: str | None,
    title: str | None,
    metadata: Mapping[str, Any] | None,
    message_limit: int | None,
    message_filter: CloneMessageFilterInput | None,
) -> CloneThreadResult:
    """Copy the thread in storage, then index the copies when ``indexer`` is given (recall on)."""
    result = await storage.clone_thread(
        source_thread_id,
        new_thread_id=new_thread_id,
        resource_id=source_resource_id,
        title=title,
        message_limit=message_limit,
        message_filter=message_filter,
        new_resource_id=resource_id,
        metadata=metadata,
    )
    skipped: list[SkippedMessage] = []
    if indexer is not None and result.messages:
        try:
            # New message ids: no other index holds them.
            skipped = await reindex_messages(indexer, result.thread, result.messages, keep_other_indexes=True)
        except MastraMemoryError as exc:
            raise IndexingError(
                f"thread {result.thread.id} was cloned but indexing its {len(result.messages)} messages "
                f"failed: {exc}; run reindex_thread({result.thread.id!r}) to retry",
                details={"thread_id": result.thread.id},
            ) from exc
    return CloneThreadResult(
        thread=result.thread,
        messages=result.messages,
        message_id_map=result.message_id_map,
        skipped=skipped,
    )


async def move_thread(
    storage: MemoryStorage,
    indexer: MessageIndexer | None,
    cleanup: MessageIndexer | None,
    thread_id: str,
    resource_id: str,
    *,
    expected_resource_id: str | None,
) -> Thread:
    """Move the thread and its messages in storage, then make the vectors say the new resource.

    With recall on (``indexer``), the thread's messages are re-indexed: ``index_messages`` deletes their
    old vectors in every memory index first, so no vector keeps the old ``resource_id``. Without it, the
    thread's vectors are deleted (``cleanup``): stale vectors would still carry the old resource.
    """
    before = await storage.get_thread_by_id(thread_id)
    moved = await storage.update_thread_resource_id(
        thread_id, resource_id, expected_resource_id=expected_resource_id
    )
    if before is not None and before.resource_id == moved.resource_id:
        return moved  # nothing moved: the vectors are already right
    try:
        if indexer is not None:
            page = await storage.list_messages(thread_id, per_page=False)
            await reindex_messages(indexer, moved, page.messages, keep_other_indexes=False)
        elif cleanup is not None:
            await cleanup.delete_thread_vectors(thread_id)
    except MastraMemoryError as exc:
        raise IndexingError(
            f"thread {thread_id} was moved to resource {resource_id!r} but updating its vectors failed: "
            f"{exc}; run reindex_thread({thread_id!r}) to retry (until then recall checks ownership in "
            "storage and never returns the thread's messages to the old resource)",
            details={"thread_id": thread_id},
        ) from exc
    return moved
