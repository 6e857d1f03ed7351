"""The hook implementations mastra-memory finds through the entry point ``dictstore``.

Kept light: mastra-memory imports this module whenever it builds its plugin manager, so the store and
the conformance targets are imported only when they are used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mastra_memory.hookspecs import hookimpl

from .settings import DictStoreSettings

if TYPE_CHECKING:
    from mastra_memory.plugins import RegisterConformanceTarget, RegisterVectorStore

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


@hookimpl
def register_conformance_targets(register: RegisterConformanceTarget) -> None:
    """Register the ``dictstore`` target when the conformance kit is installed (it is a test dependency)."""
    try:
        from .targets import dictstore_target
    except ImportError:  # mastra-memory-conformance is not installed: nothing to register
        return
    register(dictstore_target())
