"""Hybrid recall (``semanticRecall.mode: "hybrid"``): the lexical index beside the vectors, the fusion, and
the refusal by a store without a lexical index. The kit's lexical domain covers scope, filters and hostile
text on every target (conformance/.../suite/lexical.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mastra_memory.capabilities import AdapterCapabilities
from mastra_memory.errors import CapabilityError
from mastra_memory.memory import Memory
from mastra_memory.memory.index.lexical import resolve_mode
from mastra_memory.memory.recall import search
from mastra_memory.memory.recall.fusion import (
    DEFAULT_FUSION,
    FUSIONS,
    MEASURED_FUSIONS,
    fuse,
    fusion_for,
    rrf,
    weighted_scores,
    z_scores,
)
from mastra_memory.stores.sqlite.capabilities import SQLITE_CAPABILITIES
from mastra_memory.stores.sqlite.lexical import SQLiteLexicalIndex, fts_query
from mastra_memory.stores.sqlite.store import SQLiteVector


class NoLexicalVector(SQLiteVector):
    capabilities: AdapterCapabilities = SQLITE_CAPABILITIES.model_copy(update={"lexical_search": False})


def _memory(db: Path, mode: str, vector: SQLiteVector | None = None) -> Memory:
    return Memory(
        storage=f"sqlite:///{db}",
        vector=vector,
        embedder="hash/64",
        options={"lastMessages": False, "semanticRecall": {"topK": 3, "messageRange": 0, "mode": mode}},
    )


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


async def test_hybrid_recall_orders_by_fusion_and_keeps_cosine_scores(tmp_path: Path) -> None:
    memory = _memory(tmp_path / "m.db", "hybrid")
    await _seed(memory)
    question = "where does Biscuit hide?"

    hybrid = await memory.recall("t1", resource_id="ada", vector_search_string=question, per_page=0)
    vector = await memory.recall(
        "t1",
        resource_id="ada",
        vector_search_string=question,
        per_page=0,
        thread_config={"semanticRecall": {"mode": "vector"}},
    )

    assert hybrid.hits[0].message_id == "m1"
    cosine = {h.message_id: h.score for h in vector.hits}
    assert {h.message_id: h.score for h in hybrid.hits} == {
        h.message_id: cosine[h.message_id] for h in hybrid.hits
    }
    with_threshold = await memory.recall(
        "t1",
        resource_id="ada",
        vector_search_string=question,
        per_page=0,
        thread_config={"semanticRecall": {"threshold": cosine["m1"]}},
    )
    assert all(h.score >= cosine["m1"] for h in with_threshold.hits)
    await memory.close()


async def test_the_first_hybrid_recall_builds_the_lexical_index_then_writes_keep_it_in_step(
    tmp_path: Path,
) -> None:
    memory = _memory(tmp_path / "m.db", "vector")
    await _seed(memory)

    def rows() -> list[str] | None:
        with sqlite3.connect(tmp_path / "m.db") as conn:
            table = "mastra_lexical__memory_messages_64"
            if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
                return None
            return [r[0] for r in conn.execute(f"SELECT id FROM {table} ORDER BY id")]

    assert rows() is None  # mode vector only: nothing lexical is written
    hybrid = {"semanticRecall": {"mode": "hybrid"}}
    first = await memory.recall(
        "t1", resource_id="ada", vector_search_string="Lisbon", per_page=0, thread_config=hybrid
    )
    assert first.hits[0].message_id == "m3"
    assert rows() == ["m1", "m2", "m3"]  # copied from the vector index's texts
    await memory.update_messages([{"id": "m2", "content": "Pottery class moved to Thursdays"}])
    moved = await memory.recall(
        "t1", resource_id="ada", vector_search_string="Thursdays", per_page=0, thread_config=hybrid
    )
    assert moved.hits[0].message_id == "m2"
    await memory.delete_messages(["m1"])
    assert rows() == ["m2", "m3"]
    await memory.delete_thread("t1")
    assert rows() == []
    await memory.close()


async def test_a_store_without_a_lexical_index_refuses_hybrid_before_embedding(tmp_path: Path) -> None:
    vector = NoLexicalVector(str(tmp_path / "m.db"))
    memory = _memory(tmp_path / "m.db", "hybrid", vector)
    await memory.create_thread("ada", "t1")

    with pytest.raises(CapabilityError, match="lexical_search"):
        await memory.recall("t1", resource_id="ada", vector_search_string="cat", per_page=0)

    assert await vector.list_indexes() == []  # nothing was embedded or written
    await memory.close()
    await vector.close()


async def test_auto_the_default_is_hybrid_where_the_store_has_a_lexical_index(tmp_path: Path) -> None:
    memory = Memory(
        storage=f"sqlite:///{tmp_path / 'm.db'}",
        embedder="hash/64",
        options={"lastMessages": False, "semanticRecall": {"topK": 3, "messageRange": 0}},
    )
    assert memory.options.recall is not None
    assert memory.options.recall.mode == "auto"
    await _seed(memory)
    question = "where does Biscuit hide?"

    async def order(mode: str | None) -> list[tuple[str, float]]:
        config = {"semanticRecall": {"mode": mode}} if mode else None
        found = await memory.recall(
            "t1", resource_id="ada", vector_search_string=question, per_page=0, thread_config=config
        )
        return [(h.message_id, h.score) for h in found.hits]

    def lexical_table() -> bool:
        with sqlite3.connect(tmp_path / "m.db") as conn:
            table = "mastra_lexical__memory_messages_64"
            return bool(conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone())

    assert not lexical_table()
    default = await order(None)
    assert lexical_table()  # the hybrid search built the lexical index (mode vector never does)
    assert default == await order("hybrid")
    # semantic_search_messages runs in the configured mode too
    searched = await memory.semantic_search_messages(question, resource_id="ada", top_k=3)
    assert [(h.message.id, h.score) for h in searched.hits] == await order("hybrid")
    await memory.close()


async def test_auto_is_vector_on_an_in_memory_sqlite_database(tmp_path: Path) -> None:
    # :memory: is private to its connection: the lexical index's own connection would miss earlier writes.
    in_memory, on_file = SQLiteVector(":memory:"), SQLiteVector(str(tmp_path / "v.db"))
    assert (resolve_mode(in_memory, "auto"), resolve_mode(on_file, "auto")) == ("vector", "hybrid")
    assert resolve_mode(in_memory, "hybrid") == "hybrid"  # asked for explicitly: kept
    memory = Memory(
        storage="sqlite:///:memory:",
        embedder="hash/64",
        options={"lastMessages": False, "semanticRecall": {"topK": 3, "messageRange": 0}},
    )
    await _seed(memory)

    async def hits(mode: str | None) -> list[tuple[str, float]]:
        config = {"semanticRecall": {"mode": mode}} if mode else None
        found = await memory.recall(
            "t1", resource_id="ada", vector_search_string="Biscuit", per_page=0, thread_config=config
        )
        return [(h.message_id, h.score) for h in found.hits]

    assert await hits(None) == await hits("vector")
    await memory.close()
    await in_memory.close()
    await on_file.close()


async def test_auto_is_vector_on_a_store_without_a_lexical_index(tmp_path: Path) -> None:
    vector = NoLexicalVector(str(tmp_path / "m.db"))
    memory = _memory(tmp_path / "m.db", "auto", vector)
    await _seed(memory)

    found = await memory.recall("t1", resource_id="ada", vector_search_string="Biscuit", per_page=0)
    pinned = await memory.recall(
        "t1",
        resource_id="ada",
        vector_search_string="Biscuit",
        per_page=0,
        thread_config={"semanticRecall": {"mode": "vector"}},
    )
    assert [(h.message_id, h.score) for h in found.hits] == [(h.message_id, h.score) for h in pinned.hits]
    with pytest.raises(CapabilityError, match="lexical_search"):  # the mode the call asks for is passed
        await memory.semantic_search_messages(
            "Biscuit", resource_id="ada", thread_config={"semanticRecall": {"mode": "hybrid"}}
        )
    await memory.close()
    await vector.close()


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ('NEAR(a b) OR "c" *', '"near" OR "a" OR "b" OR "or" OR "c"'),
        ("  ", None),
        ('"', None),
        ("Été été", '"été"'),
    ],
)
def test_query_text_becomes_quoted_words(text: str, query: str | None) -> None:
    assert fts_query(text) == query


def test_fusions_rank_what_both_sides_agree_on_first() -> None:
    vector = [("a", 0.9), ("b", 0.8), ("c", 0.1)]
    lexical = [("b", 12.0), ("d", 3.0)]

    for name in FUSIONS:
        assert fuse(vector, lexical, name)[0][0] == "b", name
    assert DEFAULT_FUSION in FUSIONS
    assert [m for m, _ in rrf(vector, [])] == ["a", "b", "c"]
    assert weighted_scores([], [("x", 2.0)]) == [("x", 0.5)]
    # c and d each lowest on one side and absent from the other: a tie, ordered by id
    assert [m for m, _ in z_scores(vector, lexical, lexical_weight=0.6)] == ["b", "a", "c", "d"]


def test_each_measured_embedder_has_its_fusion_and_others_the_default() -> None:
    assert set(MEASURED_FUSIONS.values()) <= set(FUSIONS)
    assert fusion_for("local/wordllama") == MEASURED_FUSIONS["local/wordllama"] != DEFAULT_FUSION
    assert fusion_for("local/all-minilm-l6-v2") == MEASURED_FUSIONS["local/all-minilm-l6-v2"]
    assert fusion_for("hash/64") == fusion_for(None) == DEFAULT_FUSION


async def test_a_message_only_the_lexical_side_found_gets_its_cosine_score(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "CANDIDATES", 2)  # the vector side contributes only its best 2
    memory = _memory(tmp_path / "m.db", "vector")
    await memory.create_thread("ada", "t1")
    filler = [f"a short note about lunch number {n}" for n in range(8)]
    rare = "the long answer mentions the zeppelin once among many many other unrelated words of all kinds"
    await memory.save_messages(
        [{"id": f"f{n}", "thread_id": "t1", "role": "user", "content": t} for n, t in enumerate(filler)]
        + [{"id": "rare", "thread_id": "t1", "role": "user", "content": rare}]
    )
    question = "a short note about the zeppelin"
    every = await memory.recall(
        "t1",
        resource_id="ada",
        vector_search_string=question,
        per_page=0,
        thread_config={"semanticRecall": {"topK": 9}},
    )
    cosine = {h.message_id: h.score for h in every.hits}
    assert "rare" not in [h.message_id for h in every.hits[:2]]  # so only the lexical side can bring it

    hybrid = await memory.recall(
        "t1",
        resource_id="ada",
        vector_search_string=question,
        per_page=0,
        thread_config={"semanticRecall": {"mode": "hybrid", "topK": 2}},
    )

    assert "rare" in [h.message_id for h in hybrid.hits]
    assert all(h.score == pytest.approx(cosine[h.message_id]) for h in hybrid.hits)
    await memory.close()


async def test_a_file_lexical_index_keeps_one_connection_that_sees_other_connections_writes(
    tmp_path: Path,
) -> None:
    db = tmp_path / "l.db"
    index = SQLiteLexicalIndex(db)
    await index.ensure("docs")  # no vector table: empty tables
    await index.upsert("docs", ["a"], ["apples and pears"], [{"message_id": "a"}])
    assert [h.id for h in await index.search("docs", "apples", top_k=5, flt=None)] == ["a"]
    other = sqlite3.connect(db)  # another writer (the vector store has its own connection)
    with other:
        other.execute("INSERT INTO mastra_lexical__docs (id, metadata, content) VALUES ('b', '{}', 'apples')")
    other.close()
    found = {h.id for h in await index.search("docs", "apples", top_k=5, flt=None)}
    assert found == {"a", "b"}  # the cached connection reads what another committed
    index.close()  # the next call opens a new connection on the same file
    assert {h.id for h in await index.search("docs", "apples pears", top_k=5, flt=None)} == found
    index.close()
