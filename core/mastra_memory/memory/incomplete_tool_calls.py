"""Mastra's ``filterIncompleteToolCalls`` (docs/spec.md §5.11) on stored messages: what of a conversation's
tool calls may go into a model prompt.

Mastra decides this when its ``MessageList`` turns messages into a prompt: a tool call with a result, an
error or a denial stays; a call still waiting for its result (``state`` ``"call"``, ``"partial-call"``,
``"approval-requested"`` or ``"approval-responded"``, each Mastra's ``input-available``: a suspended tool)
is dropped by default, or — with ``filterIncompleteToolCalls: false`` — kept and paired with
a ``{"status": "pending"}`` result, because providers refuse a call without a result; a provider-executed
call stays only in the assistant turn still open (the last assistant message after the last user message).
A message left with no parts is dropped. This module applies the same rule to ``MastraDBMessage``s, so a
Python agent builds the prompt Mastra would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import ValidationError
from ..messages import MastraDBMessage, ToolInvocationPart

__all__ = ["PENDING_RESULT", "filter_incomplete_tool_calls"]

#: The result a kept suspended call is paired with (Mastra's placeholder).
PENDING_RESULT = {"status": "pending"}
#: Answered: a result, an error, or a denial (Mastra gives the model the denial as an error result).
_ANSWERED = ("result", "output-error", "output-denied")
#: Waiting for a result: Mastra reads each as ``input-available``.
_WAITING = ("call", "partial-call", "approval-requested", "approval-responded")


def filter_incomplete_tool_calls(
    messages: Sequence[MastraDBMessage], *, filter_incomplete: bool = True
) -> list[MastraDBMessage]:
    """``messages`` as they may enter a prompt, by Mastra's rule (module docstring). ``filter_incomplete`` is
    Mastra's ``filterIncompleteToolCalls`` (default True: suspended calls dropped; False: kept, paired with
    :data:`PENDING_RESULT`). The messages given are not changed; changed ones are copies."""
    if not isinstance(filter_incomplete, bool):
        raise ValidationError(f"filter_incomplete must be True or False, got {filter_incomplete!r}")
    messages = list(messages)
    for m in messages:
        if not isinstance(m, MastraDBMessage):
            raise ValidationError(
                "filter_incomplete_tool_calls takes stored messages (MastraDBMessage), not "
                f"{type(m).__name__}; normalise input first (mastra_memory.messages.normalize_messages)"
            )
    open_turn = _open_assistant_turn(messages, filter_incomplete)
    kept: list[MastraDBMessage] = []
    for index, message in enumerate(messages):
        changed = _filtered(message, filter_incomplete, still_open=index == open_turn)
        if changed is not None:
            kept.append(changed)
    return kept


def _open_assistant_turn(messages: list[MastraDBMessage], filter_incomplete: bool) -> int:
    """The index of the last assistant message after the last user message that keeps a part when its turn
    counts as open; -1 when there is none (Mastra's ``lastSurvivingAssistantIdx``)."""
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    for i in range(len(messages) - 1, last_user, -1):
        message = messages[i]
        parts = message.content.parts
        if message.role == "assistant" and any(_keep(p, filter_incomplete, still_open=True) for p in parts):
            return i
    return -1


def _keep(part: Any, filter_incomplete: bool, *, still_open: bool) -> bool:
    if not isinstance(part, ToolInvocationPart):
        return True
    state = part.tool_invocation.state
    if state in _ANSWERED:
        return True
    if state in _WAITING:
        if part.provider_executed is True:
            return still_open
        return not filter_incomplete
    return False


def _filtered(
    message: MastraDBMessage, filter_incomplete: bool, *, still_open: bool
) -> MastraDBMessage | None:
    parts = message.content.parts
    if not any(isinstance(p, ToolInvocationPart) for p in parts):
        return message
    new_parts: list[Any] = []
    dropped: set[str] = set()
    pending: set[str] = set()
    for part in parts:
        if not _keep(part, filter_incomplete, still_open=still_open):
            if isinstance(part, ToolInvocationPart):
                dropped.add(part.tool_invocation.tool_call_id)
            continue
        if (
            isinstance(part, ToolInvocationPart)
            and part.tool_invocation.state in _WAITING
            and part.provider_executed is not True
        ):
            # A suspended call kept in the prompt gets the placeholder result providers require.
            call = part.tool_invocation.model_copy(update={"state": "result", "result": dict(PENDING_RESULT)})
            part = part.model_copy(update={"tool_invocation": call})
            pending.add(call.tool_call_id)
        new_parts.append(part)
    if not dropped and not pending:
        return message
    if not new_parts:
        return None
    content = message.content.model_copy(
        update={
            "parts": new_parts,
            "tool_invocations": _mirror(message.content.tool_invocations, dropped, pending),
        }
    )
    return message.model_copy(update={"content": content})


def _mirror(mirror: list[Any] | None, dropped: set[str], pending: set[str]) -> list[Any] | None:
    """The v1 ``toolInvocations`` mirror kept in step with the parts."""
    if mirror is None:
        return None
    out: list[Any] = []
    for item in mirror:
        call_id = item.get("toolCallId", item.get("tool_call_id")) if isinstance(item, dict) else None
        if call_id in dropped:
            continue
        if call_id in pending:
            item = {**item, "state": "result", "result": dict(PENDING_RESULT)}
        out.append(item)
    return out
