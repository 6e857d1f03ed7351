"""docs/spec.md §5.9 with the model protocol (§5.13): when a title is generated, what the title model reads,
what is stored, pinned titles, failures and the usage counters — with ScriptedModel, and end to end against
a local chat-completions server."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from mastra_memory.errors import ModelError
from mastra_memory.memory import Memory
from mastra_memory.memory.titles import DEFAULT_TITLE_INSTRUCTIONS
from mastra_memory.models import ModelReply, ScriptedModel, Usage
from mastra_memory.stores.sqlite.storage import SQLiteStorage

from ..models.chat_server import ChatServer
from .memory_helpers import msg, ts

pytestmark = pytest.mark.timeout(60)


async def title_of(memory: Memory, thread_id: str = "t") -> str:
    thread = await memory.get_thread_by_id(thread_id)
    assert thread is not None
    return thread.title


async def test_the_first_user_message_gets_a_title_from_instructions_and_transcript(
    storage: SQLiteStorage,
) -> None:
    model = ScriptedModel(["<think>they plan a trip</think>\n  Trip to Kyoto \n"])
    memory = Memory(storage=storage, options={"generateTitle": {"model": model}})
    await memory.create_thread("r", "t")
    await memory.save_messages([msg("m1", "t", "Plan my trip to Kyoto", ts(1))])
    await memory.settled(timeout=10)
    assert await title_of(memory) == "Trip to Kyoto"
    assert [r.messages for r in model.requests] == [
        (
            {"role": "system", "content": DEFAULT_TITLE_INSTRUCTIONS},
            {"role": "user", "content": "User: Plan my trip to Kyoto"},
        )
    ]
    # A titled thread is left alone: no second call.
    await memory.save_messages([msg("m2", "t", "Add Osaka", ts(2))])
    await memory.settled(timeout=10)
    assert len(model.requests) == 1


async def test_min_messages_counts_every_message_of_the_turn_and_instructions_replace_the_default(
    storage: SQLiteStorage,
) -> None:
    model = ScriptedModel(["Kyoto"])
    options = {"generateTitle": {"model": model, "minMessages": 3, "instructions": "Two words."}}
    memory = Memory(storage=storage, options=options)
    await memory.create_thread("r", "t")
    await memory.save_messages(
        [msg("m1", "t", "Plan my trip", ts(1)), msg("m2", "t", "Where to?", ts(2), role="assistant")]
    )
    await memory.settled(timeout=10)
    assert model.requests == []
    await memory.save_messages([msg("m3", "t", "Kyoto", ts(3))])
    await memory.settled(timeout=10)
    assert await title_of(memory) == "Kyoto"
    sent = model.requests[0].messages
    assert sent[0] == {"role": "system", "content": "Two words."}
    assert sent[1]["content"] == "User: Plan my trip\nAssistant: Where to?\nUser: Kyoto"


async def test_the_transcript_is_the_turn_plus_the_history_last_messages_loads(
    storage: SQLiteStorage,
) -> None:
    memory = Memory(storage=storage, options={"lastMessages": 2})
    await memory.create_thread("r", "t")
    await memory.save_messages([msg(f"m{i}", "t", f"line {i}", ts(i)) for i in range(1, 6)])
    model = ScriptedModel(["Lines"])
    await memory.save_messages(
        [msg("m6", "t", "line 6", ts(6))], thread_config={"generateTitle": {"model": model}}
    )
    await memory.settled(timeout=10)
    assert model.requests[0].messages[1]["content"] == "User: line 4\nUser: line 5\nUser: line 6"


async def test_tool_results_and_reasoning_are_in_the_transcript(storage: SQLiteStorage) -> None:
    model = ScriptedModel(["Weather"])
    memory = Memory(storage=storage, options={"generateTitle": {"model": model}})
    await memory.create_thread("r", "t")
    answer = {
        "id": "m2",
        "thread_id": "t",
        "role": "assistant",
        "created_at": ts(2),
        "content": {
            "format": 2,
            "parts": [
                {"type": "reasoning", "reasoning": "check the weather", "details": []},
                {
                    "type": "tool-invocation",
                    "toolInvocation": {
                        "state": "result",
                        "toolCallId": "c1",
                        "toolName": "weather",
                        "args": {"city": "Kyoto"},
                        "result": {"sky": "clear", "c": 21},
                    },
                },
                {"type": "text", "text": "Clear, 21 °C"},
            ],
        },
    }
    await memory.save_messages([msg("m1", "t", "Weather in Kyoto?", ts(1)), answer])
    await memory.settled(timeout=10)
    assert model.requests[0].messages[1]["content"] == (
        "User: Weather in Kyoto?\n"
        "Reasoning: check the weather\n"
        'Tool Result weather: {"sky":"clear","c":21}\n'
        "Assistant: Clear, 21 °C"
    )


async def test_a_pinned_or_set_title_is_never_overwritten(storage: SQLiteStorage) -> None:
    model = ScriptedModel(["Generated"], repeat_last=True)
    memory = Memory(storage=storage, options={"generateTitle": {"model": model}})
    await memory.create_thread("r", "pinned", metadata={"titlePinned": True})
    await memory.create_thread("r", "named", title="My trip")
    await memory.save_messages([msg("m1", "pinned", "hello", ts(1)), msg("m2", "named", "hello", ts(2))])
    await memory.settled(timeout=10)
    assert await title_of(memory, "pinned") == ""
    assert await title_of(memory, "named") == "My trip"
    assert model.requests == []


class GatedModel:
    """A ChatModel that answers only when released, so a test can act while the title is being made."""

    model_id = "gated/model"

    def __init__(self) -> None:
        self.called = asyncio.Event()
        self.release = asyncio.Event()
        self.calls = 0

    async def __call__(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        schema: Mapping[str, Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> ModelReply:
        self.calls += 1
        self.called.set()
        await self.release.wait()
        return ModelReply("Generated", Usage(4, 1), self.model_id)


async def test_a_title_pinned_while_the_model_runs_wins(storage: SQLiteStorage) -> None:
    model = GatedModel()
    memory = Memory(storage=storage, options={"generateTitle": {"model": model}})
    await memory.create_thread("r", "t")
    await memory.save_messages([msg("m1", "t", "hello", ts(1))])
    await asyncio.wait_for(model.called.wait(), 10)
    await memory.update_thread("t", title="Mine", metadata={"titlePinned": True})
    model.release.set()
    await memory.settled(timeout=10)
    assert await title_of(memory) == "Mine"


async def test_saves_racing_on_one_thread_call_the_model_once(storage: SQLiteStorage) -> None:
    model = GatedModel()
    memory = Memory(storage=storage, options={"generateTitle": {"model": model}})
    await memory.create_thread("r", "t")
    await memory.save_messages([msg("m1", "t", "hello", ts(1))])
    await memory.save_messages([msg("m2", "t", "again", ts(2))])
    await asyncio.wait_for(model.called.wait(), 10)
    model.release.set()
    await memory.settled(timeout=10)
    assert model.calls == 1
    assert await title_of(memory) == "Generated"


async def test_a_failing_model_keeps_the_messages_is_logged_and_counted(
    storage: SQLiteStorage, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel([ModelError("model down"), "Second try"])
    memory = Memory(storage=storage, options={"generateTitle": {"model": model}})
    await memory.create_thread("r", "t")
    with caplog.at_level(logging.ERROR, logger="mastra_memory.memory"):
        await memory.save_messages([msg("m1", "t", "hello", ts(1))])
        await memory.settled(timeout=10)  # a title failure is not a background-work failure
    assert await title_of(memory) == ""
    assert any("title generation failed for thread t" in r.getMessage() for r in caplog.records)
    page = await memory.storage.list_messages("t", per_page=False)
    assert [m.id for m in page.messages] == ["m1"]
    # The next save tries again.
    await memory.save_messages([msg("m2", "t", "again", ts(2))])
    await memory.settled(timeout=10)
    assert await title_of(memory) == "Second try"
    usage = memory.title_usage
    assert (usage.calls, usage.failures) == (2, 1)
    assert (usage.input_tokens, usage.output_tokens) == (len(DEFAULT_TITLE_INSTRUCTIONS.split()) + 4, 2)


async def test_end_to_end_over_an_openai_compatible_server(storage: SQLiteStorage) -> None:
    server = ChatServer(reply=lambda body: "  Local title  ")
    try:
        model = {"id": "local/title-model", "url": server.url}
        memory = Memory(storage=storage, options={"generateTitle": {"model": model}})
        await memory.create_thread("r", "t")
        await memory.save_messages([msg("m1", "t", "hello there", ts(1))])
        await memory.settled(timeout=30)
    finally:
        server.close()
    assert await title_of(memory) == "Local title"
    assert server.requests[0]["model"] == "title-model"
    assert server.requests[0]["messages"][1] == {"role": "user", "content": "User: hello there"}
    assert (memory.title_usage.input_tokens, memory.title_usage.output_tokens) == (7, 3)
