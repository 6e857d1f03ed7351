"""One LibSQL file, two languages: Mastra's ``LibSQLStore`` and this project's ``LibSQLStorage`` (issue 25,
item 2's storage half; docs/spec.md §4.7), proved by running Mastra itself (``mastra/libsql_store.mjs``).

* Mastra writes threads, messages (one with a tool call) and a resource's working memory; this project
  lists and reads them (same ids, text, tool calls, timestamps to the millisecond, metadata), updates a
  thread, the working memory and adds a message; Mastra reads the updates back.
* This project writes a new file; Mastra lists and reads it, and its agent prompt carries the tool call;
  Mastra's ``Memory.getWorkingMemory`` returns the working memory written here.
* After each side has opened the file, the memory tables' schema (``sqlite_master``) is unchanged, and the
  tables this project creates on a new file are exactly the ones Mastra creates.
* [Δ] Mastra's re-save keeps a message's createdAt, and Mastra alters a file in this project's layout.

Where Mastra's behaviour differs from docs/spec.md the test says so ([Δ] in §4.7).
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.messages import MastraDBMessage
from mastra_memory.storage import Thread
from mastra_memory.stores.libsql import LibSQLStorage
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.timestamps import canonical_timestamp, parse_timestamp

from .mastra_runner import run_mastra

# The nox `tests` session installs the libsql extra; a session without it skips these tests.
pytest.importorskip("libsql", reason="the libsql store needs the libsql extra")

SCRIPT = "libsql_store.mjs"
RESOURCE = "resource-1"
T0 = "2024-05-01T10:00:00.000Z"

TOOL_PART = {
    "type": "tool-invocation",
    "toolInvocation": {
        "state": "result",
        "toolCallId": "call_1",
        "toolName": "weather",
        "args": {"city": "Kyoto"},
        "result": {"temp": 20},
    },
}


def _message(mid: str, thread: str, role: str, stamp: str, parts: list[Any], **meta: Any) -> dict[str, Any]:
    content: dict[str, Any] = {"format": 2, "parts": parts}
    if meta:
        content["metadata"] = meta
    return {
        "id": mid,
        "threadId": thread,
        "resourceId": RESOURCE,
        "role": role,
        "type": "v2",
        "createdAt": stamp,
        "content": content,
    }


MESSAGES = [
    _message("m-1", "thread-a", "user", "2024-05-01T10:00:01.001Z", [{"type": "text", "text": "Weather?"}]),
    _message(
        "m-2",
        "thread-a",
        "assistant",
        "2024-05-01T10:00:02.002Z",
        [{"type": "step-start"}, TOOL_PART, {"type": "text", "text": "20 degrees in Kyoto."}],
        source="mastra",
    ),
    _message("m-3", "thread-b", "user", "2024-05-01T11:00:00.123Z", [{"type": "text", "text": "Other."}]),
]
THREADS = [
    {
        "id": "thread-a",
        "resourceId": RESOURCE,
        "title": "Kyoto",
        "metadata": {"topic": "weather", "n": 1},
        "createdAt": T0,
        "updatedAt": T0,
    },
    {
        "id": "thread-b",
        "resourceId": RESOURCE,
        "title": "Other",
        "metadata": None,
        "createdAt": "2024-05-01T11:00:00.000Z",
        "updatedAt": "2024-05-01T11:00:00.000Z",
    },
]
WORKING_MEMORY = "# User\n- Name: Ada\n- City: Kyoto"


def memory_schema(path: Path) -> list[tuple[str, str, str | None]]:
    """The memory tables and their indexes as ``sqlite_master`` holds them (read-only)."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE tbl_name IN "
            "('mastra_threads', 'mastra_messages', 'mastra_resources') ORDER BY type, name"
        ).fetchall()
    finally:
        conn.close()
    return [tuple(row) for row in rows]


