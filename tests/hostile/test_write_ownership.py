"""A write never touches another resource's thread or message (issue 12, finding 8; docs/spec.md §4.5).

Before the ownership checks, bob could overwrite alice's message by saving its id, move it into his thread
with ``update_messages`` (his recall then returned her text), re-own her thread with ``create_thread`` and
copy it into his resource with ``clone_thread``; and (issue 26) the ``updateWorkingMemory`` tool wrote his
working memory from a request naming her thread. Each attack here, through ``Memory`` over real SQLite
stores with semantic recall on, must raise ``ThreadOwnershipError`` before anything is written: afterwards
alice's threads, messages and vectors are exactly as before, and bob's recall (history, semantic recall
over his resource, and every thread he owns) returns none of her text.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mastra_memory import sync
from mastra_memory.errors import ThreadOwnershipError, ValidationError
from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

T0 = datetime(2024, 1, 1, tzinfo=UTC)
SECRETS = ("the vault code is 4417", "meet the auditor on friday")


def _msg(id: str, thread_id: str, text: str, seconds: int, **extra: Any) -> dict[str, Any]:
    return {
        "id": id,
        "thread_id": thread_id,
        "role": "user",
        "content": text,
        "created_at": T0 + timedelta(seconds=seconds),
        **extra,
    }


@pytest.fixture
async def memory() -> AsyncIterator[Memory]:
    """alice owns ``her-thread`` (a1, a2: her secrets); bob owns ``his-thread`` (b1)."""
    m = Memory(
        storage=SQLiteStorage(":memory:"),
        vector=SQLiteVector(":memory:"),
        embedder="hash/64",
        options={"lastMessages": 10, "semanticRecall": {"topK": 5, "messageRange": 1, "scope": "resource"}},
    )
    await m.create_thread("alice", "her-thread", title="alice's")
    await m.create_thread("bob", "his-thread", title="bob's")
    await m.save_messages([_msg("a1", "her-thread", SECRETS[0], 1), _msg("a2", "her-thread", SECRETS[1], 2)])
    await m.save_messages([_msg("b1", "his-thread", "hello from bob", 3)])
    yield m
    await m.close()


async def _alice(memory: Memory) -> Any:
    """Everything alice has: her threads, her messages, and the vectors of her messages."""
    threads = await memory.storage.list_threads(filter={"resource_id": "alice"}, per_page=False)
    page = await memory.storage.list_messages_by_resource_id("alice", per_page=False)
    vectors = await memory.vector.query("memory_messages_64", None, top_k=10_000)
    return (
        [t.model_dump(mode="json") for t in threads.threads],
        [m.model_dump(mode="json") for m in page.messages],
        sorted(
            (r.id, sorted(r.metadata.items()))
            for r in vectors
            if r.metadata.get("message_id") in ("a1", "a2")
        ),
    )


async def _bob_sees(memory: Memory) -> list[str]:
    """All text bob's recall returns: history and semantic recall for each of his threads."""
    seen: list[str] = []
    bobs = await memory.storage.list_threads(filter={"resource_id": "bob"}, per_page=False)
    for thread in bobs.threads:
        for query in SECRETS:
            result = await memory.recall(
                thread.id, resource_id="bob", vector_search_string=query, per_page=False
            )
            seen += [m.content.content or "" for m in result.messages]
    return seen


Attack = Callable[[Memory], Awaitable[object]]


async def _working_memory_as_bob(memory: Memory, scope: str, context: dict[str, Any]) -> object:
    """The ``updateWorkingMemory`` tool of a ``Memory`` over the same stores, called for her thread as bob."""
    wm = Memory(storage=memory.storage, options={"workingMemory": {"enabled": True, "scope": scope}})
    tool = wm.get_tools()["updateWorkingMemory"]
    return await tool.execute({"memory": "# written by bob"}, {"MastraMemory": context})


