"""The hooks of the entry point ``mongodb``: the MongoDB vector store and memory storage."""

from __future__ import annotations

from mastra_memory.plugins.store_plugin import StorePlugin

from .settings import MongoDBSettings

PLUGIN = StorePlugin(
    "mongodb", MongoDBSettings, vector=".store:MongoDBVector", storage=".storage:MongoDBStorage"
)
register_vector_stores = PLUGIN.register_vector_stores
register_storages = PLUGIN.register_storages
