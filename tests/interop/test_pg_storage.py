"""One PostgreSQL schema, two languages: Mastra's ``PostgresStore`` (``@mastra/pg``) and this project's
``PgStorage(layout="mastra")`` (issue 25, item 3's storage half; docs/spec.md §4.7), proved by running
Mastra itself (``mastra/pg_store.mjs``) against the pgvector adapter's test server.

* Mastra writes threads, messages (one with a tool call) and a resource's working memory; this project
  lists and reads them (same ids, text, tool calls, timestamps to the millisecond, metadata), updates a
  thread, the working memory and adds a message; Mastra reads the updates back.
* This project writes a new schema; Mastra lists and reads it, and its agent prompt carries the tool call;
  Mastra's ``Memory.getWorkingMemory`` returns the working memory written here.
* After each side has opened the schema, the memory tables' columns and indexes are unchanged, and the
  tables this project creates in a new schema are exactly the ones Mastra creates.
* The layout guard: a schema Mastra made, opened in this project's own layout, is refused unchanged.
* [Δ] Mastra's re-save keeps a message's createdAt.

The server comes from ``mastra_memory_pgvector.testing`` (or ``MASTRA_MEMORY_TEST_PG_DSN``); where the
adapter or a PostgreSQL installation is missing the tests skip saying so, and fail under CI
(``mastra_memory_conformance.missing``).
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from mastra_memory.messages import MastraDBMessage
from mastra_memory.storage import Thread
from mastra_memory.stores.sqlite.layout import StorageLayoutError
from mastra_memory.timestamps import canonical_timestamp, parse_timestamp
from mastra_memory_conformance.missing import missing, started

from .mastra_runner import run_mastra

try:
    import psycopg
    from mastra_memory_pgvector import PgVectorSettings
    from mastra_memory_pgvector.storage import PgStorage
    from mastra_memory_pgvector.testing.server import ServerUnavailable, local_server
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    missing(f"the pgvector adapter is not installed ({exc}); pip install -e adapters/pgvector")

SCRIPT = "pg_store.mjs"
RESOURCE = "resource-1"
T0 = "2024-05-01T10:00:00.000Z"
MEMORY_TABLES = ("mastra_threads", "mastra_messages", "mastra_resources")

TOOL_PART = {
    "type": "tool-invocation",
    "toolInvocation": {
        "state": "result",
        "toolCallId": "call_1",
        "toolName": "weather",
        "args": {"city": "Kyoto"},
        "result": {"temp": 20},
    },
}


def _message(mid: str, thread: str, role: str, stamp: str, parts: list[Any], **meta: Any) -> dict[str, Any]:
    content: dict[str, Any] = {"format": 2, "parts": parts}
    if meta:
        content["metadata"] = meta
    return {
        "id": mid,
        "threadId": thread,
        "resourceId": RESOURCE,
        "role": role,
        "type": "v2",
        "createdAt": stamp,
        "content": content,
    }


MESSAGES = [
    _message("m-1", "thread-a", "user", "2024-05-01T10:00:01.001Z", [{"type": "text", "text": "Weather?"}]),
    _message(
        "m-2",
        "thread-a",
        "assistant",
        "2024-05-01T10:00:02.002Z",
        [{"type": "step-start"}, TOOL_PART, {"type": "text", "text": "20 degrees in Kyoto."}],
        source="mastra",
    ),
    _message("m-3", "thread-b", "user", "2024-05-01T11:00:00.123Z", [{"type": "text", "text": "Other."}]),
]
THREADS = [
    {
        "id": "thread-a",
        "resourceId": RESOURCE,
        "title": "Kyoto",
        "metadata": {"topic": "weather", "n": 1},
        "createdAt": T0,
        "updatedAt": T0,
    },
    {
        "id": "thread-b",
        "resourceId": RESOURCE,
        "title": "Other",
        "metadata": None,
        "createdAt": "2024-05-01T11:00:00.000Z",
        "updatedAt": "2024-05-01T11:00:00.000Z",
    },
]
WORKING_MEMORY = "# User\n- Name: Ada\n- City: Kyoto"


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


def memory_schema(url: str, schema: str) -> dict[str, Any]:
    """The memory tables' columns and indexes in ``schema`` (read-only), index names without the
    schema-name prefix Mastra gives them."""
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        columns = conn.execute(
            "SELECT table_name, column_name, data_type, is_nullable, column_default "
            "FROM information_schema.columns WHERE table_schema = %s AND table_name = ANY(%s) "
            "ORDER BY table_name, ordinal_position",
            (schema, list(MEMORY_TABLES)),
        ).fetchall()
        indexes = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s AND tablename = ANY(%s) "
            "ORDER BY indexname",
            (schema, list(MEMORY_TABLES)),
        ).fetchall()
        triggers = conn.execute(
            "SELECT tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = ANY(%s) AND NOT t.tgisinternal",
            (schema, list(MEMORY_TABLES)),
        ).fetchall()
    return {
        "columns": columns,
        "indexes": sorted(
            (name.replace(f"{schema}_", ""), definition.replace(schema, "<schema>").replace("<schema>_", ""))
            for name, definition in indexes
        ),
        "triggers": triggers,
    }


def _metadata_kind(url: str, schema: str) -> str:
    """``jsonb_typeof`` of the resource's stored metadata."""
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        row = conn.execute(
            f'SELECT jsonb_typeof(metadata) FROM "{schema}".mastra_resources WHERE id = %s', (RESOURCE,)
        ).fetchone()
    assert row is not None
    return str(row[0])


