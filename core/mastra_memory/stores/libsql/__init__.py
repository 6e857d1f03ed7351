"""The ``libsql`` store: :class:`LibSQLStorage`, a ``MemoryStorage``, and :class:`LibSQLVector`, a
``MastraVector``, over the file Mastra's ``@mastra/libsql`` writes (``file:./local.db``), in Mastra's own
tables and columns (docs/spec.md §4.7).

Select it by name or URL: ``create_storage("libsql", url="./local.db")``,
``Memory(storage="libsql:///path/to/local.db")`` (the vector store of the same file comes with it). It
needs the ``libsql`` extra.
"""

from __future__ import annotations

from ...plugins.store_plugin import exported_on_use
from .capabilities import LIBSQL_CAPABILITIES, LIBSQL_STORAGE_CAPABILITIES
from .settings import LibSQLSettings

__all__ = [
    "LIBSQL_CAPABILITIES",
    "LIBSQL_STORAGE_CAPABILITIES",
    "LibSQLSettings",
    "LibSQLStorage",
    "LibSQLVector",
]

# The stores need the libsql extra; importing the package (the plugin manager does) must not.
__getattr__ = exported_on_use(__name__, {"LibSQLStorage": ".storage", "LibSQLVector": ".store"})
