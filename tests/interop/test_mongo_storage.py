"""One MongoDB database, two languages: Mastra's ``MongoDBStore`` (``@mastra/mongodb``) and this project's
``MongoDBStorage(layout="mastra")`` (issue 25, item 3's storage half for MongoDB; docs/spec.md §4.7), proved
by running Mastra itself (``mastra/mongo_store.mjs``) against the mongodb adapter's test server, FerretDB
v1 (Mastra's driver works with it: @mastra/mongodb 1.18.9 with the ``mongodb`` driver 7).

* Mastra writes threads, messages (one with a tool call) and a resource's working memory; this project
  lists and reads them (same ids, text, tool calls, timestamps to the millisecond, metadata), updates a
  thread, the working memory and adds a message; Mastra reads the updates back.
* This project writes a new database; Mastra lists and reads it, and its agent prompt carries the tool
  call; Mastra's ``Memory.getWorkingMemory`` returns the working memory written here. The documents have
  the same fields and BSON types as Mastra's own.
* After each side has opened the database, the memory collections' indexes are unchanged, and the indexes
  this project creates in a new database are exactly the ones Mastra creates.
* The layout guard: a database Mastra made, opened in this project's own layout, is refused unchanged.
* [Δ] Mastra's re-save keeps a message's createdAt.

The server comes from ``mastra_memory_mongodb.testing.ferretdb`` (or ``MASTRA_MEMORY_TEST_MONGODB_URI``);
where the adapter or Go (to build FerretDB) is missing the tests skip saying so, and fail under CI
(``mastra_memory_conformance.missing``).
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.messages import MastraDBMessage, ToolInvocationPart
from mastra_memory.storage import Thread
from mastra_memory.stores.sqlite.layout import StorageLayoutError
from mastra_memory.timestamps import canonical_timestamp, parse_timestamp
from mastra_memory_conformance.missing import missing, started

from .mastra_runner import run_mastra

try:
    from mastra_memory_mongodb import MongoDBSettings
    from mastra_memory_mongodb.storage import MongoDBStorage
    from mastra_memory_mongodb.testing.ferretdb import ferretdb_server
    from pymongo import MongoClient
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    missing(f"the mongodb adapter is not installed ({exc}); pip install -e adapters/mongodb")

SCRIPT = "mongo_store.mjs"
RESOURCE = "resource-1"
T0 = "2024-05-01T10:00:00.000Z"
MEMORY_COLLECTIONS = ("mastra_threads", "mastra_messages", "mastra_resources")
#: Where this project's storage keeps its lock documents in Mastra's database (servers without
#: transactions); Mastra never reads it.
LOCKS = "mastra_memory_locks"

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
THREADS: list[dict[str, Any]] = [
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
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """``(uri, dialect)`` of the mongodb adapter's test server, started for this module (or the existing
    MongoDB ``MASTRA_MEMORY_TEST_MONGODB_URI`` names)."""
    existing = os.environ.get("MASTRA_MEMORY_TEST_MONGODB_URI", "").strip()
    if existing:
        yield existing, "mongodb"
        return
    ferretdb = ferretdb_server(Path(tmp_path_factory.mktemp("ferretdb")))
    with started(ferretdb, "FerretDB (the mongodb adapter's test server)") as uri:
        yield uri, "ferretdb"


def _database() -> str:
    return f"interop_{uuid.uuid4().hex[:10]}"


def _client(uri: str) -> MongoClient[dict[str, Any]]:
    return MongoClient(uri, serverSelectionTimeoutMS=10_000, timeoutMS=30_000)


def memory_collections(uri: str, db_name: str) -> dict[str, Any]:
    """The collections of ``db_name`` and the memory collections' indexes (read-only)."""
    client = _client(uri)
    try:
        db = client[db_name]
        names = sorted(db.list_collection_names())
        indexes = {
            name: sorted(
                (index["name"], list(index["key"].items()), bool(index.get("unique")))
                for index in db[name].list_indexes()
            )
            for name in MEMORY_COLLECTIONS
            if name in names
        }
    finally:
        client.close()
    return {"collections": names, "indexes": indexes}


def field_types(uri: str, db_name: str) -> dict[str, dict[str, set[str]]]:
    """For each memory collection, each field's Python (BSON) type names over its documents."""
    client = _client(uri)
    try:
        db = client[db_name]
        kinds: dict[str, dict[str, set[str]]] = {}
        for name in MEMORY_COLLECTIONS:
            for doc in db[name].find():
                for key, value in doc.items():
                    kinds.setdefault(name, {}).setdefault(key, set()).add(type(value).__name__)
    finally:
        client.close()
    return kinds


def _same_but_locks(after: dict[str, Any], before: dict[str, Any]) -> None:
    """``after`` is ``before``; the only collection that may have appeared is this project's lock
    collection (created on servers without transactions, empty between calls)."""
    assert after["indexes"] == before["indexes"]
    assert set(after["collections"]) - set(before["collections"]) <= {LOCKS}
    assert set(before["collections"]) <= set(after["collections"])


def _content(message: MastraDBMessage) -> dict[str, Any]:
    """A message's content as it is stored (Mastra's keys, absent fields left out)."""
    dumped: dict[str, Any] = message.content.model_dump(by_alias=True, exclude_none=True)
    return dumped


def _storage(server: tuple[str, str], db_name: str, layout: str = "mastra") -> MongoDBStorage:
    uri, dialect = server
    return MongoDBStorage(
        MongoDBSettings(url=uri, db_name=db_name, dialect=dialect, layout=layout, max_pool_size=2)
    )


