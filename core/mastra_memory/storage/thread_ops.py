"""Thread operations of the ``MemoryStorage`` template: moving a thread to another resource and archiving
(docs/spec.md §4.2, §4.4, §4.5).

Built on the existing hooks only (``_load_threads``, ``_find_messages``, ``_write_thread``,
``_write_messages``), so every storage gets them without code of its own. Each operation is one unit of
work: a move rewrites the thread and every message of it in the same transaction, so no reader ever sees
a thread of one resource holding messages of another.
"""

from __future__ import annotations

from typing import Any

from ..errors import ThreadNotFoundError
from ..timestamps import canonical_timestamp, next_after
from .archive import ARCHIVED_AT_KEY, ARCHIVED_KEY, is_archived, without_mark
from .arguments import non_blank, validate_resource_id
from .hooks import StorageHooks
from .records import Thread

__all__ = ["ThreadOperations"]


class ThreadOperations(StorageHooks):
    """``update_thread_resource_id``, ``archive_thread`` and ``unarchive_thread``."""

    async def update_thread_resource_id(
        self, thread_id: str, resource_id: str, *, expected_resource_id: str | None = None
    ) -> Thread:
        """Move a thread and all its messages to ``resource_id`` in one transaction (docs/spec.md §4.5).

        ``expected_resource_id`` names the caller's resource: a thread owned by another one is a
        ThreadOwnershipError and nothing changes. A missing thread is a ThreadNotFoundError. Moving to the
        resource that already owns the thread changes nothing; otherwise ``updated_at`` is bumped. Vectors
        are not a storage's business: ``Memory.update_thread_resource_id`` re-indexes them.
        """
        operation = "UPDATE_THREAD_RESOURCE_ID"
        non_blank(thread_id, "thread_id", store=self.store_name, operation=operation)
        target = validate_resource_id(resource_id, store=self.store_name, operation=operation, required=True)
        assert target is not None  # required=True
        expected = validate_resource_id(expected_resource_id, store=self.store_name, operation=operation)
        self._check_text(operation, (thread_id, "thread_id"))
        missing = self._no_thread(operation, f"thread {thread_id} does not exist; nothing to move")
        if not self._existing([thread_id]):
            raise missing

        async def work(tx: Any) -> Thread:
            current = await self._owned_thread(
                tx, operation, thread_id, expected, missing, "; move only threads of the resource you name"
            )
            if current.resource_id == target:
                return current
            messages = await self._thread_messages(tx, thread_id)
            moved = [m.model_copy(update={"resource_id": target}) for m in messages]
            if moved:
                await self._write_messages(tx, [(m, self._encode_content(m)) for m in moved])
            thread = current.model_copy(
                update={"resource_id": target, "updated_at": next_after(current.updated_at)}
            )
            await self._write_thread(tx, thread)
            return thread

        return await self._run_unit(operation, work, write=True)

    async def archive_thread(self, thread_id: str, *, resource_id: str | None = None) -> Thread:
        """Mark the thread archived: metadata ``mastraMemoryArchived=True`` and ``mastraMemoryArchivedAt``
        (docs/spec.md §4.4; storage-owned keys, so a user's own ``archived`` key is just metadata).

        Archived threads are left out of ``list_threads`` unless ``include_archived=True``; their messages
        stay readable and writable. Archiving an archived thread changes nothing (``archived_at`` keeps
        the first time). ``resource_id`` names the caller's resource (ThreadOwnershipError otherwise).
        """
        return await self._set_archived("ARCHIVE_THREAD", thread_id, resource_id, archived=True)

    async def unarchive_thread(self, thread_id: str, *, resource_id: str | None = None) -> Thread:
        """Remove the archive mark (both metadata keys); a thread that is not archived is unchanged."""
        return await self._set_archived("UNARCHIVE_THREAD", thread_id, resource_id, archived=False)

    async def _set_archived(
        self, operation: str, thread_id: str, resource_id: str | None, *, archived: bool
    ) -> Thread:
        non_blank(thread_id, "thread_id", store=self.store_name, operation=operation)
        expected = validate_resource_id(resource_id, store=self.store_name, operation=operation)
        missing = self._no_thread(operation, f"thread {thread_id} does not exist; create it first")
        if not self._existing([thread_id]):
            raise missing

        async def work(tx: Any) -> Thread:
            current = await self._owned_thread(tx, operation, thread_id, expected, missing)
            if is_archived(current) == archived:
                return current
            updated_at = next_after(current.updated_at)
            # The old form (archived/archived_at) is rewritten in the new one on either change.
            metadata = without_mark(current.metadata)
            if archived:
                metadata.update({ARCHIVED_KEY: True, ARCHIVED_AT_KEY: canonical_timestamp(updated_at)})
            thread = current.model_copy(update={"metadata": metadata or None, "updated_at": updated_at})
            await self._write_thread(tx, thread)
            return thread

        return await self._run_unit(operation, work, write=True)

    async def _owned_thread(
        self,
        tx: Any,
        operation: str,
        thread_id: str,
        expected: str | None,
        missing: ThreadNotFoundError,
        hint: str = "",
    ) -> Thread:
        """The thread, read under lock for this unit of work; ``missing`` when it does not exist, and a
        ThreadOwnershipError when ``expected`` names another resource than its own."""
        current = await self._load_thread(tx, thread_id, lock=True)
        if current is None:
            raise missing
        if expected is not None and current.resource_id != expected:
            raise self._not_owned(
                operation,
                f"thread {thread_id} does not belong to resource {expected!r}{hint}",
                thread_id=thread_id,
            )
        return current
