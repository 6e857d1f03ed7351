"""Records for the ``migrate`` tests (docs/spec.md §4.7), shared by tests/stores and tests/interop: a storage
filled with every kind of record, every field of a storage as plain data, and a file's committed bytes."""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path
from typing import Any

from mastra_memory.storage import MemoryStorage
from mastra_memory.storage.migrate import read_everything

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


async def fill(storage: MemoryStorage) -> None:
    """Two resources' threads (one archived), messages with a tool call and metadata, working memory;
    thread ``updated_at`` set back after the saves, so a bump on conversion would show."""
    await storage.save_thread(
        {
            "id": "t1",
            "resource_id": "ada",
            "title": "Kyoto",
            "metadata": {"topic": "trip", "n": 1.5},
            "created_at": "2024-05-01T10:00:00.123Z",
        }
    )
    await storage.save_thread(
        {"id": "t2", "resource_id": "bob", "title": "", "created_at": "2024-05-02T00:00:00.001Z"}
    )
    await storage.save_messages(
        [
            {
                "id": "m1",
                "thread_id": "t1",
                "resource_id": "ada",
                "role": "user",
                "created_at": "2024-05-01T10:00:01.456Z",
                "content": "What's the weather in Kyoto?",
            },
            {
                "id": "m2",
                "thread_id": "t1",
                "resource_id": "ada",
                "role": "assistant",
                "created_at": "2024-05-01T10:00:02.789Z",
                "content": {
                    "format": 2,
                    "parts": [TOOL_PART, {"type": "text", "text": "20 degrees."}],
                    "metadata": {"source": "agent"},
                },
            },
            {
                "id": "m3",
                "thread_id": "t2",
                "resource_id": "bob",
                "role": "user",
                "created_at": "2024-05-02T00:00:01.000Z",
                "content": "hello",
            },
        ]
    )
    await storage.archive_thread("t2")
    for thread_id, updated in (("t1", "2024-05-01T11:00:00.999Z"), ("t2", "2024-05-03T00:00:00.010Z")):
        thread = await storage.get_thread_by_id(thread_id)
        assert thread is not None
        await storage._run_unit(
            "TEST",
            lambda tx, t=thread, u=updated: storage._write_thread(
                tx, t.model_copy(update={"updated_at": datetime.fromisoformat(u)})
            ),
            write=True,
        )
    await storage.update_resource("ada", working_memory="# User\n- Name: Ada", metadata={"plan": "pro"})
    await storage.update_resource("bob", working_memory="# User\n- Name: Bob")


async def snapshot(storage: MemoryStorage) -> dict[str, Any]:
    """Every record field of ``storage``, as plain data."""
    data = await read_everything(storage)
    return {
        "threads": sorted((t.model_dump(mode="json") for t in data.threads), key=lambda t: t["id"]),
        "messages": sorted((m.model_dump(mode="json") for m in data.messages), key=lambda m: m["id"]),
        "resources": sorted((r.model_dump(mode="json") for r in data.resources), key=lambda r: r["id"]),
    }


def file_bytes(path: Path) -> dict[str, str]:
    """The digest of the database file and of its WAL (the committed data); an empty WAL counts as none,
    since any reader of a WAL-mode file creates one (and its -shm index) on opening."""
    files = [path, path.with_name(path.name + "-wal")]
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in files if p.is_file() and p.stat().st_size
    }
