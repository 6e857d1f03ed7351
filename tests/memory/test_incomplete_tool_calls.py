"""Mastra's ``filterIncompleteToolCalls`` on stored messages (docs/spec.md §5.11); the agreement with Mastra's
own prompt is proved in tests/interop/test_mastra_thread_helpers.py."""

from __future__ import annotations

from typing import Any

import pytest

from mastra_memory.errors import ConfigError, ValidationError
from mastra_memory.memory import MemoryConfig, filter_incomplete_tool_calls
from mastra_memory.messages import MastraDBMessage, ToolInvocationPart


def _message(id: str, role: str, parts: list[dict[str, Any]], second: int, **content: Any) -> MastraDBMessage:
    return MastraDBMessage.model_validate(
        {
            "id": id,
            "threadId": "t",
            "resourceId": "r",
            "role": role,
            "createdAt": f"2024-01-01T00:00:{second:02d}.000Z",
            "content": {"format": 2, "parts": parts, **content},
        }
    )


def _call(id: str, state: str, result: Any = None) -> dict[str, Any]:
    invocation = {"state": state, "toolCallId": id, "toolName": "lookup", "args": {}}
    if result is not None:
        invocation["result"] = result
    return {"type": "tool-invocation", "toolInvocation": invocation}


def _states(messages: list[MastraDBMessage]) -> list[tuple[str, list[tuple[str, str, Any]]]]:
    return [
        (
            m.id,
            [
                (p.tool_invocation.tool_call_id, p.tool_invocation.state, p.tool_invocation.result)
                for p in m.content.parts
                if isinstance(p, ToolInvocationPart)
            ],
        )
        for m in messages
    ]


CONVERSATION = [
    _message("u", "user", [{"type": "text", "text": "look it up"}], 1),
    _message(
        "a",
        "assistant",
        [{"type": "text", "text": "on it"}, _call("ok", "result", 1), _call("waiting", "call")],
        2,
        toolInvocations=[
            {"state": "result", "toolCallId": "ok", "toolName": "lookup", "args": {}, "result": 1},
            {"state": "call", "toolCallId": "waiting", "toolName": "lookup", "args": {}},
        ],
    ),
    _message("b", "assistant", [_call("alone", "call")], 3),
]


def test_suspended_calls_are_dropped_by_default_and_messages_left_empty_go() -> None:
    kept = filter_incomplete_tool_calls(CONVERSATION)
    assert _states(kept) == [("u", []), ("a", [("ok", "result", 1)])]
    assert [i["toolCallId"] for i in kept[1].content.tool_invocations or []] == ["ok"]
    # The messages given are not changed.
    assert _states(CONVERSATION)[1] == ("a", [("ok", "result", 1), ("waiting", "call", None)])


def test_kept_suspended_calls_get_a_pending_result() -> None:
    kept = filter_incomplete_tool_calls(CONVERSATION, filter_incomplete=False)
    pending = {"status": "pending"}
    assert _states(kept) == [
        ("u", []),
        ("a", [("ok", "result", 1), ("waiting", "result", pending)]),
        ("b", [("alone", "result", pending)]),
    ]
    assert (kept[1].content.tool_invocations or [])[1]["result"] == pending
    assert kept[0] is CONVERSATION[0]  # untouched messages are passed through


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValidationError):
        filter_incomplete_tool_calls(CONVERSATION, filter_incomplete="no")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        filter_incomplete_tool_calls([{"role": "user", "content": "hi"}])  # type: ignore[list-item]


def test_the_mastra_option_loads() -> None:
    assert MemoryConfig.from_any({}).filter_incomplete_tool_calls is True
    assert MemoryConfig.from_any({"filterIncompleteToolCalls": False}).filter_incomplete_tool_calls is False
    with pytest.raises(ConfigError):
        MemoryConfig.from_any({"filterIncompleteToolCalls": "false"})
