"""One PostgreSQL schema, two languages, semantic recall: Mastra's ``Memory`` with ``@mastra/pg``'s
``PgVector`` and ``PostgresStore``, and this project's ``Memory`` on ``PgStorage``/``PgVector`` with
``layout="mastra"`` (issue 25, item 3's vector half for PostgreSQL; docs/spec.md §4.7), proved by running
Mastra itself (``mastra/pg_vector.mjs``) against the pgvector adapter's test server.

Both sides embed with the same vectors: this project's ``hash/8`` embedder computes them, and Mastra's
embedder is handed the same vector for every text it embeds.

* Mastra writes threads and messages (its vectors: random uuid ``vector_id``s, the message id in
  ``metadata.message_id``); this project's recall returns the same messages, in the same order, with the
  same context windows, as Mastra's recall; a direct query returns the same records and scores as
  Mastra's ``PgVector.query``; deleting a message deletes Mastra's vector of it.
* This project writes the same conversation into a new schema; Mastra's recall returns what this
  project's does; the embeddings are the same float32 values; the index table, its unique
  ``(namespace, vector_id)`` index, its ANN index and its metadata indexes are defined as Mastra defines them
  (plus the ``message_id`` metadata index this project's Memory asks for).
* After each side has opened the schema, its tables' columns and indexes are unchanged.
* The layout guard: each layout refuses an index table of the other before any write.
* [Δ] Mastra's re-save of a message adds its vectors again; both sides' recall still yield it once.

Where the adapter or a PostgreSQL installation is missing the tests skip saying so, and fail under CI
(``mastra_memory_conformance.missing``).
"""

from __future__ import annotations

import asyncio
import os
import re
import uuid
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np
import pytest

from mastra_memory import Memory
from mastra_memory.embedders.hash import HashEmbedder
from mastra_memory.storage.layouts import StorageLayoutError
from mastra_memory_conformance.missing import missing, started

from .mastra_runner import run_mastra

try:
    import psycopg
    from mastra_memory_pgvector.settings import PgVectorSettings
    from mastra_memory_pgvector.storage import PgStorage
    from mastra_memory_pgvector.store import PgVector
    from mastra_memory_pgvector.testing.server import ServerUnavailable, local_server
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    missing(f"the pgvector adapter is not installed ({exc}); pip install -e adapters/pgvector")

