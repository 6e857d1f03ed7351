"""Mastra's token budget on history, ``messageHistory: {maxTokens, atMaxRemoveTokens}`` (issue 26 section 2,
docs/spec.md §5.1, §5.12): the boundary kept in thread metadata (Mastra's ``memoryTokenLimiter`` key and
rules), loading under the budget, the ``memory-token-limiter`` step, and a whole turn through ``Memory``'s
processors on real SQLite stores. Mastra itself runs the same conversations in
tests/interop/test_mastra_history_budget.py.

Counts here use a word counter (one token per word, plus ``message_tokens``' 4 per message), so the
arithmetic in each test can be read off its messages.
"""

from __future__ import annotations

import warnings
from datetime import timedelta
from typing import Any

import pytest

from mastra_memory.errors import ConfigError
from mastra_memory.memory import Memory
from mastra_memory.memory.config import HistoryLimits, MemoryConfig
from mastra_memory.memory.message_list import MessageList
from mastra_memory.memory.processors import MemoryTokenLimiter, MessageHistory, TokenBoundary
from mastra_memory.memory.processors.history_budget import (
    BOUNDARY_KEY,
    PROMPT_OVERHEAD,
    advance_boundary,
    linked_groups,
    load_history,
    message_cost,
)
from mastra_memory.messages import MastraDBMessage
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

from .memory_helpers import ids, msg, records, ts


class Words:
    """One token per whitespace-separated word."""

    def count(self, text: str) -> int:
        return len(text.split())


WORDS = message_cost(Words())


def m(
    mid: str, second: int, words: int = 6, thread: str = "t", role: str = "user", **kw: Any
) -> MastraDBMessage:
    """A message of ``words`` words (so it costs ``words + 4``)."""
    return MastraDBMessage.model_validate(msg(mid, thread, " ".join(["w"] * words), ts(second), role, **kw))


def tool_pair(call_id: str, second: int) -> list[MastraDBMessage]:
    part = {
        "type": "tool-invocation",
        "toolInvocation": {"state": "call", "toolCallId": call_id, "toolName": "f", "args": {}},
    }
    done = {
        "type": "tool-invocation",
        "toolInvocation": {
            "state": "result",
            "toolCallId": call_id,
            "toolName": "f",
            "args": {},
            "result": 1,
        },
    }
    return [
        MastraDBMessage.model_validate(
            {
                "id": f"{call_id}-a",
                "thread_id": "t",
                "role": "assistant",
                "created_at": ts(second),
                "content": {"format": 2, "parts": [part]},
            }
        ),
        MastraDBMessage.model_validate(
            {
                "id": f"{call_id}-b",
                "thread_id": "t",
                "role": "assistant",
                "created_at": ts(second + 1),
                "content": {"format": 2, "parts": [done]},
            }
        ),
    ]


def ctx(thread: str = "t", resource: str = "r", **memory_config: Any) -> dict[str, Any]:
    context: dict[str, Any] = {"thread": {"id": thread}, "resourceId": resource}
    if memory_config:
        context["memoryConfig"] = memory_config
    return {"MastraMemory": context}


async def seeded(storage: SQLiteStorage, messages: list[MastraDBMessage], metadata: Any = None) -> None:
    await storage.save_thread({"id": "t", "resource_id": "r", "title": "", "metadata": metadata})
    await storage.save_messages([x.model_copy(update={"resource_id": "r"}) for x in messages])


# --- configuration ------------------------------------------------------------------------------------


def test_limits_follow_mastras_rules() -> None:
    # No lastMessages beside messageHistory: no count cap (the default 10 is not applied).
    assert MemoryConfig.from_any({"messageHistory": {"maxTokens": 100}}).history_limits == HistoryLimits(
        True, None, 100, 25
    )
    assert MemoryConfig.from_any(
        {"messageHistory": {"maxTokens": 100, "atMaxRemoveTokens": 0}, "lastMessages": 3}
    ).history_limits == HistoryLimits(True, 3, 100, 0)
    assert not MemoryConfig.from_any({"messageHistory": {"maxTokens": 100}, "lastMessages": False}).history_on
    assert not MemoryConfig.from_any({"messageHistory": {"maxTokens": 0}}).history_on
    assert MemoryConfig.from_any({}).history_limits == HistoryLimits(True, 10)


