"""``RecallInputFilter`` in real ``Runner.run`` calls: what the model receives, and that the recalled
context is never stored in the session."""

from __future__ import annotations

import pytest
from agents import Agent, RunConfig, Runner
from agents.testing import ScriptedModel, assistant_message
from mastra_memory import Memory
from mastra_memory.errors import ConfigError
from mastra_memory.memory import format_cross_thread_messages

from mastra_memory_openai_agents import MemorySession, RecallInputFilter

HOTEL = "Book the Hoshinoya in Kyoto, check-in April 3."
VET = "The dog's vet visit is on Tuesday at 10."
QUESTION = "When do I check in at the hotel in Kyoto?"


async def chat(session: MemorySession, text: str, run_config: RunConfig | None = None) -> ScriptedModel:
    model = ScriptedModel([[assistant_message("Noted.")]])
    agent = Agent(name="assistant", instructions="Be brief.", model=model)
    await Runner.run(agent, text, session=session, run_config=run_config or RunConfig())
    model.assert_complete()
    return model


async def test_the_model_sees_what_another_session_of_the_user_said(memory: Memory) -> None:
    await chat(MemorySession("trip", memory=memory, resource_id="user-1"), HOTEL)
    await chat(MemorySession("pets", memory=memory, resource_id="user-1"), VET)
    await chat(MemorySession("mine", memory=memory, resource_id="user-2"), "Check in at the Hilton on May 9.")

    today = MemorySession("today", memory=memory, resource_id="user-1")
    recall = RecallInputFilter(today)
    model = await chat(today, QUESTION, RunConfig(call_model_input_filter=recall))

    [call] = model.calls
    context, question = call.input
    # topK 1, messageRange 1: the hotel message and the reply after it, from the user's other thread only.
    assert [m.content.content for m in recall.last_recalled] == [HOTEL, "Noted."]
    assert context == {
        "role": "system",
        "content": format_cross_thread_messages(recall.last_recalled, "today"),
    }
    assert HOTEL in context["content"]
    assert "Hilton" not in context["content"]
    assert question == {"role": "user", "content": QUESTION}
    assert call.system_instructions == "Be brief."
    # What was recalled went to the model only: the session holds the turn itself.
    assert await today.get_items() == [
        {"role": "user", "content": QUESTION},
        {
            "id": "scripted-message",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Noted.", "annotations": [], "logprobs": []}],
        },
    ]


async def test_thread_scope_recalls_only_the_sessions_own_earlier_messages(memory: Memory) -> None:
    await chat(MemorySession("trip", memory=memory, resource_id="user-1"), HOTEL)
    session = MemorySession("today", memory=memory, resource_id="user-1")
    thread_only = {"semanticRecall": {"scope": "thread"}}

    # Before the session has a thread, thread scope has nothing to recall; the input is unchanged.
    first = RecallInputFilter(session, thread_config=thread_only)
    model = await chat(session, QUESTION, RunConfig(call_model_input_filter=first))
    assert first.last_recalled == []
    assert [i["role"] for i in model.calls[0].input] == ["user"]

    await chat(session, VET)
    again = RecallInputFilter(
        session, thread_config={"semanticRecall": {"scope": "thread", "messageRange": 0}}
    )
    model = await chat(session, "When is the vet visit?", RunConfig(call_model_input_filter=again))
    # The session's own vet message is in the input already (the history), so it is not repeated, and
    # the other thread's hotel message is out of scope.
    assert again.last_recalled == []
    assert model.calls[0].input[0] == {"role": "user", "content": QUESTION}


async def test_recall_off_in_the_memory_is_refused_when_the_filter_is_built(db: str) -> None:
    memory = Memory(storage=db, options={"lastMessages": 10})
    session = MemorySession("s", memory=memory, resource_id="u")
    with pytest.raises(ConfigError, match="semantic recall"):
        RecallInputFilter(session)
    with pytest.raises(ConfigError, match="semantic recall"):
        RecallInputFilter(
            MemorySession("s", memory=Memory(storage=db, options={"semanticRecall": True}), resource_id="u"),
            thread_config={"semanticRecall": False},
        )
    await memory.close()
