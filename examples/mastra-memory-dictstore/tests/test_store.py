"""The store itself: spaces, exact filtered search, and registration through the entry point."""

from __future__ import annotations

import pytest
from mastra_memory_dictstore.settings import DictStoreSettings
from mastra_memory_dictstore.store import DictStoreVector

from mastra_memory.errors import UnsupportedFilterError

pytestmark = pytest.mark.asyncio


async def test_stores_of_one_space_share_indexes_and_private_stores_do_not() -> None:
    first = DictStoreVector(DictStoreSettings(space="unit-shared"))
    second = DictStoreVector(DictStoreSettings(space="unit-shared"))
    private = DictStoreVector()
    await first.create_index("docs", 2)
    await first.upsert("docs", [[1.0, 0.0]], [{"k": 1}], ["a"])
    assert [h.id for h in await second.query("docs", [1.0, 0.0])] == ["a"]
    assert await private.list_indexes() == []
    DictStoreVector.drop_space("unit-shared")
    assert await DictStoreVector(DictStoreSettings(space="unit-shared")).list_indexes() == []


async def test_filtered_search_returns_every_match_up_to_top_k() -> None:
    store = DictStoreVector()
    await store.create_index("docs", 2, metric="euclidean")
    await store.upsert(
        "docs",
        [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0]],
        [{"k": 1}, {"k": 2}, {"k": 1}, {"k": 1}],
        ["a", "b", "c", "d"],
    )
    hits = await store.query("docs", [1.0, 0.0], top_k=2, filter={"k": 1})
    assert [(h.id, round(h.score, 6)) for h in hits] == [("a", 1.0), ("c", 0.5)]
    listed = await store.query("docs", None, top_k=10, filter={"k": {"$ne": 1}})
    assert [(h.id, h.score) for h in listed] == [("b", 0.0)]
    with pytest.raises(UnsupportedFilterError):
        await store.query("docs", [1.0, 0.0], filter={"k": {"$size": 1}})


async def test_returned_metadata_is_a_copy() -> None:
    store = DictStoreVector()
    await store.create_index("docs", 2)
    await store.upsert("docs", [[1.0, 0.0]], [{"tags": ["x"]}], ["a"])
    [hit] = await store.query("docs", [1.0, 0.0])
    hit.metadata["tags"].append("y")
    [again] = await store.query("docs", [1.0, 0.0])
    assert again.metadata == {"tags": ["x"]}
