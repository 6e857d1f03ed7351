"""docs/spec.md §5.1/§5.2 and the seed documents: every option exists, has its default, accepts camelCase, and
invalid values raise ConfigError at construction (and again for a per-call thread_config)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.capabilities import StorageCapabilities
from mastra_memory.embedders.base import EmbedderSpec
from mastra_memory.errors import CapabilityError, ConfigError, FilterError, IndexingError
from mastra_memory.memory import Memory
from mastra_memory.memory.config import (
    DEFAULT_WORKING_MEMORY_TEMPLATE,
    MemoryConfig,
    MessageRange,
    SemanticRecallConfig,
    TitleConfig,
    merge_config,
)
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector
from mastra_memory.vector import IndexConfig

from .memory_helpers import CountingEmbedder, ids, msg, ts


class ThreadOnlyStorage(SQLiteStorage):
    """A real SQLite storage that declares it cannot isolate include windows by resource."""

    capabilities = StorageCapabilities(resource_scope=False)


def test_defaults() -> None:
    cfg = MemoryConfig()
    assert cfg.last_messages == 10
    assert cfg.semantic_recall is False
    assert cfg.recall is None
    assert cfg.read_only is False
    assert cfg.generate_title is False
    assert cfg.working_memory.enabled is False
    assert cfg.working_memory.scope == "resource"


def test_semantic_recall_true_means_all_defaults() -> None:
    recall = MemoryConfig.from_any({"semanticRecall": True}).recall
    assert recall == SemanticRecallConfig()
    assert recall is not None
    assert (recall.top_k, recall.scope, recall.threshold, recall.index_name, recall.filter) == (
        4,
        "resource",
        None,
        None,
        None,
    )
    assert recall.message_range == MessageRange(before=1, after=1)


SEED_OPTIONS: dict[str, Any] = {
    "lastMessages": 20,
    "readOnly": True,
    "semanticRecall": {
        "topK": 5,
        "messageRange": {"before": 2, "after": 1},
        "scope": "thread",
        "threshold": 0.7,
        "indexName": "agent_memory",
        "indexConfig": {"type": "hnsw", "metric": "dotproduct", "m": 16, "efConstruction": 64},
        "filter": {"$and": [{"projectId": {"$eq": "project-a"}}, {"priority": {"$gte": 3}}]},
    },
    "workingMemory": {"enabled": True, "template": "# Notes\n- x:", "scope": "thread"},
    "generateTitle": {"model": None, "instructions": "Short titles", "minMessages": 2},
}


def test_camel_case_and_snake_case_give_the_same_config() -> None:
    snake: dict[str, Any] = {
        "last_messages": 20,
        "read_only": True,
        "semantic_recall": {
            "top_k": 5,
            "message_range": {"before": 2, "after": 1},
            "scope": "thread",
            "threshold": 0.7,
            "index_name": "agent_memory",
            "index_config": {
                "type": "hnsw",
                "metric": "dotproduct",
                "hnsw": {"m": 16, "ef_construction": 64},
            },
            "filter": {"$and": [{"projectId": {"$eq": "project-a"}}, {"priority": {"$gte": 3}}]},
        },
        "working_memory": {"enabled": True, "template": "# Notes\n- x:", "scope": "thread"},
        "generate_title": {"model": None, "instructions": "Short titles", "min_messages": 2},
    }
    camel = MemoryConfig.from_any(SEED_OPTIONS)
    assert MemoryConfig.from_any(snake) == camel
    recall = camel.recall
    assert recall is not None
    assert recall.top_k == 5
    assert recall.message_range == MessageRange(before=2, after=1)
    assert recall.index_config == IndexConfig(type="hnsw", metric="dotproduct", m=16, ef_construction=64)
    assert camel.working_memory.effective_template == "# Notes\n- x:"
    assert camel.generate_title == TitleConfig(instructions="Short titles", min_messages=2)
    assert camel.model_dump(by_alias=True)["semanticRecall"]["topK"] == 5


@pytest.mark.parametrize(
    ("given", "expected"), [(0, (0, 0)), (2, (2, 2)), ({"before": 3, "after": 0}, (3, 0))]
)
def test_message_range_forms(given: Any, expected: tuple[int, int]) -> None:
    recall = MemoryConfig.from_any({"semanticRecall": {"messageRange": given}}).recall
    assert recall is not None
    assert (recall.message_range.before, recall.message_range.after) == expected


@pytest.mark.parametrize("value", [0, False, 7])
def test_last_messages_accepts_int_and_false(value: Any) -> None:
    cfg = MemoryConfig.from_any({"lastMessages": value})
    assert cfg.last_messages is value or cfg.last_messages == value
    assert cfg.history_on is (value not in (0, False))


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"lastMessages": -1}, "last_messages must be an int >= 0 or False"),
        ({"lastMessages": True}, "last_messages must be an int >= 0 or False"),
        ({"lastMessages": 2.5}, "last_messages must be an int >= 0 or False"),
        ({"semanticRecall": {"topK": 0}}, "topK"),
        ({"semanticRecall": {"topK": True}}, "topK"),
        ({"semanticRecall": {"messageRange": -1}}, "messageRange"),
        ({"semanticRecall": {"messageRange": {"before": -1, "after": 1}}}, "messageRange.before"),
        ({"semanticRecall": {"messageRange": True}}, "message_range must be an int"),
        ({"semanticRecall": {"scope": "global"}}, "scope"),
        ({"semanticRecall": {"threshold": float("nan")}}, "threshold must be a finite number"),
        ({"semanticRecall": {"threshold": float("inf")}}, "threshold must be a finite number"),
        ({"semanticRecall": {"threshold": True}}, "threshold"),
        ({"semanticRecall": {"indexName": "Bad-Name"}}, "not in portable form"),
        ({"semanticRecall": {"indexName": "9lives"}}, "not in portable form"),
        ({"semanticRecall": {"indexConfig": {"m": 16, "hnsw": {"m": 8}}}}, "sets m twice"),
        ({"semanticRecall": {"indexConfig": {"metric": "manhattan"}}}, "metric"),
        ({"semanticRecall": {"topk": 3}}, "topk: Extra inputs are not permitted"),
        ({"readOnly": "yes"}, "readOnly"),
        ({"workingMemory": {"use": "tool-call"}}, "working_memory.use was removed"),
        ({"workingMemory": {"template": "# T", "schema": {"type": "object"}}}, "mutually exclusive"),
        ({"generateTitle": {"minMessages": 0}}, "minMessages"),
        ({"unknownOption": 1}, "unknownOption: Extra inputs are not permitted"),
    ],
)
def test_invalid_options_raise_config_error_at_construction(options: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        Memory(
            storage=SQLiteStorage(":memory:"),
            vector=SQLiteVector(":memory:"),
            embedder="hash/8",
            options=options,
        )
    assert fragment in str(info.value)


def test_union_noise_is_left_out_of_the_message() -> None:
    with pytest.raises(ConfigError) as info:
        MemoryConfig.from_any({"semanticRecall": {"topK": 0}})
    assert (
        str(info.value)
        == "invalid memory options: semanticRecall.topK: Input should be greater than or equal to 1"
    )


@pytest.mark.parametrize(
    "flt",
    [
        {"projectId": {"$eq": "my-project"}},
        {"category": {"$in": ["work", "research"]}},
        {"$and": [{"projectId": {"$eq": "project-a"}}, {"priority": {"$gte": 3}}]},
        {"projectId": {"$eq": "project-a"}, "category": {"$in": ["work", "personal"]}},
        {"$or": [{"priority": {"$gt": 1}}, {"priority": {"$lt": 0}}], "category": {"$nin": ["x"]}},
        {"priority": {"$lte": 5, "$ne": 2}},
    ],
)
def test_seed_filters_are_accepted(flt: dict[str, Any]) -> None:
    recall = MemoryConfig.from_any({"semanticRecall": {"filter": flt}}).recall
    assert recall is not None
    assert recall.filter == flt


def test_invalid_filter_surfaces_at_construction_as_filter_and_config_error() -> None:
    with pytest.raises(FilterError) as info:
        Memory(
            storage=SQLiteStorage(":memory:"),
            vector=SQLiteVector(":memory:"),
            embedder="hash/8",
            options={"semanticRecall": {"filter": {"$gt": 1, "a": {"$foo": 1}, "b": {"$and": []}}}},
        )
    assert isinstance(info.value, ConfigError)
    assert info.value.problems == [
        "Invalid top-level operator: $gt",
        "Unsupported operator: $foo",
        "Logical operator $and cannot be used at field level: b",
    ]
    assert str(info.value).startswith("invalid semantic_recall.filter: Invalid top-level operator: $gt")


def test_unavailable_embedder_with_semantic_recall() -> None:
    with pytest.raises(ConfigError) as info:
        Memory(
            storage=SQLiteStorage(":memory:"),
            vector=SQLiteVector(":memory:"),
            embedder="sentence-transformers/all-MiniLM-L6-v2",
            options={"semanticRecall": True},
        )
    assert str(info.value).startswith("Semantic recall requires a vector store and an embedder")
    assert "mastra-memory[sentence-transformers]" in str(info.value)


def test_unavailable_embedder_is_fine_without_semantic_recall() -> None:
    memory = Memory(
        storage=SQLiteStorage(":memory:"), vector=SQLiteVector(":memory:"), embedder="nosuchprovider/model"
    )
    assert memory.options.recall is None


def test_unknown_embedder_provider_with_semantic_recall() -> None:
    with pytest.raises(
        ConfigError, match=r"^Semantic recall requires a vector store and an embedder: Unknown"
    ):
        Memory(
            storage=SQLiteStorage(":memory:"),
            embedder="nosuchprovider/model",
            options={"semanticRecall": True},
        )


def test_resource_scope_needs_a_storage_that_declares_it() -> None:
    with pytest.raises(ConfigError, match="resource_scope=False"):
        Memory(
            storage=ThreadOnlyStorage(":memory:"),
            vector=SQLiteVector(":memory:"),
            embedder="hash/8",
            options={"semanticRecall": True},
        )
    memory = Memory(
        storage=ThreadOnlyStorage(":memory:"),
        vector=SQLiteVector(":memory:"),
        embedder="hash/8",
        options={"semanticRecall": {"scope": "thread"}},
    )
    assert memory.options.recall is not None


def test_options_must_be_a_mapping() -> None:
    with pytest.raises(ConfigError, match="must be a dict or MemoryConfig"):
        Memory(storage=SQLiteStorage(":memory:"), options=[("lastMessages", 1)])  # type: ignore[arg-type]


def test_a_memory_config_instance_is_accepted() -> None:
    cfg = MemoryConfig(last_messages=3)
    assert Memory(storage=SQLiteStorage(":memory:"), options=cfg).options is cfg


# ------------------------------------------------------------------------------------ merging


def test_thread_config_deep_merges() -> None:
    base = MemoryConfig.from_any(
        {
            "lastMessages": 5,
            "semanticRecall": {"topK": 2, "messageRange": {"before": 2, "after": 3}, "scope": "thread"},
        }
    )
    merged = merge_config(base, {"semanticRecall": {"messageRange": {"after": 0}, "threshold": 0.5}})
    assert merged.last_messages == 5
    recall = merged.recall
    assert recall is not None
    assert (recall.top_k, recall.scope, recall.threshold) == (2, "thread", 0.5)
    assert recall.message_range == MessageRange(before=2, after=0)


def test_thread_config_semantic_recall_false_switches_it_off_and_true_means_all_defaults() -> None:
    """docs/spec.md §5.1: ``True`` means all defaults; §5.2: scalars replace (``True`` over a dict too)."""
    base = MemoryConfig.from_any(
        {"semanticRecall": {"topK": 2, "messageRange": 0, "scope": "thread", "threshold": 0.5}}
    )
    assert merge_config(base, {"semanticRecall": False}).recall is None
    assert merge_config(base, {"semanticRecall": True}).recall == SemanticRecallConfig()
    assert merge_config(base, {"semanticRecall": {}}).recall == base.recall  # an empty dict keeps them
    turned_on = merge_config(MemoryConfig(), {"semanticRecall": {"topK": 7}}).recall
    assert turned_on is not None
    assert turned_on.top_k == 7
    assert merge_config(MemoryConfig(), {"semanticRecall": True}).recall == SemanticRecallConfig()


def test_thread_config_scalars_and_lists_replace() -> None:
    base = MemoryConfig.from_any(
        {"lastMessages": 5, "semanticRecall": {"filter": {"tags": {"$in": ["a", "b"]}}}}
    )
    merged = merge_config(
        base, {"lastMessages": False, "semanticRecall": {"filter": {"tags": {"$in": ["c"]}}}}
    )
    assert merged.last_messages is False
    assert merged.recall is not None
    assert merged.recall.filter == {"tags": {"$in": ["c"]}}


def test_thread_config_index_config_replaces_whole() -> None:
    base = MemoryConfig.from_any({"semanticRecall": {"indexConfig": {"type": "hnsw", "m": 32}}})
    merged = merge_config(base, {"semanticRecall": {"indexConfig": {"metric": "euclidean"}}})
    assert merged.recall is not None
    assert merged.recall.index_config == IndexConfig(metric="euclidean")


def test_thread_config_working_memory_template_and_schema_conflict_after_merge() -> None:
    base = MemoryConfig.from_any({"workingMemory": {"enabled": True, "template": "# T"}})
    with pytest.raises(ConfigError, match="mutually exclusive"):
        merge_config(base, {"workingMemory": {"schema": {"type": "object"}}})


async def test_invalid_thread_config_raises_config_error_per_call() -> None:
    memory = Memory(storage=SQLiteStorage(":memory:"), vector=SQLiteVector(":memory:"), embedder="hash/8")
    await memory.create_thread("r", "t")
    with pytest.raises(ConfigError, match="topK"):
        await memory.recall("t", thread_config={"semanticRecall": {"topK": 0}})
    with pytest.raises(FilterError):
        await memory.recall("t", thread_config={"semanticRecall": {"filter": {"$bogus": 1}}})
    with pytest.raises(ConfigError, match="Semantic recall requires"):
        await Memory(storage=SQLiteStorage(":memory:"), embedder="nosuchprovider/x").recall(
            "t", thread_config={"semanticRecall": True}
        )
    with pytest.raises(ConfigError, match="lastMessages"):
        await memory.save_messages([msg("m", "t", "x", ts(1))], thread_config={"lastMessages": -3})
    assert (await memory.recall("t", per_page=False)).messages == []


# ------------------------------------------------------------------------------------ index config


@pytest.mark.parametrize(
    "index_config",
    [
        {"metric": "dotproduct", "m": 16, "efConstruction": 64},
        {"metric": "dotproduct", "hnsw": {"m": 16, "efConstruction": 64}},
        {"metric": "dotproduct", "m": 16, "hnsw": {"m": 16, "ef_construction": 64}},
    ],
)
async def test_index_config_flat_and_nested_reach_create_index(
    index_config: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    vector = SQLiteVector(":memory:")
    memory = Memory(
        storage=SQLiteStorage(":memory:"),
        vector=vector,
        embedder="hash/8",
        options={"semanticRecall": {"indexConfig": index_config}},
    )
    assert memory.options.recall is not None
    assert memory.options.recall.index_config == IndexConfig(metric="dotproduct", m=16, ef_construction=64)
    await memory.create_thread("r", "t")
    with caplog.at_level(logging.WARNING):
        await memory.save_messages([msg("m", "t", "hello", ts(1))])
    assert (await vector.describe_index("memory_messages_8")).metric == "dotproduct"
    # The SQLite store searches exactly; it names the tuning it received (and ignores) — proof they arrived.
    assert any("ef_construction, m ignored" in r.getMessage() for r in caplog.records)


async def test_embedder_options_reach_every_call() -> None:
    embedder = CountingEmbedder(8)
    memory = Memory(
        storage=SQLiteStorage(":memory:"),
        vector=SQLiteVector(":memory:"),
        embedder=embedder,
        options={"semanticRecall": {"scope": "thread"}},
        embedder_options={"dimensions": 8, "user": "u-1"},
    )
    await memory.create_thread("r", "t")
    await memory.save_messages([msg("m", "t", "hello", ts(1))])
    await memory.recall("t", vector_search_string="something else")
    assert embedder.calls.count == 2
    assert embedder.options == [{"dimensions": 8, "user": "u-1"}] * 2


def test_threads_generate_title_refused_as_in_mastra() -> None:
    """Mastra 1.31 throws on ``threads.generateTitle`` (it moved to the top level); so does this project
    (it was a deprecated alias before). An empty ``threads`` still loads, as in Mastra."""
    for value in (True, False, {"instructions": "short"}):
        with pytest.raises(ConfigError, match="has moved: set the top-level generate_title"):
            MemoryConfig.from_any({"threads": {"generateTitle": value}})
    assert MemoryConfig.from_any({"threads": {}, "generateTitle": True}).generate_title is True


def test_working_memory_options() -> None:
    default = MemoryConfig.from_any({"workingMemory": {"enabled": True}}).working_memory
    assert default.effective_template == DEFAULT_WORKING_MEMORY_TEMPLATE
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    wm = MemoryConfig.from_any(
        {"workingMemory": {"enabled": True, "schema": schema, "scope": "thread"}}
    ).working_memory
    assert wm.schema_ == schema
    assert wm.effective_template is None
    assert wm.scope == "thread"
    with pytest.raises(ConfigError, match="scope"):
        MemoryConfig.from_any({"workingMemory": {"scope": "global"}})


async def test_recall_uses_thread_config_last_messages() -> None:
    memory = Memory(storage=SQLiteStorage(":memory:"), options={"lastMessages": 1})
    await memory.create_thread("r", "t")
    await memory.save_messages([msg(f"m{i}", "t", f"text {i}", ts(i)) for i in range(1, 5)])
    assert ids((await memory.recall("t")).messages) == ["m4"]
    assert ids((await memory.recall("t", thread_config={"lastMessages": 3})).messages) == ["m2", "m3", "m4"]
    assert ids((await memory.recall("t", thread_config={"lastMessages": 0})).messages) == []


async def test_index_type_the_store_cannot_build_fails_the_write_with_the_reason() -> None:
    """The seed's pgvector example (type 'hnsw') on the exact-search SQLite store: a clear error."""
    memory = Memory(
        storage=SQLiteStorage(":memory:"),
        vector=SQLiteVector(":memory:"),
        embedder="hash/8",
        options={"semanticRecall": {"indexConfig": {"type": "hnsw", "m": 16}}},
    )
    await memory.create_thread("r", "t")
    with pytest.raises(IndexingError, match="index type 'hnsw' is not available on sqlite") as info:
        await memory.save_messages([msg("m", "t", "hello", ts(1))])
    assert isinstance(info.value.__cause__, CapabilityError)
    assert ids((await memory.recall("t")).messages) == ["m"]  # storage is the source of truth


