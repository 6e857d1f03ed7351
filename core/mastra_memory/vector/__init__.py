"""The ``MastraVector`` contract (docs/spec.md §3): records, shared argument checks, and the adapter template.

The package has the shape of ``mastra_memory.storage``:

* ``records.py`` — the models and constants (docs/spec.md §3.2, §3.5, §3.7, §3.9);
* ``arguments.py`` — argument, vector and metadata validation, no I/O (docs/spec.md §3.3, §3.6);
* ``metadata.py`` — metadata as the hooks receive it: normalised, within the shared limits, and the walk a
  store's own metadata rules use (§3.6);
* ``base.py`` — the :class:`MastraVector` template: validation and filter translation before any I/O,
  then the adapter's ``_`` hooks (docs/spec.md §3.1);
* ``sql_translate.py`` — what the SQL filter translators (SQLite, pgvector) share (docs/spec.md §2.7);
* ``ties.py`` — asking an engine that ranks by score alone for enough results to order ties by id (§3.1).

Everything public is re-exported here: ``from mastra_memory.vector import MastraVector, QueryResult``.
"""

from __future__ import annotations

from .arguments import VectorArguments
from .base import FilterInput, MastraVector, Matrix, Metadata, QueryRequest, TranslatedFilter, Vector, logger
from .metadata import first_problem, normalise_metadata
from .records import (
    DEFAULT_EF_CONSTRUCTION,
    DEFAULT_M,
    MASTRA_ID_NAMESPACE,
    MAX_ID_LENGTH,
    MIN_COSINE_NORM,
    PORTABLE_INDEX_NAME,
    RESERVED_PREFIX,
    IndexConfig,
    IndexStats,
    QueryResult,
    default_ef,
    escape_nul,
    has_mapped_form,
    mastra_uuid,
    native_record_id,
    unescape_nul,
)
from .ties import TIE_MARGIN, past_ties

__all__ = [
    "DEFAULT_EF_CONSTRUCTION",
    "DEFAULT_M",
    "MASTRA_ID_NAMESPACE",
    "MAX_ID_LENGTH",
    "MIN_COSINE_NORM",
    "PORTABLE_INDEX_NAME",
    "RESERVED_PREFIX",
    "TIE_MARGIN",
    "FilterInput",
    "IndexConfig",
    "IndexStats",
    "MastraVector",
    "Matrix",
    "Metadata",
    "QueryRequest",
    "QueryResult",
    "TranslatedFilter",
    "Vector",
    "VectorArguments",
    "default_ef",
    "escape_nul",
    "first_problem",
    "has_mapped_form",
    "logger",
    "mastra_uuid",
    "native_record_id",
    "normalise_metadata",
    "past_ties",
    "unescape_nul",
]
