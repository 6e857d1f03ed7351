"""``MemorySession`` behind real ``Runner.run`` calls and through the ``Session`` protocol directly: what is
stored, what the model receives, what comes back."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool
from agents.memory import Session, SessionSettings
from agents.testing import ScriptedModel, assistant_message, function_call
from mastra_memory import Memory
from mastra_memory.errors import ThreadOwnershipError, ValidationError
from mastra_memory.messages import DataPart, ToolInvocationPart

from mastra_memory_openai_agents import ITEM_PART_TYPE, MemorySession


@function_tool
def get_weather(city: str) -> str:
    """The weather of a city."""
    return f"Sunny in {city}"


def scripted() -> ScriptedModel:
    return ScriptedModel(
        [
            [function_call("get_weather", {"city": "Kyoto"}, call_id="call-1")],
            [assistant_message("It is sunny in Kyoto.")],
            [assistant_message("You asked about the weather in Kyoto.")],
        ]
    )


async def two_turns(session: Session) -> ScriptedModel:
    model = scripted()
    agent = Agent(name="assistant", instructions="Be brief.", model=model, tools=[get_weather])
    await Runner.run(agent, "What is the weather in Kyoto?", session=session, run_config=RunConfig())
    await Runner.run(agent, "What did I ask you?", session=session, run_config=RunConfig())
    model.assert_complete()
    return model


# A variety of Responses input items, including the awkward ones: list content, nulls, unicode, nesting.
ITEMS: list[Any] = [
    {"role": "system", "content": "You are terse."},
    {"role": "developer", "content": [{"type": "input_text", "text": "Answer in English."}]},
    {
        "role": "user",
        "content": [{"type": "input_text", "text": "Réserve le Hoshinoya 🏯"}],
        "type": "message",
    },
    {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "think"}],
        "content": None,
    },
    {"type": "function_call", "call_id": "c-9", "name": "book", "arguments": '{"nights": 2, "x": 1.5e-7}'},
    {"type": "function_call_output", "call_id": "c-9", "output": [{"type": "input_text", "text": "ok"}]},
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Booked.", "annotations": [], "logprobs": []}],
    },
    {
        "type": "web_search_call",
        "id": "ws_1",
        "status": "completed",
        "action": {"type": "search", "query": "q"},
    },
]


def test_the_class_satisfies_the_sdks_session_protocol(memory: Memory) -> None:
    assert isinstance(MemorySession("s", memory=memory, resource_id="u"), Session)


async def test_a_run_stores_exactly_what_the_sdks_own_sqlite_session_stores(memory: Memory) -> None:
    reference = SQLiteSession("conversation", ":memory:")
    await two_turns(reference)
    session = MemorySession("conversation", memory=memory, resource_id="user-1")
    model = await two_turns(session)

    assert await session.get_items() == await reference.get_items()
    # The second turn's first model call received the whole first turn, tool call and output included.
    second_turn_input = model.calls[2].input
    assert [i.get("type", "message") for i in second_turn_input] == [
        "message",
        "function_call",
        "function_call_output",
        "message",
        "message",
    ]
    assert second_turn_input[-1] == {"role": "user", "content": "What did I ask you?"}


async def test_the_thread_reads_like_a_mastra_thread(memory: Memory) -> None:
    session = MemorySession("conversation", memory=memory, resource_id="user-1")
    await two_turns(session)

    thread = await memory.get_thread_by_id("conversation")
    assert thread is not None
    assert thread.resource_id == "user-1"
    page = await memory.storage.list_messages("conversation", per_page=False)
    assert [m.role for m in page.messages] == [
        "user",
        "assistant",
        "assistant",
        "assistant",
        "user",
        "assistant",
    ]
    assert page.messages[0].content.content == "What is the weather in Kyoto?"
    call, output = (m.content.parts[0] for m in page.messages[1:3])
    assert isinstance(call, ToolInvocationPart)
    assert isinstance(output, ToolInvocationPart)
    assert call.tool_invocation.model_dump() == {
        "state": "call",
        "tool_call_id": "call-1",
        "tool_name": "get_weather",
        "args": {"city": "Kyoto"},
    }
    assert (output.tool_invocation.state, output.tool_invocation.tool_name) == ("result", "get_weather")
    assert output.tool_invocation.result == "Sunny in Kyoto"
    assert all(isinstance(m.content.parts[-1], DataPart) for m in page.messages)
    assert page.messages[3].content.content == "It is sunny in Kyoto."


async def test_items_round_trip_verbatim_and_persist_in_the_file(db: str) -> None:
    first = Memory(storage=db, embedder="hash/64", options={"semanticRecall": True})
    await MemorySession("s", memory=first, resource_id="u").add_items(ITEMS[:3])
    await MemorySession("s", memory=first, resource_id="u").add_items(ITEMS[3:])
    await first.close()

    reopened = Memory(storage=db, embedder="hash/64", options={"semanticRecall": True})
    assert await MemorySession("s", memory=reopened, resource_id="u").get_items() == ITEMS
    await reopened.close()


async def test_a_tool_output_saved_after_its_call_is_named_after_it(memory: Memory) -> None:
    session = MemorySession("s", memory=memory, resource_id="u")
    await session.add_items([ITEMS[4]])
    await session.add_items([ITEMS[5]])
    page = await memory.storage.list_messages("s", per_page=False)
    output = page.messages[-1].content.parts[0]
    assert isinstance(output, ToolInvocationPart)
    assert (output.tool_invocation.tool_name, output.tool_invocation.state) == ("book", "result")


async def test_only_user_and_assistant_text_is_embedded(memory: Memory) -> None:
    session = MemorySession("s", memory=memory, resource_id="u")
    await session.add_items(ITEMS)
    await memory.create_thread("u", "other")
    everything = {"semanticRecall": {"topK": 20, "messageRange": 0}}
    result = await memory.recall(
        "other", resource_id="u", vector_search_string="You are terse.", per_page=0, thread_config=everything
    )
    # Text from the system and developer items is stored but never recalled as something said.
    assert {m.content.content for m in result.messages} == {"Réserve le Hoshinoya 🏯", "Booked."}


async def test_get_items_with_a_limit_returns_the_newest_in_order(memory: Memory) -> None:
    session = MemorySession("s", memory=memory, resource_id="u", session_settings=SessionSettings(limit=3))
    await session.add_items(ITEMS)
    assert await session.get_items(2) == ITEMS[-2:]
    assert await session.get_items() == ITEMS[-3:]  # session_settings.limit is the default
    assert await session.get_items(100) == ITEMS
    assert await session.get_items(0) == []
    with pytest.raises(ValidationError, match="limit"):
        await session.get_items(-1)


async def test_pop_item_removes_the_newest_item_and_its_vectors(memory: Memory) -> None:
    session = MemorySession("s", memory=memory, resource_id="u")
    assert await session.pop_item() is None
    await session.add_items([{"role": "user", "content": "The vet visit is on Tuesday."}])
    await session.add_items([{"role": "assistant", "content": "Noted: vet on Tuesday."}])

    assert await session.pop_item() == {"role": "assistant", "content": "Noted: vet on Tuesday."}
    assert await session.get_items() == [{"role": "user", "content": "The vet visit is on Tuesday."}]
    await memory.create_thread("u", "other")
    recalled = await memory.recall("other", resource_id="u", vector_search_string="Noted vet", per_page=0)
    assert [m.content.content for m in recalled.messages] == ["The vet visit is on Tuesday."]


async def test_clear_session_deletes_the_thread_and_a_new_turn_starts_it_again(memory: Memory) -> None:
    session = MemorySession("s", memory=memory, resource_id="u")
    await session.add_items(ITEMS)
    await session.clear_session()
    assert await session.get_items() == []
    assert await memory.get_thread_by_id("s") is None
    await memory.create_thread("u", "other")
    recalled = await memory.recall("other", resource_id="u", vector_search_string="Booked.", per_page=0)
    assert recalled.messages == []

    await session.add_items(ITEMS[:1])
    assert await session.get_items() == ITEMS[:1]
    await session.clear_session()
    await session.clear_session()  # clearing an empty session is a no-op


async def test_a_thread_of_another_resource_is_refused_before_any_write(memory: Memory) -> None:
    await memory.create_thread("someone-else", "s")
    session = MemorySession("s", memory=memory, resource_id="u")
    for call in (
        session.get_items(),
        session.add_items(ITEMS[:1]),
        session.pop_item(),
        session.clear_session(),
    ):
        with pytest.raises(ThreadOwnershipError, match="another resource"):
            await call
    page = await memory.storage.list_messages("s", per_page=False)
    assert page.messages == []
    assert await memory.get_thread_by_id("s") is not None


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        ("hello", "must be a dict"),
        ({"role": "user", "content": "x", "extra": object()}, "not JSON-serialisable"),
        ({"role": "user", "content": "x", "score": float("nan")}, "not JSON-serialisable"),
        ({"role": "user", "content": ("a", "b")}, "JSON round trip"),
    ],
)
async def test_an_item_that_cannot_be_stored_verbatim_is_refused_before_any_io(
    memory: Memory, item: Any, problem: str
) -> None:
    session = MemorySession("s", memory=memory, resource_id="u")
    with pytest.raises(ValidationError, match=problem):
        await session.add_items([ITEMS[2], item])
    assert await memory.get_thread_by_id("s") is None


@pytest.mark.parametrize(("session_id", "resource_id"), [("", "u"), ("s", " "), ("s", None)])
def test_blank_ids_are_refused(memory: Memory, session_id: str, resource_id: Any) -> None:
    with pytest.raises(ValidationError, match="non-empty string"):
        MemorySession(session_id, memory=memory, resource_id=resource_id)


async def test_messages_written_through_memory_become_items(memory: Memory) -> None:
    await memory.create_thread("u", "s")
    await memory.save_messages(
        [
            {"thread_id": "s", "role": "user", "content": "Weather in Kyoto?"},
            {
                "thread_id": "s",
                "role": "assistant",
                "content": [
                    {
                        "type": "tool-call",
                        "toolCallId": "c1",
                        "toolName": "weather",
                        "args": {"city": "Kyoto"},
                    },
                    {"type": "tool-result", "toolCallId": "c1", "toolName": "weather", "result": "sunny"},
                    {"type": "text", "text": "Sunny."},
                ],
            },
        ]
    )
    items = await MemorySession("s", memory=memory, resource_id="u").get_items()
    assert items == [
        {"role": "user", "content": "Weather in Kyoto?"},
        {"role": "assistant", "content": "Sunny."},
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "weather",
            "arguments": json.dumps({"city": "Kyoto"}),
        },
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
    ]
    assert ITEM_PART_TYPE.startswith("data-")
