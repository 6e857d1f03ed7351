"""The capability manifest of the Pinecone adapter (docs/spec.md §2.8, §2.9) and Pinecone's limits."""

from __future__ import annotations

from typing import Final

from mastra_memory.capabilities import AdapterCapabilities, Deviation, int64_range, no_string_ranges

__all__ = [
    "FETCH_BATCH",
    "MAX_DIMENSION",
    "MAX_METADATA_BYTES",
    "MAX_REQUEST_BYTES",
    "MAX_TOP_K",
    "MAX_TOP_K_WITH_DATA",
    "PINECONE_CAPABILITIES",
    "UPSERT_BATCH",
]

#: Records per upsert request (docs/spec.md §3.8; Pinecone's own cap is 1,000 records and 2 MB).
UPSERT_BATCH: Final = 100
#: Pinecone's cap on one upsert request's body; batches are also split to stay below it.
MAX_REQUEST_BYTES: Final = 2 * 1024 * 1024
#: Ids per fetch or delete request.
FETCH_BATCH: Final = 1_000
#: Pinecone's ``top_k`` cap, and its cap when values or metadata are returned (this adapter always
#: returns metadata, so ``max_top_k`` is the second).
MAX_TOP_K: Final = 10_000
MAX_TOP_K_WITH_DATA: Final = 1_000
#: Metadata per record, as Pinecone measures it (compact UTF-8 JSON, the adapter's reserved keys included).
MAX_METADATA_BYTES: Final = 40 * 1024
#: Pinecone's largest dense dimension.
MAX_DIMENSION: Final = 20_000

PINECONE_CAPABILITIES: Final = AdapterCapabilities(
    name="pinecone",
    version="0.1.0",
    native_operators=frozenset(
        {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$and", "$or"}
    ),
    # $all: an $and of equalities; $not/$nor: negation pushed down to leaves that each have an exact
    # Pinecone negation (docs/spec.md §2.8 E*: with the adapter's type markers every leaf has one).
    emulated_operators=frozenset({"$all", "$not", "$nor"}),
    namespaces=True,
    # Pinecone serverless builds its own approximate index: "hnsw" is accepted as "an approximate index"
    # and its tuning numbers are ignored with one warning per index.
    index_types=frozenset({"hnsw"}),
    index_separator="-",
    max_dimension=MAX_DIMENSION,
    max_top_k=MAX_TOP_K_WITH_DATA,
    max_upsert_batch=UPSERT_BATCH,
    update_by_filter="emulated",
    delete_by_filter="emulated",
    # The emulated delete, then the upsert: Pinecone has no transaction (docs/spec.md §3.1).
    upsert_delete_filter="sequential",
    eventually_consistent=True,
    deviations=(
        Deviation(
            code="null-dropped",
            description="null metadata values are not stored: they read back as missing keys",
            reason=(
                "Pinecone does not support null metadata values (its documentation says to remove the "
                "key instead), so {f: None} and $exists: false both match a dropped null"
            ),
        ),
        Deviation(
            code="nested-flattened",
            description=(
                "nested dicts are stored as dotted keys and restored on read; an empty dict is not stored"
            ),
            reason="Pinecone metadata values are flat: strings, numbers, booleans and lists of strings",
        ),
        Deviation(
            code="string-list-only",
            description="lists must hold only strings; other lists are rejected at upsert (INVALID_METADATA)",
            reason="Pinecone's only list type is the list of strings",
        ),
        no_string_ranges("Pinecone's range operators compare numbers only"),
        int64_range(
            "Pinecone stores every number as a 64-bit float; integers beyond 2^53 are kept exactly in "
            "a reserved key and compared exactly by enumerating the int64 values that share a float, "
            "which is finite only within int64"
        ),
        Deviation(
            code="dotted-keys-rejected",
            description="metadata keys containing '.' are rejected at upsert (INVALID_METADATA)",
            reason=(
                "nested dicts are flattened to dotted keys, so a key with a dot in it could not be told "
                "apart from a nested path (filters already read dots as path separators)"
            ),
        ),
        Deviation(
            code="metadata-40kb",
            description=(
                "a record whose metadata exceeds 40 KB as Pinecone stores it (compact UTF-8 JSON with the "
                "adapter's reserved keys) is rejected at upsert (INVALID_METADATA); nothing is truncated"
            ),
            reason="Pinecone's limit is 40 KB of metadata per record",
        ),
    ),
)
