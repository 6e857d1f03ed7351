"""MongoDB for mastra-memory: :class:`MongoDBVector` (a ``MastraVector``: ``$vectorSearch`` on Atlas, exact
search on any MongoDB or FerretDB) and :class:`MongoDBStorage` (a ``MemoryStorage``), both on pymongo's
native async API.

Select them by name or URL: ``create_vector("mongodb", url="mongodb://...")``,
``Memory(storage="mongodb://host/?...", vector="mongodb://host/?...")``.
"""

from __future__ import annotations

from mastra_memory.plugins.store_plugin import exported_on_use

from .capabilities import FERRETDB_CAPABILITIES, MONGODB_CAPABILITIES
from .settings import MongoDBSettings

__all__ = [
    "FERRETDB_CAPABILITIES",
    "MONGODB_CAPABILITIES",
    "MongoDBSettings",
    "MongoDBStorage",
    "MongoDBVector",
]

__version__ = "0.1.0"

# The stores import pymongo; keep `import mastra_memory_mongodb` cheap for the plugin manager.
__getattr__ = exported_on_use(__name__, {"MongoDBVector": ".store", "MongoDBStorage": ".storage"})
