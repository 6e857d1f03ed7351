"""The built-in ``sqlite`` plugin: the embedded store registers through the same hooks as any adapter.

Its conformance target lives in the conformance kit (``mastra_memory_conformance.sqlite_targets``): the
core never imports the kit.
"""

from __future__ import annotations

from ...plugins.store_plugin import StorePlugin
from .settings import SQLiteSettings

PLUGIN = StorePlugin("sqlite", SQLiteSettings, vector=".store:SQLiteVector", storage=".storage:SQLiteStorage")
register_vector_stores = PLUGIN.register_vector_stores
register_storages = PLUGIN.register_storages
