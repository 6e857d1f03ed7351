"""The signatures of the ``register`` callbacks the hooks receive, for plugins that type-check.

A leaf: it imports nothing of mastra-memory, so :mod:`mastra_memory.hookspecs` (which every plugin
imports) and the plugin machinery can both depend on it without a circle. A factory's return value is
typed ``object`` here and checked when it is built: ``create_vector``/``create_storage`` raise
``PluginError`` unless it is a ``MastraVector``/``MemoryStorage``, and the model router raises it
unless an embedder factory returns an ``Embedder``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from pydantic import BaseModel

__all__ = ["RegisterEmbedder", "RegisterStorage", "RegisterVectorStore"]

#: ``register(name, factory, settings_model)``; ``factory(settings)`` returns a ``MastraVector``.
RegisterVectorStore: TypeAlias = Callable[[str, Callable[[Any], object], type[BaseModel]], None]
#: ``register(name, factory, settings_model)``; ``factory(settings)`` returns a ``MemoryStorage``.
RegisterStorage: TypeAlias = Callable[[str, Callable[[Any], object], type[BaseModel]], None]
#: ``register(provider, factory)``; ``factory(model, options)`` returns an ``Embedder``.
RegisterEmbedder: TypeAlias = Callable[[str, Callable[[str, Mapping[str, Any]], object]], None]
