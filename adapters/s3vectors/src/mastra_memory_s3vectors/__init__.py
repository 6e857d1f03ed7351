"""mastra-memory-s3vectors: the Amazon S3 Vectors adapter of mastra-memory.

Build a store with ``mastra_memory.create_vector("s3vectors", bucket=..., region=...)`` or
:class:`S3VectorsVector` directly; ``mastra_memory.sync.wrap(store)`` gives the blocking facade. Verified
against Adobe S3Mock (an emulator); see ``docs/adapters/s3vectors.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mastra_memory.plugins.store_plugin import exported_on_use

from .capabilities import S3VECTORS_CAPABILITIES
from .settings import S3VectorsSettings

if TYPE_CHECKING:
    from .store import S3VectorsVector

__version__ = "0.1.0"
__all__ = ["S3VECTORS_CAPABILITIES", "S3VectorsSettings", "S3VectorsVector", "__version__"]

# Imported on use: the store pulls in numpy and the filter translator.
__getattr__ = exported_on_use(__name__, {"S3VectorsVector": ".store"})
