"""The ``MastraVector`` contract (docs/spec.md §3): records, shared argument checks, and the adapter template.

The package has the shape of ``mastra_memory.storage``:

* ``records.py`` — the models and constants (docs/spec.md §3.2, §3.5, §3.7, §3.9);
* ``arguments.py`` — argument, vector and metadata validation, no I/O (docs/spec.md §3.3, §3.6);
* ``base.py`` — the :class:`MastraVector` template: validation and filter translation before any I/O,
  then the adapter's ``_`` hooks (docs/spec.md §3.1);
* ``sql_translate.py`` — what the SQL filter translators (SQLite, pgvector) share (docs/spec.md §2.7).

Everything public is re-exported here: ``from mastra_memory.vector import MastraVector, QueryResult``.
"""

from __future__ import annotations

from .arguments import VectorArguments, normalise_metadata
from .base import FilterInput, MastraVector, TranslatedFilter, logger
from .records import (
    MASTRA_ID_NAMESPACE,
    MAX_ID_LENGTH,
    MIN_COSINE_NORM,
    PORTABLE_INDEX_NAME,
    RESERVED_PREFIX,
    IndexConfig,
    IndexStats,
    QueryResult,
    default_ef,
    mastra_uuid,
)

__all__ = [
    "MASTRA_ID_NAMESPACE",
    "MAX_ID_LENGTH",
    "MIN_COSINE_NORM",
    "PORTABLE_INDEX_NAME",
    "RESERVED_PREFIX",
    "FilterInput",
    "IndexConfig",
    "IndexStats",
    "MastraVector",
    "QueryResult",
    "TranslatedFilter",
    "VectorArguments",
    "default_ef",
    "logger",
    "mastra_uuid",
    "normalise_metadata",
]