def whole_schema(path: Path) -> list[tuple[str, str, str | None]]:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return [tuple(r) for r in conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name")]
    finally:
        conn.close()


def _content(message: MastraDBMessage) -> dict[str, Any]:
    """A message's content as it is stored (Mastra's keys, absent fields left out)."""
    dumped: dict[str, Any] = message.content.model_dump(by_alias=True, exclude_none=True)
    return dumped


def test_mastra_writes_python_reads_and_updates(tmp_path: Path) -> None:
    path = tmp_path / "local.db"
    run_mastra(
        {
            "file": str(path),
            "write": {
                "threads": THREADS,
                "messages": MESSAGES,
                "resources": [
                    {
                        "id": RESOURCE,
                        "workingMemory": WORKING_MEMORY,
                        "metadata": {"plan": "pro"},
                        "createdAt": T0,
                        "updatedAt": T0,
                    }
                ],
            },
        },
        script=SCRIPT,
    )
    schema = whole_schema(path)

    async def python_side() -> dict[str, Any]:
        storage = LibSQLStorage(f"libsql:///{path}")
        try:
            threads = (await storage.list_threads({"resource_id": RESOURCE})).threads
            by_id = {thread.id: thread for thread in threads}
            page = await storage.list_messages(["thread-a", "thread-b"], per_page=False)
            resource = await storage.get_resource_by_id(RESOURCE)
            # Updates: a thread's title and metadata, the working memory, and a new message.
            await storage.update_thread("thread-a", title="Kyoto trip", metadata={"n": 2})
            await storage.update_resource(RESOURCE, working_memory=WORKING_MEMORY + "\n- Likes: tea")
            await storage.save_messages(
                [
                    _message(
                        "m-4",
                        "thread-a",
                        "user",
                        "2024-05-01T10:00:03.003Z",
                        [{"type": "text", "text": "And tomorrow?"}],
                    )
                ]
            )
            return {"threads": by_id, "messages": page.messages, "resource": resource}
        finally:
            await storage.close()

    seen = asyncio.run(python_side())
    threads: dict[str, Thread] = seen["threads"]
    assert set(threads) == {"thread-a", "thread-b"}
    assert threads["thread-a"].title == "Kyoto"
    assert threads["thread-a"].metadata == {"topic": "weather", "n": 1}  # Mastra's JSONB, decoded
    assert threads["thread-b"].metadata is None
    assert canonical_timestamp(threads["thread-a"].created_at) == T0
    messages: list[MastraDBMessage] = seen["messages"]
    assert [m.id for m in messages] == ["m-1", "m-2", "m-3"]
    for mine, theirs in zip(messages, MESSAGES, strict=True):
        assert canonical_timestamp(mine.created_at) == theirs["createdAt"]  # to the millisecond
        assert (mine.thread_id, mine.resource_id, mine.role) == (
            theirs["threadId"],
            theirs["resourceId"],
            theirs["role"],
        )
        assert _content(mine) == theirs["content"]  # text, tool call and metadata, key for key
    call = messages[1].content.parts[1]
    assert call.type == "tool-invocation"
    assert call.tool_invocation.tool_call_id == "call_1"
    assert call.tool_invocation.result == {"temp": 20}
    assert seen["resource"].working_memory == WORKING_MEMORY
    assert seen["resource"].metadata == {"plan": "pro"}
    assert whole_schema(path) == schema  # this project's open and writes changed no table or index

    back = run_mastra(
        {
            "file": str(path),
            "read": {
                "threads": [RESOURCE],
                "messages": ["thread-a"],
                "workingMemory": [{"threadId": "thread-a", "resourceId": RESOURCE}],
            },
        },
        script=SCRIPT,
    )
    mastra_threads = {t["id"]: t for t in back["threads"][RESOURCE]}
    assert mastra_threads["thread-a"]["title"] == "Kyoto trip"
    assert mastra_threads["thread-a"]["metadata"] == {"topic": "weather", "n": 2}
    rows = back["messages"]["thread-a"]["rows"]
    assert [row["id"] for row in rows] == ["m-1", "m-2", "m-4"]
    assert rows[2]["createdAt"] == "2024-05-01T10:00:03.003Z"
    assert back["workingMemory"][RESOURCE] == WORKING_MEMORY + "\n- Likes: tea"
    assert whole_schema(path) == schema


def test_python_writes_mastra_reads(tmp_path: Path) -> None:
    path = tmp_path / "local.db"

    async def python_side() -> None:
        storage = LibSQLStorage(str(path))
        try:
            for thread in THREADS:
                await storage.save_thread(thread)
            await storage.save_messages(MESSAGES[:2])
            await storage.save_messages(MESSAGES[2:])
            await storage.update_resource(RESOURCE, working_memory=WORKING_MEMORY, metadata={"plan": "pro"})
        finally:
            await storage.close()

    asyncio.run(python_side())
    mine = memory_schema(path)

    # The tables this project creates on a new file are exactly Mastra's own.
    reference = tmp_path / "mastra.db"
    run_mastra({"file": str(reference)}, script=SCRIPT)
    assert mine == memory_schema(reference)

    back = run_mastra(
        {
            "file": str(path),
            "read": {
                "threads": [RESOURCE],
                "messages": ["thread-a", "thread-b"],
                "resources": [RESOURCE],
                "workingMemory": [{"threadId": "thread-a", "resourceId": RESOURCE}],
            },
        },
        script=SCRIPT,
    )
    threads = {t["id"]: t for t in back["threads"][RESOURCE]}
    assert set(threads) == {"thread-a", "thread-b"}
    assert threads["thread-a"]["metadata"] == {"topic": "weather", "n": 1}
    assert threads["thread-a"]["createdAt"] == T0
    # save_messages bumped updatedAt (docs/spec.md §4.5), as Mastra's saveMessages does.
    assert parse_timestamp(threads["thread-a"]["updatedAt"]) > parse_timestamp(T0)
    rows = back["messages"]["thread-a"]["rows"]
    assert [row["id"] for row in rows] == ["m-1", "m-2"]
    for row, written in zip(rows, MESSAGES[:2], strict=True):
        assert row["createdAt"] == written["createdAt"]
        assert row["content"] == written["content"]
        # [Δ] Mastra's listMessages returns rows without their "type" column (docs/spec.md §4.7).
        assert "type" not in row
    prompt = back["messages"]["thread-a"]["prompt"]
    calls = [
        part
        for m in prompt
        if m["role"] == "assistant"
        for part in m["content"]
        if part["type"] == "tool-call"
    ]
    assert [(c["toolCallId"], c["toolName"], c["input"]) for c in calls] == [
        ("call_1", "weather", {"city": "Kyoto"})
    ]
    results = [part for m in prompt if m["role"] == "tool" for part in m["content"]]
    assert [r["toolCallId"] for r in results] == ["call_1"]
    assert back["resources"][RESOURCE]["workingMemory"] == WORKING_MEMORY
    assert back["resources"][RESOURCE]["metadata"] == {"plan": "pro"}
    assert back["workingMemory"][RESOURCE] == WORKING_MEMORY
    # Mastra's init adds its other tables (workflows, traces, ...) to the file but leaves the memory
    # tables as this project created them.
    assert memory_schema(path) == mine


def test_a_resave_keeps_createdat_on_mastras_side_only(tmp_path: Path) -> None:
    """[Δ] docs/spec.md §4.7: Mastra's saveMessages of an existing id keeps the stored createdAt
    (``ON CONFLICT`` leaves it out), while save_messages here replaces the whole record (§4.5)."""
    path = tmp_path / "local.db"
    later = "2024-05-02T09:00:00.000Z"
    run_mastra(
        {"file": str(path), "write": {"threads": THREADS[:1], "messages": MESSAGES[:1]}}, script=SCRIPT
    )
    run_mastra(
        {"file": str(path), "write": {"messages": [{**MESSAGES[0], "createdAt": later}]}}, script=SCRIPT
    )

    async def python_side() -> list[str]:
        storage = LibSQLStorage(str(path))
        try:
            before = canonical_timestamp((await storage.list_messages_by_id(["m-1"]))[0].created_at)
            await storage.save_messages([{**MESSAGES[0], "createdAt": later}])
            after = canonical_timestamp((await storage.list_messages_by_id(["m-1"]))[0].created_at)
            return [before, after]
        finally:
            await storage.close()

    assert asyncio.run(python_side()) == [MESSAGES[0]["createdAt"], later]


def test_mastra_alters_a_file_in_this_projects_layout(tmp_path: Path) -> None:
    """[Δ] docs/spec.md §4.7: the guard protects this side only. Mastra's LibSQLStore, given a file in this
    project's embedded layout, changes its schema and then fails; this project's stores refuse such mixes
    before any write (tests/stores/test_sqlite_layout.py)."""
    path = tmp_path / "memory.db"

    async def python_side() -> None:
        storage = SQLiteStorage(str(path))
        await storage.save_thread({"id": "t1", "resource_id": RESOURCE})
        await storage.close()

    asyncio.run(python_side())
    before = memory_schema(path)
    with pytest.raises(AssertionError, match="createdAt"):  # run_mastra's report of Mastra's failure
        run_mastra({"file": str(path), "read": {"threads": [RESOURCE]}}, script=SCRIPT)
    assert memory_schema(path) != before
