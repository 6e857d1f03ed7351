"""Thread title generation (docs/spec.md §5.9): in the background, after a save, never failing it.

Titles are generated only when ``generate_title`` is on and names a callable model (sync or async,
called with the transcript and, when set, the instructions); without one the option is inert and one
warning says so.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Sequence
from typing import Any

from ..messages import MastraDBMessage, message_text
from ..storage import MemoryStorage
from .config import MemoryConfig

# Title warnings and failures are logged as ``Memory``'s (the logger tests and users filter on).
logger = logging.getLogger("mastra_memory.memory")


class TitleGenerator:
    """Schedules and runs title generation for the threads of saved messages."""

    def __init__(self, storage: MemoryStorage) -> None:
        self.storage = storage
        self._tasks: set[asyncio.Task[None]] = set()
        self._warned = False

    def model(self, cfg: MemoryConfig) -> Any:
        """The callable title model when titles are on; None (after one warning) when none is usable."""
        setting = cfg.generate_title
        if not setting:
            return None
        model = getattr(setting, "model", None)
        if model is None or not callable(model):
            if not self._warned:
                logger.warning(
                    "generate_title is enabled but no callable title model is configured "
                    "(generate_title={'model': <callable>}); titles stay as they are"
                )
                self._warned = True
            return None
        return model

    def schedule(self, cfg: MemoryConfig, stored: Sequence[MastraDBMessage]) -> None:
        """Start one background task per thread of ``stored`` (needs a running event loop)."""
        model = self.model(cfg)
        if model is None:
            return
        setting = cfg.generate_title
        min_messages = getattr(setting, "min_messages", 1)
        instructions = getattr(setting, "instructions", None)
        for thread_id in dict.fromkeys(m.thread_id for m in stored):
            task = asyncio.get_running_loop().create_task(
                self._generate(thread_id, model, instructions, min_messages)
            )
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def flush(self) -> None:
        """Wait until every scheduled title task has finished."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _generate(
        self, thread_id: str, model: Any, instructions: str | None, min_messages: int
    ) -> None:
        # Never fails a save: every error is logged.
        try:
            thread = await self.storage.get_thread_by_id(thread_id)
            if thread is None or thread.title:
                return
            page = await self.storage.list_messages(thread_id, per_page=False)
            users = [m for m in page.messages if m.role == "user"]
            if len(users) < min_messages:
                return
            transcript = "\n".join(f"{m.role}: {message_text(m)}" for m in page.messages)
            args = (transcript, instructions) if instructions is not None else (transcript,)
            if inspect.iscoroutinefunction(model):
                title = await model(*args)
            else:
                # A blocking model runs in a worker thread, so it never stalls the event loop.
                title = await asyncio.to_thread(model, *args)
                if inspect.isawaitable(title):
                    title = await title
            if isinstance(title, str) and title.strip():
                await self.storage.update_thread(thread_id, title=title.strip())
        except Exception:
            logger.exception("title generation failed for thread %s", thread_id)
