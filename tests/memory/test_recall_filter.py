"""``semantic_recall.filter`` is parsed once, when its configuration is validated; the scope is combined
with the parsed node; and the vector store translates it once per search, not once per query chunk
(docs/spec.md §5.2, §5.3 step 7.3-7.4)."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from mastra_memory.filters import And, Comparison, Node, parse
from mastra_memory.memory import Memory, MemoryConfig, SemanticRecallConfig, merge_config
from mastra_memory.memory.index.chunking import DEFAULT_CHUNK_SIZE
from mastra_memory.memory.recall.search import recall_filter
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector
from mastra_memory.stores.sqlite.translate import SqlFragment, SQLiteFilterTranslator

from .memory_helpers import msg, ts

FILTERS: list[dict[str, Any]] = [
    {"projectId": {"$eq": "project-a"}},
    {"$or": [{"thread_id": "A2"}, {"role": "x"}], "content": {"$ne": "alpha"}},
    {"tags": {"$elemMatch": {"$in": ["a", "b"]}}, "n": {"$not": {"$gt": 3}}},
    {"content": {"$regex": "^al", "$options": "i"}},
]


class CountingTranslator(SQLiteFilterTranslator):
    """The SQLite translator, counting the filters it translates."""

    translated: ClassVar[list[Node]] = []

    def translate(self, node: Node) -> SqlFragment:
        CountingTranslator.translated.append(node)
        return super().translate(node)


class CountingVector(SQLiteVector):
    translator = CountingTranslator


@pytest.mark.parametrize("flt", FILTERS)
def test_the_configuration_holds_the_parsed_filter(flt: dict[str, Any]) -> None:
    config = SemanticRecallConfig.model_validate({"filter": flt})
    assert config.filter == flt  # the document is kept for serialisation and merging
    assert config.filter_node == parse(flt)
    recall = MemoryConfig.from_any({"semanticRecall": {"filter": flt}}).recall
    assert recall is not None
    assert recall.filter_node == parse(flt)


@pytest.mark.parametrize("flt", [None, {}, *FILTERS])
@pytest.mark.parametrize("scope", ["thread", "resource"])
def test_the_scope_is_anded_with_the_parsed_node(flt: dict[str, Any] | None, scope: str) -> None:
    config = SemanticRecallConfig.model_validate({"filter": flt, "scope": scope})
    combined = recall_filter(config.scope, "T", "R", config)
    field, value = ("resource_id", "R") if scope == "resource" else ("thread_id", "T")
    scoped = {field: value}
    # The same filter the scope document ANDed with the configured document would parse to.
    assert combined == parse({"$and": [scoped, flt]} if flt else scoped)
    if config.filter_node is not None:  # the configuration's own node, not a copy parsed again
        assert combined == And((Comparison((field,), "$eq", value), config.filter_node))
        assert isinstance(combined, And)
        assert combined.children[1] is config.filter_node


def test_a_replaced_filter_is_parsed_again() -> None:
    config = SemanticRecallConfig.model_validate({"filter": FILTERS[0]})
    copy = config.model_copy(update={"filter": FILTERS[2]})
    assert copy.filter_node == parse(FILTERS[2])
    assert config.filter_node == parse(FILTERS[0])


def test_a_thread_config_filter_is_merged_and_parsed_with_the_merged_options() -> None:
    options = MemoryConfig.from_any({"semanticRecall": {"filter": FILTERS[0]}})
    merged = merge_config(options, {"semanticRecall": {"filter": FILTERS[3]}})
    assert merged.recall is not None
    assert merged.recall.filter_node == parse({**FILTERS[0], **FILTERS[3]})


async def test_a_search_translates_its_filter_once_for_every_query_chunk() -> None:
    vector = CountingVector(":memory:")
    memory = Memory(
        SQLiteStorage(":memory:"),
        vector,
        "hash/16",
        options={"semanticRecall": {"scope": "thread", "filter": {"role": "user"}}},
    )
    await memory.create_thread("r", "t")
    await memory.save_messages([msg("m", "t", "hello there", ts(1))])
    query = " ".join(["hello"] * (DEFAULT_CHUNK_SIZE // 3))  # about 6 chunks
    CountingTranslator.translated.clear()
    result = await memory.recall("t", vector_search_string=query)
    assert [h.message_id for h in result.hits] == ["m"]
    expected = And((Comparison(("thread_id",), "$eq", "t"), Comparison(("role",), "$eq", "user")))
    assert CountingTranslator.translated == [expected]
    await memory.close()


async def test_a_translated_filter_means_the_same_on_its_store_and_any_other() -> None:
    mine, other = SQLiteVector(":memory:"), SQLiteVector(":memory:")
    for store in (mine, other):
        await store.create_index("docs", 2)
        await store.upsert("docs", [[1.0, 0.0], [0.0, 1.0]], [{"k": 1}, {"k": 2}], ["a", "b"])
    translated = mine.prepare_filter({"k": {"$gte": 2}})
    for store in (mine, other):
        got = await store.query("docs", [1.0, 0.0], top_k=5, filter=translated)
        assert [r.id for r in got] == ["b"]
    assert mine.prepare_filter(None).native is None
    await mine.close()
    await other.close()
