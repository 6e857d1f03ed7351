"""Hybrid recall (``semanticRecall.mode: "hybrid"``) on PostgreSQL, in both layouts: the full-text rows
beside the vectors (lexical.py) are written, searched and deleted with them, and ``@mastra/pg``'s tables are
never altered. The kit's lexical domain covers scope, filters and hostile text."""

from __future__ import annotations

from collections.abc import AsyncIterator

import psycopg
import pytest
import pytest_asyncio
from mastra_memory.filters import parse
from mastra_memory.memory import Memory

from mastra_memory_pgvector import PgVectorSettings
from mastra_memory_pgvector.lexical import LEXICAL_TABLE, query_words
from mastra_memory_pgvector.storage import PgStorage
from mastra_memory_pgvector.store import PgVector


@pytest_asyncio.fixture(params=["mastra-memory", "mastra"])
async def memory(request: pytest.FixtureRequest, settings: PgVectorSettings) -> AsyncIterator[Memory]:
    layout = request.param
    laid = settings.model_copy(update={"layout": layout})
    storage, vector = PgStorage(laid), PgVector(laid)
    await storage.init()
    memory = Memory(
        storage=storage,
        vector=vector,
        embedder="hash/64",
        options={"lastMessages": False, "semanticRecall": {"topK": 3, "messageRange": 0, "mode": "hybrid"}},
    )
    try:
        yield memory
    finally:
        await memory.close()
        await vector.close()
        await storage.close()


async def _seed(memory: Memory) -> None:
    await memory.create_thread("ada", "t1")
    await memory.save_messages(
        [
            {
                "id": "m1",
                "thread_id": "t1",
                "role": "user",
                "content": "Biscuit the grey cat hides under the sofa",
            },
            {"id": "m2", "thread_id": "t1", "role": "assistant", "content": "Pottery class is on Tuesdays"},
            {"id": "m3", "thread_id": "t1", "role": "user", "content": "Clara visits from Lisbon in May"},
        ]
    )
    await memory.settled(timeout=60)


def _rows(settings: PgVectorSettings) -> list[str]:
    assert settings.url is not None
    with psycopg.connect(settings.url) as conn:
        table = f'"{settings.schema_name}".{LEXICAL_TABLE}'
        return [r[0] for r in conn.execute(f"SELECT id FROM {table} ORDER BY id").fetchall()]


async def test_hybrid_recall_finds_by_words_and_cleans_up(memory: Memory, settings: PgVectorSettings) -> None:
    await _seed(memory)

    result = await memory.recall(
        "t1", resource_id="ada", vector_search_string="where does Biscuit hide?", per_page=0
    )
    assert result.hits[0].message_id == "m1"
    assert _rows(settings) == ["m1", "m2", "m3"]

    await memory.update_messages([{"id": "m2", "content": "Pottery class moved to Thursdays"}])
    await memory.settled(timeout=60)
    moved = await memory.recall("t1", resource_id="ada", vector_search_string="thursday", per_page=0)
    assert moved.hits[0].message_id == "m2"  # stemmed: "Thursdays" is found as "thursday"

    await memory.delete_messages(["m1"])
    assert _rows(settings) == ["m2", "m3"]
    await memory.delete_thread("t1")
    assert _rows(settings) == []


async def test_deleting_the_index_drops_its_texts(memory: Memory, settings: PgVectorSettings) -> None:
    await _seed(memory)
    assert memory.vector is not None
    [name] = [n for n in await memory.vector.list_indexes() if n.startswith("memory")]

    await memory.vector.delete_index(name)

    assert _rows(settings) == []


async def test_mastra_tables_are_never_altered(settings: PgVectorSettings) -> None:
    laid = settings.model_copy(update={"layout": "mastra"})
    storage, vector = PgStorage(laid), PgVector(laid)
    await storage.init()
    memory = Memory(
        storage=storage,
        vector=vector,
        embedder="hash/64",
        options={"lastMessages": False, "semanticRecall": {"topK": 3, "messageRange": 0}},
    )
    try:
        await _seed(memory)
        [name] = [n for n in await vector.list_indexes() if n.startswith("memory")]
        assert settings.url is not None
        with psycopg.connect(settings.url) as conn:
            columns = [
                r[0]
                for r in conn.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_schema = %s "
                    "AND table_name = %s ORDER BY ordinal_position",
                    (settings.schema_name, name),
                ).fetchall()
            ]
        assert columns == ["id", "vector_id", "embedding", "metadata", "namespace"]  # @mastra/pg's, as made
        assert LEXICAL_TABLE not in await vector.list_indexes()
    finally:
        await memory.close()
        await vector.close()
        await storage.close()


def test_query_text_becomes_distinct_words() -> None:
    assert query_words('NEAR(a b) OR "a" & !b:* <->') == ["near", "a", "b", "or"]
    assert query_words("  '; -- ") == []


@pytest.mark.parametrize("layout", ["mastra-memory", "mastra"])
async def test_the_first_search_copies_the_texts_already_beside_the_vectors(
    settings: PgVectorSettings, layout: str
) -> None:
    vector = PgVector(settings.model_copy(update={"layout": layout}))
    try:
        await vector.create_index("docs", 4, "cosine", index_config={"type": "hnsw"})
        # Written by the vector store alone, as before hybrid recall existed.
        await vector.upsert(
            "docs",
            [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]],
            [{"content": "the grey cat", "message_id": "a"}, {"content": "a red fox", "message_id": "b"}],
            ids=["a", "b"],
        )
        index = vector.lexical_index()

        assert [h.id for h in await index.search("docs", "grey", top_k=5, flt=None)] == ["a"]

        only_a = parse({"message_id": "a"})
        assert only_a is not None
        await index.delete("docs", only_a)  # its text only: a second copy would bring it back
        again = vector.lexical_index()  # as another process: the copy is recorded, it is not made twice
        assert await again.search("docs", "grey", top_k=5, flt=None) == []
    finally:
        await vector.close()
