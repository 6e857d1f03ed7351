"""mastra-memory-pinecone: the Pinecone vector store adapter of mastra-memory.

A ``MastraVector`` on Pinecone serverless indexes through the official ``pinecone`` SDK's asyncio client.
Build a store with ``mastra_memory.create_vector("pinecone", api_key=...)`` or :class:`PineconeVector`
directly; ``mastra_memory.sync.wrap(store)`` is its blocking facade.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mastra_memory.plugins.store_plugin import exported_on_use

from .capabilities import PINECONE_CAPABILITIES
from .settings import PineconeSettings

if TYPE_CHECKING:
    from .store import PineconeVector

__version__ = "0.1.0"
__all__ = ["PINECONE_CAPABILITIES", "PineconeSettings", "PineconeVector", "__version__"]

# Imported on use: the store pulls in the pinecone SDK.
__getattr__ = exported_on_use(__name__, {"PineconeVector": ".store"})
