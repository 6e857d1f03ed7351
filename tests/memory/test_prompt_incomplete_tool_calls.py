"""``filterIncompleteToolCalls`` applied where stored messages become the prompt: ``MessageHistory``'s input
step (docs/spec.md §5.11, §5.12). Before, the option was read by nothing: a suspended tool call in history
reached the model without a result (providers reject that). The rule itself is compared with Mastra's prompt
in tests/interop/test_mastra_thread_helpers.py."""

from __future__ import annotations

from typing import Any

import pytest

from mastra_memory.memory import Memory, MessageHistory
from mastra_memory.memory.message_list import MessageList
from mastra_memory.messages import MastraDBMessage, ToolInvocationPart
from mastra_memory.stores.sqlite.storage import SQLiteStorage

PENDING = {"status": "pending"}


def _message(id: str, role: str, parts: list[dict[str, Any]], second: int) -> dict[str, Any]:
    return {
        "id": id,
        "thread_id": "t1",
        "resource_id": "r1",
        "role": role,
        "created_at": f"2024-01-01T00:00:{second:02d}.000Z",
        "content": {"format": 2, "parts": parts},
    }


def _call(id: str, state: str, result: Any = None) -> dict[str, Any]:
    invocation: dict[str, Any] = {"state": state, "toolCallId": id, "toolName": "lookup", "args": {}}
    if result is not None:
        invocation["result"] = result
    return {"type": "tool-invocation", "toolInvocation": invocation}


STORED = [
    _message("u1", "user", [{"type": "text", "text": "look it up"}], 1),
    _message(
        "a1",
        "assistant",
        [{"type": "text", "text": "on it"}, _call("ok", "result", 1), _call("w", "call")],
        2,
    ),
    _message("a2", "assistant", [_call("alone", "call")], 3),
]


def _ctx(**memory_config: Any) -> dict[str, Any]:
    context: dict[str, Any] = {"thread": {"id": "t1"}, "resourceId": "r1"}
    if memory_config:
        context["memoryConfig"] = memory_config
    return {"MastraMemory": context}


def _calls(messages: list[MastraDBMessage]) -> list[tuple[str, list[tuple[str, str, Any]]]]:
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


async def _prompt(memory: Memory, request: dict[str, Any], turn: list[dict[str, Any]]) -> MessageList:
    [history] = [p for p in memory.get_input_processors(request_context=request) if p.id == "message-history"]
    message_list = MessageList(turn, thread_id="t1", resource_id="r1")
    await history.process_input(message_list.all(), message_list, request_context=request)
    return message_list


@pytest.fixture
async def memory() -> Any:
    m = Memory(storage=SQLiteStorage(":memory:"), options={"lastMessages": 10})
    await m.create_thread("r1", "t1")
    await m.save_messages(STORED)
    yield m
    await m.close()


NEW_TURN = [_message("u2", "user", [{"type": "text", "text": "and now?"}], 9)]


async def test_suspended_calls_in_history_are_left_out_of_the_prompt(memory: Memory) -> None:
    message_list = await _prompt(memory, _ctx(), NEW_TURN)
    assert _calls(message_list.all()) == [("u1", []), ("a1", [("ok", "result", 1)]), ("u2", [])]
    # Storage is untouched: the filter shapes the prompt only.
    stored = (await memory.recall("t1", "r1")).messages
    assert _calls(stored)[1:] == [
        ("a1", [("ok", "result", 1), ("w", "call", None)]),
        ("a2", [("alone", "call", None)]),
    ]


async def test_kept_with_a_pending_result_when_the_option_is_off() -> None:
    memory = Memory(
        storage=SQLiteStorage(":memory:"), options={"lastMessages": 10, "filterIncompleteToolCalls": False}
    )
    try:
        await memory.create_thread("r1", "t1")
        await memory.save_messages(STORED)
        message_list = await _prompt(memory, _ctx(), NEW_TURN)
        assert _calls(message_list.all()) == [
            ("u1", []),
            ("a1", [("ok", "result", 1), ("w", "result", PENDING)]),
            ("a2", [("alone", "result", PENDING)]),
            ("u2", []),
        ]
        # A request can turn it back on.
        on = await _prompt(memory, _ctx(filterIncompleteToolCalls=True), NEW_TURN)
        assert [m.id for m in on.all()] == ["u1", "a1", "u2"]
    finally:
        await memory.close()


async def test_per_request_off_and_the_turns_own_messages_unchanged(memory: Memory) -> None:
    off = await _prompt(memory, _ctx(filterIncompleteToolCalls=False), NEW_TURN)
    assert [m.id for m in off.all()] == ["u1", "a1", "a2", "u2"]
    # The turn's own messages are stored by output as they are, so they are never changed here [Δ].
    own = [*NEW_TURN, _message("a3", "assistant", [_call("mine", "call")], 10)]
    message_list = await _prompt(memory, _ctx(), own)
    assert _calls(message_list.all())[-1] == ("a3", [("mine", "call", None)])
    assert [m.id for m in message_list.all()] == ["u1", "a1", "u2", "a3"]


async def test_a_standalone_message_history_processor_filters_too() -> None:
    storage = SQLiteStorage(":memory:")
    memory = Memory(storage=storage)
    try:
        await memory.create_thread("r1", "t1")
        await memory.save_messages(STORED)
        history = MessageHistory(storage, last_messages=10)
        message_list = MessageList(NEW_TURN, thread_id="t1", resource_id="r1")
        await history.process_input(message_list.all(), message_list, request_context=_ctx())
        assert [m.id for m in message_list.all()] == ["u1", "a1", "u2"]
        kept = MessageHistory(storage, last_messages=10, filter_incomplete_tool_calls=False)
        message_list = MessageList(NEW_TURN, thread_id="t1", resource_id="r1")
        await kept.process_input(message_list.all(), message_list, request_context=_ctx())
        assert [m.id for m in message_list.all()] == ["u1", "a1", "a2", "u2"]
    finally:
        await memory.close()
