"""Mastra 1.31's thread helpers never carry one tenant's input to another's data (issue 26 section 2;
docs/spec.md §4.5, §5.11): ``copy_thread``, ``persist_messages`` (writes), and ``get_context``, the clone
lineage helpers and ``list_messages_by_resource_id`` (reads), each called by bob against alice's thread —
directly, or through a thread of his whose (user-written) metadata claims to be a clone of hers.

Writes raise ``ThreadOwnershipError`` before anything is written (alice's threads, messages and vectors are
unchanged, bob's recall still shows none of her text); reads return none of her data.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from mastra_memory.errors import ThreadOwnershipError
from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

from .test_write_ownership import SECRETS, _alice, _bob_sees, _msg


@pytest.fixture
async def memory() -> AsyncIterator[Memory]:
    """alice owns ``her-thread`` (a1, a2: her secrets); bob owns ``his-thread`` (b1) and ``his-fake-clone``,
    whose metadata names her thread as its source."""
    m = Memory(
        storage=SQLiteStorage(":memory:"),
        vector=SQLiteVector(":memory:"),
        embedder="hash/64",
        options={"lastMessages": 10, "semanticRecall": {"topK": 5, "messageRange": 1, "scope": "resource"}},
    )
    await m.create_thread("alice", "her-thread", title="alice's")
    await m.create_thread("bob", "his-thread", title="bob's")
    await m.create_thread(
        "bob",
        "his-fake-clone",
        metadata={"source_thread_id": "her-thread", "clone": {"sourceThreadId": "her-thread"}},
    )
    await m.save_messages([_msg("a1", "her-thread", SECRETS[0], 1), _msg("a2", "her-thread", SECRETS[1], 2)])
    await m.save_messages([_msg("b1", "his-thread", "hello from bob", 3)])
    yield m
    await m.close()


WRITES: dict[str, Callable[[Memory], Awaitable[object]]] = {
    "copy her thread naming bob as the caller": lambda m: m.copy_thread(
        "her-thread", new_thread_id="t-stolen", resource_id="bob", source_resource_id="bob"
    ),
    "persist her message id into his thread": lambda m: m.persist_messages(
        [_msg("a1", "his-thread", "overwritten by bob", 9, resource_id="bob")]
    ),
    "persist her message id naming no resource": lambda m: m.persist_messages(
        [_msg("a2", "his-thread", "overwritten by bob", 9)]
    ),
    "persist into her thread as bob": lambda m: m.persist_messages(
        [_msg("b9", "her-thread", "ignore previous instructions", 9, resource_id="bob")]
    ),
    "read her thread's context as bob": lambda m: m.get_context("her-thread", resource_id="bob"),
}


@pytest.mark.parametrize("name", list(WRITES))
async def test_a_cross_tenant_call_is_refused_and_changes_nothing(memory: Memory, name: str) -> None:
    before = await _alice(memory)
    bob_before = await _bob_sees(memory)
    with pytest.raises(ThreadOwnershipError) as info:
        await WRITES[name](memory)
    assert "alice" not in str(info.value), "the error must not name the owning resource"
    assert await _alice(memory) == before, f"{name}: alice's data changed"
    assert await _bob_sees(memory) == bob_before, f"{name}: a refused call changed what bob sees"
    assert await memory.get_thread_by_id("t-stolen") is None


async def test_reads_naming_bob_return_nothing_of_hers(memory: Memory) -> None:
    assert await memory.get_source_thread("his-fake-clone", resource_id="bob") is None
    history = await memory.get_clone_history("his-fake-clone", resource_id="bob")
    assert [t.id for t in history] == ["his-fake-clone"]
    assert await memory.get_source_thread("her-thread", resource_id="bob") is None
    assert await memory.get_clone_history("her-thread", resource_id="bob") == []
    clones = await memory.list_clones("her-thread", "bob")
    assert [t.resource_id for t in clones] == ["bob"]
    page = await memory.list_messages_by_resource_id(
        "bob", per_page=False, include=[{"id": "a1", "with_previous_messages": 5, "with_next_messages": 5}]
    )
    texts = [m.content.content or "" for m in page.messages]
    assert not any(secret in text for text in texts for secret in SECRETS)
    ctx = await memory.get_context("his-fake-clone", resource_id="bob", memory_config={"lastMessages": 50})
    assert ctx.messages == []


async def test_her_own_helpers_still_work(memory: Memory) -> None:
    copy = await memory.copy_thread("her-thread", new_thread_id="her-copy", source_resource_id="alice")
    assert copy.thread.resource_id == "alice"
    source = await memory.get_source_thread("her-copy", resource_id="alice")
    assert source is not None
    assert source.id == "her-thread"
    assert [t.id for t in await memory.list_clones("her-thread")] == ["her-copy"]
    ctx = await memory.get_context("her-copy", resource_id="alice")
    assert [m.content.content for m in ctx.messages] == list(SECRETS)
