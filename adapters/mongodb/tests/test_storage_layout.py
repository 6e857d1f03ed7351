"""The storage's two document layouts and the layout guard (docs/spec.md §4.7; issue 25, items 3 and 4).

``layout="mastra"`` works on ``@mastra/mongodb``'s collections (tests/interop/test_mongo_storage.py runs
Mastra itself on them); here: a database in one layout opened in the other is refused with
``StorageLayoutError`` naming both layouts and how to convert, before any write (the database's collections,
indexes and documents are the same afterwards), and what a BSON document cannot hold is refused before
anything is written.
"""

from __future__ import annotations

from typing import Any

import pytest
from bson import ObjectId
from mastra_memory.errors import ConfigError, ValidationError
from mastra_memory.plugins import create_storage
from mastra_memory.stores.sqlite.layout import StorageLayoutError
from pymongo import MongoClient

from mastra_memory_mongodb import MongoDBSettings
from mastra_memory_mongodb.storage import MongoDBStorage


def _snapshot(settings: MongoDBSettings) -> dict[str, Any]:
    """Every collection of the database with its indexes and documents (read-only)."""
    client: MongoClient[dict[str, Any]] = MongoClient(settings.url, serverSelectionTimeoutMS=10_000)
    try:
        db = client[settings.db_name]
        return {
            name: {
                "indexes": sorted(
                    (index["name"], list(index["key"].items()), bool(index.get("unique")))
                    for index in db[name].list_indexes()
                ),
                "documents": sorted((repr(doc) for doc in db[name].find()), key=str),
            }
            for name in sorted(db.list_collection_names())
        }
    finally:
        client.close()


def _with(settings: MongoDBSettings, layout: str) -> MongoDBStorage:
    return MongoDBStorage(settings.model_copy(update={"layout": layout}))


async def _fill(storage: MongoDBStorage) -> None:
    await storage.save_thread({"id": "t1", "resource_id": "r1", "title": "One", "metadata": {"a": 1}})
    await storage.save_messages(
        [{"id": "m1", "thread_id": "t1", "resource_id": "r1", "role": "user", "content": "hello"}]
    )
    await storage.update_resource("r1", working_memory="# Notes", metadata={"plan": "pro"})


@pytest.mark.parametrize(("written", "opened"), [("mastra-memory", "mastra"), ("mastra", "mastra-memory")])
async def test_a_database_in_the_other_layout_is_refused_unchanged(
    settings: MongoDBSettings, written: str, opened: str
) -> None:
    first = _with(settings, written)
    try:
        await _fill(first)
    finally:
        await first.close()
    before = _snapshot(settings)

    other = _with(settings, opened)
    try:
        with pytest.raises(StorageLayoutError) as caught:
            await other.save_thread({"id": "t2", "resource_id": "r1"})
        with pytest.raises(StorageLayoutError):  # every call, not only the first
            await other.list_threads({"resource_id": "r1"})
    finally:
        await other.close()
    error = caught.value
    assert error.id == "MASTRA_STORAGE_MONGODB_INIT_WRONG_LAYOUT"
    assert error.details["found"] == written
    assert error.details["expected"] == opened
    message = str(error)
    assert "Mastra's MongoDB layout" in message
    assert "mastra-memory's own MongoDB layout" in message
    assert f"layout={written!r}" in message
    assert "nothing was written" in message
    assert "convert" in message
    assert _snapshot(settings) == before


async def test_a_database_where_mastra_has_begun_is_mastras(settings: MongoDBSettings) -> None:
    """Mastra's init creates every collection of its domains: a database holding its workflow collection is
    Mastra's even before a thread exists."""
    client: MongoClient[dict[str, Any]] = MongoClient(settings.url, serverSelectionTimeoutMS=10_000)
    try:
        client[settings.db_name].create_collection("mastra_workflow_snapshot")
    finally:
        client.close()
    before = _snapshot(settings)
    own = _with(settings, "mastra-memory")
    try:
        with pytest.raises(StorageLayoutError, match="layout='mastra'"):
            await own.init()
    finally:
        await own.close()
    assert _snapshot(settings) == before
    mastra = _with(settings, "mastra")
    try:
        await _fill(mastra)  # the layout that belongs there creates its memory collections beside it
        assert (await mastra.get_resource_by_id("r1")).working_memory == "# Notes"  # type: ignore[union-attr]
    finally:
        await mastra.close()


