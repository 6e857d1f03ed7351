"""``Memory``'s storage and vector store when they are given by name, by URL or not at all (docs/spec.md
§5.1): the defaults come from the plugin registry, and the vector store follows the storage's plugin —
never an SQLite vector store on another backend's URL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from mastra_memory.errors import ConfigError
from mastra_memory.hookspecs import hookimpl
from mastra_memory.memory import Memory
from mastra_memory.plugins import RegisterStorage, get_plugin_manager, reset_plugin_manager
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector

from .memory_helpers import msg, ts


class _StoreOnlySettings(BaseModel):
    url: str


class _StoreOnly:
    """A plugin that registers a storage named ``storeonly`` and no vector store."""

    @hookimpl
    def register_storages(self, register: RegisterStorage) -> None:
        register(
            "storeonly", lambda settings: SQLiteStorage(settings.url.split("://", 1)[1]), _StoreOnlySettings
        )


class _RemoteStorage(SQLiteStorage):
    """An SQLite storage that reports a URL of another backend (as a PostgreSQL storage object does)."""

    @property
    def url(self) -> str:
        return "postgresql://user@db.example/app"


def _names(directory: Path, suffix: str = "") -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(suffix))


@pytest.fixture
def store_only_plugin() -> Iterator[None]:
    reset_plugin_manager()
    get_plugin_manager().register(_StoreOnly(), name="storeonly")
    yield
    reset_plugin_manager()


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


async def test_the_defaults_are_the_sqlite_plugins_stores_in_one_file(in_tmp: Path) -> None:
    memory = Memory(embedder="hash/8", options={"semanticRecall": True})
    assert isinstance(memory.storage, SQLiteStorage)
    assert isinstance(memory.vector, SQLiteVector)
    await memory.create_thread("r", "t")
    await memory.save_messages([msg("m", "t", "hello", ts(1))])
    assert [
        h.message_id for h in (await memory.recall("t", resource_id="r", vector_search_string="hello")).hits
    ] == ["m"]
    await memory.close()
    assert _names(in_tmp, ".db") == ["memory.db"]


async def test_a_storage_url_brings_the_vector_store_of_the_same_plugin_and_url(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'both.db'}"
    memory = Memory(storage=url, embedder="hash/8", options={"semanticRecall": True})
    assert isinstance(memory.vector, SQLiteVector)
    assert memory.vector.settings.url == url == memory.storage.url  # type: ignore[attr-defined]
    await memory.create_thread("r", "t")
    await memory.save_messages([msg("m", "t", "hello", ts(1))])
    await memory.close()
    assert _names(tmp_path) == ["both.db"]


def test_a_storage_plugin_without_a_vector_store_needs_vector(
    tmp_path: Path, store_only_plugin: None
) -> None:
    with pytest.raises(ConfigError, match=r"registers no vector store.*pass vector="):
        Memory(
            storage=f"storeonly://{tmp_path / 'x.db'}", embedder="hash/8", options={"semanticRecall": True}
        )
    memory = Memory(storage=f"storeonly://{tmp_path / 'x.db'}")  # recall off: no vector store needed
    with pytest.raises(ConfigError, match="pass vector="):
        _ = memory.vector
    given = Memory(storage=f"storeonly://{tmp_path / 'x.db'}", vector=SQLiteVector(":memory:"))
    assert isinstance(given.vector, SQLiteVector)


async def test_without_a_vector_store_deletes_touch_no_vectors(
    tmp_path: Path, store_only_plugin: None
) -> None:
    memory = Memory(storage=f"storeonly://{tmp_path / 'x.db'}")
    await memory.create_thread("r", "t")
    await memory.save_messages([msg("m1", "t", "one", ts(1)), msg("m2", "t", "two", ts(2))])
    await memory.update_messages([{"id": "m1", "content": "changed"}])
    await memory.delete_messages(["m1"])
    await memory.delete_thread("t")
    assert await memory.get_thread_by_id("t") is None
    await memory.close()
    assert _names(tmp_path) == ["x.db"]


def test_a_storage_object_on_another_backend_gets_no_sqlite_vector_store(in_tmp: Path) -> None:
    with pytest.raises(ConfigError, match=r"postgresql://\.\.\., which is no SQLite database.*pass vector="):
        Memory(storage=_RemoteStorage(":memory:"), embedder="hash/8", options={"semanticRecall": True})
    assert list(in_tmp.iterdir()) == []
