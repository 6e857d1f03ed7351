"""``Memory.get_context``: everything one LLM call needs from memory in one read (Mastra's ``getContext``;
docs/spec.md §5.11) — the working-memory system message and the thread's recent history.

Without observational memory (not built here yet: the next issue), Mastra's ``getContext`` is exactly this:
no semantic recall, the newest ``last_messages`` messages of the thread oldest first, and the system message
``WorkingMemory`` would add. The observation fields are present with their "no observations" values, so
code written against Mastra's result reads them unchanged.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from ..errors import ThreadOwnershipError
from ..messages import MastraDBMessage
from ..storage import MemoryStorage
from .config import MemoryConfig
from .processors.working_memory import working_memory_instructions
from .working_memory_store import WorkingMemoryStore

__all__ = ["MemoryContext", "build_context"]


class MemoryContext(BaseModel):
    """What :meth:`Memory.get_context` returns (Mastra's ``getContext`` result, snake_case).

    ``system_message``: the working-memory instructions, or None when working memory is off.
    ``messages``: the thread's recent history, oldest first. The observational-memory fields
    (``has_observations``, ``om_record``, ``continuation_message``, ``other_threads_context``) are always
    their empty values until observational memory exists.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    system_message: str | None
    messages: list[MastraDBMessage]
    has_observations: bool = False
    om_record: Any = None
    continuation_message: MastraDBMessage | None = None
    other_threads_context: str | None = None


async def build_context(
    storage: MemoryStorage, cfg: MemoryConfig, thread_id: str, resource_id: str | None
) -> MemoryContext:
    """The context of ``thread_id`` under ``cfg``. A thread of another resource than ``resource_id`` is a
    ThreadOwnershipError (docs/spec.md §4.5, as ``recall``); a missing thread has no history."""
    if resource_id is not None:
        thread = await storage.get_thread_by_id(thread_id)
        if thread is not None and thread.resource_id != resource_id:
            raise ThreadOwnershipError(f"thread {thread_id} does not belong to the requested resource")
    system = None
    wm = cfg.working_memory
    if wm.enabled and (wm.scope != "resource" or resource_id is not None):
        text = await WorkingMemoryStore(storage).get(WorkingMemoryStore.target(wm, thread_id, resource_id))
        system = working_memory_instructions(wm, text, read_only=cfg.read_only)
    messages: list[MastraDBMessage] = []
    if cfg.history_on:
        page = await storage.list_messages(
            thread_id,
            resource_id,
            per_page=cfg.last_messages,
            order_by={"field": "created_at", "direction": "DESC"},
            include_total=False,
        )
        messages = list(reversed(page.messages))
    return MemoryContext(system_message=system, messages=messages)
