"""docs/spec.md §8.3 M1–M11: the memory scenario, end to end against the real SQLite stores."""

from __future__ import annotations

from typing import Any

import pytest

from mastra_memory.errors import ResourceScopeError, ThreadOwnershipError
from mastra_memory.memory import Memory
from mastra_memory.memory.message_list import MessageList
from mastra_memory.memory.processors.semantic_recall import SemanticRecall
from mastra_memory.memory.recall.formatting import format_cross_thread_messages
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

from .memory_helpers import SCENARIO_OPTIONS, ids, msg, recall_only, records, seed, ts, vectors_by_message

QUERY = "alpha bananas"


async def test_every_message_has_exactly_one_vector(scenario: Memory) -> None:
    assert await scenario.vector.list_indexes() == ["memory_messages_64"]
    recs = await records(scenario.vector, "memory_messages_64")
    assert [r.id for r in recs] == ["a1", "a2", "a3", "a4", "b1"]
    a2 = next(r for r in recs if r.id == "a2")
    assert a2.metadata == {
        "message_id": "a2",
        "thread_id": "A1",
        "resource_id": "A",
        "role": "user",
        "content": "alpha bananas",
        "created_at": "2024-01-01T00:00:02.000Z",
        "chunk_index": 0,
    }


async def test_m1_hit_window_and_history(scenario: Memory) -> None:
    result = await scenario.recall("A2", resource_id="A", vector_search_string=QUERY)
    assert ids(result.messages) == ["a1", "a2", "a3", "a4"]
    assert [(h.message_id, h.thread_id) for h in result.hits] == [("a2", "A1")]
    assert result.hits[0].score == pytest.approx(1.0)
    assert result.index_name == "memory_messages_64"


async def test_m2_thread_scope(scenario: Memory) -> None:
    result = await scenario.recall(
        "A2",
        resource_id="A",
        vector_search_string=QUERY,
        thread_config={"semanticRecall": {"scope": "thread"}},
    )
    assert ids(result.messages) == ["a4"]


async def test_m3_wrong_resource(scenario: Memory) -> None:
    with pytest.raises(ThreadOwnershipError) as info:
        await scenario.recall("A2", resource_id="B", vector_search_string=QUERY)
    assert str(info.value) == "thread A2 does not belong to the requested resource"


async def test_m4_resource_scope_without_resource(scenario: Memory) -> None:
    with pytest.raises(ResourceScopeError, match="needs a resource_id"):
        await scenario.recall("A2", vector_search_string=QUERY)


async def test_m5_no_cross_resource_leak(scenario: Memory) -> None:
    result = await scenario.recall("B1", resource_id="B", vector_search_string=QUERY)
    assert ids(result.messages) == ["b1"]
    assert [h.message_id for h in result.hits] == ["b1"]  # the only vector in resource B
    assert all(m.resource_id == "B" for m in result.messages)


async def test_m6_delete_leaves_no_vector_and_no_result(scenario: Memory) -> None:
    await scenario.delete_messages(["a2"])
    assert "a2" not in await vectors_by_message(scenario.vector)
    result = await scenario.recall("A2", resource_id="A", vector_search_string=QUERY)
    assert "a2" not in ids(result.messages)
    assert all(h.message_id != "a2" for h in result.hits)


async def test_m7_threshold_removes_weak_hits(scenario: Memory) -> None:
    result = await scenario.recall(
        "A2",
        resource_id="A",
        vector_search_string="zzz unrelated",
        thread_config={"semanticRecall": {"threshold": 0.999}},
    )
    assert ids(result.messages) == ["a4"]
    assert result.hits == []


async def test_m8_windows_only_without_history(scenario: Memory) -> None:
    result = await scenario.recall(
        "A2", resource_id="A", vector_search_string=QUERY, thread_config={"lastMessages": False}
    )
    assert ids(result.messages) == ["a1", "a2", "a3"]
    assert result.per_page == 0
    assert result.total == 0
    assert result.has_more is False


@pytest.mark.parametrize(
    ("embedder", "index"), [("hash/64", "memory_messages_64"), ("hash/1536", "memory_messages")]
)
async def test_m9_default_index_names(
    storage: SQLiteStorage, vector: SQLiteVector, embedder: str, index: str
) -> None:
    memory = Memory(storage=storage, vector=vector, embedder=embedder, options=SCENARIO_OPTIONS)
    await seed(memory)
    result = await memory.recall("A2", resource_id="A", vector_search_string=QUERY)
    assert ids(result.messages) == ["a1", "a2", "a3", "a4"]
    assert await vector.list_indexes() == [index]
    assert (await vector.describe_index(index)).dimension == int(embedder.split("/")[1])


