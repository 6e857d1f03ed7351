"""Mastra-style memory options that a Mastra JSON config carries, loaded here as Mastra 1.31 loads them
(issue 26): ``workingMemory.agentManaged``, ``version``, ``useStateSignals``, ``generateTitle.emitEvent``,
``threads`` and ``threads.generateTitle`` (docs/spec.md §5.1, §5.8, §5.9).

Each case runs on a fresh store on both sides: Mastra's ``@mastra/memory`` on an in-memory LibSQL store
(``mastra/config_options.mjs``), this project's ``Memory`` on an in-memory SQLite store. Compared: whether the
options load, the tools offered, and whether the working-memory system message is the read-only one holding
the stored data. The values refused here but accepted by Mastra are [Δ] and checked apart, with their error.
One Node process answers the whole module (``mastra_runner``).
"""

from __future__ import annotations

from typing import Any

import pytest

from mastra_memory.errors import ConfigError
from mastra_memory.memory import Memory, UnsupportedOptionError
from mastra_memory.stores.sqlite.storage import SQLiteStorage

from .mastra_runner import run_mastra

DATA = "# User\n- Name: Ann\n"

CASES: dict[str, dict[str, Any]] = {
    "agent-managed-default": {"options": {"workingMemory": {"enabled": True}}},
    "agent-managed-true": {"options": {"workingMemory": {"enabled": True, "agentManaged": True}}},
    "agent-managed-false": {"options": {"workingMemory": {"enabled": True, "agentManaged": False}}},
    "agent-managed-false-thread-scope": {
        "options": {"workingMemory": {"enabled": True, "scope": "thread", "agentManaged": False}}
    },
    "read-only-agent-managed": {
        "options": {"readOnly": True, "workingMemory": {"enabled": True, "agentManaged": True}}
    },
    "version-stable": {
        "options": {"workingMemory": {"enabled": True, "template": "# User\n- Name:\n", "version": "stable"}}
    },
    "state-signals-off": {"options": {"workingMemory": {"enabled": True, "useStateSignals": False}}},
    "emit-event-off": {
        "options": {
            "workingMemory": {"enabled": True},
            "generateTitle": {"minMessages": 2, "emitEvent": False},
        }
    },
    "threads-empty": {"options": {"workingMemory": {"enabled": True}, "threads": {}}},
    "threads-generate-title": {"options": {"threads": {"generateTitle": True}}},
    "threads-generate-title-false": {"options": {"threads": {"generateTitle": False}}},
}
for _case in CASES.values():
    _case.setdefault("workingMemory", DATA)


@pytest.fixture(scope="module")
def mastra() -> dict[str, Any]:
    cases = [{"name": name, **case} for name, case in CASES.items()]
    return run_mastra({"cases": cases}, script="config_options.mjs")


async def _ours(case: dict[str, Any]) -> dict[str, Any]:
    try:
        memory = Memory(storage=SQLiteStorage(":memory:"), options=case["options"])
    except ConfigError as exc:
        return {"loaded": False, "error": str(exc), "tools": [], "readOnly": None, "holdsData": None}
    try:
        await memory.create_thread("r1", "t1", title="x")
        if case["workingMemory"]:
            await memory.update_working_memory("t1", "r1", case["workingMemory"])
        context = {"MastraMemory": {"thread": {"id": "t1"}, "resourceId": "r1"}}
        tools = sorted(memory.get_tools(context))
        system = (await memory.get_context("t1", "r1")).system_message
    finally:
        await memory.close()
    return {
        "loaded": True,
        "error": None,
        "tools": tools,
        "readOnly": None if system is None else "read-only" in system,
        "holdsData": None if system is None or not case["workingMemory"] else case["workingMemory"] in system,
    }


@pytest.mark.parametrize("name", list(CASES))
async def test_options_load_and_act_as_mastras(mastra: dict[str, Any], name: str) -> None:
    ours, theirs = await _ours(CASES[name]), mastra[name]
    # Both refuse threads.generateTitle; the messages are each side's own.
    assert {**ours, "error": ours["error"] is not None} == {**theirs, "error": theirs["error"] is not None}
    if not theirs["loaded"]:
        assert "generateTitle" in theirs["error"]
        assert "generateTitle" in ours["error"]


@pytest.mark.parametrize(
    ("options", "option"),
    [
        (
            {"workingMemory": {"enabled": True, "template": "# T", "version": "vnext"}},
            "working_memory.version",
        ),
        ({"workingMemory": {"enabled": True, "useStateSignals": True}}, "working_memory.use_state_signals"),
        ({"generateTitle": {"emitEvent": True}}, "generate_title.emit_event"),
    ],
)
def test_refused_where_mastra_accepts(options: dict[str, Any], option: str) -> None:
    """[Δ] docs/spec.md §5.8, §5.9: Mastra's experimental vnext tool, its state signals and its stream
    event are not built; refused with what to do, before any I/O (Mastra loads them)."""
    with pytest.raises(UnsupportedOptionError) as caught:
        Memory(storage=SQLiteStorage(":memory:"), options=options)
    assert caught.value.details == {"option": option}
