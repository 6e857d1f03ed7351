"""The hooks of the entry point ``libsql``: a memory storage and a vector store on Mastra's LibSQL file."""

from __future__ import annotations

from ...plugins.store_plugin import StorePlugin
from .settings import LibSQLSettings

PLUGIN = StorePlugin("libsql", LibSQLSettings, vector=".store:LibSQLVector", storage=".storage:LibSQLStorage")
register_vector_stores = PLUGIN.register_vector_stores
register_storages = PLUGIN.register_storages
