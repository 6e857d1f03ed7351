"""One LibSQL file, two languages, semantic recall: Mastra's ``Memory`` with ``LibSQLVector`` and this
project's ``Memory`` on ``libsql:///path`` (issue 25, item 2's vector half; docs/spec.md §4.7), proved by
running Mastra itself (``mastra/libsql_vector.mjs``).

Both sides embed with the same vectors: this project's ``hash/8`` embedder computes them, and Mastra's
embedder is handed the same vector for every text it embeds.

* Mastra writes threads and messages (its vectors: random uuid ``vector_id``s, the message id in
  ``metadata.message_id``); this project's recall returns the same messages, in the same order, as
  Mastra's recall for the same queries (thread and resource scope, context windows); a direct query of
  the vector store returns the same records as Mastra's ``LibSQLVector.query``.
* This project writes the same conversation into a new file; Mastra's recall returns what this
  project's does; the embeddings are the same float32 bytes; the index table and its ``libsql_vector_idx``
  index are spelled as Mastra spells them.
* After each side has opened the file, its schema (``sqlite_master``) is unchanged.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from mastra_memory import Memory
from mastra_memory.embedders.hash import HashEmbedder
from mastra_memory.plugins import ENV_DISABLE, reset_plugin_manager
from mastra_memory.stores.libsql import LibSQLVector

from .mastra_runner import run_mastra

pytest.importorskip("libsql", reason="the libsql store needs the libsql extra")

SCRIPT = "libsql_vector.mjs"
RESOURCE = "resource-1"
DIMENSION = 8
INDEX = f"memory_messages_{DIMENSION}"
OPTIONS = {"lastMessages": False, "semanticRecall": {"topK": 2, "messageRange": 1, "scope": "thread"}}
RESOURCE_SCOPE = {"semanticRecall": {"topK": 3, "messageRange": 1, "scope": "resource"}}

CONVERSATION = {
    "thread-a": [
        ("user", "I adopted a grey cat named Miso"),
        ("assistant", "Miso sounds like a lovely cat"),
        ("user", "What should I cook for dinner tonight"),
        ("assistant", "Try a mushroom risotto for dinner"),
        ("user", "My train to Kyoto leaves at nine"),
        ("assistant", "Kyoto is beautiful in autumn"),
    ],
    "thread-b": [
        ("user", "The cat knocked a glass off the table"),
        ("assistant", "Cats love pushing glasses off tables"),
        ("user", "Book a hotel in Kyoto near the station"),
    ],
}
THREADS = [
    {
        "id": thread,
        "resourceId": RESOURCE,
        "title": thread,
        "metadata": {"topic": thread},
        "createdAt": "2024-05-01T10:00:00.000Z",
        "updatedAt": "2024-05-01T10:00:00.000Z",
    }
    for thread in CONVERSATION
]
MESSAGES = [
    {
        "id": f"m-{thread[-1]}{n}",
        "threadId": thread,
        "resourceId": RESOURCE,
        "role": role,
        "type": "v2",
        "createdAt": f"2024-05-01T1{1 if thread == 'thread-b' else 0}:00:0{n}.00{n}Z",
        "content": {"format": 2, "parts": [{"type": "text", "text": text}]},
    }
    for thread, turns in CONVERSATION.items()
    for n, (role, text) in enumerate(turns, start=1)
]
RECALLS: list[dict[str, Any]] = [
    {"threadId": "thread-a", "resourceId": RESOURCE, "query": "tell me about my cat Miso"},
    {"threadId": "thread-a", "resourceId": RESOURCE, "query": "dinner to cook"},
    {"threadId": "thread-a", "resourceId": RESOURCE, "query": "Kyoto trip", "threadConfig": RESOURCE_SCOPE},
    {"threadId": "thread-b", "resourceId": RESOURCE, "query": "cat glass", "threadConfig": RESOURCE_SCOPE},
]
EMBEDDER = HashEmbedder(DIMENSION)


@pytest.fixture(autouse=True)
def _entry_points(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The libsql store registers through the core distribution's entry point (tests/conftest.py disables
    entry points for the other tests)."""
    monkeypatch.setenv(ENV_DISABLE, "0")
    reset_plugin_manager()
    yield
    monkeypatch.undo()
    reset_plugin_manager()


def _vectors() -> dict[str, list[float]]:
    texts = [text for turns in CONVERSATION.values() for _, text in turns] + [r["query"] for r in RECALLS]
    return {text: EMBEDDER.embed_one(text).tolist() for text in texts}


VECTORS = _vectors()
QUERY = VECTORS["tell me about my cat Miso"]
DIRECT = [
    {"indexName": INDEX, "vector": QUERY, "topK": 4, "filter": {"resource_id": RESOURCE}},
    {"indexName": INDEX, "vector": QUERY, "topK": 3, "filter": {"thread_id": "thread-b"}},
]


