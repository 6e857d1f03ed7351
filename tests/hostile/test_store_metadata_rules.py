"""A store's own metadata rules are part of the shared validation, and a failed vector write deletes
nothing (issue 23, item 2; docs/spec.md §3.3, §3.6, §5.4).

Before the fix, MongoDB's field-name rule and Pinecone's dotted-key rule ran inside the adapters' ``_upsert``
hooks, after ``Memory``'s indexability check: ``save_messages`` stored a message whose thread metadata the
store refuses and then raised ``IndexingError``, and a re-save deleted the message's old vector before the
new one was refused (on Pinecone a tenant's vectors went from 10 to 9). Here, on the embedded SQLite store:

* its own rules (U+0000, integers beyond int64) refuse in the template's ``_metadata_problem`` hook, before
  any backend hook runs;
* a rule an adapter puts in that hook is ``Memory``'s rule too: a message whose vectors it refuses is not
  stored, and thread metadata it refuses is refused when the thread is written;
* the write path writes the new vectors before it deletes stale ones, so a vector write that fails leaves
  the old vectors in place; chunks that were not rewritten are still cleaned once a write succeeds.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.errors import IndexingError, ValidationError
from mastra_memory.memory import Memory
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import TABLE_PREFIX, SQLiteVector
from mastra_memory.vector import MastraVector
from mastra_memory_conformance.suite.errors import HookCounter

INDEX = "memory_messages_64"
OPTIONS = {"lastMessages": 1, "semanticRecall": {"topK": 3, "messageRange": 0, "scope": "thread"}}
#: Three chunks of the default chunk size (16,384 characters).
THREE_CHUNKS = " ".join(["word"] * 9_000)


def _msg(id: str, text: str, thread_id: str = "t1") -> dict[str, Any]:
    return {"id": id, "thread_id": thread_id, "role": "user", "content": text}


async def _vectors(vector: MastraVector, index: str = INDEX) -> dict[str, tuple[Any, Any]]:
    """Vector id -> (content, chunk_index) of every record of ``index``."""
    hits = await vector.query(index, None, top_k=1000)
    return {h.id: (h.metadata.get("content"), h.metadata.get("chunk_index")) for h in hits}


# --- the default store's rules run in the shared validation ------------------------------------------


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteVector]:
    vector = SQLiteVector(str(tmp_path / "vectors.db"))
    await vector.create_index("idx", 3)
    await vector.upsert("idx", [[1.0, 0.0, 0.0]], [{"n": 1}], ["kept"])
    yield vector
    await vector.close()


@pytest.mark.parametrize(
    ("metadata", "phrase"),
    [
        ({"a": "x\x00y"}, "a: strings containing U+0000"),
        ({"k\x00": 1}, "(key): strings containing U+0000"),
        ({"deep": [{"z": "\x00"}]}, "deep[0].z: strings containing U+0000"),
        ({"big": 2**70}, "big: integer 1180591620717411303424 is outside the signed 64-bit range"),
    ],
    ids=["nul-value", "nul-key", "nul-nested", "int-beyond-64-bits"],
)
async def test_the_default_stores_rules_refuse_before_any_backend_hook(
    store: SQLiteVector, metadata: dict[str, Any], phrase: str
) -> None:
    """SQLite's declared deviations (nul-character-rejected, int64-range) live in ``_metadata_problem``:
    upsert and update_vector (by id and by filter) raise before any hook runs, and nothing changes."""
    calls: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
        ("UPSERT", lambda: store.upsert("idx", [[0.0, 1.0, 0.0]], [metadata], ["new"])),
        ("UPDATE_VECTOR", lambda: store.update_vector("idx", id="kept", update={"metadata": metadata})),
        ("UPDATE_VECTOR", lambda: store.update_vector("idx", filter={"n": 1}, update={"metadata": metadata})),
    ]
    for operation, call in calls:
        with HookCounter(store) as counter, pytest.raises(ValidationError) as caught:
            await call()
        assert caught.value.id == f"MASTRA_VECTOR_SQLITE_{operation}_INVALID_METADATA"
        assert phrase in caught.value.message
        assert not counter.calls, f"{operation}: refused only after backend hooks ran: {dict(counter.calls)}"
    [hit] = await store.query("idx", None, top_k=10)
    assert (hit.id, hit.metadata) == ("kept", {"n": 1})


# --- an adapter's rule in the hook is Memory's rule ------------------------------------------------


class NoDotsVector(SQLiteVector):
    """An adapter whose backend cannot hold a dotted key anywhere in a record's metadata (as Pinecone and
    MongoDB cannot), with its rule in the template's hook; it records the ids it was asked about."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.asked: list[str | None] = []

    def _metadata_problem(self, metadata: dict[str, Any], record_id: str | None = None) -> str | None:
        self.asked.append(record_id)
        stack: list[Any] = [metadata]
        while stack:
            value = stack.pop()
            if isinstance(value, dict):
                dotted = next((k for k in value if "." in k), None)
                if dotted is not None:
                    return f"the key {dotted!r} contains '.'; rename it"
                stack.extend(value.values())
            elif isinstance(value, list):
                stack.extend(value)
        return super()._metadata_problem(metadata, record_id)


