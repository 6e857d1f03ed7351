"""A stored message can never block the recovery of its thread (issue 12, finding 3; docs/spec.md §5.4).

Before the fix, text with U+0000, an id over 512 characters (or one whose ``#<n>`` chunk ids are) and, on
pgvector storage, a lone surrogate passed storage validation: ``save_messages`` stored the message, then
raised ``IndexingError``, and from then on ``reindex_thread``/``reindex`` raised on every run and restored
none of the thread's good messages. Now, with semantic recall on:

* ``save_messages`` checks what the vector store needs before the storage write and raises a typed
  ``ValidationError`` naming the message: nothing of the call is stored, earlier data is untouched;
* a message already stored that cannot be indexed (written straight into storage, as data stored before
  this fix) is skipped and reported by ``reindex_thread``/``reindex``; every other message is re-indexed
  and found by recall.

Real SQLite stores (the default), ``hash/64`` embeddings; the pgvector case lives with the adapter's real
server fixture (``adapters/pgvector/tests/test_memory_recovery.py``).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mastra_memory.errors import IndexDimensionMismatchError, ValidationError
from mastra_memory.memory import Memory, ReindexResult
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

T0 = datetime(2024, 1, 1, tzinfo=UTC)
INDEX = "memory_messages_64"
OPTIONS = {"lastMessages": 1, "semanticRecall": {"topK": 3, "messageRange": 0, "scope": "thread"}}
GOOD = {
    "g1": "the lighthouse keeper counts seagulls at dawn",
    "g2": "our invoice for the blue kayak is overdue",
    "g3": "grandmother's recipe needs cardamom and rye",
}
#: 511 characters: storage takes it, and chunk 0 fits a vector id, but chunk 1 is ``<id>#1``: 513.
LONG_ID = "L" * 511
#: Two chunks of the default chunk size (16,384 characters).
TWO_CHUNKS = "alpha" * 3_000 + " " + "omega" * 3_000


def _msg(id: str, text: str, seconds: int, thread_id: str = "t1") -> dict[str, Any]:
    return {
        "id": id,
        "thread_id": thread_id,
        "role": "user",
        "content": text,
        "created_at": T0 + timedelta(seconds=seconds),
    }


@pytest.fixture
async def memory() -> AsyncIterator[Memory]:
    """Thread ``t1`` of resource ``r`` holds the good messages g1..g3 (stored and indexed)."""
    m = Memory(
        storage=SQLiteStorage(":memory:"),
        vector=SQLiteVector(":memory:"),
        embedder="hash/64",
        options=OPTIONS,
    )
    await m.create_thread("r", "t1")
    await m.save_messages([_msg(i, text, n) for n, (i, text) in enumerate(GOOD.items())])
    yield m
    await m.close()


async def _snapshot(memory: Memory) -> tuple[list[tuple[str, str]], list[tuple[str, Any]]]:
    """Every stored message (id, text) and every vector record (id, metadata) of every thread."""
    messages: list[tuple[str, str]] = []
    for thread in (await memory.storage.list_threads(per_page=False)).threads:
        page = await memory.storage.list_messages(thread.id, per_page=False)
        messages += [(m.id, m.content.content or "") for m in page.messages]
    vectors = []
    for name in await memory.vector.list_indexes():
        vectors += [
            (r.id, sorted(r.metadata.items())) for r in await memory.vector.query(name, None, top_k=1000)
        ]
    return sorted(messages), sorted(vectors)


async def _recalled(memory: Memory, text: str, thread_id: str = "t1") -> list[str]:
    """The ids semantic recall finds for ``text`` (its top hit first)."""
    result = await memory.recall(thread_id, "r", vector_search_string=text)
    return [h.message_id for h in result.hits]


# --- (a) save_messages refuses before anything is stored --------------------------------------------

BAD_SAVES = {
    "nul-text": ("m-nul", "before\x00after", "its text contains U+0000"),
    "id-600": ("x" * 600, "a perfectly normal sentence", "has 600 characters, more than the 512"),
    "lone-surrogate": ("m-sur", "broken \ud800 text", "its text contains an unpaired surrogate"),
    "chunk-id-513": (LONG_ID, TWO_CHUNKS, "plus the chunk suffix '#1') has 513 characters"),
}


@pytest.mark.parametrize("case", list(BAD_SAVES))
async def test_save_messages_refuses_an_unindexable_message_before_storing_anything(
    memory: Memory, case: str
) -> None:
    message_id, text, phrase = BAD_SAVES[case]
    before = await _snapshot(memory)
    batch = [_msg("fine-one", "a good message in the same call", 10), _msg(message_id, text, 11)]
    with pytest.raises(ValidationError) as caught:
        await memory.save_messages(batch)
    err = caught.value
    assert phrase in err.message
    assert "Nothing was stored" in err.message
    assert message_id[:40] in err.message  # the message is named (a long id by its start)
    assert err.id == "MASTRA_MEMORY_SAVE_MESSAGES_UNINDEXABLE_MESSAGE"
    assert err.details["message_ids"] == [message_id]
    assert "\ud800" not in err.message
    assert "\ud800" not in repr(err.details)
    # Atomic: the good message of the same call is not stored either; earlier data is intact.
    assert await _snapshot(memory) == before
    assert (await _recalled(memory, GOOD["g2"]))[0] == "g2"
    # The thread stays recoverable: reindex has nothing to skip.
    result = await memory.reindex_thread("t1")
    assert (int(result), result.skipped) == (3, ())


async def test_without_semantic_recall_nothing_is_checked_for_the_vector_side() -> None:
    """The check is what the vector side needs: with recall off a NUL text is the storage's business."""
    m = Memory(storage=SQLiteStorage(":memory:"), vector=SQLiteVector(":memory:"), embedder="hash/64")
    try:
        await m.create_thread("r", "t1")
        saved = await m.save_messages([_msg("m-nul", "before\x00after", 1)])
        assert [s.id for s in saved.messages] == ["m-nul"]
    finally:
        await m.close()


