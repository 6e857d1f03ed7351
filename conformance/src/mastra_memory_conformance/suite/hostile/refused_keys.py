"""Metadata keys a store refuses (issue 23; docs/spec.md §3.3, §3.6, §5.4): refused by the shared
validation before any backend hook runs, and through ``Memory`` before any message or thread depends on
them; a store that holds them returns them as written.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Final

import pytest

from mastra_memory.errors import ValidationError

from ...plugin import set_item
from .. import IndexUnderTest, declares
from ..errors import HookCounter
from .base import (
    HostileSuiteBase,
    MemoryBackend,
    check_typed,
    raised_by,
    seed_vectors,
    thread_scope,
    vec,
    vector_metadata,
    vector_state,
)

__all__ = ["RefusedKeysSuite"]

#: Metadata keys some stores cannot hold (issue 23): MongoDB refuses field names with a leading ``$`` or a
#: ``.`` (``mongodb-field-names``), Pinecone dotted keys (``dotted-keys-rejected``); other stores hold them.
_REFUSABLE_KEYS: Final = ("$where", "$expr", "$", "a.b", "x.$gt")


@pytest.mark.asyncio
class RefusedKeysSuite(HostileSuiteBase):
    """Metadata keys a store refuses (a part of ``HostileInputSuite``)."""

    @pytest.mark.parametrize("key", _REFUSABLE_KEYS)
    async def test_metadata_keys_a_store_refuses_are_refused_before_any_io(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest, key: str
    ) -> None:
        """docs/spec.md §3.3, §3.6: a metadata key the store cannot hold (MongoDB: a leading ``$`` or a
        ``.``; Pinecone: a ``.``) is refused by the shared validation, at the top level and nested: a
        ValidationError ``…_INVALID_METADATA`` before any backend hook runs, nothing changed, and
        ``update_vector`` refuses it too. A store that holds the key returns it as written. (MongoDB and
        Pinecone checked these rules inside their write hooks, after ``Memory``'s check: issue 23.)"""
        set_item(request, f"metadata key {key!r}")
        dim = idx.dimension
        before = await seed_vectors(idx)
        for label, metadata in (
            (f"{key!r}", {"n": 9, key: 1}),
            (f"nested {key!r}", {"n": 9, "deep": {key: "v"}}),
        ):
            with HookCounter(idx.store) as counter:
                error = await raised_by(
                    partial(idx.store.upsert, idx.name, [vec(dim, seed=9)], [metadata], ["k9"])
                )
                calls = dict(counter.calls)
            if error is None:  # the store holds the key: it comes back as written
                await idx.settle()
                hits = await idx.store.query(idx.name, vec(dim, seed=9), top_k=idx.limit(10), filter={"n": 9})
                assert [(h.id, h.metadata) for h in hits if h.id == "k9"] == [("k9", metadata)], (
                    f"{label}: written {metadata}, read {[(h.id, h.metadata) for h in hits]}"
                )
                await idx.store.delete_vector(idx.name, "k9")
                continue
            check_typed(error, "VECTOR", idx.capabilities.name, "UPSERT", "INVALID_METADATA", label)
            assert not calls, f"{label}: refused only after backend hooks ran: {calls}"
            with HookCounter(idx.store) as counter:
                error = await raised_by(
                    partial(idx.store.update_vector, idx.name, id="v0", update={"metadata": metadata})
                )
                calls = dict(counter.calls)
            assert error is not None, f"update_vector stored {label}, which upsert refuses"
            check_typed(error, "VECTOR", idx.capabilities.name, "UPDATE_VECTOR", "INVALID_METADATA", label)
            assert not calls, f"update_vector of {label}: refused only after backend hooks ran: {calls}"
        after = await vector_state(idx)
        assert after == before, "the stored records changed"

    @pytest.mark.parametrize("key", _REFUSABLE_KEYS)
    async def test_thread_metadata_the_store_refuses_stores_no_message(
        self, request: pytest.FixtureRequest, backend: MemoryBackend, key: str
    ) -> None:
        """docs/spec.md §5.4: thread metadata is spread into every vector of the thread. Where the store
        refuses a key of it, ``save_messages`` raises ValidationError and stores nothing — also a re-save
        of a message that has a vector, which keeps its old vector — and ``Memory`` refuses the key when
        it writes a thread. Where the store holds the key, the messages round-trip with it. (On MongoDB and
        Pinecone the message was stored and then IndexingError raised; a re-save first deleted the old
        vector: issue 23.)"""
        set_item(request, f"memory: thread metadata key {key!r}")
        storage = backend.storage
        await storage.init()
        prefix = f"h{uuid.uuid4().hex[:8]}"
        index = f"{prefix}_refused"
        native = backend.vector.to_native_index_name(index)
        memory = backend.memory(thread_scope(index))
        owner, kept, other = f"{prefix}-r", f"{prefix}-t1", f"{prefix}-t2"

        def message(mid: str, thread_id: str, text: str) -> dict[str, Any]:
            return {"id": mid, "thread_id": thread_id, "role": "user", "content": text}

        async def stored_text(thread_id: str) -> dict[str, str]:
            page = await storage.list_messages(thread_id, per_page=False)
            return {m.id: m.content.content or "" for m in page.messages}

        async def count() -> int:
            await backend.settle(native)
            return (await backend.vector.describe_index(native)).count

        try:
            await memory.create_thread(owner, kept, metadata={"plan": "pro"})
            await memory.save_messages([message(f"{prefix}-m1", kept, "apples and pears")])
            old = await vector_metadata(backend, native, f"{prefix}-m1")
            assert len(old) == 1, f"one vector for a short message, found {old}"
            count0 = await count()
            # Does the store hold the key? Asked through the vector API (refused there before any I/O).
            probe = await raised_by(
                partial(
                    backend.vector.upsert, native, [vec(backend.dimension)], [{key: "v"}], [f"{prefix}-p"]
                )
            )
            if probe is None:
                await backend.vector.delete_vector(native, f"{prefix}-p")
                count0 = await count()
            refused = probe is not None
            assert probe is None or isinstance(probe, ValidationError), f"the probe raised {probe!r}"
            declared = (
                declares(backend.capabilities, "mongodb-field-names") and (key[0] == "$" or "." in key)
            ) or (declares(backend.capabilities, "dotted-keys-rejected") and "." in key)
            assert refused or not declared, (
                f"the manifest declares that {key!r} is refused, but it was stored"
            )

            # 1. A new message into a thread holding the key (written straight into storage, as a thread
            #    stored before Memory checked thread metadata, or by another application).
            stored = await raised_by(
                partial(
                    storage.save_thread,
                    {"id": other, "resource_id": owner, "metadata": {key: "v", "plan": "pro"}},
                )
            )
            # Where the storage itself cannot hold the key in thread metadata (MongoDB in Mastra's layout
            # keeps it as a BSON document, docs/spec.md §4.7), no thread holds it and no message can carry
            # it to the vectors: steps 1 and 2 have nothing to write into.
            storage_holds = stored is None
            if not storage_holds:
                assert isinstance(stored, ValidationError), f"save_thread with {key!r}: {stored!r}"
                assert await storage.get_thread_by_id(other) is None, "the refused thread was stored"
            if storage_holds:
                error = await raised_by(
                    partial(memory.save_messages, [message(f"{prefix}-m2", other, "rockets and moons")])
                )
                if refused:
                    assert isinstance(error, ValidationError), (
                        f"save_messages into a thread holding {key!r}: {error!r}"
                    )
                    assert error.id == "MASTRA_MEMORY_SAVE_MESSAGES_UNINDEXABLE_MESSAGE", error.id
                    assert await stored_text(other) == {}, "the refused message was stored"
                    assert await count() == count0, "the vector count changed"
                else:
                    assert error is None, f"save_messages into a thread holding {key!r}: {error!r}"
                    got = await vector_metadata(backend, native, f"{prefix}-m2")
                    assert [meta.get(key) for meta in got.values()] == ["v"], (
                        f"{key!r} did not round-trip: {got}"
                    )

                # 2. A re-save of a message that has a vector, once its thread holds the key.
                await storage.update_thread(kept, metadata={key: "v"})
                error = await raised_by(
                    partial(memory.save_messages, [message(f"{prefix}-m1", kept, "apples, pears and plums")])
                )
                now = await vector_metadata(backend, native, f"{prefix}-m1")
                if refused:
                    assert isinstance(error, ValidationError), (
                        f"re-save into a thread holding {key!r}: {error!r}"
                    )
                    assert error.id == "MASTRA_MEMORY_SAVE_MESSAGES_UNINDEXABLE_MESSAGE", error.id
                    assert await stored_text(kept) == {f"{prefix}-m1": "apples and pears"}, (
                        "the re-save was stored"
                    )
                    assert now == old, "the refused re-save changed or deleted the message's vector"
                    assert await count() == count0, "the vector count changed"
                else:
                    assert error is None, f"re-save into a thread holding {key!r}: {error!r}"
                    assert [(m.get("content"), m.get(key)) for m in now.values()] == [
                        ("apples, pears and plums", "v")
                    ]

            # 3. Memory refuses the key when it writes a thread, before any message depends on it.
            writes: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
                ("CREATE_THREAD", partial(memory.create_thread, owner, f"{prefix}-t3", metadata={key: 1})),
                ("UPDATE_THREAD", partial(memory.update_thread, kept, metadata={"plan": "x", key: 1})),
                (
                    "SAVE_THREAD",
                    partial(
                        memory.save_thread, {"id": f"{prefix}-t4", "resource_id": owner, "metadata": {key: 1}}
                    ),
                ),
            ]
            for operation, write in writes:
                error = await raised_by(write)
                if not refused:
                    assert error is None, f"{operation} with thread metadata key {key!r}: {error!r}"
                    continue
                assert isinstance(error, ValidationError), f"{operation} with {key!r}: {error!r}"
                assert error.id == f"MASTRA_MEMORY_{operation}_UNINDEXABLE_METADATA", error.id
                assert error.details["key"] == key, error.details
                assert error.details["store"] == backend.capabilities.name, error.details
                assert key in str(error)
            if refused:
                for thread_id in (f"{prefix}-t3", f"{prefix}-t4"):
                    assert await storage.get_thread_by_id(thread_id) is None, f"{thread_id} was stored"
                thread = await storage.get_thread_by_id(kept)
                assert thread is not None
                held = {"plan": "pro", key: "v"} if storage_holds else {"plan": "pro"}
                assert thread.metadata == held, "the refused update_thread wrote"
        finally:
            await memory.flush()
            if native in await backend.vector.list_indexes():
                await backend.vector.delete_index(native)

    async def test_a_resave_keeps_the_chunks_it_wrote_and_drops_the_rest(
        self, request: pytest.FixtureRequest, backend: MemoryBackend
    ) -> None:
        """docs/spec.md §5.4 (write, then clean): a re-save writes the new chunks first, then deletes the
        message's vectors it did not rewrite — by ``chunk_index``, which vectors written before it existed
        lack. A message of three chunks re-saved as one keeps exactly that one, on every store; the filter
        of that delete (``$in``, field-level ``$not`` over a missing key) is exact everywhere."""
        set_item(request, "memory: a re-save cleans the chunks it did not rewrite")
        await backend.storage.init()
        prefix = f"h{uuid.uuid4().hex[:8]}"
        index = f"{prefix}_shrink"
        native = backend.vector.to_native_index_name(index)
        memory = backend.memory(thread_scope(index))
        mid, thread, owner = f"{prefix}-m", f"{prefix}-t", f"{prefix}-r"
        try:
            await memory.create_thread(owner, thread)
            text = " ".join(["alpha"] * 2_700 + ["omega"] * 2_700 + ["delta"] * 2_700)  # three chunks
            await memory.save_messages([{"id": mid, "thread_id": thread, "role": "user", "content": text}])
            got = await vector_metadata(backend, native, mid)
            assert sorted(int(m.get("chunk_index", -1)) for m in got.values()) == [0, 1, 2], sorted(got)
            # A vector of this message as an earlier release wrote it: no chunk_index.
            legacy = {"message_id": mid, "thread_id": thread, "resource_id": owner, "content": "old"}
            await backend.vector.upsert(native, [vec(backend.dimension)], [legacy], [f"{mid}#9"])
            await memory.save_messages(
                [{"id": mid, "thread_id": thread, "role": "user", "content": "one chunk"}]
            )
            got = await vector_metadata(backend, native, mid)
            assert [(m.get("content"), m.get("chunk_index")) for m in got.values()] == [("one chunk", 0)], got
        finally:
            await memory.flush()
            if native in await backend.vector.list_indexes():
                await backend.vector.delete_index(native)
