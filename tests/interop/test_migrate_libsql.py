"""Mastra itself reads the LibSQL file ``migrate`` converted from this project's SQLite layout (docs/spec.md
§4.7; issue 25, item 4): threads with their ids, titles, metadata and both timestamps to the millisecond,
messages whose tool call reaches the agent's prompt, and each resource's working memory
(``mastra/migrate_read.mjs``, one Node process for the module)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.storage.migrate import migrate
from mastra_memory.stores.sqlite.storage import SQLiteStorage

from ..stores.migrate_records import fill, snapshot
from .mastra_runner import run_mastra

pytest.importorskip("libsql", reason="the libsql store needs the libsql extra")

from mastra_memory.stores.libsql import LibSQLStorage


def test_mastra_reads_the_converted_file(tmp_path: Path) -> None:
    async def convert() -> dict[str, Any]:
        source = SQLiteStorage(str(tmp_path / "memory.db"))
        target = LibSQLStorage(str(tmp_path / "local.db"))
        try:
            await fill(source)
            await migrate(source, target)
            return await snapshot(source)
        finally:
            await source.close()
            await target.close()

    expected = asyncio.run(convert())
    back = run_mastra(
        {
            "file": str(tmp_path / "local.db"),
            "resources": ["ada", "bob"],
            "threads": [{"threadId": "t1", "resourceId": "ada"}, {"threadId": "t2", "resourceId": "bob"}],
        },
        script="migrate_read.mjs",
    )
    threads = {t["id"]: t for resource in ("ada", "bob") for t in back["threads"][resource]}
    for thread in expected["threads"]:
        seen = threads[thread["id"]]
        assert (seen["resourceId"], seen["title"], seen["metadata"]) == (
            thread["resource_id"],
            thread["title"],
            thread["metadata"],
        )
        assert (seen["createdAt"], seen["updatedAt"]) == (thread["created_at"], thread["updated_at"])
    for thread_id in ("t1", "t2"):
        rows = back["messages"][thread_id]["rows"]
        mine = [m for m in expected["messages"] if m["thread_id"] == thread_id]
        assert [(r["id"], r["role"], r["createdAt"]) for r in rows] == [
            (m["id"], m["role"], m["created_at"]) for m in mine
        ]
    prompt = back["messages"]["t1"]["prompt"]
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
    assert [part["toolCallId"] for m in prompt if m["role"] == "tool" for part in m["content"]] == ["call_1"]
    for resource in expected["resources"]:
        assert back["resources"][resource["id"]]["workingMemory"] == resource["working_memory"]
        assert back["resources"][resource["id"]]["metadata"] == resource["metadata"]
        assert back["workingMemory"][resource["id"]] == resource["working_memory"]
