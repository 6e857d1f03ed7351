"""Pinecone's metadata rules are part of the shared validation (issue 23, item 2; docs/spec.md §3.6, §5.4).

Before the fix, dotted keys, non-string lists and the 40 KB budget were checked inside ``_upsert``, after the
template had read the index: ``Memory`` stored a message whose thread metadata held a dotted key and then
raised ``IndexingError``, and a re-save of a message deleted its old vector before the new one was refused
(a tenant's vectors went from 10 to 9). Now ``PineconeVector._metadata_problem`` refuses before any request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mastra_memory.errors import ValidationError
from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage

from mastra_memory_pinecone.capabilities import MAX_METADATA_BYTES
from mastra_memory_pinecone.layout import encode, metadata_bytes
from mastra_memory_pinecone.store import PineconeVector
from mastra_memory_pinecone.testing.emulator import PineconeEmulator

from .conftest import settings_for

INDEX = "memory-messages-64"


def vec(*head: float, dim: int = 4) -> list[float]:
    return [*head, *([0.0] * (dim - len(head)))]


@pytest.mark.parametrize(
    "metadata",
    [{"a.b": 1}, {"x": {"y.$gt": 1}}, {"nums": [1, 2]}, {"big": 2**63}, {"text": "x" * 41_000}],
    ids=["dotted", "nested-dotted", "non-string-list", "int-beyond-64-bits", "over-40kb"],
)
async def test_refused_before_any_request(
    store: PineconeVector, emulator: PineconeEmulator, metadata: dict[str, Any]
) -> None:
    await store.create_index("rules", 4)
    before = len(emulator.requests)
    with pytest.raises(ValidationError) as caught:
        await store.upsert("rules", [vec(1.0)], [metadata], ["a"])
    assert caught.value.id == "MASTRA_VECTOR_PINECONE_UPSERT_INVALID_METADATA"
    with pytest.raises(ValidationError) as caught:
        await store.update_vector("rules", id="a", update={"metadata": metadata})
    assert caught.value.id == "MASTRA_VECTOR_PINECONE_UPDATE_VECTOR_INVALID_METADATA"
    assert emulator.requests[before:] == []  # not even the index was read (docs/spec.md §3.3)


async def test_the_40kb_budget_counts_the_reserved_keys_of_the_records_id(
    store: PineconeVector, emulator: PineconeEmulator
) -> None:
    """An id Pinecone cannot take is kept in ``_mastra_id``, which counts: the same metadata fits under an
    ASCII id and is refused, before any request, under a non-ASCII one."""
    await store.create_index("budget", 4)
    room = MAX_METADATA_BYTES - metadata_bytes(encode({"text": ""}, "a", zero=True))
    metadata = {"text": "x" * room}  # exactly 40 KB as stored, room for the zero-vector tag included
    await store.upsert("budget", [vec(1.0)], [metadata], ["a"])
    before = len(emulator.requests)
    with pytest.raises(ValidationError, match="metadata-40kb"):
        await store.upsert("budget", [vec(1.0)], [metadata], ["é"])
    assert emulator.requests[before:] == []


@pytest.fixture
async def memory(tmp_path: Path, emulator: PineconeEmulator) -> AsyncIterator[tuple[Memory, PineconeVector]]:
    storage = SQLiteStorage(str(tmp_path / "memory.db"))
    vector = PineconeVector(settings_for(emulator))
    memory = Memory(
        storage=storage,
        vector=vector,
        embedder="hash/64",
        options={"lastMessages": 1, "semanticRecall": {"topK": 2, "messageRange": 0, "scope": "thread"}},
    )
    try:
        yield memory, vector
    finally:
        await memory.close()


async def test_a_refused_resave_keeps_every_vector(memory: tuple[Memory, PineconeVector]) -> None:
    """The issue's run: ten messages indexed, then the thread's metadata gets a dotted key (straight into
    storage, as before Memory checked it). Re-saving one message raises ValidationError, stores nothing
    and leaves ten vectors; Memory itself refuses the key when it writes a thread."""
    mem, vector = memory
    await mem.create_thread("r", "t", metadata={"plan": "pro"})
    texts = {f"m{i}": f"note number {i} about topic {i * 7}" for i in range(10)}
    await mem.save_messages(
        [{"id": k, "thread_id": "t", "role": "user", "content": v} for k, v in texts.items()]
    )
    await vector.wait_for_indexing(INDEX)
    assert (await vector.describe_index(INDEX)).count == 10
    await mem.storage.update_thread("t", metadata={"a.b": "x"})
    with pytest.raises(ValidationError) as caught:
        await mem.save_messages([{"id": "m3", "thread_id": "t", "role": "user", "content": "rewritten"}])
    assert caught.value.id == "MASTRA_MEMORY_SAVE_MESSAGES_UNINDEXABLE_MESSAGE"
    assert "dotted-keys-rejected" in caught.value.message
    stored = {
        m.id: m.content.content for m in (await mem.storage.list_messages("t", per_page=False)).messages
    }
    assert stored == texts
    await vector.wait_for_indexing(INDEX)
    assert (await vector.describe_index(INDEX)).count == 10
    with pytest.raises(ValidationError) as caught:
        await mem.create_thread("r", "t2", metadata={"a.b": "x"})
    assert caught.value.id == "MASTRA_MEMORY_CREATE_THREAD_UNINDEXABLE_METADATA"
    assert caught.value.details["key"] == "a.b"
    assert caught.value.details["store"] == "pinecone"
