"""A real LangGraph agent (``create_react_agent``) with a scripted chat model remembers across threads
through ``MastraStore``: a fact saved by a tool in one conversation is found by another conversation's
tool, of the same user only. Runs blocking (``invoke``, sync tools: the store's ``batch``) and async
(``ainvoke``, async tools: ``abatch``), on the SQLite default and on qdrant-edge."""

from __future__ import annotations

import uuid
import warnings
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import InjectedStore
from langgraph.store.base import BaseStore

from mastra_memory_langgraph import MastraStore

from .conftest import OURS, build

with warnings.catch_warnings():
    # langgraph 1.x moved the agent to langchain.agents.create_agent; langgraph still ships this one.
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent

# Building the agent warns the same way; the test keeps to the agent langgraph itself ships.
pytestmark = pytest.mark.filterwarnings("ignore:create_react_agent has been moved")


class ScriptedChatModel(GenericFakeChatModel):
    """LangChain's fake chat model, replaying given messages; tools are bound by the script itself."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self


def call(name: str, **args: Any) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{uuid.uuid4().hex[:8]}"}])


def user_of(config: RunnableConfig) -> str:
    return str(config["configurable"]["user_id"])


@tool
def remember(fact: str, config: RunnableConfig, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Save a fact about the user for later conversations."""
    store.put(("memories", user_of(config)), uuid.uuid4().hex, {"text": fact})
    return "saved"


@tool
def recall(query: str, config: RunnableConfig, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Find what is known about the user."""
    return "\n".join(h.value["text"] for h in store.search(("memories", user_of(config)), query=query))


@tool("remember")
async def aremember(fact: str, config: RunnableConfig, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Save a fact about the user for later conversations."""
    await store.aput(("memories", user_of(config)), uuid.uuid4().hex, {"text": fact})
    return "saved"


@tool("recall")
async def arecall(query: str, config: RunnableConfig, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Find what is known about the user."""
    hits = await store.asearch(("memories", user_of(config)), query=query)
    return "\n".join(h.value["text"] for h in hits)


SCRIPT = [
    # thread "trip", user-1: the fact is saved
    call("remember", fact="prefers a window seat"),
    AIMessage("Noted."),
    # thread "booking", user-1: the fact is recalled
    call("recall", query="seat preference"),
    AIMessage("Booked a window seat."),
    # thread "other", user-2: nothing of user-1's
    call("recall", query="seat preference"),
    AIMessage("Which seat would you like?"),
]


def conversation(thread: str, user: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread, "user_id": user}}


def tool_output(state: dict[str, Any]) -> str:
    [message] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    return str(message.content)


def agent_store(kind: str, tmp_path: Path) -> MastraStore:
    store = build(kind, tmp_path, index={"dims": 64, "embed": "hash/64", "fields": ["text"]})
    assert isinstance(store, MastraStore)
    return store


@pytest.mark.parametrize("kind", OURS)
def test_an_agent_remembers_across_threads(kind: str, tmp_path: Path) -> None:
    store = agent_store(kind, tmp_path)
    model = ScriptedChatModel(messages=iter(SCRIPT))
    agent = create_react_agent(model, [remember, recall], checkpointer=InMemorySaver(), store=store)

    first = agent.invoke(
        {"messages": [("user", "I always sit by the window.")]}, conversation("trip", "user-1")
    )
    assert tool_output(first) == "saved"
    second = agent.invoke(
        {"messages": [("user", "Book my flight to Kyoto.")]}, conversation("booking", "user-1")
    )
    assert tool_output(second) == "prefers a window seat"
    assert second["messages"][-1].content == "Booked a window seat."
    # The new thread started empty: what it knew came from the store, not from the first thread's history.
    assert "I always sit by the window." not in [m.content for m in second["messages"]]
    third = agent.invoke({"messages": [("user", "Book my flight.")]}, conversation("other", "user-2"))
    assert tool_output(third) == ""
    store.close()


@pytest.mark.parametrize("kind", OURS)
async def test_an_async_agent_remembers_across_threads(kind: str, tmp_path: Path) -> None:
    store = agent_store(kind, tmp_path)
    model = ScriptedChatModel(messages=iter(SCRIPT))
    agent = create_react_agent(model, [aremember, arecall], checkpointer=InMemorySaver(), store=store)

    first = await agent.ainvoke(
        {"messages": [("user", "I sit by the window.")]}, conversation("trip", "user-1")
    )
    assert tool_output(first) == "saved"
    second = await agent.ainvoke({"messages": [("user", "Book it.")]}, conversation("booking", "user-1"))
    assert tool_output(second) == "prefers a window seat"
    third = await agent.ainvoke({"messages": [("user", "Book it.")]}, conversation("other", "user-2"))
    assert tool_output(third) == ""
    # What the agent saved is an ordinary item of the store, found by namespace.
    [item] = await store.asearch(("memories", "user-1"))
    assert item.value == {"text": "prefers a window seat"}
    await store.aclose()
