"""Stored messages in Mastra's own format, proved by running Mastra (issue 25, item 1; docs/spec.md §4.1).

The same input messages go through Mastra's own conversion (``@mastra/memory``'s ``saveMessages``: a
``MessageList`` of source ``memory``, taken out as stored ``MastraDBMessage`` rows) and through this
project's ``Memory.save_messages`` on SQLite; the stored content JSON must be equal, ids and timestamps
aside. Then each side reads the other's rows: the prompt Mastra's agent builds from rows written here
carries the same text, files, tool calls and tool results as from its own rows, and this project reads
Mastra's rows into the same. One Node process answers the whole module (``mastra_runner``).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.memory import Memory
from mastra_memory.messages import FilePart, MastraDBMessage, TextPart, ToolInvocationPart
from mastra_memory.storage import Thread
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.timestamps import canonical_timestamp, epoch_ms, from_epoch_ms, parse_timestamp

from .mastra_runner import run_mastra

RESOURCE = "resource-1"
T0 = "2024-05-01T10:00:00.000Z"

CALL = {"type": "tool-call", "toolCallId": "call_1", "toolName": "weather", "args": {"city": "Kyoto"}}
RESULT = {"type": "tool-result", "toolCallId": "call_1", "toolName": "weather", "result": {"temp": 20}}
PNG = {"type": "image", "image": "aGVsbG8=", "mimeType": "image/png", "providerOptions": {"app": {"n": 1}}}
PDF = {"type": "file", "data": "JVBERi0=", "mimeType": "application/pdf", "filename": "report.pdf"}


def _stored_v2(*, snake: bool) -> dict[str, Any]:
    """A message already in format 2 (a row copied from another store), in Mastra's keys or in the
    snake_case ones this project wrote before issue 25."""

    def k(camel: str, snake_key: str) -> str:
        return snake_key if snake else camel

    return {
        "id": "stored-1",
        "role": "assistant",
        "type": "v2",
        k("createdAt", "created_at"): T0,
        "content": {
            "format": 2,
            "parts": [
                {
                    "type": "text",
                    "text": "Done.",
                    k("providerMetadata", "provider_metadata"): {"p": {"q": 1}},
                },
                {
                    "type": "tool-invocation",
                    k("toolInvocation", "tool_invocation"): {
                        "state": "result",
                        k("toolCallId", "tool_call_id"): "call_9",
                        k("toolName", "tool_name"): "lookup",
                        "args": {"q": "x"},
                        "result": ["a", "b"],
                        k("isError", "is_error"): False,
                    },
                },
                {"type": "step-start", "model": "gpt-x"},
                {"type": "file", k("mimeType", "mime_type"): "image/png", "data": "aGk="},
            ],
            "metadata": {"source": "import"},
            k("providerMetadata", "provider_metadata"): {"app": {"v": 2}},
        },
    }


#: Conversations given to both sides as they are (AI SDK v4 messages, or rows already in format 2).
CASES: dict[str, list[dict[str, Any]]] = {
    "text": [
        {"role": "user", "content": "Hello there"},
        {"role": "assistant", "content": "Hi! How can I help?"},
    ],
    "tool_call": [
        {"role": "user", "content": "Weather in Kyoto?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check.", "providerOptions": {"openai": {"itemId": "it_1"}}},
                CALL,
            ],
        },
    ],
    "files": [{"role": "user", "content": [{"type": "text", "text": "Look at these"}, PNG, PDF]}],
    "message_metadata": [
        {
            "role": "user",
            "content": "hi",
            "metadata": {"client": "web"},
            "providerOptions": {"anthropic": {"cacheControl": {"type": "x"}}},
        },
    ],
    # An AI SDK v4 UI message: its parts are already format-2 parts; `content` is their text.
    "ui_message": [
        {
            "role": "user",
            "content": "Weather in Kyoto?",
            "parts": [{"type": "text", "text": "Weather in Kyoto?"}],
        },
        {
            "role": "assistant",
            "content": "Let me check.",
            "parts": [
                {"type": "text", "text": "Let me check."},
                {
                    "type": "tool-invocation",
                    "toolInvocation": {
                        "state": "result",
                        "toolCallId": "call-ui",
                        "toolName": "weather",
                        "args": {"city": "Kyoto"},
                        "result": {"celsius": 20},
                    },
                },
            ],
        },
    ],
    "stored_v2": [
        {
            "id": "stored-0",
            "role": "user",
            "type": "v2",
            "createdAt": "2024-05-01T09:59:00.000Z",
            "content": {
                "format": 2,
                "parts": [{"type": "text", "text": "Import this"}],
                "content": "Import this",
            },
        },
        _stored_v2(snake=False),
    ],
}

#: A tool result as its own role "tool" message: docs/spec.md §4.1 folds it into the assistant message
#: that made the call; Mastra's saveMessages keeps it as an assistant message of its own.
TOOL_RESULT: list[dict[str, Any]] = [
    {"role": "user", "content": "Weather in Kyoto?"},
    {"role": "assistant", "content": [{"type": "text", "text": "Let me check."}, CALL]},
    {"role": "tool", "content": [RESULT]},
    {"role": "assistant", "content": "It is 20 degrees in Kyoto."},
]

ALL: dict[str, list[dict[str, Any]]] = {**CASES, "tool_result": TOOL_RESULT}

#: Cases whose stored JSON text is the same key for key, in order. Not "files": Mastra writes an image's
#: ``data`` before its ``mimeType`` and a file's after it (its order follows the input part's type), while
#: this project writes every file part in one order, that of Mastra's typings.
ORDERED = ("text", "tool_call", "message_metadata", "stored_v2")


def _thread(name: str) -> str:
    return f"thread-{name}"


async def _python_rows(path: Path, conversations: dict[str, list[dict[str, Any]]]) -> dict[str, list[Any]]:
    """What ``Memory.save_messages`` stores for each conversation: the rows as Mastra would see them,
    content taken from the stored JSON text itself."""
    storage = SQLiteStorage(str(path))
    memory = Memory(storage=storage, options={"semantic_recall": False})
    try:
        for name, messages in conversations.items():
            await storage.save_thread(Thread(id=_thread(name), resource_id=RESOURCE))
            given = [{**m, "thread_id": _thread(name)} for m in messages]
            if name == "stored_v2":  # the snake_case spelling of the same row, as callers wrote it before
                given[-1] = {**_stored_v2(snake=True), "thread_id": _thread(name)}
            await memory.save_messages(given)
    finally:
        await storage.close()
    rows: dict[str, list[Any]] = {}
    with sqlite3.connect(path) as db:
        for name in conversations:
            rows[name] = [
                {
                    "id": mid,
                    "role": role,
                    "type": kind,
                    "threadId": _thread(name),
                    "resourceId": RESOURCE,
                    "createdAt": canonical_timestamp(from_epoch_ms(created)),
                    "content": json.loads(content),
                }
                for mid, role, kind, content, created in db.execute(
                    "SELECT id, role, type, content, created_at FROM mastra_messages WHERE thread_id = ? "
                    "ORDER BY created_at, id",
                    (_thread(name),),
                )
            ]
    db.close()
    return rows


def _snake(rows: list[Any]) -> list[Any]:
    """The same rows with content as this project stored it before issue 25 (snake_case keys)."""
    return [
        {
            **row,
            "content": MastraDBMessage.model_validate({**row, "threadId": "t"}).content.model_dump(
                mode="json"
            ),
        }
        for row in rows
    ]


@pytest.fixture(scope="module")
def exchange(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Both sides' rows for every conversation, and Mastra's prompts: one Node process for the module."""
    path = tmp_path_factory.mktemp("interop") / "python.db"
    python = asyncio.run(_python_rows(path, ALL))
    request = {
        "save": [
            {"name": name, "threadId": _thread(name), "resourceId": RESOURCE, "messages": messages}
            for name, messages in ALL.items()
        ],
        "read": [
            {"name": f"{kind}:{name}", "threadId": _thread(name), "resourceId": RESOURCE, "rows": rows}
            for name in ALL
            for kind, rows in (("python", python[name]), ("snake", _snake(python[name])))
        ],
    }
    return {"python": python, "mastra": run_mastra(request)}


