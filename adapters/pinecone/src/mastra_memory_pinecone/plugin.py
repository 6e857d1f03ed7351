"""The hooks of the entry point ``pinecone``: the Pinecone vector store."""

from __future__ import annotations

from mastra_memory.plugins.store_plugin import StorePlugin

from .settings import PineconeSettings

PLUGIN = StorePlugin("pinecone", PineconeSettings, vector=".store:PineconeVector")
register_vector_stores = PLUGIN.register_vector_stores
