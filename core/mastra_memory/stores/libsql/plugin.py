"""The hooks of the entry point ``libsql``: a memory storage on Mastra's LibSQL file (no vector store yet)."""

from __future__ import annotations

from ...plugins.store_plugin import StorePlugin
from .settings import LibSQLSettings

PLUGIN = StorePlugin("libsql", LibSQLSettings, storage=".storage:LibSQLStorage")
register_storages = PLUGIN.register_storages
