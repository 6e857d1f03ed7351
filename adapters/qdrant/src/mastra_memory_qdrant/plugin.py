"""The hook implementations mastra-memory finds through the entry point ``qdrant``.

Kept light: mastra-memory imports this module whenever it builds its plugin manager, so the store (and
qdrant-client) and the conformance targets are imported only when they are used.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from mastra_memory.hookspecs import hookimpl

from .settings import QdrantSettings

if TYPE_CHECKING:
    from mastra_memory.plugins import RegisterConformanceTarget, RegisterVectorStore

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


@cache
def _targets() -> list[Any]:
    # Looked up once: the hooks run on every registry lookup, and the kit is a test dependency.
    try:
        from .targets import qdrant_targets
    except ImportError:  # mastra-memory-conformance is not installed: nothing to register
        return []
    return list(qdrant_targets())


@hookimpl
def register_conformance_targets(register: RegisterConformanceTarget) -> None:
    """Register the ``qdrant-url``, ``qdrant-docker``, ``qdrant-edge`` and ``qdrant-local`` targets when
    the conformance kit is installed."""
    for target in _targets():
        register(target)
