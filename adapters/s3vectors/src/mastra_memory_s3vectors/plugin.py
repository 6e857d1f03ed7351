"""The hook implementations mastra-memory finds through the entry point ``s3vectors``.

Kept light: mastra-memory imports this module whenever it builds its plugin manager, so the store (and
boto3) are imported only when they are used. The conformance targets register with the kit, from
``targets.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mastra_memory.hookspecs import hookimpl

from .settings import S3VectorsSettings

if TYPE_CHECKING:
    from mastra_memory.plugins import RegisterVectorStore

    from .store import S3VectorsVector

NAME = "s3vectors"


def create_s3vectors_vector(settings: S3VectorsSettings) -> S3VectorsVector:
    """Factory of the ``s3vectors`` vector store: ``create_vector("s3vectors", bucket=..., region=...)``."""
    from .store import S3VectorsVector

    return S3VectorsVector(settings)


@hookimpl
def register_vector_stores(register: RegisterVectorStore) -> None:
    """Register the ``s3vectors`` vector store."""
    register(NAME, create_s3vectors_vector, S3VectorsSettings)
