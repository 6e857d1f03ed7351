"""The ``ObservationalMemory`` processor (docs/spec.md §5.14): Mastra's ``observational-memory`` processor,
last in the input chain and last in the output chain.

Input: observes first when the stored unobserved messages reach the threshold (so the prompt is built
from the newest observations), then puts the observations in one system message and the thread's
unobserved messages (tagged ``memory``) ahead of the new input, so the prompt carries the observations
instead of the observed messages. With observational memory on, ``MessageHistory`` is not in the input
chain (as in Mastra: this processor loads the history). Output: the turn is stored as ``MessageHistory``
stores it, then the threshold is checked again. A model failure is logged and reported to the hooks; the
turn goes on with the unobserved messages in the prompt (docs/spec.md §5.14).
"""

from __future__ import annotations

from ...messages import MastraDBMessage
from ..message_list import MessageList
from ..processors.base import InputCall, InputProcessor, OutputCall, OutputProcessor
from ..processors.context import MemoryContext
from ..processors.history import MessageHistory
from .engine import ObservationEngine
from .groups import strip_groups
from .prompts import context_message

PROCESSOR_ID = "observational-memory"


class ObservationalMemory(InputProcessor, OutputProcessor):
    """Observations in the prompt instead of the observed messages, and the cycles that write them."""

    id = PROCESSOR_ID
    name = "ObservationalMemory"

    def __init__(self, engine: ObservationEngine, *, read_only: bool = False) -> None:
        self.engine = engine
        self.read_only = read_only
        self._history = MessageHistory(engine.storage, last_messages=False, read_only=read_only)

    async def _owner(self, ctx: MemoryContext) -> str | None:
        if ctx.resource_id is not None:
            return ctx.resource_id
        thread = await self.engine.storage.get_thread_by_id(ctx.thread_id)
        return thread.resource_id if thread is not None else None

    async def _process_input(self, call: InputCall) -> MessageList:
        message_list = call.message_list
        ctx = MemoryContext.read(call.request_context)
        if ctx is None:
            return message_list
        resource_id = await self._owner(ctx)
        if resource_id is None:
            return message_list  # a thread not stored yet: nothing observed, nothing to load
        engine = self.engine
        await engine.check_owner(ctx.thread_id, resource_id)
        if not (self.read_only or ctx.read_only):
            await engine.observe(ctx.thread_id, resource_id)
        record = await engine.current(ctx.thread_id, resource_id)
        if record is None:
            history = await self._thread_messages(ctx.thread_id, resource_id)
        else:
            pending = await engine.unobserved(record, ctx.thread_id, resource_id)
            history = [m for m in pending if m.thread_id == ctx.thread_id]
            observed = set(record.observed_message_ids or ())
            # What other processors put in the list from memory and is now observed leaves the prompt.
            stale = [
                m.id
                for m in message_list.all()
                if not message_list.is_new(m.id)
                and m.thread_id == ctx.thread_id
                and (
                    m.id in observed
                    or (record.last_observed_at is not None and m.created_at < record.last_observed_at)
                )
            ]
            message_list.remove(stale)
            if record.active_observations.strip():
                retrieval = engine.options.retrieval_config
                shown = record.active_observations if retrieval else strip_groups(record.active_observations)
                message_list.add_system(
                    context_message(
                        shown,
                        retrieval=retrieval is not None,
                        search=bool(retrieval and retrieval.vector),
                        retrieval_instructions=retrieval.instructions if retrieval else None,
                    ),
                    source="memory",
                )
        fresh = [m for m in history if m.id not in message_list]
        if fresh:
            message_list.add(fresh, source="memory")
        return message_list

    async def _thread_messages(self, thread_id: str, resource_id: str) -> list[MastraDBMessage]:
        page = await self.engine.storage.list_messages(thread_id, resource_id=resource_id, per_page=False)
        return [m for m in page.messages if m.role != "system"]

    async def _process_output(self, call: OutputCall) -> MessageList | list[MastraDBMessage]:
        result = await self._history.process_output_result(
            call.messages, call.message_list, call.abort, None, call.request_context
        )
        ctx = MemoryContext.read(call.request_context)
        if ctx is not None and not (self.read_only or ctx.read_only):
            resource_id = await self._owner(ctx)
            if resource_id is not None:
                await self.engine.observe(ctx.thread_id, resource_id)
        return result
