"""create_vector / create_storage: by name or URL, settings validated by the plugin's settings model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from mastra_memory.errors import ConfigError, PluginError
from mastra_memory.hookspecs import hookimpl
from mastra_memory.plugins import (
    RegisterStorage,
    RegisterVectorStore,
    create_storage,
    create_vector,
    get_plugin_manager,
)
from mastra_memory.vector import MastraVector


class Empty(BaseModel):
    pass


class BrokenFactories:
    """A plugin whose factories fail: one raises, one returns something that is not a vector store."""

    @hookimpl
    def register_vector_stores(self, register: RegisterVectorStore) -> None:
        register("explodes", self.explode, Empty)
        register("notastore", lambda settings: object(), Empty)

    @hookimpl
    def register_storages(self, register: RegisterStorage) -> None:
        register("notastorage", lambda settings: object(), Empty)

    @staticmethod
    def explode(settings: Empty) -> Any:
        raise RuntimeError("backend client missing")


async def _roundtrip(store: MastraVector) -> int:
    await store.create_index("docs", 3)
    await store.upsert("docs", [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], ids=["a", "b"])
    count = (await store.describe_index("docs")).count
    await store.close()
    return count


async def test_create_vector_by_name(tmp_path: Path) -> None:
    path = tmp_path / "by-name.db"
    store = create_vector("sqlite", url=str(path))
    assert store.capabilities.name == "sqlite"
    assert await _roundtrip(store) == 2
    assert path.exists()  # the url setting reached the store


async def test_create_vector_by_url(tmp_path: Path) -> None:
    path = tmp_path / "by-url.db"
    store = create_vector(f"sqlite:///{path}")
    assert store.capabilities.name == "sqlite"
    assert await _roundtrip(store) == 2
    assert path.exists()


async def test_create_storage_by_name_and_by_url(tmp_path: Path) -> None:
    for storage, path in [
        (create_storage("sqlite", url=str(tmp_path / "a.db")), tmp_path / "a.db"),
        (create_storage(f"sqlite:///{tmp_path / 'b.db'}"), tmp_path / "b.db"),
    ]:
        await storage.init()
        assert await storage.get_thread_by_id("missing") is None
        await storage.close()
        assert path.exists()


def test_invalid_settings_list_every_problem() -> None:
    with pytest.raises(ConfigError) as info:
        create_vector("sqlite", url="", colour="red")
    problems = info.value.details["problems"]
    assert len(problems) == 2
    assert any(p.startswith("url:") for p in problems)
    assert any(p.startswith("colour:") for p in problems)
    assert "SQLiteSettings" in str(info.value)


def test_invalid_storage_settings_raise_config_error() -> None:
    with pytest.raises(ConfigError, match=r"storage 'sqlite'.*url"):
        create_storage("sqlite", url=3)


def test_url_given_twice_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="given twice"):
        create_vector("sqlite:///a.db", url="b.db")


def test_unknown_name_lists_available_and_hints_the_extra() -> None:
    with pytest.raises(PluginError) as info:
        create_vector("qdrant", url="http://localhost:6333")
    message = str(info.value)
    assert "no vector store named 'qdrant'" in message
    assert "available: sqlite" in message
    assert 'pip install "mastra-memory[qdrant]"' in message
    assert "MASTRA_MEMORY_DISABLE_ENTRYPOINTS" in message  # why an installed adapter may be missing
    assert info.value.details["available"] == ["sqlite"]


def test_unknown_url_scheme_names_the_scheme() -> None:
    with pytest.raises(PluginError, match="no storage named 'postgresql'; available: sqlite"):
        create_storage("postgresql://localhost/db")


@pytest.mark.parametrize("scheme", ["postgres", "postgresql", "postgresql+psycopg"])
@pytest.mark.parametrize("create", [create_storage, create_vector], ids=["storage", "vector"])
def test_a_postgresql_url_points_at_pgvector_and_its_extra(scheme: str, create: Any) -> None:
    """Issue 23 item 7: ``postgres://`` said only "no storage named 'postgres'"."""
    with pytest.raises(PluginError) as info:
        create(f"{scheme}://user:secret@localhost:5432/db")
    message = str(info.value)
    assert "served by the pgvector plugin: give it the scheme pgvector://" in message
    assert 'pip install "mastra-memory[pgvector]"' in message
    assert "secret" not in message


def test_unknown_name_of_no_known_adapter_hints_a_plugin_distribution() -> None:
    with pytest.raises(PluginError, match="install the plugin distribution that provides it"):
        create_vector("chromadb")


def test_empty_name_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="registered name or a URL"):
        create_vector("")


def test_factory_failure_names_the_store_and_the_plugin() -> None:
    get_plugin_manager().register(BrokenFactories(), name="broken-factories")
    with pytest.raises(
        PluginError, match=r"'explodes' \(plugin 'broken-factories'\).*backend client missing"
    ):
        create_vector("explodes")
    with pytest.raises(PluginError, match="returned object, not MastraVector"):
        create_vector("notastore")
    with pytest.raises(PluginError, match="returned object, not MemoryStorage"):
        create_storage("notastorage")