@pytest.fixture
async def strict(tmp_path: Path) -> AsyncIterator[Memory]:
    """Thread ``t1`` of resource ``r`` holds message ``m1``, indexed, on a store refusing dotted keys."""
    memory = Memory(
        storage=SQLiteStorage(str(tmp_path / "memory.db")),
        vector=NoDotsVector(str(tmp_path / "vectors.db")),
        embedder="hash/64",
        options=OPTIONS,
    )
    await memory.create_thread("r", "t1", metadata={"plan": "pro"})
    await memory.save_messages([_msg("m1", "apples and pears")])
    yield memory
    await memory.close()


async def test_the_hook_is_given_the_records_id(strict: Memory) -> None:
    """``record_id`` is the record's id on upsert and on update by id, None on update by filter."""
    vector = strict.vector
    assert isinstance(vector, NoDotsVector)
    vector.asked.clear()
    await vector.upsert(INDEX, [[1.0] * 64], [{"x": 1}], ["v1"])
    await vector.update_vector(INDEX, id="v1", update={"metadata": {"x": 2}})
    await vector.update_vector(INDEX, filter={"x": 2}, update={"metadata": {"x": 3}})
    assert vector.asked == ["v1", "v1", None]


async def test_thread_metadata_the_hook_refuses_is_refused_when_the_thread_is_written(strict: Memory) -> None:
    """docs/spec.md §5.4: with semantic recall on, every way ``Memory`` writes a thread refuses metadata the
    store cannot hold in the thread's vectors, naming the key and the store, and writes nothing."""
    writes: dict[str, Callable[[], Awaitable[Any]]] = {
        "CREATE_THREAD": lambda: strict.create_thread("r", "t2", metadata={"plan": "pro", "a.b": 1}),
        "SAVE_THREAD": lambda: strict.save_thread(
            {"id": "t3", "resource_id": "r", "metadata": {"x": {"c.d": 1}}}
        ),
        "UPDATE_THREAD": lambda: strict.update_thread("t1", title="changed", metadata={"e.f": 1}),
        "CLONE_THREAD": lambda: strict.clone_thread("t1", new_thread_id="t4", metadata={"g.h": 1}),
    }
    for operation, write in writes.items():
        with pytest.raises(ValidationError) as caught:
            await write()
        err = caught.value
        assert err.id == f"MASTRA_MEMORY_{operation}_UNINDEXABLE_METADATA", err.id
        assert err.details["store"] == "sqlite"
        assert err.details["key"] in {"a.b", "x", "e.f", "g.h"}
        assert "contains '.'" in err.message
        assert "nothing was stored" in err.message
    for thread_id in ("t2", "t3", "t4"):
        assert await strict.get_thread_by_id(thread_id) is None
    kept = await strict.get_thread_by_id("t1")
    assert kept is not None
    assert (kept.title, kept.metadata) == ("", {"plan": "pro"})


async def test_a_message_the_hook_refuses_is_not_stored_and_a_resave_keeps_its_vector(strict: Memory) -> None:
    """A thread holding a dotted key (written straight into storage, as one stored before the check):
    a new message is refused and not stored; a re-save of ``m1`` is refused and ``m1`` keeps its vector."""
    before = await _vectors(strict.vector)
    await strict.storage.save_thread({"id": "t2", "resource_id": "r", "metadata": {"a.b": 1}})
    with pytest.raises(ValidationError) as caught:
        await strict.save_messages([_msg("m2", "rockets", "t2")])
    assert caught.value.id == "MASTRA_MEMORY_SAVE_MESSAGES_UNINDEXABLE_MESSAGE"
    assert (await strict.storage.list_messages("t2", per_page=False)).messages == []
    await strict.storage.update_thread("t1", metadata={"a.b": 1})
    with pytest.raises(ValidationError):
        await strict.save_messages([_msg("m1", "apples, pears and plums")])
    [stored] = (await strict.storage.list_messages("t1", per_page=False)).messages
    assert stored.content.content == "apples and pears"
    assert await _vectors(strict.vector) == before