def _schema(path: Path) -> list[tuple[str, str, str | None]]:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return [tuple(r) for r in conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name")]
    finally:
        conn.close()


def _memory_schema(path: Path) -> list[tuple[str, str, str | None]]:
    """The memory tables, the vector index's table, its vector index and the engine's shadow tables of it."""
    memory = ("mastra_threads", "mastra_messages", "mastra_resources")
    return [
        row
        for row in _schema(path)
        if row[1] in memory
        or row[1].startswith((INDEX, "libsql_vector_meta_shadow"))
        or (row[0] == "index" and row[2] is not None and any(f"ON {t} " in row[2] for t in memory))
    ]


def _index_ddl(path: Path) -> list[tuple[str, str | None, list[tuple[str, bytes]]]]:
    """The index's table, its vector index and the engine's shadow tables as ``sqlite_master`` holds them
    (text as written), with the vector index's parameters (``libsql_vector_meta_shadow``)."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        sql = "SELECT name, metadata FROM libsql_vector_meta_shadow"
        params = [(n, bytes(m)) for n, m in conn.execute(sql)]
    finally:
        conn.close()
    return [
        (name, sql, params)
        for _, name, sql in _schema(path)
        if name.startswith((INDEX, "libsql_vector_meta_shadow"))
    ]


def _embeddings(path: Path) -> dict[str, bytes]:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        sql = f"SELECT json_extract(metadata, '$.message_id'), embedding FROM {INDEX}"
        return {mid: bytes(blob) for mid, blob in conn.execute(sql)}
    finally:
        conn.close()


def _memory(path: Path) -> Memory:
    # No vector=: the libsql plugin brings its vector store on the same file (docs/spec.md §4.7).
    return Memory(storage=f"libsql:///{path}", embedder=EMBEDDER, options=OPTIONS)


async def _recall(memory: Memory) -> list[list[str]]:
    found = []
    for r in RECALLS:
        result = await memory.recall(
            r["threadId"], r["resourceId"], r["query"], thread_config=r.get("threadConfig")
        )
        found.append([m.id for m in result.messages])
    return found


def test_mastra_writes_python_recalls(tmp_path: Path) -> None:
    path = tmp_path / "local.db"
    mastra = run_mastra(
        {
            "file": str(path),
            "vectors": VECTORS,
            "options": OPTIONS,
            "threads": THREADS,
            "messages": MESSAGES,
            "recall": RECALLS,
            "queries": DIRECT,
        },
        script=SCRIPT,
    )
    assert mastra["indexes"] == [INDEX]
    assert all(mastra["recall"]), mastra["recall"]  # every query found something
    before = _schema(path)

    async def python_side() -> tuple[list[list[str]], list[list[Any]]]:
        memory = _memory(path)
        try:
            recalled = await _recall(memory)
        finally:
            await memory.close()
        vector = LibSQLVector(f"libsql:///{path}")
        try:
            assert await vector.list_indexes() == [INDEX]
            stats = await vector.describe_index(INDEX)
            assert (stats.dimension, stats.count, stats.metric) == (DIMENSION, len(MESSAGES), "cosine")
            direct = [
                await vector.query(q["indexName"], q["vector"], top_k=q["topK"], filter=q["filter"])
                for q in DIRECT
            ]
        finally:
            await vector.close()
        return recalled, direct

    recalled, direct = asyncio.run(python_side())
    # The same messages, in the same order, with the same context windows, as Mastra's recall.
    assert recalled == mastra["recall"]
    for ours, theirs in zip(direct, mastra["queries"], strict=True):
        # Mastra's uuid vector ids, its metadata as written, its scores (float32 cosine) to 1e-6.
        assert [r.id for r in ours] == [h["id"] for h in theirs]
        assert [r.metadata for r in ours] == [h["metadata"] for h in theirs]
        assert [r.score for r in ours] == pytest.approx([h["score"] for h in theirs], abs=1e-6)
    assert _schema(path) == before  # recall on Mastra's file changed nothing in its schema

    async def delete_one() -> list[str]:
        memory = _memory(path)
        try:
            await memory.delete_messages(["m-a1"])
            hits = await memory.vector.query(INDEX, QUERY, top_k=len(MESSAGES))
        finally:
            await memory.close()
        return sorted(h.metadata["message_id"] for h in hits)

    # Deleting a message deletes Mastra's vector of it too (found by metadata.message_id, not by id).
    assert asyncio.run(delete_one()) == sorted(m["id"] for m in MESSAGES if m["id"] != "m-a1")


def test_python_writes_mastra_recalls(tmp_path: Path) -> None:
    ours_path = tmp_path / "python.db"

    async def python_side() -> list[list[str]]:
        memory = _memory(ours_path)
        try:
            for thread in THREADS:
                await memory.create_thread(
                    RESOURCE, thread_id=thread["id"], title=thread["title"], metadata=thread["metadata"]
                )
            await memory.save_messages(MESSAGES)
            return await _recall(memory)
        finally:
            await memory.close()

    recalled = asyncio.run(python_side())
    assert all(recalled), recalled
    before = _memory_schema(ours_path)
    assert len(before) >= 7  # 3 tables, 2 message indexes, the index's table and its vector index
    mastra = run_mastra(
        {
            "file": str(ours_path),
            "vectors": VECTORS,
            "options": OPTIONS,
            "recall": RECALLS,
            "queries": DIRECT,
        },
        script=SCRIPT,
    )
    assert mastra["recall"] == recalled
    assert mastra["indexes"] == [INDEX]
    # Mastra's direct query finds this project's vectors (ids <message_id>#<chunk>), best first.
    assert [[h["metadata"]["message_id"] for h in q] for q in mastra["queries"]] == [
        [h["id"].split("#")[0] for h in q] for q in mastra["queries"]
    ]
    # Mastra's store and vector store left the memory tables and the index as they were (its LibSQLStore
    # adds the tables of its other domains, workflows and the like, to any file it opens).
    assert _memory_schema(ours_path) == before

    # The same conversation written by Mastra: the same float32 bytes per message and the same DDL.
    theirs_path = tmp_path / "mastra.db"
    run_mastra(
        {
            "file": str(theirs_path),
            "vectors": VECTORS,
            "options": OPTIONS,
            "threads": THREADS,
            "messages": MESSAGES,
        },
        script=SCRIPT,
    )
    assert _embeddings(ours_path) == _embeddings(theirs_path)
    assert _index_ddl(ours_path) == _index_ddl(theirs_path)
    assert len(_index_ddl(ours_path)) == 5  # table, vector index, its shadow table and index, the meta
