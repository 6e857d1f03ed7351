"""Bad input from the issue: each call raises a typed error and nothing already stored changes
(no message and no vector in any index)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from mastra_memory.errors import (
    ConfigError,
    FilterError,
    FilterValidationError,
    IndexDimensionMismatchError,
    IndexingError,
    ResourceScopeError,
    ThreadNotFoundError,
    ThreadOwnershipError,
    ValidationError,
)
from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

from .memory_helpers import CountingEmbedder, msg, state, ts

Call = Callable[[Memory], Awaitable[Any]]
QUERY = "alpha bananas"

CASES: list[tuple[str, Call, type[Exception], str]] = [
    (
        "wrong resource",
        lambda m: m.recall("A1", resource_id="B", vector_search_string=QUERY),
        ThreadOwnershipError,
        "thread A1 does not belong to the requested resource",
    ),
    (
        "unknown thread, thread scope",
        lambda m: m.recall(
            "nope",
            resource_id="A",
            vector_search_string=QUERY,
            thread_config={"semanticRecall": {"scope": "thread"}},
        ),
        ThreadNotFoundError,
        "nope",
    ),
    (
        "unknown thread, recall off",
        lambda m: m.recall("nope", resource_id="A", thread_config={"semanticRecall": False}),
        ThreadNotFoundError,
        "nope",
    ),
    (
        "resource scope, no resource",
        lambda m: m.recall("A1", vector_search_string=QUERY),
        ResourceScopeError,
        "resource_id",
    ),
    (
        "empty resource",
        lambda m: m.recall("A1", resource_id="", vector_search_string=QUERY),
        ValidationError,
        "resource_id",
    ),
    (
        "reserved metadata key",
        lambda m: m.recall("A1", filter={"metadata": {"constructor": 1}}),
        FilterValidationError,
        'invalid metadata filter key "constructor"',
    ),
    (
        "129-char metadata key",
        lambda m: m.recall("A1", filter={"metadata": {"k" * 129: 1}}),
        FilterValidationError,
        "invalid metadata filter key",
    ),
    (
        "nested metadata value",
        lambda m: m.recall("A1", filter={"metadata": {"k": {"a": 1}}}),
        FilterValidationError,
        'invalid metadata filter value for key "k"',
    ),
    (
        "list metadata value",
        lambda m: m.recall("A1", filter={"metadata": {"k": [1]}}),
        FilterValidationError,
        'invalid metadata filter value for key "k"',
    ),
    (
        "vector-style recall filter",
        lambda m: m.recall("A1", filter={"projectId": {"$eq": "a"}}),
        ValidationError,
        "filter accepts only date_range and metadata",
    ),
    (
        "negative page",
        lambda m: m.recall("A1", resource_id="A", vector_search_string=QUERY, page=-1),
        ValidationError,
        "page must be >= 0",
    ),
    ("negative per_page", lambda m: m.recall("A1", per_page=-5), ValidationError, "per_page must be >= 0"),
    (
        "page with per_page=False",
        lambda m: m.recall("A1", per_page=False, page=2),
        ValidationError,
        "page must be 0 when per_page is false",
    ),
    (
        "overflowing page",
        lambda m: m.recall("A1", per_page=1000, page=2**60),
        ValidationError,
        "page value too large",
    ),
    (
        "invalid thread_config",
        lambda m: m.recall("A1", thread_config={"semanticRecall": {"topK": -1}}),
        ConfigError,
        "topK",
    ),
    (
        "invalid semantic filter per call",
        lambda m: m.recall(
            "A1",
            resource_id="A",
            vector_search_string=QUERY,
            thread_config={"semanticRecall": {"filter": {"x": {"$regex": "(?i)a"}}}},
        ),
        FilterError,
        "Unsupported regex construct",
    ),
    (
        "duplicate ids in one save",
        lambda m: m.save_messages([msg("n1", "A1", "x", ts(20)), msg("n1", "A1", "y", ts(21))]),
        ValidationError,
        "duplicate message id 'n1'",
    ),
    (
        "duplicate of an existing id in one save",
        lambda m: m.save_messages([msg("a1", "A2", "moved", ts(20)), msg("a1", "A1", "back", ts(21))]),
        ValidationError,
        "duplicate message id 'a1'",
    ),
    (
        "message for an unknown thread",
        lambda m: m.save_messages([msg("n1", "A1", "x", ts(20)), msg("n2", "nope", "y", ts(21))]),
        ThreadNotFoundError,
        "nope",
    ),
    (
        "message resource differs from its thread's",
        lambda m: m.save_messages([msg("a2", "A1", "hijack", ts(2), resource_id="B")]),
        ValidationError,
        "resource",
    ),
    (
        "blank id to delete",
        lambda m: m.delete_messages(["a1", ""]),
        ValidationError,
        "message id must be a non-empty string",
    ),
    (
        "blank thread to delete",
        lambda m: m.delete_thread("  "),
        ValidationError,
        "thread_id must be a non-empty string",
    ),
    ("empty resource to reindex", lambda m: m.reindex(resource_id=""), ValidationError, "resource_id"),
    ("unknown thread to reindex", lambda m: m.reindex_thread("nope"), ThreadNotFoundError, "nope"),
    (
        "update of an unknown thread",
        lambda m: m.update_thread("nope", title="x"),
        ThreadNotFoundError,
        "nope",
    ),
]


@pytest.mark.parametrize(("call", "error", "fragment"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_bad_input_changes_nothing(
    scenario: Memory, call: Call, error: type[Exception], fragment: str
) -> None:
    before = await state(scenario)
    with pytest.raises(error) as info:
        await call(scenario)
    assert fragment in str(info.value)
    assert await state(scenario) == before


async def test_ownership_error_never_names_the_owner(scenario: Memory) -> None:
    with pytest.raises(ThreadOwnershipError) as info:
        await scenario.recall("B1", resource_id="A")
    assert str(info.value) == "thread B1 does not belong to the requested resource"


class WrongDimension(CountingEmbedder):
    """A provider that answers with 32-dimensional vectors where the index holds 64."""

    def __init__(self) -> None:
        super().__init__(32, "other-model/32")


async def test_wrong_dimension_for_an_existing_index(storage: SQLiteStorage, vector: SQLiteVector) -> None:
    options: dict[str, Any] = {
        "lastMessages": 5,
        "semanticRecall": {"indexName": "shared_idx", "scope": "thread"},
    }
    good = Memory(storage=storage, vector=vector, embedder="hash/64", options=options)
    await good.create_thread("r", "t")
    await good.save_messages([msg("m1", "t", "hello world", ts(1)), msg("m2", "t", "second", ts(2))])
    before = await state(good)
    bad = Memory(storage=storage, vector=vector, embedder=WrongDimension(), options=options)

    with pytest.raises(IndexDimensionMismatchError) as info:
        await bad.recall("t", vector_search_string="hello")
    text = str(info.value)
    assert "shared_idx" in text
    assert "64" in text
    assert "32" in text
    assert await state(good) == before

    with pytest.raises(IndexingError) as saving:
        await bad.save_messages([msg("m2", "t", "second", ts(2))])  # re-save of an indexed message
    assert isinstance(saving.value.__cause__, IndexDimensionMismatchError)
    assert await state(good) == before  # m2 keeps its vector: nothing was deleted before the check

    with pytest.raises(IndexDimensionMismatchError):
        await bad.reindex_thread("t")
    assert await state(good) == before