def _contents(rows: list[Any]) -> list[Any]:
    return [row["content"] for row in rows]


@pytest.mark.parametrize("name", list(CASES))
def test_stored_content_is_what_mastra_stores(exchange: dict[str, Any], name: str) -> None:
    mastra = exchange["mastra"]["save"][name]["rows"]
    python = exchange["python"][name]
    assert _contents(python) == _contents(mastra)
    # The same JSON text, key order included, where Mastra's order does not depend on its input's path.
    if name in ORDERED:
        assert [json.dumps(c) for c in _contents(python)] == [json.dumps(c) for c in _contents(mastra)]
    assert [(r["role"], r["type"]) for r in python] == [(r["role"], r.get("type", "v2")) for r in mastra]


def test_a_tool_result_is_stored_in_mastras_part_shape(exchange: dict[str, Any]) -> None:
    """Mastra's saveMessages keeps the result of a role "tool" message as an assistant message of its own;
    this project folds it into the call (docs/spec.md §4.1). The part holding the result is the same."""
    mastra = _contents(exchange["mastra"]["save"]["tool_result"]["rows"])
    python = _contents(exchange["python"]["tool_result"])
    assert len(mastra) == len(python) + 1
    result_part = mastra[2]["parts"][0]
    assert result_part["toolInvocation"]["state"] == "result"
    assert python[1]["parts"] == [mastra[1]["parts"][0], result_part]
    assert [python[0], python[2]] == [mastra[0], mastra[3]]


