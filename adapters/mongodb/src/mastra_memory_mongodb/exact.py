"""The exact mode: every matching document's embedding is streamed and scored in numpy.

The translated filter runs on the server, its residual (what the server cannot decide exactly, see
:class:`.translate.MongoFilter`) here; scores are :func:`mastra_memory.scores.exact_scores` (float64 over
the stored float32), and the best ``top_k`` by ``(-score, id)`` are fetched with their metadata. Exact by
construction. A metadata-only query lists the matches in id order (:func:`list_records`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from bson.binary import Binary, BinaryVectorDtype
from mastra_memory.capabilities import Metric
from mastra_memory.filters import matches
from mastra_memory.scores import best, exact_scores
from mastra_memory.vector.records import QueryResult, unescape_nul
from pymongo import ASCENDING
from pymongo.asynchronous.collection import AsyncCollection

from .atlas import EMBEDDING
from .translate import METADATA, MongoFilter

__all__ = ["FLOAT32", "STREAM_BATCH", "exact_search", "list_records", "read_vector", "vector_bytes"]

Document = dict[str, Any]
FLOAT32: Final = np.dtype("<f4")
#: Documents per batch of a streamed scan.
STREAM_BATCH: Final = 2000


def vector_bytes(vector: npt.NDArray[np.float32]) -> Binary:
    return Binary.from_vector(vector.astype(FLOAT32).tolist(), BinaryVectorDtype.FLOAT32)


def read_vector(value: Any) -> npt.NDArray[np.float32]:
    if isinstance(value, (bytes, bytearray)):
        # BSON vector: dtype byte, padding byte, little-endian float32 values.
        return np.frombuffer(bytes(value), dtype=FLOAT32, offset=2)
    return np.asarray(value, dtype=FLOAT32)


async def list_records(
    collection: AsyncCollection[Document],
    top_k: int,
    flt: MongoFilter | None,
    include_vector: bool,
    read: Callable[[Any], dict[str, Any]],
) -> list[QueryResult]:
    """Metadata-only query: the first ``top_k`` matches in id order, score 0.0."""
    projection: Document = {METADATA: 1, EMBEDDING: 1} if include_vector else {METADATA: 1}
    cursor = collection.find({} if flt is None else flt.mql, projection).sort("_id", ASCENDING)
    if flt is None or flt.residual is None:
        cursor = cursor.limit(top_k)
    out: list[QueryResult] = []
    async for doc in cursor:
        if flt is not None and not (flt.residual is None or matches(flt.residual, read(doc.get(METADATA)))):
            continue
        out.append(
            QueryResult(
                id=unescape_nul(doc["_id"]),
                score=0.0,
                metadata=read(doc.get(METADATA)),
                vector=read_vector(doc[EMBEDDING]).tolist() if include_vector else None,
            )
        )
        if len(out) >= top_k:
            break
    return out


async def exact_search(
    collection: AsyncCollection[Document],
    dimension: int,
    metric: Metric,
    query: npt.NDArray[np.float32],
    top_k: int,
    flt: MongoFilter | None,
    include_vector: bool,
    read: Callable[[Any], dict[str, Any]],
) -> list[QueryResult]:
    """Score every matching document (the filter's residual decided here) and keep the best."""
    residual = None if flt is None else flt.residual
    projection: Document = {EMBEDDING: 1, METADATA: 1} if residual is not None else {EMBEDDING: 1}
    ids: list[Any] = []
    metadata: list[Any] = []
    parts: list[npt.NDArray[np.float32]] = []
    batch: list[bytes] = []
    dim = dimension
    async for doc in collection.find({} if flt is None else flt.mql, projection, batch_size=STREAM_BATCH):
        if residual is not None:
            meta = read(doc.get(METADATA))
            if not matches(residual, meta):
                continue
            metadata.append(meta)
        ids.append(doc["_id"])
        raw = doc[EMBEDDING]
        batch.append(bytes(raw)[2:] if isinstance(raw, (bytes, bytearray)) else read_vector(raw).tobytes())
        if len(batch) >= STREAM_BATCH:
            parts.append(np.frombuffer(b"".join(batch), dtype=FLOAT32).reshape(-1, dim))
            batch = []
    if batch:
        parts.append(np.frombuffer(b"".join(batch), dtype=FLOAT32).reshape(-1, dim))
    if not ids:
        return []
    matrix = np.concatenate(parts) if len(parts) > 1 else parts[0]
    scores = exact_scores(matrix, query.astype(np.float64), metric)
    chosen = best(scores, top_k, ids.__getitem__)
    wanted = [ids[i] for i in chosen]
    fetch: Document = {METADATA: 1, EMBEDDING: 1} if include_vector else {METADATA: 1}
    if residual is None or include_vector:
        found: dict[Any, dict[str, Any]] = {
            d["_id"]: read(d.get(METADATA)) async for d in collection.find({"_id": {"$in": wanted}}, fetch)
        }
    else:
        found = {ids[i]: metadata[i] or {} for i in chosen}
    out = []
    for i in chosen:
        stored = found.get(ids[i])
        if stored is None:
            continue  # deleted meanwhile
        out.append(
            QueryResult(
                id=unescape_nul(ids[i]),
                score=float(scores[i]),
                metadata=stored,
                vector=matrix[i].tolist() if include_vector else None,
            )
        )
    return out
