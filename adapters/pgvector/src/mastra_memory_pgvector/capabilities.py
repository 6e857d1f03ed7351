"""The capability manifest of the pgvector adapter (docs/spec.md §2.9), read by the conformance kit and the
docs."""

from __future__ import annotations

from typing import Final

from mastra_memory.capabilities import AdapterCapabilities, Deviation, StorageCapabilities
from mastra_memory.filters.ast import ALL_OPERATORS

#: The largest dimension a ``vector`` column holds. Above 2,000 dimensions ANN indexes are built over
#: ``halfvec`` (up to 4,000); above that an index searches exactly (type ``flat``).
MAX_DIMENSION: Final = 16_000
#: Rows per INSERT statement (docs/spec.md §3.8); each statement binds its rows as arrays, so it stays far
#: below
#: PostgreSQL's limit of 65,535 bound parameters.
MAX_ROWS_PER_STATEMENT: Final = 16_383

PGVECTOR_CAPABILITIES: Final = AdapterCapabilities(
    name="pgvector",
    version="1",
    native_operators=ALL_OPERATORS - {"$regex"},
    emulated_operators=frozenset({"$regex"}),
    implicit_array_traversal=True,
    metadata_only_query=True,
    index_types=frozenset({"hnsw", "ivfflat", "flat"}),
    max_dimension=MAX_DIMENSION,
    max_upsert_batch=MAX_ROWS_PER_STATEMENT,
    upsert_delete_filter="atomic",  # the delete and the upsert share one transaction
    lexical_search=True,  # PostgreSQL full text beside the vectors, both layouts (lexical.py)
    deviations=(
        Deviation(
            code="nul-character-rejected",
            description="metadata strings and keys containing U+0000 (or unpaired surrogates) are rejected "
            "at upsert (UPSERT_INVALID_METADATA); nothing else is restricted",
            reason="PostgreSQL text and jsonb cannot hold the NUL character, and unpaired surrogates are "
            "not Unicode text",
        ),
    ),
    storage=StorageCapabilities(resource_scope=True, list_by_resource=True, clone_thread=True),
)
