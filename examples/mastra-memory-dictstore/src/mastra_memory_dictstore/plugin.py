"""The hook implementations mastra-memory finds through the entry point ``dictstore``.

Kept light: mastra-memory imports this module whenever it builds its plugin manager, so the store is
imported only when it is used. The conformance target registers with the kit, from ``targets.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mastra_memory.hookspecs import hookimpl

from .settings import DictStoreSettings

if TYPE_CHECKING:
    from mastra_memory.plugins import RegisterVectorStore

    from .store import DictStoreVector

NAME = "dictstore"


def create_dictstore_vector(settings: DictStoreSettings) -> DictStoreVector:
    """Factory of the ``dictstore`` vector store: ``create_vector("dictstore", space="demo")``."""
    from .store import DictStoreVector

    return DictStoreVector(settings)


@hookimpl
def register_vector_stores(register: RegisterVectorStore) -> None:
    """Register the ``dictstore`` vector store."""
    register(NAME, create_dictstore_vector, DictStoreSettings)
