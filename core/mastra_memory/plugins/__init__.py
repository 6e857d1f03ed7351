"""The plugin system: built-in and entry-point plugins, what they register, and building by name or URL.

Built-in plugins (``BUILTIN_PLUGINS``) register through the same hooks (:mod:`mastra_memory.hookspecs`)
as third-party ones. One module per job, none importing a later one:

* :mod:`.protocols` -- the ``register`` callback types (a leaf: imports nothing of mastra-memory);
* :mod:`.manager` -- builds the pluggy manager, loads built-ins and entry points, reads the env vars;
* :mod:`.registry` -- collects the registrations, checks them, lists the plugins;
* :mod:`.resolve` -- names and URLs to registrations: ``create_vector``, ``create_storage``, providers.
"""

from __future__ import annotations

from ..embedders.base import EmbedderFactory
from .manager import (
    BUILTIN_PLUGINS,
    ENTRYPOINT_GROUP,
    ENV_BLOCK,
    ENV_DISABLE,
    ENV_LOAD,
    MastraPluginManager,
    OriginPluginManager,
    PluginHooks,
    PluginOrigin,
    ProcessWide,
    Source,
    build_plugin_manager,
    entrypoints_disabled,
    get_plugin_manager,
    reset_plugin_manager,
)
from .protocols import RegisterEmbedder, RegisterStorage, RegisterVectorStore
from .registry import (
    EmbedderRegistration,
    PluginInfo,
    Registration,
    StorageFactory,
    VectorFactory,
    list_plugins,
)
from .resolve import (
    ADAPTER_EXTRAS,
    create_storage,
    create_vector,
    embedder_providers,
    storages,
    vector_stores,
)

__all__ = [
    "ADAPTER_EXTRAS",
    "BUILTIN_PLUGINS",
    "ENTRYPOINT_GROUP",
    "ENV_BLOCK",
    "ENV_DISABLE",
    "ENV_LOAD",
    "EmbedderFactory",
    "EmbedderRegistration",
    "MastraPluginManager",
    "OriginPluginManager",
    "PluginHooks",
    "PluginInfo",
    "PluginOrigin",
    "ProcessWide",
    "RegisterEmbedder",
    "RegisterStorage",
    "RegisterVectorStore",
    "Registration",
    "Source",
    "StorageFactory",
    "VectorFactory",
    "build_plugin_manager",
    "create_storage",
    "create_vector",
    "embedder_providers",
    "entrypoints_disabled",
    "get_plugin_manager",
    "list_plugins",
    "reset_plugin_manager",
    "storages",
    "vector_stores",
]