async def test_thread_metadata_is_not_judged_without_semantic_recall(tmp_path: Path) -> None:
    memory = Memory(
        storage=SQLiteStorage(str(tmp_path / "memory.db")),
        vector=NoDotsVector(str(tmp_path / "vectors.db")),
        embedder="hash/64",
    )
    try:
        thread = await memory.create_thread("r", "t1", metadata={"a.b": 1})
        assert thread.metadata == {"a.b": 1}
    finally:
        await memory.close()


@pytest.mark.parametrize(
    ("metadata", "key", "phrase"),
    [
        ({"big": 2**70}, "big", "outside the signed 64-bit range"),
        ({"ok": 1, "label": "a\x00b"}, "label", "U+0000"),
    ],
    ids=["int-beyond-64-bits", "nul"],
)
async def test_the_default_store_refuses_thread_metadata_it_cannot_hold(
    tmp_path: Path, metadata: dict[str, Any], key: str, phrase: str
) -> None:
    memory = Memory(storage=SQLiteStorage(str(tmp_path / "m.db")), embedder="hash/64", options=OPTIONS)
    try:
        with pytest.raises(ValidationError) as caught:
            await memory.create_thread("r", "t1", metadata=metadata)
        assert caught.value.details["key"] == key
        assert phrase in caught.value.message
        assert await memory.get_thread_by_id("t1") is None
    finally:
        await memory.close()


# --- the write path: write first, then delete what was not rewritten ---------------------------------


@pytest.fixture
async def on_file(tmp_path: Path) -> AsyncIterator[tuple[Memory, Path]]:
    db = tmp_path / "memory.db"
    memory = Memory(
        storage=SQLiteStorage(str(db)), vector=SQLiteVector(str(db)), embedder="hash/64", options=OPTIONS
    )
    await memory.create_thread("r", "t1")
    yield memory, db
    await memory.close()


async def test_a_failed_vector_write_deletes_no_vector(on_file: tuple[Memory, Path]) -> None:
    """The database refuses every write to the vector table (a trigger, as a full disk or a lost lock
    would): a re-save of a message of three chunks raises IndexingError after storing it, and its three
    vectors are still there. Once writes work again, reindex_thread leaves exactly the new chunk."""
    memory, db = on_file
    await memory.save_messages([_msg("m", THREE_CHUNKS)])
    before = await _vectors(memory.vector)
    assert sorted(before) == ["m", "m#1", "m#2"]
    table = f'"{TABLE_PREFIX}{INDEX}"'
    with sqlite3.connect(db) as conn:
        for event in ("INSERT", "UPDATE"):
            conn.execute(
                f"CREATE TRIGGER refuse_{event.lower()} BEFORE {event} ON {table} "
                "BEGIN SELECT RAISE(ABORT, 'disk quota exceeded'); END"
            )
    with pytest.raises(IndexingError, match="reindex_thread"):
        await memory.save_messages([_msg("m", "short now")])
    assert await _vectors(memory.vector) == before
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TRIGGER refuse_insert")
        conn.execute("DROP TRIGGER refuse_update")
    assert await memory.reindex_thread("t1") == 1
    assert await _vectors(memory.vector) == {"m": ("short now", 0)}


async def test_a_resave_cleans_chunks_not_rewritten_also_those_written_before_chunks_were_numbered(
    on_file: tuple[Memory, Path],
) -> None:
    """Vectors an earlier release wrote carry no ``chunk_index``: the chunks rewritten replace theirs, the
    rest go. A chunk the embedder could not turn into a vector is not rewritten, so its old vector goes."""
    memory, _ = on_file
    vector = memory.vector
    await vector.create_index(INDEX, 64)
    old = {"message_id": "m", "thread_id": "t1", "resource_id": "r", "role": "user", "content": "old"}
    await vector.upsert(INDEX, [[1.0] * 64] * 3, [old, old, old], ["m", "m#1", "m#2"])
    await memory.save_messages([_msg("m", " ".join(["word"] * 4_000))])  # two chunks now
    assert sorted(await _vectors(vector)) == ["m", "m#1"]
    assert {chunk for _, chunk in (await _vectors(vector)).values()} == {0, 1}
    await memory.save_messages([_msg("m", "one chunk")])
    assert await _vectors(vector) == {"m": ("one chunk", 0)}
