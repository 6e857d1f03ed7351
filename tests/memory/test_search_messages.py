"""``Memory.semantic_search_messages`` (``search_messages`` before issue 26, now a deprecated alias) on the
SQLite default (docs/spec.md §5.11): semantic search over one resource's messages without a thread, the
recall filter language applied, scores returned, and no filter able to reach another resource."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from mastra_memory.errors import FilterError, ValidationError
from mastra_memory.memory import Memory
from mastra_memory.memory.recall.search import MessageSearchResult
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector
from mastra_memory.vector.records import MAX_TOP_K

from .memory_helpers import CountingEmbedder, ids, msg, ts

OPTIONS = {"semantic_recall": {"top_k": 4, "message_range": 0, "scope": "resource"}}
QUERY = "lisbon hotel booking"


@pytest.fixture
async def memory(storage: SQLiteStorage, vector: SQLiteVector) -> AsyncIterator[Memory]:
    mem = Memory(storage=storage, vector=vector, embedder="hash/64", options=OPTIONS)
    await mem.create_thread("alice", "work", metadata={"project": "office"})
    await mem.create_thread("alice", "trip", metadata={"project": "holiday"})
    await mem.create_thread("bob", "bobs")
    await mem.save_messages(
        [
            msg("w1", "work", "quarterly report is due", ts(1)),
            msg("w2", "work", "lisbon hotel booking for the offsite", ts(2), role="assistant"),
            msg("h1", "trip", "lisbon hotel booking confirmed", ts(3)),
            msg("h2", "trip", "pack sunscreen", ts(4)),
            msg("b1", "bobs", "lisbon hotel booking for bob", ts(5)),
        ]
    )
    yield mem
    await mem.close()


async def test_a_top_k_beyond_the_stores_limit_is_refused_before_the_query_is_embedded(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    embedder = CountingEmbedder(64)
    mem = Memory(storage=storage, vector=vector, embedder=embedder, options=OPTIONS)
    with pytest.raises(ValidationError, match="exceeds the limit") as raised:
        await mem.semantic_search_messages(QUERY, resource_id="alice", top_k=MAX_TOP_K + 1)
    assert raised.value.id.endswith("QUERY_TOP_K_TOO_LARGE")
    assert embedder.calls.count == 0, "the embedder ran before the limit was checked"
    assert await vector.list_indexes() == []
    await mem.close()


async def test_searches_every_thread_of_the_resource_best_first_with_scores(memory: Memory) -> None:
    result = await memory.semantic_search_messages(QUERY, resource_id="alice")
    assert isinstance(result, MessageSearchResult)
    found = ids(result.messages)
    assert set(found[:2]) == {"w2", "h1"}, "the two matching messages of both threads come first"
    assert "b1" not in found
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True)
    assert all(h.thread_id == h.message.thread_id for h in result.hits)
    assert all(h.message.resource_id == "alice" for h in result.hits)
    assert result.index_name == "memory_messages_64"
    assert (
        ids((await memory.semantic_search_messages(QUERY, resource_id="alice", top_k=1)).messages)
        == found[:1]
    )


async def test_thread_filter_and_threshold_narrow(memory: Memory) -> None:
    in_trip = await memory.semantic_search_messages(QUERY, resource_id="alice", thread_id="trip")
    assert {h.thread_id for h in in_trip.hits} == {"trip"}
    by_metadata = await memory.semantic_search_messages(
        QUERY, resource_id="alice", filter={"project": "office"}
    )
    assert set(ids(by_metadata.messages)) <= {"w1", "w2"}
    assert "w2" in ids(by_metadata.messages)
    by_role = await memory.semantic_search_messages(
        QUERY, resource_id="alice", filter={"role": {"$eq": "assistant"}}
    )
    assert ids(by_role.messages) == ["w2"]
    best = (await memory.semantic_search_messages(QUERY, resource_id="alice")).hits[0].score
    strict = await memory.semantic_search_messages(QUERY, resource_id="alice", threshold=best)
    assert strict.hits
    assert strict.hits[0].score == best
    assert all(h.score >= best for h in strict.hits)
    assert len(strict.hits) < len((await memory.semantic_search_messages(QUERY, resource_id="alice")).hits)
    assert (await memory.semantic_search_messages(QUERY, resource_id="alice", threshold=1.01)).hits == []


@pytest.mark.parametrize(
    "hostile",
    [
        {"resource_id": "bob"},
        {"$or": [{"resource_id": "bob"}, {"resource_id": "alice"}]},
        {"resource_id": {"$ne": "alice"}},
        {"$or": [{"resource_id": {"$exists": True}}, {"thread_id": "bobs"}]},
        {"$not": {"resource_id": "alice"}},
        {"thread_id": "bobs"},
    ],
)
async def test_no_filter_widens_the_search_to_another_resource(
    memory: Memory, hostile: dict[str, object]
) -> None:
    result = await memory.semantic_search_messages(QUERY, resource_id="alice", filter=hostile, top_k=50)
    assert all(h.message.resource_id == "alice" for h in result.hits)
    assert "b1" not in ids(result.messages)


async def test_a_stale_vector_never_returns_another_resources_message(memory: Memory) -> None:
    """Storage decides: a thread moved behind Memory's back (storage only) keeps vectors that still say
    alice, yet alice's search does not return its messages."""
    await memory.storage.update_thread_resource_id("trip", "carol")
    result = await memory.semantic_search_messages(QUERY, resource_id="alice", top_k=50)
    assert "h1" not in ids(result.messages)
    assert all(h.message.resource_id == "alice" for h in result.hits)


async def test_deleted_messages_are_not_found(memory: Memory) -> None:
    await memory.delete_messages(["h1"])
    assert "h1" not in ids((await memory.semantic_search_messages(QUERY, resource_id="alice")).messages)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"query": " ", "resource_id": "alice"}, ValidationError),
        ({"query": QUERY, "resource_id": ""}, ValidationError),
        ({"query": QUERY, "resource_id": None}, ValidationError),
        ({"query": QUERY, "resource_id": "alice", "thread_id": ""}, ValidationError),
        ({"query": QUERY, "resource_id": "alice", "top_k": 0}, ValidationError),
        ({"query": QUERY, "resource_id": "alice", "threshold": float("nan")}, ValidationError),
        ({"query": QUERY, "resource_id": "alice", "filter": {"$bogus": 1}}, FilterError),
        ({"query": QUERY, "resource_id": "alice", "filter": "role = user"}, ValidationError),
    ],
)
async def test_bad_arguments_raise_typed_errors_before_any_io(
    storage: SQLiteStorage, vector: SQLiteVector, kwargs: dict[str, object], error: type[Exception]
) -> None:
    mem = Memory(storage=storage, vector=vector, embedder="hash/64", options=OPTIONS)
    with pytest.raises(error):
        await mem.semantic_search_messages(**kwargs)  # type: ignore[arg-type]
    assert await vector.list_indexes() == [], "nothing was embedded or created"
    await mem.close()


async def test_search_messages_is_a_deprecated_alias(memory: Memory) -> None:
    # Issue 26: Mastra's searchMessages searches observation groups; ours was renamed, the old name warns.
    with pytest.warns(DeprecationWarning, match="semantic_search_messages"):
        old = await memory.search_messages(QUERY, resource_id="alice")
    new = await memory.semantic_search_messages(QUERY, resource_id="alice")
    assert ids(old.messages) == ids(new.messages)
