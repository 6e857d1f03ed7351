"""``MastraVector`` accepts a filter as a dict or as an already parsed AST node (docs/spec.md §2.7, §3.1).

Memory parses a configured filter once and combines it with the thread or resource scope as nodes; the
vector store must translate such a node as it is (parsing only dicts) and give the same answer as for
the equivalent dict.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from mastra_memory.errors import FilterError, ValidationError
from mastra_memory.filters import Node
from mastra_memory.filters.ast import And, Comparison
from mastra_memory.filters.parse import parse
from mastra_memory.stores.sqlite.store import SQLiteVector

IDX = "idx"
METADATA = [
    {"thread_id": "t1", "kind": "note"},
    {"thread_id": "t1", "kind": "task"},
    {"thread_id": "t2", "kind": "note"},
]


@pytest.fixture
async def store() -> AsyncIterator[SQLiteVector]:
    vector = SQLiteVector(url=":memory:")
    await vector.create_index(IDX, 2)
    await vector.upsert(IDX, [[1.0, 0.0], [0.9, 0.1], [0.8, 0.2]], METADATA, ["a", "b", "c"])
    yield vector
    await vector.close()


def _scoped(configured: dict[str, object], thread_id: str) -> Node:
    """What Memory does: parse the configured filter once and AND the scope onto it as a node."""
    node = parse(configured)
    assert node is not None
    return And((node, Comparison(("thread_id",), "$eq", thread_id)))


async def test_query_takes_a_parsed_node_and_matches_the_dict(store: SQLiteVector) -> None:
    by_node = await store.query(IDX, [1.0, 0.0], top_k=10, filter=_scoped({"kind": "note"}, "t1"))
    by_dict = await store.query(IDX, [1.0, 0.0], top_k=10, filter={"kind": "note", "thread_id": "t1"})
    assert [r.id for r in by_node] == [r.id for r in by_dict] == ["a"]


async def test_update_and_delete_take_a_parsed_node(store: SQLiteVector) -> None:
    await store.update_vector(IDX, filter=_scoped({"kind": "note"}, "t2"), update={"metadata": {"x": 1}})
    hits = await store.query(IDX, None, top_k=10, filter=parse({"x": 1}))
    assert [r.id for r in hits] == ["c"]
    await store.delete_vectors(IDX, filter=_scoped({"kind": "task"}, "t1"))
    remaining = await store.query(IDX, None, top_k=10)
    assert sorted(r.id for r in remaining) == ["a", "c"]


async def test_dicts_are_still_validated_and_empty_dicts_still_rejected(store: SQLiteVector) -> None:
    with pytest.raises(FilterError):
        await store.query(IDX, [1.0, 0.0], filter={"kind": {"$bogus": 1}})
    with pytest.raises(ValidationError, match="empty filter"):
        await store.delete_vectors(IDX, filter={})
