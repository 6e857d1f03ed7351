"""The capability manifest of the embedded SQLite store (docs/spec.md §2.9), declared once.

Read by the translator (``translate.py``), the store (``store.py``), the conformance kit and the docs.
"""

from __future__ import annotations

from typing import Final

from ...capabilities import AdapterCapabilities, Deviation, StorageCapabilities
from ...filters.ast import ALL_OPERATORS

__all__ = ["SQLITE_CAPABILITIES"]

#: The manifest of the embedded SQLite store: every operator native, over the whole JSON document.
SQLITE_CAPABILITIES: Final = AdapterCapabilities(
    name="sqlite",
    version="1",
    native_operators=ALL_OPERATORS,
    implicit_array_traversal=True,
    metadata_only_query=True,
    upsert_delete_filter="atomic",  # the delete and the upsert share one transaction
    lexical_search=True,  # FTS5 BM25 beside each vector index (lexical.py)
    deviations=(
        Deviation(
            code="nul-character-rejected",
            description="metadata strings and keys containing U+0000 are rejected at upsert "
            "(UPSERT_INVALID_METADATA); nothing else is restricted",
            reason="SQLite's JSON functions cut text at a NUL character, so such values could not be "
            "filtered exactly",
        ),
        Deviation(
            code="int64-range",
            description="metadata integers outside the signed 64-bit range are rejected at upsert "
            "(UPSERT_INVALID_METADATA); a filter integer beyond it that is not exactly a float raises "
            "UnsupportedFilterError",
            reason="SQLite reads such integers as floating point, which would make comparisons inexact",
        ),
    ),
    storage=StorageCapabilities(),
)
