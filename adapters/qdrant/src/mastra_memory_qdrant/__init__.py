"""mastra-memory-qdrant: the Qdrant vector store adapter of mastra-memory.

Modes: a Qdrant server (``url`` + ``api_key``), qdrant-client's local mode (``path`` or
``url=":memory:"``), and the embedded engine (``edge_path``, qdrant-edge-py). Build a store with
``mastra_memory.create_vector("qdrant", ...)`` or :class:`QdrantVector` directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mastra_memory.plugins.store_plugin import exported_on_use

from .capabilities import QDRANT_CAPABILITIES
from .settings import QdrantSettings

if TYPE_CHECKING:
    from .store import QdrantVector

__version__ = "0.1.0"
__all__ = ["QDRANT_CAPABILITIES", "QdrantSettings", "QdrantVector", "__version__"]

# Imported on use: the store pulls in qdrant-client.
__getattr__ = exported_on_use(__name__, {"QdrantVector": ".store"})
