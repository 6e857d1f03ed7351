"""The hook implementations mastra-memory finds through the entry point ``pinecone``.

Kept light: mastra-memory imports this module whenever it builds its plugin manager, so the store (and
the pinecone SDK) are imported only when they are used. The conformance targets register with the kit,
from ``targets.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mastra_memory.hookspecs import hookimpl

from .settings import PineconeSettings

if TYPE_CHECKING:
    from mastra_memory.plugins import RegisterVectorStore

    from .store import PineconeVector

NAME = "pinecone"


def create_pinecone_vector(settings: PineconeSettings) -> PineconeVector:
    """Factory of the ``pinecone`` vector store: ``create_vector("pinecone", api_key=...)``."""
    from .store import PineconeVector

    return PineconeVector(settings)


@hookimpl
def register_vector_stores(register: RegisterVectorStore) -> None:
    """Register the ``pinecone`` vector store."""
    register(NAME, create_pinecone_vector, PineconeSettings)