async def test_mastra_layout_writes_mastras_documents(settings: MongoDBSettings) -> None:
    """The shapes @mastra/mongodb 1.18.9 writes: an ObjectId ``_id``, the id in ``id``, camelCase fields, BSON
    dates, metadata as a document, content as JSON text, and its indexes by name."""
    storage = _with(settings, "mastra")
    try:
        await _fill(storage)
        thread = await storage.get_thread_by_id("t1")
        assert thread is not None
        assert (thread.title, thread.metadata) == ("One", {"a": 1})
        messages = (await storage.list_messages("t1")).messages
        assert [m.content.parts[0].text for m in messages] == ["hello"]  # type: ignore[union-attr]
        resource = await storage.get_resource_by_id("r1")
        assert resource is not None
        assert (resource.working_memory, resource.metadata) == ("# Notes", {"plan": "pro"})
    finally:
        await storage.close()
    client: MongoClient[dict[str, Any]] = MongoClient(
        settings.url, serverSelectionTimeoutMS=10_000, tz_aware=True
    )
    try:
        db = client[settings.db_name]
        stored_thread = db["mastra_threads"].find_one({"id": "t1"})
        stored_message = db["mastra_messages"].find_one({"id": "m1"})
        stored_resource = db["mastra_resources"].find_one({"id": "r1"})
        indexes = {name: sorted(i["name"] for i in db[name].list_indexes()) for name in ("mastra_threads",)}
    finally:
        client.close()
    assert stored_thread is not None
    assert stored_message is not None
    assert stored_resource is not None
    assert isinstance(stored_thread["_id"], ObjectId)
    assert set(stored_thread) == {"_id", "id", "resourceId", "title", "metadata", "createdAt", "updatedAt"}
    assert stored_thread["metadata"] == {"a": 1}
    assert set(stored_message) == {
        "_id",
        "id",
        "thread_id",
        "resourceId",
        "role",
        "type",
        "content",
        "createdAt",
    }
    assert isinstance(stored_message["content"], str)
    assert set(stored_resource) == {"_id", "id", "workingMemory", "metadata", "createdAt", "updatedAt"}
    assert indexes["mastra_threads"] == [
        "_id_",
        "id_1",
        "resourceId_1_createdAt_-1",
        "resourceId_1_updatedAt_-1",
    ]


async def test_metadata_a_bson_document_cannot_hold_is_refused_before_writing(
    settings: MongoDBSettings,
) -> None:
    """Mastra's thread and resource metadata are BSON documents: keys with '.' or a leading '$', U+0000 and
    integers beyond int64 are refused (this project's own layout stores metadata as JSON text, keeping
    them)."""
    storage = _with(settings, "mastra")
    try:
        await _fill(storage)
        before = _snapshot(settings)
        with pytest.raises(ValidationError, match="BSON"):
            await storage.update_thread("t1", metadata={"a.b": 1})
        with pytest.raises(ValidationError, match="U\\+0000"):
            await storage.update_resource("r1", metadata={"b": "\x00"})
        with pytest.raises(ValidationError, match="64-bit"):
            await storage.save_thread({"id": "t9", "resource_id": "r1", "metadata": {"n": 2**70}})
        assert _snapshot(settings) == before
    finally:
        await storage.close()


def test_the_layout_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    url = "mongodb://127.0.0.1:1"
    assert MongoDBSettings(url=url).layout == "mastra-memory"  # existing users' default
    monkeypatch.setenv("MASTRA_MEMORY_MONGODB_LAYOUT", "mastra")
    assert MongoDBSettings(url=url).layout == "mastra"
    storage = create_storage("mongodb", url=url, layout="mastra-memory")
    assert isinstance(storage, MongoDBStorage)
    assert storage.settings.layout == "mastra-memory"
    with pytest.raises((ConfigError, ValueError), match="layout"):
        create_storage("mongodb", url=url, layout="Mastra")
    with pytest.raises((ConfigError, ValueError), match="collection_prefix"):
        MongoDBSettings(url=url, layout="mastra", collection_prefix="app_")