async def test_a_thread_whose_metadata_cannot_be_indexed_refuses_the_save(memory: Memory) -> None:
    """Thread metadata is spread into every vector (§5.4): a NUL in it is refused at save, naming it. (The
    thread is written straight into storage, as one stored before Memory refused such metadata.)"""
    await memory.storage.save_thread({"id": "t2", "resource_id": "r", "metadata": {"label": "bad\x00label"}})
    with pytest.raises(ValidationError, match=r"its thread's metadata at 'label' contains U\+0000"):
        await memory.save_messages([_msg("m-t2", "hello there", 1, thread_id="t2")])
    assert (await memory.storage.list_messages("t2", per_page=False)).messages == []


# --- (b) reindex skips and reports what it cannot index ---------------------------------------------


async def _poison(memory: Memory) -> None:
    """Store unindexable messages straight into storage, as ``save_messages`` did before the fix, and drop
    every vector (the failed write left none; reindex must rebuild the good ones)."""
    await memory.storage.save_messages(
        [
            _msg("bad-nul", "poison\x00text", 20),
            _msg(LONG_ID, TWO_CHUNKS, 21),
            _msg("g4", "after the bad", 22),
        ]
    )
    await memory.vector.delete_index(INDEX)


async def test_reindex_thread_restores_every_good_message_and_reports_the_bad_ones(
    memory: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    await _poison(memory)
    with caplog.at_level(logging.WARNING, logger="mastra_memory.indexing"):
        result = await memory.reindex_thread("t1")
    assert isinstance(result, ReindexResult)
    assert result == 4  # g1..g4 re-indexed: still the plain count callers summed before
    assert [(s.message_id, s.thread_id) for s in result.skipped] == [("bad-nul", "t1"), (LONG_ID, "t1")]
    reasons = {s.message_id: s.reason for s in result.skipped}
    assert "its text contains U+0000" in reasons["bad-nul"]
    assert "has 513 characters" in reasons[LONG_ID]
    assert "skipped 2 stored message(s)" in caplog.text
    assert "'bad-nul'" in caplog.text
    for message_id, text in {**GOOD, "g4": "after the bad"}.items():
        assert (await _recalled(memory, text))[0] == message_id
    records = await memory.vector.query(INDEX, None, top_k=1000)
    assert sorted(r.id for r in records) == ["g1", "g2", "g3", "g4"]
    # Running it again gives the same answer: the thread never blocks.
    again = await memory.reindex_thread("t1")
    assert (int(again), again.skipped_ids) == (4, ["bad-nul", LONG_ID])


async def test_reindex_restores_every_thread_and_reports_the_bad_messages(memory: Memory) -> None:
    await memory.create_thread("r", "t2")
    await memory.save_messages([_msg("h1", "the orchard needs pruning in march", 30, thread_id="t2")])
    await _poison(memory)
    result = await memory.reindex()
    assert int(result) == 5  # g1..g4 and h1
    assert result.skipped_ids == ["bad-nul", LONG_ID]
    assert {s.thread_id for s in result.skipped} == {"t1"}
    assert (await _recalled(memory, "the orchard needs pruning in march", "t2"))[0] == "h1"
    assert (await _recalled(memory, GOOD["g3"]))[0] == "g3"
    assert str(result) == "5"
    assert f"{result:>3}" == "  5"


async def test_reindex_skips_a_message_whose_thread_metadata_the_store_refuses(memory: Memory) -> None:
    """SQLite declares ``int64-range``: thread metadata with a wider integer, spread into every vector of
    the thread, makes its messages unindexable; reindex reports them and the other threads still index.
    (The thread is written straight into storage: Memory refuses such metadata when it writes a thread.)"""
    await memory.storage.save_thread({"id": "t3", "resource_id": "r", "metadata": {"big": 2**70}})
    await memory.storage.save_messages([_msg("w1", "wide integers everywhere", 40, thread_id="t3")])
    result = await memory.reindex()
    assert (int(result), result.skipped_ids) == (3, ["w1"])
    assert "its thread's metadata at 'big'" in result.skipped[0].reason
    assert "signed 64-bit range" in result.skipped[0].reason


class StricterVector(SQLiteVector):
    """A backend with a per-record limit that no manifest declares (a stand-in for a remote store): it
    refuses, at upsert, a record whose text mentions "forbidden", as adapters refuse records they cannot
    hold (``UPSERT_INVALID_METADATA``)."""

    async def _upsert(self, name: str, ids: list[str], vectors: Any, metadata: list[dict[str, Any]]) -> None:
        for i, meta in enumerate(metadata):
            if "forbidden" in str(meta.get("content")):
                raise self._error(
                    ValidationError, "UPSERT", "INVALID_METADATA", f"metadata[{i}].content: not accepted here"
                )
        await super()._upsert(name, ids, vectors, metadata)


async def test_reindex_isolates_a_refusal_the_check_could_not_foresee() -> None:
    """The batch fails; it is retried one message at a time and only the refused message is left out."""
    m = Memory(
        storage=SQLiteStorage(":memory:"),
        vector=StricterVector(":memory:"),
        embedder="hash/64",
        options=OPTIONS,
    )
    try:
        await m.create_thread("r", "t1")
        await m.storage.save_messages(
            [
                _msg("ok1", "a harmless line", 1),
                _msg("no", "a forbidden line", 2),
                _msg("ok2", "another one", 3),
            ]
        )
        result = await m.reindex_thread("t1")
        assert (int(result), result.skipped_ids) == (2, ["no"])
        assert "not accepted here" in result.skipped[0].reason
        records = await m.vector.query(INDEX, None, top_k=100)
        assert sorted(r.id for r in records) == ["ok1", "ok2"]
    finally:
        await m.close()


async def test_reindex_still_raises_what_is_not_a_message_fault() -> None:
    """An index of another dimension is a configuration problem: skipping every message would hide it."""
    options = {"semanticRecall": {"topK": 3, "messageRange": 0, "scope": "thread", "indexName": "custom"}}
    m = Memory(
        storage=SQLiteStorage(":memory:"),
        vector=SQLiteVector(":memory:"),
        embedder="hash/64",
        options=options,
    )
    try:
        await m.create_thread("r", "t1")
        await m.storage.save_messages([_msg("a", "some text", 1)])
        await m.vector.create_index("custom", 8)
        with pytest.raises(IndexDimensionMismatchError):
            await m.reindex_thread("t1")
    finally:
        await m.close()
