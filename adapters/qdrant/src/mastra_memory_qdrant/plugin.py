"""The hooks of the entry point ``qdrant``: the Qdrant vector store (server, local mode, embedded engine)."""

from __future__ import annotations

from mastra_memory.plugins.store_plugin import StorePlugin

from .settings import QdrantSettings

PLUGIN = StorePlugin("qdrant", QdrantSettings, vector=".store:QdrantVector")
register_vector_stores = PLUGIN.register_vector_stores
