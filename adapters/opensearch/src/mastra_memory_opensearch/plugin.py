"""The hook implementations mastra-memory finds through the entry point ``opensearch``.

Kept light: mastra-memory imports this module whenever it builds its plugin manager, so the store (and
opensearch-py) are imported only when they are used. The conformance targets register with the kit, from
``targets.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mastra_memory.hookspecs import hookimpl

from .settings import OpenSearchSettings

if TYPE_CHECKING:
    from mastra_memory.plugins import RegisterVectorStore

    from .store import OpenSearchVector

NAME = "opensearch"


def create_opensearch_vector(settings: OpenSearchSettings) -> OpenSearchVector:
    """Factory of the ``opensearch`` vector store: ``create_vector("opensearch", url=...)``."""
    from .store import OpenSearchVector

    return OpenSearchVector(settings)


@hookimpl
def register_vector_stores(register: RegisterVectorStore) -> None:
    """Register the ``opensearch`` vector store."""
    register(NAME, create_opensearch_vector, OpenSearchSettings)
