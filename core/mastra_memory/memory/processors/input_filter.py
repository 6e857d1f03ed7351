"""``MemoryInputFilter`` (docs/spec.md §5.12): the first input step whenever history is loaded. It keeps
only the part of a request's input that memory does not already hold, so a client that resends the whole
conversation (as chat UIs do, under the stored ids or new ones) does not get it stored twice.

The rules are Mastra 1.31's (``@mastra/core`` ``MemoryInputFilter``): what the request may add is read
from the tail of its input, not by comparing texts.
"""

from __future__ import annotations

from typing import Any, Literal

from ...messages import MastraDBMessage, Part, ToolInvocationPart
from ...storage import MemoryStorage
from ..message_list import MessageList
from .base import InputCall, InputProcessor
from .context import MemoryContext

#: How far a tool invocation has got (Mastra's order); the outcomes share the last rank.
_STATE_RANK = {
    "partial-call": 0,
    "call": 1,
    "approval-requested": 2,
    "approval-responded": 3,
    "result": 4,
    "output-error": 4,
    "output-denied": 4,
}
_DONE = 4


def is_client_update(part: Part) -> bool:
    """Whether ``part`` is a tool outcome or an approval answer a client may send for a pending call."""
    if not isinstance(part, ToolInvocationPart):
        return False
    return (
        part.tool_invocation.state == "approval-responded" or _STATE_RANK[part.tool_invocation.state] == _DONE
    )


def _advances(stored: str, incoming: str) -> bool:
    return _STATE_RANK[stored] != _DONE and _STATE_RANK[incoming] > _STATE_RANK[stored]


def _without_provider_metadata(message: MastraDBMessage) -> MastraDBMessage:
    """An assistant message of a seed without its parts' provider metadata (the item ids name items of a
    conversation this request never had); client tool outcomes keep theirs, that data is the client's."""
    if message.role != "assistant":
        return message
    parts: list[Any] = []
    for part in message.content.parts:
        if is_client_update(part):
            parts.append(part)
            continue
        data = part.model_dump(by_alias=True, exclude={"provider_metadata"})
        data.pop("providerOptions", None)
        data.pop("provider_options", None)
        parts.append(type(part).model_validate(data))
    return message.model_copy(update={"content": message.content.model_copy(update={"parts": parts})})


def with_updates(stored: MastraDBMessage, updates: list[ToolInvocationPart]) -> MastraDBMessage | None:
    """The stored message with each of ``updates`` that moves a pending call of it forward put in that
    call's place; None when none does. The stored copy stays the base: its text, reasoning, provider
    metadata and ``created_at`` are kept (a client cannot rewrite a stored message by resending it)."""
    by_call = {u.tool_invocation.tool_call_id: u for u in updates}
    parts: list[Any] = []
    changed = False
    for part in stored.content.parts:
        if isinstance(part, ToolInvocationPart):
            update = by_call.get(part.tool_invocation.tool_call_id)
            if update is not None and _advances(part.tool_invocation.state, update.tool_invocation.state):
                parts.append(part.model_copy(update={"tool_invocation": update.tool_invocation}))
                changed = True
                continue
        parts.append(part)
    if not changed:
        return None
    return stored.model_copy(update={"content": stored.content.model_copy(update={"parts": parts})})


class MemoryInputFilter(InputProcessor):
    """Trims the request's input down to what memory does not hold yet (Mastra's ``MemoryInputFilter``).

    For a thread with stored messages, by the input's last message: trailing user messages are kept back
    to the last assistant message (all of them: they are new), plus that assistant message's client tool
    outcomes for calls its stored copy still has pending; a trailing assistant message keeps only its
    trailing run of client tool outcomes, or is dropped when it has none and is stored already (an
    assistant message that was never stored, such as an instruction, stays). Outcomes are layered on the
    stored copy of their message (same id, same thread), so storing the turn never loses the stored text.
    For a thread without stored messages the whole input is the seed, its assistant messages' provider
    metadata removed. ``retain_full_input`` (here or in the request's ``memory_config``) leaves the input
    as given.
    """

    id = "memory-input-filter"
    name = "MemoryInputFilter"

    def __init__(self, storage: MemoryStorage, retain_full_input: bool = False) -> None:
        self.storage = storage
        self.retain_full_input = retain_full_input

    async def _process_input(self, call: InputCall) -> MessageList:
        """Drop the echoed part of the input (docs/spec.md §5.12)."""
        message_list = call.message_list
        given = message_list.from_source("input")
        ctx = MemoryContext.read(call.request_context)
        if not given or (
            ctx.option("retain_full_input", self.retain_full_input) if ctx else self.retain_full_input
        ):
            return message_list
        thread_id = ctx.thread_id if ctx is not None else message_list.thread_id
        resource_id = ctx.resource_id if ctx is not None else message_list.resource_id
        if not thread_id:
            return message_list
        last = given[-1]
        pending_from: MastraDBMessage | None = None
        if last.role == "user":
            cut = max((i for i, m in enumerate(given) if m.role == "assistant"), default=-1)
            kept = given[cut + 1 :]
            pending_from = given[cut] if cut >= 0 else None
        elif last.role == "assistant":
            kept = [] if (tail := self._trailing_updates(last)) is None else [tail]
        else:
            return message_list
        if len(kept) == len(given) and all(a is b for a, b in zip(kept, given, strict=True)):
            return message_list
        newest = await self.storage.list_messages(
            thread_id,
            resource_id=resource_id,
            per_page=1,
            page=0,
            order_by={"field": "created_at", "direction": "DESC"},
            include_total=False,
        )
        if not newest.messages:  # nothing stored: the whole input seeds the thread
            return self._replace(message_list, given, [_without_provider_metadata(m) for m in given])
        if last.role == "assistant":
            if not kept:
                if not await self.storage.list_messages_by_id([last.id]):
                    return message_list  # never stored (an instruction): it is the prompt, keep it
            else:
                layered = await self._layered(kept[0], thread_id)
                kept = [] if layered is False else [layered] if layered is not None else kept
        elif pending_from is not None:
            layered = await self._layered(pending_from, thread_id)
            if isinstance(layered, MastraDBMessage):
                kept = [layered, *kept]
        return self._replace(message_list, given, kept)

    @staticmethod
    def _trailing_updates(message: MastraDBMessage) -> MastraDBMessage | None:
        """``message`` reduced to its trailing run of client tool outcomes (data parts skipped), or None."""
        run: list[Any] = []
        for part in reversed(message.content.parts):
            if str(getattr(part, "type", "")).startswith("data-"):
                continue
            if not is_client_update(part):
                break
            run.insert(0, part)
        if not run:
            return None
        return message.model_copy(
            update={"content": message.content.model_copy(update={"content": "", "parts": run})}
        )

    async def _layered(
        self, message: MastraDBMessage, thread_id: str
    ) -> MastraDBMessage | Literal[False] | None:
        """The stored copy of ``message`` with its client outcomes that move a pending call forward; False
        when it is stored but none does (nothing new), None when there is no stored copy in this thread."""
        updates = [
            p for p in message.content.parts if isinstance(p, ToolInvocationPart) and is_client_update(p)
        ]
        if not updates:
            return None
        stored = [m for m in await self.storage.list_messages_by_id([message.id]) if m.thread_id == thread_id]
        if not stored:
            return None
        return with_updates(stored[0], updates) or False

    @staticmethod
    def _replace(
        message_list: MessageList, given: list[MastraDBMessage], kept: list[MastraDBMessage]
    ) -> MessageList:
        message_list.remove(m.id for m in given)
        return message_list.add(kept, source="input")
