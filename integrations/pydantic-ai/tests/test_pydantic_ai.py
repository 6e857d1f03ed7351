"""``MemoryRecall`` and the history helpers in real ``Agent.run`` calls on PydanticAI's offline
``FunctionModel``: what the model receives, what is stored, what is recallable and loadable afterwards."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from mastra_memory import Memory
from mastra_memory.errors import ConfigError, ThreadOwnershipError, ValidationError
from mastra_memory.memory import format_cross_thread_messages
from mastra_memory.messages import ToolInvocationPart
from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from mastra_memory_pydantic_ai import MemoryRecall, is_recall_part, load_message_history, save_run_messages

HOTEL = "Book the Hoshinoya in Kyoto, check-in April 3."
VET = "The dog's vet visit is on Tuesday at 10."
QUESTION = "When do I check in at the hotel in Kyoto?"


@dataclass
class Conversation:
    thread_id: str
    resource_id: str


class Recorder:
    """A FunctionModel body that records what each request carried and answers "Noted."."""

    def __init__(self) -> None:
        self.requests: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.requests.append(list(messages))
        return ModelResponse(parts=[TextPart("Noted.")])


def recall_parts(messages: list[ModelMessage]) -> list[SystemPromptPart]:
    parts = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts]
    return [p for p in parts if isinstance(p, SystemPromptPart) and is_recall_part(p)]


async def say(memory: Memory, thread_id: str, text: str, resource_id: str = "user-1") -> None:
    agent = Agent(FunctionModel(Recorder()), system_prompt="Be brief.")
    result = await agent.run(text)
    await save_run_messages(memory, result.new_messages(), thread_id=thread_id, resource_id=resource_id)


async def test_the_model_sees_what_another_thread_of_the_user_said(memory: Memory) -> None:
    await say(memory, "trip", HOTEL)
    await say(memory, "pets", VET)
    await say(memory, "mine", "Check in at the Hilton on May 9.", resource_id="user-2")

    recorder = Recorder()
    recall = MemoryRecall(memory)
    agent = Agent(
        FunctionModel(recorder),
        system_prompt="Be brief.",
        deps_type=Conversation,
        capabilities=[ProcessHistory(recall)],
    )
    result = await agent.run(QUESTION, deps=Conversation("today", "user-1"))

    [seen] = recorder.requests
    first = seen[0]
    assert isinstance(first, ModelRequest)
    system, context, prompt = first.parts
    # After the agent's system prompt, before the question: the hotel message and the reply after it.
    assert isinstance(system, SystemPromptPart)
    assert system.content == "Be brief."
    assert [m.content.content for m in recall.last_recalled] == [HOTEL, "Noted."]
    assert isinstance(context, SystemPromptPart)
    assert context.content == format_cross_thread_messages(recall.last_recalled, "today")
    assert "Hilton" not in context.content
    assert isinstance(prompt, UserPromptPart)
    assert prompt.content == QUESTION

    # Persisting the run stores the turn, never the injected context.
    saved = await save_run_messages(memory, result.new_messages(), thread_id="today", resource_id="user-1")
    assert [m.content.content for m in saved.messages] == [QUESTION, "Noted."]
    assert recall_parts(await load_message_history(memory, thread_id="today", resource_id="user-1")) == []


async def test_one_context_part_per_request_across_a_tool_call(memory: Memory) -> None:
    await say(memory, "trip", HOTEL)
    requests: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        requests.append(list(messages))
        if len(requests) == 1:
            return ModelResponse(parts=[ToolCallPart("lookup", {"city": "Kyoto"}, tool_call_id="call-1")])
        return ModelResponse(parts=[TextPart("April 3.")])

    recall = MemoryRecall(memory, thread_id="today", resource_id="user-1")
    agent = Agent(FunctionModel(model), capabilities=[ProcessHistory(recall)])

    @agent.tool_plain
    def lookup(city: str) -> str:
        """Look a city up."""
        return f"{city}: booked"

    result = await agent.run(QUESTION)
    assert [len(recall_parts(r)) for r in requests] == [1, 1]
    assert result.output == "April 3."

    await save_run_messages(memory, result.new_messages(), thread_id="today", resource_id="user-1")
    page = await memory.storage.list_messages("today", per_page=False)
    assert [m.role for m in page.messages] == ["user", "assistant", "assistant", "assistant"]
    call, output = (m.content.parts[0] for m in page.messages[1:3])
    assert isinstance(call, ToolInvocationPart)
    assert isinstance(output, ToolInvocationPart)
    assert (call.tool_invocation.tool_name, call.tool_invocation.args) == ("lookup", {"city": "Kyoto"})
    assert (output.tool_invocation.state, output.tool_invocation.result) == ("result", "Kyoto: booked")


async def test_saved_messages_load_back_equal_and_continue_the_conversation(memory: Memory) -> None:
    agent = Agent(FunctionModel(Recorder()), system_prompt="Be brief.")
    first = await agent.run(HOTEL)
    await save_run_messages(memory, first.new_messages(), thread_id="trip", resource_id="user-1")
    history = await load_message_history(memory, thread_id="trip", resource_id="user-1")
    assert history == first.new_messages()

    second = await agent.run("And the vet?", message_history=history)
    await save_run_messages(memory, second.new_messages(), thread_id="trip", resource_id="user-1")
    everything = await load_message_history(memory, thread_id="trip", resource_id="user-1")
    assert everything == second.all_messages()
    assert (
        await load_message_history(memory, thread_id="trip", resource_id="user-1", last=1) == everything[2:]
    )
    assert await load_message_history(memory, thread_id="trip", resource_id="user-1", last=0) == []
    assert await load_message_history(memory, thread_id="nowhere", resource_id="user-1") == []


async def test_thread_scope_recalls_only_the_threads_own_messages(memory: Memory) -> None:
    await say(memory, "trip", HOTEL)
    await say(memory, "today", VET)
    recorder = Recorder()
    recall = MemoryRecall(
        memory, thread_id="today", resource_id="user-1", thread_config={"semanticRecall": {"scope": "thread"}}
    )
    await Agent(FunctionModel(recorder), capabilities=[ProcessHistory(recall)]).run(QUESTION)
    assert [m.content.content for m in recall.last_recalled] == [VET, "Noted."]
    # Before a thread exists, thread scope finds nothing and the history is unchanged.
    fresh = MemoryRecall(
        memory, thread_id="new", resource_id="user-1", thread_config={"semanticRecall": {"scope": "thread"}}
    )
    await Agent(FunctionModel(recorder), capabilities=[ProcessHistory(fresh)]).run(QUESTION)
    assert fresh.last_recalled == []
    assert recall_parts(recorder.requests[-1]) == []


async def test_history_already_in_the_prompt_is_not_repeated(memory: Memory) -> None:
    agent = Agent(FunctionModel(Recorder()))
    first = await agent.run(HOTEL)
    await save_run_messages(memory, first.new_messages(), thread_id="trip", resource_id="user-1")
    recorder = Recorder()
    recall = MemoryRecall(memory, thread_id="trip", resource_id="user-1")
    history = await load_message_history(memory, thread_id="trip", resource_id="user-1")
    await Agent(FunctionModel(recorder), capabilities=[ProcessHistory(recall)]).run(
        QUESTION, message_history=history
    )
    assert recall.last_recalled == []
    assert recall_parts(recorder.requests[0]) == []


async def test_misuse_raises_typed_errors_before_any_io(db: str, memory: Memory) -> None:
    with pytest.raises(ConfigError, match="semantic recall"):
        MemoryRecall(Memory(storage=db, options={"lastMessages": 10}))
    with pytest.raises(ConfigError, match="semantic recall"):
        MemoryRecall(memory, thread_config={"semanticRecall": False})
    agent = Agent(FunctionModel(Recorder()), capabilities=[ProcessHistory(MemoryRecall(memory))])
    with pytest.raises(ValidationError, match="thread_id"):
        await agent.run(QUESTION)
    with pytest.raises(ValidationError, match="new_messages"):
        await save_run_messages(memory, ["hello"], thread_id="t", resource_id="u")  # type: ignore[list-item]
    with pytest.raises(ValidationError, match="resource_id"):
        await save_run_messages(memory, [], thread_id="t", resource_id="")
    await memory.create_thread("someone-else", "taken")
    result = await Agent(FunctionModel(Recorder())).run(HOTEL)
    with pytest.raises(ThreadOwnershipError, match="another resource"):
        await save_run_messages(memory, result.new_messages(), thread_id="taken", resource_id="user-1")
    assert (await memory.storage.list_messages("taken", per_page=False)).messages == []
