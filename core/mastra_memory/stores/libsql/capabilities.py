"""What the LibSQL store provides, declared once: a memory storage, and no vector store yet.

Mastra keeps vectors in a table per index (``memory_messages_384 (id, vector_id TEXT UNIQUE, embedding
F32_BLOB(n), metadata TEXT)`` with a ``libsql_vector_idx`` index); a ``MastraVector`` over those tables is
issue 25's remaining vector half (docs/spec.md §4.7).
"""

from __future__ import annotations

from typing import Final

from ...capabilities import StorageCapabilities

__all__ = ["HAS_VECTOR_STORE", "LIBSQL_STORAGE_CAPABILITIES"]

#: The storage does everything of docs/spec.md §4 (resource scope, listing by resource, clone).
LIBSQL_STORAGE_CAPABILITIES: Final = StorageCapabilities()

#: The plugin registers no vector store: pair the storage with any vector store (docs/spec.md §4.7).
HAS_VECTOR_STORE: Final = False