async def test_m9_custom_index_name_on_every_path(storage: SQLiteStorage, vector: SQLiteVector) -> None:
    options: dict[str, Any] = {
        "lastMessages": 1,
        "semanticRecall": {"topK": 1, "messageRange": 1, "indexName": "custom_idx"},
    }
    memory = Memory(storage=storage, vector=vector, embedder="hash/64", options=options)
    await seed(memory)  # save
    assert await vector.list_indexes() == ["custom_idx"]
    assert [r.id for r in await records(vector, "custom_idx")] == ["a1", "a2", "a3", "a4", "b1"]

    result = await memory.recall("A2", resource_id="A", vector_search_string=QUERY)  # recall
    assert ids(result.messages) == ["a1", "a2", "a3", "a4"]
    assert result.index_name == "custom_idx"

    await memory.update_messages([{"id": "a3", "content": "alpha cranberries"}])  # update
    a3 = next(r for r in await records(vector, "custom_idx") if r.id == "a3")
    assert a3.metadata["content"] == "alpha cranberries"

    await memory.delete_messages(["a1"])  # delete
    assert "a1" not in {r.id for r in await records(vector, "custom_idx")}

    assert await memory.reindex_thread("A1") == 2  # reindex
    assert [r.id for r in await records(vector, "custom_idx")] == ["a2", "a3", "a4", "b1"]

    [processor] = recall_only(memory.get_input_processors())  # a processor round
    context = {"MastraMemory": {"thread": {"id": "A2", "resource_id": "A"}, "resource_id": "A"}}
    listing = MessageList([msg("n1", "A2", QUERY, ts(9))], thread_id="A2", resource_id="A")
    await processor.process_input(listing.all(), listing, None, request_context=context)
    [system] = listing.system_messages  # a2's window (other thread A1) read from custom_idx
    assert "User: alpha cranberries" in (system.content.content or "")  # a1 was deleted above
    assert "User: alpha bananas" in (system.content.content or "")
    await processor.process_output_result(
        [msg("n2", "A2", "assistant answer", ts(10), role="assistant")],
        listing,
        None,
        request_context=context,
    )
    assert {"n1", "n2"} <= {r.id for r in await records(vector, "custom_idx")}
    assert await vector.list_indexes() == ["custom_idx"]


async def test_m10_long_message_is_chunked(scenario: Memory) -> None:
    text = " ".join(["word"] * 8000)
    assert len(text) == 39_999
    await scenario.save_messages([msg("long", "A1", text, ts(30))])
    recs = [
        r for r in await records(scenario.vector, "memory_messages_64") if r.metadata["message_id"] == "long"
    ]
    assert [r.id for r in recs] == ["long", "long#1", "long#2"]
    assert all(r.metadata["thread_id"] == "A1" and r.metadata["resource_id"] == "A" for r in recs)
    chunks = [r.metadata["content"] for r in recs]
    assert [len(c) for c in chunks] == [16_384, 16_384, 7_229]
    assert " ".join(chunks) == text


EXAMPLE = (
    "Messages recalled from earlier conversations with this user:\n"
    "<remembered_from_other_conversation>\n"
    "\n"
    "messages of 2024, Mar, 5\n"
    "Message from previous conversation at 2:07 PM: User: Where is the invoice?"
    "Message from previous conversation at 2:08 PM: Assistant: It went out on Monday.\n"
    "messages of 2024, Mar, 6\n"
    "Message from previous conversation at 9:30 AM: User: Thanks, found it.\n"
    "<end_remembered_from_other_conversation>"
)


async def test_m11_processor_renders_the_example(storage: SQLiteStorage, vector: SQLiteVector) -> None:
    from datetime import UTC, datetime

    memory = Memory(storage=storage, vector=vector, embedder="hash/64", options={"semanticRecall": True})
    await memory.create_thread("R", "t1")
    await memory.create_thread("R", "t2")
    await memory.save_messages(
        [
            msg("m1", "t2", "Where is the invoice?", datetime(2024, 3, 5, 14, 7, tzinfo=UTC)),
            msg(
                "m2",
                "t2",
                "It went out on Monday.",
                datetime(2024, 3, 5, 14, 8, tzinfo=UTC),
                role="assistant",
            ),
            msg("m3", "t2", "Thanks, found it.", datetime(2024, 3, 6, 9, 30, tzinfo=UTC)),
        ]
    )
    processor = SemanticRecall(storage, vector, "hash/64", top_k=3, message_range=0)
    listing = MessageList([msg("q", "t1", "Where is the invoice?", ts(1, day=7))], thread_id="t1")
    context = {"MastraMemory": {"thread": {"id": "t1", "resource_id": "R"}}}
    await processor.process_input(listing.all(), listing, None, request_context=context)
    [system] = listing.system_messages
    assert system.role == "system"
    assert system.content.content == EXAMPLE
    assert listing.source_of("m1") is None  # other-thread messages are only in the system message
    # the same rendering straight from the renderer
    assert (
        format_cross_thread_messages((await storage.list_messages("t2", per_page=False)).messages, "t1")
        == EXAMPLE
    )
