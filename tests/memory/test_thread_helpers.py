"""Mastra 1.31's thread helpers on ``Memory`` (docs/spec.md §5.11): ``copy_thread``, the clone lineage
helpers, ``get_context``, ``list_messages_by_resource_id`` and ``persist_messages`` — on the SQLite default,
with one resource's calls never reaching another's threads."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mastra_memory import sync
from mastra_memory.errors import ThreadOwnershipError, ValidationError
from mastra_memory.memory import Memory
from mastra_memory.memory.clones import CloneMetadata
from mastra_memory.storage import Thread
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

from .memory_helpers import ids, msg, ts, vectors_by_message

RECALL = {"last_messages": 2, "semantic_recall": {"top_k": 5, "message_range": 0, "scope": "resource"}}


@pytest.fixture
async def memory(storage: SQLiteStorage, vector: SQLiteVector) -> AsyncIterator[Memory]:
    """Alice owns t1 (three messages) and t2 (one); Bob owns b1 (one). Semantic recall on."""
    mem = Memory(storage=storage, vector=vector, embedder="hash/64", options=RECALL)
    await mem.create_thread("alice", "t1", title="Trip")
    await mem.create_thread("alice", "t2")
    await mem.create_thread("bob", "b1")
    await mem.save_messages(
        [
            msg("m1", "t1", "we fly to lisbon in may", ts(1)),
            msg("m2", "t1", "book the hotel", ts(2), role="assistant"),
            msg("m3", "t1", "pack sunscreen", ts(3)),
            msg("n1", "t2", "my cat likes tuna", ts(4)),
            msg("x1", "b1", "bob secret plan", ts(5)),
        ]
    )
    yield mem
    await mem.close()


# --- copy_thread ----------------------------------------------------------------------------------


async def test_copy_thread_returns_the_thread_and_id_map_but_no_messages(memory: Memory) -> None:
    copy = await memory.copy_thread("t1", new_thread_id="c1", message_limit=2)
    assert copy.thread.id == "c1"
    assert copy.thread.title == "Clone of Trip"
    assert list(copy.message_id_map) == ["m2", "m3"]
    assert not hasattr(copy, "messages")
    stored = (await memory.storage.list_messages("c1", per_page=False)).messages
    assert ids(stored) == list(copy.message_id_map.values())
    # Recallable at once, as a clone is: the copies were embedded under their new ids.
    indexed = await vectors_by_message(memory.vector)
    assert set(copy.message_id_map.values()) <= set(indexed)


async def test_copy_thread_refuses_a_source_of_another_resource(memory: Memory) -> None:
    with pytest.raises(ThreadOwnershipError):
        await memory.copy_thread("b1", source_resource_id="alice")
    assert (await memory.list_threads(filter={"resource_id": "alice"})).total == 2


# --- clone lineage ----------------------------------------------------------------------------------


async def test_clone_helpers_follow_the_lineage(memory: Memory) -> None:
    a = await memory.clone_thread("t1", new_thread_id="a")
    b = await memory.clone_thread("t1", new_thread_id="b")
    aa = await memory.clone_thread("a", new_thread_id="aa")
    original = await memory.get_thread_by_id("t1")
    assert not memory.is_clone(original)
    assert not memory.is_clone(None)
    assert memory.is_clone(a.thread)
    assert memory.is_clone(aa.thread)
    meta = memory.get_clone_metadata(aa.thread)
    assert meta is not None
    assert meta.source_thread_id == "a"
    assert isinstance(meta.cloned_at, str)
    assert meta.last_message_id == a.message_id_map["m3"]  # the last message copied, in a's ids
    source = await memory.get_source_thread("aa")
    assert source is not None
    assert source.id == "a"
    assert await memory.get_source_thread("t1") is None
    assert await memory.get_source_thread("missing") is None
    assert {t.id for t in await memory.list_clones("t1")} == {"a", "b"}
    assert [t.id for t in await memory.list_clones("a")] == ["aa"]
    assert await memory.list_clones("missing") == []
    assert [t.id for t in await memory.get_clone_history("aa")] == ["t1", "a", "aa"]
    assert [t.id for t in await memory.get_clone_history("t1")] == ["t1"]
    assert await memory.get_clone_history("missing") == []
    assert b.thread.id == "b"


async def test_clone_lineage_reads_mastras_nested_clone_metadata(memory: Memory) -> None:
    """A thread a Mastra app cloned over a shared database carries ``metadata.clone``."""
    await memory.create_thread(
        "alice",
        "m-clone",
        metadata={
            "clone": {"sourceThreadId": "t1", "clonedAt": "2024-01-01T00:00:00.000Z", "lastMessageId": "m3"}
        },
    )
    thread = await memory.get_thread_by_id("m-clone")
    assert memory.get_clone_metadata(thread) == CloneMetadata(
        source_thread_id="t1", cloned_at="2024-01-01T00:00:00.000Z", last_message_id="m3"
    )
    assert [t.id for t in await memory.get_clone_history("m-clone")] == ["t1", "m-clone"]
    assert [t.id for t in await memory.list_clones("t1")] == ["m-clone"]


async def test_clone_history_stops_at_a_cycle_in_written_metadata(memory: Memory) -> None:
    await memory.update_thread("t1", metadata={"source_thread_id": "t2"})
    await memory.update_thread("t2", metadata={"source_thread_id": "t1"})
    assert [t.id for t in await memory.get_clone_history("t1")] == ["t2", "t1"]


async def test_clone_helpers_never_cross_resources(memory: Memory) -> None:
    """Bob's clone of... his own thread named after Alice's: with ``resource_id`` nothing of Alice's
    comes back through the lineage (docs/spec.md §4.5)."""
    await memory.create_thread("bob", "b-fake", metadata={"source_thread_id": "t1"})
    assert await memory.get_source_thread("b-fake", resource_id="bob") is None
    assert [t.id for t in await memory.get_clone_history("b-fake", resource_id="bob")] == ["b-fake"]
    assert await memory.get_source_thread("t1", resource_id="bob") is None
    assert await memory.list_clones("t1", "bob") == [await memory.get_thread_by_id("b-fake")]
    assert await memory.list_clones("t1", "alice") == []


@pytest.mark.parametrize(
    ("call", "args"),
    [
        ("get_source_thread", ("",)),
        ("list_clones", ("  ",)),
        ("get_clone_history", (None,)),
        ("list_clones", ("t1", "")),
    ],
)
async def test_clone_helpers_refuse_bad_ids_before_io(
    memory: Memory, call: str, args: tuple[object, ...]
) -> None:
    with pytest.raises(ValidationError):
        await getattr(memory, call)(*args)


def test_get_clone_metadata_refuses_what_is_not_a_thread() -> None:
    memory = Memory(storage=SQLiteStorage(":memory:"))
    with pytest.raises(ValidationError):
        memory.get_clone_metadata({"metadata": {"source_thread_id": "x"}})  # type: ignore[arg-type]
    thread = Thread(id="t", resource_id="r", title="", metadata={"source_thread_id": "  "})
    assert not memory.is_clone(thread)


# --- get_context ----------------------------------------------------------------------------------


async def test_get_context_returns_the_newest_messages_oldest_first(memory: Memory) -> None:
    ctx = await memory.get_context("t1", resource_id="alice")
    assert ids(ctx.messages) == ["m2", "m3"]  # last_messages=2, no semantic recall
    assert ctx.system_message is None  # working memory off
    assert (ctx.has_observations, ctx.om_record, ctx.continuation_message, ctx.other_threads_context) == (
        False,
        None,
        None,
        None,
    )
    wider = await memory.get_context("t1", memory_config={"lastMessages": 10})
    assert ids(wider.messages) == ["m1", "m2", "m3"]
    off = await memory.get_context("t1", memory_config={"lastMessages": False})
    assert off.messages == []
    assert (await memory.get_context("missing")).messages == []


async def test_get_context_adds_the_working_memory_system_message(memory: Memory) -> None:
    cfg = {"workingMemory": {"enabled": True, "scope": "resource", "template": "# Facts\n- name:"}}
    await memory.update_resource("alice", working_memory="# Facts\n- name: Alice")
    ctx = await memory.get_context("t1", resource_id="alice", memory_config=cfg)
    assert ctx.system_message is not None
    assert "name: Alice" in ctx.system_message
    assert "updateWorkingMemory" in ctx.system_message
    read_only = await memory.get_context("t1", "alice", {**cfg, "readOnly": True})
    assert read_only.system_message is not None
    assert "updateWorkingMemory" not in read_only.system_message
    # Resource scope without a resource: nothing to show (as the WorkingMemory processor).
    assert (await memory.get_context("t1", memory_config=cfg)).system_message is None


async def test_get_context_refuses_a_thread_of_another_resource(memory: Memory) -> None:
    with pytest.raises(ThreadOwnershipError) as caught:
        await memory.get_context("b1", resource_id="alice")
    assert "bob" not in str(caught.value)
    with pytest.raises(ValidationError):
        await memory.get_context("t1", resource_id="")


# --- list_messages_by_resource_id -------------------------------------------------------------------


async def test_list_messages_by_resource_id_spans_the_resources_threads_only(memory: Memory) -> None:
    page = await memory.list_messages_by_resource_id("alice", per_page=False)
    assert ids(page.messages) == ["m1", "m2", "m3", "n1"]
    newest = await memory.list_messages_by_resource_id(
        "alice", per_page=2, order_by={"field": "createdAt", "direction": "DESC"}
    )
    assert (ids(newest.messages), newest.total, newest.has_more) == (["n1", "m3"], 4, True)
    # An include window naming Bob's message does not reach it.
    crossing = await memory.list_messages_by_resource_id("alice", per_page=0, include=[{"id": "x1"}])
    assert ids(crossing.messages) == []
    assert ids((await memory.list_messages_by_resource_id("bob")).messages) == ["x1"]
    with pytest.raises(ValidationError):
        await memory.list_messages_by_resource_id("")


# --- persist_messages -----------------------------------------------------------------------------


async def test_persist_messages_stores_without_embedding(memory: Memory) -> None:
    before = await vectors_by_message(memory.vector)
    stored = await memory.persist_messages(
        [
            msg("p1", "t2", "persisted but not embedded", ts(10)),
            {
                "id": "s1",
                "thread_id": "t2",
                "role": "system",
                "content": "never stored",
                "created_at": ts(11),
            },
        ]
    )
    assert ids(stored) == ["p1"]
    assert "p1" in ids((await memory.storage.list_messages("t2", per_page=False)).messages)
    assert "s1" not in ids((await memory.storage.list_messages("t2", per_page=False)).messages)
    assert await vectors_by_message(memory.vector) == before
    # Re-persisting an embedded id drops its (now stale) vectors; reindex_thread restores them.
    assert "n1" in before
    await memory.persist_messages([msg("n1", "t2", "my cat likes salmon now", ts(4))])
    assert "n1" not in await vectors_by_message(memory.vector)
    await memory.reindex_thread("t2")
    assert {"n1", "p1"} <= set(await vectors_by_message(memory.vector))


async def test_persist_messages_checks_ownership_and_input(memory: Memory) -> None:
    with pytest.raises(ThreadOwnershipError):
        await memory.persist_messages([msg("x1", "t1", "alice takes over bob's message", ts(9))])
    with pytest.raises(ThreadOwnershipError):
        await memory.persist_messages([msg("q1", "b1", "into bob's thread", ts(9), resource_id="alice")])
    with pytest.raises(ValidationError):
        await memory.persist_messages([msg("d", "t1", "a", ts(1)), msg("d", "t1", "b", ts(2))])
    assert await memory.persist_messages([]) == []
    assert ids((await memory.storage.list_messages("b1", per_page=False)).messages) == ["x1"]


# --- the sync facade ------------------------------------------------------------------------------


def test_helpers_through_the_sync_facade(tmp_path: Path) -> None:
    memory = sync.wrap(Memory(storage=SQLiteStorage(str(tmp_path / "m.db")), options={"lastMessages": 5}))
    memory.create_thread("r", "t", title="T")
    memory.persist_messages([msg("m1", "t", "hello", ts(1))])
    copy = memory.copy_thread("t", new_thread_id="c")
    assert memory.is_clone(copy.thread)
    assert [t.id for t in memory.get_clone_history("c")] == ["t", "c"]
    assert [t.id for t in memory.list_clones("t")] == ["c"]
    assert memory.get_source_thread("c").id == "t"
    assert ids(memory.get_context("c", "r").messages) == [copy.message_id_map["m1"]]
    assert len(memory.list_messages_by_resource_id("r", per_page=False).messages) == 2
    assert memory.prune({"messages": {"maxAge": 0}})[0].deleted == 2
    memory.close()


async def test_get_context_loads_history_under_the_token_budget(memory: Memory) -> None:
    """Mastra's ``messageHistory.maxTokens``: the newest messages that fit with the prompt's framing and the
    system message, ``lastMessages`` (when set: here the options' 2) capping the count; the boundary is
    only read."""
    budget = {"messageHistory": {"maxTokens": 100_000}}
    assert ids((await memory.get_context("t1", memory_config=budget)).messages) == ["m2", "m3"]
    everything = await memory.get_context("t1", memory_config={**budget, "lastMessages": 10})
    assert ids(everything.messages) == ["m1", "m2", "m3"]
    tight = await memory.get_context(
        "t1", memory_config={"lastMessages": 10, "messageHistory": {"maxTokens": 40}}
    )
    assert ids(tight.messages) == ids(everything.messages)[-len(tight.messages) :]
    assert len(tight.messages) < 3
    capped = await memory.get_context(
        "t1", memory_config={"lastMessages": 1, "messageHistory": {"maxTokens": 100_000}}
    )
    assert ids(capped.messages) == ["m3"]
    thread = await memory.get_thread_by_id("t1")
    assert thread is not None
    assert "memoryTokenLimiter" not in (thread.metadata or {})
    off = await memory.get_context("t1", memory_config={"messageHistory": {"maxTokens": 0}})
    assert off.messages == []
