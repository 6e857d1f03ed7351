"""Storage input no store can hold is a typed error before any write (issue 12, findings 2 and 7;
docs/spec.md §4.1, §4.2).

The store-independent half of the kit's ``hostile`` domain: the limits of thread, resource and message
metadata exactly at the boundary, content nesting, timestamps at the ends of the years 1–9999, and text
that is not Unicode, on the embedded SQLite storage. Before the fixes, metadata or content nested 10,000
levels raised ``RecursionError``, ``created_at=10**20`` ``OverflowError``, a lone surrogate in a title,
text or working memory ``UnicodeEncodeError`` (and the same on reads by such ids), and metadata of any
depth, size or key count was stored.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from mastra_memory.errors import ValidationError
from mastra_memory.messages import MastraDBMessage
from mastra_memory.metadata_limits import (
    MAX_CONTENT_DEPTH,
    MAX_METADATA_BYTES,
    MAX_METADATA_DEPTH,
    MAX_METADATA_KEYS,
)
from mastra_memory.storage import Thread
from mastra_memory.stores.sqlite.storage import SQLiteStorage

_ID = "MASTRA_STORAGE_SQLITE_"
_LAST_MS = int(
    (
        datetime(9999, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC)
    ).total_seconds()
    * 1000
)
_FIRST_MS = int((datetime(1, 1, 1, tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds() * 1000)


def nested(levels: int, leaf: Any = 1) -> dict[str, Any]:
    value: Any = leaf
    for _ in range(levels - 1):
        value = {"k": value}
    return {"k": value}


def text_of(size: int) -> dict[str, str]:
    """Metadata whose compact JSON is exactly ``size`` UTF-8 bytes."""
    return {"t": "x" * (size - len('{"t":""}'))}


@pytest.fixture
async def storage(tmp_path: Path) -> AsyncIterator[SQLiteStorage]:
    store = SQLiteStorage(str(tmp_path / "memory.db"))
    await store.save_thread({"id": "t", "resource_id": "r", "title": "kept", "metadata": {"a": 1}})
    await store.save_messages(
        [{"id": f"m{i}", "thread_id": "t", "role": "user", "content": f"kept {i}"} for i in range(3)]
    )
    await store.save_resource({"id": "r", "working_memory": "kept", "metadata": {"b": 2}})
    try:
        yield store
    finally:
        await store.close()


async def snapshot(storage: SQLiteStorage) -> list[Any]:
    thread = await storage.get_thread_by_id("t")
    resource = await storage.get_resource_by_id("r")
    page = await storage.list_messages("t", per_page=False)
    return [
        thread and thread.model_dump(mode="json"),
        resource and resource.model_dump(mode="json"),
        [m.model_dump(mode="json") for m in page.messages],
    ]


def message(metadata: Any = None, **fields: Any) -> dict[str, Any]:
    return {
        "id": "m1",
        "thread_id": "t",
        "role": "user",
        "content": {"format": 2, "parts": [{"type": "text", "text": "new"}], "metadata": metadata},
        **fields,
    }


# --- metadata limits ----------------------------------------------------------------------------------

AT_THE_LIMITS = [
    nested(MAX_METADATA_DEPTH),
    {f"k{i}": i for i in range(MAX_METADATA_KEYS)},
    text_of(MAX_METADATA_BYTES),
]
#: (metadata, phrase, status of update_messages: a lone surrogate is found by the check of the whole
#: update as given, before its metadata is judged)
PAST_THE_LIMITS = [
    (
        nested(MAX_METADATA_DEPTH + 1),
        "metadata nested too deeply: more than 32 levels of objects",
        "INVALID_METADATA",
    ),
    (
        {f"k{i}": {} for i in range(MAX_METADATA_KEYS + 1)},
        "metadata too large: more than 1,000 keys",
        "INVALID_METADATA",
    ),
    (
        text_of(MAX_METADATA_BYTES + 1),
        "metadata too large: more than 65,536 bytes as JSON (UTF-8)",
        "INVALID_METADATA",
    ),
    ({"a": ["\ud800"]}, "a[0] ('\\ud800') contains an unpaired surrogate", "INVALID_ARGS"),
]
_PAST_IDS = ["depth", "keys", "bytes", "surrogate"]


@pytest.mark.parametrize("metadata", AT_THE_LIMITS, ids=["depth", "keys", "bytes"])
async def test_metadata_at_the_limits_is_stored_exactly(
    storage: SQLiteStorage, metadata: dict[str, Any]
) -> None:
    assert len(json.dumps(AT_THE_LIMITS[2], separators=(",", ":"))) == MAX_METADATA_BYTES
    await storage.save_thread({"id": "t2", "resource_id": "r", "metadata": metadata})
    await storage.save_resource({"id": "r2", "metadata": metadata})
    await storage.save_messages([message(metadata, id="m9", thread_id="t2")])
    assert (await storage.get_thread_by_id("t2")).metadata == metadata  # type: ignore[union-attr]
    assert (await storage.get_resource_by_id("r2")).metadata == metadata  # type: ignore[union-attr]
    (stored,) = await storage.list_messages_by_id(["m9"])
    assert stored.content.metadata == metadata


@pytest.mark.parametrize(("metadata", "phrase", "update_status"), PAST_THE_LIMITS, ids=_PAST_IDS)
async def test_metadata_past_a_limit_is_refused_on_every_write(
    storage: SQLiteStorage, metadata: dict[str, Any], phrase: str, update_status: str
) -> None:
    before = await snapshot(storage)
    calls = {
        "SAVE_THREAD_INVALID_METADATA": storage.save_thread(
            {"id": "t", "resource_id": "r", "metadata": metadata}
        ),
        "UPDATE_THREAD_INVALID_METADATA": storage.update_thread("t", metadata=metadata),
        "SAVE_RESOURCE_INVALID_METADATA": storage.save_resource({"id": "r", "metadata": metadata}),
        "UPDATE_RESOURCE_INVALID_METADATA": storage.update_resource("r", metadata=metadata),
        "SAVE_MESSAGES_INVALID_MESSAGE": storage.save_messages([message(metadata)]),
        f"UPDATE_MESSAGES_{update_status}": storage.update_messages(
            [{"id": "m1", "content": {"metadata": metadata}}]
        ),
    }
    for status, call in calls.items():
        with pytest.raises(ValidationError) as raised:
            await call
        assert raised.value.id == _ID + status, (status, raised.value.id, str(raised.value))
        assert phrase in str(raised.value), (status, str(raised.value))
        str(raised.value).encode("utf-8")
    assert await snapshot(storage) == before


async def test_a_merged_update_that_passes_the_limit_is_refused(storage: SQLiteStorage) -> None:
    """update_messages merges content.metadata one level deeper: the merged metadata is checked."""
    half = {f"a{i}": i for i in range(MAX_METADATA_KEYS // 2 + 1)}
    other = {f"b{i}": i for i in range(MAX_METADATA_KEYS // 2 + 1)}
    await storage.update_messages([{"id": "m1", "content": {"metadata": half}}])
    before = await snapshot(storage)
    with pytest.raises(ValidationError, match="more than 1,000 keys") as raised:
        await storage.update_messages([{"id": "m1", "content": {"metadata": other}}])
    assert raised.value.id == _ID + "UPDATE_MESSAGES_INVALID_METADATA"
    assert await snapshot(storage) == before


async def test_records_stored_before_the_limits_stay_readable_and_deletable(storage: SQLiteStorage) -> None:
    # What an older version let through, written by the storage's own hooks (no validation runs there).
    deep = nested(60)
    old_thread = Thread(id="old", resource_id="r", metadata=deep)
    old_message = MastraDBMessage.model_validate(message(deep, id="old-m", thread_id="old"))
    await storage._transaction("TEST", lambda tx: storage._write_thread(tx, old_thread), write=True)
    content = storage._encode_content(old_message)
    await storage._transaction(
        "TEST", lambda tx: storage._write_messages(tx, [(old_message, content)]), write=True
    )
    assert (await storage.get_thread_by_id("old")).metadata == deep  # type: ignore[union-attr]
    assert [t.id for t in (await storage.list_threads({"resource_id": "r"})).threads] == ["old", "t"]
    (stored,) = (await storage.list_messages("old")).messages
    assert stored.content.metadata == deep
    renamed = await storage.update_thread("old", title="renamed")  # a small patch over old metadata
    assert (renamed.title, renamed.metadata) == ("renamed", deep)
    await storage.delete_thread("old")
    assert await storage.get_thread_by_id("old") is None
    assert await storage.list_messages_by_id(["old-m"]) == []


# --- content nesting ----------------------------------------------------------------------------------


def deep_message(levels: int) -> dict[str, Any]:
    """A message nested exactly ``levels`` deep: message → content → parts → part → args → ..."""
    return message(None) | {
        "content": {"format": 2, "parts": [{"type": "text", "text": "deep", "extra": nested(levels - 4)}]}
    }


async def test_content_nested_up_to_the_limit_is_stored_and_deeper_is_refused(storage: SQLiteStorage) -> None:
    (saved,) = await storage.save_messages([deep_message(MAX_CONTENT_DEPTH) | {"id": "deep"}])
    (stored,) = await storage.list_messages_by_id(["deep"])
    assert stored.model_dump(mode="json") == saved.model_dump(mode="json")
    before = await snapshot(storage)
    for levels in (MAX_CONTENT_DEPTH + 1, 10_000, 100_000):
        with pytest.raises(ValidationError) as raised:
            await storage.save_messages([deep_message(levels)])
        assert raised.value.id == _ID + "SAVE_MESSAGES_INVALID_MESSAGE"
        assert f"nested too deeply: more than {MAX_CONTENT_DEPTH} levels" in str(raised.value)
    with pytest.raises(ValidationError) as updating:
        await storage.update_messages(
            [{"id": "m1", "content": {"parts": [{"type": "text", "text": "x", "e": nested(10_000)}]}}]
        )
    assert updating.value.id == _ID + "UPDATE_MESSAGES_INVALID_ARGS"
    assert await snapshot(storage) == before


# --- timestamps ---------------------------------------------------------------------------------------


async def test_timestamps_at_the_ends_of_the_years_are_kept_and_beyond_them_refused(
    storage: SQLiteStorage,
) -> None:
    for stamp in (_FIRST_MS, _LAST_MS):
        await storage.save_messages([message(None, id=f"at{stamp}", created_at=stamp)])
        (stored,) = await storage.list_messages_by_id([f"at{stamp}"])
        assert stored.created_at == datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=stamp)
    before = await snapshot(storage)
    beyond_utc = datetime(9999, 12, 31, 23, 0, tzinfo=timezone(timedelta(hours=-5)))
    for stamp in (
        _LAST_MS + 1,
        _FIRST_MS - 1,
        10**20,
        -(10**20),
        10**400,
        beyond_utc,
        "9999-12-31T23:00:00-05:00",
    ):
        with pytest.raises(ValidationError) as saving:
            await storage.save_messages([message(None, created_at=stamp)])
        assert saving.value.id == _ID + "SAVE_MESSAGES_INVALID_MESSAGE"
        assert "outside the years 1-9999" in str(saving.value)
        with pytest.raises(ValidationError) as threading:
            await storage.save_thread({"id": "t", "resource_id": "r", "created_at": stamp})
        assert threading.value.id == _ID + "SAVE_THREAD_INVALID_ARGS"
        with pytest.raises(ValidationError) as listing:
            await storage.list_messages("t", filter={"date_range": {"end": stamp}})
        assert listing.value.id == _ID + "LIST_MESSAGES_INVALID_FILTER"
    assert await snapshot(storage) == before


# --- text that is not Unicode -------------------------------------------------------------------------


async def test_unpaired_surrogates_are_refused_on_every_write(storage: SQLiteStorage) -> None:
    before = await snapshot(storage)
    bad = "x\ud800y"
    calls = {
        "SAVE_THREAD_INVALID_ARGS": storage.save_thread({"id": "t", "resource_id": "r", "title": bad}),
        "UPDATE_THREAD_INVALID_ARGS": storage.update_thread("t", title=bad),
        "SAVE_RESOURCE_INVALID_ARGS": storage.save_resource({"id": "r", "working_memory": bad}),
        "UPDATE_RESOURCE_INVALID_ARGS": storage.update_resource("r", working_memory=bad),
        "SAVE_MESSAGES_INVALID_MESSAGE": storage.save_messages([message(None) | {"content": bad}]),
        "UPDATE_MESSAGES_INVALID_ARGS": storage.update_messages([{"id": "m1", "content": {"content": bad}}]),
        "CLONE_THREAD_INVALID_ARGS": storage.clone_thread("t", title=bad),
    }
    for status, call in calls.items():
        with pytest.raises(ValidationError) as raised:
            await call
        assert raised.value.id == _ID + status, (status, raised.value.id)
        assert "unpaired surrogate" in str(raised.value)
        str(raised.value).encode("utf-8")
    assert await snapshot(storage) == before


async def test_reads_by_text_no_store_holds_find_nothing_or_say_why(storage: SQLiteStorage) -> None:
    bad = "\udc00"
    assert await storage.get_thread_by_id(bad) is None
    assert await storage.get_resource_by_id(bad) is None
    assert await storage.list_messages_by_id([bad]) == []
    await storage.delete_thread(bad)
    await storage.delete_messages([bad])
    refused = {
        "LIST_MESSAGES_INVALID_THREAD_ID": storage.list_messages(bad),
        "LIST_MESSAGES_INVALID_RESOURCE_ID": storage.list_messages("t", resource_id=bad),
        "LIST_MESSAGES_INVALID_INCLUDE": storage.list_messages("t", include=[{"id": bad}]),
        "LIST_MESSAGES_INVALID_FILTER": storage.list_messages("t", filter={"metadata": {"a": bad}}),
        "LIST_THREADS_INVALID_FILTER": storage.list_threads({"metadata": {bad: 1}}),
        "LIST_THREADS_INVALID_RESOURCE_ID": storage.list_threads({"resource_id": bad}),
    }
    for status, call in refused.items():
        with pytest.raises(ValidationError) as raised:
            await call
        assert raised.value.id == _ID + status, (status, raised.value.id)
        str(raised.value).encode("utf-8")
    assert len((await storage.list_messages("t")).messages) == 3


async def test_message_ids_as_a_string_or_number_delete_nothing(storage: SQLiteStorage) -> None:
    before = await snapshot(storage)
    for ids in ("m1", b"m1", 5, {"id": "m1"}):
        with pytest.raises(ValidationError) as raised:
            await storage.delete_messages(ids)  # type: ignore[arg-type]
        assert raised.value.id == _ID + "DELETE_MESSAGES_INVALID_IDS"
    assert await snapshot(storage) == before
