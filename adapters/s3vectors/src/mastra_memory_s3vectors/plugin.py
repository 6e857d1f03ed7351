"""The hooks of the entry point ``s3vectors``: the Amazon S3 Vectors vector store."""

from __future__ import annotations

from mastra_memory.plugins.store_plugin import StorePlugin

from .settings import S3VectorsSettings

PLUGIN = StorePlugin("s3vectors", S3VectorsSettings, vector=".store:S3VectorsVector")
register_vector_stores = PLUGIN.register_vector_stores
