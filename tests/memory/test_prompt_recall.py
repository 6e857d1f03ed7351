"""recall_new_context: recall for a prompt that already holds part of the conversation.

The agent-framework integrations save the user's question before the model runs, so the best hit is the
question itself; the function must skip what the prompt already shows and still return ``top_k`` new hits
with their context windows, scoped like ``Memory.recall``.
"""

from __future__ import annotations

from mastra_memory.memory import Memory, recall_new_context
from mastra_memory.messages import render_text
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

from .memory_helpers import msg, ts

OPTIONS = {"lastMessages": 2, "semanticRecall": {"topK": 1, "messageRange": 1, "scope": "resource"}}


async def _memory(storage: SQLiteStorage, vector: SQLiteVector) -> Memory:
    memory = Memory(storage=storage, vector=vector, embedder="hash/64", options=OPTIONS)
    await memory.create_thread("alex", "trip")
    await memory.create_thread("alex", "now")
    await memory.create_thread("sam", "other")
    await memory.save_messages(
        [
            msg("t1", "trip", "we fly to kyoto in april", ts(1)),
            msg("t2", "trip", "the kyoto hotel check in is at three", ts(2)),
            msg("t3", "trip", "remember to pack the adapter", ts(3)),
            msg("o1", "other", "the kyoto hotel check in is at three", ts(4)),
            msg("n1", "now", "when is the kyoto hotel check in", ts(5)),
        ]
    )
    return memory


async def test_hits_already_in_the_prompt_are_skipped_and_top_k_new_ones_come_with_context(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    memory = await _memory(storage, vector)
    try:
        question = "when is the kyoto hotel check in"
        recalled = await recall_new_context(memory, "now", "alex", question, {question}, None)
        texts = [render_text(m) for m in recalled]
        # The question (the best hit) is in the prompt: skipped. The best new hit is t2, with one message
        # of context either side, oldest first. Sam's identical message is another resource's: never.
        assert [m.id for m in recalled] == ["t1", "t2", "t3"], texts
        assert question not in texts
    finally:
        await memory.close()


async def test_context_already_in_the_prompt_is_not_repeated(
    storage: SQLiteStorage, vector: SQLiteVector
) -> None:
    memory = await _memory(storage, vector)
    try:
        question = "when is the kyoto hotel check in"
        present = {question, "we fly to kyoto in april"}
        recalled = await recall_new_context(memory, "now", "alex", question, present, None)
        assert [m.id for m in recalled] == ["t2", "t3"]
    finally:
        await memory.close()


async def test_recall_off_returns_nothing(storage: SQLiteStorage, vector: SQLiteVector) -> None:
    memory = await _memory(storage, vector)
    try:
        off = {"semanticRecall": False}
        assert await recall_new_context(memory, "now", "alex", "kyoto hotel", set(), off) == []
    finally:
        await memory.close()
