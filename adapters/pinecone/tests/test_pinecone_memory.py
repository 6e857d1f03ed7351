"""``Memory(storage=sqlite, vector=pinecone)`` runs the docs/spec.md §8.3 memory scenario on the emulator."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mastra_memory.errors import ResourceScopeError, ThreadOwnershipError
from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory_conformance.scenarios import (
    EMBEDDER,
    QUERY,
    RECALL_CASES,
    RECALL_OPTIONS,
    RecallCase,
    Scenario,
)

from mastra_memory_pinecone.store import PineconeVector
from mastra_memory_pinecone.testing.emulator import PineconeEmulator

from .conftest import settings_for

INDEX = "memory-messages-64"


@pytest.fixture
async def memory(
    tmp_path: Path, emulator: PineconeEmulator
) -> AsyncIterator[tuple[Memory, PineconeVector, Scenario]]:
    storage = SQLiteStorage(str(tmp_path / "memory.db"))
    await storage.init()
    vector = PineconeVector(settings_for(emulator))
    memory = Memory(storage=storage, vector=vector, embedder=EMBEDDER, options=dict(RECALL_OPTIONS))
    scenario = Scenario(prefix="p-")
    await scenario.seed_memory(memory)
    await memory.flush()
    await vector.wait_for_indexing(INDEX)  # Pinecone is eventually consistent
    try:
        yield memory, vector, scenario
    finally:
        await memory.flush()
        await vector.close()
        await storage.close()


@pytest.mark.parametrize("case", RECALL_CASES, ids=lambda c: c.name)
async def test_recall_rows(memory: tuple[Memory, PineconeVector, Scenario], case: RecallCase) -> None:
    mem, _, sc = memory
    result = await mem.recall(**case.kwargs(sc))
    assert [m.id.removeprefix(sc.prefix) for m in result.messages] == list(case.expected)


async def test_the_hit_scores_one_and_lives_in_the_derived_index(
    memory: tuple[Memory, PineconeVector, Scenario],
) -> None:
    mem, vector, sc = memory
    result = await mem.recall(sc.id("A2"), resource_id=sc.id("A"), vector_search_string=QUERY)
    assert [(h.message_id, h.thread_id) for h in result.hits] == [(sc.id("a2"), sc.id("A1"))]
    assert result.hits[0].score == pytest.approx(1.0, abs=1e-3)
    assert await vector.list_indexes() == [INDEX]


async def test_ownership_and_scope_are_enforced(memory: tuple[Memory, PineconeVector, Scenario]) -> None:
    mem, _, sc = memory
    with pytest.raises(ThreadOwnershipError):
        await mem.recall(sc.id("A2"), resource_id=sc.id("B"), vector_search_string=QUERY)
    with pytest.raises(ResourceScopeError):
        await mem.recall(sc.id("A2"), vector_search_string=QUERY)


async def test_deleted_messages_leave_no_vector(memory: tuple[Memory, PineconeVector, Scenario]) -> None:
    mem, vector, sc = memory
    await mem.delete_messages([sc.id("a2")])
    await mem.flush()
    await vector.wait_for_indexing(INDEX)
    left = await vector.query(INDEX, [1.0] * 64, top_k=10, filter={"message_id": sc.id("a2")})
    assert left == []
    result = await mem.recall(sc.id("A2"), resource_id=sc.id("A"), vector_search_string=QUERY)
    assert sc.id("a2") not in [m.id for m in result.messages]
