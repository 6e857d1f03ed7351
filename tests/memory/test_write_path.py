"""docs/spec.md §5.4–§5.6: the single embedding write path, index naming, and the update/delete cascades."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.errors import (
    IndexDimensionMismatchError,
    IndexingError,
    ThreadNotFoundError,
    ThreadOwnershipError,
    ValidationError,
    VectorCleanupError,
)
from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import TABLE_PREFIX, SQLiteVector

from .memory_helpers import (
    SCENARIO_OPTIONS,
    FlakyEmbedder,
    ids,
    msg,
    records,
    seed,
    state,
    ts,
    vectors_by_message,
)

INDEX = "memory_messages_64"


@pytest.fixture
async def memory(storage: SQLiteStorage, vector: SQLiteVector) -> Memory:
    m = Memory(
        storage=storage, vector=vector, embedder="hash/64", options={"semanticRecall": {"scope": "thread"}}
    )
    await m.create_thread("r", "t", metadata={"projectId": "p1", "role": "spoofed", "_mastra_id": "x"})
    await m.create_thread("r", "u")
    await m.create_thread("s", "other")
    return m


async def vector_ids(memory: Memory, index: str = INDEX) -> list[str]:
    return [r.id for r in await records(memory.vector, index)]


# ----------------------------------------------------------------------------- what is embedded


async def test_system_and_signal_messages_are_not_persisted(memory: Memory) -> None:
    result = await memory.save_messages(
        [
            msg("s1", "t", "You are helpful", ts(1), role="system"),
            msg("g1", "t", "typing", ts(2), role="signal"),
            msg("u1", "t", "hello", ts(3)),
        ]
    )
    assert ids(result.messages) == ["u1"]
    assert ids((await memory.recall("t", per_page=False)).messages) == ["u1"]
    assert await vector_ids(memory) == ["u1"]


async def test_working_memory_markup_is_removed_before_storing(memory: Memory) -> None:
    tool_part = {
        "type": "tool-invocation",
        "toolInvocation": {
            "state": "result",
            "toolCallId": "c1",
            "toolName": "updateWorkingMemory",
            "args": {},
        },
    }
    result = await memory.save_messages(
        [
            msg(
                "w1",
                "t",
                "Noted.<working_memory># Name: Ada</working_memory> Anything else?",
                ts(1),
                role="assistant",
            ),
            msg("w2", "t", "<working_memory>only markup</working_memory>", ts(2), role="assistant"),
            {
                "id": "w3",
                "thread_id": "t",
                "role": "assistant",
                "created_at": ts(3),
                "content": {"format": 2, "parts": [tool_part, {"type": "text", "text": "Saved."}]},
            },
        ]
    )
    assert ids(result.messages) == ["w1", "w3"]
    stored = {m.id: m for m in (await memory.recall("t", per_page=False)).messages}
    assert stored["w1"].content.content == "Noted. Anything else?"
    assert [p.type for p in stored["w3"].content.parts] == ["text"]
    contents = {r.id: r.metadata["content"] for r in await records(memory.vector, INDEX)}
    assert contents == {"w1": "Noted. Anything else?", "w3": "Saved."}


async def test_text_extraction_and_roles(memory: Memory) -> None:
    call = {
        "type": "tool-invocation",
        "toolInvocation": {
            "state": "result",
            "toolCallId": "c",
            "toolName": "search",
            "args": {"q": "x"},
            "result": "r",
        },
    }
    await memory.save_messages(
        [
            {
                "id": "parts",
                "thread_id": "t",
                "role": "assistant",
                "created_at": ts(1),
                "content": {
                    "format": 2,
                    "parts": [
                        {"type": "text", "text": "line one"},
                        {"type": "text", "text": ""},
                        call,
                        {"type": "reasoning", "reasoning": "hmm"},
                        {"type": "text", "text": "line two"},
                    ],
                },
            },
            {
                "id": "shortcut",
                "thread_id": "t",
                "role": "user",
                "created_at": ts(2),
                "content": {
                    "format": 2,
                    "content": "the shortcut wins",
                    "parts": [{"type": "text", "text": "ignored"}],
                },
            },
            {
                "id": "tool_only",
                "thread_id": "t",
                "role": "assistant",
                "created_at": ts(3),
                "content": {"format": 2, "parts": [call]},
            },
            {
                "id": "blank",
                "thread_id": "t",
                "role": "user",
                "created_at": ts(4),
                "content": {"format": 2, "content": "   ", "parts": [{"type": "text", "text": "  \n "}]},
            },
        ]
    )
    contents = {r.id: r.metadata["content"] for r in await records(memory.vector, INDEX)}
    assert contents == {"parts": "line one\nline two", "shortcut": "the shortcut wins"}


async def test_vector_metadata_spreads_thread_metadata_under_the_fixed_keys(memory: Memory) -> None:
    await memory.save_messages([msg("m", "t", "hello", ts(7), role="assistant")])
    [rec] = await records(memory.vector, INDEX)
    assert rec.metadata == {
        "projectId": "p1",
        "role": "assistant",  # the fixed key wins over the thread's "role"
        "message_id": "m",
        "thread_id": "t",
        "resource_id": "r",
        "content": "hello",
        "created_at": "2024-01-01T00:00:07.000Z",
        "chunk_index": 0,
    }  # the adapter-reserved "_mastra_id" of the thread metadata is not spread


async def test_mastras_own_thread_bookkeeping_is_not_spread(memory: Memory) -> None:
    # Mastra's observational memory keeps its state under thread metadata "mastra" (metadata.mastra.om):
    # memory's bookkeeping, not the user's, like "memoryTokenLimiter" (docs/spec.md §5.4).
    await memory.create_thread(
        "r",
        "om",
        metadata={
            "projectId": "p2",
            "mastra": {"om": {"currentTask": "plan the trip"}},
            "memoryTokenLimiter": {"maxTokens": 10},
        },
    )
    await memory.save_messages([msg("m2", "om", "hello", ts(8))])
    [rec] = [r for r in await records(memory.vector, INDEX) if r.metadata["message_id"] == "m2"]
    assert rec.metadata["projectId"] == "p2"
    assert "mastra" not in rec.metadata
    assert "memoryTokenLimiter" not in rec.metadata


async def test_legacy_v1_messages_are_normalised_and_embedded(memory: Memory) -> None:
    await memory.save_messages(
        [
            {
                "id": "v1",
                "threadId": "t",
                "role": "user",
                "content": "plain string",
                "createdAt": ts(1),
                "type": "text",
            },
            {
                "id": "v1b",
                "thread_id": "t",
                "role": "assistant",
                "created_at": ts(2),
                "content": [{"type": "text", "text": "part list"}],
            },
        ]
    )
    contents = {r.id: r.metadata["content"] for r in await records(memory.vector, INDEX)}
    assert contents == {"v1": "plain string", "v1b": "part list"}


async def test_no_vectors_when_semantic_recall_is_off(storage: SQLiteStorage, vector: SQLiteVector) -> None:
    memory = Memory(storage=storage, vector=vector, embedder="hash/64")
    await memory.create_thread("r", "t")
    await memory.save_messages([msg("m", "t", "hello", ts(1))])
    assert await vector.list_indexes() == []
    await memory.save_messages([msg("n", "t", "again", ts(2))], thread_config={"semanticRecall": True})
    assert await vector_ids(memory) == ["n"]


# ----------------------------------------------------------------------------- re-saves and moves


async def test_resaving_a_shorter_message_drops_its_extra_chunks(memory: Memory) -> None:
    await memory.save_messages([msg("m", "t", " ".join(["word"] * 8000), ts(1))])
    assert await vector_ids(memory) == ["m", "m#1", "m#2"]
    await memory.save_messages([msg("m", "t", "short now", ts(1))])
    recs = await records(memory.vector, INDEX)
    assert [(r.id, r.metadata["content"]) for r in recs] == [("m", "short now")]


async def test_duplicate_id_moves_threads_and_reindexes(memory: Memory) -> None:
    await memory.save_messages([msg("m", "t", "hello", ts(1))])
    before = {t: await memory.get_thread_by_id(t) for t in ("t", "u")}
    await memory.save_messages([msg("m", "u", "hello", ts(1))])
    assert ids((await memory.recall("t", per_page=False)).messages) == []
    assert ids((await memory.recall("u", per_page=False)).messages) == ["m"]
    [rec] = await records(memory.vector, INDEX)
    assert (rec.id, rec.metadata["thread_id"], rec.metadata["resource_id"]) == ("m", "u", "r")
    assert "projectId" not in rec.metadata  # thread u has no metadata
    for tid in ("t", "u"):
        after = await memory.get_thread_by_id(tid)
        assert after is not None
        assert before[tid] is not None
        assert after.updated_at > before[tid].updated_at  # type: ignore[union-attr]
    hits = await memory.recall("u", vector_search_string="hello")
    assert [h.thread_id for h in hits.hits] == ["u"]
    assert (await memory.recall("t", vector_search_string="hello")).hits == []


async def test_moving_to_another_resource_is_refused_and_keeps_the_vectors(memory: Memory) -> None:
    await memory.save_messages([msg("m", "t", "hello", ts(1))])
    with pytest.raises(ThreadOwnershipError):  # docs/spec.md §4.5, ownership
        await memory.save_messages([msg("m", "other", "hello", ts(1))])
    [rec] = await records(memory.vector, INDEX)
    assert (rec.metadata["thread_id"], rec.metadata["resource_id"]) == ("t", "r")


# ----------------------------------------------------------------------------- update cascade


async def test_update_content_reembeds(memory: Memory) -> None:
    await memory.save_messages([msg("m", "t", "old text", ts(1)), msg("n", "t", "keep", ts(2))])
    updated = await memory.update_messages([{"id": "m", "content": "new text"}])
    assert [m.content.content for m in updated] == ["new text"]
    contents = {r.id: r.metadata["content"] for r in await records(memory.vector, INDEX)}
    assert contents == {"m": "new text", "n": "keep"}
    hits = (await memory.recall("t", vector_search_string="new text")).hits
    assert hits[0].message_id == "m"


async def test_update_move_reindexes_under_the_new_thread(memory: Memory) -> None:
    await memory.save_messages([msg("m", "t", "hello", ts(1))])
    await memory.update_messages([{"id": "m", "threadId": "u"}])
    [rec] = await records(memory.vector, INDEX)
    assert (rec.metadata["thread_id"], rec.metadata["resource_id"]) == ("u", "r")


async def test_update_created_at_refreshes_the_metadata(memory: Memory) -> None:
    await memory.save_messages([msg("m", "t", "hello", ts(1))])
    await memory.update_messages([{"id": "m", "createdAt": ts(30)}])
    [rec] = await records(memory.vector, INDEX)
    assert rec.metadata["created_at"] == "2024-01-01T00:00:30.000Z"


async def test_update_to_empty_text_or_system_role_removes_vectors(memory: Memory) -> None:
    await memory.save_messages([msg("m", "t", "hello", ts(1)), msg("n", "t", "world", ts(2))])
    await memory.update_messages([{"id": "m", "content": {"content": "", "parts": []}}])
    await memory.update_messages([{"id": "n", "role": "system"}])
    assert await vector_ids(memory) == []


async def test_update_without_semantic_recall_still_drops_stale_vectors(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    memory = Memory(storage=storage, vector=vector, embedder="hash/64")
    await memory.create_thread("r", "t")
    await memory.save_messages([msg("m", "t", "secret plan", ts(1))], thread_config={"semanticRecall": True})
    await memory.update_messages([{"id": "m", "content": "redacted"}])
    assert await vector_ids(memory) == []  # no stale "secret plan" vector is left behind


async def test_update_of_metadata_only_keeps_vectors(memory: Memory) -> None:
    await memory.save_messages([msg("m", "t", "hello", ts(1))])
    await memory.update_messages([{"id": "m", "type": "v2"}])
    assert await vector_ids(memory) == ["m"]


# ----------------------------------------------------------------------------- delete cascade


@pytest.mark.parametrize("form", [["m1", "m2"], [{"id": "m1"}, {"id": "m2"}]])
async def test_delete_messages_accepts_ids_and_dicts(memory: Memory, form: list[Any]) -> None:
    await memory.save_messages([msg(f"m{i}", "t", f"text {i}", ts(i)) for i in range(1, 4)])
    await memory.delete_messages(form)
    assert ids((await memory.recall("t", per_page=False)).messages) == ["m3"]
    assert await vector_ids(memory) == ["m3"]


@pytest.mark.parametrize("bare", ["m1", {"id": "m1"}, {"m1", "m2"}, None])
async def test_delete_messages_refuses_anything_but_a_list_before_io(memory: Memory, bare: Any) -> None:
    """Issue 26: Mastra's ``deleteMessages`` requires an array; a bare id is refused before any I/O."""
    await memory.save_messages([msg("m1", "t", "x", ts(1)), msg("m2", "t", "y", ts(2))])
    before = await state(memory)
    with pytest.raises(ValidationError, match="wrap a single id in a list") as info:
        await memory.delete_messages(bare)
    assert info.value.id == "MASTRA_MEMORY_DELETE_MESSAGES_INVALID_ARGS"
    assert await state(memory) == before
    await memory.delete_messages(("m1",))
    assert await vector_ids(memory) == ["m2"]