def _summary_of_prompt(prompt: list[Any]) -> dict[str, Any]:
    """What a model is given: text per role, files, tool calls and their results."""
    texts, files, calls, results = [], [], {}, {}
    for message in prompt:
        if message["role"] == "system" or isinstance(message["content"], str):
            continue
        for part in message["content"]:
            if part["type"] == "text":
                texts.append((message["role"], part["text"]))
            elif part["type"] == "file":
                files.append((part["mediaType"], part["data"]))
            elif part["type"] == "tool-call":
                calls[part["toolCallId"]] = (part["toolName"], part["input"])
            elif part["type"] == "tool-result":
                results[part["toolCallId"]] = part["output"]["value"]
    return {"texts": texts, "files": files, "calls": calls, "results": results}


def _summary_of_messages(messages: list[MastraDBMessage]) -> dict[str, Any]:
    texts, files, calls, results = [], [], {}, {}
    for message in messages:
        for part in message.content.parts:
            if isinstance(part, TextPart):
                texts.append((message.role, part.text))
            elif isinstance(part, FilePart):
                files.append((part.mime_type or part.media_type, part.data or part.url))
            elif isinstance(part, ToolInvocationPart):
                # Mastra's prompt leaves out calls that have no result yet (a model cannot be
                # given an unanswered call), so only answered calls count.
                call = part.tool_invocation
                if call.state == "result":
                    calls[call.tool_call_id] = (call.tool_name, call.args)
                    results[call.tool_call_id] = call.result
    return {"texts": texts, "files": files, "calls": calls, "results": results}


@pytest.mark.parametrize("name", list(ALL))
def test_mastra_reads_what_python_stored(exchange: dict[str, Any], name: str) -> None:
    """The prompt Mastra's agent builds from rows written here equals the one from its own rows."""
    read = exchange["mastra"]["read"][f"python:{name}"]
    assert "error" not in read, read
    own = _summary_of_prompt(exchange["mastra"]["save"][name]["prompt"])
    assert _summary_of_prompt(read["prompt"]) == own
    assert own["texts"], "the conversation has text for the model"


def test_mastra_saw_no_tool_call_in_the_old_snake_case_rows(exchange: dict[str, Any]) -> None:
    """Why issue 25 changed the stored keys: Mastra reads only camelCase, so the tool calls this project
    stored before were invisible to a Mastra agent."""
    for name in ("tool_result", "stored_v2"):
        read = exchange["mastra"]["read"][f"snake:{name}"]
        assert "error" in read or _summary_of_prompt(read["prompt"])["calls"] == {}, name
        assert _summary_of_prompt(exchange["mastra"]["read"][f"python:{name}"]["prompt"])["calls"], name


async def _read_back(path: Path, rows: list[Any], thread_id: str) -> list[MastraDBMessage]:
    """Rows put into this project's SQLite table as they are, then read through ``list_messages``."""
    storage = SQLiteStorage(str(path))
    try:
        await storage.init()
        await storage.save_thread(Thread(id=thread_id, resource_id=RESOURCE))
        with sqlite3.connect(path) as db:
            db.executemany(
                "INSERT INTO mastra_messages (id, thread_id, resource_id, role, type, content, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        r["id"],
                        thread_id,
                        RESOURCE,
                        r["role"],
                        r.get("type", "v2"),
                        json.dumps(r["content"]),
                        epoch_ms(parse_timestamp(r["createdAt"])),
                    )
                    for r in rows
                ],
            )
        db.close()
        return list((await storage.list_messages(thread_id, per_page=False)).messages)
    finally:
        await storage.close()


@pytest.mark.parametrize("name", list(ALL))
async def test_python_reads_what_mastra_stored(exchange: dict[str, Any], name: str, tmp_path: Path) -> None:
    """Mastra's rows, read here, give the text, files, tool calls and results Mastra gives its model."""
    mastra = exchange["mastra"]["save"][name]
    messages = await _read_back(tmp_path / "mastra.db", mastra["rows"], _thread(name))
    assert [m.id for m in messages] == [r["id"] for r in mastra["rows"]]
    assert _summary_of_messages(messages) == _summary_of_prompt(mastra["prompt"])
