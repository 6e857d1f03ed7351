"""The capability manifest of the LanceDB adapter (docs/spec.md §2.9), declared once.

Read by the translator (``translate.py``), the store (``store.py``), the conformance kit and the docs.
``$regex``, ``$contains`` and ``$elemMatch`` are emulated: SQL narrows the rows to those where the field
is present and the reference evaluator decides among them (``translate.py``, docs/spec.md §2.7).
"""

from __future__ import annotations

from typing import Final

from mastra_memory.capabilities import AdapterCapabilities

from . import __version__

__all__ = ["LANCEDB_CAPABILITIES"]

_NATIVE: Final = frozenset(
    {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$all", "$size", "$exists"}
    | {"$and", "$or", "$not", "$nor"}
)
#: The manifest. ``$regex``, ``$contains`` and ``$elemMatch`` are emulated: SQL narrows the rows to those
#: where the field is present and the reference evaluator decides among them (translate.py).
LANCEDB_CAPABILITIES: Final = AdapterCapabilities(
    name="lancedb",
    version=__version__,
    native_operators=_NATIVE,
    emulated_operators=frozenset({"$regex", "$contains", "$elemMatch"}),
    implicit_array_traversal=True,
    metadata_only_query=True,
    index_types=frozenset({"hnsw", "ivfflat", "flat"}),
    max_upsert_batch=5000,
    # A delete and a merge_insert are two Lance commits (docs/spec.md §3.1).
    upsert_delete_filter="sequential",
    # Lance's native full-text search (BM25) over a sibling table, prefiltered exactly (lexical.py).
    lexical_search=True,
)
