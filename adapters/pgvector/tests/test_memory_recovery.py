"""On pgvector, a stored message can never block the recovery of its thread (issue 12, finding 3;
docs/spec.md §5.4), on the real server of ``conftest.py``.

PostgreSQL storage keeps message content as JSON text, so text with a lone surrogate (or U+0000) passes
storage validation, while the pgvector store refuses it at upsert. Before the fix ``save_messages`` stored
such a message and raised ``IndexingError``, and every later ``reindex_thread`` raised too. Now
``save_messages`` refuses it before the storage write, and a message stored that way before the fix is
skipped and reported by ``reindex_thread`` while every good message of the thread is indexed again.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import pytest_asyncio
from mastra_memory.embedders import get_embedding_cache
from mastra_memory.errors import ValidationError
from mastra_memory.memory import Memory
from mastra_memory.messages import normalize_messages
from mastra_memory.storage import codec

from mastra_memory_pgvector import PgVectorSettings
from mastra_memory_pgvector.storage import PgStorage
from mastra_memory_pgvector.store import PgVector

T0 = datetime(2024, 1, 1, tzinfo=UTC)
INDEX = "memory_messages_64"
OPTIONS = {"lastMessages": 1, "semanticRecall": {"topK": 3, "messageRange": 0, "scope": "thread"}}
GOOD = {"g1": "the lighthouse keeper counts seagulls at dawn", "g2": "our invoice for the blue kayak"}
BAD = {"sur": "broken \ud800 text", "nul": "before\x00after"}


def _msg(id: str, text: str, seconds: int) -> dict[str, Any]:
    return {
        "id": id,
        "thread_id": "t1",
        "role": "user",
        "content": text,
        "created_at": T0 + timedelta(seconds=seconds),
    }


@pytest_asyncio.fixture
async def memory(settings: PgVectorSettings) -> AsyncIterator[Memory]:
    """PgStorage + PgVector in the test's schema; thread ``t1`` holds g1, g2 (stored and indexed)."""
    get_embedding_cache().clear()
    m = Memory(storage=PgStorage(settings), vector=PgVector(settings), embedder="hash/64", options=OPTIONS)
    await m.create_thread("r", "t1")
    await m.save_messages([_msg(i, text, n) for n, (i, text) in enumerate(GOOD.items())])
    try:
        yield m
    finally:
        await m.close()


async def _stored(memory: Memory) -> list[str]:
    return [m.id for m in (await memory.storage.list_messages("t1", per_page=False)).messages]


async def _top_hit(memory: Memory, text: str) -> str:
    return (await memory.recall("t1", "r", vector_search_string=text)).hits[0].message_id


@pytest.mark.parametrize("case", list(BAD))
async def test_save_messages_refuses_what_pgvector_cannot_index_before_storing(
    memory: Memory, case: str
) -> None:
    before = sorted(r.id for r in await memory.vector.query(INDEX, None, top_k=100))
    with pytest.raises(ValidationError, match=r"cannot be indexed for semantic recall") as caught:
        await memory.save_messages([_msg("fine", "a good message", 5), _msg(case, BAD[case], 6)])
    assert caught.value.details["message_ids"] == [case]
    assert "\ud800" not in caught.value.message
    assert await _stored(memory) == ["g1", "g2"]
    assert sorted(r.id for r in await memory.vector.query(INDEX, None, top_k=100)) == before


async def test_reindex_thread_skips_the_message_stored_before_the_fix_and_restores_the_rest(
    memory: Memory,
) -> None:
    # As save_messages did before the fix: the storage write succeeds, no vector was written. Storage now
    # refuses a lone surrogate too (docs/spec.md §4.1), so these rows are written as the old version wrote
    # them: through the storage's hook, the content as ASCII-escaped JSON text.
    storage = memory.storage
    assert isinstance(storage, PgStorage)
    old = normalize_messages(
        [_msg("sur", BAD["sur"], 5), _msg("nul", BAD["nul"], 6), _msg("g3", "rye", 7)], resource_id="r"
    )
    rows = [(m, codec.json_text(m.content.model_dump(), m.id, ensure_ascii=True)) for m in old]
    await storage._transaction("TEST", lambda tx: storage._write_messages(tx, rows), write=True)
    await memory.vector.delete_index(INDEX)
    result = await memory.reindex_thread("t1")
    assert (int(result), result.skipped_ids) == (3, ["sur", "nul"])
    assert "unpaired surrogate" in result.skipped[0].reason
    assert "U+0000" in result.skipped[1].reason
    assert sorted(r.id for r in await memory.vector.query(INDEX, None, top_k=100)) == ["g1", "g2", "g3"]
    for message_id, text in {**GOOD, "g3": "rye"}.items():
        assert await _top_hit(memory, text) == message_id
    again = await memory.reindex()
    assert (int(again), again.skipped_ids) == (3, ["sur", "nul"])