def _content(message: MastraDBMessage) -> dict[str, Any]:
    """A message's content as it is stored (Mastra's keys, absent fields left out)."""
    dumped: dict[str, Any] = message.content.model_dump(by_alias=True, exclude_none=True)
    return dumped


def _storage(url: str, schema: str) -> PgStorage:
    return PgStorage(PgVectorSettings(url=url, schema_name=schema, layout="mastra", pool_max_size=2))


def test_mastra_writes_python_reads_and_updates(pg_url: str) -> None:
    schema = _schema()
    request = {"url": pg_url, "schema": schema}
    resource = {
        "id": RESOURCE,
        "workingMemory": WORKING_MEMORY,
        "metadata": {"plan": "pro"},
        "createdAt": T0,
        "updatedAt": T0,
    }
    run_mastra(
        {**request, "write": {"threads": THREADS, "messages": MESSAGES, "resources": [resource]}},
        script=SCRIPT,
    )
    before = memory_schema(pg_url, schema)
    # [Δ] docs/spec.md §4.7: Mastra's saveResource stores the metadata as a jsonb string of JSON text.
    assert _metadata_kind(pg_url, schema) == "string"

    async def python_side() -> dict[str, Any]:
        storage = _storage(pg_url, schema)
        try:
            threads = (await storage.list_threads({"resource_id": RESOURCE})).threads
            by_id = {thread.id: thread for thread in threads}
            page = await storage.list_messages(["thread-a", "thread-b"], per_page=False)
            stored = await storage.get_resource_by_id(RESOURCE)
            # Updates: a thread's title and metadata, the working memory, and a new message.
            await storage.update_thread("thread-a", title="Kyoto trip", metadata={"n": 2})
            await storage.update_resource(RESOURCE, working_memory=WORKING_MEMORY + "\n- Likes: tea")
            await storage.save_messages(
                [
                    _message(
                        "m-4",
                        "thread-a",
                        "user",
                        "2024-05-01T10:00:03.003Z",
                        [{"type": "text", "text": "And tomorrow?"}],
                    )
                ]
            )
            return {"threads": by_id, "messages": page.messages, "resource": stored}
        finally:
            await storage.close()

    seen = asyncio.run(python_side())
    threads: dict[str, Thread] = seen["threads"]
    assert set(threads) == {"thread-a", "thread-b"}
    assert threads["thread-a"].title == "Kyoto"
    assert threads["thread-a"].metadata == {"topic": "weather", "n": 1}  # Mastra's jsonb
    assert threads["thread-b"].metadata is None
    assert canonical_timestamp(threads["thread-a"].created_at) == T0
    messages: list[MastraDBMessage] = seen["messages"]
    assert [m.id for m in messages] == ["m-1", "m-2", "m-3"]
    for mine, theirs in zip(messages, MESSAGES, strict=True):
        assert canonical_timestamp(mine.created_at) == theirs["createdAt"]  # to the millisecond
        assert (mine.thread_id, mine.resource_id, mine.role) == (
            theirs["threadId"],
            theirs["resourceId"],
            theirs["role"],
        )
        assert _content(mine) == theirs["content"]  # text, tool call and metadata, key for key
    call = messages[1].content.parts[1]
    assert call.type == "tool-invocation"
    assert call.tool_invocation.tool_call_id == "call_1"
    assert call.tool_invocation.result == {"temp": 20}
    assert seen["resource"].working_memory == WORKING_MEMORY
    assert seen["resource"].metadata == {"plan": "pro"}
    assert memory_schema(pg_url, schema) == before  # this project's open and writes changed no table

    back = run_mastra(
        {
            **request,
            "read": {
                "threads": [RESOURCE],
                "messages": ["thread-a"],
                "workingMemory": [{"threadId": "thread-a", "resourceId": RESOURCE}],
            },
        },
        script=SCRIPT,
    )
    mastra_threads = {t["id"]: t for t in back["threads"][RESOURCE]}
    assert mastra_threads["thread-a"]["title"] == "Kyoto trip"
    assert mastra_threads["thread-a"]["metadata"] == {"topic": "weather", "n": 2}
    assert mastra_threads["thread-a"]["createdAt"] == T0
    rows = back["messages"]["thread-a"]["rows"]
    assert [row["id"] for row in rows] == ["m-1", "m-2", "m-4"]
    assert rows[2]["createdAt"] == "2024-05-01T10:00:03.003Z"
    assert rows[2]["content"]["parts"] == [{"type": "text", "text": "And tomorrow?"}]
    assert back["workingMemory"][RESOURCE] == WORKING_MEMORY + "\n- Likes: tea"
    assert memory_schema(pg_url, schema) == before
    assert _metadata_kind(pg_url, schema) == "object"  # as rewritten here; both sides read both forms


