"""The hooks of the entry point ``opensearch``: the OpenSearch k-NN vector store."""

from __future__ import annotations

from mastra_memory.plugins.store_plugin import StorePlugin

from .settings import OpenSearchSettings

PLUGIN = StorePlugin("opensearch", OpenSearchSettings, vector=".store:OpenSearchVector")
register_vector_stores = PLUGIN.register_vector_stores