SCRIPT = "pg_vector.mjs"
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
THREADS: list[dict[str, Any]] = [
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
MESSAGES: list[dict[str, Any]] = [
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


def _vectors() -> dict[str, list[float]]:
    texts = [text for turns in CONVERSATION.values() for _, text in turns] + [r["query"] for r in RECALLS]
    return {text: EMBEDDER.embed_one(text).tolist() for text in texts}


VECTORS = _vectors()
QUERY = VECTORS["tell me about my cat Miso"]
DIRECT: list[dict[str, Any]] = [
    {"indexName": INDEX, "vector": QUERY, "topK": 4, "filter": {"resource_id": RESOURCE}},
    {"indexName": INDEX, "vector": QUERY, "topK": 3, "filter": {"thread_id": "thread-b"}},
]


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    """The DSN of the pgvector adapter's test server, started for this module (or the existing one
    ``MASTRA_MEMORY_TEST_PG_DSN`` names)."""
    existing = os.environ.get("MASTRA_MEMORY_TEST_PG_DSN", "").strip()
    if existing:
        yield existing
        return
    with started(
        local_server(), "PostgreSQL (the pgvector adapter's test server)", (ServerUnavailable,)
    ) as url:
        yield url


def _schema() -> str:
    return f"interop_{uuid.uuid4().hex[:10]}"


def _catalog(url: str, schema: str) -> dict[str, Any]:
    """Every table's columns and every index of ``schema`` (read-only), names without the schema."""
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        columns = conn.execute(
            "SELECT table_name, column_name, data_type, udt_name, is_nullable, column_default "
            "FROM information_schema.columns WHERE table_schema = %s ORDER BY table_name, ordinal_position",
            (schema,),
        ).fetchall()
        indexes = conn.execute(
            "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = %s ORDER BY indexname",
            (schema,),
        ).fetchall()
    return {
        "columns": [(*c[:5], _unqualified(c[5], schema)) for c in columns],
        "indexes": [(t, n, _unqualified(d, schema)) for t, n, d in indexes],
    }


def _unqualified(sql: str | None, schema: str) -> str | None:
    """``sql`` without the schema's name, and pgvector's operator classes without the schema the
    extension lives in (where the first Mastra process created it)."""
    if sql is None:
        return None
    sql = sql.replace(f'"{schema}".', "").replace(f"{schema}.", "")
    return re.sub(r"\b\w+\.(vector_\w+_ops)", r"\1", sql)


def _index_ddl(url: str, schema: str) -> list[Any]:
    catalog = _catalog(url, schema)
    return [c for c in catalog["columns"] if c[0] == INDEX] + [i for i in catalog["indexes"] if i[0] == INDEX]


def _embeddings(url: str, schema: str) -> dict[str, list[float]]:
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        rows = conn.execute(
            f"SELECT metadata->>'message_id', embedding::text FROM \"{schema}\".{INDEX}"
        ).fetchall()
    return {mid: np.asarray(text.strip("[]").split(","), dtype="<f4").tolist() for mid, text in rows}


def _settings(
    url: str, schema: str, layout: Literal["mastra-memory", "mastra"] = "mastra"
) -> PgVectorSettings:
    return PgVectorSettings(url=url, schema_name=schema, layout=layout, pool_max_size=2)


def _memory(url: str, schema: str) -> Memory:
    settings = _settings(url, schema)
    return Memory(storage=PgStorage(settings), vector=PgVector(settings), embedder=EMBEDDER, options=OPTIONS)


async def _recall(memory: Memory) -> list[list[str]]:
    found = []
    for r in RECALLS:
        result = await memory.recall(
            r["threadId"], r["resourceId"], r["query"], thread_config=r.get("threadConfig")
        )
        found.append([m.id for m in result.messages])
    return found


def _mastra(url: str, schema: str, **request: Any) -> dict[str, Any]:
    answer: dict[str, Any] = run_mastra(
        {"url": url, "schema": schema, "vectors": VECTORS, "options": OPTIONS, **request}, script=SCRIPT
    )
    return answer


def test_mastra_writes_python_recalls(pg_url: str) -> None:
    schema = _schema()
    mastra = _mastra(pg_url, schema, threads=THREADS, messages=MESSAGES, recall=RECALLS, queries=DIRECT)
    assert mastra["indexes"] == [INDEX]
    assert all(mastra["recall"]), mastra["recall"]  # every query found something
    before = _catalog(pg_url, schema)

    async def python_side() -> tuple[list[list[str]], list[list[Any]]]:
        memory = _memory(pg_url, schema)
        try:
            recalled = await _recall(memory)
        finally:
            await memory.close()
        vector = PgVector(_settings(pg_url, schema))
        try:
            assert await vector.list_indexes() == [INDEX]
            stats = await vector.describe_index(INDEX)
            theirs = mastra["describe"][INDEX]
            assert (
                (stats.dimension, stats.count, stats.metric)
                == (
                    theirs["dimension"],
                    theirs["count"],
                    theirs["metric"],
                )
                == (DIMENSION, len(MESSAGES), "cosine")
            )
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
        # Mastra's uuid vector ids, its metadata as written, its scores to 1e-6.
        assert [r.id for r in ours] == [h["id"] for h in theirs]
        assert [r.metadata for r in ours] == [h["metadata"] for h in theirs]
        assert [r.score for r in ours] == pytest.approx([h["score"] for h in theirs], abs=1e-6)
    assert _catalog(pg_url, schema) == before  # recall on Mastra's schema changed nothing

    async def delete_one() -> list[str]:
        memory = _memory(pg_url, schema)
        try:
            await memory.delete_messages(["m-a1"])
            hits = await memory.vector.query(INDEX, QUERY, top_k=len(MESSAGES))
        finally:
            await memory.close()
        return sorted(h.metadata["message_id"] for h in hits)

    # Deleting a message deletes Mastra's vector of it too (found by metadata.message_id, not by id).
    assert asyncio.run(delete_one()) == sorted(m["id"] for m in MESSAGES if m["id"] != "m-a1")
    assert _catalog(pg_url, schema) == before


def test_python_writes_mastra_recalls(pg_url: str) -> None:
    ours = _schema()

    async def python_side() -> list[list[str]]:
        memory = _memory(pg_url, ours)
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
    before = _catalog(pg_url, ours)
    mastra = _mastra(pg_url, ours, recall=RECALLS, queries=DIRECT)
    assert mastra["recall"] == recalled
    assert mastra["indexes"] == [INDEX]
    assert mastra["describe"][INDEX]["count"] == len(MESSAGES)
    # Mastra's direct query finds this project's vectors (ids <message_id>#<chunk>), best first.
    assert [[h["metadata"]["message_id"] for h in q] for q in mastra["queries"]] == [
        [h["id"].split("#")[0] for h in q] for q in mastra["queries"]
    ]
    # Mastra's store and vector store left every table and index of this project's as they were
    # (PostgresStore adds the tables of its other domains -- workflows and the like -- to any schema).
    after = _catalog(pg_url, ours)
    kept = {c[0] for c in before["columns"]}
    assert [c for c in after["columns"] if c[0] in kept] == before["columns"]
    assert [i for i in after["indexes"] if i[0] in kept] == before["indexes"]

    # The same conversation written by Mastra: the same float32 values per message and the same DDL,
    # but for the message_id metadata index this project's Memory asks for (its stale-vector delete).
    theirs = _schema()
    _mastra(pg_url, theirs, threads=THREADS, messages=MESSAGES)
    assert _embeddings(pg_url, ours) == _embeddings(pg_url, theirs)
    ddl_ours, ddl_theirs = _index_ddl(pg_url, ours), _index_ddl(pg_url, theirs)
    extra = [d for d in ddl_ours if d not in ddl_theirs]
    assert [d for d in ddl_ours if d not in extra] == ddl_theirs
    assert len(extra) == 1, extra
    assert "metadata ->> 'message_id'" in extra[0][2]
    assert any("USING ivfflat (embedding vector_cosine_ops) WITH (lists='100')" in d[2] for d in ddl_theirs)


def test_each_layout_refuses_the_others_index_table(pg_url: str) -> None:
    """An index table of the other layout is a StorageLayoutError naming both layouts, before any write."""
    theirs, ours = _schema(), _schema()
    _mastra(pg_url, theirs, threads=THREADS[:1], messages=MESSAGES[:1])
    vector = np.asarray([QUERY], dtype=np.float32)

    async def own_on_mastras() -> None:
        store = PgVector(_settings(pg_url, theirs, layout="mastra-memory"))
        try:
            await store.create_index(INDEX, DIMENSION)
        finally:
            await store.close()

    before = _catalog(pg_url, theirs)
    with pytest.raises(StorageLayoutError, match="layout='mastra'"):
        asyncio.run(own_on_mastras())
    assert _catalog(pg_url, theirs) == before

    async def mastra_on_own() -> None:
        own = PgVector(_settings(pg_url, ours, layout="mastra-memory"))
        try:
            await own.create_index(INDEX, DIMENSION)
            await own.upsert(INDEX, vector, ids=["v-1"])
        finally:
            await own.close()
        store = PgVector(_settings(pg_url, ours))
        try:
            await store.upsert(INDEX, vector, ids=["v-2"])
        finally:
            await store.close()

    with pytest.raises(StorageLayoutError, match="layout='mastra-memory'"):
        asyncio.run(mastra_on_own())
    with psycopg.connect(pg_url, autocommit=True, connect_timeout=10) as conn:
        rows = conn.execute(f'SELECT id FROM "{ours}".{INDEX}').fetchall()
    assert rows == [("v-1",)]


def test_mastras_resave_duplicates_vectors_recall_yields_each_message_once(pg_url: str) -> None:
    """[Δ] docs/spec.md §4.7: Mastra's saveMessages of a message already saved adds its vectors again (new
    uuids, the old ones kept); both sides' recall still return each message once, the same ones."""
    schema = _schema()
    recall = RECALLS[:1]
    _mastra(pg_url, schema, threads=THREADS[:1], messages=MESSAGES[:4])
    mastra = _mastra(pg_url, schema, messages=MESSAGES[:4], recall=recall)
    assert mastra["describe"][INDEX]["count"] == 8  # every message's vector twice

    async def python_side() -> list[list[str]]:
        memory = _memory(pg_url, schema)
        try:
            hits = await memory.vector.query(INDEX, QUERY, top_k=8)
            assert sorted(h.metadata["message_id"] for h in hits) == sorted(
                2 * [m["id"] for m in MESSAGES[:4]]
            )
            result = await memory.recall("thread-a", RESOURCE, recall[0]["query"])
            return [[m.id for m in result.messages]]
        finally:
            await memory.close()

    recalled = asyncio.run(python_side())
    assert recalled == mastra["recall"]
    assert len(set(recalled[0])) == len(recalled[0])
