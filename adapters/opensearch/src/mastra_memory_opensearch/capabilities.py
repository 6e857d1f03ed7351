"""The capability manifest of the OpenSearch adapter (docs/spec.md §2.8, §2.9)."""

from __future__ import annotations

from typing import Final

from mastra_memory.capabilities import AdapterCapabilities, Deviation

from .document import ELEMENT_DEPTH, SHORT_STRING_BYTES

__all__ = ["BULK_ACTIONS", "MAX_DIMENSION", "MAX_K", "OPENSEARCH_CAPABILITIES"]

#: Actions per bulk request (docs/spec.md §3.8: at most 500); requests are also cut by size.
BULK_ACTIONS: Final = 500
#: The k-NN plugin's largest ``knn_vector`` dimension on the Lucene engine.
MAX_DIMENSION: Final = 16_000
#: The k-NN plugin's largest ``k`` (docs/spec.md §3.8).
MAX_K: Final = 10_000

OPENSEARCH_CAPABILITIES: Final = AdapterCapabilities(
    name="opensearch",
    version="0.1.0",
    native_operators=frozenset(
        {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$and", "$or", "$not", "$nor"}
    ),
    emulated_operators=frozenset({"$all", "$size", "$elemMatch", "$exists"}),
    implicit_array_traversal=True,
    metadata_only_query=False,
    metrics=frozenset({"cosine", "euclidean", "dotproduct"}),
    index_types=frozenset({"hnsw"}),
    max_dimension=MAX_DIMENSION,
    max_top_k=MAX_K,
    max_upsert_batch=BULK_ACTIONS,
    update_by_filter="native",
    delete_by_filter="native",
    deviations=(
        Deviation(
            code="int64-range",
            description=(
                "integers outside the signed 64-bit range are rejected at upsert; a filter integer beyond it "
                "that is not exactly a float raises UnsupportedFilterError"
            ),
            reason=(
                "the derived filter fields hold integers as int64 terms; an integer beyond int64 has no "
                "exact term, and a float64 term would equal its neighbours"
            ),
        ),
        Deviation(
            code="long-string-range",
            description=(
                f"$gt/$gte/$lt/$lte with a string operand longer than {SHORT_STRING_BYTES - 4} UTF-8 bytes "
                "raise UnsupportedFilterError (shorter operands are exact against strings of any length)"
            ),
            reason=(
                f"strings longer than {SHORT_STRING_BYTES} bytes are indexed by a {SHORT_STRING_BYTES}-byte "
                "prefix and a hash (Lucene terms are at most 32,766 bytes); the prefix decides every range "
                "except one whose operand extends a stored prefix"
            ),
        ),
        Deviation(
            code="elemmatch-depth",
            description=(
                f"$elemMatch nested more than {ELEMENT_DEPTH} levels deep inside $elemMatch raises "
                "UnsupportedFilterError"
            ),
            reason=(
                f"array elements are indexed as nested documents {ELEMENT_DEPTH} levels deep (a mapping is "
                "finite); deeper elements are still stored and returned, but not as nested documents"
            ),
        ),
    ),
)
