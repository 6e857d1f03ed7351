"""What the observational-memory interop modules share (test_libsql_om.py, test_pg_om.py, test_mongo_om.py):
the records this project writes, what it reads back of Mastra's, and the comparisons, against
``mastra/om_store.mjs`` (one Node process per module)."""

from __future__ import annotations

from typing import Any

from mastra_memory.storage import MemoryStorage, ObservationalMemoryRecord
from mastra_memory.timestamps import parse_timestamp

SCRIPT = "om_store.mjs"
RESOURCE = "resource-om"
T0 = "2024-05-01T10:00:00.000Z"

#: The keys Mastra reads (the third: another resource naming this project's thread).
READS = [
    {"threadId": "t-py", "resourceId": RESOURCE},
    {"threadId": None, "resourceId": RESOURCE},
    {"threadId": "t-py", "resourceId": "someone-else"},
]
WRITE = {"threadId": "t-mastra", "resourceId": RESOURCE, "t0": T0}


def as_json(record: ObservationalMemoryRecord | None) -> Any:
    """A record as Mastra's JSON has it: camelCase, ISO timestamps, absent fields left out."""
    return None if record is None else drop_none(record.model_dump(mode="json", by_alias=True))


def drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_none(v) for v in value]
    return value


async def write_ours(storage: MemoryStorage) -> list[Any]:
    """A thread's record through two generations and a resource's record; what this project reads back."""
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
    return [
        await storage.get_observational_memory("t-py", RESOURCE),
        await storage.get_observational_memory_history("t-py", RESOURCE),
        await storage.get_observational_memory(None, RESOURCE),
    ]


async def read_theirs(storage: MemoryStorage) -> list[Any]:
    """Mastra's thread record as this project reads it, and what another resource sees of it."""
    return [
        await storage.get_observational_memory("t-mastra", RESOURCE),
        await storage.get_observational_memory_history("t-mastra", RESOURCE),
        await storage.get_observational_memory("t-mastra", "someone-else"),
    ]


def check_mastra_reads_ours(ours: list[Any], answer: dict[str, Any]) -> None:
    current, history, resource = ours
    thread_read, resource_read, _ = answer["read"]
    assert drop_none(thread_read["current"]) == as_json(current)
    assert [drop_none(r) for r in thread_read["history"]] == [as_json(r) for r in history]
    assert [r["generationCount"] for r in thread_read["history"]] == [1, 0]
    previous = thread_read["history"][1]
    assert previous["isObserving"] is True
    assert previous["config"] == {"observation": {"messageTokens": 100, "bufferTokens": 10}}
    assert [c["cycleId"] for c in previous["bufferedObservationChunks"]] == ["c1"]
    assert drop_none(resource_read["current"]) == as_json(resource)


def check_we_read_mastras(theirs: list[Any], answer: dict[str, Any]) -> None:
    current, history, _ = theirs
    written = answer["written"]
    assert as_json(current) == drop_none(written["current"])
    assert [as_json(r) for r in history] == [drop_none(r) for r in written["history"]]
    previous = history[1]
    assert (previous.active_observations, previous.total_tokens_observed, previous.is_observing) == (
        "* mastra observed",
        4,
        True,
    )
    assert previous.observed_message_ids == ["m1"]
    if written.get("bufferedError") is None:
        assert previous.last_buffered_at_time == parse_timestamp("2024-05-01T10:00:03.000Z")
        assert [c.cycle_id for c in previous.buffered_observation_chunks or []] == ["c1"]
    else:
        # @mastra/mongodb's pipeline update, which FerretDB v1 refuses: Mastra buffered nothing there.
        assert "update.updates.u" in written["bufferedError"], written["bufferedError"]
    assert (current.generation_count, current.origin_type, current.active_observations) == (
        1,
        "reflection",
        "* mastra reflected",
    )


def check_only_the_owner_reads(theirs: list[Any], answer: dict[str, Any]) -> None:
    # [Δ] docs/spec.md §4.8: Mastra keys a thread's record by the thread alone.
    mastra_other = answer["read"][2]["current"]
    assert mastra_other is not None
    assert mastra_other["resourceId"] == RESOURCE
    assert theirs[2] is None
