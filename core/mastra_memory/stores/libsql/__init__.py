"""The ``libsql`` store: :class:`LibSQLStorage`, a ``MemoryStorage`` over the file Mastra's ``@mastra/libsql``
writes (``file:./local.db``), in Mastra's own tables and columns (docs/spec.md §4.7).

Select it by name or URL: ``create_storage("libsql", url="./local.db")``,
``Memory(storage="libsql:///path/to/local.db", vector=...)``. It needs the ``libsql`` extra and provides
no vector store yet.
"""

from __future__ import annotations

from ...plugins.store_plugin import exported_on_use
from .capabilities import LIBSQL_STORAGE_CAPABILITIES
from .settings import LibSQLSettings

__all__ = ["LIBSQL_STORAGE_CAPABILITIES", "LibSQLSettings", "LibSQLStorage"]

# The storage needs the libsql extra; importing the package (the plugin manager does) must not.
__getattr__ = exported_on_use(__name__, {"LibSQLStorage": ".storage"})
