"""Thread operations of ``Memory`` on the SQLite default (docs/spec.md §5.11): clone, move to another
resource, archive, and ``settled()`` for background embedding — what is stored, what is recallable
afterwards, and that no resource sees another's messages."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from mastra_memory.embedders.base import EmbedResult
from mastra_memory.errors import (
    IndexingError,
    SettleTimeoutError,
    ThreadNotFoundError,
    ThreadOwnershipError,
    ValidationError,
)
from mastra_memory.memory import Memory
from mastra_memory.storage.archive import ARCHIVED_AT_KEY, ARCHIVED_KEY
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

from .memory_helpers import CountingEmbedder, all_records, ids, msg, ts

RECALL = {"last_messages": 0, "semantic_recall": {"top_k": 5, "message_range": 0, "scope": "resource"}}


@pytest.fixture
async def memory(storage: SQLiteStorage, vector: SQLiteVector) -> AsyncIterator[Memory]:
    """Alice owns t1 (three messages) and t2; Bob owns b1. Semantic recall on, resource scope."""
    mem = Memory(storage=storage, vector=vector, embedder="hash/64", options=RECALL)
    await mem.create_thread("alice", "t1", title="Trip", metadata={"topic": "travel"})
    await mem.create_thread("alice", "t2")
    await mem.create_thread("bob", "b1")
    await mem.save_messages(
        [
            msg("m1", "t1", "we fly to lisbon in may", ts(1)),
            msg("m2", "t1", "book the lisbon hotel near the river", ts(2), role="assistant"),
            msg("m3", "t1", "pack sunscreen for lisbon", ts(3)),
            msg("n1", "t2", "my cat likes tuna", ts(4)),
            msg("x1", "b1", "bob secret plan about lisbon", ts(5)),
        ]
    )
    yield mem
    await mem.close()


async def vector_meta(memory: Memory) -> dict[str, dict[str, Any]]:
    """Vector id → its metadata, over every index."""
    return {r.id: r.metadata for recs in (await all_records(memory.vector)).values() for r in recs}


async def recalled(memory: Memory, thread_id: str, resource_id: str, query: str) -> list[str]:
    result = await memory.recall(thread_id, resource_id=resource_id, vector_search_string=query)
    return ids(result.messages)


# --- clone ------------------------------------------------------------------------------------------


async def test_clone_copies_thread_and_messages_under_new_ids_and_makes_them_recallable(
    memory: Memory,
) -> None:
    clone = await memory.clone_thread("t1", new_thread_id="c1", metadata={"branch": "b"})
    assert (clone.thread.id, clone.thread.resource_id, clone.thread.title) == ("c1", "alice", "Clone of Trip")
    meta = clone.thread.metadata or {}
    assert (meta["source_thread_id"], meta["last_message_id"], meta["topic"], meta["branch"]) == (
        "t1",
        "m3",
        "travel",
        "b",
    )
    assert list(clone.message_id_map) == ["m1", "m2", "m3"]
    copies = list(clone.message_id_map.values())
    assert set(copies).isdisjoint({"m1", "m2", "m3"})
    stored = (await memory.storage.list_messages("c1", per_page=False)).messages
    assert ids(stored) == copies
    assert [m.content.content for m in stored] == [
        "we fly to lisbon in may",
        "book the lisbon hotel near the river",
        "pack sunscreen for lisbon",
    ]
    # The copies have vectors of their own, with the clone's thread and the thread metadata spread in.
    vectors = await vector_meta(memory)
    for original, copy in clone.message_id_map.items():
        assert vectors[copy]["thread_id"] == "c1"
        assert vectors[copy]["resource_id"] == "alice"
        assert vectors[copy]["message_id"] == copy
        assert vectors[copy]["branch"] == "b"
        assert vectors[original]["thread_id"] == "t1", "the source's vectors are untouched"
    # Thread-scoped recall of the clone finds the copy, never the source message.
    found = await memory.recall(
        "c1",
        vector_search_string="pack sunscreen for lisbon",
        thread_config={"semantic_recall": {"scope": "thread"}},
    )
    assert next(h.message_id for h in found.hits) == clone.message_id_map["m3"]
    assert {h.thread_id for h in found.hits} == {"c1"}
    assert ids((await memory.storage.list_messages("t1", per_page=False)).messages) == ["m1", "m2", "m3"]


async def test_clone_options_follow_mastra(memory: Memory) -> None:
    newest = await memory.clone_thread("t1", message_limit=2, title="short")
    assert (list(newest.message_id_map), newest.thread.title) == (["m2", "m3"], "short")
    picked = await memory.clone_thread("t1", message_filter={"message_ids": ["m3", "m1", "x1"]})
    assert list(picked.message_id_map) == ["m1", "m3"], "ids of other threads are not copied"
    ranged = await memory.clone_thread("t1", message_filter={"start_date": ts(2), "end_date": ts(3)})
    assert list(ranged.message_id_map) == ["m2", "m3"]
    both = await memory.clone_thread(
        "t1", message_filter={"startDate": ts(1), "endDate": ts(3)}, message_limit=1
    )
    assert list(both.message_id_map) == ["m3"], "the filter first, then the newest N"
    empty = await memory.clone_thread("t1", message_limit=0)
    assert (empty.messages, (empty.thread.metadata or {})["last_message_id"]) == ([], None)


async def test_clone_into_another_resource_is_recallable_there_only(memory: Memory) -> None:
    clone = await memory.clone_thread("t1", new_thread_id="for-carol", resource_id="carol")
    assert clone.thread.resource_id == "carol"
    assert {m.resource_id for m in clone.messages} == {"carol"}
    await memory.create_thread("carol", "carol-new")
    carol = await recalled(memory, "carol-new", "carol", "pack sunscreen for lisbon")
    assert clone.message_id_map["m3"] in carol
    assert set(carol) <= set(clone.message_id_map.values())
    alice = await recalled(memory, "t2", "alice", "pack sunscreen for lisbon")
    assert set(alice).isdisjoint(clone.message_id_map.values())


async def test_clone_refuses_a_source_of_another_resource_and_creates_nothing(memory: Memory) -> None:
    before = await vector_meta(memory)
    with pytest.raises(ThreadOwnershipError):
        await memory.clone_thread("b1", new_thread_id="stolen", source_resource_id="alice")
    assert await memory.get_thread_by_id("stolen") is None
    assert await vector_meta(memory) == before
    with pytest.raises(ThreadNotFoundError):
        await memory.clone_thread("missing")
    with pytest.raises(ValidationError):
        await memory.clone_thread("t1", resource_id="")
    with pytest.raises(ValidationError):
        await memory.clone_thread("t1", message_limit=-1)


async def test_clone_without_recall_writes_no_vectors(storage: SQLiteStorage, vector: SQLiteVector) -> None:
    mem = Memory(storage=storage, vector=vector, embedder="hash/64")
    await mem.create_thread("alice", "t1")
    await mem.save_messages([msg("m1", "t1", "hello", ts(1))])
    clone = await mem.clone_thread("t1")
    assert len(clone.messages) == 1
    assert await vector.list_indexes() == []
    await mem.close()


# --- move to another resource ---------------------------------------------------------------------


async def test_move_hands_thread_messages_and_vectors_to_the_new_resource(memory: Memory) -> None:
    query = "pack sunscreen for lisbon"
    assert "m3" in await recalled(memory, "t2", "alice", query)
    await memory.create_thread("carol", "c-home")
    assert "m3" not in await recalled(memory, "c-home", "carol", query)

    moved = await memory.update_thread_resource_id("t1", "carol", expected_resource_id="alice")
    assert (moved.id, moved.resource_id) == ("t1", "carol")
    stored = (await memory.storage.list_messages("t1", per_page=False)).messages
    assert {m.resource_id for m in stored} == {"carol"}
    assert await memory.get_thread_by_id("t1", resource_id="alice") is None
    vectors = await vector_meta(memory)
    assert {vectors[i]["resource_id"] for i in ("m1", "m2", "m3")} == {"carol"}
    # Tenant isolation: the old resource's recall and search no longer see them; the new one's do.
    assert set(await recalled(memory, "t2", "alice", query)).isdisjoint({"m1", "m2", "m3"})
    assert "m3" in await recalled(memory, "c-home", "carol", query)
    alice_hits = (await memory.semantic_search_messages(query, resource_id="alice")).messages
    assert alice_hits
    assert all(m.thread_id != "t1" for m in alice_hits)
    assert "m3" in ids((await memory.semantic_search_messages(query, resource_id="carol")).messages)
    threads = await memory.list_threads(filter={"resource_id": "alice"})
    assert [t.id for t in threads.threads] == ["t2"]


async def test_move_checks_the_callers_resource_and_changes_nothing_when_refused(memory: Memory) -> None:
    before = await vector_meta(memory)
    with pytest.raises(ThreadOwnershipError):
        await memory.update_thread_resource_id("b1", "alice", expected_resource_id="alice")
    thread = await memory.get_thread_by_id("b1")
    assert thread is not None
    assert thread.resource_id == "bob"
    assert {m.resource_id for m in (await memory.storage.list_messages("b1")).messages} == {"bob"}
    assert await vector_meta(memory) == before
    with pytest.raises(ThreadNotFoundError):
        await memory.update_thread_resource_id("missing", "alice")
    with pytest.raises(ValidationError):
        await memory.update_thread_resource_id("t1", "")
    same = await memory.update_thread_resource_id("t1", "alice")
    assert same.resource_id == "alice"
    assert await vector_meta(memory) == before, "a no-op move leaves the vectors alone"


async def test_move_without_recall_drops_the_stale_vectors(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    mem = Memory(storage=storage, vector=vector, embedder="hash/64")
    await mem.create_thread("alice", "t1")
    # Recall on for this save only: vectors exist although the instance has recall off.
    await mem.save_messages([msg("m1", "t1", "hello lisbon", ts(1))], thread_config=RECALL)
    assert "m1" in await vector_meta(mem)
    await mem.update_thread_resource_id("t1", "carol")
    assert await vector_meta(mem) == {}, "no vector may keep the old resource_id"
    await mem.reindex_thread("t1", thread_config=RECALL)
    assert (await vector_meta(mem))["m1"]["resource_id"] == "carol"
    await mem.close()


# --- archive ----------------------------------------------------------------------------------------


async def test_archived_threads_are_hidden_from_listings_until_asked_for(memory: Memory) -> None:
    for n in range(5):
        await memory.create_thread("alice", f"z{n}")
    archived = await memory.archive_thread("z1", resource_id="alice")
    assert (archived.metadata or {})[ARCHIVED_KEY] is True
    assert ARCHIVED_AT_KEY in (archived.metadata or {})
    await memory.archive_thread("z3")
    again = await memory.archive_thread("z3")
    assert again.metadata == (await memory.get_thread_by_id("z3")).metadata  # type: ignore[union-attr]

    flt = {"resource_id": "alice"}
    everything = await memory.list_threads(filter=flt, per_page=False, include_archived=True)
    visible = [t.id for t in everything.threads if t.id not in ("z1", "z3")]
    listed = await memory.list_threads(filter=flt, per_page=False)
    assert ([t.id for t in listed.threads], listed.total) == (visible, len(visible))
    # Paging skips archived threads wherever they fall.
    pages = [await memory.list_threads(filter=flt, per_page=2, page=p) for p in range(3)]
    assert [t.id for page in pages for t in page.threads] == visible
    assert [p.has_more for p in pages] == [True, True, False]
    assert {p.total for p in pages} == {len(visible)}
    by_meta = await memory.list_threads(filter={"metadata": {ARCHIVED_KEY: True}}, include_archived=True)
    assert sorted(t.id for t in by_meta.threads) == ["z1", "z3"]
    assert (await memory.list_threads(filter={"metadata": {ARCHIVED_KEY: True}})).threads == []

    restored = await memory.unarchive_thread("z1")
    assert restored.metadata is None or ARCHIVED_KEY not in restored.metadata
    assert "z1" in [t.id for t in (await memory.list_threads(filter=flt, per_page=False)).threads]
    with pytest.raises(ThreadOwnershipError):
        await memory.archive_thread("b1", resource_id="alice")
    with pytest.raises(ThreadNotFoundError):
        await memory.archive_thread("missing")


async def test_archived_threads_stay_recallable_in_resource_scope(memory: Memory) -> None:
    """The documented choice (docs/spec.md §5.11): archiving hides a thread from listings, not from
    memory; delete_thread is what forgets it."""
    await memory.archive_thread("t1")
    assert "m3" in await recalled(memory, "t2", "alice", "pack sunscreen for lisbon")
    assert "m3" in ids(
        (await memory.semantic_search_messages("pack sunscreen", resource_id="alice")).messages
    )
    await memory.delete_thread("t1")
    assert "m3" not in await recalled(memory, "t2", "alice", "pack sunscreen for lisbon")


async def test_reindex_covers_archived_threads(memory: Memory) -> None:
    await memory.archive_thread("t1")
    assert int(await memory.reindex(resource_id="alice")) == 4


# --- settled() and background embedding -------------------------------------------------------------


class GatedEmbedder(CountingEmbedder):
    """A provider that answers only once ``gate`` is set (a slow network call)."""

    def __init__(self) -> None:
        super().__init__(64, "gated/64")
        self.gate = asyncio.Event()

    async def embed_many(self, texts: Sequence[str], **options: Any) -> EmbedResult:
        await self.gate.wait()
        return await super().embed_many(texts, **options)


async def test_settled_waits_for_background_embedding(storage: SQLiteStorage, vector: SQLiteVector) -> None:
    embedder = GatedEmbedder()
    mem = Memory(storage=storage, vector=vector, embedder=embedder, options=RECALL)
    await mem.create_thread("alice", "t1")
    await mem.create_thread("alice", "t2")
    saved = await mem.save_messages([msg("m1", "t1", "the lisbon flight", ts(1))], background=True)
    assert ids(saved.messages) == ["m1"]
    assert saved.usage is None
    assert ids((await storage.list_messages("t1")).messages) == ["m1"], "stored before settled()"
    with pytest.raises(SettleTimeoutError) as info:
        await mem.settled(timeout=0.05)
    assert info.value.details["pending"] == 1
    embedder.gate.set()  # the provider answers: the task was not cancelled by the timeout
    await mem.settled(timeout=30)
    assert "m1" in await recalled(mem, "t2", "alice", "the lisbon flight")
    await mem.settled()  # nothing pending: returns at once
    await mem.close()


async def test_a_failed_background_embedding_is_raised_by_settled_once(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    class Failing(CountingEmbedder):
        async def embed_many(self, texts: Sequence[str], **options: Any) -> EmbedResult:
            raise ConnectionError("provider unavailable (503)")

    mem = Memory(storage=storage, vector=vector, embedder=Failing(64, "failing/64"), options=RECALL)
    await mem.create_thread("alice", "t1")
    await mem.save_messages([msg("m1", "t1", "hello", ts(1))], background=True)
    with pytest.raises(IndexingError) as info:
        await mem.settled(timeout=30)
    assert info.value.details["message_ids"] == ["m1"]
    await mem.settled()  # reported once
    assert ids((await storage.list_messages("t1")).messages) == ["m1"], "the message stays stored"
    await mem.close()


async def test_a_delete_waits_for_the_pending_embed_so_no_vector_is_orphaned(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    embedder = GatedEmbedder()
    mem = Memory(storage=storage, vector=vector, embedder=embedder, options=RECALL)
    await mem.create_thread("alice", "t1")
    await mem.save_messages([msg("m1", "t1", "forget me", ts(1))], background=True)
    deleting = asyncio.create_task(mem.delete_messages(["m1"]))
    await asyncio.sleep(0.05)
    assert not deleting.done(), "the delete waits for the pending embed"
    embedder.gate.set()
    await asyncio.wait_for(deleting, 30)
    await mem.settled(timeout=30)
    assert "m1" not in await vector_meta(mem)
    await mem.close()


async def test_settled_refuses_a_bad_timeout(memory: Memory) -> None:
    for bad in (-1, "5", True, float("nan")):
        with pytest.raises(ValidationError):
            await memory.settled(timeout=bad)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        await memory.save_messages([msg("q", "t1", "x", ts(9))], background="yes")  # type: ignore[arg-type]
