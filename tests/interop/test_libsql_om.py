"""Observational memory in one LibSQL file, two languages: ``@mastra/libsql``'s ``LibSQLStore`` and this
project's ``LibSQLStorage`` (issue 27; docs/spec.md §4.8), proved by running Mastra itself
(``mastra/libsql_om.mjs``, one Node process for the module).

* This project writes a thread's record through two generations (observations, a buffered chunk, a flag,
  a merged config, a reflection) and a resource's record; Mastra reads them back equal, newest first.
* Mastra writes its own thread's record the same way; this project reads it equal to what Mastra returns.
* The table this project creates in a new file is exactly the one Mastra creates (columns and index).
* [Δ] Mastra finds a thread's record under any resource id; this project only under the owner's.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.storage import ObservationalMemoryRecord
from mastra_memory.stores.libsql import LibSQLStorage
from mastra_memory.timestamps import parse_timestamp

from .mastra_runner import run_mastra

pytest.importorskip("libsql", reason="the libsql store needs the libsql extra")

SCRIPT = "libsql_om.mjs"
RESOURCE = "resource-om"
T0 = "2024-05-01T10:00:00.000Z"


def _json(record: ObservationalMemoryRecord | None) -> Any:
    """A record as Mastra's JSON has it: camelCase, ISO timestamps, absent fields left out."""
    if record is None:
        return None
    return _drop_none(record.model_dump(mode="json", by_alias=True))


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


async def _write_ours(path: Path) -> list[ObservationalMemoryRecord | list[ObservationalMemoryRecord]]:
    storage = LibSQLStorage(str(path))
    t0 = parse_timestamp(T0)
    record = await storage.initialize_observational_memory(
        {
            "threadId": "t-py",
            "resourceId": RESOURCE,
            "scope": "thread",
            "config": {"observation": {"messageTokens": 100}},
            "observedTimezone": "UTC",
        }
    )
    await storage.update_active_observations(
        {
            "id": record.id,
            "observations": "* python observed",
            "tokenCount": 4,
            "lastObservedAt": t0,
            "observedMessageIds": ["m1"],
        }
    )
    chunk = {
        "cycleId": "c1",
        "observations": "* buffered",
        "tokenCount": 2,
        "messageIds": ["m2"],
        "messageTokens": 50,
        "lastObservedAt": t0,
    }
    await storage.update_buffered_observations({"id": record.id, "chunk": chunk, "lastBufferedAtTime": t0})
    assert await storage.set_observing_flag(record.id, True)
    await storage.update_observational_memory_config(
        {"id": record.id, "config": {"observation": {"bufferTokens": 10}}}
    )
    current = await storage.get_observational_memory("t-py", RESOURCE)
    assert current is not None
    await storage.create_reflection_generation(
        {"currentRecord": current, "reflection": "* reflected", "tokenCount": 3}
    )
    await storage.initialize_observational_memory(
        {"threadId": None, "resourceId": RESOURCE, "scope": "resource", "config": {}}
    )
    ours = [
        await storage.get_observational_memory("t-py", RESOURCE),
        await storage.get_observational_memory_history("t-py", RESOURCE),
        await storage.get_observational_memory(None, RESOURCE),
    ]
    await storage.close()
    return ours


@pytest.fixture(scope="module")
def exchange(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("libsql-om")
    path, ours_new, mastras_new = root / "shared.db", root / "ours-new.db", root / "mastra-new.db"
    ours = asyncio.run(_write_ours(path))

    async def create_ours() -> None:
        storage = LibSQLStorage(str(ours_new))
        await storage.init()
        await storage.close()

    asyncio.run(create_ours())
    answer = run_mastra(
        {
            "file": str(path),
            "fresh": str(mastras_new),
            "read": [
                {"threadId": "t-py", "resourceId": RESOURCE},
                {"threadId": None, "resourceId": RESOURCE},
                {"threadId": "t-py", "resourceId": "someone-else"},
            ],
            "write": {"threadId": "t-mastra", "resourceId": RESOURCE, "t0": T0},
        },
        script=SCRIPT,
    )

    async def read_back() -> list[Any]:
        storage = LibSQLStorage(str(path))
        found = [
            await storage.get_observational_memory("t-mastra", RESOURCE),
            await storage.get_observational_memory_history("t-mastra", RESOURCE),
            await storage.get_observational_memory("t-mastra", "someone-else"),
        ]
        await storage.close()
        return found

    return {
        "ours": ours,
        "answer": answer,
        "theirs": asyncio.run(read_back()),
        "schemas": (ours_new, mastras_new),
    }


def test_mastra_reads_what_python_wrote(exchange: dict[str, Any]) -> None:
    current, history, resource = exchange["ours"]
    thread_read, resource_read, _ = exchange["answer"]["read"]
    assert _drop_none(thread_read["current"]) == _json(current)
    assert [_drop_none(r) for r in thread_read["history"]] == [_json(r) for r in history]
    assert [r["generationCount"] for r in thread_read["history"]] == [1, 0]
    previous = thread_read["history"][1]
    assert previous["isObserving"] is True
    assert previous["config"] == {"observation": {"messageTokens": 100, "bufferTokens": 10}}
    assert [c["cycleId"] for c in previous["bufferedObservationChunks"]] == ["c1"]
    assert _drop_none(resource_read["current"]) == _json(resource)


def test_python_reads_what_mastra_wrote(exchange: dict[str, Any]) -> None:
    current, history, _ = exchange["theirs"]
    written = exchange["answer"]["written"]
    assert _json(current) == _drop_none(written["current"])
    assert [_json(r) for r in history] == [_drop_none(r) for r in written["history"]]
    previous = history[1]
    assert (previous.active_observations, previous.total_tokens_observed, previous.is_observing) == (
        "* mastra observed",
        4,
        True,
    )
    assert previous.observed_message_ids == ["m1"]
    assert previous.last_buffered_at_time == parse_timestamp("2024-05-01T10:00:03.000Z")
    assert [c.cycle_id for c in previous.buffered_observation_chunks or []] == ["c1"]
    assert (current.generation_count, current.origin_type, current.active_observations) == (
        1,
        "reflection",
        "* mastra reflected",
    )


def test_the_table_is_mastras(exchange: dict[str, Any]) -> None:
    ours, theirs = exchange["schemas"]

    def schema(path: Path) -> list[Any]:
        with sqlite3.connect(path) as conn:
            return conn.execute(
                "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'mastra_observational_memory' "
                "ORDER BY name"
            ).fetchall()

    assert schema(ours) == schema(theirs)
    assert schema(ours), "the table exists"


def test_only_the_owner_reads_a_thread_record(exchange: dict[str, Any]) -> None:
    # [Δ] docs/spec.md §4.8: Mastra keys a thread's record by the thread alone.
    mastra_other = exchange["answer"]["read"][2]["current"]
    assert mastra_other is not None
    assert mastra_other["resourceId"] == RESOURCE
    assert exchange["theirs"][2] is None
