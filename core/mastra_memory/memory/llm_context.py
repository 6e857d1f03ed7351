"""``Memory.get_context``: everything one LLM call needs from memory in one read (Mastra's ``getContext``;
docs/spec.md §5.11) — the working-memory system message and the thread's recent history.

Without observational memory (not built here yet: the next issue), Mastra's ``getContext`` is exactly this:
no semantic recall; the thread's newest messages, oldest first, within ``last_messages`` and, with
``message_history.max_tokens``, loaded and trimmed under the token budget as ``MessageHistory`` and the
memory token limiter do (the thread's boundary is read, never moved); and the system message ``WorkingMemory``
would add. The observation fields are present with their "no observations" values, so
code written against Mastra's result reads them unchanged.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from ..errors import ThreadOwnershipError
from ..messages import MastraDBMessage
from ..storage import MemoryStorage
from .config import HistoryLimits, MemoryConfig
from .message_list import MessageList
from .processors.history_budget import (
    PROMPT_OVERHEAD,
    MemoryTokenLimiter,
    TokenBoundary,
    load_history,
    message_cost,
)
from .processors.working_memory import working_memory_instructions
from .working_memory_store import WorkingMemoryStore

__all__ = ["LLMContext", "build_context"]


class LLMContext(BaseModel):
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
) -> LLMContext:
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
        system = working_memory_instructions(wm, text, read_only=cfg.read_only or not wm.agent_managed)
    limits = cfg.history_limits
    messages: list[MastraDBMessage] = []
    if limits.enabled and limits.max_tokens is None:
        page = await storage.list_messages(
            thread_id,
            resource_id,
            per_page=False if limits.max_messages is None else limits.max_messages,
            order_by={"field": "created_at", "direction": "DESC"},
            include_total=False,
        )
        messages = list(reversed(page.messages))
    elif limits.enabled:
        messages = await _under_budget(storage, thread_id, resource_id, limits, system)
    return LLMContext(system_message=system, messages=messages)


async def _under_budget(
    storage: MemoryStorage,
    thread_id: str,
    resource_id: str | None,
    limits: HistoryLimits,
    system: str | None,
) -> list[MastraDBMessage]:
    """Mastra's ``getContext`` under ``messageHistory.maxTokens``: history loaded after the thread's stored
    boundary (when it was written with this budget) under the budget, then trimmed, oldest linked group
    first, until the prompt with the system message fits; the boundary is read, never moved."""
    thread = await storage.get_thread_by_id(thread_id, resource_id)
    stored = TokenBoundary.of_thread(thread) if thread is not None else None
    boundary = stored.for_limits(limits) if stored is not None else None
    cost = message_cost()
    loaded = await load_history(
        storage, thread_id, resource_id, limits, cost, boundary, initial_tokens=PROMPT_OVERHEAD
    )
    message_list = MessageList(thread_id=thread_id)
    message_list.add(loaded.messages, "memory")
    if system is not None:
        message_list.add_system(system, source="memory")
    # No request context: the limiter trims only and writes no boundary, as Mastra's getContext.
    await MemoryTokenLimiter(storage, limits, cost=cost).process_input([], message_list)
    return message_list.all()
