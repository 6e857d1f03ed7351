"""Plugin hooks. A plugin is any module or object with functions marked ``@hookimpl``.

Every hook is a *register callback*: the plugin calls ``register(...)`` once per thing it provides, so
one plugin can provide several (or none, depending on what is installed). Each hook is documented in
``docs/plugins/hooks.md``; a test fails if a hook is added without documentation or a test.

A leaf module: it imports only `mastra_memory.plugins.protocols` (for the ``register`` types). The
conformance kit keeps its own hooks for targets (``mastra_memory_conformance.hookspecs``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .plugins.protocols import RegisterEmbedder, RegisterStorage, RegisterVectorStore

PROJECT_NAME = "mastra_memory"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def register_vector_stores(register: RegisterVectorStore) -> None:
    """Call ``register(name, factory, settings_model)`` for each vector store the plugin provides.

    ``factory(settings)`` receives a validated ``settings_model`` instance and returns a ``MastraVector``.
    """


@hookspec
def register_storages(register: RegisterStorage) -> None:
    """Call ``register(name, factory, settings_model)`` for each memory storage the plugin provides.

    ``factory(settings)`` receives a validated ``settings_model`` instance and returns a ``MemoryStorage``.
    """


@hookspec
def register_embedders(register: RegisterEmbedder) -> None:
    """Call ``register(provider, factory)`` for each model-router provider (``openai``, ``local``, ...).

    ``factory(model, options)`` receives the part of ``provider/model`` after the first ``/``.
    """
