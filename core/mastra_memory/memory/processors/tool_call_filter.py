"""``ToolCallFilter`` (docs/spec.md §5.12): tool calls and their results, all or by tool name, left out of
the history and recalled messages the model receives."""

from __future__ import annotations

from collections.abc import Iterable

from ...errors import ConfigError
from ...messages import ToolInvocationPart
from ..message_list import MessageList
from .base import InputCall, InputProcessor


class ToolCallFilter(InputProcessor):
    """Drops tool-invocation parts (the call and its result travel in one part) from memory messages.

    ``exclude=None`` drops every tool call; a list drops only calls of those tool names. A message left with
    no parts and no text is dropped from the list. Only messages the list holds from memory (history and
    recalled context) are filtered — this turn's own messages are the caller's (as in Mastra, memory
    processors do not change the new input) — and storage is never changed.
    """

    id = "tool-call-filter"
    name = "ToolCallFilter"

    def __init__(self, exclude: Iterable[str] | None = None) -> None:
        if isinstance(exclude, str):
            raise ConfigError("ToolCallFilter exclude must be a list of tool names, not one string")
        self.exclude: frozenset[str] | None = None if exclude is None else frozenset(exclude)

    def _drops(self, part: object) -> bool:
        return isinstance(part, ToolInvocationPart) and (
            self.exclude is None or part.tool_invocation.tool_name in self.exclude
        )

    async def _process_input(self, call: InputCall) -> MessageList:
        """Filter the list's memory messages in place (docs/spec.md §5.12)."""
        message_list = call.message_list
        emptied: list[str] = []
        for msg in message_list.all():
            if message_list.is_new(msg.id) or not any(self._drops(p) for p in msg.content.parts):
                continue
            parts = [p for p in msg.content.parts if not self._drops(p)]
            text = msg.content.content
            if not parts and not (isinstance(text, str) and text.strip()):
                emptied.append(msg.id)
                continue
            # The v1 tool_invocations mirror would reintroduce the calls: it goes with them.
            content = msg.content.model_copy(update={"parts": parts, "tool_invocations": None})
            message_list.add([msg.model_copy(update={"content": content})], source="memory")
        return message_list.remove(emptied)
