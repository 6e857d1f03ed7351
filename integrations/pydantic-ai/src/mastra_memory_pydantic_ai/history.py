"""Storing PydanticAI messages in a mastra-memory thread, and reading them back as ``message_history``.

One ``ModelMessage`` is one stored message: the message itself, serialised by PydanticAI's own
``ModelMessagesTypeAdapter``, rides verbatim in a ``data-pydantic-ai-message`` part (so
:func:`load_message_history` gives back equal messages), and beside it the Mastra view: the user prompt or
the response text (embedded for recall when the ``Memory`` has semantic recall on) and a
``tool-invocation`` part per tool call or tool return.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from mastra_memory.errors import ThreadOwnershipError, ValidationError
from mastra_memory.memory import Memory, SaveResult
from mastra_memory.memory.recall.formatting import HEADER
from mastra_memory.messages import DataPart, MastraDBMessage
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

#: The ``type`` of the part that holds the serialised ``ModelMessage``.
MESSAGE_PART_TYPE = "data-pydantic-ai-message"


def require_id(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{what} must be a non-empty string, got {value!r}")
    return value


def is_recall_part(part: Any) -> bool:
    """True for the system prompt part :class:`~mastra_memory_pydantic_ai.MemoryRecall` injects."""
    return isinstance(part, SystemPromptPart) and part.content.startswith(HEADER)


def without_recall(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """``messages`` without injected recall parts (a request left empty by that is dropped)."""
    kept: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest) and any(is_recall_part(p) for p in message.parts):
            parts = [p for p in message.parts if not is_recall_part(p)]
            if not parts:
                continue
            message = dataclasses.replace(message, parts=parts)
        kept.append(message)
    return kept


def user_text(part: UserPromptPart) -> str:
    """The text of a user prompt: its string content, or the string items of a multi-modal one."""
    if isinstance(part.content, str):
        return part.content
    return "\n".join(item for item in part.content if isinstance(item, str))


async def ensure_thread(memory: Memory, thread_id: str, resource_id: str) -> bool:
    """Check that ``thread_id`` is ``resource_id``'s; False when it does not exist yet."""
    await memory.init()
    thread = await memory.storage.get_thread_by_id(thread_id)
    if thread is None:
        return False
    if thread.resource_id != resource_id:
        raise ThreadOwnershipError(
            f"thread {thread_id!r} belongs to another resource than {resource_id!r}; "
            "use another thread_id or the resource_id that owns it"
        )
    return True


async def save_run_messages(
    memory: Memory, messages: Sequence[ModelMessage], *, thread_id: str, resource_id: str
) -> SaveResult:
    """Store a run's messages (``result.new_messages()``) in the thread, in order, in one atomic save.

    The thread is created, owned by ``resource_id``, when it does not exist; one of another resource
    raises ``ThreadOwnershipError`` before anything is written. Recall context that
    :class:`~mastra_memory_pydantic_ai.MemoryRecall` injected is not stored. Anything that is not a
    ``ModelRequest`` or ``ModelResponse`` raises ``ValidationError`` before any I/O.
    """
    require_id(thread_id, "thread_id")
    require_id(resource_id, "resource_id")
    for position, message in enumerate(messages):
        if not isinstance(message, ModelRequest | ModelResponse):
            raise ValidationError(
                f"message [{position}] must be a pydantic_ai ModelRequest or ModelResponse, "
                f"got {type(message).__name__}; pass result.new_messages()"
            )
    kept = without_recall(messages)
    dumped: list[dict[str, Any]] = ModelMessagesTypeAdapter.dump_python(kept, mode="json")
    records = [
        {"thread_id": thread_id, "resource_id": resource_id, **_mastra_view(message, data)}
        for message, data in zip(kept, dumped, strict=True)
    ]
    if not records:
        return SaveResult(messages=[])
    if not await ensure_thread(memory, thread_id, resource_id):
        # create_thread replaces an existing thread, so it runs only when there is none.
        await memory.create_thread(resource_id=resource_id, thread_id=thread_id)
    return await memory.save_messages(records)


async def load_message_history(
    memory: Memory, *, thread_id: str, resource_id: str, last: int | None = None
) -> list[ModelMessage]:
    """The thread's PydanticAI messages, oldest first, for ``agent.run(..., message_history=...)``; with
    ``last``, the newest ``last`` of them (a tool call is never separated from its return: the window
    widens to start at a user prompt). Messages written to the thread by other code are left out."""
    require_id(thread_id, "thread_id")
    require_id(resource_id, "resource_id")
    if last is not None and (isinstance(last, bool) or not isinstance(last, int) or last < 0):
        raise ValidationError(f"last must be None or an int >= 0, got {last!r}")
    if not await ensure_thread(memory, thread_id, resource_id):
        return []
    page = await memory.storage.list_messages(thread_id, resource_id=resource_id, per_page=False)
    data = [d for d in (_data_of(m) for m in page.messages) if d is not None]
    history = ModelMessagesTypeAdapter.validate_python(data)
    if last is None:
        return history
    if last == 0:
        return []
    start = max(len(history) - last, 0)
    # PydanticAI needs every tool return's call in the history: start at a request with a user prompt.
    while start > 0 and not _starts_turn(history[start]):
        start -= 1
    return history[start:]


def _starts_turn(message: ModelMessage) -> bool:
    return isinstance(message, ModelRequest) and any(isinstance(p, UserPromptPart) for p in message.parts)


def _data_of(message: MastraDBMessage) -> dict[str, Any] | None:
    for part in message.content.parts:
        if isinstance(part, DataPart) and part.type == MESSAGE_PART_TYPE and isinstance(part.data, dict):
            return part.data
    return None


def _mastra_view(message: ModelMessage, data: Mapping[str, Any]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    texts: list[str] = []
    if isinstance(message, ModelRequest):
        prompts = [p for p in message.parts if isinstance(p, UserPromptPart)]
        texts = [t for t in (user_text(p) for p in prompts) if t]
        # Tool returns alone: Mastra keeps tool results with the assistant.
        role = "user" if prompts else "assistant"
        for request_part, dumped in zip(message.parts, data["parts"], strict=True):
            if isinstance(request_part, ToolReturnPart):  # the dumped content: JSON, as stored
                call_id, name = request_part.tool_call_id, request_part.tool_name
                parts.append(_invocation("result", call_id, name, {}, dumped.get("content")))
    else:
        role = "assistant"
        texts = [p.content for p in message.parts if isinstance(p, TextPart) and p.content]
        for response_part in message.parts:
            if isinstance(response_part, ToolCallPart):
                call_id, name = response_part.tool_call_id, response_part.tool_name
                parts.append(_invocation("call", call_id, name, response_part.args_as_dict(), None))
    content: dict[str, Any] = {"format": 2, "parts": []}
    if texts:
        text = "\n".join(texts)
        content["content"] = text
        content["parts"].append({"type": "text", "text": text})
    content["parts"] += [*parts, {"type": MESSAGE_PART_TYPE, "data": dict(data)}]
    return {"role": role, "content": content}


def _invocation(state: str, call_id: str, name: str, args: Any, result: Any) -> dict[str, Any]:
    invocation = {"state": state, "tool_call_id": call_id, "tool_name": name, "args": args}
    if state == "result":
        invocation["result"] = result
    return {"type": "tool-invocation", "tool_invocation": invocation}
