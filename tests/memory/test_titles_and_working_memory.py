"""docs/spec.md §5.8 and §5.9: working memory (configuration, read/write) and thread titles."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from mastra_memory.errors import ConfigError, ResourceScopeError, ThreadNotFoundError, ValidationError
from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

from .memory_helpers import msg, records, ts

# ----------------------------------------------------------------------------- titles


async def title_of(memory: Memory, thread_id: str) -> str:
    thread = await memory.get_thread_by_id(thread_id)
    assert thread is not None
    return thread.title


async def test_generate_title_without_a_model_is_inert_with_one_warning(
    storage: SQLiteStorage, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="mastra_memory.memory"):
        memory = Memory(storage=storage, options={"generateTitle": True})
        await memory.create_thread("r", "t")
        await memory.save_messages([msg("m1", "t", "hello", ts(1))])
        await memory.save_messages([msg("m2", "t", "again", ts(2))])
        await memory.flush()
    assert await title_of(memory, "t") == ""
    warnings = [r for r in caplog.records if "generate_title is enabled" in r.getMessage()]
    assert len(warnings) == 1


async def test_a_model_string_resolves_and_a_missing_key_never_fails_a_save(
    storage: SQLiteStorage, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A model-router string is a usable title model (docs/spec.md §5.13); without its key the title run
    # fails in the background: logged and counted, the message stored.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    memory = Memory(storage=storage, options={"generateTitle": {"model": "openai/gpt-4o-mini"}})
    await memory.create_thread("r", "t")
    with caplog.at_level(logging.ERROR, logger="mastra_memory.memory"):
        result = await memory.save_messages([msg("m1", "t", "hello", ts(1))])
        await memory.flush()
    assert [m.id for m in result.messages] == ["m1"]
    assert await title_of(memory, "t") == ""
    failed = [r for r in caplog.records if "title generation failed for thread t" in r.getMessage()]
    assert len(failed) == 1
    assert failed[0].exc_info is not None
    assert isinstance(failed[0].exc_info[1], ConfigError)
    assert "OPENAI_API_KEY" in str(failed[0].exc_info[1])
    assert (memory.title_usage.calls, memory.title_usage.failures) == (1, 1)


async def test_a_callable_model_sets_the_title(storage: SQLiteStorage) -> None:
    seen: list[tuple[Any, ...]] = []

    def model(*args: Any) -> str:
        seen.append(args)
        return "  Trip to Kyoto  "

    memory = Memory(
        storage=storage, options={"generateTitle": {"model": model, "instructions": "Five words max"}}
    )
    await memory.create_thread("r", "t")
    await memory.save_messages(
        [msg("m1", "t", "plan my trip to Kyoto", ts(1)), msg("m2", "t", "Sure!", ts(2), role="assistant")]
    )
    await memory.flush()
    assert await title_of(memory, "t") == "Trip to Kyoto"
    assert seen == [("User: plan my trip to Kyoto\nAssistant: Sure!", "Five words max")]
    await memory.save_messages([msg("m3", "t", "and Osaka", ts(3))])
    await memory.flush()
    assert len(seen) == 1  # a thread with a title is left alone


async def test_an_async_model_and_min_messages(storage: SQLiteStorage) -> None:
    calls: list[str] = []

    async def model(transcript: str) -> str:
        calls.append(transcript)
        await asyncio.sleep(0)
        return "Two questions"

    memory = Memory(storage=storage, options={"generateTitle": {"model": model, "minMessages": 2}})
    await memory.create_thread("r", "t")
    await memory.save_messages([msg("m1", "t", "first question", ts(1))])
    await memory.flush()
    assert await title_of(memory, "t") == ""
    await memory.save_messages([msg("m2", "t", "second question", ts(2))])
    await memory.flush()
    assert await title_of(memory, "t") == "Two questions"
    assert len(calls) == 1


async def test_a_failing_model_never_fails_a_save(
    storage: SQLiteStorage, caplog: pytest.LogCaptureFixture
) -> None:
    def model(transcript: str) -> str:
        raise RuntimeError("LLM down")

    memory = Memory(storage=storage, options={"generateTitle": {"model": model}})
    await memory.create_thread("r", "t")
    with caplog.at_level(logging.ERROR, logger="mastra_memory.memory"):
        result = await memory.save_messages([msg("m1", "t", "hello", ts(1))])
        await memory.flush()
    assert [m.id for m in result.messages] == ["m1"]
    assert await title_of(memory, "t") == ""
    assert any("title generation failed for thread t" in r.getMessage() for r in caplog.records)


async def test_threads_generate_title_refused_top_level_generates(storage: SQLiteStorage) -> None:
    # Mastra 1.31 throws on threads.generateTitle (moved to the top level); so does this project.
    with pytest.raises(ConfigError, match="has moved"):
        Memory(storage=storage, options={"threads": {"generateTitle": {"model": lambda t: "Old style"}}})
    memory = Memory(storage=storage, options={"generateTitle": {"model": lambda t: "Old style"}})
    await memory.create_thread("r", "t")
    await memory.save_messages([msg("m1", "t", "hello", ts(1))])
    await memory.flush()
    assert await title_of(memory, "t") == "Old style"


async def test_generate_title_per_call(storage: SQLiteStorage) -> None:
    memory = Memory(storage=storage)
    await memory.create_thread("r", "t")
    await memory.save_messages(
        [msg("m1", "t", "hello", ts(1))], thread_config={"generateTitle": {"model": lambda t: "Per call"}}
    )
    await memory.flush()
    assert await title_of(memory, "t") == "Per call"


# ----------------------------------------------------------------------------- working memory


async def test_working_memory_disabled_raises(storage: SQLiteStorage) -> None:
    memory = Memory(storage=storage)
    with pytest.raises(ConfigError, match="working memory is disabled"):
        await memory.get_working_memory("t", "r")
    with pytest.raises(ConfigError, match="working memory is disabled"):
        await memory.update_working_memory("t", "r", "text")


async def test_resource_scoped_working_memory(storage: SQLiteStorage) -> None:
    memory = Memory(storage=storage, options={"workingMemory": {"enabled": True}})
    assert await memory.get_working_memory("t", "r") is None
    await memory.update_working_memory("t", "r", "# User\n- Name: Ada")
    assert await memory.get_working_memory("another-thread", "r") == "# User\n- Name: Ada"
    resource = await memory.get_resource_by_id("r")
    assert resource is not None
    assert resource.working_memory == "# User\n- Name: Ada"
    with pytest.raises(ResourceScopeError):
        await memory.get_working_memory("t")
    with pytest.raises(ValidationError):
        await memory.update_working_memory("t", "", "x")
    with pytest.raises(ValidationError, match="must be a string"):
        await memory.update_working_memory("t", "r", None)  # type: ignore[arg-type]


async def test_concurrent_working_memory_updates_are_serialised(storage: SQLiteStorage) -> None:
    memory = Memory(storage=storage, options={"workingMemory": {"enabled": True}})
    await asyncio.gather(*(memory.update_working_memory("t", "r", f"v{i}") for i in range(10)))
    assert await memory.get_working_memory("t", "r") in {f"v{i}" for i in range(10)}


async def test_thread_scoped_working_memory_lives_in_thread_metadata(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    memory = Memory(
        storage=storage,
        vector=vector,
        embedder="hash/16",
        options={"workingMemory": {"enabled": True, "scope": "thread"}, "semanticRecall": True},
    )
    await memory.create_thread("r", "t", metadata={"projectId": "p"})
    with pytest.raises(ThreadNotFoundError):
        await memory.update_working_memory("missing", None, "x")
    await memory.update_working_memory("t", None, "# Notes")
    assert await memory.get_working_memory("t") == "# Notes"
    thread = await memory.get_thread_by_id("t")
    assert thread is not None
    assert thread.metadata == {"projectId": "p", "workingMemory": "# Notes"}
    await memory.save_messages([msg("m", "t", "hello <working_memory># Notes</working_memory>", ts(1))])
    [rec] = await records(vector, "memory_messages_16")
    assert rec.metadata["workingMemory"] == "# Notes"  # thread metadata is spread into vectors
    assert rec.metadata["content"] == "hello"  # but working-memory text is never embedded
