"""Hybrid recall (``semanticRecall.mode: "hybrid"``) on LanceDB: the texts' sibling table (lexical.py) is
written, searched with Lance's native full-text search and deleted with the vectors, never listed as an
index, and dropped with its vector table; a filter SQL cannot decide is resolved by the reference evaluator,
as on the vector side. The kit's lexical domain covers scope, filters and hostile text."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import lancedb
import pyarrow as pa
import pytest
from mastra_memory.filters import parse
from mastra_memory.memory import Memory

from mastra_memory_lancedb import lexical as lexical_module
from mastra_memory_lancedb import store as store_module
from mastra_memory_lancedb.lexical import LEXICAL_SUFFIX, query_words
from mastra_memory_lancedb.store import LanceDBVector


@pytest.fixture
async def vector(tmp_path: Path) -> AsyncIterator[LanceDBVector]:
    store = LanceDBVector(str(tmp_path / "lance"))
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
async def memory(vector: LanceDBVector, tmp_path: Path) -> AsyncIterator[Memory]:
    memory = Memory(
        storage=f"sqlite:///{tmp_path / 'memory.db'}",
        vector=vector,
        embedder="hash/64",
        options={"lastMessages": False, "semanticRecall": {"topK": 3, "messageRange": 0, "mode": "hybrid"}},
    )
    try:
        yield memory
    finally:
        await memory.close()


async def _seed(memory: Memory) -> None:
    await memory.create_thread("ada", "t1", metadata={"tags": ["home", "pets"]})
    await memory.create_thread("ada", "t2", metadata={"tags": ["work"]})
    await memory.save_messages(
        [
            {
                "id": "m1",
                "thread_id": "t1",
                "role": "user",
                "content": "Biscuit the grey cat hides under the sofa",
            },
            {"id": "m2", "thread_id": "t1", "role": "assistant", "content": "Pottery class is on Tuesdays"},
            {"id": "m3", "thread_id": "t2", "role": "user", "content": "The grey report is due in May"},
        ]
    )
    await memory.settled(timeout=60)


async def _texts(path: Path, name: str) -> list[str]:
    db = await lancedb.connect_async(str(path))
    table = await db.open_table(name + LEXICAL_SUFFIX)
    return sorted((await table.query().select(["id"]).to_arrow())["id"].to_pylist())


async def test_hybrid_recall_finds_by_words_and_cleans_up(
    memory: Memory, vector: LanceDBVector, tmp_path: Path
) -> None:
    await _seed(memory)
    [name] = await vector.list_indexes()  # the sibling is no index
    lance = tmp_path / "lance"

    result = await memory.recall(
        "t1", resource_id="ada", vector_search_string="where does Biscuit hide?", per_page=0
    )
    assert result.hits[0].message_id == "m1"
    assert await _texts(lance, name) == ["m1", "m2", "m3"]

    await memory.update_messages([{"id": "m2", "content": "Pottery class moved to Thursdays"}])
    await memory.settled(timeout=60)
    moved = await memory.recall("t1", resource_id="ada", vector_search_string="thursday", per_page=0)
    assert moved.hits[0].message_id == "m2"  # stemmed: "Thursdays" is found as "thursday"

    await memory.delete_messages(["m1"])
    assert await _texts(lance, name) == ["m2", "m3"]
    await memory.delete_thread("t1")
    assert await _texts(lance, name) == ["m3"]

    await vector.delete_index(name)
    db = await lancedb.connect_async(str(lance))
    assert (await db.list_tables()).tables == []


async def test_a_filter_sql_cannot_decide_is_exact_on_the_lexical_side(
    memory: Memory, vector: LanceDBVector
) -> None:
    await _seed(memory)
    [name] = await vector.list_indexes()
    index = vector.lexical_index()
    # $contains is emulated (SQL narrows, the reference evaluator decides), as on the vector side.
    flt = parse({"resource_id": "ada", "thread_id": {"$contains": "1"}})
    assert flt is not None

    hits = await index.search(name, "grey", top_k=5, flt=flt)

    assert [h.id for h in hits] == ["m1"]
    assert await index.delete(name, flt) == 2
    assert [h.id for h in await index.search(name, "grey", top_k=5, flt=None)] == ["m3"]


async def test_many_undecided_rows_still_reach_top_k(
    vector: LanceDBVector, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "_IN_LIST_LIMIT", 2)  # the path without an id list
    await vector.create_index("docs", 4)
    index = vector.lexical_index()
    ids = [f"d{i}" for i in range(12)]
    await index.upsert(
        "docs", ids, ["grey cat"] * 12, [{"tag": "a1" if i % 3 else "b", "n": i} for i in range(12)]
    )

    hits = await index.search("docs", "grey", top_k=5, flt=parse({"tag": {"$contains": "a"}}))

    assert [h.id for h in hits] == ["d1", "d10", "d11", "d2", "d4"]  # tied scores: by id


def test_query_text_becomes_distinct_words() -> None:
    assert query_words('content:"a" OR b~2 AND (a*) ^3') == ["content", "a", "or", "b", "2", "and", "3"]
    assert query_words("  && || ! ") == []


async def test_the_first_search_copies_the_texts_already_beside_the_vectors(vector: LanceDBVector) -> None:
    await vector.create_index("docs", 4)
    # Written by the vector store alone, as before hybrid recall existed.
    await vector.upsert(
        "docs",
        [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]],
        [{"content": "the grey cat", "message_id": "a"}, {"content": "a red fox", "message_id": "b"}, {}],
        ids=["a", "b", "c"],
    )
    index = vector.lexical_index()

    assert [h.id for h in await index.search("docs", "grey", top_k=5, flt=None)] == ["a"]
    await index.upsert("docs", ["d"], ["another grey one"], [{"message_id": "d"}])
    assert [h.id for h in await index.search("docs", "grey", top_k=5, flt=None)] == ["a", "d"]
    assert await vector.list_indexes() == ["docs"]


async def test_the_stale_row_delete_resolves_in_sql_through_index_columns(
    vector: LanceDBVector, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sibling carries its vector table's index columns, so the delete every save makes (``message_id``
    in a list) is decided in SQL: no row's JSON is read (it was, on every save, from every row)."""
    await vector.create_index("docs", 4, metadata_indexes=["thread_id", "message_id"])
    index = vector.lexical_index()
    ids = [f"m{i}" for i in range(6)]
    await index.upsert("docs", ids, ["grey cat"] * 6, [{"message_id": i, "thread_id": "t"} for i in ids])
    read: list[str] = []
    batches = store_module.LanceDBVector._batches

    def counting(self: LanceDBVector, info: object, where: str, columns: list[str]) -> object:
        read.append(where)
        return batches(self, info, where, columns)  # type: ignore[arg-type]

    monkeypatch.setattr(store_module.LanceDBVector, "_batches", counting)
    flt = parse({"message_id": {"$in": ["m1", "m4", "nope"]}})
    assert flt is not None

    assert await index.delete("docs", flt) == 2

    assert read == []
    assert [h.id for h in await index.search("docs", "grey", top_k=9, flt=None)] == ["m0", "m2", "m3", "m5"]


async def test_a_sibling_without_index_columns_is_rebuilt_from_the_vectors(
    vector: LanceDBVector, tmp_path: Path
) -> None:
    """A sibling written before it carried index columns is dropped and made again from the texts beside the
    vectors, then resolves filters through its index columns."""
    await vector.create_index("docs", 4, metadata_indexes=["message_id"])
    await vector.upsert(
        "docs",
        [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]],
        [{"content": "the grey cat", "message_id": "a"}, {"content": "a grey fox", "message_id": "b"}],
        ids=["a", "b"],
    )
    db = await lancedb.connect_async(str(tmp_path / "lance"))
    old = pa.schema([f for f in lexical_module.SCHEMA])
    await db.create_table("docs" + LEXICAL_SUFFIX, schema=old)  # the former layout, empty
    index = vector.lexical_index()

    assert [h.id for h in await index.search("docs", "grey", top_k=5, flt=None)] == ["a", "b"]
    table = await db.open_table("docs" + LEXICAL_SUFFIX)
    assert "_mastra_idx_0" in (await table.schema()).names
    assert await index.delete("docs", parse({"message_id": "a"})) == 1  # type: ignore[arg-type]
    assert [h.id for h in await index.search("docs", "grey", top_k=5, flt=None)] == ["b"]
