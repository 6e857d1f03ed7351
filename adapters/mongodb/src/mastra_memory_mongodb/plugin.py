"""The hook implementations mastra-memory finds through the entry point ``mongodb``.

Kept light: mastra-memory imports this module whenever it builds its plugin manager, so pymongo and the
stores are imported only when they are used. The conformance targets register with the kit, from
``targets.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mastra_memory.hookspecs import hookimpl

from .settings import MongoDBSettings

if TYPE_CHECKING:
    from mastra_memory.plugins import RegisterStorage, RegisterVectorStore

    from .storage import MongoDBStorage
    from .store import MongoDBVector

NAME = "mongodb"


def create_mongodb_vector(settings: MongoDBSettings) -> MongoDBVector:
    """Factory of the ``mongodb`` vector store: ``create_vector("mongodb", url="mongodb://...")``."""
    from .store import MongoDBVector

    return MongoDBVector(settings)


def create_mongodb_storage(settings: MongoDBSettings) -> MongoDBStorage:
    """Factory of the ``mongodb`` memory storage: ``create_storage("mongodb", url="mongodb://...")``."""
    from .storage import MongoDBStorage

    return MongoDBStorage(settings)


@hookimpl
def register_vector_stores(register: RegisterVectorStore) -> None:
    """Register the ``mongodb`` vector store."""
    register(NAME, create_mongodb_vector, MongoDBSettings)


@hookimpl
def register_storages(register: RegisterStorage) -> None:
    """Register the ``mongodb`` memory storage (threads, messages and resources in MongoDB)."""
    register(NAME, create_mongodb_storage, MongoDBSettings)
