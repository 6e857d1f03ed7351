"""An agent turn end to end through the memory processors (docs/spec.md §5.12), on the SQLite default with
the offline embedder: what the model receives, what is stored, what is recallable afterwards, and what a
request's memory_config changes. The loop is examples/agent_loop.py, run as a user would run it."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from mastra_memory.memory import Memory, MessageHistory, ToolCallFilter
from mastra_memory.messages import ToolInvocationPart
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_loop.py"


@pytest.fixture(scope="module")
def loop() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agent_loop_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
async def memory(storage: SQLiteStorage, vector: SQLiteVector, loop: ModuleType) -> AsyncIterator[Memory]:
    mem = Memory(storage=storage, vector=vector, options=loop.DEMO_OPTIONS)  # local/wordllama, offline
    yield mem
    await mem.close()


def system_text(prompt: list[dict[str, Any]]) -> str:
    return "\n".join(m["content"] for m in prompt if m["role"] == "system")


async def test_the_example_runs_offline_with_the_scripted_model(loop: ModuleType) -> None:
    turns = await loop.main(loop.scripted_model)
    assert [t.reply for t in turns][:1] == ["Nice to meet you, Ada."]
    assert turns[3].reply == "Your name is Ada."  # another thread: working memory is per user
    assert "My cat Tofu needs a vet appointment" in turns[4].reply  # recalled from the other thread


async def test_a_conversation_through_the_processors(memory: Memory, loop: ModuleType) -> None:
    run, model = loop.run_turn, loop.scripted_model
    first = await run(memory, model, "t1", "u1", "Hi, my name is Ada.")
    # The model received the working-memory instructions with the empty template, and called the tool.
    assert "<working_memory>" in system_text(first.prompt)
    assert "**First Name**:\n" in system_text(first.prompt)
    assert [c["name"] for c in first.tool_calls] == ["updateWorkingMemory"]
    assert first.tool_calls[0]["result"] == {"success": True}
    assert "**First Name**: Ada" in (await memory.get_working_memory("t1", "u1") or "")

    await run(memory, model, "t1", "u1", "My cat Tofu needs a vet appointment on Friday.")
    third = await run(memory, model, "t1", "u1", "I also want to plan a trip to Lisbon.")
    # History: the newest lastMessages=4 stored messages, oldest first, ahead of the new input.
    said = [m["content"] for m in third.prompt if m["role"] != "system"]
    assert said == [
        "Hi, my name is Ada.",
        "Nice to meet you, Ada.",
        "My cat Tofu needs a vet appointment on Friday.",
        "Noted: My cat Tofu needs a vet appointment on Friday.",
        "I also want to plan a trip to Lisbon.",
    ]

    # Stored: every turn's user and assistant message, without the working-memory tool call.
    page = await memory.storage.list_messages("t1", per_page=False)
    assert [m.role for m in page.messages] == ["user", "assistant"] * 3
    assert not any(isinstance(p, ToolInvocationPart) for m in page.messages for p in m.content.parts)

    # Recallable afterwards: from another thread of the same user, recall finds the Tofu message.
    other = await run(memory, model, "t2", "u1", "What did I say about Tofu?")
    assert "Messages recalled from earlier conversations" in system_text(other.prompt)
    assert other.reply.startswith("You said: ")
    assert "Tofu needs a vet" in other.reply
    found = await memory.recall("t2", "u1", vector_search_string="vet appointment for my cat")
    assert "My cat Tofu needs a vet appointment on Friday." in [m.content.content for m in found.messages]


async def test_a_request_can_turn_recall_off_and_change_history(memory: Memory, loop: ModuleType) -> None:
    run, model = loop.run_turn, loop.scripted_model
    for text in ("My cat Tofu is sick.", "Lisbon trip in May.", "Buy oat milk."):
        await run(memory, model, "t1", "u1", text)
    off = await run(memory, model, "t2", "u1", "What did I say about Tofu?", {"semanticRecall": False})
    assert "Messages recalled" not in system_text(off.prompt)
    assert off.reply == "You never mentioned tofu."
    short = await run(memory, model, "t1", "u1", "And then?", {"lastMessages": 1, "semanticRecall": False})
    assert [m["content"] for m in short.prompt if m["role"] != "system"] == [
        "Noted: Buy oat milk.",
        "And then?",
    ]
    none = await run(memory, model, "t1", "u1", "Again?", {"lastMessages": False, "semanticRecall": False})
    assert [m["content"] for m in none.prompt if m["role"] != "system"] == ["Again?"]
    # topK from the request: one hit, no context window, instead of the instance's two.
    one = await run(memory, model, "t2", "u1", "Tofu?", {"semanticRecall": {"topK": 1}})
    assert system_text(one.prompt).count("Message from previous conversation") == 1


async def test_read_only_requests_store_nothing(memory: Memory, loop: ModuleType) -> None:
    await loop.run_turn(memory, loop.scripted_model, "t1", "u1", "Remember nothing.", {"readOnly": True})
    assert await memory.storage.get_thread_by_id("t1") is None


@pytest.mark.filterwarnings("ignore:history_tokens:DeprecationWarning")  # deprecated, still honoured (§5.1)
async def test_history_by_token_budget(memory: Memory, loop: ModuleType) -> None:
    run, model = loop.run_turn, loop.scripted_model
    for text in ("one " * 40, "two " * 40, "three"):
        await run(memory, model, "t1", "u1", text.strip(), {"semanticRecall": False})
    # The budget keeps the newest stored messages that fit (contiguous), within lastMessages.
    cfg = {"semanticRecall": False, "lastMessages": 10, "historyTokens": 30}
    turn = await run(memory, model, "t1", "u1", "now", cfg)
    history = [m["content"] for m in turn.prompt if m["role"] != "system"][:-1]
    assert history == ["three", "Noted: three"], turn.prompt
    wide = await run(memory, model, "t1", "u1", "now", {**cfg, "historyTokens": 100_000})
    assert (
        len([m for m in wide.prompt if m["role"] != "system"]) == 9
    )  # the 8 stored messages (under lastMessages=10) + input


async def test_tool_call_filter_hides_tool_calls_from_the_model_not_from_storage(
    memory: Memory, loop: ModuleType
) -> None:
    run, model = loop.run_turn, loop.scripted_model
    await run(memory, model, "t1", "u1", "Hi, my name is Ada.")  # the WM call is never stored
    await memory.storage.save_messages(
        [
            {
                "id": "tool-msg",
                "thread_id": "t1",
                "role": "assistant",
                "content": {
                    "format": 2,
                    "parts": [
                        {
                            "type": "tool-invocation",
                            "toolInvocation": {
                                "state": "result",
                                "toolCallId": "c1",
                                "toolName": "weather",
                                "args": {"city": "Lisbon"},
                                "result": {"temp": 21},
                            },
                        }
                    ],
                },
            }
        ]
    )
    seen: list[Any] = []

    class Spy:  # a user input processor after the filter: records what would reach the model
        id = "spy"

        async def process_input(self, messages: Any, message_list: Any, *a: Any, **k: Any) -> Any:
            seen.extend(message_list.all())
            return message_list

    await run(memory, model, "t1", "u1", "next", input_processors=[ToolCallFilter(exclude=["other"]), Spy()])
    assert "tool-msg" in [m.id for m in seen]
    seen.clear()
    await run(memory, model, "t1", "u1", "next", input_processors=[ToolCallFilter(), Spy()])
    assert "tool-msg" not in [m.id for m in seen]
    assert all(not isinstance(p, ToolInvocationPart) for m in seen for p in m.content.parts)
    stored = await memory.storage.list_messages_by_id(["tool-msg"])
    assert isinstance(stored[0].content.parts[0], ToolInvocationPart)


async def test_processor_order_and_no_duplicates(memory: Memory) -> None:
    assert [p.id for p in memory.get_input_processors()] == [
        "memory-input-filter",
        "working-memory",
        "message-history",
        "semantic-recall",
    ]
    assert [p.id for p in memory.get_output_processors()] == ["message-history", "semantic-recall"]
    mine = MessageHistory(memory.storage, last_messages=2)
    assert [p.id for p in memory.get_input_processors([mine])] == [
        "memory-input-filter",
        "working-memory",
        "semantic-recall",
    ]
    ctx = {"MastraMemory": {"thread": {"id": "t"}, "memory_config": {"workingMemory": {"enabled": False}}}}
    assert [p.id for p in memory.get_input_processors(request_context=ctx)] == [
        "memory-input-filter",
        "message-history",
        "semantic-recall",
    ]
    assert memory.get_tools(ctx) == {}
    assert list(memory.get_tools()) == ["updateWorkingMemory"]


async def test_the_openai_compatible_model_speaks_chat_completions(loop: ModuleType) -> None:
    """The real-model client against a recorded-shape endpoint (no network): tool calls are parsed."""
    sent: list[dict[str, Any]] = []

    def reply(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        call = {
            "id": "c9",
            "type": "function",
            "function": {"name": "updateWorkingMemory", "arguments": '{"memory": "x"}'},
        }
        return httpx.Response(200, json={"choices": [{"message": {"content": None, "tool_calls": [call]}}]})

    model = loop.OpenAIChatModel("sk-test", "gpt-test", "http://llm.invalid/v1")
    await model.client.aclose()
    model.client = httpx.AsyncClient(base_url="http://llm.invalid/v1", transport=httpx.MockTransport(reply))
    answer = await model(
        [{"role": "user", "content": "hi"}], [{"type": "function", "function": {"name": "f"}}]
    )
    await model.aclose()
    assert answer == {
        "content": None,
        "tool_calls": [{"id": "c9", "name": "updateWorkingMemory", "arguments": {"memory": "x"}}],
    }
    assert sent[0]["model"] == "gpt-test"
    assert sent[0]["tools"][0]["function"]["name"] == "f"


@pytest.mark.skipif(not os.environ.get("OPENAI_API_KEY"), reason="OPENAI_API_KEY is not set")
@pytest.mark.enable_socket
async def test_the_same_loop_with_a_real_model(loop: ModuleType) -> None:  # pragma: no cover - needs a key
    turns = await loop.main()
    assert all(t.reply for t in turns)
