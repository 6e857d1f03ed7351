"""The core's built-ins register through the same hooks as third-party plugins (docs/spec.md §1.2)."""

from __future__ import annotations

from pydantic import BaseModel

from mastra_memory import __version__
from mastra_memory.plugins import (
    BUILTIN_PLUGINS,
    EmbedderFactory,
    StorageFactory,
    VectorFactory,
    embedder_providers,
    get_plugin_manager,
    list_plugins,
    storages,
    vector_stores,
)
from mastra_memory.stores.sqlite.settings import SQLiteSettings

SQLITE_PLUGIN = "mastra_memory.stores.sqlite.plugin"


def test_builtins_are_plugins_of_the_manager() -> None:
    pm = get_plugin_manager()
    names = [name for name, _ in pm.list_name_plugin()]
    assert names == list(BUILTIN_PLUGINS)  # entry points are disabled for the project's own tests
    for name in BUILTIN_PLUGINS:
        assert pm.origin(name).source == "builtin"
        assert pm.origin(name).version == __version__


def test_manager_is_cached() -> None:
    assert get_plugin_manager() is get_plugin_manager()


def test_sqlite_registers_through_register_vector_stores_and_register_storages() -> None:
    vector = vector_stores()["sqlite"]
    storage = storages()["sqlite"]
    assert (vector.plugin, vector.settings_model) == (SQLITE_PLUGIN, SQLiteSettings)
    assert (storage.plugin, storage.settings_model) == (SQLITE_PLUGIN, SQLiteSettings)


def test_builtin_embedders_register_through_register_embedders() -> None:
    providers = embedder_providers()
    assert {"hash", "local"} <= set(providers)
    embedders_plugin = next(p for p in list_plugins() if p.name == "mastra_memory.embedders.builtin")
    assert set(embedders_plugin.embedder_providers) == set(providers)
    assert embedders_plugin.source == "builtin"


def test_typed_facade_calls_each_hook() -> None:
    """``pm.hooks`` is the type-checked way to call the hooks; ``only()`` narrows to one plugin."""
    pm = get_plugin_manager()
    stores: list[tuple[str, VectorFactory, type[BaseModel]]] = []
    saved: list[tuple[str, StorageFactory, type[BaseModel]]] = []
    providers: list[tuple[str, EmbedderFactory]] = []

    pm.hooks.register_vector_stores(lambda name, factory, model: stores.append((name, factory, model)))
    pm.hooks.register_storages(lambda name, factory, model: saved.append((name, factory, model)))
    pm.hooks.register_embedders(lambda provider, factory: providers.append((provider, factory)))

    assert [s[0] for s in stores] == ["sqlite"]
    assert [s[0] for s in saved] == ["sqlite"]
    assert "hash" in {p[0] for p in providers}

    sqlite_only: list[str] = []
    pm.hooks.only(pm.get_plugin(SQLITE_PLUGIN)).register_embedders(lambda p, f: sqlite_only.append(p))
    assert sqlite_only == []  # the sqlite plugin provides no embedder; the embedders plugin was skipped


def test_list_plugins_reports_what_each_builtin_provides() -> None:
    infos = {info.name: info for info in list_plugins()}
    sqlite = infos[SQLITE_PLUGIN]
    assert sqlite.vector_stores == ("sqlite",)
    assert sqlite.storages == ("sqlite",)
    assert sqlite.embedder_providers == ()
    assert (sqlite.source, sqlite.version, sqlite.distribution) == ("builtin", __version__, "mastra-memory")
