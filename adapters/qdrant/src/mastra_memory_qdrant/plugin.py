"""The hook implementations mastra-memory finds through the entry point ``qdrant``.

Kept light: mastra-memory imports this module whenever it builds its plugin manager, so the store (and
qdrant-client) are imported only when they are used. The conformance targets register with the kit, from
``targets.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mastra_memory.hookspecs import hookimpl

from .settings import QdrantSettings

if TYPE_CHECKING:
    from mastra_memory.plugins import RegisterVectorStore

    from .store import QdrantVector

NAME = "qdrant"


def create_qdrant_vector(settings: QdrantSettings) -> QdrantVector:
    """Factory of the ``qdrant`` vector store: ``create_vector("qdrant", url=...)``, ``path=...``,
    ``edge_path=...`` or ``url=":memory:"``."""
    from .store import QdrantVector

    return QdrantVector(settings)


@hookimpl
def register_vector_stores(register: RegisterVectorStore) -> None:
    """Register the ``qdrant`` vector store."""
    register(NAME, create_qdrant_vector, QdrantSettings)
