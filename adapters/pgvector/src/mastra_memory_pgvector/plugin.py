"""The hooks of the entry point ``pgvector``: the pgvector vector store and memory storage."""

from __future__ import annotations

from mastra_memory.plugins.store_plugin import StorePlugin

from .settings import PgVectorSettings

PLUGIN = StorePlugin("pgvector", PgVectorSettings, vector=".store:PgVector", storage=".storage:PgStorage")
register_vector_stores = PLUGIN.register_vector_stores
register_storages = PLUGIN.register_storages
