"""PostgreSQL + pgvector for mastra-memory: :class:`PgVector` (a ``MastraVector``) and :class:`PgStorage`
(a ``MemoryStorage``), both on psycopg 3 with an async connection pool.

Select them by name or URL: ``create_vector("pgvector", url="postgresql://...")``,
``Memory(storage="pgvector://user:pw@host/db", vector="pgvector://user:pw@host/db")``.
"""

from __future__ import annotations

from mastra_memory.plugins.store_plugin import exported_on_use

from .capabilities import PGVECTOR_CAPABILITIES
from .settings import PgVectorSettings

__all__ = ["PGVECTOR_CAPABILITIES", "PgStorage", "PgVector", "PgVectorSettings"]

__version__ = "0.1.0"

# The stores import psycopg; keep `import mastra_memory_pgvector` cheap for the plugin manager.
__getattr__ = exported_on_use(__name__, {"PgVector": ".store", "PgStorage": ".storage"})
