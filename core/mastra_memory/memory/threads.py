"""Thread operations of ``Memory`` and its background work (docs/spec.md §5.11).

* :func:`clone_thread` / :func:`move_thread` — the storage copies or moves the thread and its messages
  in one transaction (the ``MemoryStorage`` template, docs/spec.md §4.2), then the vectors follow through
  the single write path: copies are embedded under their new ids, moved messages re-indexed with their
  new ``resource_id``, so recall finds exactly what storage holds.
* :class:`BackgroundWork` — embedding scheduled by ``save_messages(..., background=True)``; ``settled()``
  waits for it (bounded by a timeout) and re-raises what failed, so background failures are never lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Mapping
from typing import Any

from pydantic import Field

from ..errors import IndexingError, MastraMemoryError, SettleTimeoutError, ValidationError
from ..storage import CloneMessageFilterInput, CloneResult, MemoryStorage, Thread
from .indexer import MessageIndexer
from .reindex import reindex_messages
from .results import SkippedMessage

logger = logging.getLogger("mastra_memory.indexing")

__all__ = ["BackgroundWork", "CloneThreadResult", "clone_thread", "move_thread"]


class CloneThreadResult(CloneResult):
    """What ``Memory.clone_thread`` returns: the storage's clone (``thread``, ``messages``,
    ``message_id_map``) plus the copies that could not be indexed (``skipped``; docs/spec.md §5.4)."""

    skipped: list[SkippedMessage] = Field(default_factory=list)

    @property
    def cloned_messages(self) -> list[Any]:
        """Mastra's name for :attr:`messages`."""
        return list(self.messages)


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
            skipped = await reindex_messages(indexer, result.thread, result.messages)
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
            await reindex_messages(indexer, moved, page.messages)
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


class BackgroundWork:
    """Tracks background tasks of one ``Memory`` so that ``settled()`` can wait for them and report what
    failed (docs/spec.md §5.11)."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()
        self._failures: list[IndexingError] = []

    @property
    def pending(self) -> int:
        """How many background tasks have not finished yet."""
        return sum(1 for t in self._tasks if not t.done())

    def spawn(self, work: Coroutine[Any, Any, None], *, what: str, details: dict[str, Any]) -> None:
        """Run ``work`` in the background; a failure is logged and kept for the next ``settled()``."""

        async def run() -> None:
            try:
                await work
            except Exception as exc:
                logger.exception("background %s failed", what)
                self._failures.append(
                    IndexingError(
                        f"background {what} failed: {exc}; the messages are stored, run reindex_thread() "
                        "for the affected threads to retry",
                        details=details,
                    )
                )

        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def idle(self) -> None:
        """Wait until no background task is running (failures stay for ``settled()``): a write that
        deletes or changes vectors calls this first, so a pending embed never re-creates what it removed."""
        while self._tasks:
            await asyncio.wait(set(self._tasks))

    # A timeout argument, not asyncio.timeout: a caller's cancellation would cancel the work itself.
    async def settled(self, timeout: float | None, *others: Any) -> None:  # noqa: ASYNC109
        """Wait until every task (and every task started meanwhile, ``others`` included: objects with an
        async ``flush()``) has finished, at most ``timeout`` seconds; then raise the first failure.

        Raises SettleTimeoutError when time runs out (the tasks keep running) and IndexingError for a
        background task that failed since the last ``settled()`` (the others are in its ``details``).
        """
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout >= 0
        ):
            raise ValidationError(
                f"timeout must be a number of seconds >= 0 or None, got {timeout!r}",
                id="MASTRA_MEMORY_SETTLED_INVALID_TIMEOUT",
                domain="MEMORY",
            )

        async def drain() -> None:
            # asyncio.wait never cancels what it waits for, and the shield below keeps a timeout from
            # cancelling the drain (and, through it, the tasks): the work goes on after a timeout.
            while self._tasks:
                await asyncio.wait(set(self._tasks))
            for other in others:
                await other.flush()
            while self._tasks:
                await asyncio.wait(set(self._tasks))

        try:
            await asyncio.wait_for(asyncio.shield(drain()), timeout)
        except TimeoutError:
            raise SettleTimeoutError(
                f"background work still pending after {timeout} s ({self.pending} task(s)); it keeps "
                "running: call settled() again to wait for the rest",
                id="MASTRA_MEMORY_SETTLED_TIMEOUT",
                details={"pending": self.pending, "timeout": timeout},
            ) from None
        if self._failures:
            first, rest = self._failures[0], self._failures[1:]
            self._failures = []
            if rest:
                first.details["more_failures"] = [f.details for f in rest]
            raise first
