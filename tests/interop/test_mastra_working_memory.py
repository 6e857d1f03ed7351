"""The ``updateWorkingMemory`` tool's rules and ``update_thread``'s working-memory sync, proved by running
Mastra's own tool and ``Memory.updateThread`` on the same calls (issue 26, section 3; docs/spec.md §5.8,
§5.12).

Each case runs on a fresh store on both sides: Mastra's ``@mastra/memory`` on an in-memory LibSQL store
(``mastra/working_memory_tool.mjs``), this project's ``Memory`` on an in-memory SQLite store. What each call
answers, the thread the calls leave and the stored working memory (byte for byte) are compared. A call
Mastra refuses at input validation (``{"error": true, ...}``) is one this project refuses with
``ValidationError``. One Node process answers the whole module (``mastra_runner``).
"""

from __future__ import annotations

from typing import Any

import pytest

from mastra_memory.errors import ValidationError
from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage

from .mastra_runner import run_mastra

TEMPLATE = "# User\n- Name:\n- City:\n"
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "city": {"type": "string"}}}
NULLABLE_NAME = {
    "type": "object",
    "properties": {"name": {"type": ["string", "null"]}, "city": {"type": "string"}},
    "required": ["name"],
}


def call(memory: Any, thread_id: str = "t1", resource_id: str = "r1") -> dict[str, Any]:
    return {"tool": {"memory": memory}, "threadId": thread_id, "resourceId": resource_id}


CASES: dict[str, dict[str, Any]] = {
    "template-refused": {
        "options": {"workingMemory": {"enabled": True, "template": TEMPLATE}},
        "calls": [call(TEMPLATE), call("# User\n- Name: Ann\n"), call("  # User - Name:\n\n - City:  ")],
    },
    "template-refused-thread-scope": {
        "options": {"workingMemory": {"enabled": True, "scope": "thread", "template": TEMPLATE}},
        "calls": [call("# User\n- Name: Ann\n"), call(TEMPLATE)],
    },
    "missing-thread-created": {
        "options": {"workingMemory": {"enabled": True, "scope": "thread"}},
        "calls": [call("# notes", thread_id="fresh")],
    },
    "missing-thread-created-resource-scope": {
        "options": {"workingMemory": {"enabled": True}},
        "calls": [call("# notes", thread_id="fresh")],
    },
    "schema-json-text-refused": {
        "options": {"workingMemory": {"enabled": True, "schema": SCHEMA}},
        "calls": [call({"name": "Ann"}), call('{"name": "Bob"}')],
    },
    "schema-compact-json": {
        "options": {"workingMemory": {"enabled": True, "schema": SCHEMA}},
        "calls": [call({"name": "Ann", "city": "Kyōto"}), call({"extra": {"a": None, "b": [1, "x"]}})],
    },
    "schema-optional-nulls-ignored": {
        "options": {"workingMemory": {"enabled": True, "schema": SCHEMA}},
        "calls": [call({"name": "Ann", "city": "Kyōto"}), call({"name": "Bo", "city": None})],
    },
    "schema-required-null-removes": {
        "options": {"workingMemory": {"enabled": True, "schema": NULLABLE_NAME}},
        "calls": [call({"name": "Ann", "city": "Kyōto"}), call({"name": None, "city": None})],
    },
    "update-thread-syncs-resource": {
        "options": {"workingMemory": {"enabled": True}},
        "threads": [{"id": "t1", "resourceId": "r1", "title": "x", "metadata": {"a": 1}}],
        "calls": [
            {"updateThread": {"id": "t1", "title": "x", "metadata": {"workingMemory": "# from metadata"}}}
        ],
    },
    "update-thread-thread-scope": {
        "options": {"workingMemory": {"enabled": True, "scope": "thread"}},
        "threads": [{"id": "t1", "resourceId": "r1", "title": "x", "metadata": {}}],
        "calls": [{"updateThread": {"id": "t1", "title": "x", "metadata": {"workingMemory": "# thread"}}}],
    },
}


@pytest.fixture(scope="module")
def mastra() -> dict[str, Any]:
    cases = [{"name": name, **case} for name, case in CASES.items()]
    return run_mastra({"cases": cases}, script="working_memory_tool.mjs")


async def _ours(case: dict[str, Any]) -> dict[str, Any]:
    memory = Memory(storage=SQLiteStorage(":memory:"), options=case["options"])
    for thread in case.get("threads", []):
        await memory.save_thread(
            {
                "id": thread["id"],
                "resource_id": thread["resourceId"],
                "title": thread["title"],
                "metadata": thread["metadata"],
            }
        )
    results: list[Any] = []
    thread_id = resource_id = None
    for step in case["calls"]:
        if "updateThread" in step:
            update = step["updateThread"]
            thread = await memory.update_thread(
                update["id"], title=update["title"], metadata=update["metadata"]
            )
            thread_id = thread_id or thread.id
            resource_id = resource_id or thread.resource_id
            results.append({"thread": {"id": thread.id, "metadata": thread.metadata}})
            continue
        thread_id = thread_id or step["threadId"]
        resource_id = resource_id or step["resourceId"]
        context = {"MastraMemory": {"thread": {"id": step["threadId"]}, "resourceId": step["resourceId"]}}
        tool = memory.get_tools(context)["updateWorkingMemory"]
        try:
            results.append(await tool.execute(step["tool"], context))
        except ValidationError:
            results.append({"refused": True})
    thread = await memory.get_thread_by_id(thread_id) if thread_id else None
    resource = await memory.get_resource_by_id(resource_id) if resource_id else None
    await memory.close()
    return {
        "results": results,
        "thread": None
        if thread is None
        else {
            "id": thread.id,
            "resourceId": thread.resource_id,
            "title": thread.title,
            "metadata": thread.metadata or None,
        },
        "workingMemory": {
            "resource": resource.working_memory if resource else None,
            "thread": (thread.metadata or {}).get("workingMemory") if thread else None,
        },
    }


def _mastras(answer: dict[str, Any]) -> dict[str, Any]:
    assert "error" not in answer, answer.get("error")
    # Mastra's input validation answers {"error": true, "message", "validationErrors"}; ours raises.
    results = [
        {"refused": True} if isinstance(r, dict) and r.get("error") is True else r for r in answer["results"]
    ]
    thread = answer["thread"]
    if thread is not None:
        thread = {**thread, "metadata": thread["metadata"] or None}
    return {**answer, "results": results, "thread": thread}


@pytest.mark.parametrize("name", list(CASES))
async def test_the_tool_and_update_thread_do_what_mastras_do(mastra: dict[str, Any], name: str) -> None:
    assert await _ours(CASES[name]) == _mastras(mastra[name])
