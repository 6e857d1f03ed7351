"""Ids one tenant can choose never reach another's records (issue 23; docs/spec.md §3.5, §5.4): an id and
the form an adapter maps ids to are two records, ids holding U+0000 are stored, and a message named after
another tenant's vector leaves that tenant's vectors and recall as they were.
"""

from __future__ import annotations

import uuid
from typing import Final

import pytest

from mastra_memory.vector import mastra_uuid

from ...datasets import make_vector
from ...plugin import set_item
from .. import IndexUnderTest, Item
from .base import (
    HostileSuiteBase,
    MemoryBackend,
    message_vectors,
    records_by_id,
    thread_scope,
)

__all__ = ["TenantIdsSuite"]

#: and OpenSearch (over 512 UTF-8 bytes: 300 two-byte characters).
_ALIAS_VICTIMS: Final = ("victim-id", "é" * 300)
#: An id Pinecone maps to ``mastra-<uuid5>`` (not ASCII).
_ALIAS_NON_ASCII: Final = "ünïcødé-victim"
#: Ids with U+0000 beside those an escape of it could produce (U+0001 sequences), in no particular order.
_NUL_IDS: Final = ("a\x00b", "a\x01\x01b", "a\x01b", "a\x01\x02b", "a", "a\x00", "a\x02", "a\x00\x00")
#: Two chunks of the default chunk size (16,384 characters): 15,000 characters, a space, 15,000 more.
_SECOND_CHUNK: Final = "omega" * 3_000
_TWO_CHUNKS: Final = "alpha" * 3_000 + " " + _SECOND_CHUNK


@pytest.mark.asyncio
class TenantIdsSuite(HostileSuiteBase):
    """Ids of one tenant against another's records (a part of ``HostileInputSuite``)."""

    async def test_distinct_ids_are_distinct_records(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest
    ) -> None:
        """docs/spec.md §3.5: two distinct ids are two records, also when one is the form an adapter maps
        the other to (its uuid5; ``mastra-<uuid5>``). Once, on Qdrant, ``"victim-id"`` and its uuid5 were
        one point, and on OpenSearch an id over 512 UTF-8 bytes and its uuid5 were one document: writing,
        updating or deleting one changed the other. Every step here leaves the other id as it was."""
        set_item(request, "ids: an id and the form it maps to")
        dim = idx.dimension
        pairs = [(victim, mastra_uuid(victim)) for victim in _ALIAS_VICTIMS]
        pairs.append((_ALIAS_NON_ASCII, "mastra-" + mastra_uuid(_ALIAS_NON_ASCII)))
        ids = [rid for pair in pairs for rid in pair]
        items = [Item(rid, make_vector(n + 1, dim), {"n": n}) for n, rid in enumerate(ids)]
        await idx.load(items)
        written = {rid: n for n, rid in enumerate(ids)}
        found = await records_by_id(idx, len(ids))
        assert found == written, f"upserting {len(ids)} distinct ids did not store {len(ids)} records"
        assert (await idx.store.describe_index(idx.name)).count == len(ids)
        for n, (_, twin) in enumerate(pairs):
            await idx.store.update_vector(idx.name, id=twin, update={"metadata": {"n": 100 + n}})
        found = await records_by_id(idx, len(ids))
        updated = {**written, **{twin: 100 + n for n, (_, twin) in enumerate(pairs)}}
        assert found == updated, "updating an id changed the record of another id"
        # Both directions: the first pair loses its original id, the others the form it maps to.
        await idx.store.delete_vector(idx.name, pairs[0][0])
        await idx.store.delete_vectors(idx.name, ids=[twin for _, twin in pairs[1:]])
        found = await records_by_id(idx, len(ids))
        kept = [pairs[0][1], *(victim for victim, _ in pairs[1:])]
        assert found == {rid: updated[rid] for rid in kept}, "deleting an id deleted another"
        assert (await idx.store.describe_index(idx.name)).count == len(kept)

    async def test_ids_holding_nul_are_stored(
        self, request: pytest.FixtureRequest, idx: IndexUnderTest
    ) -> None:
        """docs/spec.md §3.5: an id is any text, U+0000 included (pgvector and MongoDB refused such ids; they
        escape them now). Each id is its own record, beside the ids an escape could turn it into, comes
        back verbatim, is updated and deleted alone, and listings keep code-point order."""
        set_item(request, "ids: U+0000 and U+0001")
        dim = idx.dimension
        ids = list(_NUL_IDS)
        items = [Item(rid, make_vector(n + 1, dim), {"n": n}) for n, rid in enumerate(ids)]
        await idx.load(items)
        written = {rid: n for n, rid in enumerate(ids)}
        assert await records_by_id(idx, len(ids)) == written
        if idx.capabilities.metadata_only_query:
            listed = await idx.store.query(idx.name, None, top_k=len(ids))
            assert [h.id for h in listed] == sorted(ids), "a listing is in code-point order of the ids"
        await idx.store.update_vector(idx.name, id="a\x00b", update={"metadata": {"n": 100}})
        await idx.store.delete_vector(idx.name, "a\x00")
        await idx.store.delete_vectors(idx.name, ids=["a\x01\x01b"])
        expected = {**written, "a\x00b": 100}
        del expected["a\x00"], expected["a\x01\x01b"]
        assert await records_by_id(idx, len(ids)) == expected

    async def test_a_message_id_cannot_name_another_tenants_vectors(
        self, request: pytest.FixtureRequest, backend: MemoryBackend
    ) -> None:
        """docs/spec.md §5.4: bob saves a message of two chunks; alice, another resource, saves messages whose
        ids are ``"<bob's id>#1"`` (once the id of bob's chunk 1) and the uuid5 of bob's id (once his point
        on Qdrant), then deletes them. Bob still has both vectors, and his recall finds his second chunk."""
        set_item(request, "memory: a message id naming another tenant's vector")
        prefix = f"h{uuid.uuid4().hex[:8]}"
        index = f"{prefix}_alias"
        memory = backend.memory(thread_scope(index))
        bob = f"{prefix}-bob-m1"
        alice_ids = [f"{bob}#1", mastra_uuid(bob)]
        try:
            await memory.create_thread(f"{prefix}-bob", f"{prefix}-tb")
            await memory.create_thread(f"{prefix}-alice", f"{prefix}-ta")
            await memory.save_messages(
                [{"id": bob, "thread_id": f"{prefix}-tb", "role": "user", "content": _TWO_CHUNKS}]
            )
            native = backend.vector.to_native_index_name(index)
            before = await message_vectors(backend, native, bob)
            assert len(before) == 2, f"bob's message of two chunks has {len(before)} vectors"
            await memory.save_messages(
                [
                    {"id": rid, "thread_id": f"{prefix}-ta", "role": "user", "content": "alice's note"}
                    for rid in alice_ids
                ]
            )
            await memory.delete_messages(alice_ids)
            after = await message_vectors(backend, native, bob)
            assert after == before, "saving and deleting another resource's messages changed bob's vectors"
            result = await memory.recall(
                f"{prefix}-tb", resource_id=f"{prefix}-bob", vector_search_string=_SECOND_CHUNK
            )
            scores = {h.message_id: h.score for h in result.hits}
            assert scores.get(bob, 0.0) > 0.99, f"bob's second chunk is not found: hits {scores}"
        finally:
            await memory.flush()
            if backend.vector.to_native_index_name(index) in await backend.vector.list_indexes():
                await backend.vector.delete_index(backend.vector.to_native_index_name(index))
