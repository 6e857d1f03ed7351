"""docs/spec.md §5.3: every ``recall()`` parameter, and the §7 traps of the read path."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from mastra_memory.embedders import get_embedding_cache
from mastra_memory.errors import (
    FilterValidationError,
    ResourceScopeError,
    SemanticRecallOffWarning,
    ThreadNotFoundError,
    ThreadOwnershipError,
    ValidationError,
)
from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

from .memory_helpers import CountingEmbedder, ids, msg, ts

QUERY = "alpha bananas"


# ----------------------------------------------------------------------------- paging and order


@pytest.fixture
async def history(storage: SQLiteStorage) -> Memory:
    """One thread with ten messages m01..m10, one second apart; no semantic recall."""
    memory = Memory(storage=storage, options={"lastMessages": 3})
    await memory.create_thread("r", "t")
    await memory.save_messages([msg(f"m{i:02d}", "t", f"text {i}", ts(i)) for i in range(1, 11)])
    return memory


async def test_default_page_is_the_newest_last_messages_in_chronological_order(history: Memory) -> None:
    result = await history.recall("t")
    assert ids(result.messages) == ["m08", "m09", "m10"]
    assert (result.total, result.page, result.per_page, result.has_more) == (10, 0, 3, True)


async def test_page_one_is_the_next_older_block(history: Memory) -> None:
    result = await history.recall("t", per_page=3, page=1)
    assert ids(result.messages) == ["m05", "m06", "m07"]
    last = await history.recall("t", per_page=3, page=3)
    assert ids(last.messages) == ["m01"]
    assert last.has_more is False


async def test_per_page_false_returns_everything(history: Memory) -> None:
    result = await history.recall("t", per_page=False)
    assert ids(result.messages) == [f"m{i:02d}" for i in range(1, 11)]
    assert (result.per_page, result.has_more, result.total) == (False, False, 10)


async def test_per_page_overrides_last_messages(history: Memory) -> None:
    assert ids((await history.recall("t", per_page=5)).messages) == ["m06", "m07", "m08", "m09", "m10"]
    assert ids((await history.recall("t", per_page=0)).messages) == []


@pytest.mark.parametrize("direction", ["ASC", "asc"])
async def test_order_by_asc_selects_the_oldest(history: Memory, direction: str) -> None:
    result = await history.recall("t", order_by={"field": "createdAt", "direction": direction})
    assert ids(result.messages) == ["m01", "m02", "m03"]


async def test_order_by_desc_is_used_for_selection_and_output(history: Memory) -> None:
    result = await history.recall(
        "t", order_by={"field": "created_at", "direction": "DESC"}, per_page=2, page=1
    )
    assert ids(result.messages) == ["m08", "m07"]


async def test_include_total_false(history: Memory) -> None:
    result = await history.recall("t", include_total=False)
    assert result.total is None
    assert result.has_more is True


async def test_date_range_filter(history: Memory) -> None:
    flt: dict[str, Any] = {"dateRange": {"start": ts(3), "end": ts(6)}}
    assert ids((await history.recall("t", per_page=False, filter=flt)).messages) == [
        "m03",
        "m04",
        "m05",
        "m06",
    ]
    flt = {
        "dateRange": {
            "start": ts(3),
            "end": "2024-01-01T00:00:06Z",
            "startExclusive": True,
            "endExclusive": True,
        }
    }
    assert ids((await history.recall("t", per_page=False, filter=flt)).messages) == ["m04", "m05"]
    flt = {"date_range": {"start": ts(9)}}
    assert ids((await history.recall("t", per_page=False, filter=flt)).messages) == ["m09", "m10"]


async def test_metadata_filter_matches_message_metadata_strictly(storage: SQLiteStorage) -> None:
    memory = Memory(storage=storage, options={"lastMessages": 10})
    await memory.create_thread("r", "t")

    def with_meta(id: str, n: int, meta: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": id,
            "thread_id": "t",
            "role": "user",
            "created_at": ts(n),
            "content": {"format": 2, "parts": [{"type": "text", "text": id}], "metadata": meta},
        }

    await memory.save_messages(
        [
            with_meta(
                "bill", 1, {"category": "billing", "escalated": True, "priority": 2, "archivedAt": None}
            ),
            with_meta(
                "bill_one", 2, {"category": "billing", "escalated": 1, "priority": 2.0, "archivedAt": None}
            ),
            with_meta("bill_nokey", 3, {"category": "billing", "escalated": True, "priority": 2}),
            with_meta("other", 4, {"category": "sales"}),
        ]
    )
    seed_filter = {"metadata": {"category": "billing", "escalated": True, "priority": 2, "archivedAt": None}}
    assert ids((await memory.recall("t", filter=seed_filter)).messages) == ["bill"]
    assert ids((await memory.recall("t", filter={"metadata": {"priority": 2}})).messages) == [
        "bill",
        "bill_one",
        "bill_nokey",
    ]
    assert ids((await memory.recall("t", filter={"metadata": {"escalated": 1}})).messages) == ["bill_one"]
    assert ids((await memory.recall("t", filter={"metadata": {}})).messages) == [
        "bill",
        "bill_one",
        "bill_nokey",
        "other",
    ]


# ----------------------------------------------------------------------------- includes


async def test_caller_include_is_honoured_with_defaults_zero(scenario: Memory) -> None:
    result = await scenario.recall("A2", resource_id="A", include=[{"id": "a2"}])
    assert ids(result.messages) == ["a2", "a4"]  # a2 alone (0/0) plus the newest history message
    result = await scenario.recall(
        "A2", resource_id="A", include=[{"id": "a2", "withPreviousMessages": 1, "withNextMessages": 1}]
    )
    assert ids(result.messages) == ["a1", "a2", "a3", "a4"]


async def test_include_thread_hint_is_ignored_for_the_window(scenario: Memory) -> None:
    result = await scenario.recall(
        "A2",
        resource_id="A",
        include=[{"id": "a2", "threadId": "A2", "withPreviousMessages": 1, "withNextMessages": 1}],
    )
    assert ids(result.messages) == ["a1", "a2", "a3", "a4"]


async def test_include_never_crosses_resources(scenario: Memory) -> None:
    result = await scenario.recall(
        "B1", resource_id="B", include=[{"id": "a2", "withPreviousMessages": 2, "withNextMessages": 2}]
    )
    assert ids(result.messages) == ["b1"]
    result = await scenario.recall(
        "B1",
        resource_id="B",
        per_page=0,
        include=[{"id": "a2", "withPreviousMessages": 2, "withNextMessages": 2}],
        thread_config={"semanticRecall": False},
    )
    assert ids(result.messages) == []


async def test_per_page_zero_is_windows_only_and_false_is_the_whole_thread(scenario: Memory) -> None:
    only = await scenario.recall("A1", resource_id="A", per_page=0, include=[{"id": "a2"}])
    assert ids(only.messages) == ["a2"]
    assert (only.total, only.has_more) == (0, False)
    everything = await scenario.recall("A1", resource_id="A", per_page=False, include=[{"id": "a4"}])
    assert ids(everything.messages) == ["a1", "a2", "a3", "a4"]


async def test_history_off_with_include_uses_the_include_only_path(scenario: Memory) -> None:
    result = await scenario.recall(
        "A1", resource_id="A", include=[{"id": "a3"}], thread_config={"lastMessages": False}
    )
    assert ids(result.messages) == ["a3"]
    assert result.per_page == 0


async def test_caller_include_merges_with_hits_and_the_wider_window_wins(scenario: Memory) -> None:
    result = await scenario.recall(
        "A2",
        resource_id="A",
        vector_search_string=QUERY,
        include=[{"id": "a2", "withPreviousMessages": 0, "withNextMessages": 0}],
        thread_config={"lastMessages": False},
    )
    assert ids(result.messages) == ["a1", "a2", "a3"]  # the hit's ±1 beats the caller's 0/0
    result = await scenario.recall(
        "A2",
        resource_id="A",
        vector_search_string="alpha apples",
        include=[{"id": "a3", "withNextMessages": 0}],
        thread_config={"lastMessages": False, "semanticRecall": {"messageRange": 0}},
    )
    assert ids(result.messages) == ["a1", "a3"]


@pytest.mark.parametrize(
    ("include", "fragment"),
    [
        ([{"id": ""}], "include[0].id must be a non-empty string"),
        (
            [{"id": "a2", "withPreviousMessages": -1}],
            "include[0].with_previous_messages must be an integer >= 0",
        ),
        ([{"id": "a2", "withNextMessages": True}], "include[0].with_next_messages must be an integer >= 0"),
        ([{"id": "a2", "bogus": 1}], "include[0] has unknown keys: bogus"),
        ({"id": "a2"}, "include must be a list of include items"),
    ],
)
async def test_invalid_include_items(scenario: Memory, include: Any, fragment: str) -> None:
    with pytest.raises(ValidationError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        await scenario.recall("A1", resource_id="A", include=include)


# ----------------------------------------------------------------------------- scope and ownership


async def test_missing_thread_in_thread_scope_raises(scenario: Memory) -> None:
    with pytest.raises(ThreadNotFoundError):
        await scenario.recall("nope", resource_id="A", thread_config={"semanticRecall": False})
    with pytest.raises(ThreadNotFoundError):
        await scenario.recall(
            "nope",
            resource_id="A",
            vector_search_string=QUERY,
            thread_config={"semanticRecall": {"scope": "thread"}},
        )


async def test_missing_thread_is_allowed_in_resource_scope(scenario: Memory) -> None:
    result = await scenario.recall("new-thread", resource_id="A", vector_search_string=QUERY)
    assert ids(result.messages) == ["a1", "a2", "a3"]


async def test_ownership_error_does_not_name_the_owner(scenario: Memory) -> None:
    with pytest.raises(ThreadOwnershipError) as info:
        await scenario.recall("A1", resource_id="B")
    assert "A1" in str(info.value)
    assert "'A'" not in str(info.value)
    assert " A " not in f" {info.value} "


async def test_empty_resource_id_is_rejected(scenario: Memory) -> None:
    with pytest.raises(ValidationError, match="empty string is not 'no resource'"):
        await scenario.recall("A1", resource_id="", vector_search_string=QUERY)
    with pytest.raises(ValidationError):
        await scenario.recall("A1", resource_id="   ")


@pytest.mark.parametrize("thread_id", ["", "  ", None, 3])
async def test_thread_id_is_required(scenario: Memory, thread_id: Any) -> None:
    with pytest.raises(ValidationError, match="thread_id must be a non-empty string"):
        await scenario.recall(thread_id)


async def test_resource_scope_without_resource_raises_but_thread_scope_works(scenario: Memory) -> None:
    with pytest.raises(ResourceScopeError):
        await scenario.recall("A1", vector_search_string=QUERY)
    result = await scenario.recall(
        "A1", vector_search_string=QUERY, thread_config={"semanticRecall": {"scope": "thread"}}
    )
    assert ids(result.messages) == ["a1", "a2", "a3"]
    # without a query, no vector search happens and no resource is needed
    assert ids((await scenario.recall("A1")).messages) == ["a3"]


async def test_early_return_touches_nothing(storage: SQLiteStorage) -> None:
    memory = Memory(storage=storage, options={"lastMessages": 0})
    result = await memory.recall("no-such-thread", resource_id="someone")  # no ThreadNotFoundError: no I/O
    assert (result.messages, result.total, result.per_page, result.has_more) == ([], 0, 0, False)


# ----------------------------------------------------------------------------- semantic recall switches


@pytest.fixture
async def counted(storage: SQLiteStorage, vector: SQLiteVector) -> tuple[Memory, CountingEmbedder]:
    embedder = CountingEmbedder(256)
    memory = Memory(storage=storage, vector=vector, embedder=embedder, options={"lastMessages": 1})
    await memory.create_thread("r", "t")
    await memory.save_messages(
        [msg("x1", "t", "the project deadline is friday", ts(1)), msg("x2", "t", "lunch menu", ts(2))],
        thread_config={"semanticRecall": True},
    )
    return memory, embedder


async def test_vector_search_string_is_ignored_when_semantic_recall_is_off(
    counted: tuple[Memory, CountingEmbedder],
) -> None:
    memory, embedder = counted
    before = embedder.calls.count
    with pytest.warns(SemanticRecallOffWarning):  # ignored, as in Mastra, but said (issue 29)
        result = await memory.recall("t", resource_id="r", vector_search_string="deadline")
    assert ids(result.messages) == ["x2"]
    assert embedder.calls.count == before
    assert result.hits == []


async def test_semantic_recall_enabled_per_call_through_thread_config(
    counted: tuple[Memory, CountingEmbedder],
) -> None:
    memory, _ = counted
    result = await memory.recall(
        "t",
        resource_id="r",
        vector_search_string="What did we discuss about the project deadline?",
        thread_config={"semanticRecall": {"topK": 1, "messageRange": 0}},
    )
    assert ids(result.messages) == ["x1", "x2"]
    assert [h.message_id for h in result.hits] == ["x1"]


async def test_semantic_recall_false_per_call_switches_it_off() -> None:
    embedder = CountingEmbedder(16)
    memory = Memory(
        storage=SQLiteStorage(":memory:"),
        vector=SQLiteVector(":memory:"),
        embedder=embedder,
        options={"lastMessages": 1, "semanticRecall": {"topK": 2}},
    )
    await memory.create_thread("r", "t")
    await memory.save_messages([msg("x1", "t", "first", ts(1)), msg("x2", "t", "second", ts(2))])
    calls = embedder.calls.count
    with pytest.warns(SemanticRecallOffWarning):
        result = await memory.recall(
            "t", vector_search_string="first", thread_config={"semanticRecall": False}
        )
    assert ids(result.messages) == ["x2"]
    assert embedder.calls.count == calls  # no embedding, and no resource needed


async def test_blank_query_does_no_vector_search(counted: tuple[Memory, CountingEmbedder]) -> None:
    memory, embedder = counted
    before = embedder.calls.count
    result = await memory.recall("t", vector_search_string="   ", thread_config={"semanticRecall": True})
    assert ids(result.messages) == ["x2"]
    assert embedder.calls.count == before


async def test_long_query_is_chunked_and_each_chunk_searched(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    embedder = CountingEmbedder(32)
    # Mode vector: the per-chunk union of docs/spec.md §5.3 step 7.5 (hybrid cuts the fused list to topK).
    recall = {"topK": 1, "messageRange": 0, "scope": "thread", "mode": "vector"}
    memory = Memory(
        storage=storage,
        vector=vector,
        embedder=embedder,
        options={"lastMessages": False, "semanticRecall": recall},
    )
    await memory.create_thread("r", "t")
    first, last = "apples " * 3000, "zebras " * 3000
    await memory.save_messages([msg("p", "t", first.strip(), ts(1)), msg("q", "t", last.strip(), ts(2))])
    embedder.calls.texts.clear()
    get_embedding_cache().clear()  # so every chunk of the query reaches the provider
    query = (first + last).strip()
    result = await memory.recall("t", vector_search_string=query)
    [chunks] = embedder.calls.texts  # one batched call for the query's chunks
    assert len(chunks) == 3
    assert " ".join(chunks) == query
    assert ids(result.messages) == ["p", "q"]  # top_k=1 per chunk embedding, unioned
    assert {h.message_id for h in result.hits} == {"p", "q"}


async def test_usage_counts_provider_tokens_of_uncached_calls(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    class TokenEmbedder(CountingEmbedder):
        async def embed_many(self, texts: Any, **options: Any) -> Any:
            result = await super().embed_many(texts, **options)
            return type(result)(result.embeddings, 5 * len(texts))

    memory = Memory(
        storage=storage,
        vector=vector,
        embedder=TokenEmbedder(16, "tokens/16"),
        options={"semanticRecall": {"scope": "thread"}},
    )
    await memory.create_thread("r", "t")
    saved = await memory.save_messages([msg("x", "t", "one", ts(1)), msg("y", "t", "two", ts(2))])
    assert saved.usage is not None
    assert saved.usage.tokens == 10
    first = await memory.recall("t", vector_search_string="three")
    assert first.usage is not None
    assert first.usage.tokens == 5
    again = await memory.recall("t", vector_search_string="three")
    assert again.usage is not None
    assert again.usage.tokens == 0  # cached


# ------------------------------------------------------------------- semantic filter on thread metadata


@pytest.fixture
async def projects(storage: SQLiteStorage, vector: SQLiteVector) -> Memory:
    """Resource u with four threads whose metadata carry projectId/category/priority."""
    memory = Memory(
        storage=storage,
        vector=vector,
        embedder="hash/64",
        options={"lastMessages": False, "semanticRecall": {"topK": 10, "messageRange": 0}},
    )
    threads: dict[str, dict[str, Any]] = {
        "pa1": {"projectId": "project-a", "category": "work", "priority": 5},
        "pa2": {"projectId": "project-a", "category": "personal", "priority": 1},
        "pb1": {"projectId": "project-b", "category": "work", "priority": 4},
        "pc1": {"projectId": "project-c", "category": "research"},
    }
    for n, (tid, meta) in enumerate(threads.items(), start=1):
        await memory.create_thread("u", tid, metadata=meta)
        await memory.save_messages([msg(f"m_{tid}", tid, f"status report {tid}", ts(n))])
    return memory


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        ({"projectId": {"$eq": "project-a"}}, ["m_pa1", "m_pa2"]),
        ({"projectId": "project-b"}, ["m_pb1"]),
        ({"category": {"$in": ["work", "research"]}}, ["m_pa1", "m_pb1", "m_pc1"]),
        ({"projectId": {"$eq": "project-a"}, "category": {"$in": ["work", "personal"]}}, ["m_pa1", "m_pa2"]),
        ({"$and": [{"projectId": {"$eq": "project-a"}}, {"priority": {"$gte": 3}}]}, ["m_pa1"]),
        ({"$or": [{"projectId": "project-b"}, {"category": "research"}]}, ["m_pb1", "m_pc1"]),
        ({"priority": {"$gt": 1}}, ["m_pa1", "m_pb1"]),
        ({"priority": {"$lt": 5}}, ["m_pa2", "m_pb1"]),
        ({"priority": {"$lte": 4, "$gte": 4}}, ["m_pb1"]),
        ({"priority": {"$ne": 5}}, ["m_pa2", "m_pb1", "m_pc1"]),  # a missing field matches $ne
        ({"category": {"$nin": ["work"]}}, ["m_pa2", "m_pc1"]),
        ({"projectId": "project-z"}, []),
    ],
)
async def test_semantic_filter_on_thread_metadata(
    projects: Memory, flt: dict[str, Any], expected: list[str]
) -> None:
    result = await projects.recall(
        "pa1",
        resource_id="u",
        vector_search_string="status report",
        thread_config={"semanticRecall": {"filter": flt}},
    )
    assert sorted(ids(result.messages)) == expected  # exact: what is excluded matters as much
    assert sorted(h.message_id for h in result.hits) == expected


async def test_semantic_filter_can_only_narrow_the_scope(projects: Memory) -> None:
    await projects.create_thread("other", "ox", metadata={"projectId": "project-a"})
    await projects.save_messages([msg("m_ox", "ox", "status report ox", ts(9))])
    result = await projects.recall(
        "pa1",
        resource_id="u",
        vector_search_string="status report",
        thread_config={
            "semanticRecall": {"filter": {"$or": [{"projectId": "project-a"}, {"resource_id": "other"}]}}
        },
    )
    assert sorted(ids(result.messages)) == ["m_pa1", "m_pa2"]


async def test_thread_metadata_is_captured_at_write_time_until_reindex(projects: Memory) -> None:
    await projects.update_thread("pc1", metadata={"projectId": "project-new"})
    flt = {"semanticRecall": {"filter": {"projectId": "project-new"}}}
    stale = await projects.recall(
        "pa1", resource_id="u", vector_search_string="status report", thread_config=flt
    )
    assert ids(stale.messages) == []
    assert await projects.reindex_thread("pc1") == 1
    fresh = await projects.recall(
        "pa1", resource_id="u", vector_search_string="status report", thread_config=flt
    )
    assert ids(fresh.messages) == ["m_pc1"]
    old = await projects.recall(
        "pa1",
        resource_id="u",
        vector_search_string="status report",
        thread_config={"semanticRecall": {"filter": {"projectId": "project-c"}}},
    )
    assert ids(old.messages) == []


# ----------------------------------------------------------------------------- the two filter languages


@pytest.mark.parametrize(
    "flt",
    [
        {"projectId": {"$eq": "project-a"}},
        {"thread_id": "A1"},
        {"$and": [{"metadata": {}}]},
        {"metadata": {"category": {"$eq": "billing"}}},
        {"metadata": {"__proto__": 1}},
        {"metadata": {"a" * 129: 1}},
        {"metadata": {"bad-key": 1}},
        {"metadata": {"tags": ["a"]}},
        {"metadata": {"n": float("nan")}},
        {"dateRange": {"start": "yesterday"}},
        {"dateRange": {"start": datetime(2024, 1, 1)}},  # naive
        "projectId = 'a'",
    ],
)
async def test_recall_filter_is_the_storage_filter_and_rejects_anything_else_before_io(
    storage: SQLiteStorage, vector: SQLiteVector, flt: Any
) -> None:
    embedder = CountingEmbedder(16)
    memory = Memory(
        storage=storage, vector=vector, embedder=embedder, options={"semanticRecall": {"scope": "thread"}}
    )
    await memory.create_thread("r", "t")
    with pytest.raises(ValidationError):
        await memory.recall("t", vector_search_string="query", filter=flt)
    assert embedder.calls.count == 0  # raised before any embedding or vector I/O
    assert await vector.list_indexes() == []


async def test_metadata_filter_errors_are_filter_validation_errors(scenario: Memory) -> None:
    with pytest.raises(FilterValidationError, match='invalid metadata filter key "__proto__"'):
        await scenario.recall("A1", filter={"metadata": {"__proto__": 1}})
    with pytest.raises(FilterValidationError, match='invalid metadata filter value for key "k"'):
        await scenario.recall("A1", filter={"metadata": {"k": {"$eq": 1}}})


async def test_vector_style_filter_raises_even_on_the_early_return_path(storage: SQLiteStorage) -> None:
    memory = Memory(storage=storage, options={"lastMessages": 0})
    with pytest.raises(ValidationError, match=r"vector filters belong in semantic_recall\.filter"):
        await memory.recall("t", filter={"projectId": "a"})


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"page": -1}, "page must be >= 0"),
        ({"per_page": -1}, "per_page must be >= 0"),
        ({"per_page": True}, "per_page must be >= 0"),
        ({"per_page": False, "page": 1}, "page must be 0 when per_page is false"),
        ({"per_page": 10, "page": 2**62}, "page value too large"),
        ({"order_by": {"field": "updatedAt"}}, "order_by.field"),
        ({"order_by": {"direction": "UP"}}, "order_by.direction"),
    ],
)
async def test_paging_arguments_out_of_range_raise_before_io(
    storage: SQLiteStorage, vector: SQLiteVector, kwargs: dict[str, Any], fragment: str
) -> None:
    embedder = CountingEmbedder(16)
    memory = Memory(
        storage=storage, vector=vector, embedder=embedder, options={"semanticRecall": {"scope": "thread"}}
    )
    await memory.create_thread("r", "t")
    with pytest.raises(ValidationError, match=fragment):
        await memory.recall("t", vector_search_string="query", **kwargs)
    assert embedder.calls.count == 0


async def test_hits_of_vanished_messages_never_surface(scenario: Memory) -> None:
    # The message disappears from storage behind Memory's back, so its vector is orphaned.
    await scenario.storage.delete_messages(["a2"])
    result = await scenario.recall("A2", resource_id="A", vector_search_string=QUERY)
    assert ids(result.messages) == ["a4"]
    assert result.hits == []
