"""Thread records of the ``MemoryStorage`` template: read, save, update and delete one thread by id
(docs/spec.md §4.2).

A save never replaces a thread of another resource (ThreadOwnershipError, "ownership" in §4.5); an update
shallow-merges metadata and bumps ``updated_at`` (§4.5); a delete takes the thread's messages with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..timestamps import next_after
from .archive import keep_mark
from .arguments import non_blank, parse_model, validate_resource_id, validate_thread_patch
from .codec import json_text_or_none
from .hooks import StorageHooks
from .patches import merged_metadata
from .records import Thread, ThreadInput

__all__ = ["ThreadRecords"]


class ThreadRecords(StorageHooks):
    """``get_thread_by_id``, ``save_thread``, ``update_thread`` and ``delete_thread``."""

    async def get_thread_by_id(self, thread_id: str, resource_id: str | None = None) -> Thread | None:
        """The thread, or ``None`` if it is missing or ``resource_id`` is given and differs."""
        operation = "GET_THREAD_BY_ID"
        non_blank(thread_id, "thread_id", store=self.store_name, operation=operation)
        resource = validate_resource_id(resource_id, store=self.store_name, operation=operation)
        if not self._existing([thread_id]):
            return None
        thread = await self._run_unit(operation, lambda tx: self._load_thread(tx, thread_id), write=False)
        if thread is None or (resource is not None and thread.resource_id != resource):
            return None
        return thread

    async def save_thread(self, thread: ThreadInput) -> Thread:
        """Insert or replace a thread by id; returns it as stored.

        The thread names its resource: replacing a thread of another resource is a ThreadOwnershipError
        (docs/spec.md §4.5, ownership).
        """
        operation = "SAVE_THREAD"
        parsed = parse_model(
            Thread, thread, store=self.store_name, operation=operation, status="INVALID_ARGS", what="thread"
        )
        self._check_text(
            operation, (parsed.id, "thread id"), (parsed.resource_id, "resource_id"), (parsed.title, "title")
        )
        json_text_or_none(parsed.metadata, f"metadata of thread {parsed.id}")

        async def work(tx: Any) -> Thread:
            current = await self._load_thread(tx, parsed.id, lock=True)
            if current is not None and current.resource_id != parsed.resource_id:
                raise self._not_owned(
                    operation,
                    f"thread {parsed.id} already exists and belongs to another resource than "
                    f"{parsed.resource_id!r}; pass another thread id",
                    thread_id=parsed.id,
                )
            # The archive mark is storage-owned (docs/spec.md §4.4): kept as stored, never taken from
            # the caller's metadata.
            stored = keep_mark(parsed.metadata, None if current is None else current.metadata)
            thread = parsed if stored is parsed.metadata else parsed.model_copy(update={"metadata": stored})
            await self._write_thread(tx, thread)
            return thread

        return await self._run_unit(operation, work, write=True)

    async def update_thread(
        self, id: str, title: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> Thread:
        """Replace the title when given, shallow-merge ``metadata``, and bump ``updated_at``.

        A missing thread raises ThreadNotFoundError.
        """
        operation = "UPDATE_THREAD"
        validate_thread_patch(id, title, metadata, store=self.store_name)
        self._check_text(operation, (title, "title"))
        json_text_or_none(metadata, "metadata")
        missing = self._no_thread(operation, f"thread {id} does not exist; create it with save_thread first")
        if not self._existing([id]):
            raise missing

        async def work(tx: Any) -> Thread:
            current = await self._load_thread(tx, id, lock=True)
            if current is None:
                raise missing
            updated = current.model_copy(
                update={
                    "title": current.title if title is None else title,
                    "metadata": keep_mark(merged_metadata(current.metadata, metadata), current.metadata),
                    "updated_at": next_after(current.updated_at),
                }
            )
            await self._write_thread(tx, updated)
            return updated

        return await self._run_unit(operation, work, write=True)

    async def delete_thread(self, thread_id: str) -> None:
        """Delete the thread and all its messages in one transaction; a missing thread is a no-op."""
        operation = "DELETE_THREAD"
        non_blank(thread_id, "thread_id", store=self.store_name, operation=operation)
        if self._existing([thread_id]):
            await self._run_unit(operation, lambda tx: self._delete_thread(tx, thread_id), write=True)
