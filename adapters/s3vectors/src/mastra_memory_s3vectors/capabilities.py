"""The capability manifest of the S3 Vectors adapter (docs/spec.md §2.8, §2.9, §3.8), declared once.

The limits are the service's (Amazon S3 Vectors "Limitations and restrictions"); the adapter checks them
before any I/O and splits writes and reads into calls the service accepts.
"""

from __future__ import annotations

from typing import Final

from mastra_memory.capabilities import AdapterCapabilities, Deviation, int64_range, no_string_ranges

__all__ = [
    "GET_BATCH",
    "LIST_PAGE",
    "MAX_DIMENSION",
    "MAX_FILTERABLE_BYTES",
    "MAX_METADATA_KEYS",
    "MAX_TOP_K",
    "MAX_TOTAL_METADATA_BYTES",
    "S3VECTORS_CAPABILITIES",
    "WRITE_BATCH",
]

MAX_DIMENSION: Final = 4096
#: QueryVectors ``topK`` (the service raised it from 30 to 100).
MAX_TOP_K: Final = 100
#: Vectors per PutVectors and per DeleteVectors call.
WRITE_BATCH: Final = 500
#: Keys per GetVectors call.
GET_BATCH: Final = 100
#: Vectors per ListVectors page.
LIST_PAGE: Final = 1000
#: Filterable metadata per vector, and all metadata per vector (filterable + non-filterable), in bytes.
MAX_FILTERABLE_BYTES: Final = 2048
MAX_TOTAL_METADATA_BYTES: Final = 40 * 1024
#: Metadata keys per vector (filterable and non-filterable together).
MAX_METADATA_KEYS: Final = 50

S3VECTORS_CAPABILITIES: Final = AdapterCapabilities(
    name="s3vectors",
    version="0.1.0",
    native_operators=frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$and", "$or"}),
    # $exists over the typed keys of a path; $all as $and of $eq; $not and $nor pushed down by De Morgan
    # (every leaf this adapter emits is exactly negatable).
    emulated_operators=frozenset({"$exists", "$all", "$not", "$nor"}),
    # QueryVectors needs a vector: a metadata-only query lists every record (ListVectors) and filters with
    # the reference evaluator, exactly, like the emulated delete by filter.
    metadata_only_query=True,
    metrics=frozenset({"cosine", "euclidean"}),
    # The service builds its own (approximate) index; no type can be chosen.
    index_types=frozenset(),
    index_separator="-",
    max_dimension=MAX_DIMENSION,
    max_top_k=MAX_TOP_K,
    max_upsert_batch=WRITE_BATCH,
    update_by_filter="emulated",
    delete_by_filter="emulated",
    # The emulated delete, then PutVectors: S3 Vectors has no transaction (docs/spec.md §3.1).
    upsert_delete_filter="sequential",
    deviations=(
        Deviation(
            code="string-list-only",
            description="lists must contain only strings; other lists are rejected at upsert",
            reason=(
                "range and equality tests on list elements are only exact when every element of a key has "
                "one type: S3 Vectors documents element-wise $eq on arrays but not ranges, and S3Mock "
                "compares a whole array with a number (so $gte matched it and $gt did not)"
            ),
        ),
        no_string_ranges("S3 Vectors range operators take numbers only"),
        int64_range(
            "metadata numbers are JSON numbers; no exact comparison exists for integers beyond int64"
        ),
        Deviation(
            code="filterable-metadata-budget",
            description=(
                "upsert and update_vector raise ValidationError (UPSERT_INVALID_METADATA) before any I/O "
                "when a record's filterable metadata exceeds 2 KB, its metadata 40 KB or 50 keys"
            ),
            reason=(
                "the service's per-vector limits; keys in non_filterable_metadata_keys (default content) "
                "count only towards 40 KB, so Memory's message text never uses the filterable budget"
            ),
        ),
        Deviation(
            code="non-filterable-keys",
            description=(
                "a filter on a key listed in non_filterable_metadata_keys (default ['content']) raises "
                "UnsupportedFilterError"
            ),
            reason="non-filterable metadata is stored but the service cannot filter on it",
        ),
        Deviation(
            code="approximate-search",
            description=(
                "on Amazon S3 Vectors a query is approximate (ANN) and, on an index in CLASSIC mode with a "
                "selective filter, may return fewer than top_k matches although more exist; S3Mock, the "
                "verified emulator, searches exactly"
            ),
            reason="the service's search is approximate and it filters during the search, not before it",
        ),
    ),
)
