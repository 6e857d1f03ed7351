"""The capability manifest of the OpenSearch adapter (docs/spec.md §2.8, §2.9)."""

from __future__ import annotations

from typing import Final

from mastra_memory.capabilities import Deviation, int64_range
from mastra_memory.filters import facts

from .layout import ELEMENT_DEPTH, SHORT_STRING_BYTES

__all__ = ["BULK_ACTIONS", "MAX_DIMENSION", "MAX_K", "OPENSEARCH_CAPABILITIES"]

#: Actions per bulk request (docs/spec.md §3.8: at most 500); requests are also cut by size.
BULK_ACTIONS: Final = 500
#: The k-NN plugin's largest ``knn_vector`` dimension on the Lucene engine.
MAX_DIMENSION: Final = 16_000
#: The k-NN plugin's largest ``k`` (docs/spec.md §3.8).
MAX_K: Final = 10_000

# Operators and implicit array traversal come with the facts of the layout (mastra_memory.filters.facts);
# every metric.
OPENSEARCH_CAPABILITIES: Final = facts.manifest(
    name="opensearch",
    version="0.1.0",
    index_types=frozenset({"hnsw"}),
    max_dimension=MAX_DIMENSION,
    max_top_k=MAX_K,
    max_upsert_batch=BULK_ACTIONS,
    # A filtered search sorted on the record_id keyword: exact, in code point order.
    metadata_only_query=True,
    # A delete_by_query and a bulk request: OpenSearch has no transaction (docs/spec.md §3.1).
    upsert_delete_filter="sequential",
    # BM25 over a sibling index with the same filter fields (lexical.py): hybrid recall.
    lexical_search=True,
    deviations=(
        int64_range(
            "the derived filter fields hold integers as int64 terms; an integer beyond int64 has no "
            "exact term, and a float64 term would equal its neighbours"
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
