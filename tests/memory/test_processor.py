"""docs/spec.md §6: the SemanticRecall processor — recall on input, indexing on output, errors, cache,
trace."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import pytest

from mastra_memory.capabilities import StorageCapabilities
from mastra_memory.embedders.base import EmbedResult
from mastra_memory.errors import ConfigError, EmbeddingError, FilterError, ResourceScopeError
from mastra_memory.memory import Memory
from mastra_memory.memory.config import MessageRange
from mastra_memory.memory.message_list import MessageList
from mastra_memory.memory.processors.semantic_recall import SemanticRecall
from mastra_memory.messages import MastraDBMessage
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

from .memory_helpers import (
    SCENARIO_OPTIONS,
    BrokenEmbedder,
    CountingEmbedder,
    ids,
    msg,
    recall_only,
    records,
    seed,
    state,
    ts,
)

QUERY = "alpha bananas"


def context(thread: str, resource: str | None = None, **extra: Any) -> dict[str, Any]:
    thread_info: dict[str, Any] = {"id": thread}
    if resource is not None:
        thread_info["resource_id"] = resource
    return {"MastraMemory": {"thread": thread_info, **extra}}


def turn(thread: str, text: str, resource: str | None = None, id: str = "q", second: int = 50) -> MessageList:
    return MessageList([msg(id, thread, text, ts(second))], thread_id=thread, resource_id=resource)


def processor_for(memory: Memory, **overrides: Any) -> SemanticRecall:
    recall = memory.options.recall
    assert recall is not None
    options: dict[str, Any] = {
        "top_k": recall.top_k,
        "message_range": recall.message_range,
        "scope": recall.scope,
        "threshold": recall.threshold,
        "index_name": recall.index_name,
        "filter": recall.filter,
        **overrides,
    }
    return SemanticRecall(memory.storage, memory.vector, memory.embedder, **options)


# ----------------------------------------------------------------------------- construction


def test_identity_and_defaults(storage: SQLiteStorage, vector: SQLiteVector) -> None:
    processor = SemanticRecall(storage, vector, "hash/16")
    assert (processor.id, processor.name) == ("semantic-recall", "SemanticRecall")
    cfg = processor.config
    assert (cfg.top_k, cfg.scope, cfg.threshold, cfg.index_name, cfg.filter) == (
        4,
        "resource",
        None,
        None,
        None,
    )
    assert cfg.message_range == MessageRange(before=1, after=1)
    assert processor.raise_on_error is False


def test_seed_options(storage: SQLiteStorage, vector: SQLiteVector) -> None:
    processor = SemanticRecall(
        storage=storage,
        vector=vector,
        embedder="hash/16",
        top_k=5,
        message_range={"before": 2, "after": 1},
        scope="resource",
        threshold=0.7,
        index_name="agent_idx",
        index_config={"metric": "dotproduct", "hnsw": {"m": 16}},
        filter={"projectId": {"$eq": "project-a"}},
        logger=logging.getLogger("custom"),
    )
    cfg = processor.config
    assert (cfg.top_k, cfg.threshold, cfg.index_name) == (5, 0.7, "agent_idx")
    assert cfg.message_range == MessageRange(before=2, after=1)
    assert cfg.index_config is not None
    assert (cfg.index_config.metric, cfg.index_config.m) == ("dotproduct", 16)
    assert processor.logger.name == "custom"
    assert SemanticRecall(storage, vector, "hash/16", message_range=2).config.message_range == MessageRange(
        before=2, after=2
    )


@pytest.mark.parametrize("missing", ["storage", "vector", "embedder"])
def test_missing_component_is_named(storage: SQLiteStorage, vector: SQLiteVector, missing: str) -> None:
    kwargs: dict[str, Any] = {"storage": storage, "vector": vector, "embedder": "hash/16", missing: None}
    with pytest.raises(ConfigError, match=f"SemanticRecall requires {missing}"):
        SemanticRecall(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"top_k": 0}, "top_k: Input should be greater than or equal to 1"),
        ({"top_k": True}, "top_k: Input should be a valid integer"),
        ({"message_range": -1}, "message_range.before"),
        ({"scope": "everything"}, "scope"),
        ({"threshold": float("nan")}, "threshold must be a finite number"),
        ({"index_name": "Not Portable"}, "not in portable form"),
        ({"index_config": {"m": 8, "hnsw": {"m": 16}}}, "sets m twice"),
    ],
)
def test_invalid_options_raise_config_error(
    storage: SQLiteStorage, vector: SQLiteVector, kwargs: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(ConfigError, match=fragment):
        SemanticRecall(storage, vector, "hash/16", **kwargs)


def test_invalid_filter_raises_at_construction(storage: SQLiteStorage, vector: SQLiteVector) -> None:
    with pytest.raises(FilterError) as info:
        SemanticRecall(storage, vector, "hash/16", filter={"$gt": 3})
    assert isinstance(info.value, ConfigError)
    assert info.value.problems == ["Invalid top-level operator: $gt"]


def test_resource_scope_needs_storage_support(vector: SQLiteVector) -> None:
    class ThreadOnlyStorage(SQLiteStorage):
        capabilities = StorageCapabilities(resource_scope=False)

    with pytest.raises(ConfigError, match="resource_scope=False"):
        SemanticRecall(ThreadOnlyStorage(":memory:"), vector, "hash/16")
    assert (
        SemanticRecall(ThreadOnlyStorage(":memory:"), vector, "hash/16", scope="thread").config.scope
        == "thread"
    )


# ----------------------------------------------------------------------------- process_input


async def test_no_memory_context_leaves_the_list_unchanged(scenario: Memory) -> None:
    processor = processor_for(scenario)
    contexts: list[dict[str, Any] | None] = [
        None,
        {},
        {"MastraMemory": {}},
        {"MastraMemory": {"thread": {"id": ""}}},
    ]
    for request_context in contexts:
        listing = turn("A2", QUERY, "A")
        before = [m.id for m in listing.all()]
        out = await processor.process_input(listing.all(), listing, None, request_context=request_context)
        assert out is listing
        assert [m.id for m in out.all()] == before
        assert out.system_messages == []


async def test_other_thread_hits_become_one_system_message(scenario: Memory) -> None:
    processor = processor_for(scenario)
    listing = turn("A2", QUERY, "A")
    out = await processor.process_input(listing.all(), listing, None, request_context=context("A2", "A"))
    assert out is listing
    assert ids(listing.all()) == ["q"]  # a1..a3 live in A1: only in the system message
    [system] = listing.system_messages_from("memory")
    assert system.content.content == (
        "Messages recalled from earlier conversations with this user:\n"
        "<remembered_from_other_conversation>\n"
        "\nmessages of 2024, Jan, 1\n"
        "Message from previous conversation at 12:00 AM: User: alpha apples"
        "Message from previous conversation at 12:00 AM: User: alpha bananas"
        "Message from previous conversation at 12:00 AM: User: alpha cherries\n"
        "<end_remembered_from_other_conversation>"
    )


async def test_same_thread_hits_join_the_list_as_memory(scenario: Memory) -> None:
    processor = processor_for(scenario)
    listing = turn("A1", QUERY, "A")
    await processor.process_input(listing.all(), listing, None, request_context=context("A1", "A"))
    assert ids(listing.all()) == ["a1", "a2", "a3", "q"]
    assert [listing.source_of(i) for i in ("a1", "a2", "a3", "q")] == ["memory", "memory", "memory", "input"]
    assert listing.system_messages == []
    assert [m.id for m in listing.new_messages()] == ["q"]


async def test_ids_already_in_the_list_are_not_added_twice(scenario: Memory) -> None:
    processor = processor_for(scenario)
    stored = await scenario.storage.list_messages_by_id(["a2"])
    listing = MessageList(stored, thread_id="A1", source="memory")
    listing.add([msg("q", "A1", QUERY, ts(50))], source="input")
    await processor.process_input(
        [msg("q", "A1", QUERY, ts(50))], listing, None, request_context=context("A1", "A")
    )
    assert ids(listing.all()) == ["a1", "a2", "a3", "q"]
    assert len(listing) == 4


async def test_query_is_the_last_user_message_or_a_user_signal(scenario: Memory) -> None:
    processor = processor_for(scenario, message_range=0)

    def signal(id: str, text: str, kind: str, second: int) -> dict[str, Any]:
        return {
            "id": id,
            "thread_id": "A1",
            "role": "signal",
            "created_at": ts(second),
            "content": {
                "format": 2,
                "content": text,
                "parts": [{"type": "text", "text": text}],
                "metadata": {"signal": {"type": kind}},
            },
        }

    cases: list[tuple[list[Any], list[str]]] = [
        (
            [
                msg("u", "A1", "alpha cherries", ts(40)),
                msg("r", "A1", "alpha apples", ts(41), role="assistant"),
            ],
            ["a3"],
        ),
        ([msg("u", "A1", "alpha apples", ts(40)), signal("s", "alpha cherries", "user", 41)], ["a3"]),
        ([msg("u", "A1", "alpha apples", ts(40)), signal("s", "alpha cherries", "user-message", 41)], ["a3"]),
        ([msg("u", "A1", "alpha apples", ts(40)), signal("s", "alpha cherries", "typing", 41)], ["a1"]),
    ]
    for messages, expected in cases:
        listing = MessageList(messages, thread_id="A1")
        await processor.process_input(messages, listing, None, request_context=context("A1", "A"))
        assert [m.id for m in listing.all() if listing.source_of(m.id) == "memory"] == expected


async def test_no_query_text_leaves_the_list_unchanged(scenario: Memory) -> None:
    embedder = CountingEmbedder(64, "hash-count/64")
    processor = SemanticRecall(scenario.storage, scenario.vector, embedder)
    only_assistant = MessageList([msg("r", "A1", "alpha apples", ts(41), role="assistant")], thread_id="A1")
    await processor.process_input(
        only_assistant.all(), only_assistant, None, request_context=context("A1", "A")
    )
    blank = turn("A1", "   ", "A")
    await processor.process_input(blank.all(), blank, None, request_context=context("A1", "A"))
    assert (ids(only_assistant.all()), ids(blank.all())) == (["r"], ["q"])
    assert embedder.calls.count == 0


async def test_input_never_pulls_the_whole_thread(storage: SQLiteStorage, vector: SQLiteVector) -> None:
    memory = Memory(
        storage=storage,
        vector=vector,
        embedder="hash/64",
        options={"semanticRecall": {"topK": 1, "messageRange": 1}},
    )
    await memory.create_thread("r", "t")
    await memory.save_messages(
        [msg(f"m{i:02d}", "t", f"note number {i} about topic {i}", ts(i)) for i in range(1, 31)]
    )
    listing = turn("t", "note number 15 about topic 15", "r")
    await processor_for(memory).process_input(listing.all(), listing, None, request_context=context("t", "r"))
    assert ids(listing.all()) == ["m14", "m15", "m16", "q"]


async def test_no_cross_resource_leak(scenario: Memory) -> None:
    processor = processor_for(scenario, message_range=5, top_k=10)
    listing = turn("B1", QUERY, "B")
    await processor.process_input(listing.all(), listing, None, request_context=context("B1", "B"))
    assert ids(listing.all()) == ["b1", "q"]
    assert listing.system_messages == []


async def test_resource_comes_from_the_context_or_the_thread_owner(scenario: Memory) -> None:
    processor = processor_for(scenario)
    listing = turn("A2", QUERY)
    await processor.process_input(
        listing.all(),
        listing,
        None,
        request_context={"MastraMemory": {"thread": {"id": "A2", "resourceId": "A"}}},
    )
    assert len(listing.system_messages) == 1
    listing = turn("A2", QUERY)
    await processor.process_input(
        listing.all(),
        listing,
        None,
        request_context={"MastraMemory": {"thread": {"id": "A2"}, "resourceId": "A"}},
    )
    assert len(listing.system_messages) == 1


async def test_resource_defaults_to_the_stored_threads_owner(scenario: Memory) -> None:
    processor = processor_for(scenario)
    listing = turn("A2", QUERY)
    await processor.process_input(listing.all(), listing, None, request_context=context("A2"))
    [system] = listing.system_messages  # resource A found through the stored thread A2
    assert "alpha bananas" in (system.content.content or "")


async def test_resource_scope_without_any_resource_falls_back_to_thread_scope(
    storage: SQLiteStorage, vector: SQLiteVector, caplog: pytest.LogCaptureFixture
) -> None:
    """A thread that is not stored (yet) and a context without a resource: thread scope, with a warning."""
    processor = SemanticRecall(storage, vector, "hash/64", top_k=2)
    # The output side indexed a turn of the unstored thread (no resource known).
    await processor.process_output_result(
        [msg("g1", "ghost", "ghost words", ts(1))], None, None, request_context=context("ghost")
    )
    [rec] = await records(vector, "memory_messages_64")
    assert (rec.metadata["thread_id"], rec.metadata["resource_id"]) == ("ghost", None)
    listing = turn("ghost", "ghost words")
    with caplog.at_level(logging.INFO):
        await processor.process_input(listing.all(), listing, None, request_context=context("ghost"))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert ["falling back to thread scope" in r.getMessage() for r in warnings] == [True]
    [event] = [r for r in caplog.records if getattr(r, "event", None) == "memory.recall"]
    assert [h["message_id"] for h in event.hits] == ["g1"]  # type: ignore[attr-defined]
    assert ids(listing.all()) == ["q"]  # g1 is not in storage: no window to add


async def test_resource_scope_without_resource_raises_with_raise_on_error(scenario: Memory) -> None:
    processor = processor_for(scenario, raise_on_error=True)
    listing = turn("new-thread", QUERY)
    with pytest.raises(ResourceScopeError):
        await processor.process_input(listing.all(), listing, None, request_context=context("new-thread"))
    assert ids(listing.all()) == ["q"]


@pytest.mark.parametrize("threshold", [None, -1.0, 0.0, 0.3, 0.62, 0.999, 1.0, 1.01])
async def test_threshold_means_the_same_in_recall_and_processor(
    scenario: Memory, threshold: float | None
) -> None:
    options = {
        "lastMessages": False,
        "semanticRecall": {"topK": 5, "messageRange": 0, "threshold": threshold},
    }
    recalled = await scenario.recall(
        "A1", resource_id="A", vector_search_string="alpha bananas", thread_config=options
    )
    processor = processor_for(scenario, top_k=5, message_range=0, threshold=threshold)
    listing = turn("A1", "alpha bananas", "A")
    await processor.process_input(listing.all(), listing, None, request_context=context("A1", "A"))
    in_processor = {m.id for m in listing.all() if listing.source_of(m.id) == "memory"}
    [*system] = listing.system_messages
    if "alpha dates" in "".join(s.content.content or "" for s in system):
        in_processor.add("a4")
    assert in_processor == set(ids(recalled.messages))
    scores = {h.message_id: h.score for h in recalled.hits}
    assert set(scores) == set(ids(recalled.messages))
    assert all(threshold is None or s >= threshold for s in scores.values())


@pytest.mark.parametrize(
    "flt",
    [
        {"thread_id": "A1"},
        {"content": {"$ne": "alpha bananas"}},
        {"$or": [{"thread_id": "A2"}, {"role": "x"}]},
    ],
)
async def test_filter_means_the_same_in_recall_and_processor(scenario: Memory, flt: dict[str, Any]) -> None:
    options = {"lastMessages": False, "semanticRecall": {"topK": 5, "messageRange": 0, "filter": flt}}
    recalled = await scenario.recall("A1", resource_id="A", vector_search_string=QUERY, thread_config=options)
    processor = processor_for(scenario, top_k=5, message_range=0, filter=flt)
    listing = turn("A1", QUERY, "A")
    await processor.process_input(listing.all(), listing, None, request_context=context("A1", "A"))
    got = {m.id for m in listing.all() if listing.source_of(m.id) == "memory"}
    got |= (
        {"a4"} if any("alpha dates" in (s.content.content or "") for s in listing.system_messages) else set()
    )
    assert got == set(ids(recalled.messages))
    assert got  # every case recalls something


async def test_failing_embedder_is_logged_and_the_list_is_unchanged(
    scenario: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    processor = SemanticRecall(scenario.storage, scenario.vector, BrokenEmbedder(64))
    listing = turn("A1", "a secret question", "A")
    with caplog.at_level(logging.ERROR, logger="mastra_memory.processors"):
        out = await processor.process_input(listing.all(), listing, None, request_context=context("A1", "A"))
    assert out is listing
    assert ids(listing.all()) == ["q"]
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "A1" in record.getMessage()
    assert "secret" not in record.getMessage()


async def test_failing_embedder_raises_with_raise_on_error(scenario: Memory) -> None:
    processor = SemanticRecall(scenario.storage, scenario.vector, BrokenEmbedder(64), raise_on_error=True)
    listing = turn("A1", QUERY, "A")
    with pytest.raises(EmbeddingError):
        await processor.process_input(listing.all(), listing, None, request_context=context("A1", "A"))


async def test_trace_event_has_ids_and_scores_but_no_text(
    scenario: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    processor = processor_for(scenario)
    listing = turn("A2", QUERY, "A")
    with caplog.at_level(logging.INFO, logger="mastra_memory.trace"):
        await processor.process_input(listing.all(), listing, None, request_context=context("A2", "A"))
        await scenario.recall("A2", resource_id="A", vector_search_string=QUERY)
    events = [r for r in caplog.records if getattr(r, "event", None) == "memory.recall"]
    assert len(events) == 2
    for record in events:
        assert (record.thread_id, record.resource_id, record.index_name) == ("A2", "A", "memory_messages_64")  # type: ignore[attr-defined]
        [hit] = record.hits  # type: ignore[attr-defined]
        assert (hit["message_id"], hit["thread_id"]) == ("a2", "A1")
        assert hit["score"] == pytest.approx(1.0)
        assert "banana" not in record.getMessage()
        assert "banana" not in repr(record.__dict__)


# ----------------------------------------------------------------------------- process_output_result


async def test_output_indexes_new_messages_with_the_memory_ids(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    memory = Memory(storage=storage, vector=vector, embedder="hash/64", options={"semanticRecall": True})
    await memory.create_thread("r", "t", metadata={"projectId": "p"})
    await memory.save_messages([msg("h1", "t", "old history", ts(1))])
    history = await storage.list_messages_by_id(["h1"])
    listing = MessageList(history, thread_id="t", resource_id="r", source="memory")
    listing.add([msg("in1", "t", "new question", ts(5))], source="input")
    listing.add_system("You are helpful")
    response = [
        msg("out1", "t", "the answer", ts(6), role="assistant"),
        msg("sys", "t", "system note", ts(7), role="system"),
        {
            "id": "tool",
            "thread_id": "t",
            "role": "assistant",
            "created_at": ts(8),
            "content": {
                "format": 2,
                "parts": [
                    {
                        "type": "tool-invocation",
                        "toolInvocation": {"state": "call", "toolCallId": "c", "toolName": "x", "args": {}},
                    }
                ],
            },
        },
    ]
    processor = recall_only(memory.get_output_processors())[0]
    out = await processor.process_output_result(response, listing, None, request_context=context("t", "r"))
    assert out is listing
    recs = {r.id: r.metadata for r in await records(vector, "memory_messages_64")}
    assert sorted(recs) == ["h1", "in1", "out1"]
    assert recs["out1"] == {
        "projectId": "p",
        "message_id": "out1",
        "thread_id": "t",
        "resource_id": "r",
        "role": "assistant",
        "content": "the answer",
        "created_at": "2024-01-01T00:00:06.000Z",
        "chunk_index": 0,
    }


async def test_output_is_written_once_in_effect_and_hits_the_cache(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    embedder = CountingEmbedder(64)
    memory = Memory(storage=storage, vector=vector, embedder=embedder, options={"semanticRecall": True})
    await memory.create_thread("r", "t")
    turn_messages = [
        msg("u1", "t", "what is the plan", ts(1)),
        msg("a1", "t", "the plan is simple", ts(2), role="assistant"),
    ]
    await memory.save_messages(turn_messages)
    saved = await state(memory)
    calls = embedder.calls.count
    listing = MessageList(turn_messages[:1], thread_id="t", resource_id="r")
    [processor] = recall_only(memory.get_output_processors())
    await processor.process_output_result(turn_messages[1:], listing, None, request_context=context("t", "r"))
    assert embedder.calls.count == calls  # both texts came from the shared cache
    assert await state(memory) == saved  # same ids, same metadata: nothing new was written


async def test_output_without_a_message_list_returns_the_messages(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    processor = SemanticRecall(storage, vector, "hash/16")
    await storage.save_thread({"id": "t", "resource_id": "r"})
    out = await processor.process_output_result(
        [msg("x", "t", "hello", ts(1))], None, None, request_context=context("t", "r")
    )
    assert isinstance(out, list)
    assert [m.id for m in out] == ["x"]
    assert [r.id for r in await records(vector, "memory_messages_16")] == ["x"]


async def test_read_only_and_missing_context_do_not_index(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    embedder = CountingEmbedder(16)
    processor = SemanticRecall(storage, vector, embedder)
    await storage.save_thread({"id": "t", "resource_id": "r"})
    response = [msg("x", "t", "hello", ts(1), role="assistant")]
    contexts: list[dict[str, Any] | None] = [
        context("t", "r", memory_config={"readOnly": True}),
        context("t", "r", memoryConfig={"read_only": True}),
        None,
        {"MastraMemory": {"thread": {}}},
    ]
    for request_context in contexts:
        listing = MessageList(thread_id="t")
        assert (
            await processor.process_output_result(response, listing, None, request_context=request_context)
            is listing
        )
    assert embedder.calls.count == 0
    assert await vector.list_indexes() == []


async def test_output_read_only_from_a_memory_config_model(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    from mastra_memory.memory.config import MemoryConfig

    embedder = CountingEmbedder(16)
    processor = SemanticRecall(storage, vector, embedder)
    cfg = MemoryConfig.from_any({"readOnly": True})
    await processor.process_output_result(
        [msg("x", "t", "hello", ts(1))],
        MessageList(thread_id="t"),
        None,
        request_context=context("t", "r", memory_config=cfg),
    )
    assert embedder.calls.count == 0


class PoisonEmbedder(CountingEmbedder):
    """Refuses any batch that contains the word 'poison'."""

    async def embed_many(self, texts: Sequence[str], **options: Any) -> EmbedResult:
        if any("poison" in t for t in texts):
            self.calls.texts.append(list(texts))
            raise ValueError("provider rejected the input")
        return await super().embed_many(texts, **options)


async def test_output_failure_of_one_message_skips_only_that_message(
    storage: SQLiteStorage, vector: SQLiteVector, caplog: pytest.LogCaptureFixture
) -> None:
    processor = SemanticRecall(storage, vector, PoisonEmbedder(16, "poison/16"))
    await storage.save_thread({"id": "t", "resource_id": "r"})
    response = [
        msg("ok", "t", "fine text", ts(1), role="assistant"),
        msg("bad", "t", "poison text", ts(2), role="assistant"),
    ]
    with caplog.at_level(logging.ERROR, logger="mastra_memory.processors"):
        out = await processor.process_output_result(response, None, None, request_context=context("t", "r"))
    assert [m.id for m in out] == ["ok", "bad"]
    assert [r.id for r in await records(vector, "memory_messages_16")] == ["ok"]
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    assert "bad" in errors[0]
    assert "poison" not in errors[0]


async def test_output_failure_raises_with_raise_on_error(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    processor = SemanticRecall(storage, vector, BrokenEmbedder(16), raise_on_error=True)
    await storage.save_thread({"id": "t", "resource_id": "r"})
    with pytest.raises(EmbeddingError):
        await processor.process_output_result(
            [msg("x", "t", "hello", ts(1))], None, None, request_context=context("t", "r")
        )


async def test_output_with_invalid_messages_never_fails_the_request(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    processor = SemanticRecall(storage, vector, "hash/16")
    listing = MessageList(thread_id="t")
    out = await processor.process_output_result(
        [{"role": "wizard"}], listing, None, request_context=context("t", "r")
    )
    assert out is listing
    strict = SemanticRecall(storage, vector, "hash/16", raise_on_error=True)
    with pytest.raises(ValueError, match="role"):
        await strict.process_output_result(
            [{"role": "wizard"}], listing, None, request_context=context("t", "r")
        )


# ----------------------------------------------------------------------------- Memory's processors


def test_memory_builds_a_configured_processor(storage: SQLiteStorage, vector: SQLiteVector) -> None:
    options = {
        "semanticRecall": {
            "topK": 3,
            "messageRange": {"before": 2, "after": 0},
            "scope": "thread",
            "threshold": 0.25,
            "indexName": "agent_idx",
            "indexConfig": {"metric": "euclidean"},
            "filter": {"projectId": "p"},
        }
    }
    memory = Memory(
        storage=storage, vector=vector, embedder="hash/16", options=options, embedder_options={"x": 1}
    )
    [inp] = recall_only(memory.get_input_processors())
    [out] = recall_only(memory.get_output_processors())
    assert inp is out
    assert isinstance(inp, SemanticRecall)
    assert (inp.storage, inp.vector, inp.embedder) == (storage, vector, memory.embedder)
    assert inp.config == memory.options.recall
    assert inp.indexer.embedder_options == {"x": 1}


def test_memory_processor_is_not_duplicated(storage: SQLiteStorage, vector: SQLiteVector) -> None:
    memory = Memory(storage=storage, vector=vector, embedder="hash/16", options={"semanticRecall": True})
    existing = [SemanticRecall(storage, vector, "hash/16")]
    assert recall_only(memory.get_input_processors(existing)) == []
    assert recall_only(memory.get_output_processors(existing)) == []
    assert (
        recall_only(Memory(storage=storage, vector=vector, embedder="hash/16").get_input_processors()) == []
    )


async def test_memory_and_processor_read_the_same_vectors(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    memory = Memory(storage=storage, vector=vector, embedder="hash/64", options=SCENARIO_OPTIONS)
    await seed(memory)
    [processor] = recall_only(memory.get_input_processors())
    listing = turn("A1", QUERY, "A")
    await processor.process_input(listing.all(), listing, None, request_context=context("A1", "A"))
    assert ids(listing.all()) == ["a1", "a2", "a3", "q"]


def test_message_list_system_messages_and_sources() -> None:
    listing = MessageList([msg("b", "t", "second", ts(2))], thread_id="t")
    listing.add([msg("a", "t", "first", ts(1))], source="memory")
    listing.add([msg("b", "t", "second again", ts(2))], source="memory")  # keeps its first source
    listing.add_system("be brief")
    listing.add_system(
        MastraDBMessage.model_validate({"role": "system", "content": "ctx", "thread_id": "t"}),
        source="memory",
    )
    assert ids(listing.all()) == ["a", "b"]
    assert listing.is_new("b")
    assert not listing.is_new("a")
    assert [m.content.content for m in listing.system_messages] == ["be brief", "ctx"]
    assert [m.content.content for m in listing.system_messages_from("memory")] == ["ctx"]
    assert ids(listing.from_source("memory")) == ["a"]
    assert "a" in listing
    assert len(listing) == 2


async def test_memory_read_only_option_reaches_its_processor(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    embedder = CountingEmbedder(16)
    memory = Memory(
        storage=storage, vector=vector, embedder=embedder, options={"readOnly": True, "semanticRecall": True}
    )
    await memory.create_thread("r", "t")
    [processor] = recall_only(memory.get_output_processors())
    assert processor.read_only is True
    out = await processor.process_output_result(
        [{"id": "x", "role": "assistant", "content": "hi"}], None, None, request_context=context("t", "r")
    )
    assert [m.id for m in out] == ["x"]
    assert embedder.calls.count == 0
    assert await vector.list_indexes() == []


def test_message_list_routes_system_messages() -> None:
    listing = MessageList(
        [msg("sys", "t", "be brief", ts(1), role="system"), msg("u", "t", "hi", ts(2))], thread_id="t"
    )
    listing.add([msg("sys", "t", "be brief", ts(1), role="system")], source="input")
    assert ids(listing.all()) == ["u"]
    assert ids(listing.system_messages) == ["sys"]
