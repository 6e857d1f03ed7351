"""``MemoryInputFilter`` (issue 26 section 2, docs/spec.md §5.12): a client that resends the whole
conversation — under the stored ids or under new ones — does not get it stored twice, and the model sees
each message once. Real turns through ``Memory``'s processors on SQLite; Mastra runs the same resends in
tests/interop/test_mastra_history_budget.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from mastra_memory.errors import ThreadOwnershipError
from mastra_memory.memory import Memory
from mastra_memory.memory.message_list import MessageList
from mastra_memory.memory.processors import MemoryInputFilter
from mastra_memory.messages import TextPart, ToolInvocationPart
from mastra_memory.stores.sqlite.storage import SQLiteStorage

from .memory_helpers import ids


def ctx(**memory_config: Any) -> dict[str, Any]:
    context: dict[str, Any] = {"thread": {"id": "t"}, "resourceId": "r"}
    if memory_config:
        context["memoryConfig"] = memory_config
    return {"MastraMemory": context}


def user(mid: str, text: str) -> dict[str, Any]:
    return {"id": mid, "role": "user", "content": text, "thread_id": "t", "resource_id": "r"}


def assistant(mid: str, text: str, *parts: dict[str, Any], **content: Any) -> dict[str, Any]:
    body = (
        {"format": 2, "parts": [{"type": "text", "text": text, **content}, *parts]}
        if text
        else {
            "format": 2,
            "parts": list(parts),
        }
    )
    return {"id": mid, "role": "assistant", "content": body, "thread_id": "t", "resource_id": "r"}


def call(state: str, result: Any = None) -> dict[str, Any]:
    invocation: dict[str, Any] = {"state": state, "toolCallId": "c1", "toolName": "ask", "args": {"q": 1}}
    if result is not None:
        invocation["result"] = result
    return {"type": "tool-invocation", "toolInvocation": invocation}


async def turn(
    memory: Memory, sent: list[dict[str, Any]], reply: dict[str, Any] | None, **cfg: Any
) -> list[str]:
    """The memory input processors over what the client sent, a reply, the output processors; returns the
    ids the model received."""
    request = ctx(**cfg)
    message_list = MessageList(sent, thread_id="t", resource_id="r")
    for p in memory.get_input_processors(request_context=request):
        message_list = await p.process_input(message_list.all(), message_list, request_context=request)
    seen = ids(message_list.all())
    response = [reply] if reply else []
    message_list.add(response, source="response")
    for p in memory.get_output_processors(request_context=request):
        await p.process_output_result(response, message_list, request_context=request)
    return seen


async def stored(memory: Memory) -> list[tuple[str, str]]:
    page = await memory.storage.list_messages("t", per_page=False)
    return [
        (m.role, m.content.content or " ".join(p.text for p in m.content.parts if isinstance(p, TextPart)))
        for m in page.messages
    ]


CONVERSATION = [
    ("u1", "Hi, I am Ada."),
    ("a1", "Hello Ada."),
    ("u2", "I like Lisbon."),
    ("a2", "Lisbon is lovely."),
]


async def chat(memory: Memory, fresh_ids: bool) -> list[list[str]]:
    """Two turns, then a third where the client resends everything (as useChat does)."""
    sent: list[dict[str, Any]] = []
    seen = []
    for n, ((uid, utext), (aid, atext)) in enumerate(zip(CONVERSATION[::2], CONVERSATION[1::2], strict=True)):
        sent.append(user(f"x{uid}" if fresh_ids and n else uid, utext))
        seen.append(await turn(memory, list(sent), assistant(aid, atext)))
        sent.append(assistant(f"x{aid}" if fresh_ids else aid, atext))
    sent.append(user("u3", "And Porto?"))
    seen.append(await turn(memory, sent, assistant("a3", "Porto too.")))
    return seen


async def test_a_resent_conversation_is_stored_once(storage: SQLiteStorage) -> None:
    memory = Memory(storage=storage)
    seen = await chat(memory, fresh_ids=False)
    assert seen[-1] == ["u1", "a1", "u2", "a2", "u3"]
    assert await stored(memory) == [
        ("user", "Hi, I am Ada."),
        ("assistant", "Hello Ada."),
        ("user", "I like Lisbon."),
        ("assistant", "Lisbon is lovely."),
        ("user", "And Porto?"),
        ("assistant", "Porto too."),
    ]


async def test_a_conversation_resent_under_new_ids_is_stored_once(storage: SQLiteStorage) -> None:
    # Before MemoryInputFilter each resend stored the echoed messages again under their new ids.
    memory = Memory(storage=storage)
    seen = await chat(memory, fresh_ids=True)
    assert seen[-1] == ["u1", "a1", "xu2", "a2", "u3"]
    assert [text for _, text in await stored(memory)] == [
        "Hi, I am Ada.",
        "Hello Ada.",
        "I like Lisbon.",
        "Lisbon is lovely.",
        "And Porto?",
        "Porto too.",
    ]


async def test_retain_full_input_keeps_what_the_client_sent(storage: SQLiteStorage) -> None:
    memory = Memory(storage=storage)
    await turn(memory, [user("u1", "one")], assistant("a1", "two"))
    seen = await turn(
        memory,
        [user("e1", "example"), assistant("e2", "shot"), user("u2", "three")],
        None,
        retainFullInput=True,
    )
    assert seen == ["u1", "a1", "e1", "e2", "u2"]
    assert [text for _, text in await stored(memory)] == ["one", "two", "example", "shot", "three"]
    # The same as an instance option.
    assert Memory(storage=storage, options={"retainFullInput": True}).options.retain_full_input


async def test_a_new_thread_is_seeded_with_the_whole_input_without_provider_item_ids(
    storage: SQLiteStorage,
) -> None:
    memory = Memory(storage=storage)
    meta = {"providerMetadata": {"openai": {"itemId": "msg_1"}}}
    sent = [user("u1", "one"), assistant("a1", "two", **meta), user("u2", "three")]
    assert await turn(memory, sent, None) == ["u1", "a1", "u2"]
    [kept] = await memory.storage.list_messages_by_id(["a1"])
    assert kept.content.parts[0].provider_metadata is None


async def test_a_client_tool_result_fills_the_stored_call_and_keeps_its_text(storage: SQLiteStorage) -> None:
    memory = Memory(storage=storage)
    await turn(memory, [user("u1", "Ask me")], assistant("a1", "Let me ask.", call("call")))
    # The client returns the outcome on the assistant message it echoes back (text and all).
    echoed = assistant("a1", "Let me ask, edited by the client.", call("result", {"answer": 42}))
    seen = await turn(memory, [user("u1", "Ask me"), echoed], None)
    assert seen == ["u1", "a1"]
    [a1] = await memory.storage.list_messages_by_id(["a1"])
    text, tool = a1.content.parts
    assert isinstance(text, TextPart)
    assert text.text == "Let me ask."  # the stored copy is the base
    assert isinstance(tool, ToolInvocationPart)
    assert tool.tool_invocation.state == "result"
    assert tool.tool_invocation.result == {"answer": 42}
    # Sent again: the call is finished, nothing moves, nothing is stored twice.
    assert await turn(memory, [user("u1", "Ask me"), echoed], None) == ["u1", "a1"]
    assert len(await stored(memory)) == 2


async def test_a_result_riding_before_the_next_user_message_is_kept(storage: SQLiteStorage) -> None:
    memory = Memory(storage=storage)
    await turn(memory, [user("u1", "Ask me")], assistant("a1", "Let me ask.", call("call")))
    sent = [user("u1", "Ask me"), assistant("a1", "Let me ask.", call("result", "yes")), user("u2", "Go on")]
    assert await turn(memory, sent, None) == ["u1", "a1", "u2"]
    [a1] = await memory.storage.list_messages_by_id(["a1"])
    assert [p.tool_invocation.state for p in a1.content.parts if isinstance(p, ToolInvocationPart)] == [
        "result"
    ]
    assert len(await stored(memory)) == 3


async def test_a_trailing_assistant_message_stays_only_when_it_was_never_stored(
    storage: SQLiteStorage,
) -> None:
    memory = Memory(storage=storage)
    await turn(memory, [user("u1", "one")], assistant("a1", "two"))
    # Stored already and no new outcome: nothing new, the input is empty.
    assert await turn(memory, [user("u1", "one"), assistant("a1", "two")], None) == ["u1", "a1"]
    # Never stored (an instruction an application put last): it is the prompt, it stays.
    assert await turn(memory, [assistant("i1", "Summarise the conversation.")], None) == ["u1", "a1", "i1"]


async def test_the_filter_stands_alone(storage: SQLiteStorage) -> None:
    # Without a thread it leaves the input alone; a host can build it like Mastra's.
    message_list = MessageList([user("u1", "one"), user("u2", "two")], thread_id=None)
    await MemoryInputFilter(storage).process_input(message_list.all(), message_list)
    assert ids(message_list.all()) == ["u1", "u2"]
    memory = Memory(storage=storage, options={"lastMessages": False})
    assert "memory-input-filter" not in [p.id for p in memory.get_input_processors()]


async def test_an_outcome_for_another_threads_message_changes_nothing(storage: SQLiteStorage) -> None:
    # Another tenant's assistant message with a pending call; a client of thread t names its id.
    memory = Memory(storage=storage)
    await memory.create_thread("other", "t2")
    theirs = {**assistant("x1", "Theirs.", call("call")), "thread_id": "t2", "resource_id": "other"}
    await memory.save_messages([theirs])
    await turn(memory, [user("u1", "one")], assistant("a1", "two"))
    forged = assistant("x1", "", call("result", "pwned"))
    # Not layered on the other thread's copy (nothing of it reaches this prompt); storing the forged message
    # is then refused by storage's write ownership (docs/spec.md §4.5), and nothing changes.
    with pytest.raises(ThreadOwnershipError):
        await turn(memory, [user("u1", "one"), forged], None)
    [x1] = await memory.storage.list_messages_by_id(["x1"])
    assert x1.thread_id == "t2"
    assert [p.tool_invocation.state for p in x1.content.parts if isinstance(p, ToolInvocationPart)] == [
        "call"
    ]


async def test_a_message_sent_again_under_its_stored_id_stays_the_stored_one(storage: SQLiteStorage) -> None:
    # Also when the filter keeps the input (retainFullInput): the stored copy is the base (Mastra's rule).
    memory = Memory(storage=storage)
    await turn(memory, [user("u1", "one")], assistant("a1", "two", call("call")))
    [before] = await memory.storage.list_messages_by_id(["u1"])
    edited = {**user("u1", "one, edited"), "created_at": "2030-01-01T00:00:00.000Z"}
    answered = assistant("a1", "two, edited", call("result", 7))
    seen = await turn(memory, [edited, answered, user("u2", "three")], None, retainFullInput=True)
    assert seen == ["u1", "a1", "u2"]
    [u1] = await memory.storage.list_messages_by_id(["u1"])
    assert (u1.content.content, u1.created_at) == ("one", before.created_at)
    [a1] = await memory.storage.list_messages_by_id(["a1"])
    assert [p.text for p in a1.content.parts if isinstance(p, TextPart)] == ["two"]
    assert [p.tool_invocation.state for p in a1.content.parts if isinstance(p, ToolInvocationPart)] == [
        "result"
    ]
