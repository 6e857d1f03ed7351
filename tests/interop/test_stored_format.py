"""The stored content format without Node (issue 25, item 1; docs/spec.md §4.1): storages write Mastra's
format 2 keys (camelCase), rows written in snake_case by earlier versions still read, and the Python API
keeps its snake_case names. ``test_mastra_messages.py`` checks the same against Mastra itself."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.messages import MastraDBMessage, ToolInvocationPart, normalize_message
from mastra_memory.storage import Thread
from mastra_memory.stores.sqlite.storage import SQLiteStorage

T0 = "2024-05-01T10:00:00.000Z"

#: One message with every key whose spelling differs between snake_case and Mastra's camelCase.
CAMEL = {
    "format": 2,
    "parts": [
        {
            "type": "text",
            "text": "Let me check.",
            "providerMetadata": {"openai": {"itemId": "it_1"}},
            "createdAt": 5,
        },
        {
            "type": "tool-invocation",
            "toolInvocation": {
                "state": "result",
                "toolCallId": "call_1",
                "toolName": "weather",
                "args": {"city": "Kyoto"},
                "result": {"temp": 20},
                "isError": False,
                "rawInput": "{}",
            },
            "providerExecuted": True,
        },
        {"type": "step-start", "model": "gpt-x"},
        {"type": "file", "mimeType": "image/png", "data": "aGk="},
        {"type": "source", "source": {"sourceType": "url", "id": "s0", "url": "https://example.org"}},
        {"type": "source-url", "sourceId": "s1", "url": "https://example.com", "title": "Example"},
        {"type": "source-document", "sourceId": "s2", "mediaType": "text/plain", "title": "Notes"},
    ],
    "toolInvocations": [
        {
            "state": "result",
            "toolCallId": "call_1",
            "toolName": "weather",
            "args": {"city": "Kyoto"},
            "result": 20,
        }
    ],
    "experimental_attachments": [{"url": "https://example.com/a.png", "contentType": "image/png"}],
    "content": "Let me check.",
    "metadata": {"k": "v"},
    "providerMetadata": {"app": {"v": 2}},
}

#: The same content as this project stored it before issue 25 (the untyped dicts -- the toolInvocations
#: mirror, attachments, a source -- as a Python caller spelled them).
SNAKE = {
    "format": 2,
    "parts": [
        {
            "provider_metadata": {"openai": {"itemId": "it_1"}},
            "created_at": 5,
            "type": "text",
            "text": "Let me check.",
        },
        {
            "type": "tool-invocation",
            "tool_invocation": {
                "state": "result",
                "tool_call_id": "call_1",
                "tool_name": "weather",
                "args": {"city": "Kyoto"},
                "result": {"temp": 20},
                "is_error": False,
                "raw_input": "{}",
            },
            "provider_executed": True,
        },
        {"type": "step-start", "model": "gpt-x"},
        {"type": "file", "mime_type": "image/png", "data": "aGk="},
        {"type": "source", "source": {"source_type": "url", "id": "s0", "url": "https://example.org"}},
        {"type": "source-url", "source_id": "s1", "url": "https://example.com", "title": "Example"},
        {"type": "source-document", "source_id": "s2", "media_type": "text/plain", "title": "Notes"},
    ],
    "content": "Let me check.",
    "metadata": {"k": "v"},
    "provider_metadata": {"app": {"v": 2}},
    "experimental_attachments": [{"url": "https://example.com/a.png", "content_type": "image/png"}],
    "tool_invocations": [
        {
            "state": "result",
            "tool_call_id": "call_1",
            "tool_name": "weather",
            "args": {"city": "Kyoto"},
            "result": 20,
        }
    ],
}


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "format.db"


@pytest.fixture
async def storage(path: Path) -> AsyncIterator[SQLiteStorage]:
    store = SQLiteStorage(str(path))
    await store.init()
    await store.save_thread(Thread(id="t1", resource_id="r1"))
    yield store
    await store.close()


def _raw(path: Path, message_id: str) -> str:
    """The content column as stored."""
    with sqlite3.connect(path) as db:
        row = db.execute("SELECT content FROM mastra_messages WHERE id = ?", (message_id,)).fetchone()
    db.close()
    return str(row[0])


def _message(content: dict[str, Any], message_id: str = "m1") -> dict[str, Any]:
    return {"id": message_id, "role": "assistant", "thread_id": "t1", "created_at": T0, "content": content}


@pytest.mark.parametrize("given", [CAMEL, SNAKE], ids=["camel", "snake"])
async def test_content_is_written_in_mastras_keys_and_order(
    storage: SQLiteStorage, path: Path, given: Any
) -> None:
    await storage.save_messages([_message(given)])
    # Compact JSON text, keys in the order Mastra's typings give them (a part's own keys, then
    # providerMetadata and createdAt), whichever spelling the caller used.
    assert _raw(path, "m1") == json.dumps(CAMEL, separators=(",", ":"), ensure_ascii=False)


async def test_rows_written_in_snake_case_still_read(storage: SQLiteStorage, path: Path) -> None:
    await storage.save_messages([_message(CAMEL, "new")])
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO mastra_messages (id, thread_id, resource_id, role, type, content, created_at) "
            "SELECT 'old', thread_id, resource_id, role, type, ?, created_at + 1 FROM mastra_messages "
            "WHERE id = 'new'",
            (json.dumps(SNAKE),),
        )
    db.close()
    page = await storage.list_messages("t1", per_page=False)
    by_id = {m.id: m for m in page.messages}
    assert by_id["old"].content.model_dump(by_alias=True) == by_id["new"].content.model_dump(by_alias=True)
    part = by_id["old"].content.parts[1]
    assert isinstance(part, ToolInvocationPart)
    assert (part.tool_invocation.tool_call_id, part.tool_invocation.result) == ("call_1", {"temp": 20})
    # Any update writes the row again, in Mastra's keys.
    await storage.update_messages([{"id": "old", "content": {"metadata": {"k": "w"}}}])
    assert json.loads(_raw(path, "old")) == {**CAMEL, "metadata": {"k": "w"}}


def test_python_names_stay_snake_case() -> None:
    message = MastraDBMessage.model_validate(_message(SNAKE))
    part = message.content.parts[1]
    assert isinstance(part, ToolInvocationPart)
    assert part.tool_invocation.tool_name == "weather"
    assert message.content.model_dump() == SNAKE
    assert message.content.model_dump(by_alias=True) == CAMEL


def test_v1_provider_options_and_metadata_are_stored_as_mastra_stores_them() -> None:
    """The AI SDK's providerOptions (on a message or a part) is what Mastra stores as providerMetadata, and
    a v1 message's metadata is its content's."""
    message = normalize_message(
        {
            "role": "user",
            "thread_id": "t1",
            "metadata": {"client": "web"},
            "providerOptions": {"a": {"m": 1}},
            "content": [
                {"type": "text", "text": "see", "providerOptions": {"a": {"t": 1}}},
                {
                    "type": "image",
                    "image": "aGk=",
                    "mimeType": "image/png",
                    "providerOptions": {"a": {"i": 1}},
                },
            ],
        }
    )
    assert message.content.model_dump(by_alias=True) == {
        "format": 2,
        "parts": [
            {"type": "text", "text": "see", "providerMetadata": {"a": {"t": 1}}},
            {"type": "file", "mimeType": "image/png", "data": "aGk=", "providerMetadata": {"a": {"i": 1}}},
        ],
        "metadata": {"client": "web"},
        "providerMetadata": {"a": {"m": 1}},
    }