def _request(server: tuple[str, str], db_name: str, **more: Any) -> dict[str, Any]:
    return {"url": server[0], "dbName": db_name, **more}


def test_mastra_writes_python_reads_and_updates(server: tuple[str, str]) -> None:
    uri = server[0]
    db_name = _database()
    resource = {
        "id": RESOURCE,
        "workingMemory": WORKING_MEMORY,
        "metadata": {"plan": "pro"},
        "createdAt": T0,
        "updatedAt": T0,
    }
    run_mastra(
        _request(server, db_name, write={"threads": THREADS, "messages": MESSAGES, "resources": [resource]}),
        script=SCRIPT,
    )
    before = memory_collections(uri, db_name)

    async def python_side() -> dict[str, Any]:
        storage = _storage(server, db_name)
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
    assert threads["thread-a"].metadata == {"topic": "weather", "n": 1}  # Mastra's BSON document
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
    assert isinstance(call, ToolInvocationPart)
    assert call.tool_invocation.tool_call_id == "call_1"
    assert call.tool_invocation.result == {"temp": 20}
    assert seen["resource"].working_memory == WORKING_MEMORY
    assert seen["resource"].metadata == {"plan": "pro"}
    _same_but_locks(memory_collections(uri, db_name), before)  # this project's open and writes

    back = run_mastra(
        _request(
            server,
            db_name,
            read={
                "threads": [RESOURCE],
                "messages": ["thread-a"],
                "workingMemory": [{"threadId": "thread-a", "resourceId": RESOURCE}],
            },
        ),
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
    _same_but_locks(memory_collections(uri, db_name), before)


def test_python_writes_mastra_reads(server: tuple[str, str]) -> None:
    uri = server[0]
    db_name = _database()

    async def python_side() -> None:
        storage = _storage(server, db_name)
        try:
            for thread in THREADS:
                await storage.save_thread(thread)
            await storage.save_messages(MESSAGES[:2])
            await storage.save_messages(MESSAGES[2:])
            await storage.update_resource(RESOURCE, working_memory=WORKING_MEMORY, metadata={"plan": "pro"})
        finally:
            await storage.close()

    asyncio.run(python_side())
    mine = memory_collections(uri, db_name)
    assert set(mine["collections"]) - {LOCKS} == set(MEMORY_COLLECTIONS)

    # The indexes this project creates in a new database are exactly Mastra's own, and its documents
    # have the same fields and BSON types as the ones Mastra writes.
    reference = _database()
    resource = {
        "id": RESOURCE,
        "workingMemory": "x",
        "metadata": {"plan": "pro"},
        "createdAt": T0,
        "updatedAt": T0,
    }
    run_mastra(
        _request(
            server, reference, write={"threads": THREADS, "messages": MESSAGES, "resources": [resource]}
        ),
        script=SCRIPT,
    )
    assert mine["indexes"] == memory_collections(uri, reference)["indexes"]
    assert field_types(uri, db_name) == field_types(uri, reference)

    back = run_mastra(
        _request(
            server,
            db_name,
            read={
                "threads": [RESOURCE],
                "messages": ["thread-a", "thread-b"],
                "resources": [RESOURCE],
                "workingMemory": [{"threadId": "thread-a", "resourceId": RESOURCE}],
            },
        ),
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
    # Mastra's init adds its other collections (workflows, traces, ...) but leaves the memory collections'
    # indexes as this project created them.
    assert memory_collections(uri, db_name)["indexes"] == mine["indexes"]


def test_own_layout_refuses_mastras_database_unchanged(server: tuple[str, str]) -> None:
    """docs/spec.md §4.7 (issue 25, item 4): a database Mastra made, opened in this project's own layout,
    is a StorageLayoutError naming both layouts, before any write."""
    uri = server[0]
    db_name = _database()
    run_mastra(_request(server, db_name, write={"threads": THREADS[:1]}), script=SCRIPT)
    before = (memory_collections(uri, db_name), field_types(uri, db_name))

    async def python_side() -> None:
        storage = _storage(server, db_name, layout="mastra-memory")
        try:
            await storage.save_thread({"id": "t-2", "resource_id": RESOURCE})
        finally:
            await storage.close()

    with pytest.raises(StorageLayoutError, match="layout='mastra'") as caught:
        asyncio.run(python_side())
    assert caught.value.details["found"] == "mastra"
    assert caught.value.details["expected"] == "mastra-memory"
    assert (memory_collections(uri, db_name), field_types(uri, db_name)) == before


def test_a_resave_keeps_createdat_on_mastras_side_only(server: tuple[str, str]) -> None:
    """[Δ] docs/spec.md §4.7: Mastra's saveMessages of an existing id keeps the stored createdAt
    (``$setOnInsert``), while save_messages here replaces the whole record (§4.5)."""
    db_name = _database()
    later = "2024-05-02T09:00:00.000Z"
    run_mastra(
        _request(server, db_name, write={"threads": THREADS[:1], "messages": MESSAGES[:1]}), script=SCRIPT
    )
    run_mastra(
        _request(server, db_name, write={"messages": [{**MESSAGES[0], "createdAt": later}]}), script=SCRIPT
    )

    async def python_side() -> list[str]:
        storage = _storage(server, db_name)
        try:
            before = canonical_timestamp((await storage.list_messages_by_id(["m-1"]))[0].created_at)
            await storage.save_messages([{**MESSAGES[0], "createdAt": later}])
            after = canonical_timestamp((await storage.list_messages_by_id(["m-1"]))[0].created_at)
            return [before, after]
        finally:
            await storage.close()

    assert asyncio.run(python_side()) == [MESSAGES[0]["createdAt"], later]
