"""The hooks of the entry point ``lancedb``: the LanceDB vector store."""

from __future__ import annotations

from mastra_memory.plugins.store_plugin import StorePlugin

from .settings import LanceDBSettings

PLUGIN = StorePlugin("lancedb", LanceDBSettings, vector=".store:LanceDBVector")
register_vector_stores = PLUGIN.register_vector_stores
