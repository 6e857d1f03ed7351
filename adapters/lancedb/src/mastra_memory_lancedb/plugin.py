"""The hook implementations mastra-memory finds through the entry point ``lancedb``.

Kept light: mastra-memory imports this module whenever it builds its plugin manager, so LanceDB itself
(and the conformance kit) are imported only when a store or a target is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mastra_memory.hookspecs import hookimpl

from .settings import LanceDBSettings

if TYPE_CHECKING:
    from mastra_memory.plugins import RegisterConformanceTarget, RegisterVectorStore

    from .store import LanceDBVector

NAME = "lancedb"


def create_lancedb_vector(settings: LanceDBSettings) -> LanceDBVector:
    """Factory of the ``lancedb`` vector store: ``create_vector("lancedb", url="./lancedb")``."""
    from .store import LanceDBVector

    return LanceDBVector(settings)


@hookimpl
def register_vector_stores(register: RegisterVectorStore) -> None:
    """Register the ``lancedb`` vector store."""
    register(NAME, create_lancedb_vector, LanceDBSettings)


@hookimpl
def register_conformance_targets(register: RegisterConformanceTarget) -> None:
    """Register the ``lancedb`` and ``lancedb-url`` targets when the conformance kit is installed."""
    try:
        from .targets import lancedb_targets
    except ImportError:  # mastra-memory-conformance is not installed: nothing to register
        return
    for target in lancedb_targets():
        register(target)