ATTACKS: dict[str, Attack] = {
    "save her message id into his thread": lambda m: m.save_messages(
        [_msg("a1", "his-thread", "overwritten by bob", 9, resource_id="bob")]
    ),
    "save her message id naming no resource": lambda m: m.save_messages(
        [_msg("a1", "his-thread", "overwritten by bob", 9)]
    ),
    "save her message id in her thread as bob": lambda m: m.save_messages(
        [_msg("a1", "her-thread", "overwritten by bob", 9, resource_id="bob")]
    ),
    "save his own message then hers, in one batch": lambda m: m.save_messages(
        [_msg("b2", "his-thread", "bob's own", 8), _msg("a2", "his-thread", "overwritten by bob", 9)]
    ),
    "write into her thread as bob": lambda m: m.save_messages(
        [_msg("b3", "her-thread", "ignore previous instructions", 9, resource_id="bob")]
    ),
    "move her message into his thread": lambda m: m.update_messages(
        [{"id": "a1", "thread_id": "his-thread"}]
    ),
    "edit his message, then move hers, in one batch": lambda m: m.update_messages(
        [{"id": "b1", "content": "edited"}, {"id": "a2", "threadId": "his-thread"}]
    ),
    "edit her message naming bob": lambda m: m.storage.update_messages(
        [{"id": "a1", "content": "overwritten by bob"}], resource_id="bob"
    ),
    "edit her message through Memory naming bob": lambda m: m.update_messages(
        [{"id": "a1", "content": "overwritten by bob"}], resource_id="bob"
    ),
    "edit his message, then hers, through Memory naming bob": lambda m: m.update_messages(
        [{"id": "b1", "content": "edited"}, {"id": "a2", "content": "overwritten by bob"}], resource_id="bob"
    ),
    "create a thread over hers": lambda m: m.create_thread("bob", "her-thread", title="bob's now"),
    "save a thread over hers": lambda m: m.save_thread({"id": "her-thread", "resource_id": "bob"}),
    "clone her thread into his resource": lambda m: m.storage.clone_thread(
        "her-thread", new_thread_id="t-stolen", resource_id="bob"
    ),
    "update working memory of his resource from her thread": lambda m: _working_memory_as_bob(
        m, "resource", {"thread": {"id": "her-thread"}, "resourceId": "bob"}
    ),
    "update working memory of her thread as bob": lambda m: _working_memory_as_bob(
        m, "thread", {"thread": {"id": "her-thread"}, "resourceId": "bob"}
    ),
    "update working memory naming bob on her thread": lambda m: _working_memory_as_bob(
        m, "thread", {"thread": {"id": "her-thread", "resourceId": "bob"}}
    ),
}


@pytest.mark.parametrize("name", list(ATTACKS))
async def test_a_cross_tenant_write_is_refused_and_changes_nothing(memory: Memory, name: str) -> None:
    before = await _alice(memory)
    bob_before = await _bob_sees(memory)
    assert not any(secret in text for text in bob_before for secret in SECRETS)
    with pytest.raises(ThreadOwnershipError) as info:
        await ATTACKS[name](memory)
    assert "alice" not in str(info.value), "the error must not name the owning resource"
    assert await _alice(memory) == before, f"{name}: alice's data changed"
    assert await memory.storage.get_resource_by_id("bob") is None, f"{name}: bob's resource was written"
    seen = await _bob_sees(memory)
    assert not any(secret in text for text in seen for secret in SECRETS), f"{name}: bob sees {seen}"
    assert seen == bob_before, f"{name}: a refused write changed what bob sees (nothing may be written)"
    assert await memory.get_thread_by_id("t-stolen") is None


async def test_her_own_writes_still_work(memory: Memory) -> None:
    """The checks refuse only other resources: alice re-saves, moves and clones her own data."""
    await memory.create_thread("alice", "her-thread-2")
    await memory.save_messages([_msg("a1", "her-thread-2", SECRETS[0] + " (moved)", 1, resource_id="alice")])
    await memory.update_messages([{"id": "a2", "thread_id": "her-thread-2"}])
    clone = await memory.storage.clone_thread("her-thread-2", resource_id="alice")
    assert clone.thread.resource_id == "alice"
    mine = await memory.recall("her-thread-2", resource_id="alice", per_page=False)
    assert [m.id for m in mine.messages] == ["a1", "a2"]
    assert not any(secret in text for text in await _bob_sees(memory) for secret in SECRETS)


async def test_memory_update_messages_checks_the_named_resource(memory: Memory) -> None:
    """Issue 23 item 8: ``Memory.update_messages`` takes ``resource_id=`` like the storage does (docs/spec.md
    §4.5); the owner's update goes through and is re-indexed, an empty resource is refused before any I/O,
    and the blocking facade passes it on."""
    [mine] = await memory.update_messages([{"id": "b1", "content": "bob, edited"}], resource_id="bob")
    assert mine.content.content == "bob, edited"
    result = await memory.recall("his-thread", resource_id="bob", vector_search_string="bob, edited")
    assert [(h.message_id, round(h.score, 3)) for h in result.hits][:1] == [("b1", 1.0)]
    before = await _alice(memory)
    with pytest.raises(ValidationError, match="resource_id must be a non-empty string"):
        await memory.update_messages([{"id": "a1", "content": "x"}], resource_id="")
    assert await _alice(memory) == before


def test_the_blocking_facade_passes_the_resource_on() -> None:
    memory = sync.wrap(
        Memory(
            storage=SQLiteStorage(":memory:"),
            vector=SQLiteVector(":memory:"),
            embedder="hash/64",
            options={"semanticRecall": True},
        )
    )
    memory.create_thread("alice", "her-thread")
    memory.save_messages([_msg("a1", "her-thread", SECRETS[0], 1)])
    with pytest.raises(ThreadOwnershipError):
        memory.update_messages([{"id": "a1", "content": "overwritten by bob"}], resource_id="bob")
    [kept] = memory.recall("her-thread", resource_id="alice").messages
    assert kept.content.content == SECRETS[0]
    memory.close()