async def test_embedder_spec_and_plugin_urls(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    memory = Memory(
        storage=f"sqlite:///{db}",
        vector=f"sqlite:///{db}",
        embedder=EmbedderSpec.model_validate({"providerId": "hash", "modelId": "24"}),
        options={"semanticRecall": {"scope": "thread"}},
    )
    await memory.create_thread("r", "t")
    await memory.save_messages([msg("m", "t", "hello", ts(1))])
    assert memory.embedder.model_id == "hash/24"
    assert await memory.vector.list_indexes() == ["memory_messages_24"]
    await memory.close()


def test_unknown_vector_store_with_semantic_recall() -> None:
    with pytest.raises(ConfigError, match=r"^Semantic recall requires a vector store and an embedder"):
        Memory(
            storage=SQLiteStorage(":memory:"),
            vector="nosuchstore://x",
            embedder="hash/8",
            options={"semanticRecall": True},
        )


async def test_missing_api_key_names_the_variable_at_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    memory = Memory(
        storage=SQLiteStorage(":memory:"),
        vector=SQLiteVector(":memory:"),
        embedder="openai/text-embedding-3-small",
        options={"semanticRecall": {"scope": "thread"}},
    )  # construction needs no key
    await memory.create_thread("r", "t")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        await memory.recall("t", vector_search_string="hello")
    with pytest.raises(IndexingError, match="OPENAI_API_KEY") as info:
        await memory.save_messages([msg("m", "t", "hello", ts(1))])
    assert isinstance(info.value.__cause__, ConfigError)
    assert ids((await memory.recall("t", per_page=False)).messages) == ["m"]
