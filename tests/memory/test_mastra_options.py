"""Mastra 1.31 ``MemoryConfig`` keys that a Mastra JSON config carries (issue 26): each loads and acts as in
Mastra, or is refused with ``UnsupportedOptionError`` saying what to do (docs/spec.md §5.1, §5.8, §5.9).
Before, every one of them failed with pydantic's "Extra inputs are not permitted"."""

from __future__ import annotations

from typing import Any

import pytest

from mastra_memory.errors import ConfigError
from mastra_memory.memory import Memory, UnsupportedOptionError
from mastra_memory.memory.config import MemoryConfig, merge_config
from mastra_memory.memory.message_list import MessageList
from mastra_memory.stores.sqlite.storage import SQLiteStorage

from .memory_helpers import msg, ts

STORED = "# User\n- Name: Ada"


def _ctx(**memory_config: Any) -> dict[str, Any]:
    context: dict[str, Any] = {"thread": {"id": "t1"}, "resourceId": "r1"}
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


def test_every_mastra_key_loads() -> None:
    cfg = MemoryConfig.from_any(
        {
            "readOnly": False,
            "lastMessages": 5,
            "messageHistory": {"maxTokens": 1000, "atMaxRemoveTokens": 100},
            "semanticRecall": False,
            "workingMemory": {
                "enabled": True,
                "scope": "thread",
                "template": "# T",
                "version": "stable",
                "useStateSignals": False,
                "agentManaged": False,
            },
            "observationalMemory": False,
            "generateTitle": {"instructions": "short", "minMessages": 2, "emitEvent": False},
            "filterIncompleteToolCalls": False,
            "retainFullInput": True,
            "threads": {},
        }
    )
    wm = cfg.working_memory
    assert (wm.agent_managed, wm.version, wm.use_state_signals) == (False, "stable", False)
    assert merge_config(cfg, {"workingMemory": {"agentManaged": True}}).working_memory.agent_managed is True


@pytest.mark.parametrize(
    ("options", "option", "says"),
    [
        (
            {"workingMemory": {"enabled": True, "template": "# T", "version": "vnext"}},
            "working_memory.version",
            "'stable'",
        ),
        (
            {"workingMemory": {"enabled": True, "useStateSignals": True}},
            "working_memory.use_state_signals",
            "updateWorkingMemory",
        ),
        ({"generateTitle": {"emitEvent": True}}, "generate_title.emit_event", "drop emit_event"),
        ({"threads": {"generateTitle": True}}, "threads.generate_title", "top-level generate_title"),
        ({"threads": {"generateTitle": {"instructions": "x"}}}, "threads.generate_title", "has moved"),
    ],
)
def test_refused_with_what_to_do(options: dict[str, Any], option: str, says: str) -> None:
    with pytest.raises(UnsupportedOptionError, match=says) as caught:
        Memory(storage=SQLiteStorage(":memory:"), options=options)
    assert caught.value.details == {"option": option}
    assert "Extra inputs" not in str(caught.value)
    # Also as a per-call thread_config.
    with pytest.raises(UnsupportedOptionError):
        merge_config(MemoryConfig(), options)


def test_unknown_keys_still_refused() -> None:
    with pytest.raises(ConfigError, match=r"workingMemory\.agentmanaged: Extra inputs"):
        MemoryConfig.from_any({"workingMemory": {"agentmanaged": False}})


async def test_agent_managed_false_is_read_only_working_memory_but_stores_messages() -> None:
    """Mastra: ``agentManaged: false`` offers no tool and the read-only instruction; unlike ``readOnly``,
    the turn's messages are still stored."""
    memory = Memory(
        storage=SQLiteStorage(":memory:"),
        options={"lastMessages": 5, "workingMemory": {"enabled": True, "agentManaged": False}},
    )
    try:
        await memory.create_thread("r1", "t1")
        await memory.update_working_memory("t1", "r1", STORED)
        assert memory.get_tools(_ctx()) == {}
        text = await _system_text(memory, _ctx())
        assert "read-only" in text
        assert STORED in text
        assert "updateWorkingMemory" not in text
        context = await memory.get_context("t1", "r1")
        assert context.system_message is not None
        assert "read-only" in context.system_message
        # A request can hand the memory back to the agent, and take it away again.
        assert list(memory.get_tools(_ctx(workingMemory={"agentManaged": True}))) == ["updateWorkingMemory"]
        assert "updateWorkingMemory" in await _system_text(memory, _ctx(workingMemory={"agentManaged": True}))
        # Messages are stored: agentManaged is about working memory only.
        [history] = [p for p in memory.get_output_processors() if p.id == "message-history"]
        message_list = MessageList(thread_id="t1", resource_id="r1")
        message_list.add([msg("m1", "t1", "hello", ts(1), resource_id="r1")], source="input")
        await history.process_output_result([], message_list, request_context=_ctx())
        assert [m.id for m in (await memory.recall("t1", "r1")).messages] == ["m1"]
    finally:
        await memory.close()


async def test_agent_managed_false_per_request() -> None:
    memory = Memory(storage=SQLiteStorage(":memory:"), options={"workingMemory": {"enabled": True}})
    try:
        await memory.create_thread("r1", "t1")
        off = _ctx(workingMemory={"agentManaged": False})
        assert memory.get_tools(off) == {}
        assert "read-only" in await _system_text(memory, off)
    finally:
        await memory.close()
