"""Per-request memory configuration (docs/spec.md §5.2, §5.10, §6.1): what the model receives.

A request's ``memory_config`` (Mastra's ``requestContext.get("MastraMemory").memoryConfig``) is merged over
the instance options exactly like ``recall(thread_config=...)``: Memory builds its processors from it, and a
processor run honours it, so ``{"semanticRecall": False}`` recalls and injects nothing and a request's
``topK``/``messageRange`` replace the instance's. ``semanticRecall: True`` means all defaults (§5.1).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mastra_memory.errors import ConfigError
from mastra_memory.memory import Memory
from mastra_memory.memory.message_list import MessageList
from mastra_memory.memory.processors.semantic_recall import SemanticRecall
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

from .memory_helpers import CountingEmbedder, ids, msg, recall_only, records, seed, ts

QUERY = "alpha bananas"  # a2's text: a2 is the best hit in resource A

#: Resource A holds a1..a4 (threads A1, A2): a wide instance configuration recalls all of them.
WIDE = {"lastMessages": 1, "semanticRecall": {"topK": 3, "messageRange": 1}}
NARROW = {"semanticRecall": {"topK": 1, "messageRange": 0}}


def request(thread: str, resource: str, memory_config: Any = None) -> dict[str, Any]:
    """Mastra's request context: ``{"MastraMemory": {thread, resourceId, memoryConfig}}``."""
    memory: dict[str, Any] = {"thread": {"id": thread, "resourceId": resource}, "resourceId": resource}
    if memory_config is not None:
        memory["memoryConfig"] = memory_config
    return {"MastraMemory": memory}


def model_input(listing: MessageList) -> tuple[list[str], list[str]]:
    """What the model would receive from memory: recalled message ids and the memory system messages."""
    recalled = [m.id for m in listing.all() if listing.source_of(m.id) == "memory"]
    return recalled, [m.content.content or "" for m in listing.system_messages_from("memory")]


async def run_input(
    processor: SemanticRecall, thread: str, ctx: dict[str, Any]
) -> tuple[list[str], list[str]]:
    listing = MessageList([msg("q", thread, QUERY, ts(50))], thread_id=thread, resource_id="A")
    out = await processor.process_input(listing.all(), listing, None, request_context=ctx)
    assert out is listing
    return model_input(listing)


@pytest.fixture
async def wide(storage: SQLiteStorage, vector: SQLiteVector) -> Memory:
    memory = Memory(storage=storage, vector=vector, embedder="hash/64", options=WIDE)
    await seed(memory)
    return memory


# ----------------------------------------------------------------------------- semanticRecall: false


async def test_request_recall_off_builds_no_processor(wide: Memory) -> None:
    ctx = request("A2", "A", {"semanticRecall": False})
    assert recall_only(wide.get_input_processors(request_context=ctx)) == []
    assert recall_only(wide.get_output_processors(request_context=ctx)) == []
    assert recall_only(wide.get_input_processors([], ctx)) == []  # Mastra's positional shape
    assert len(recall_only(wide.get_input_processors())) == 1  # the instance options still turn it on


async def test_request_recall_off_recalls_and_injects_nothing(wide: Memory) -> None:
    """A processor obtained earlier (instance options) still honours the request that runs it."""
    [processor] = recall_only(wide.get_input_processors())
    # Control: without the request's switch, thread A2 receives A1's messages as a system message.
    recalled, system = await run_input(processor, "A2", request("A2", "A"))
    assert recalled == ["a4"]
    assert "alpha bananas" in "".join(system)
    for memory_config in ({"semanticRecall": False}, {"semantic_recall": False}):
        assert await run_input(processor, "A2", request("A2", "A", memory_config)) == ([], [])
        assert await run_input(processor, "A1", request("A1", "A", memory_config)) == ([], [])


async def test_request_recall_off_embeds_nothing(storage: SQLiteStorage, vector: SQLiteVector) -> None:
    embedder = CountingEmbedder(64)
    memory = Memory(storage=storage, vector=vector, embedder=embedder, options=WIDE)
    await memory.create_thread("A", "A1")
    [processor] = recall_only(memory.get_output_processors())
    ctx = request("A1", "A", {"semanticRecall": False})
    listing = MessageList([msg("u", "A1", "a question", ts(1))], thread_id="A1", resource_id="A")
    await processor.process_input(listing.all(), listing, None, request_context=ctx)
    out = await processor.process_output_result(
        [msg("r", "A1", "an answer", ts(2), role="assistant")], listing, None, request_context=ctx
    )
    assert out is listing
    # Recall off for the request: no query embedding and no indexing, as save_messages (§5.4 step 3).
    assert embedder.calls.count == 0
    assert await vector.list_indexes() == []


# ----------------------------------------------------------------------------- request topK / range


async def test_request_top_k_and_range_replace_the_instance_options(wide: Memory) -> None:
    expected = (
        await wide.recall("A1", resource_id="A", vector_search_string=QUERY, thread_config=NARROW)
    ).hits
    assert [h.message_id for h in expected] == ["a2"]
    ctx = request("A1", "A", NARROW)
    [built] = recall_only(wide.get_input_processors(request_context=ctx))
    [earlier] = recall_only(wide.get_input_processors())
    for processor in (built, earlier):
        assert await run_input(processor, "A1", ctx) == (["a2"], [])
    # Without the request's options the instance's wider window comes back.
    recalled, _ = await run_input(earlier, "A1", request("A1", "A"))
    assert {"a1", "a2", "a3"} <= set(recalled)


