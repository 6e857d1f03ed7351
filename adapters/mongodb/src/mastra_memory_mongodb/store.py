"""``MongoDBVector``: the ``MastraVector`` adapter on MongoDB (pymongo's native async API).

Layout. One collection per index, ``<prefix>vec_<index>``, of documents ``{_id: <id>, embedding:
<BSON vector, float32>, metadata: {...}}``, and a registry ``<prefix>vector_indexes`` holding each index's
dimension, metric and type, so ``list_indexes`` shows indexes only. Embeddings are BSON binary vectors
(subtype 9, float32): what Atlas Vector Search indexes, a quarter of the size of a list of doubles, and
read back into numpy without a per-value decode.

Search modes (``search_mode``):

* ``atlas`` -- ``$vectorSearch`` over the Atlas Vector Search index ``mastra_vector`` the adapter creates
  with the collection (``createSearchIndexes``; ``create_index`` and ``wait_for_indexing`` wait until it
  is queryable). Filter conditions on indexed filter fields (``thread_id``, ``resource_id``,
  ``filter_fields``) that Atlas evaluates as docs/spec.md §2 does go into ``$vectorSearch.filter``
  (:func:`.translate.atlas_prefilter`); any other filter runs the exact mode instead -- a filter is never
  applied after the ANN stage. ``numCandidates`` is ``top_k * num_candidates_factor`` (a query may pass
  ``num_candidates``), ``exact=True`` asks Atlas for exact nearest neighbours. Scores are converted
  back to the portable ones (docs/spec.md §3.4): Atlas returns ``(1 + cos) / 2`` and ``(1 + dot) / 2``,
  and ``1 / (1 + d)`` for Euclidean, which is already portable. An ANN answer shorter than ``top_k`` is
  redone exactly.
* ``exact`` -- any MongoDB without Atlas Search, and FerretDB: the translated filter runs on the server,
  every matching document's embedding is streamed and scored in numpy
  (:func:`mastra_memory.scores.exact_scores`, float64 over the stored float32), and the best ``top_k``
  by ``(-score, id)`` are fetched with their metadata. Exact by construction.
* ``auto`` -- ``atlas`` when the server answers ``listSearchIndexes``, else ``exact``.

Metadata indexes: ``create_index(metadata_indexes=[...])`` builds an ascending index on
``metadata.<key>`` for each key, which the exact mode's ``$match`` uses.

Writes: each batch of 500 is one unordered ``insert_many``; the ids that exist already (duplicate key
errors) are then replaced with an ordered ``bulk_write`` of ``ReplaceOne(upsert=True)``. Both are
idempotent, so a retried or interrupted upsert converges to the same records (a multi-document write is
atomic per document only). Inserting first matters on FerretDB, where an upsert costs ~100 times an
insert.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from bson.binary import Binary, BinaryVectorDtype
from mastra_memory.capabilities import AdapterCapabilities, Metric
from mastra_memory.errors import CapabilityError, MastraMemoryError, ValidationError, VectorStoreError
from mastra_memory.filters import matches, parse
from mastra_memory.filters.ast import And, Comparison, ElemMatch, Nor, Not, Or, Regex
from mastra_memory.scores import exact_scores
from mastra_memory.vector import IndexConfig, IndexStats, MastraVector, QueryResult
from pymongo import ASCENDING, ReplaceOne
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import BulkWriteError, DuplicateKeyError, OperationFailure, PyMongoError
from pymongo.operations import SearchIndexModel

from .capabilities import UPSERT_BATCH, capabilities_for
from .connection import Connection, is_transient
from .settings import MongoDBSettings
from .translate import (
    METADATA,
    MongoFilter,
    MongoFilterTranslator,
    atlas_prefilter,
    ferretdb_key,
    from_ferretdb,
    plain,
    to_ferretdb,
    translate,
)

__all__ = ["SEARCH_INDEX", "MongoDBVector", "portable_score", "vector_search_pipeline"]

logger = logging.getLogger("mastra_memory_mongodb.store")

Document = dict[str, Any]
#: The name of the Atlas Vector Search index of each collection.
SEARCH_INDEX: Final = "mastra_vector"
EMBEDDING: Final = "embedding"
#: Metadata paths every Atlas index declares as filter fields (what Memory's recall filters on).
DEFAULT_FILTER_FIELDS: Final = ("thread_id", "resource_id")
_SIMILARITY: Final[Mapping[Metric, str]] = {
    "cosine": "cosine",
    "euclidean": "euclidean",
    "dotproduct": "dotProduct",
}
_QUERY_OPTIONS: Final = frozenset({"exact", "num_candidates", "numCandidates"})
_FLOAT32: Final = np.dtype("<f4")
_FLOAT32_MAX: Final = float(np.finfo(np.float32).max)
_INT64: Final = (-(2**63), 2**63 - 1)
_ID_BATCH: Final = 1000
_STREAM_BATCH: Final = 2000
_POLL: Final = 1.0
_NODE_TYPES: Final = (Comparison, Regex, ElemMatch, And, Or, Nor, Not)


@dataclass(frozen=True, slots=True)
class _Index:
    """A registry entry."""

    name: str
    dimension: int
    metric: Metric
    kind: str  # hnsw (an Atlas index in atlas mode) | flat (exact search)


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


def _vector_bytes(vector: npt.NDArray[np.float32]) -> Binary:
    return Binary.from_vector(vector.astype(_FLOAT32).tolist(), BinaryVectorDtype.FLOAT32)


def _read_vector(value: Any) -> npt.NDArray[np.float32]:
    if isinstance(value, (bytes, bytearray)):
        # BSON vector: dtype byte, padding byte, little-endian float32 values.
        return np.frombuffer(bytes(value), dtype=_FLOAT32, offset=2)
    return np.asarray(value, dtype=_FLOAT32)


def _metadata_problem(value: Any, path: str) -> str | None:
    """Why BSON/MongoDB cannot hold ``value`` as this adapter stores metadata (None if it can)."""
    if isinstance(value, str):
        if "\x00" in value:
            return f"{path}: strings containing U+0000 are not stored (deviation nul-character-rejected)"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return f"{path}: strings with unpaired surrogates are not valid UTF-8 and cannot be stored"
        return None
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return None
    if isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:
            return f"{path}: the integer {value} is outside the signed 64-bit range BSON holds (int64-range)"
        return None
    if isinstance(value, list):
        for i, item in enumerate(value):
            problem = _metadata_problem(item, f"{path}[{i}]")
            if problem:
                return problem
        return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            if "\x00" in key:
                return f"{child} (key): keys containing U+0000 cannot be BSON field names"
            if key.startswith("$") or "." in key:
                return (
                    f"{child} (key): MongoDB field names must not start with '$' or contain '.' "
                    "(deviation mongodb-field-names)"
                )
            problem = _metadata_problem(key, f"{child} (key)") or _metadata_problem(item, child)
            if problem:
                return problem
    return None


class MongoDBVector(MastraVector):
    """The MongoDB vector store: exact search anywhere, ``$vectorSearch`` on Atlas.

    Args:
        settings: :class:`MongoDBSettings`, a connection string, or ``None`` to read the environment
            (``MASTRA_MEMORY_MONGODB_URL``, ...).

    Query options: ``exact=True`` (Atlas: exact nearest neighbours; exact mode: always exact) and
    ``num_candidates`` (Atlas ``numCandidates``).
    """

    capabilities = capabilities_for("mongodb", "auto")
    translator = MongoFilterTranslator
    query_options = _QUERY_OPTIONS

    def __init__(self, settings: MongoDBSettings | str | None = None) -> None:
        super().__init__()
        if isinstance(settings, str):
            settings = MongoDBSettings(url=settings)
        self.settings = settings if settings is not None else MongoDBSettings()
        if self.settings.dialect == "ferretdb" and self.settings.search_mode == "atlas":
            raise CapabilityError(
                "FerretDB has no Atlas Vector Search ($vectorSearch); use search_mode='exact' or 'auto'"
            )
        manifest: AdapterCapabilities = capabilities_for(self.settings.dialect, self.settings.search_mode)
        # The manifest of this store (the dialect decides which operators run on the server).
        vars(self)["capabilities"] = manifest
        self._conn = Connection(self.settings)
        self._prefix = self.settings.collection_prefix
        self._mode: str | None = "exact" if self.settings.dialect == "ferretdb" else None
        self._ready = False
        self._ferretdb = self.settings.dialect == "ferretdb"

    # --- plumbing -----------------------------------------------------------------------------------

    async def _db(self) -> AsyncDatabase[Document]:
        db = await self._conn.database()
        if not self._ready:
            await db[self._registry_name].create_index([("created_at", ASCENDING)])
            self._ready = True
        return db

    @property
    def _registry_name(self) -> str:
        return f"{self._prefix}vector_indexes"

    def _collection_name(self, name: str) -> str:
        return f"{self._prefix}vec_{name}"

    async def _collection(self, name: str) -> AsyncCollection[Document]:
        return (await self._db())[self._collection_name(name)]

    async def _search_mode(self) -> str:
        """``atlas`` or ``exact``: the setting, or for ``auto`` whether the server has Atlas Search."""
        if self._mode is None:
            if self.settings.search_mode != "auto":
                self._mode = self.settings.search_mode
            else:
                registry = (await self._db())[self._registry_name]
                try:
                    await (await registry.list_search_indexes()).to_list()
                    self._mode = "atlas"
                except OperationFailure as exc:
                    logger.info("no Atlas Search on %s (%s): exact search", self._conn.where, exc)
                    self._mode = "exact"
        return self._mode

    def _wrap(self, operation: str, exc: PyMongoError) -> MastraMemoryError:
        if is_transient(exc):
            return self._error(
                VectorStoreError,
                operation,
                "CONNECTION_FAILED",
                f"MongoDB at {self._conn.where} did not answer in time or closed the connection: {exc}; "
                "check that the server is running, the connection string is right, and the timeouts "
                "(server_selection_timeout_ms, timeout_ms) fit",
            )
        return self._error(
            VectorStoreError, operation, "FAILED", f"mongodb {operation.lower()} failed: {exc}"
        )

    def _stored(self, metadata: Mapping[str, Any]) -> Any:
        """Metadata as this server stores it (FerretDB: inner lists wrapped, see :mod:`.translate`)."""
        return to_ferretdb(dict(metadata)) if self._ferretdb else dict(metadata)

    def _read(self, stored: Any) -> dict[str, Any]:
        if not stored:
            return {}
        return from_ferretdb(stored) if self._ferretdb else plain(stored)  # type: ignore[no-any-return]

    def _matches(self, flt: MongoFilter, stored: Any) -> bool:
        return flt.residual is None or matches(flt.residual, self._read(stored))

    async def _index(self, operation: str, name: str) -> _Index:
        entry = await (await self._db())[self._registry_name].find_one({"_id": name})
        if entry is None:
            raise self._not_found(operation, name)
        return _Index(name, int(entry["dimension"]), entry["metric"], str(entry.get("type", "flat")))

    def translate_filter(self, flt: Any) -> Any:
        """Validate ``flt`` (FilterError), check it against this store's manifest (UnsupportedFilterError)
        and translate it into a :class:`~.translate.MongoFilter`; ``None`` matches everything."""
        node = flt if isinstance(flt, _NODE_TYPES) else parse(flt)
        if node is None:
            return None
        return translate(node, self.settings.dialect)

    async def close(self) -> None:
        """Close the client; the store reconnects on next use."""
        await self._conn.close()
        self._ready = False

    # --- hooks: indexes ---------------------------------------------------------------------------

    async def _create_index(
        self,
        name: str,
        dimension: int,
        metric: Metric,
        config: IndexConfig,
        metadata_indexes: list[str],
        options: dict[str, Any],
    ) -> None:
        op = "CREATE_INDEX"
        if options:
            raise self._error(
                ValidationError, op, "INVALID_ARGS", f"unknown create_index options {sorted(options)}"
            )
        try:
            db = await self._db()
            mode = await self._search_mode()
            kind: str = config.type or ("hnsw" if mode == "atlas" else "flat")
            registry = db[self._registry_name]
            entry: Document = {
                "_id": name,
                "dimension": dimension,
                "metric": metric,
                "type": kind,
                "created_at": time.time(),
            }
            try:
                await registry.insert_one(entry)
                existing = None
            except DuplicateKeyError:
                existing = await registry.find_one({"_id": name})
            if existing is not None:
                self._check_dimension(op, name, int(existing["dimension"]), dimension)
                if existing["metric"] != metric:
                    logger.warning(
                        "index %r exists with metric %s; keeping it (asked for %s)",
                        name, existing["metric"], metric,
                    )  # fmt: skip
                kind, metric = str(existing.get("type", "flat")), existing["metric"]
            collection = db[self._collection_name(name)]
            for key in metadata_indexes:
                segments = key.split(".")
                if not any(s.startswith("$") or not s for s in segments):
                    if self._ferretdb:
                        segments = [ferretdb_key(s) for s in segments]
                    await collection.create_index([(".".join([METADATA, *segments]), ASCENDING)])
            if mode == "atlas" and kind != "flat":
                await self._ensure_search_index(collection, dimension, metric, config)
        except PyMongoError as exc:
            raise self._wrap(op, exc) from exc

    def _search_definition(self, dimension: int, metric: Metric, config: IndexConfig) -> Document:
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
            for path in dict.fromkeys((*DEFAULT_FILTER_FIELDS, *self.settings.filter_fields))
        ]
        return {"fields": [vector, *filters]}

    async def _ensure_search_index(
        self, collection: AsyncCollection[Document], dimension: int, metric: Metric, config: IndexConfig
    ) -> None:
        existing = await (await collection.list_search_indexes(SEARCH_INDEX)).to_list()
        if not existing:
            if not await collection.find_one({}, {"_id": 1}):
                await collection.database.create_collection(collection.name, check_exists=False)
            model = SearchIndexModel(
                definition=self._search_definition(dimension, metric, config),
                name=SEARCH_INDEX,
                type="vectorSearch",
            )
            await collection.create_search_index(model)
        await self._wait_queryable(collection)

    async def _wait_queryable(self, collection: AsyncCollection[Document]) -> None:
        deadline = time.monotonic() + self.settings.search_index_timeout
        while True:
            found = await (await collection.list_search_indexes(SEARCH_INDEX)).to_list()
            if found and found[0].get("queryable") and found[0].get("status", "READY") == "READY":
                return
            if time.monotonic() > deadline:
                status = found[0].get("status") if found else "missing"
                raise self._error(
                    VectorStoreError,
                    "CREATE_INDEX",
                    "TIMEOUT",
                    f"the Atlas search index {SEARCH_INDEX} of {collection.name} is not queryable after "
                    f"{self.settings.search_index_timeout:.0f} s (status {status}); "
                    "raise search_index_timeout or check the cluster's search nodes",
                )
            await asyncio.sleep(_POLL)

    async def wait_for_indexing(self, index_name: str) -> None:
        """Atlas mode: wait until the search index is queryable and sees every document (exact
        nearest-neighbour count); the exact mode returns at once."""
        op = "WAIT_FOR_INDEXING"
        name = self._native_name(op, index_name)
        try:
            if await self._search_mode() != "atlas":
                return
            index = await self._index(op, name)
            if index.kind == "flat":
                return
            collection = await self._collection(name)
            await self._wait_queryable(collection)
            deadline = time.monotonic() + self.settings.search_index_timeout
            while True:
                count = await collection.count_documents({})
                if count == 0 or count > self.settings.max_num_candidates:
                    return
                probe = vector_search_pipeline(
                    [1.0] * index.dimension, count, prefilter=None, num_candidates=None, exact=True,
                    include_vector=False,
                )  # fmt: skip
                seen = len(await (await collection.aggregate(probe)).to_list())
                if seen >= count or time.monotonic() > deadline:
                    return
                await asyncio.sleep(_POLL)
        except PyMongoError as exc:
            raise self._wrap(op, exc) from exc

    async def _list_indexes(self) -> list[str]:
        try:
            registry = (await self._db())[self._registry_name]
            return sorted([str(d["_id"]) async for d in registry.find({}, {"_id": 1})])
        except PyMongoError as exc:
            raise self._wrap("LIST_INDEXES", exc) from exc

    async def _describe_index(self, name: str) -> IndexStats:
        op = "DESCRIBE_INDEX"
        try:
            index = await self._index(op, name)
            count = await (await self._collection(name)).count_documents({})
        except PyMongoError as exc:
            raise self._wrap(op, exc) from exc
        return IndexStats(dimension=index.dimension, count=count, metric=index.metric)

    async def _delete_index(self, name: str) -> None:
        try:
            db = await self._db()
            await db[self._registry_name].delete_one({"_id": name})
            await db.drop_collection(self._collection_name(name))
        except PyMongoError as exc:
            raise self._wrap("DELETE_INDEX", exc) from exc

    # --- hooks: writes -----------------------------------------------------------------------------

    def _float32(self, operation: str, vectors: npt.NDArray[np.float64]) -> npt.NDArray[np.float32]:
        bad = np.argwhere(np.abs(vectors) > _FLOAT32_MAX)
        if bad.size:
            position = [int(x) for x in bad[0]]
            i, j = (position[0], position[1]) if len(position) == 2 else (0, position[0])
            value = vectors[i, j] if vectors.ndim == 2 else vectors[j]
            raise self._error(
                ValidationError, operation, "INVALID_VECTOR",
                f"vector [{i}][{j}] = {value!r} is outside the float32 range MongoDB vectors store",
            )  # fmt: skip
        return vectors.astype(_FLOAT32)

    def _check_metadata(self, operation: str, metadata: Mapping[str, Any], where: str) -> None:
        problem = _metadata_problem(dict(metadata), "")
        if problem:
            raise self._error(ValidationError, operation, "INVALID_METADATA", f"{where}: {problem}")

    async def _upsert(
        self, name: str, ids: list[str], vectors: npt.NDArray[np.float64], metadata: list[dict[str, Any]]
    ) -> None:
        op = "UPSERT"
        as_float32 = self._float32(op, vectors)
        for i, rid in enumerate(ids):
            if _metadata_problem(rid, f"ids[{i}]"):
                raise self._error(
                    ValidationError, op, "INVALID_ID", f"ids[{i}] = {rid!r} cannot be stored as a BSON string"
                )
        for i, meta in enumerate(metadata):
            self._check_metadata(op, meta, f"metadata[{i}]")
        try:
            index = await self._index(op, name)
            self._check_dimension(op, name, index.dimension, vectors.shape[1])
            collection = await self._collection(name)
            for start in range(0, len(ids), UPSERT_BATCH):
                batch = range(start, min(start + UPSERT_BATCH, len(ids)))
                docs = {
                    ids[i]: {
                        "_id": ids[i],
                        EMBEDDING: _vector_bytes(as_float32[i]),
                        METADATA: self._stored(metadata[i]),
                    }
                    for i in batch
                }
                await self._write_batch(collection, docs)
        except PyMongoError as exc:
            raise self._wrap(op, exc) from exc

    @staticmethod
    async def _write_batch(collection: AsyncCollection[Document], docs: dict[str, Document]) -> None:
        """Insert the documents (one unordered ``insert_many``: far cheaper than upserts on FerretDB, and no
        read first) and replace those whose id exists already (duplicate key errors)."""
        fresh = list(docs.values())
        existing: list[str] = []
        try:
            await collection.insert_many(fresh, ordered=False)
        except BulkWriteError as exc:
            errors = exc.details.get("writeErrors", [])
            if any(e.get("code") != 11000 for e in errors):
                raise
            existing = [fresh[e["index"]]["_id"] for e in errors]
        if existing:
            replace = [
                ReplaceOne({"_id": key}, {k: v for k, v in docs[key].items() if k != "_id"}, upsert=True)
                for key in existing
            ]
            await collection.bulk_write(replace, ordered=True)

    async def _matching_ids(self, collection: AsyncCollection[Document], flt: MongoFilter) -> list[Any]:
        """The ids of the documents ``flt`` matches (its residual decided here)."""
        projection = {"_id": 1, METADATA: 1} if flt.residual is not None else {"_id": 1}
        ids: list[Any] = []
        async for doc in collection.find(flt.mql, projection, batch_size=_STREAM_BATCH):
            if self._matches(flt, doc.get(METADATA)):
                ids.append(doc["_id"])
        return ids

    async def _update_by_id(
        self, name: str, id: str, vector: npt.NDArray[np.float64] | None, metadata: dict[str, Any] | None
    ) -> None:
        await self._update(name, {"_id": id}, vector, metadata)

    async def _update_by_filter(
        self,
        name: str,
        native_filter: Any,
        vector: npt.NDArray[np.float64] | None,
        metadata: dict[str, Any] | None,
    ) -> None:
        await self._update(name, self._filter(native_filter), vector, metadata)

    async def _update(
        self,
        name: str,
        where: Document | MongoFilter,
        vector: npt.NDArray[np.float64] | None,
        metadata: dict[str, Any] | None,
    ) -> None:
        op = "UPDATE_VECTOR"
        changes: Document = {}
        if vector is not None:
            changes[EMBEDDING] = _vector_bytes(self._float32(op, vector))
        if metadata is not None:
            self._check_metadata(op, metadata, "metadata")
            changes[METADATA] = self._stored(metadata)
        if not changes:
            return
        try:
            index = await self._index(op, name)
            if vector is not None:
                self._check_dimension(op, name, index.dimension, vector.shape[0])
            collection = await self._collection(name)
            if isinstance(where, MongoFilter) and where.residual is not None:
                ids = await self._matching_ids(collection, where)
                for start in range(0, len(ids), _ID_BATCH):
                    chunk = ids[start : start + _ID_BATCH]
                    await collection.update_many({"_id": {"$in": chunk}}, {"$set": changes})
            else:
                query = where.mql if isinstance(where, MongoFilter) else where
                await collection.update_many(query, {"$set": changes})
        except PyMongoError as exc:
            raise self._wrap(op, exc) from exc

    async def _delete_by_ids(self, name: str, ids: list[str]) -> None:
        op = "DELETE_VECTORS"
        try:
            await self._index(op, name)
            collection = await self._collection(name)
            for start in range(0, len(ids), _ID_BATCH):
                await collection.delete_many({"_id": {"$in": ids[start : start + _ID_BATCH]}})
        except PyMongoError as exc:
            raise self._wrap(op, exc) from exc

    async def _delete_by_filter(self, name: str, native_filter: Any) -> None:
        op = "DELETE_VECTORS"
        flt = self._filter(native_filter)
        try:
            await self._index(op, name)
            collection = await self._collection(name)
            if flt.residual is None:
                await collection.delete_many(flt.mql)
                return
            ids = await self._matching_ids(collection, flt)
            for start in range(0, len(ids), _ID_BATCH):
                await collection.delete_many({"_id": {"$in": ids[start : start + _ID_BATCH]}})
        except PyMongoError as exc:
            raise self._wrap(op, exc) from exc

    # --- hooks: query -------------------------------------------------------------------------------

    def _num_candidates(self, top_k: int, options: Mapping[str, Any]) -> int:
        given = options.get("num_candidates", options.get("numCandidates"))
        if given is not None:
            if isinstance(given, bool) or not isinstance(given, int) or given < 1:
                raise self._error(
                    ValidationError, "QUERY", "INVALID_ARGS",
                    f"num_candidates must be a positive integer, got {given!r}",
                )  # fmt: skip
            return max(top_k, min(given, self.settings.max_num_candidates))
        wanted = max(100, top_k * self.settings.num_candidates_factor)
        return max(top_k, min(wanted, self.settings.max_num_candidates))

    async def _query(
        self,
        name: str,
        vector: npt.NDArray[np.float64] | None,
        top_k: int,
        native_filter: Any,
        include_vector: bool,
        options: dict[str, Any],
    ) -> list[QueryResult]:
        op = "QUERY"
        flt = self._filter(native_filter) if native_filter is not None else None
        query = None if vector is None else self._float32(op, vector)
        try:
            index = await self._index(op, name)
            collection = await self._collection(name)
            if query is None:
                return await self._list_records(collection, top_k, flt, include_vector)
            self._check_dimension(op, name, index.dimension, len(query))
            if await self._search_mode() == "atlas" and index.kind != "flat":
                prefilter = None if flt is None else atlas_prefilter(flt.node, self._filter_fields)
                if (flt is None or prefilter is not None) and top_k <= self.settings.max_num_candidates:
                    pipeline = vector_search_pipeline(
                        query.tolist(),
                        top_k,
                        prefilter=prefilter,
                        num_candidates=self._num_candidates(top_k, options),
                        exact=bool(options.get("exact")),
                        include_vector=include_vector,
                    )
                    hits = await self._atlas_search(collection, index.metric, pipeline)
                    if len(hits) >= top_k:
                        return hits
            return await self._exact_search(collection, index, query, top_k, flt, include_vector)
        except PyMongoError as exc:
            raise self._wrap(op, exc) from exc

    @property
    def _filter_fields(self) -> frozenset[str]:
        return frozenset((*DEFAULT_FILTER_FIELDS, *self.settings.filter_fields))

    async def _atlas_search(
        self, collection: AsyncCollection[Document], metric: Metric, pipeline: list[Document]
    ) -> list[QueryResult]:
        rows = await (await collection.aggregate(pipeline)).to_list()
        return [
            QueryResult(
                id=row["_id"],
                score=portable_score(metric, float(row["score"])),
                metadata=self._read(row.get(METADATA)),
                vector=_read_vector(row[EMBEDDING]).tolist() if EMBEDDING in row else None,
            )
            for row in rows
        ]

    async def _list_records(
        self,
        collection: AsyncCollection[Document],
        top_k: int,
        flt: MongoFilter | None,
        include_vector: bool,
    ) -> list[QueryResult]:
        """Metadata-only query: the first ``top_k`` matches in id order, score 0.0."""
        projection: Document = {METADATA: 1, EMBEDDING: 1} if include_vector else {METADATA: 1}
        cursor = collection.find({} if flt is None else flt.mql, projection).sort("_id", ASCENDING)
        if flt is None or flt.residual is None:
            cursor = cursor.limit(top_k)
        out: list[QueryResult] = []
        async for doc in cursor:
            if flt is not None and not self._matches(flt, doc.get(METADATA)):
                continue
            out.append(
                QueryResult(
                    id=doc["_id"],
                    score=0.0,
                    metadata=self._read(doc.get(METADATA)),
                    vector=_read_vector(doc[EMBEDDING]).tolist() if include_vector else None,
                )
            )
            if len(out) >= top_k:
                break
        return out

    async def _exact_search(
        self,
        collection: AsyncCollection[Document],
        index: _Index,
        query: npt.NDArray[np.float32],
        top_k: int,
        flt: MongoFilter | None,
        include_vector: bool,
    ) -> list[QueryResult]:
        """Score every matching document (the filter's residual decided here) and keep the best."""
        residual = None if flt is None else flt.residual
        projection: Document = {EMBEDDING: 1, METADATA: 1} if residual is not None else {EMBEDDING: 1}
        ids: list[Any] = []
        metadata: list[Any] = []
        parts: list[npt.NDArray[np.float32]] = []
        batch: list[bytes] = []
        dim = index.dimension
        async for doc in collection.find(
            {} if flt is None else flt.mql, projection, batch_size=_STREAM_BATCH
        ):
            if residual is not None:
                meta = self._read(doc.get(METADATA))
                if not matches(residual, meta):
                    continue
                metadata.append(meta)
            ids.append(doc["_id"])
            raw = doc[EMBEDDING]
            batch.append(
                bytes(raw)[2:] if isinstance(raw, (bytes, bytearray)) else _read_vector(raw).tobytes()
            )
            if len(batch) >= _STREAM_BATCH:
                parts.append(np.frombuffer(b"".join(batch), dtype=_FLOAT32).reshape(-1, dim))
                batch = []
        if batch:
            parts.append(np.frombuffer(b"".join(batch), dtype=_FLOAT32).reshape(-1, dim))
        if not ids:
            return []
        matrix = np.concatenate(parts) if len(parts) > 1 else parts[0]
        scores = exact_scores(matrix, query.astype(np.float64), index.metric)
        chosen = _best(scores, ids, top_k)
        wanted = [ids[i] for i in chosen]
        fetch: Document = {METADATA: 1, EMBEDDING: 1} if include_vector else {METADATA: 1}
        if residual is None or include_vector:
            found: dict[Any, dict[str, Any]] = {
                d["_id"]: self._read(d.get(METADATA))
                async for d in collection.find({"_id": {"$in": wanted}}, fetch)
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
                    id=ids[i],
                    score=float(scores[i]),
                    metadata=stored,
                    vector=matrix[i].tolist() if include_vector else None,
                )
            )
        return out

    def _filter(self, native_filter: Any) -> MongoFilter:
        if not isinstance(native_filter, MongoFilter):
            raise MastraMemoryError(
                f"mongodb expected a translated MongoFilter, got {type(native_filter).__name__}"
            )
        return native_filter


def _best(scores: npt.NDArray[np.float64], ids: Sequence[Any], top_k: int) -> list[int]:
    """Positions of the ``top_k`` best rows by ``(-score, id)`` (ties broken by id, as docs/spec.md §3.1)."""
    n = len(ids)
    if n > top_k:
        part = np.argpartition(-scores, top_k - 1)[:top_k]
        threshold = float(scores[part].min())
        candidates = np.flatnonzero(scores >= threshold)
    else:
        candidates = np.arange(n)
    ordered = sorted(candidates.tolist(), key=lambda i: (-float(scores[i]), ids[i]))
    return [int(i) for i in ordered[:top_k]]
