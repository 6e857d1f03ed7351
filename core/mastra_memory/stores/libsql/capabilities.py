"""What the LibSQL store provides, declared once: a memory storage and a vector store in Mastra's layout.

The vector store works on Mastra's own per-index tables (``memory_messages_384 (id SERIAL PRIMARY KEY,
vector_id TEXT UNIQUE NOT NULL, embedding F32_BLOB(n), metadata TEXT DEFAULT '{}')`` with a
``libsql_vector_idx`` index), which hold no metric: Mastra's ``LibSQLVector`` scores every index by cosine,
so this store offers cosine only (docs/spec.md §4.7).
"""

from __future__ import annotations

from typing import Final

from ...capabilities import AdapterCapabilities, Deviation, StorageCapabilities, int64_range
from ...filters.ast import ALL_OPERATORS

__all__ = ["HAS_VECTOR_STORE", "LIBSQL_CAPABILITIES", "LIBSQL_STORAGE_CAPABILITIES"]

#: The storage does everything of docs/spec.md §4 (resource scope, listing by resource, clone).
LIBSQL_STORAGE_CAPABILITIES: Final = StorageCapabilities()

#: The plugin registers a vector store under the same name: ``Memory(storage="libsql:///...")`` recalls
#: without ``vector=`` (docs/spec.md §4.7, §5.1).
HAS_VECTOR_STORE: Final = True

#: The vector store's manifest: exact cosine search, every operator but ``$regex`` (the driver cannot
#: register the function that evaluates it; see ``translate.py``), filters over the whole JSON document.
LIBSQL_CAPABILITIES: Final = AdapterCapabilities(
    name="libsql",
    version="1",
    native_operators=ALL_OPERATORS - {"$regex"},
    implicit_array_traversal=True,
    metadata_only_query=True,
    metrics=frozenset({"cosine"}),
    upsert_delete_filter="atomic",  # the delete and the upsert share one transaction
    deviations=(
        Deviation(
            code="nul-character-rejected",
            description="metadata strings and keys containing U+0000 are rejected at upsert "
            "(UPSERT_INVALID_METADATA); nothing else is restricted",
            reason="libSQL's JSON functions cut text at a NUL character, so such values could not be "
            "filtered exactly",
        ),
        int64_range("libSQL reads such integers as floating point, which would make comparisons inexact"),
    ),
    storage=LIBSQL_STORAGE_CAPABILITIES,
)
