"""The capability manifest of the Qdrant adapter (docs/spec.md §2.8, §2.9), shared by every mode."""

from __future__ import annotations

from typing import Final

from mastra_memory.capabilities import Deviation, int64_range, no_string_ranges
from mastra_memory.filters import facts

__all__ = ["MAX_DIMENSION", "QDRANT_CAPABILITIES", "UPSERT_BATCH"]

#: Points per upsert request (docs/spec.md §3.8).
UPSERT_BATCH: Final = 256
#: Qdrant's largest dense vector size.
MAX_DIMENSION: Final = 65_536

# Operators and implicit array traversal come with the facts of the layout (mastra_memory.filters.facts);
# every metric.
QDRANT_CAPABILITIES: Final = facts.manifest(
    name="qdrant",
    version="0.1.0",
    # A scroll over the matches keeping the top_k smallest ids: exact (the store's module docstring).
    metadata_only_query=True,
    index_types=frozenset({"hnsw", "flat"}),
    max_dimension=MAX_DIMENSION,
    max_upsert_batch=UPSERT_BATCH,
    update_by_filter="emulated",
    # A delete by filter and an upsert: Qdrant has no transaction (docs/spec.md §3.1).
    upsert_delete_filter="sequential",
    deviations=(
        no_string_ranges(
            "Qdrant orders only numbers and parsed datetimes: a datetime range skips every stored "
            "string that is not a timestamp and compares timestamps in other formats by time, not by "
            "code point, so no Qdrant condition equals a string range"
        ),
        int64_range(
            "Qdrant payload integers are int64 (larger ones become floats and lose their value) and "
            "match conditions take int64 operands"
        ),
        Deviation(
            code="filter-document-size",
            description=(
                "metadata whose filter document, by the adapter's estimate (an upper bound), would exceed "
                "4 MiB is rejected at upsert and update_vector (…_INVALID_METADATA): long keys deep inside "
                "nested objects, or many levels of "
                "arrays of objects, reach it within the shared limits of docs/spec.md §3.6; a thousand keys, "
                "lists of thousands of values and a few levels of arrays of objects stay far below it"
            ),
            reason=(
                "the filter document that makes implicit array traversal and $elemMatch exact repeats each "
                "key's full path and holds every value once per enclosing array of objects: 150 bytes of "
                "metadata nested 40 levels deep became a 53 MB payload that took 26 s to build"
            ),
        ),
    ),
)
