"""docs/spec.md §3.3 and §5.4: an embedder that returns a zero vector never breaks Memory on a cosine index.

A cosine index refuses zero vectors (cosine similarity is undefined for them). The built-in embedders
return unit vectors for every non-blank text; a provider may still return zeros (some do for text without
word tokens). Such a chunk is stored but not indexed, with a warning naming the message; the rest of the
batch is indexed; a recall query embedded as zeros finds nothing instead of failing.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
import wordllama  # noqa: F401  # imported early: urllib3 (via requests) opens a socket at import to probe IPv6

from mastra_memory.embedders.base import EmbedResult
from mastra_memory.embedders.hash import HashEmbedder
from mastra_memory.embedders.wordllama_local import WordLlamaEmbedder
from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector
from mastra_memory.vector import MIN_COSINE_NORM

from .memory_helpers import CountingEmbedder, ids, msg, ts, vectors_by_message

_WORD = re.compile(r"\w")
#: Texts with no word characters and other edge cases a provider might see.
EDGE_TEXTS = [
    "...",
    "!!!",
    "\u200b",
    "\ufeff",
    "\x00",
    "\t",
    "\u0301",
    "🙂",
    "〰",
    "\ue000",
    "\xad",
    "a",
    "-",
]


class ZeroForWordlessEmbedder(CountingEmbedder):
    """A provider returning an all-zero vector for text without word characters (hash vectors otherwise)."""

    def __init__(self, dimension: int = 64) -> None:
        super().__init__(dimension, f"zeroing/{dimension}")

    async def embed_many(self, texts: Sequence[str], **options: Any) -> EmbedResult:
        result = await super().embed_many(texts, **options)
        size = self.dimension or 0
        vectors = [
            v if _WORD.search(t) else [0.0] * size for t, v in zip(texts, result.embeddings, strict=True)
        ]
        return EmbedResult(vectors, result.usage_tokens)


def _memory(storage: SQLiteStorage, vector: SQLiteVector, **recall: Any) -> Memory:
    return Memory(
        storage=storage,
        vector=vector,
        embedder=ZeroForWordlessEmbedder(),
        options={"semanticRecall": {"scope": "thread", "topK": 5, "messageRange": 0, **recall}},
    )


async def test_a_zero_embedding_is_stored_not_indexed_and_the_rest_of_the_batch_is_indexed(
    storage: SQLiteStorage, vector: SQLiteVector, caplog: pytest.LogCaptureFixture
) -> None:
    memory = _memory(storage, vector)
    await memory.create_thread("r", "t")
    with caplog.at_level(logging.WARNING, logger="mastra_memory.indexing"):
        result = await memory.save_messages(
            [
                msg("m1", "t", "book the hotel in Kyoto", ts(1)),
                msg("m2", "t", "...", ts(2)),
                msg("m3", "t", "check-in is on April 3", ts(3)),
            ]
        )
    assert ids(result.messages) == ["m1", "m2", "m3"]
    page = await memory.storage.list_messages("t", per_page=False)
    assert ids(page.messages) == ["m1", "m2", "m3"], "every message is stored"
    assert set(await vectors_by_message(vector)) == {"m1", "m3"}, "m2 has no vector, the others have"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("zero vector" in w and "'m2'" in w and "zeroing/64" in w for w in warnings), warnings
    # Re-indexing the thread behaves the same way (it does not fail forever on the message).
    assert await memory.reindex_thread("t") == 3
    assert set(await vectors_by_message(vector)) == {"m1", "m3"}
    # Editing the message to real text indexes it; editing it back removes its vector again.
    await memory.update_messages([{"id": "m2", "content": "late checkout please"}])
    assert set(await vectors_by_message(vector)) == {"m1", "m2", "m3"}
    await memory.update_messages([{"id": "m2", "content": "?!"}])
    assert set(await vectors_by_message(vector)) == {"m1", "m3"}, "no stale vector of the old text"
    await memory.close()


async def test_a_recall_query_embedded_as_zeros_finds_nothing_instead_of_failing(
    storage: SQLiteStorage, vector: SQLiteVector, caplog: pytest.LogCaptureFixture
) -> None:
    memory = _memory(storage, vector)
    await memory.create_thread("r", "t")
    await memory.save_messages([msg("m1", "t", "book the hotel in Kyoto", ts(1))])
    with caplog.at_level(logging.WARNING, logger="mastra_memory.indexing"):
        result = await memory.recall("t", resource_id="r", vector_search_string="???")
    assert result.hits == []
    assert any("zero vector" in r.getMessage() and "recall query" in r.getMessage() for r in caplog.records)
    found = await memory.recall("t", resource_id="r", vector_search_string="hotel in Kyoto")
    assert [h.message_id for h in found.hits] == ["m1"]
    await memory.close()


async def test_a_euclidean_memory_index_keeps_zero_embeddings(
    storage: SQLiteStorage, vector: SQLiteVector, caplog: pytest.LogCaptureFixture
) -> None:
    """The rule is cosine's only: on a euclidean index the zero vector is a valid point and is indexed."""
    memory = _memory(storage, vector, indexConfig={"metric": "euclidean"})
    await memory.create_thread("r", "t")
    with caplog.at_level(logging.WARNING, logger="mastra_memory.indexing"):
        await memory.save_messages([msg("m1", "t", "hotel", ts(1)), msg("m2", "t", "...", ts(2))])
    assert (await vector.describe_index("memory_messages_64")).metric == "euclidean"
    assert set(await vectors_by_message(vector)) == {"m1", "m2"}
    found = await memory.recall("t", resource_id="r", vector_search_string="!!!")
    assert found.hits[0].message_id == "m2", "a zero query is nearest to the zero vector"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    await memory.close()


@pytest.mark.parametrize("text", EDGE_TEXTS)
async def test_the_built_in_embedders_never_return_a_zero_vector(text: str) -> None:
    """hash/<dim> adds a direction derived from the whole text; wordllama always pools its BOS token."""
    for size in (2, 64):
        (vector,) = (await HashEmbedder(size).embed_many([text])).embeddings
        assert float(np.linalg.norm(vector)) == pytest.approx(1.0)
    (vector,) = (await WordLlamaEmbedder().embed_many([text])).embeddings
    assert float(np.linalg.norm(vector)) > MIN_COSINE_NORM
    assert float(np.linalg.norm(vector)) == pytest.approx(1.0)
