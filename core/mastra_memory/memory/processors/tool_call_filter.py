"""``ToolCallFilter`` (docs/spec.md §5.12): tool calls and their results, all or by tool name, left out of
the history and recalled messages the model receives."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ...errors import ConfigError
from ...messages import MastraDBMessage, Part, StepStartPart, TextPart, ToolInvocationPart
from ..message_list import MessageList
from .base import InputCall, InputProcessor


class ToolCallFilter(InputProcessor):
    """Drops tool-invocation parts (the call and its result travel in one part) from memory messages.

    ``exclude=None`` drops every tool call; a list drops only calls of those tool names (``[]``: none).
    Calls are dropped by tool call id, so a call and its result stored in two messages go together, as in
    Mastra. ``filter_after_tool_steps=N`` keeps the calls of the newest ``N`` tool-producing steps (an
    assistant message's parts between ``step-start`` markers, history and this turn counted alike; ``0``
    keeps none). ``preserve_model_output=True`` puts a text part ``"<tool> result:\\n<output>"`` where a
    dropped call stood when its result carries the tool's model-facing output
    (``providerMetadata.mastra.modelOutput``). A message left with no parts and no text is dropped from the
    list. Only messages the list holds from memory (history and recalled context) are changed — this turn's
    own messages are the caller's and are stored as given — and storage is never changed.
    """

    id = "tool-call-filter"
    name = "ToolCallFilter"

    def __init__(
        self,
        exclude: Iterable[str] | None = None,
        *,
        filter_after_tool_steps: int | None = None,
        preserve_model_output: bool = False,
    ) -> None:
        if isinstance(exclude, str):
            raise ConfigError("ToolCallFilter exclude must be a list of tool names, not one string")
        if filter_after_tool_steps is not None and (
            isinstance(filter_after_tool_steps, bool) or not isinstance(filter_after_tool_steps, int)
        ):
            raise ConfigError(
                "ToolCallFilter filter_after_tool_steps must be an int or None, got "
                f"{filter_after_tool_steps!r}"
            )
        if not isinstance(preserve_model_output, bool):
            raise ConfigError(
                f"ToolCallFilter preserve_model_output must be a bool, got {preserve_model_output!r}"
            )
        self.exclude: frozenset[str] | None = None if exclude is None else frozenset(exclude)
        # A negative count keeps no step, as Mastra's Math.max(0, n).
        self.filter_after_tool_steps = (
            None if filter_after_tool_steps is None else max(0, filter_after_tool_steps)
        )
        self.preserve_model_output = preserve_model_output

    def _excluded_name(self, part: object) -> bool:
        return isinstance(part, ToolInvocationPart) and (
            self.exclude is None or part.tool_invocation.tool_name in self.exclude
        )

    def _preserved(self, messages: list[MastraDBMessage]) -> set[str]:
        """Tool call ids of the newest ``filter_after_tool_steps`` tool-producing steps (Mastra counts each
        assistant prompt message with tool calls; a stored message holds one per ``step-start`` block)."""
        if not self.filter_after_tool_steps:
            return set()
        steps: list[list[str]] = []
        for msg in messages:
            if msg.role != "assistant":
                continue
            block: list[str] = []
            for part in msg.content.parts:
                if isinstance(part, StepStartPart):
                    if block:
                        steps.append(block)
                    block = []
                elif isinstance(part, ToolInvocationPart):
                    block.append(part.tool_invocation.tool_call_id)
            if block:
                steps.append(block)
        return {call_id for step in steps[-self.filter_after_tool_steps :] for call_id in step}

    async def _process_input(self, call: InputCall) -> MessageList:
        """Filter the list's memory messages in place (docs/spec.md §5.12)."""
        message_list = call.message_list
        if self.exclude is not None and not self.exclude:
            return message_list
        messages = message_list.all()
        preserved = self._preserved(messages)
        excluded = {
            part.tool_invocation.tool_call_id
            for msg in messages
            for part in msg.content.parts
            if self._excluded_name(part)
            and isinstance(part, ToolInvocationPart)
            and part.tool_invocation.tool_call_id not in preserved
        }
        if not excluded:
            return message_list
        replacements = self._replacements(messages, excluded)
        emptied: list[str] = []
        for msg in messages:
            if message_list.is_new(msg.id) or not any(_call_id(p) in excluded for p in msg.content.parts):
                continue
            parts: list[Part] = []
            for part in msg.content.parts:
                call_id = _call_id(part)
                if call_id is None or call_id not in excluded:
                    parts.append(part)
                elif (text := replacements.pop(call_id, None)) is not None:
                    parts.append(TextPart(text=text))
            text = msg.content.content
            if not parts and not (isinstance(text, str) and text.strip()):
                emptied.append(msg.id)
                continue
            # The v1 tool_invocations mirror would reintroduce the calls: it goes with them.
            content = msg.content.model_copy(update={"parts": parts, "tool_invocations": None})
            message_list.add([msg.model_copy(update={"content": content})], source="memory")
        return message_list.remove(emptied)

    def _replacements(self, messages: list[MastraDBMessage], excluded: set[str]) -> dict[str, str]:
        """``preserve_model_output``: the text standing in for each dropped call whose result carries the
        tool's model-facing output (only an own, non-null ``mastra.modelOutput`` proves it, as in Mastra)."""
        texts: dict[str, str] = {}
        if not self.preserve_model_output:
            return texts
        for msg in messages:
            for part in msg.content.parts:
                if not isinstance(part, ToolInvocationPart) or part.tool_invocation.state != "result":
                    continue
                invocation = part.tool_invocation
                mastra = (part.provider_metadata or {}).get("mastra")
                output = mastra.get("modelOutput") if isinstance(mastra, dict) else None
                if invocation.tool_call_id not in excluded or output is None:
                    continue
                if text := _output_text(output):
                    texts[invocation.tool_call_id] = f"{invocation.tool_name} result:\n{text}"
        return texts


def _call_id(part: object) -> str | None:
    return part.tool_invocation.tool_call_id if isinstance(part, ToolInvocationPart) else None


def _output_text(output: Any) -> str | None:
    """A model-facing tool output as text, by Mastra's rules: strings as they are, scalars as text, a list
    joined by lines, ``{type: "text", value}`` its value, ``{value}`` its value's text, else compact JSON."""
    if isinstance(output, str):
        return output
    if isinstance(output, bool):
        return "true" if output else "false"
    if isinstance(output, int | float):
        return _json(output)
    if isinstance(output, list):
        return "\n".join(t for item in output if (t := _output_text(item))) or _json(output)
    if isinstance(output, dict):
        if output.get("type") == "text":
            for key in ("value", "text"):
                if isinstance(output.get(key), str):
                    return str(output[key])
        if "value" in output:
            return _output_text(output["value"])
        if isinstance(output.get("text"), str):
            return str(output["text"])
        return _json(output)
    return None


def _json(value: Any) -> str | None:
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return None
