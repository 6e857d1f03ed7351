"""A memory filter addresses thread metadata at the top level of each vector's metadata (docs/spec.md §5.4):
``{"project": ...}`` matches, and ``{"metadata.project": ...}`` -- which could only ever match nothing, as
it silently does in Mastra -- is refused with a ``FilterError`` that says to drop the prefix, before
anything is embedded (docs/spec.md §5.3 step 7.3, [Δ]; issue 29)."""

from __future__ import annotations

from typing import Any

import pytest

from mastra_memory.errors import FilterError
from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

from .memory_helpers import CountingEmbedder

QUESTION = "hotel check-in"


@pytest.fixture
def embedder() -> CountingEmbedder:
    return CountingEmbedder()


@pytest.fixture
async def memory(embedder: CountingEmbedder) -> Memory:
    memory = Memory(
        storage=SQLiteStorage(":memory:"),
        vector=SQLiteVector(":memory:"),
        embedder=embedder,
        options={"semanticRecall": {"topK": 3, "messageRange": 0}},
    )
    await memory.create_thread(resource_id="u", thread_id="kyoto", metadata={"project": "travel"})
    await memory.create_thread(resource_id="u", thread_id="home", metadata={"project": "house"})
    await memory.save_messages(
        [
            {"thread_id": "kyoto", "role": "user", "content": "Hotel check-in April 3"},
            {"thread_id": "home", "role": "user", "content": "Hotel for the plumber April 3"},
        ]
    )
    return memory


async def recall_with(memory: Memory, flt: dict[str, Any]) -> list[str | None]:
    result = await memory.recall(
        "question",
        resource_id="u",
        vector_search_string=QUESTION,
        thread_config={"semanticRecall": {"filter": flt}},
    )
    return [hit.thread_id for hit in result.hits]


@pytest.mark.parametrize("flt", [{"project": "travel"}, {"project": {"$in": ["travel", "x"]}}])
async def test_thread_metadata_is_filtered_by_its_top_level_key(memory: Memory, flt: dict[str, Any]) -> None:
    assert await recall_with(memory, flt) == ["kyoto"]


@pytest.mark.parametrize(
    ("flt", "field", "suggested"),
    [
        ({"metadata.project": "travel"}, "metadata.project", "project"),
        ({"$or": [{"role": "user"}, {"metadata.project": {"$ne": "x"}}]}, "metadata.project", "project"),
        ({"$not": {"metadata.a.b": {"$exists": True}}}, "metadata.a.b", "a.b"),
        ({"metadata": "x"}, "metadata", "<key>"),
    ],
)
async def test_a_metadata_prefix_is_refused_before_anything_is_embedded(
    memory: Memory, embedder: CountingEmbedder, flt: dict[str, Any], field: str, suggested: str
) -> None:
    before = embedder.calls.count
    with pytest.raises(FilterError) as caught:
        await recall_with(memory, flt)
    error = caught.value
    assert error.id == "MASTRA_MEMORY_FILTER_METADATA_PREFIX"
    assert error.details == {"field": field, "suggested": suggested}
    assert f"write {suggested!r}, not {field!r}" in str(error)
    assert embedder.calls.count == before


async def test_semantic_search_messages_refuses_it_too(memory: Memory) -> None:
    with pytest.raises(FilterError, match=r"write 'project', not 'metadata.project'"):
        await memory.semantic_search_messages(
            QUESTION, resource_id="u", filter={"metadata.project": "travel"}
        )
    found = await memory.semantic_search_messages(QUESTION, resource_id="u", filter={"project": "travel"})
    assert [hit.thread_id for hit in found.hits] == ["kyoto"]


async def test_a_field_inside_elem_match_is_relative_to_the_element(memory: Memory) -> None:
    """``$elemMatch`` conditions address each list element, so a ``metadata`` key there is not the prefix."""
    assert await recall_with(memory, {"tags": {"$elemMatch": {"metadata": "x"}}}) == []
