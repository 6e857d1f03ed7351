"""mastra-memory-pinecone: the Pinecone vector store adapter of mastra-memory.

A ``MastraVector`` on Pinecone serverless indexes through the official ``pinecone`` SDK's asyncio client.
Build a store with ``mastra_memory.create_vector("pinecone", api_key=...)`` or :class:`PineconeVector`
directly; ``mastra_memory.sync.wrap(store)`` is its blocking facade.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .capabilities import PINECONE_CAPABILITIES
from .settings import PineconeSettings

if TYPE_CHECKING:
    from .store import PineconeVector

__version__ = "0.1.0"
__all__ = ["PINECONE_CAPABILITIES", "PineconeSettings", "PineconeVector", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "PineconeVector":  # imported on use: it pulls in the pinecone SDK
        from .store import PineconeVector

        return PineconeVector
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
