"""Issue 26, section 3: the ``updateWorkingMemory`` tool's rules, as Mastra's tool has them (docs/spec.md
§5.8, §5.12): stored data is never replaced with the empty template, a missing thread is created before the
write, schema mode refuses ``memory`` given as JSON text and stores compact JSON, and a thread's
``metadata.workingMemory`` sets the resource's working memory. tests/interop/test_mastra_working_memory.py
runs the same calls in Mastra."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mastra_memory.errors import ValidationError
from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage

TEMPLATE = "# User\n- Name:\n- City:\n"
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "city": {"type": "string"}}}


def ctx(thread_id: str = "t1", resource_id: str | None = "res-1", **thread: Any) -> dict[str, Any]:
    return {"MastraMemory": {"thread": {"id": thread_id, **thread}, "resourceId": resource_id}}


def tool(memory: Memory) -> Any:
    return memory.get_tools(ctx())["updateWorkingMemory"]


async def test_the_empty_template_never_replaces_stored_data(storage: SQLiteStorage) -> None:
    memory = Memory(storage=storage, options={"workingMemory": {"enabled": True, "template": TEMPLATE}})
    # Nothing stored yet: the template may be written (nothing is lost).
    assert await tool(memory).execute({"memory": TEMPLATE}, ctx()) == {"success": True}
    assert await tool(memory).execute({"memory": "# User\n- Name: Ann\n"}, ctx()) == {"success": True}
    # The template again, whitespace aside: refused in Mastra's words, and the data stays.
    answer = await tool(memory).execute({"memory": "  # User - Name:\n\n - City:  "}, ctx())
    assert answer["success"] is False
    assert "empty template" in answer["message"]
    assert await memory.get_working_memory("t1", "res-1") == "# User\n- Name: Ann\n"


async def test_a_missing_thread_is_created_before_the_write(storage: SQLiteStorage) -> None:
    memory = Memory(storage=storage, options={"workingMemory": {"enabled": True, "scope": "thread"}})
    request = ctx("new-thread", "res-1", title="Trip", metadata={"topic": "travel"})
    assert await tool(memory).execute({"memory": "# notes"}, request) == {"success": True}
    thread = await memory.get_thread_by_id("new-thread")
    assert thread is not None
    assert (thread.resource_id, thread.title) == ("res-1", "Trip")
    assert thread.metadata == {"topic": "travel", "workingMemory": "# notes"}


async def test_schema_mode_refuses_json_text_and_stores_compact_json(storage: SQLiteStorage) -> None:
    memory = Memory(storage=storage, options={"workingMemory": {"enabled": True, "schema": SCHEMA}})
    with pytest.raises(ValidationError, match="not JSON text"):
        await tool(memory).execute({"memory": '{"name": "Ann"}'}, ctx())
    assert await memory.get_thread_by_id("t1") is None  # refused before anything was written
    await tool(memory).execute({"memory": {"name": "Ann", "city": "Kyōto"}}, ctx())
    assert await memory.get_working_memory("t1", "res-1") == '{"name":"Ann","city":"Kyōto"}'
    # A whole tool call given as JSON text stays accepted (hosts pass the model's raw arguments). A null for a
    # key the schema does not require is ignored (a model padding optional fields must not wipe them).
    await tool(memory).execute(json.dumps({"memory": {"city": None, "extra": {"a": None}}}), ctx())
    assert await memory.get_working_memory("t1", "res-1") == '{"name":"Ann","city":"Kyōto","extra":{}}'


async def test_schema_mode_null_removes_only_a_required_key(storage: SQLiteStorage) -> None:
    schema = {**SCHEMA, "required": ["name"]}
    memory = Memory(storage=storage, options={"workingMemory": {"enabled": True, "schema": schema}})
    await tool(memory).execute({"memory": {"name": "Ann", "city": "Kyōto"}}, ctx())
    await tool(memory).execute({"memory": {"name": None, "city": None}}, ctx())
    assert await memory.get_working_memory("t1", "res-1") == '{"city":"Kyōto"}'


@pytest.mark.parametrize("how", ["update_thread", "create_thread", "save_thread"])
async def test_thread_metadata_working_memory_sets_the_resources(storage: SQLiteStorage, how: str) -> None:
    memory = Memory(storage=storage, options={"workingMemory": {"enabled": True}})
    metadata = {"workingMemory": "# from the thread", "topic": "x"}
    if how == "update_thread":
        await memory.create_thread("res-1", "t1")
        await memory.update_thread("t1", metadata=metadata)
    elif how == "create_thread":
        await memory.create_thread("res-1", "t1", metadata=metadata)
    else:
        await memory.save_thread({"id": "t1", "resource_id": "res-1", "title": "", "metadata": metadata})
    assert await memory.get_working_memory("t1", "res-1") == "# from the thread"


async def test_thread_metadata_leaves_the_resource_alone_otherwise(storage: SQLiteStorage) -> None:
    thread_scope = Memory(storage=storage, options={"workingMemory": {"enabled": True, "scope": "thread"}})
    await thread_scope.create_thread("res-1", "t1", metadata={"workingMemory": "# thread"})
    off = Memory(storage=storage)
    await off.create_thread("res-1", "t2", metadata={"workingMemory": "# off"})
    assert await thread_scope.get_resource_by_id("res-1") is None