async def test_request_turns_recall_on_over_an_instance_without_it(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    memory = Memory(storage=storage, vector=vector, embedder="hash/64", options={"lastMessages": 1})
    await memory.create_thread("A", "A1")
    await memory.create_thread("A", "A2")
    scenario = [("a1", "alpha apples"), ("a2", "alpha bananas"), ("a3", "alpha cherries")]
    await memory.save_messages(
        [msg(i, "A1", text, ts(n)) for n, (i, text) in enumerate(scenario, 1)],
        thread_config={"semanticRecall": True},
    )
    assert recall_only(memory.get_input_processors()) == []
    ctx = request("A1", "A", NARROW)
    [processor] = recall_only(memory.get_input_processors(request_context=ctx))
    assert await run_input(processor, "A1", ctx) == (["a2"], [])


async def test_request_index_name_is_honoured_on_output(storage: SQLiteStorage, vector: SQLiteVector) -> None:
    memory = Memory(storage=storage, vector=vector, embedder="hash/16", options={"semanticRecall": True})
    await memory.create_thread("A", "A1")
    [processor] = recall_only(memory.get_output_processors())
    ctx = request("A1", "A", {"semanticRecall": {"indexName": "per_request"}})
    await processor.process_output_result(
        [msg("r", "A1", "an answer", ts(2), role="assistant")], None, None, request_context=ctx
    )
    assert await vector.list_indexes() == ["per_request"]
    assert [r.id for r in await records(vector, "per_request")] == ["r"]


# ----------------------------------------------------------------------------- semanticRecall: true


async def test_true_over_an_instance_object_means_all_defaults(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    """docs/spec.md §5.1: ``True`` means all defaults (topK 4, messageRange 1); §5.2: scalars replace."""
    memory = Memory(
        storage=storage, vector=vector, embedder="hash/64", options={"lastMessages": False, **NARROW}
    )
    await seed(memory)
    narrow = await memory.recall("A1", resource_id="A", vector_search_string=QUERY)
    assert ids(narrow.messages) == ["a2"]
    on = await memory.recall(
        "A1", resource_id="A", vector_search_string=QUERY, thread_config={"semanticRecall": True}
    )
    # topK 4 finds every message of resource A; windows of one: a1..a4, never B's b1.
    assert ids(on.messages) == ["a1", "a2", "a3", "a4"]
    assert len(on.hits) == 4
    ctx = request("A2", "A", {"semanticRecall": True})
    for processor in (
        recall_only(memory.get_input_processors(request_context=ctx))[0],
        recall_only(memory.get_input_processors())[0],
    ):
        recalled, [system] = await run_input(processor, "A2", ctx)
        assert recalled == ["a4"]
        assert all(f"User: alpha {w}" in system for w in ("apples", "bananas", "cherries"))


# ----------------------------------------------------------------------------- invalid request config


async def test_invalid_request_config_raises_when_building_processors(wide: Memory) -> None:
    with pytest.raises(ConfigError, match="topK"):
        recall_only(
            wide.get_input_processors(request_context=request("A1", "A", {"semanticRecall": {"topK": 0}}))
        )
    with pytest.raises(ConfigError, match="topK"):
        recall_only(
            wide.get_output_processors(request_context=request("A1", "A", {"semanticRecall": {"topK": 0}}))
        )


async def test_invalid_request_config_at_run_time_is_logged_or_raised(
    wide: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    bad = request("A1", "A", {"semanticRecall": {"topK": 0}})
    [processor] = recall_only(wide.get_input_processors())
    with caplog.at_level(logging.ERROR, logger="mastra_memory.processors"):
        assert await run_input(processor, "A1", bad) == ([], [])
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "topK" in record.getMessage()
    strict = SemanticRecall(wide.storage, wide.vector, wide.embedder, raise_on_error=True)
    with pytest.raises(ConfigError, match="topK"):
        await run_input(strict, "A1", bad)


async def test_request_resource_scope_needs_storage_support(vector: SQLiteVector) -> None:
    from mastra_memory.capabilities import StorageCapabilities

    class ThreadOnlyStorage(SQLiteStorage):
        capabilities = StorageCapabilities(resource_scope=False)

    storage = ThreadOnlyStorage(":memory:")
    memory = Memory(
        storage=storage, vector=vector, embedder="hash/16", options={"semanticRecall": {"scope": "thread"}}
    )
    ctx = request("A1", "A", {"semanticRecall": {"scope": "resource"}})
    with pytest.raises(ConfigError, match="resource_scope=False"):
        recall_only(memory.get_input_processors(request_context=ctx))
    strict = SemanticRecall(storage, vector, "hash/16", scope="thread", raise_on_error=True)
    with pytest.raises(ConfigError, match="resource_scope=False"):
        await run_input(strict, "A1", ctx)
