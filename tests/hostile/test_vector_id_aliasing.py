"""A message id can never name another tenant's vectors (issue 23, item 1; docs/spec.md §5.4).

Bob saves a message long enough for two chunks. Alice, another resource, saves messages whose ids are
``"<bob's id>#1"`` — once the vector id of bob's chunk 1, so her save overwrote his vector and her delete
removed it — and ``"<bob's id>#0"``. Then she does what a tenant does with her own messages: updates,
re-indexes, moves, clones, deletes them. Whatever she does, bob's two vectors are exactly as before and
his recall still finds the second part of his message; hers are hers. Real SQLite stores (the default),
``hash/64`` embeddings (equal texts give equal vectors, so a recall of bob's second chunk scores 1.0 only
through the vector of that chunk).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

INDEX = "memory_messages_64"
OPTIONS = {"lastMessages": 1, "semanticRecall": {"topK": 3, "messageRange": 0, "scope": "resource"}}
BOB = "bob-m1"
ALICE_IDS = [f"{BOB}#1", f"{BOB}#0"]
#: Two chunks of the default chunk size (16,384 characters): 15,000 characters, a space, 15,000 more.
SECOND_CHUNK = "omega" * 3_000
TWO_CHUNKS = "alpha" * 3_000 + " " + SECOND_CHUNK


@pytest.fixture
async def memory(tmp_path: Path) -> AsyncIterator[Memory]:
    """Bob's message of two chunks in thread ``tb``; alice's thread ``ta`` (both in one SQLite file)."""
    path = str(tmp_path / "memory.db")
    m = Memory(storage=SQLiteStorage(path), vector=SQLiteVector(path), embedder="hash/64", options=OPTIONS)
    await m.create_thread("bob", "tb")
    await m.create_thread("alice", "ta")
    await m.save_messages([{"id": BOB, "thread_id": "tb", "role": "user", "content": TWO_CHUNKS}])
    yield m
    await m.close()


async def _vectors_of(memory: Memory, message_ids: list[str]) -> dict[str, tuple[str, str, str]]:
    """Vector id -> (message id, resource id, chunk text) of every vector of these messages."""
    hits = await memory.vector.query(INDEX, None, top_k=100, filter={"message_id": {"$in": message_ids}})
    return {h.id: (h.metadata["message_id"], h.metadata["resource_id"], h.metadata["content"]) for h in hits}


async def _save(memory: Memory) -> None:
    await memory.save_messages(
        [{"id": rid, "thread_id": "ta", "role": "user", "content": "alice's note"} for rid in ALICE_IDS]
    )


async def _save_and_delete(memory: Memory) -> None:
    await _save(memory)
    await memory.delete_messages(ALICE_IDS)


async def _update(memory: Memory) -> None:
    await _save(memory)
    await memory.update_messages([{"id": rid, "content": "alice's edited note"} for rid in ALICE_IDS])


async def _reindex_thread(memory: Memory) -> None:
    await _save(memory)
    await memory.reindex_thread("ta")


async def _reindex_all(memory: Memory) -> None:
    await _save(memory)
    await memory.reindex()


async def _move(memory: Memory) -> None:
    await _save(memory)
    await memory.update_thread_resource_id("ta", "carol", expected_resource_id="alice")


async def _clone(memory: Memory) -> None:
    await _save(memory)
    await memory.clone_thread("ta", new_thread_id="ta-copy")


async def _delete_thread(memory: Memory) -> None:
    await _save(memory)
    await memory.delete_thread("ta")


ACTIONS: dict[str, Callable[[Memory], Awaitable[None]]] = {
    "save": _save,
    "save-then-delete": _save_and_delete,
    "update-messages": _update,
    "reindex-thread": _reindex_thread,
    "reindex": _reindex_all,
    "move-thread": _move,
    "clone-thread": _clone,
    "delete-thread": _delete_thread,
}


@pytest.mark.parametrize("action", list(ACTIONS))
async def test_another_tenants_message_ids_leave_bobs_vectors_alone(memory: Memory, action: str) -> None:
    before = await _vectors_of(memory, [BOB])
    assert sorted(before) == [BOB, f"{BOB}#1"]
    assert {v[1] for v in before.values()} == {"bob"}

    await ACTIONS[action](memory)

    assert await _vectors_of(memory, [BOB]) == before, f"alice's {action} changed bob's vectors"
    result = await memory.recall("tb", resource_id="bob", vector_search_string=SECOND_CHUNK)
    scores = {h.message_id: h.score for h in result.hits}
    assert scores.get(BOB, 0.0) > 0.99, f"bob's second chunk is not found after alice's {action}: {scores}"
    # Alice's messages have vectors of their own (one chunk each), never bob's.
    theirs = await _vectors_of(memory, ALICE_IDS)
    if action in ("save-then-delete", "delete-thread"):
        assert theirs == {}
    else:
        assert sorted(v[0] for v in theirs.values()) == sorted(ALICE_IDS)
        assert {v[1] for v in theirs.values()} == {"carol" if action == "move-thread" else "alice"}
        assert not set(theirs) & set(before)
    search = await memory.semantic_search_messages(SECOND_CHUNK, resource_id="alice")
    assert BOB not in {h.message.id for h in search.hits}
