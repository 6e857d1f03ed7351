"""ToolCallFilter (docs/spec.md §5.12): which tool calls the model receives from memory, by name, by
recent step (``filter_after_tool_steps``) and with the tool's model-facing output kept as text
(``preserve_model_output``). tests/interop/test_mastra_processors.py runs the same options in Mastra."""

from __future__ import annotations

from typing import Any

import pytest

from mastra_memory.errors import ConfigError
from mastra_memory.memory import MessageList, ToolCallFilter
from mastra_memory.messages import TextPart, ToolInvocationPart


def tool(
    call_id: str, name: str = "weather", state: str = "result", model_output: Any = None
) -> dict[str, Any]:
    invocation: dict[str, Any] = {"state": state, "toolCallId": call_id, "toolName": name, "args": {"q": 1}}
    if state == "result":
        invocation["result"] = {"temp": 20}
    part: dict[str, Any] = {"type": "tool-invocation", "toolInvocation": invocation}
    if model_output is not None:
        part["providerMetadata"] = {"mastra": {"modelOutput": model_output}}
    return part


def msg(mid: str, parts: list[dict[str, Any]], role: str = "assistant") -> dict[str, Any]:
    return {"id": mid, "thread_id": "t", "role": role, "content": {"format": 2, "parts": parts}}


STEP = {"type": "step-start"}


def turn(*memory: dict[str, Any], new: list[dict[str, Any]] | None = None) -> MessageList:
    listing = MessageList(thread_id="t", resource_id="r")
    listing.add(list(memory), source="memory")
    listing.add(new or [msg("q", [{"type": "text", "text": "question"}], role="user")], source="input")
    return listing


def calls(listing: MessageList) -> list[str]:
    return [
        p.tool_invocation.tool_call_id
        for m in listing.all()
        for p in m.content.parts
        if isinstance(p, ToolInvocationPart)
    ]


async def test_filter_after_tool_steps_keeps_the_newest_steps() -> None:
    history = [
        msg("a1", [STEP, tool("c1"), STEP, tool("c2", "search")]),
        msg("a2", [STEP, tool("c3"), {"type": "text", "text": "done"}]),
    ]
    listing = turn(*history)
    await ToolCallFilter(filter_after_tool_steps=2).process_input([], listing)
    assert calls(listing) == ["c2", "c3"]  # a step is an assistant message's block between step-starts
    listing = turn(*history)
    await ToolCallFilter(filter_after_tool_steps=0).process_input([], listing)
    assert calls(listing) == []
    listing = turn(*history)
    await ToolCallFilter(["search"], filter_after_tool_steps=-3).process_input([], listing)
    assert calls(listing) == ["c1", "c3"]  # a negative count keeps no step, as Mastra's


async def test_this_turns_messages_are_never_changed() -> None:
    new = [msg("n1", [tool("c9")])]
    listing = turn(msg("a1", [tool("c1")]), new=new)
    await ToolCallFilter(filter_after_tool_steps=0).process_input([], listing)
    assert calls(listing) == ["c9"]


async def test_a_call_and_its_result_stored_apart_go_together() -> None:
    listing = turn(
        msg("a1", [tool("c1", state="call"), {"type": "text", "text": "asking"}]),
        msg("a2", [tool("c1")]),
        msg("a3", [STEP, tool("c2")]),
    )
    await ToolCallFilter(filter_after_tool_steps=1).process_input([], listing)
    assert calls(listing) == ["c2"]
    assert "a2" not in listing  # left with nothing: dropped from the list


async def test_preserve_model_output_keeps_the_tools_model_facing_output_as_text() -> None:
    listing = turn(
        msg("a1", [tool("c1", model_output={"type": "text", "value": "20C in Kyoto"}), tool("c2")]),
        msg("a2", [tool("c3", model_output={"type": "json", "value": {"temp": 21}})]),
        msg("a3", [tool("c4", model_output=["a", {"type": "text", "text": "b"}])]),
    )
    await ToolCallFilter(preserve_model_output=True).process_input([], listing)
    texts = [[p.text for p in m.content.parts if isinstance(p, TextPart)] for m in listing.all()]
    # Only a result with an own modelOutput gets a text (c2 has none); the tool name leads it.
    assert texts == [
        ["weather result:\n20C in Kyoto"],
        ['weather result:\n{"temp":21}'],
        ["weather result:\na\nb"],
        ["question"],
    ]
    assert calls(listing) == []


def test_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="filter_after_tool_steps"):
        ToolCallFilter(filter_after_tool_steps="2")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="preserve_model_output"):
        ToolCallFilter(preserve_model_output="yes")  # type: ignore[arg-type]