def test_python_writes_mastra_reads(pg_url: str) -> None:
    schema = _schema()

    async def python_side() -> None:
        storage = _storage(pg_url, schema)
        try:
            for thread in THREADS:
                await storage.save_thread(thread)
            await storage.save_messages(MESSAGES[:2])
            await storage.save_messages(MESSAGES[2:])
            await storage.update_resource(RESOURCE, working_memory=WORKING_MEMORY, metadata={"plan": "pro"})
        finally:
            await storage.close()

    asyncio.run(python_side())
    mine = memory_schema(pg_url, schema)

    # The tables this project creates in a new schema are exactly Mastra's own.
    reference = _schema()
    run_mastra({"url": pg_url, "schema": reference}, script=SCRIPT)
    assert mine == memory_schema(pg_url, reference)

    back = run_mastra(
        {
            "url": pg_url,
            "schema": schema,
            "read": {
                "threads": [RESOURCE],
                "messages": ["thread-a", "thread-b"],
                "resources": [RESOURCE],
                "workingMemory": [{"threadId": "thread-a", "resourceId": RESOURCE}],
            },
        },
        script=SCRIPT,
    )
    threads = {t["id"]: t for t in back["threads"][RESOURCE]}
    assert set(threads) == {"thread-a", "thread-b"}
    assert threads["thread-a"]["metadata"] == {"topic": "weather", "n": 1}
    assert threads["thread-a"]["createdAt"] == T0
    # save_messages bumped updatedAt (docs/spec.md §4.5), as Mastra's saveMessages does.
    assert parse_timestamp(threads["thread-a"]["updatedAt"]) > parse_timestamp(T0)
    rows = back["messages"]["thread-a"]["rows"]
    assert [row["id"] for row in rows] == ["m-1", "m-2"]
    for row, written in zip(rows, MESSAGES[:2], strict=True):
        assert row["createdAt"] == written["createdAt"]
        assert row["content"] == written["content"]
    prompt = back["messages"]["thread-a"]["prompt"]
    calls = [
        part
        for m in prompt
        if m["role"] == "assistant"
        for part in m["content"]
        if part["type"] == "tool-call"
    ]
    assert [(c["toolCallId"], c["toolName"], c["input"]) for c in calls] == [
        ("call_1", "weather", {"city": "Kyoto"})
    ]
    results = [part for m in prompt if m["role"] == "tool" for part in m["content"]]
    assert [r["toolCallId"] for r in results] == ["call_1"]
    assert back["resources"][RESOURCE]["workingMemory"] == WORKING_MEMORY
    assert back["resources"][RESOURCE]["metadata"] == {"plan": "pro"}
    assert back["workingMemory"][RESOURCE] == WORKING_MEMORY
    # Mastra's init adds its other tables (workflows, traces, ...) but leaves the memory tables as this
    # project created them.
    assert memory_schema(pg_url, schema) == mine


def test_own_layout_refuses_mastras_schema_unchanged(pg_url: str) -> None:
    """docs/spec.md §4.7 (issue 25, item 4): a schema Mastra made, opened in this project's own layout,
    is a StorageLayoutError naming both layouts, before any write."""
    schema = _schema()
    run_mastra({"url": pg_url, "schema": schema, "write": {"threads": THREADS[:1]}}, script=SCRIPT)
    before = memory_schema(pg_url, schema)

    async def python_side() -> None:
        storage = PgStorage(PgVectorSettings(url=pg_url, schema_name=schema, pool_max_size=2))
        try:
            await storage.save_thread({"id": "t-2", "resource_id": RESOURCE})
        finally:
            await storage.close()

    with pytest.raises(StorageLayoutError, match="layout='mastra'") as caught:
        asyncio.run(python_side())
    assert caught.value.details["found"] == "mastra"
    assert caught.value.details["expected"] == "mastra-memory"
    assert memory_schema(pg_url, schema) == before


def test_a_resave_keeps_createdat_on_mastras_side_only(pg_url: str) -> None:
    """[Δ] docs/spec.md §4.7: Mastra's saveMessages of an existing id keeps the stored createdAt
    (``ON CONFLICT`` leaves it out), while save_messages here replaces the whole record (§4.5)."""
    schema = _schema()
    later = "2024-05-02T09:00:00.000Z"
    request = {"url": pg_url, "schema": schema}
    run_mastra({**request, "write": {"threads": THREADS[:1], "messages": MESSAGES[:1]}}, script=SCRIPT)
    run_mastra({**request, "write": {"messages": [{**MESSAGES[0], "createdAt": later}]}}, script=SCRIPT)

    async def python_side() -> list[str]:
        storage = _storage(pg_url, schema)
        try:
            before = canonical_timestamp((await storage.list_messages_by_id(["m-1"]))[0].created_at)
            await storage.save_messages([{**MESSAGES[0], "createdAt": later}])
            after = canonical_timestamp((await storage.list_messages_by_id(["m-1"]))[0].created_at)
            return [before, after]
        finally:
            await storage.close()

    assert asyncio.run(python_side()) == [MESSAGES[0]["createdAt"], later]
