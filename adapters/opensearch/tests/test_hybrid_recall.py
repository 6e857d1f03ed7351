"""Hybrid recall (``semanticRecall.mode: "hybrid"``) on OpenSearch: the texts' sibling index (lexical.py) is
written, searched and deleted with the vectors, never listed as an index, and deleted with its vector index.
The kit's lexical domain covers scope, filters and hostile text."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mastra_memory.filters import parse
from mastra_memory.memory import Memory

from mastra_memory_opensearch.lexical import LEXICAL_SUFFIX, lexical_mapping, query_words
from mastra_memory_opensearch.store import OpenSearchVector


@pytest.fixture
async def memory(store: OpenSearchVector, tmp_path: Path) -> AsyncIterator[Memory]:
    memory = Memory(
        storage=f"sqlite:///{tmp_path / 'memory.db'}",
        vector=store,
        embedder="hash/64",
        options={"lastMessages": False, "semanticRecall": {"topK": 3, "messageRange": 0, "mode": "hybrid"}},
    )
    try:
        yield memory
    finally:
        await memory.close()


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


async def _texts(store: OpenSearchVector, name: str) -> list[str]:
    sibling = store.settings.index_prefix + name + LEXICAL_SUFFIX
    body = {"size": 100, "query": {"match_all": {}}, "sort": [{"record_id": "asc"}]}
    reply = await store.client.search(index=sibling, body=body)
    return [h["_source"]["record_id"] for h in reply["hits"]["hits"]]


async def test_hybrid_recall_finds_by_words_and_cleans_up(memory: Memory, store: OpenSearchVector) -> None:
    await _seed(memory)
    [name] = await store.list_indexes()  # the sibling is no index

    result = await memory.recall(
        "t1", resource_id="ada", vector_search_string="where does Biscuit hide?", per_page=0
    )
    assert result.hits[0].message_id == "m1"
    assert await _texts(store, name) == ["m1", "m2", "m3"]

    await memory.update_messages([{"id": "m2", "content": "Pottery class moved to Thursdays"}])
    await memory.settled(timeout=60)
    moved = await memory.recall("t1", resource_id="ada", vector_search_string="Thursdays", per_page=0)
    assert moved.hits[0].message_id == "m2"

    await memory.delete_messages(["m1"])
    assert await _texts(store, name) == ["m2", "m3"]
    await memory.delete_thread("t1")
    assert await _texts(store, name) == []


async def test_deleting_the_index_deletes_its_sibling(memory: Memory, store: OpenSearchVector) -> None:
    await _seed(memory)
    [name] = await store.list_indexes()
    sibling = store.settings.index_prefix + name + LEXICAL_SUFFIX
    assert await store.client.indices.exists(index=sibling)

    await store.delete_index(name)

    assert not await store.client.indices.exists(index=sibling)


def test_the_sibling_mapping_has_the_filter_fields_and_no_vector() -> None:
    properties = lexical_mapping()["properties"]
    assert "vector" not in properties
    assert properties["content"]["type"] == "text"
    assert {"record_id", "metadata", "str", "facts", "elems"} <= properties.keys()


def test_query_text_becomes_distinct_words() -> None:
    assert query_words('content:"a" OR b~2 AND (a*) ^3') == ["content", "a", "or", "b", "2", "and", "3"]
    assert query_words("  && || ! ") == []


async def test_the_first_search_copies_the_texts_already_beside_the_vectors(store: OpenSearchVector) -> None:
    await store.create_index("docs", 4)
    # Written by the vector store alone, as before hybrid recall existed.
    await store.upsert(
        "docs",
        [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]],
        [
            {"content": "the grey cat", "message_id": "a", "thread_id": "t1"},
            {"content": "a red fox", "message_id": "b", "thread_id": "t2"},
            {},
        ],
        ids=["a", "b", "c"],
    )
    index = store.lexical_index()

    scoped = parse({"thread_id": "t1"})
    assert [h.id for h in await index.search("docs", "grey cat fox", top_k=5, flt=scoped)] == ["a"]
    await index.upsert("docs", ["d"], ["another grey one"], [{"message_id": "d", "thread_id": "t1"}])
    assert [h.id for h in await index.search("docs", "grey", top_k=5, flt=scoped)] == ["a", "d"]
    assert await store.list_indexes() == ["docs"]
