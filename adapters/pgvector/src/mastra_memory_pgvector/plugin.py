"""The hook implementations mastra-memory finds through the entry point ``pgvector``.

Kept light: mastra-memory imports this module whenever it builds its plugin manager, so psycopg and the
stores are imported only when they are used. The conformance targets register with the kit, from
``targets.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mastra_memory.hookspecs import hookimpl

from .settings import PgVectorSettings

if TYPE_CHECKING:
    from mastra_memory.plugins import RegisterStorage, RegisterVectorStore

    from .storage import PgStorage
    from .store import PgVector

NAME = "pgvector"


def create_pgvector_vector(settings: PgVectorSettings) -> PgVector:
    """Factory of the ``pgvector`` vector store: ``create_vector("pgvector", url="postgresql://...")``."""
    from .store import PgVector

    return PgVector(settings)


def create_pgvector_storage(settings: PgVectorSettings) -> PgStorage:
    """Factory of the ``pgvector`` memory storage: ``create_storage("pgvector", url="postgresql://...")``."""
    from .storage import PgStorage

    return PgStorage(settings)


@hookimpl
def register_vector_stores(register: RegisterVectorStore) -> None:
    """Register the ``pgvector`` vector store."""
    register(NAME, create_pgvector_vector, PgVectorSettings)


@hookimpl
def register_storages(register: RegisterStorage) -> None:
    """Register the ``pgvector`` memory storage (threads, messages and resources in PostgreSQL)."""
    register(NAME, create_pgvector_storage, PgVectorSettings)
