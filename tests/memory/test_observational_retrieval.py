"""Observational memory's retrieval (docs/spec.md §5.14): the memory_observations_<dim> index, the search
over observation groups (Mastra's searchMessages), the recall tool browsing the messages behind a group,
and that no tenant reaches another's observations or messages. Offline: scripted model, hash embedder."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from mastra_memory.errors import ThreadOwnershipError, ValidationError
from mastra_memory.memory import Memory
from mastra_memory.memory.observational.groups import parse_groups
from mastra_memory.memory.observational.prompts import thread_label
from mastra_memory.memory.observational.retrieval import observation_vector_id
from mastra_memory.models import ScriptedModel
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

from .om_helpers import context, observer_reply, said, system, turn

TEXTS = [
    "My name is Ada and I live in Lisbon.",
    "I have a cat called Tofu who is seven years old.",
    "Please remember that my sister Maria visits on Friday the fifth.",
]


def options(model: Any, retrieval: Any = None, scope: str = "thread") -> dict[str, Any]:
    return {
        "observationalMemory": {
            "model": model,
            "scope": scope,
            "retrieval": {"vector": True} if retrieval is None else retrieval,
            "observation": {"messageTokens": 80},
        }
    }


@pytest.fixture
async def memory(storage: SQLiteStorage, vector: SQLiteVector) -> AsyncIterator[Memory]:
    mem = Memory(
        storage=storage,
        vector=vector,
        embedder="hash/64",
        options=options(ScriptedModel([observer_reply], repeat_last=True)),
    )
    for text in TEXTS:
        await turn(mem, "t1", "u1", text)
    yield mem
    await mem.close()


async def test_groups_are_indexed_and_searched_per_resource(memory: Memory, vector: SQLiteVector) -> None:
    record = await memory.get_observational_memory("t1", "u1")
    assert record is not None
    group = parse_groups(record.active_observations)[0]
    assert "memory_observations_64" in await vector.list_indexes()
    hits = await memory.search_observations("cat called Tofu", resource_id="u1", top_k=5)
    assert [h.group_id for h in hits] == [group.id]
    hit = hits[0]
    assert (hit.thread_id, hit.range) == ("t1", group.range)
    assert hit.text is not None
    assert "Tofu" in hit.text
    assert hit.observed_at == record.last_observed_at
    # Mastra's vector id (a UUID of the SHA-256 of [resource, thread, group, chunk]): indexing the group
    # again replaces its vector instead of adding one.
    ids = await memory.index_observation(
        text=group.content, group_id=group.id, range=group.range, thread_id="t1", resource_id="u1"
    )
    assert ids == [observation_vector_id("u1", "t1", group.id, 0)]
    assert (await vector.describe_index("memory_observations_64")).count == 1
    # Filters narrow within the resource; another resource finds nothing.
    assert await memory.search_observations("Tofu", resource_id="u1", filter={"thread_id": "other"}) == []
    assert await memory.search_observations("Tofu", resource_id="u2") == []


async def test_the_prompt_keeps_group_ranges_and_offers_the_recall_tool(memory: Memory) -> None:
    after = await turn(memory, "t1", "u1", "What do you remember?")
    assert said(after.prompt) == ["What do you remember?"]
    assert '<observation-group id="' in system(after.prompt)
    assert "recall" in system(after.prompt)
    tools = memory.get_tools(context("t1", "u1"))
    assert set(tools) == {"recall"}
    assert tools["recall"].openai_tool()["function"]["name"] == "recall"


async def test_the_recall_tool_finds_the_source_messages(memory: Memory) -> None:
    record = await memory.get_observational_memory("t1", "u1")
    assert record is not None
    start, end = parse_groups(record.active_observations)[0].range.split(":")
    tool = memory.get_tools(context("t1", "u1"))["recall"]
    page = await tool.execute({"cursor": start, "limit": 3}, context("t1", "u1"))
    assert page["count"] == 3
    assert page["hasNextPage"] is True
    assert page["hasPrevPage"] is False
    assert TEXTS[0] in page["messages"]
    assert TEXTS[1] in page["messages"]
    following = await tool.execute({"cursor": start, "limit": 3, "page": 2}, context("t1", "u1"))
    assert TEXTS[2] in following["messages"]
    assert following["hasNextPage"] is False
    assert f"[{end}]" in following["messages"]  # the range's last message ends the observed span
    # A range passed whole gets a hint; the threads mode lists the resource's threads.
    hint = await tool.execute({"cursor": f"{start}:{end}"}, context("t1", "u1"))
    assert "start or the end id" in hint["hint"]
    threads = await tool.execute({"mode": "threads"}, context("t1", "u1"))
    assert "t1" in threads["threads"]
    assert threads["count"] == 1
    found = await tool.execute({"mode": "search", "query": "sister Maria"}, context("t1", "u1"))
    assert found["count"] == 1
    assert start in found["results"]


async def test_the_recall_tool_never_crosses_tenants(memory: Memory) -> None:
    await memory.create_thread("u2", thread_id="t2")
    record = await memory.get_observational_memory("t1", "u1")
    assert record is not None
    start = parse_groups(record.active_observations)[0].range.split(":")[0]
    tool = memory.get_tools(context("t2", "u2"))["recall"]
    with pytest.raises(ThreadOwnershipError):
        await tool.execute({"cursor": start}, context("t2", "u2"))
    with pytest.raises(ThreadOwnershipError):
        await tool.execute({"threadId": "t1"}, context("t2", "u2"))
    with pytest.raises(ThreadOwnershipError):
        await tool.execute({"cursor": "no-such-message"}, context("t2", "u2"))
    assert (await tool.execute({"mode": "search", "query": "Tofu"}, context("t2", "u2")))["count"] == 0
    assert (await tool.execute({"mode": "threads"}, context("t2", "u2")))["threads"].count("t1") == 0


async def test_thread_scoped_retrieval_stays_in_the_thread(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    model = ScriptedModel([observer_reply], repeat_last=True)
    mem = Memory(
        storage=storage,
        vector=vector,
        embedder="hash/64",
        options=options(model, retrieval={"scope": "thread"}),
    )
    try:
        await turn(mem, "t1", "u1", TEXTS[0])
        await turn(mem, "t2", "u1", TEXTS[1])
        tool = mem.get_tools(context("t1", "u1"))["recall"]
        assert "search" not in tool.parameters["properties"]["mode"]["enum"]  # no vector: no search mode
        with pytest.raises(ValidationError):
            await tool.execute({"threadId": "t2"}, context("t1", "u1"))
        with pytest.raises(ValidationError):
            await tool.execute({"mode": "threads"}, context("t1", "u1"))
        page = await tool.execute({}, context("t1", "u1"))
        assert TEXTS[0] in page["messages"]
    finally:
        await mem.close()


async def test_resource_scope_shares_observations_across_threads(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    model = ScriptedModel([observer_reply], repeat_last=True)
    mem = Memory(
        storage=storage,
        vector=vector,
        embedder="hash/64",
        options=options(model, retrieval=False, scope="resource"),
    )
    try:
        await turn(mem, "t1", "u1", TEXTS[0])
        await turn(mem, "t2", "u1", TEXTS[1])
        await turn(mem, "t1", "u1", TEXTS[2])
        assert len(model.requests) == 1
        sent = model.requests[0].messages[-1]["content"]
        # Both threads' unobserved messages, one section each, the thread ids obscured as Mastra does.
        assert f"### Thread {thread_label('t1')}" in sent
        assert f"### Thread {thread_label('t2')}" in sent
        assert "t1" not in sent.replace(thread_label("t1"), "")
        record = await mem.get_observational_memory("t3", "u1")  # any thread of the resource
        assert record is not None
        assert record.thread_id is None
        assert record.scope == "resource"
        # A new thread of the same resource starts with what was observed in the others.
        fresh = await turn(mem, "t3", "u1", "Hello again.")
        assert "User said: I have a cat called Tofu" in system(fresh.prompt)
        assert said(fresh.prompt) == ["Hello again."]
        # Another resource sees none of it.
        other = await turn(mem, "t4", "u2", "Hello.")
        assert "<observations>" not in system(other.prompt)
    finally:
        await mem.close()
