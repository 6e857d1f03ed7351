"""The built-in ``sqlite`` plugin: the embedded store registers through the same hooks as any adapter.

The store classes are imported inside the factories so that loading the plugin stays cheap. Its
conformance target lives in the conformance kit (``mastra_memory_conformance.sqlite_targets``): the core
never imports the kit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...hookspecs import hookimpl
from .settings import SQLiteSettings

if TYPE_CHECKING:
    from ...plugins.protocols import RegisterStorage, RegisterVectorStore
    from .storage import SQLiteStorage
    from .store import SQLiteVector

NAME = "sqlite"


def create_sqlite_vector(settings: SQLiteSettings) -> SQLiteVector:
    """Factory of the ``sqlite`` vector store."""
    from .store import SQLiteVector

    return SQLiteVector(url=settings.url)


def create_sqlite_storage(settings: SQLiteSettings) -> SQLiteStorage:
    """Factory of the ``sqlite`` memory storage."""
    from .storage import SQLiteStorage

    return SQLiteStorage(url=settings.url)


@hookimpl
def register_vector_stores(register: RegisterVectorStore) -> None:
    """Register the ``sqlite`` vector store."""
    register(NAME, create_sqlite_vector, SQLiteSettings)


@hookimpl
def register_storages(register: RegisterStorage) -> None:
    """Register the ``sqlite`` memory storage."""
    register(NAME, create_sqlite_storage, SQLiteSettings)
