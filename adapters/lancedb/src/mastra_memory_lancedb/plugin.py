"""The hook implementations mastra-memory finds through the entry point ``lancedb``.

Kept light: mastra-memory imports this module whenever it builds its plugin manager, so LanceDB itself is
imported only when a store is used. The conformance targets register with the kit, from ``targets.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mastra_memory.hookspecs import hookimpl

from .settings import LanceDBSettings

if TYPE_CHECKING:
    from mastra_memory.plugins import RegisterVectorStore

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
