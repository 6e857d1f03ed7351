"""StorePlugin: a plugin module's hooks from one declaration; the classes are imported when first built."""

from __future__ import annotations

import sys
from types import ModuleType

import pytest
from pydantic import BaseModel

from mastra_memory.errors import PluginError
from mastra_memory.plugins import create_storage, create_vector, get_plugin_manager, list_plugins
from mastra_memory.plugins.store_plugin import StorePlugin
from mastra_memory.stores.sqlite.settings import SQLiteSettings
from mastra_memory.stores.sqlite.storage import SQLiteStorage
from mastra_memory.stores.sqlite.store import SQLiteVector


class Settings(BaseModel):
    url: str = ":memory:"


def plugin_module(name: str, plugin: StorePlugin, *, storages: bool = True) -> ModuleType:
    """A module laid out as a ``plugin.py`` that declares ``plugin``."""
    module = ModuleType(name)
    module.register_vector_stores = plugin.register_vector_stores  # type: ignore[attr-defined]
    if storages:
        module.register_storages = plugin.register_storages  # type: ignore[attr-defined]
    return module


def test_the_declared_stores_are_registered_and_built_from_their_settings() -> None:
    plugin = StorePlugin(
        "alsosqlite",
        SQLiteSettings,
        vector="mastra_memory.stores.sqlite.store:SQLiteVector",
        storage="mastra_memory.stores.sqlite.storage:SQLiteStorage",
    )
    get_plugin_manager().register(plugin_module("alsosqlite_plugin", plugin), name="alsosqlite")
    info = next(p for p in list_plugins() if p.name == "alsosqlite")
    assert (info.vector_stores, info.storages) == (("alsosqlite",), ("alsosqlite",))
    assert isinstance(create_vector("alsosqlite", url=":memory:"), SQLiteVector)
    assert isinstance(create_storage("alsosqlite"), SQLiteStorage)


def test_a_vector_only_plugin_registers_no_storage() -> None:
    plugin = StorePlugin("vectoronly", Settings, vector="mastra_memory.stores.sqlite.store:SQLiteVector")
    get_plugin_manager().register(plugin_module("vectoronly_plugin", plugin), name="vectoronly")
    info = next(p for p in list_plugins() if p.name == "vectoronly")
    assert (info.vector_stores, info.storages) == (("vectoronly",), ())


def test_the_class_module_is_imported_by_the_first_store_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "json.tool", raising=False)
    plugin = StorePlugin("lazy", Settings, vector="json.tool:Path")
    get_plugin_manager().register(plugin_module("lazy_plugin", plugin, storages=False), name="lazy")
    list_plugins()
    assert "json.tool" not in sys.modules
    with pytest.raises(PluginError, match="could not be created"):
        create_vector("lazy")  # json.tool.Path(settings) is no vector store
    assert "json.tool" in sys.modules


@pytest.mark.parametrize(
    ("vector", "storage", "message"),
    [
        (None, None, "registers neither"),
        ("no_class_here", None, "not a 'module:Class' path"),
        (":Class", None, "not a 'module:Class' path"),
        ("module:", None, "not a 'module:Class' path"),
    ],
)
def test_a_declaration_without_a_store_or_with_a_bad_path_is_refused(
    vector: str | None, storage: str | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        StorePlugin("bad", Settings, vector=vector, storage=storage)