def test_history_tokens_is_deprecated_and_not_beside_message_history() -> None:
    with pytest.warns(DeprecationWarning, match="message_history"):
        MemoryConfig.from_any({"historyTokens": 50})
    both = {"historyTokens": 50, "messageHistory": {"maxTokens": 100}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(ConfigError, match="history_tokens is deprecated"):
            MemoryConfig.from_any(both)


# --- the boundary -------------------------------------------------------------------------------------


def test_the_boundary_is_read_by_mastras_rules() -> None:
    good = {
        "createdAt": "2024-01-01T00:00:05.000Z",
        "messageIds": ["a"],
        "maxTokens": 100,
        "atMaxRemoveTokens": 25,
    }
    boundary = TokenBoundary.of_thread({"metadata": {BOUNDARY_KEY: good}})
    assert boundary is not None
    assert boundary.to_json() == good
    for bad in (
        {**good, "createdAt": "not a date"},
        {**good, "createdAt": 5},
        {**good, "messageIds": [1]},
        {**good, "messageIds": "a"},
        {**good, "maxTokens": "100"},
        {**good, "atMaxRemoveTokens": True},
        {key: value for key, value in good.items() if key != "maxTokens"},
    ):
        assert TokenBoundary.of_thread({"metadata": {BOUNDARY_KEY: bad}}) is None
    assert TokenBoundary.of_thread({"metadata": {BOUNDARY_KEY: "x"}}) is None
    assert TokenBoundary.of_thread(None) is None
    # Only for the budget it was written with.
    assert boundary.for_limits(HistoryLimits(True, None, 100, 25)) is boundary
    assert boundary.for_limits(HistoryLimits(True, None, 100, 20)) is None
    # After it: a later message, or one at the same millisecond that was not removed.
    assert boundary.admits(m("b", 6))
    assert boundary.admits(m("b", 5))
    assert not boundary.admits(m("a", 5))
    assert not boundary.admits(m("z", 4))


def test_the_boundary_only_moves_forward() -> None:
    first = advance_boundary(None, [m("a", 3), m("b", 5), m("c", 5)], 100, 25)
    assert first is not None
    assert first.to_json() == {
        "createdAt": "2024-01-01T00:00:05.000Z",
        "messageIds": ["b", "c"],
        "maxTokens": 100,
        "atMaxRemoveTokens": 25,
    }
    # Recall brought an older message back and it was trimmed again: the boundary stays.
    assert advance_boundary(first, [m("old", 1)], 100, 25) is first
    # The same millisecond: the ids are merged.
    same = advance_boundary(first, [m("d", 5)], 100, 25)
    assert same is not None
    assert same.message_ids == ("b", "c", "d")
    later = advance_boundary(first, [m("e", 9)], 100, 25)
    assert later is not None
    assert later.message_ids == ("e",)
    assert advance_boundary(first, [], 100, 25) is first


def test_tool_call_and_result_messages_are_one_group() -> None:
    pair = tool_pair("call-1", 2)
    groups = linked_groups([m("u", 1), *pair, m("v", 4)])
    assert [[x.id for x in g] for g in groups] == [["u"], ["call-1-a", "call-1-b"], ["v"]]


# --- loading under the budget ------------------------------------------------------------------------


async def test_history_loads_newest_first_within_the_budget_less_what_is_freed(
    storage: SQLiteStorage,
) -> None:
    await seeded(storage, [m(f"m{i}", i) for i in range(1, 9)])  # 10 tokens each
    limits = HistoryLimits(True, None, 45, 10)  # 35 tokens for history: the newest 3
    loaded = await load_history(storage, "t", "r", limits, WORDS)
    assert ids(loaded.messages) == ["m6", "m7", "m8"]
    assert loaded.overflow == []
    overflow = await load_history(storage, "t", "r", limits, WORDS, include_overflow=True)
    assert ids(overflow.overflow) == [f"m{i}" for i in range(1, 6)]
    # A count cap beside it; when the count (not the tokens) ends history, nothing overflows.
    capped = HistoryLimits(True, 2, 1000, 0)
    loaded = await load_history(storage, "t", "r", capped, WORDS, include_overflow=True)
    assert ids(loaded.messages) == ["m7", "m8"]
    assert loaded.overflow == []
    # initial_tokens count against the budget (Memory.recall passes the prompt's own overhead).
    assert ids((await load_history(storage, "t", "r", limits, WORDS, initial_tokens=10)).messages) == [
        "m7",
        "m8",
    ]


async def test_history_starts_after_the_boundary_and_reads_many_pages(storage: SQLiteStorage) -> None:
    await seeded(
        storage,
        [
            m(f"m{i:03}", 0, 1).model_copy(update={"created_at": ts(0) + timedelta(seconds=i)})
            for i in range(100)
        ],
    )  # 5 tokens each
    boundary = TokenBoundary(ts(0) + timedelta(seconds=9), ("m009",), 10_000, 0)
    loaded = await load_history(storage, "t", "r", HistoryLimits(True, None, 10_000, 0), WORDS, boundary)
    assert ids(loaded.messages) == [f"m{i:03}" for i in range(10, 100)]
    # A tool call and its result are loaded or left together: v (11) fits, the pair (6 + 7) does not.
    storage2 = SQLiteStorage(":memory:")
    await seeded(storage2, [m("u", 1), *tool_pair("c", 2), m("v", 9, 7)])
    loaded = await load_history(storage2, "t", "r", HistoryLimits(True, None, 22, 0), WORDS)
    assert ids(loaded.messages) == ["v"]


# --- the memory-token-limiter step -------------------------------------------------------------------


def limiter(
    storage: SQLiteStorage, max_tokens: int, remove: int, read_only: bool = False
) -> MemoryTokenLimiter:
    return MemoryTokenLimiter(
        storage, HistoryLimits(True, None, max_tokens, remove), read_only=read_only, cost=WORDS
    )


async def test_the_limiter_frees_remembered_messages_oldest_first_and_moves_the_boundary(
    storage: SQLiteStorage,
) -> None:
    history = [m(f"m{i}", i) for i in range(1, 6)]  # 10 tokens each
    await seeded(storage, history, metadata={"topic": "x"})
    new = m("new", 30, 16)  # 20 tokens
    turn = MessageList([new], thread_id="t", resource_id="r")
    turn.add(history, source="memory")
    turn.add_system("one two three")  # 3 + 4 = 7 tokens
    # 24 + 7 + 50 + 20 = 101 > 100: oldest first until at most 100 - 30 = 70:
    # m1 (91), m2 (81), m3 (71), m4 (61).
    await limiter(storage, 100, 30).process_input([new], turn, request_context=ctx())
    assert ids(turn.all()) == ["m5", "new"]
    thread = await storage.get_thread_by_id("t")
    assert thread is not None
    assert thread.metadata is not None
    assert thread.metadata["topic"] == "x"
    assert thread.metadata[BOUNDARY_KEY] == {
        "createdAt": "2024-01-01T00:00:04.000Z",
        "messageIds": ["m4"],
        "maxTokens": 100,
        "atMaxRemoveTokens": 30,
    }
    # The turn's own messages are never removed, even when they alone are over budget.
    alone = MessageList([m("big", 40, 200)], thread_id="t")
    await limiter(storage, 100, 30).process_input([], alone, request_context=ctx())
    assert ids(alone.all()) == ["big"]


async def test_under_budget_nothing_moves_and_read_only_writes_no_boundary(storage: SQLiteStorage) -> None:
    history = [m(f"m{i}", i) for i in range(1, 4)]
    await seeded(storage, history)
    turn = MessageList([m("new", 30)], thread_id="t").add(history, source="memory")
    await limiter(storage, 24 + 40, 10).process_input([], turn, request_context=ctx())  # exactly at budget
    assert ids(turn.all()) == ["m1", "m2", "m3", "new"]
    # 64 > 50: down to 44, m1 (54) and m2 (44); read-only trims the prompt and writes nothing.
    await limiter(storage, 50, 6, read_only=True).process_input([], turn, request_context=ctx())
    assert ids(turn.all()) == ["m3", "new"]
    turn = MessageList([m("new", 30)], thread_id="t").add(history, source="memory")
    await limiter(storage, 50, 6).process_input([], turn, request_context=ctx(readOnly=True))
    assert ids(turn.all()) == ["m3", "new"]
    thread = await storage.get_thread_by_id("t")
    assert thread is not None
    assert BOUNDARY_KEY not in (thread.metadata or {})


async def test_a_recalled_older_message_is_trimmed_without_moving_the_boundary_back(
    storage: SQLiteStorage,
) -> None:
    history = [m(f"m{i}", i) for i in range(1, 9)]
    stored = TokenBoundary(ts(5), ("m5",), 60, 20).to_json()
    await seeded(storage, history, metadata={BOUNDARY_KEY: stored})
    # Semantic recall brought m1 back beside the history after the boundary (m6..m8).
    turn = MessageList([m("new", 30)], thread_id="t").add([history[0], *history[5:]], source="memory")
    # 24 + 40 + 10 = 74 > 60: free down to 40: m1 (64), m6 (54), m7 (44), m8 (34).
    await limiter(storage, 60, 20).process_input([], turn, request_context=ctx())
    assert ids(turn.all()) == ["new"]
    thread = await storage.get_thread_by_id("t")
    assert thread is not None
    assert thread.metadata is not None
    assert thread.metadata[BOUNDARY_KEY]["messageIds"] == ["m8"]
    # Only the recalled m1 has to go: it leaves the prompt, and the boundary stays where it was.
    stored = TokenBoundary(ts(5), ("m5",), 60, 0).to_json()
    await storage.update_thread("t", metadata={BOUNDARY_KEY: stored})
    turn = MessageList([m("new", 30, 16)], thread_id="t").add([history[0], history[7]], source="memory")
    # 24 + 10 + 10 + 20 = 64 > 60: down to 60, m1 (54).
    await limiter(storage, 60, 0).process_input([], turn, request_context=ctx())
    assert ids(turn.all()) == ["m8", "new"]
    thread = await storage.get_thread_by_id("t")
    assert thread is not None
    assert thread.metadata is not None
    assert thread.metadata[BOUNDARY_KEY] == stored


async def test_messages_of_other_threads_leave_the_prompt_but_not_the_boundary(
    storage: SQLiteStorage,
) -> None:
    await seeded(storage, [m("m1", 1)])
    turn = MessageList([m("new", 30)], thread_id="t").add([m("x1", 2, thread="other")], source="memory")
    await limiter(storage, 40, 0).process_input([], turn, request_context=ctx())
    assert ids(turn.all()) == ["new"]
    thread = await storage.get_thread_by_id("t")
    assert thread is not None
    assert BOUNDARY_KEY not in (thread.metadata or {})


# --- a conversation through Memory's processors ------------------------------------------------------


async def turn(memory: Memory, text: str, words_reply: int, n: int, **memory_config: Any) -> list[str]:
    """One turn: the memory input processors, then a reply, then the output processors. Returns the ids the
    model received."""
    request = ctx(**memory_config)
    user = {"id": f"u{n}", "role": "user", "content": text, "thread_id": "t", "resource_id": "r"}
    message_list = MessageList([user], thread_id="t", resource_id="r")
    for p in memory.get_input_processors(request_context=request):
        message_list = await p.process_input(message_list.all(), message_list, request_context=request)
    seen = ids(message_list.all())
    reply = {"id": f"a{n}", "role": "assistant", "content": " ".join(["r"] * words_reply), "thread_id": "t"}
    message_list.add([reply], source="response")
    for p in memory.get_output_processors(request_context=request):
        await p.process_output_result([reply], message_list, request_context=request)
    return seen


async def test_a_conversation_trims_in_chunks_behind_a_stable_prefix(storage: SQLiteStorage) -> None:
    memory = Memory(storage=storage, options={"messageHistory": {"maxTokens": 400, "atMaxRemoveTokens": 200}})
    cost = message_cost()
    seen: list[list[str]] = []
    for n in range(1, 13):
        seen.append(await turn(memory, " ".join(["word"] * 20), 20, n))
    # Every prompt fits the budget, counted as the limiter counts it.
    stored = {x.id: x for x in (await storage.list_messages("t", per_page=False)).messages}
    for prompt in seen:
        assert PROMPT_OVERHEAD + sum(cost(stored[i]) for i in prompt) <= 400
    # History grows turn by turn, then drops a chunk at once: between drops the prompt only grows at its
    # end (its start stays, which keeps a provider's prompt cache warm).
    drops = [n for n in range(1, len(seen)) if seen[n][0] != seen[n - 1][0]]
    assert drops, seen
    for n in range(1, len(seen)):
        if n not in drops:
            assert seen[n] == [*seen[n - 1], f"a{n}", f"u{n + 1}"]
    thread = await memory.get_thread_by_id("t")
    assert thread is not None
    assert thread.metadata is not None
    boundary = TokenBoundary.of_thread(thread)
    assert boundary is not None
    assert boundary.max_tokens == 400
    assert boundary.at_max_remove_tokens == 200
    # Nothing was deleted: the boundary hides, storage keeps.
    assert len(stored) == 24
    # The last prompt starts right after the boundary.
    assert all(boundary.admits(stored[i]) for i in seen[-1] if i in stored)
    # Another budget ignores that boundary (a changed budget starts over, as in Mastra).
    wide = await turn(memory, "again", 1, 99, messageHistory={"maxTokens": 100_000})
    assert wide[0] == "u1"


async def test_a_count_cap_beside_the_budget_and_history_off(storage: SQLiteStorage) -> None:
    memory = Memory(storage=storage, options={"messageHistory": {"maxTokens": 100_000}, "lastMessages": 3})
    for n in range(1, 4):
        await turn(memory, "hello", 1, n)
    assert await turn(memory, "hello", 1, 4) == ["a2", "u3", "a3", "u4"]
    off = await turn(memory, "x", 1, 5, messageHistory={"maxTokens": 0})
    assert off == ["u5"]


async def test_a_host_built_message_history_reads_the_budget_from_the_request(storage: SQLiteStorage) -> None:
    await seeded(storage, [m(f"m{i}", i, 40) for i in range(1, 6)])
    history = MessageHistory(storage, last_messages=False, token_counter=Words())
    request = ctx(messageHistory={"maxTokens": 100, "atMaxRemoveTokens": 50})
    message_list = MessageList([], thread_id="t")
    await history.process_input([], message_list, request_context=request)
    # 50 tokens for history: m5 (44) fits, m4 overflows; the rest of the page read on the way comes too.
    assert ids(message_list.all()) == ["m1", "m2", "m3", "m4", "m5"]


async def test_the_boundary_is_not_copied_into_vectors(storage: SQLiteStorage, vector: SQLiteVector) -> None:
    memory = Memory(storage=storage, vector=vector, embedder="hash/8", options={"semanticRecall": True})
    stored = TokenBoundary(ts(1), ("a",), 10, 2).to_json()
    await memory.create_thread("r", "t", metadata={"topic": "x", BOUNDARY_KEY: stored})
    await memory.save_messages([msg("m1", "t", "hello there", ts(2), resource_id="r")])
    [index] = await vector.list_indexes()
    [record] = await records(vector, index)
    assert record.metadata is not None
    assert record.metadata["topic"] == "x"
    assert BOUNDARY_KEY not in record.metadata
    await memory.close()