@pytest.mark.parametrize("bad", [[""], ["ok", "  "], [{"id": ""}], [{"nope": 1}], [None]])
async def test_delete_messages_rejects_blank_ids_before_io(memory: Memory, bad: list[Any]) -> None:
    await memory.save_messages([msg("ok", "t", "x", ts(1))])
    before = await state(memory)
    with pytest.raises(ValidationError, match="message id must be a non-empty string"):
        await memory.delete_messages(bad)
    assert await state(memory) == before


async def test_delete_many_messages_in_batches(memory: Memory) -> None:
    await memory.save_messages(
        [msg(f"m{i:03d}", "t", f"text {i}", ts(i % 60, minute=i // 60)) for i in range(250)]
    )
    await memory.delete_messages([f"m{i:03d}" for i in range(249)])
    assert await vector_ids(memory) == ["m249"]


async def test_delete_thread_removes_its_vectors_only(memory: Memory) -> None:
    await memory.save_messages(
        [msg("a", "t", "x", ts(1)), msg("b", "u", "y", ts(2)), msg("c", "t", "z", ts(3))]
    )
    await memory.delete_thread("t")
    assert await memory.get_thread_by_id("t") is None
    assert await vector_ids(memory) == ["b"]


async def test_deletes_clean_every_dimension_of_the_default_index(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    old = Memory(storage=storage, vector=vector, embedder="hash/64", options={"semanticRecall": True})
    await old.create_thread("r", "t")
    await old.create_thread("r", "gone")
    await old.save_messages([msg("m1", "t", "one", ts(1)), msg("g1", "gone", "two", ts(2))])
    new = Memory(storage=storage, vector=vector, embedder="hash/32", options={"semanticRecall": True})
    await new.save_messages([msg("m2", "t", "three", ts(3)), msg("g2", "gone", "four", ts(4))])
    assert await vector.list_indexes() == ["memory_messages_32", "memory_messages_64"]
    await new.delete_messages(["m1", "m2"])
    await new.delete_thread("gone")
    assert await vectors_by_message(vector) == {}
    assert (await vector.describe_index("memory_messages_32")).count == 0
    assert (await vector.describe_index("memory_messages_64")).count == 0


async def test_resave_after_an_embedder_switch_leaves_no_copy_in_the_old_index(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    old = Memory(storage=storage, vector=vector, embedder="hash/64", options={"semanticRecall": True})
    await old.create_thread("r", "t")
    await old.save_messages([msg("m", "t", "one", ts(1))])
    new = Memory(storage=storage, vector=vector, embedder="hash/32", options={"semanticRecall": True})
    await new.save_messages([msg("m", "t", "one, edited", ts(1))])
    assert await vectors_by_message(vector) == {"m": {"memory_messages_32"}}


async def test_reindex_with_another_embedder_keeps_the_first_embedders_index(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    """Issue 23 item 7: a reindex changes no text, so another embedder's vectors stay right and stay
    (docs/spec.md §5.6); before, reindexing with hash/32 emptied hash/64's index."""
    old = Memory(storage=storage, vector=vector, embedder="hash/64", options=SCENARIO_OPTIONS)
    await seed(old)
    new = Memory(storage=storage, vector=vector, embedder="hash/32", options=SCENARIO_OPTIONS)
    assert await new.reindex() == 5
    both = {"memory_messages_32", "memory_messages_64"}
    assert await vectors_by_message(vector) == {m: both for m in ("a1", "a2", "a3", "a4", "b1")}
    assert await new.reindex_thread("A1") == 3  # again: the target index is replaced, the other kept
    assert await vectors_by_message(vector) == {m: both for m in ("a1", "a2", "a3", "a4", "b1")}
    for memory in (old, new):
        result = await memory.recall("A2", resource_id="A", vector_search_string="alpha bananas")
        assert [h.message_id for h in result.hits] == ["a2"]


async def test_an_update_clears_every_embedders_vectors_of_the_message(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    """docs/spec.md §5.6: an update of the text leaves every other embedder's vectors of the message stale,
    so they go; the updating memory writes new ones in its own index only."""
    old = Memory(storage=storage, vector=vector, embedder="hash/64", options=SCENARIO_OPTIONS)
    await seed(old)
    new = Memory(storage=storage, vector=vector, embedder="hash/32", options=SCENARIO_OPTIONS)
    await new.reindex()
    await new.update_messages([{"id": "a2", "content": "alpha bananas, ripe"}])
    held = await vectors_by_message(vector)
    assert held["a2"] == {"memory_messages_32"}
    assert held["a1"] == {"memory_messages_32", "memory_messages_64"}  # only the updated message
    [a2] = [r for r in await records(vector, "memory_messages_32") if r.metadata["message_id"] == "a2"]
    assert a2.metadata["content"] == "alpha bananas, ripe"
    await new.update_messages([{"id": "a1", "type": "v2"}])  # changes no vector: every index keeps a1
    assert (await vectors_by_message(vector))["a1"] == {"memory_messages_32", "memory_messages_64"}


async def test_a_move_to_another_resource_clears_every_embedders_vectors(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    """A thread moved to another resource: vectors of another embedder would still name the old resource,
    so they go too (docs/spec.md §5.6); the moving memory re-indexes into its own index."""
    old = Memory(storage=storage, vector=vector, embedder="hash/64", options=SCENARIO_OPTIONS)
    await seed(old)
    new = Memory(storage=storage, vector=vector, embedder="hash/32", options=SCENARIO_OPTIONS)
    await new.reindex()
    await new.update_thread_resource_id("A1", "B", expected_resource_id="A")
    held = await vectors_by_message(vector)
    assert {m: held[m] for m in ("a1", "a2", "a3")} == {m: {"memory_messages_32"} for m in ("a1", "a2", "a3")}
    assert held["a4"] == {"memory_messages_32", "memory_messages_64"}
    moved = await records(vector, "memory_messages_32")
    assert {r.metadata["resource_id"] for r in moved if r.metadata["thread_id"] == "A1"} == {"B"}


async def test_delete_with_a_custom_index_name_cleans_only_that_index(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    unrelated = Memory(storage=storage, vector=vector, embedder="hash/64", options={"semanticRecall": True})
    custom = Memory(
        storage=storage,
        vector=vector,
        embedder="hash/64",
        options={"semanticRecall": {"indexName": "custom_idx"}},
    )
    await custom.create_thread("r", "t")
    await custom.save_messages([msg("m", "t", "one", ts(1))])
    await unrelated.save_messages([msg("m", "t", "one", ts(1))])
    assert await vectors_by_message(vector) == {"m": {"custom_idx", "memory_messages_64"}}
    await custom.delete_messages(["m"])
    assert await vectors_by_message(vector) == {"m": {"memory_messages_64"}}


# ----------------------------------------------------------------------------- dimensions and reindex


async def test_custom_index_with_another_dimension_raises_naming_both(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    options = {"lastMessages": 5, "semanticRecall": {"indexName": "custom_idx", "scope": "thread"}}
    first = Memory(storage=storage, vector=vector, embedder="hash/64", options=options)
    await first.create_thread("r", "t")
    await first.save_messages([msg("m1", "t", "hello", ts(1))])
    before = await state(first)
    second = Memory(storage=storage, vector=vector, embedder="hash/32", options=options)
    with pytest.raises(IndexDimensionMismatchError) as info:
        await second.recall("t", vector_search_string="hello")
    assert "custom_idx" in str(info.value)
    assert "64" in str(info.value)
    assert "32" in str(info.value)
    with pytest.raises(IndexingError) as saving:
        await second.save_messages([msg("m1", "t", "hello", ts(1))])  # re-saving an indexed message
    assert isinstance(saving.value.__cause__, IndexDimensionMismatchError)
    assert "64" in str(saving.value)
    assert "32" in str(saving.value)
    assert await state(first) == before  # m1's 64-dimensional vector was not deleted


async def test_reindex_after_a_failed_vector_write(storage: SQLiteStorage, vector: SQLiteVector) -> None:
    embedder = FlakyEmbedder(failures=1)
    memory = Memory(
        storage=storage, vector=vector, embedder=embedder, options={"semanticRecall": {"scope": "thread"}}
    )
    await memory.create_thread("r", "t")
    with pytest.raises(IndexingError, match="reindex_thread") as info:
        await memory.save_messages([msg("m1", "t", "hello", ts(1)), msg("m2", "t", "world", ts(2))])
    assert info.value.details == {"message_ids": ["m1", "m2"]}
    assert ids((await memory.recall("t", per_page=False)).messages) == ["m1", "m2"]  # stored
    assert await vector.list_indexes() == []  # but not indexed
    assert await memory.reindex_thread("t") == 2
    assert [r.id for r in await records(vector, "memory_messages_64")] == ["m1", "m2"]
    result = await memory.recall("t", vector_search_string="world")
    assert result.hits[0].message_id == "m2"


async def test_reindex_every_thread_or_one_resource(storage: SQLiteStorage, vector: SQLiteVector) -> None:
    embedder = FlakyEmbedder(failures=2)
    memory = Memory(storage=storage, vector=vector, embedder=embedder, options={"semanticRecall": True})
    await memory.create_thread("r", "t1")
    await memory.create_thread("s", "t2")
    for tid in ("t1", "t2"):
        with pytest.raises(IndexingError):
            await memory.save_messages([msg(f"m_{tid}", tid, f"text {tid}", ts(1))])
    assert await memory.reindex(resource_id="s") == 1
    assert [r.id for r in await records(vector, "memory_messages_64")] == ["m_t2"]
    assert await memory.reindex() == 2
    assert [r.id for r in await records(vector, "memory_messages_64")] == ["m_t1", "m_t2"]
    with pytest.raises(ValidationError):
        await memory.reindex(resource_id="")
    with pytest.raises(ThreadNotFoundError):
        await memory.reindex_thread("nope")


async def test_switching_embedders_with_a_new_index_name_and_reindex(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    old = Memory(storage=storage, vector=vector, embedder="hash/64", options=SCENARIO_OPTIONS)
    await seed(old)
    new_options = {
        **SCENARIO_OPTIONS,
        "semanticRecall": {**SCENARIO_OPTIONS["semanticRecall"], "indexName": "memory_v2"},
    }
    new = Memory(storage=storage, vector=vector, embedder="hash/48", options=new_options)
    assert await new.reindex() == 5
    assert [r.id for r in await records(vector, "memory_v2")] == ["a1", "a2", "a3", "a4", "b1"]
    assert (await vector.describe_index("memory_v2")).dimension == 48
    result = await new.recall("A2", resource_id="A", vector_search_string="alpha bananas")
    assert ids(result.messages) == ["a1", "a2", "a3", "a4"]
    assert result.index_name == "memory_v2"


# ----------------------------------------------------------------------------- atomic save and bad input


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (msg("x", "missing-thread", "bad", ts(9)), ThreadNotFoundError),
        (msg("x", "t", "bad", ts(9), resource_id="s"), ValidationError),  # thread t belongs to r
        (msg("x", "t", "bad", ts(9), resource_id=""), ValidationError),
        (msg("x", "t", "bad", ts(9), role="wizard"), ValidationError),
        (
            {"id": "x", "thread_id": "t", "role": "user", "content": "bad", "created_at": "not a date"},
            ValidationError,
        ),
        (msg("x", "", "bad", ts(9)), ValidationError),
        (msg("ok1", "t", "duplicate id in one call", ts(9)), ValidationError),
    ],
)
async def test_atomic_save_one_invalid_message_stores_and_indexes_nothing(
    memory: Memory, bad: dict[str, Any], error: type[Exception]
) -> None:
    await memory.save_messages([msg("old", "t", "already there", ts(1))])
    before = await state(memory)
    with pytest.raises(error):
        await memory.save_messages([msg("ok1", "t", "fine", ts(2)), bad, msg("ok2", "u", "fine too", ts(3))])
    assert await state(memory) == before


async def test_empty_save_is_a_no_op(memory: Memory) -> None:
    result = await memory.save_messages([])
    assert result.messages == []
    assert result.usage is None


async def test_an_index_deleted_behind_memorys_back_is_created_again(memory: Memory) -> None:
    await memory.save_messages([msg("m1", "t", "hello", ts(1))])
    await memory.vector.delete_index(INDEX)
    result = await memory.recall("t", vector_search_string="hello")
    assert result.hits == []  # the index is back, empty
    await memory.save_messages([msg("m2", "t", "hello again", ts(2))])
    assert await vector_ids(memory) == ["m2"]
    assert await memory.reindex_thread("t") == 2
    assert await vector_ids(memory) == ["m1", "m2"]


async def test_vector_cleanup_failure_raises_after_storage_changed(tmp_path: Path) -> None:
    """A broken vector table (dropped behind the store's back) makes cleanup fail: the call says so."""
    db = tmp_path / "memory.db"
    memory = Memory(storage=SQLiteStorage(str(db)), embedder="hash/64", options={"semanticRecall": True})
    await memory.create_thread("r", "t")
    await memory.save_messages([msg("m1", "t", "hello", ts(1)), msg("m2", "t", "world", ts(2))])
    await memory.vector.close()
    with sqlite3.connect(db) as conn:
        conn.execute(f'DROP TABLE "{TABLE_PREFIX}{INDEX}"')
    with pytest.raises(VectorCleanupError) as info:
        await memory.delete_messages(["m1"])
    assert info.value.details == {"index": INDEX, "message_ids": ["m1"]}
    assert "retry" in str(info.value)
    assert ids((await memory.recall("t", per_page=False)).messages) == ["m2"]  # storage was written first
    with pytest.raises(VectorCleanupError) as thread_info:
        await memory.delete_thread("t")
    assert thread_info.value.details == {"index": INDEX, "thread_id": "t"}
    assert await memory.get_thread_by_id("t") is None
    await memory.close()


async def test_deletes_without_any_vector_store_create_no_stray_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    memory = Memory(storage=SQLiteStorage(":memory:"))
    await memory.create_thread("r", "t")
    await memory.save_messages([msg("m", "t", "hello", ts(1))])
    await memory.update_messages([{"id": "m", "content": "changed"}])
    await memory.delete_messages(["m"])
    await memory.delete_thread("t")
    assert _files(tmp_path) == []


def _files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


async def test_deletes_clean_vectors_left_in_the_storage_file_by_an_earlier_instance(tmp_path: Path) -> None:
    db = str(tmp_path / "memory.db")
    writer = Memory(storage=SQLiteStorage(db), embedder="hash/64", options={"semanticRecall": True})
    await writer.create_thread("r", "t")
    await writer.save_messages([msg("m1", "t", "one", ts(1)), msg("m2", "t", "two", ts(2))])
    await writer.close()
    later = Memory(storage=SQLiteStorage(db))  # semantic recall off, no vector store given
    await later.delete_messages(["m1"])
    assert await vectors_by_message(later.vector) == {"m2": {INDEX}}
    await later.delete_thread("t")
    assert await vectors_by_message(later.vector) == {}
    await later.close()


async def test_concurrent_saves_and_recalls(memory: Memory) -> None:
    async def save(i: int) -> None:
        await memory.save_messages([msg(f"c{i:02d}", "t" if i % 2 else "u", f"concurrent note {i}", ts(i))])

    await asyncio.gather(*(save(i) for i in range(20)))
    results = await asyncio.gather(
        *(
            memory.recall("t", resource_id="r", vector_search_string=f"concurrent note {i}")
            for i in range(1, 20, 2)
        )
    )
    assert await vector_ids(memory) == [f"c{i:02d}" for i in range(20)]
    assert [r.hits[0].message_id for r in results] == [f"c{i:02d}" for i in range(1, 20, 2)]
