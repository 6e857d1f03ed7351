"""Atlas Vector Search: the search index of a collection, the ``$vectorSearch`` aggregation, its scores.

Each index's collection gets the Atlas Vector Search index :data:`SEARCH_INDEX` over the ``embedding``
field, with the metadata paths Memory's recall filters on (and ``filter_fields``) as filter fields
(:func:`search_definition`). A query is :func:`vector_search_pipeline`; its ``vectorSearchScore`` becomes
the portable score (:func:`portable_score`, docs/spec.md §3.4). Atlas builds and updates the index
asynchronously, so creating it waits until it is queryable (:func:`wait_queryable`) and
``wait_for_indexing`` until it sees every document (:func:`wait_indexed`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from mastra_memory.capabilities import Metric
from mastra_memory.vector.records import IndexConfig
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.operations import SearchIndexModel

from .translate import METADATA

__all__ = [
    "DEFAULT_FILTER_FIELDS",
    "EMBEDDING",
    "SEARCH_INDEX",
    "portable_score",
    "search_definition",
    "vector_search_pipeline",
    "wait_indexed",
    "wait_queryable",
]

Document = dict[str, Any]
#: The name of the Atlas Vector Search index of each collection.
SEARCH_INDEX: Final = "mastra_vector"
#: The document field holding the embedding (a BSON vector, float32).
EMBEDDING: Final = "embedding"
#: Metadata paths every Atlas index declares as filter fields (what Memory's recall filters on).
DEFAULT_FILTER_FIELDS: Final = ("thread_id", "resource_id")
_SIMILARITY: Final[Mapping[Metric, str]] = {
    "cosine": "cosine",
    "euclidean": "euclidean",
    "dotproduct": "dotProduct",
}
#: Seconds between two looks at a search index being built.
_POLL: Final = 1.0


def portable_score(metric: Metric, atlas_score: float) -> float:
    """The docs/spec.md §3.4 score of an Atlas ``vectorSearchScore``: cosine and dot product come as
    ``(1 + x) / 2``, Euclidean as ``1 / (1 + d)`` (already portable)."""
    if metric == "euclidean":
        return atlas_score
    value = 2.0 * atlas_score - 1.0
    return max(-1.0, min(1.0, value)) if metric == "cosine" else value


def vector_search_pipeline(
    query: Sequence[float],
    top_k: int,
    *,
    prefilter: Document | None,
    num_candidates: int | None,
    exact: bool,
    include_vector: bool,
) -> list[Document]:
    """The aggregation the atlas mode sends: ``$vectorSearch`` (pre-filter inside it) and a projection."""
    stage: Document = {
        "index": SEARCH_INDEX,
        "path": EMBEDDING,
        "queryVector": [float(x) for x in query],
        "limit": top_k,
    }
    if exact:
        stage["exact"] = True
    else:
        stage["numCandidates"] = num_candidates
    if prefilter is not None:
        stage["filter"] = prefilter
    projection: Document = {METADATA: 1, "score": {"$meta": "vectorSearchScore"}}
    if include_vector:
        projection[EMBEDDING] = 1
    return [{"$vectorSearch": stage}, {"$project": projection}]


def search_definition(
    dimension: int, metric: Metric, config: IndexConfig, filter_fields: Iterable[str]
) -> Document:
    """The definition of the search index: the vector field (HNSW options when given) and the filter
    fields (:data:`DEFAULT_FILTER_FIELDS`, then ``filter_fields``)."""
    vector: Document = {
        "type": "vector",
        "path": EMBEDDING,
        "numDimensions": dimension,
        "similarity": _SIMILARITY[metric],
    }
    if config.m is not None or config.ef_construction is not None:
        vector["indexingMethod"] = "hnsw"
        vector["hnswOptions"] = {
            k: v
            for k, v in (("maxEdges", config.m), ("numEdgeCandidates", config.ef_construction))
            if v is not None
        }
    filters = [
        {"type": "filter", "path": f"{METADATA}.{path}"}
        for path in dict.fromkeys((*DEFAULT_FILTER_FIELDS, *filter_fields))
    ]
    return {"fields": [vector, *filters]}


async def ensure_search_index(
    collection: AsyncCollection[Document],
    definition: Document,
    wait: float,
    timed_out: Callable[[str], Exception],
) -> None:
    """Create the search index of ``collection`` unless it exists, and wait until it is queryable."""
    existing = await (await collection.list_search_indexes(SEARCH_INDEX)).to_list()
    if not existing:
        if not await collection.find_one({}, {"_id": 1}):
            await collection.database.create_collection(collection.name, check_exists=False)
        model = SearchIndexModel(definition=definition, name=SEARCH_INDEX, type="vectorSearch")
        await collection.create_search_index(model)
    await wait_queryable(collection, wait, timed_out)


async def wait_queryable(
    collection: AsyncCollection[Document], wait: float, timed_out: Callable[[str], Exception]
) -> None:
    """Wait until the search index of ``collection`` is queryable; after ``wait`` seconds raise
    ``timed_out(its status)``."""
    deadline = time.monotonic() + wait
    while True:
        found = await (await collection.list_search_indexes(SEARCH_INDEX)).to_list()
        if found and found[0].get("queryable") and found[0].get("status", "READY") == "READY":
            return
        if time.monotonic() > deadline:
            raise timed_out(str(found[0].get("status")) if found else "missing")
        await asyncio.sleep(_POLL)


async def wait_indexed(collection: AsyncCollection[Document], dimension: int, most: int, wait: float) -> None:
    """Wait (``wait`` seconds at most) until an exact ``$vectorSearch`` sees every document of
    ``collection``; a collection of more than ``most`` documents is not counted."""
    deadline = time.monotonic() + wait
    while True:
        count = await collection.count_documents({})
        if count == 0 or count > most:
            return
        probe = vector_search_pipeline(
            [1.0] * dimension, count, prefilter=None, num_candidates=None, exact=True, include_vector=False
        )
        seen = len(await (await collection.aggregate(probe)).to_list())
        if seen >= count or time.monotonic() > deadline:
            return
        await asyncio.sleep(_POLL)
