"""Retention on ``Memory`` (docs/spec.md §5.11): Mastra's ``{maxAge, batchSize}`` policies and a bounded,
resumable ``prune()`` that removes the pruned messages' vectors (and a pruned thread's messages and
vectors) from every memory index — on the SQLite default."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from mastra_memory.errors import ConfigError, ValidationError
from mastra_memory.memory import Memory, UnsupportedOptionError
from mastra_memory.memory.retention import parse_duration
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector
from mastra_memory.timestamps import utc_now

from .memory_helpers import ids, msg, vectors_by_message

RECALL = {"last_messages": 10, "semantic_recall": {"top_k": 5, "message_range": 0, "scope": "resource"}}


def days_ago(days: float) -> object:
    return utc_now() - timedelta(days=days)


@pytest.fixture
async def memory(storage: SQLiteStorage, vector: SQLiteVector) -> AsyncIterator[Memory]:
    """Thread ``old`` (created 100 days ago) holds o1..o5 (40..36 days old); thread ``new`` (created now)
    holds n1 (40 days old: backdated) and n2 (1 day old). Everything is embedded."""
    mem = Memory(storage=storage, vector=vector, embedder="hash/64", options=RECALL)
    await mem.save_thread({"id": "old", "resource_id": "r", "title": "", "created_at": days_ago(100)})
    await mem.create_thread("r2", "new")
    await mem.save_messages(
        [msg(f"o{i}", "old", f"old note {i}", days_ago(41 - i)) for i in range(1, 6)]
        + [msg("n1", "new", "backdated note", days_ago(40)), msg("n2", "new", "fresh note", days_ago(1))]
    )
    yield mem
    await mem.close()


async def stored_ids(memory: Memory) -> list[str]:
    page = await memory.storage.list_messages(["old", "new"], per_page=False)
    return ids(page.messages)


async def test_prune_deletes_aged_messages_and_their_vectors(memory: Memory) -> None:
    results = await memory.prune({"messages": {"maxAge": "30d"}})
    assert [r.model_dump() for r in results] == [
        {"domain": "memory", "table": "mastra_messages", "deleted": 6, "done": True}
    ]
    assert await stored_ids(memory) == ["n2"]
    assert set(await vectors_by_message(memory.vector)) == {"n2"}
    # Nothing left to prune: a second call deletes nothing and is done.
    again = await memory.prune({"memory": {"messages": {"maxAge": 30 * 86_400_000}}})
    assert (again[0].deleted, again[0].done) == (0, True)


async def test_prune_is_bounded_and_resumable(memory: Memory) -> None:
    policy = {"messages": {"maxAge": "30d", "batchSize": 2}}
    first = await memory.prune(policy, max_batches=1)
    assert (first[0].deleted, first[0].done) == (2, False)
    second = await memory.prune(policy, max_rows=3)
    assert (second[0].deleted, second[0].done) == (3, False)
    third = await memory.prune(policy, pause_ms=1)
    assert (third[0].deleted, third[0].done) == (1, True)
    assert await stored_ids(memory) == ["n2"]
    assert set(await vectors_by_message(memory.vector)) == {"n2"}


async def test_prune_stops_on_the_signal(memory: Memory) -> None:
    stop = asyncio.Event()
    stop.set()
    results = await memory.prune({"messages": {"maxAge": "30d"}, "threads": {"maxAge": "30d"}}, signal=stop)
    assert [(r.table, r.deleted, r.done) for r in results] == [
        ("mastra_messages", 0, False),
        ("mastra_threads", 0, False),
    ]
    assert len(await stored_ids(memory)) == 7
    assert (await memory.prune({"messages": {"maxAge": "30d"}}, signal=threading.Event()))[0].deleted == 6


async def test_prune_threads_takes_their_messages_and_vectors(memory: Memory) -> None:
    results = await memory.prune({"threads": {"maxAge": "50d", "batchSize": 1}})
    assert [(r.table, r.deleted, r.done) for r in results] == [("mastra_threads", 1, True)]
    assert await memory.get_thread_by_id("old") is None
    assert await stored_ids(memory) == ["n1", "n2"]
    assert set(await vectors_by_message(memory.vector)) == {"n1", "n2"}


async def test_archived_threads_are_pruned_too(memory: Memory) -> None:
    await memory.archive_thread("old")
    results = await memory.prune({"threads": {"maxAge": "50d"}})
    assert results[0].deleted == 1
    assert await memory.get_thread_by_id("old") is None


async def test_no_policy_is_a_no_op(memory: Memory) -> None:
    assert await memory.prune() == []
    assert await memory.prune({}) == []
    assert len(await stored_ids(memory)) == 7


@pytest.mark.parametrize(
    ("value", "ms"),
    [
        (0, 0),
        (1500, 1500),
        ("30d", 30 * 86_400_000),
        ("1.5h", 5_400_000),
        ("2w", 14 * 86_400_000),
        ("10ms", 10),
    ],
)
def test_durations_read_as_mastra_reads_them(value: object, ms: int) -> None:
    assert parse_duration(value) == timedelta(milliseconds=ms)


@pytest.mark.parametrize(
    ("retention", "error"),
    [
        ({"messages": {"maxAge": "30 days"}}, ConfigError),
        ({"messages": {"maxAge": -1}}, ConfigError),
        ({"messages": {"maxAge": True}}, ConfigError),
        ({"messages": {"maxAge": float("nan")}}, ConfigError),
        ({"messages": {}}, ConfigError),
        ({"messages": {"maxAge": "1d", "batchSize": 0}}, ConfigError),
        ({"messages": {"maxAge": "1d", "batchSize": 1.5}}, ConfigError),
        ({"messages": {"maxAge": "1d", "limit": 3}}, ConfigError),
        ({"messages": "30d"}, ConfigError),
        ({"spans": {"maxAge": "1d"}}, ConfigError),
        ({"memory": {"messages": {"maxAge": "1d"}}, "observability": {}}, ConfigError),
        ({"resources": {"maxAge": "1d"}}, UnsupportedOptionError),
        (["messages"], ConfigError),
    ],
)
async def test_bad_retention_is_refused_before_any_io(
    memory: Memory, retention: object, error: type[Exception]
) -> None:
    with pytest.raises(error):
        await memory.prune(retention)  # type: ignore[arg-type]
    assert len(await stored_ids(memory)) == 7


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_batches": -1},
        {"max_rows": 1.5},
        {"pause_ms": -1},
        {"pause_ms": float("inf")},
        {"signal": "stop"},
    ],
)
async def test_bad_bounds_are_refused_before_any_io(memory: Memory, kwargs: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        await memory.prune({"messages": {"maxAge": 0}}, **kwargs)  # type: ignore[arg-type]
    assert len(await stored_ids(memory)) == 7
