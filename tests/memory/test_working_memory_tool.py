"""Issue 26, section 1: working memory under ``read_only`` and the tool's ownership check (docs/spec.md §4.5,
§5.12), and Mastra's ``messageHistory`` option (§5.1).

Before the fixes ``get_tools()`` returned ``updateWorkingMemory`` under ``readOnly``, the system message told
the model to call it and the tool wrote; the tool wrote res-2's memory for a thread of res-1; and
``{"messageHistory": {"maxTokens": 300}}`` failed with "Extra inputs are not permitted" (it now loads and
budgets the prompt: tests/memory/test_history_budget.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from mastra_memory.errors import ConfigError, ThreadOwnershipError, ValidationError
from mastra_memory.memory import Memory
from mastra_memory.memory.config import MemoryConfig
from mastra_memory.memory.message_list import MessageList
from mastra_memory.memory.processors import UpdateWorkingMemoryTool
from mastra_memory.stores.sqlite.storage import SQLiteStorage

from .memory_helpers import msg, ts

STORED = "# User Information\n- **First Name**: Ada"


def _ctx(thread_id: str, resource_id: str | None, **memory_config: Any) -> dict[str, Any]:
    context: dict[str, Any] = {"thread": {"id": thread_id}}
    if resource_id is not None:
        context["resourceId"] = resource_id
    if memory_config:
        context["memoryConfig"] = memory_config
    return {"MastraMemory": context}


async def _system_text(memory: Memory, request_context: dict[str, Any]) -> str:
    [wm] = [
        p for p in memory.get_input_processors(request_context=request_context) if p.id == "working-memory"
    ]
    message_list = MessageList(thread_id="t1")
    await wm.process_input([], message_list, request_context=request_context)
    [system] = message_list.system_messages
    return system.content.content or ""


@pytest.fixture
async def memory(storage: SQLiteStorage) -> Memory:
    m = Memory(storage=storage, options={"workingMemory": {"enabled": True}})
    await m.create_thread("res-1", "t1")
    await m.create_thread("res-2", "t2")
    await m.update_working_memory("t1", "res-1", STORED)
    return m


# --- readOnly ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["instance", "request"])
async def test_read_only_offers_no_tool_and_a_read_only_instruction(
    storage: SQLiteStorage, where: str
) -> None:
    options: dict[str, Any] = {"workingMemory": {"enabled": True}}
    if where == "instance":
        options["readOnly"] = True
    memory = Memory(storage=storage, options=options)
    await memory.create_thread("res-1", "t1")
    ctx = _ctx("t1", "res-1", readOnly=True) if where == "request" else _ctx("t1", "res-1")
    assert memory.get_tools(ctx) == {}
    # Nothing stored: the read-only message shows no template (there is nothing to fill in).
    empty = await _system_text(memory, ctx)
    assert "updateWorkingMemory" not in empty
    assert "read-only" in empty
    assert "First Name" not in empty
    await memory.update_working_memory("t1", "res-1", STORED)
    text = await _system_text(memory, ctx)
    assert STORED in text
    assert "updateWorkingMemory" not in text
    assert "read-only" in text


async def test_without_read_only_the_tool_and_its_instruction_are_offered(memory: Memory) -> None:
    ctx = _ctx("t1", "res-1")
    assert list(memory.get_tools(ctx)) == ["updateWorkingMemory"]
    text = await _system_text(memory, ctx)
    assert "updateWorkingMemory" in text
    assert STORED in text


@pytest.mark.parametrize("where", ["tool", "request"])
async def test_the_tool_never_writes_under_read_only(memory: Memory, where: str) -> None:
    """A host that kept (or built) the tool and calls it under ``readOnly`` writes nothing."""
    config = memory.options.working_memory
    if where == "tool":
        tool, ctx = UpdateWorkingMemoryTool(memory, config, read_only=True), _ctx("t1", "res-1")
    else:
        tool, ctx = memory.get_tools()["updateWorkingMemory"], _ctx("t1", "res-1", readOnly=True)
    with pytest.raises(ValidationError) as info:
        await tool.execute({"memory": "# overwritten"}, ctx)
    assert info.value.id == "MASTRA_MEMORY_UPDATE_WORKING_MEMORY_READ_ONLY"
    assert await memory.get_working_memory("t1", "res-1") == STORED


# --- the tool's ownership check -------------------------------------------------------------------


@pytest.mark.parametrize("scope", ["resource", "thread"])
async def test_the_tool_refuses_a_thread_of_another_resource(storage: SQLiteStorage, scope: str) -> None:
    memory = Memory(storage=storage, options={"workingMemory": {"enabled": True, "scope": scope}})
    await memory.create_thread("res-1", "t1")
    await memory.update_working_memory("t1", "res-1", STORED)
    tool = memory.get_tools()["updateWorkingMemory"]
    for ctx in (
        _ctx("t1", "res-2"),
        {"MastraMemory": {"thread": {"id": "t1", "resourceId": "res-2"}}},  # the resource only on the thread
    ):
        with pytest.raises(ThreadOwnershipError) as info:
            await tool.execute({"memory": "# res-2 was here"}, ctx)
        assert info.value.id == "MASTRA_MEMORY_UPDATE_WORKING_MEMORY_RESOURCE_MISMATCH"
        assert "res-1" not in str(info.value), "the error must not name the owning resource"
    assert await memory.get_working_memory("t1", "res-1") == STORED
    if scope == "resource":
        assert await memory.get_working_memory("t1", "res-2") is None
        assert await storage.get_resource_by_id("res-2") is None


async def test_the_owner_still_writes_and_a_new_thread_is_not_refused(memory: Memory) -> None:
    tool = memory.get_tools()["updateWorkingMemory"]
    assert await tool.execute({"memory": "# mine"}, _ctx("t1", "res-1")) == {"success": True}
    assert await memory.get_working_memory("t1", "res-1") == "# mine"
    # A thread not stored yet belongs to no one: resource-scoped memory is written for the request's resource.
    assert await tool.execute({"memory": "# new"}, _ctx("t-new", "res-2")) == {"success": True}
    assert await memory.get_working_memory("t-new", "res-2") == "# new"


async def test_schema_mode_reads_nothing_before_the_ownership_check(storage: SQLiteStorage) -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    memory = Memory(storage=storage, options={"workingMemory": {"enabled": True, "schema": schema}})
    await memory.create_thread("res-1", "t1")
    await memory.update_working_memory("t1", "res-2", '{"name": "bob"}')
    tool = memory.get_tools()["updateWorkingMemory"]
    with pytest.raises(ThreadOwnershipError):
        await tool.execute({"memory": {"name": "mallory"}}, _ctx("t1", "res-2"))
    assert await memory.get_working_memory("t1", "res-2") == '{"name": "bob"}'


# --- messageHistory ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "limits"),
    [
        ({"messageHistory": {"maxTokens": 300}}, (None, 300, 75)),
        ({"messageHistory": {"maxTokens": 8000, "atMaxRemoveTokens": 1000}}, (None, 8000, 1000)),
        ({"message_history": {"max_tokens": 1.5}, "lastMessages": 4}, (4, 1.5, 0.375)),
    ],
)
def test_a_positive_message_history_budget_loads(
    storage: SQLiteStorage, options: dict[str, Any], limits: tuple[Any, ...]
) -> None:
    # Issue 26 section 2: the budget is built (docs/spec.md §5.12), no longer refused.
    memory = Memory(storage=storage, options=options)
    got = memory.options.history_limits
    assert got.enabled
    assert (got.max_messages, got.max_tokens, got.at_max_remove_tokens) == limits
    assert [p.id for p in memory.get_input_processors()][-1] == "memory-token-limiter"


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"messageHistory": {}}, "maxTokens: Field required"),
        ({"messageHistory": {"maxTokens": -1}}, "greater than or equal to 0"),
        ({"messageHistory": {"maxTokens": True}}, "finite number"),
        ({"messageHistory": {"maxTokens": float("inf")}}, "finite number"),
        ({"messageHistory": {"maxTokens": 0, "atMaxRemoveTokens": 5}}, "no greater than maxTokens"),
        ({"messageHistory": {"maxTokens": 0, "other": 1}}, "Extra inputs"),
    ],
)
def test_message_history_is_checked_by_mastras_rules(options: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        MemoryConfig.from_any(options)


async def test_max_tokens_zero_loads_and_turns_history_off(storage: SQLiteStorage) -> None:
    memory = Memory(storage=storage, options={"messageHistory": {"maxTokens": 0, "atMaxRemoveTokens": 0}})
    assert memory.options.message_history is not None
    assert not memory.options.history_on
    assert [p.id for p in memory.get_input_processors()] == []
    await memory.create_thread("r", "t")
    await memory.save_messages([msg("m1", "t", "hello", ts(1))])
    assert (await memory.recall("t", resource_id="r")).messages == []
    # Per request too, also through a MessageHistory the host built itself.
    on = Memory(storage=storage)
    [history] = [p for p in on.get_input_processors() if p.id == "message-history"]
    ctx = _ctx("t", "r", messageHistory={"maxTokens": 0})
    assert on.get_input_processors(request_context=ctx) == []
    message_list = MessageList(thread_id="t")
    await history.process_input([], message_list, request_context=ctx)
    assert message_list.all() == []
    await history.process_input([], message_list, request_context=_ctx("t", "r"))
    assert [m.id for m in message_list.all()] == ["m1"]
