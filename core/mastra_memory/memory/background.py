"""Background work of ``Memory`` (docs/spec.md §5.11): embedding scheduled by ``save_messages(...,
background=True)``; ``settled()`` waits for it (bounded by a timeout) and re-raises what failed, so
background failures are never lost."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from ..errors import IndexingError, SettleTimeoutError, ValidationError

# The logger of the write path (docs/spec.md §5.4 names it): a background embedding is part of it.
logger = logging.getLogger("mastra_memory.indexing")


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
