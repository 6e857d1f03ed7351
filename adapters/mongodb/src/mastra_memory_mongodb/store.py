"""``MongoDBVector``: the ``MastraVector`` adapter on MongoDB (pymongo's native async API).

Layout. One collection per index, ``<prefix>vec_<index>``, of documents ``{_id: <id>, embedding:
<BSON vector, float32>, metadata: {...}}`` (an id holding U+0000 escaped by
:func:`mastra_memory.vector.escape_nul`, which keeps ids distinct and in order: docs/spec.md §3.5), and
a registry ``<prefix>vector_indexes`` holding each index's dimension, metric and type, so
``list_indexes`` shows indexes only. Embeddings are BSON binary vectors
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
  redone exactly. The index, the aggregation and the scores are :mod:`.atlas`'s.
* ``exact`` -- any MongoDB without Atlas Search, and FerretDB: the translated filter runs on the server,
  every matching document's embedding is streamed and scored in numpy
  (:func:`mastra_memory.scores.exact_scores`, float64 over the stored float32), and the best ``top_k``
  by ``(-score, id)`` are fetched with their metadata. Exact by construction (:mod:`.exact`).
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

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from mastra_memory.capabilities import AdapterCapabilities, Metric
from mastra_memory.errors import CapabilityError, MastraMemoryError, VectorStoreError
from mastra_memory.filters import matches, parse
from mastra_memory.filters.ast import And, Comparison, ElemMatch, Nor, Not, Or, Regex
from mastra_memory.filters.numbers import in_int64
from mastra_memory.vector.base import MastraVector, Matrix, Metadata, QueryRequest, Vector
from mastra_memory.vector.metadata import first_problem
from mastra_memory.vector.records import IndexConfig, IndexStats, QueryResult, escape_nul, unescape_nul
from pymongo import ASCENDING, ReplaceOne
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import BulkWriteError, DuplicateKeyError, OperationFailure, PyMongoError

from .atlas import (
    DEFAULT_FILTER_FIELDS,
    EMBEDDING,
    SEARCH_INDEX,
    ensure_search_index,
    portable_score,
    search_definition,
    vector_search_pipeline,
    wait_indexed,
    wait_queryable,
)
from .capabilities import UPSERT_BATCH, capabilities_for
from .connection import Connection, is_transient
from .exact import FLOAT32, STREAM_BATCH, exact_search, list_records, read_vector, vector_bytes
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
_QUERY_OPTIONS: Final = frozenset({"exact", "num_candidates", "numCandidates"})
_ID_BATCH: Final = 1000
_NODE_TYPES: Final = (Comparison, Regex, ElemMatch, And, Or, Nor, Not)


@dataclass(frozen=True, slots=True)
class _Index:
    """A registry entry."""

    name: str
    dimension: int
    metric: Metric
    kind: str  # hnsw (an Atlas index in atlas mode) | flat (exact search)


def _bson_problem(value: Any, path: str) -> str | None:
    """Why BSON/MongoDB cannot hold the scalar or key ``value`` as this adapter stores metadata (None if it
    can); ``path`` names it.

    With :func:`_field_name_problem`, the one definition of the adapter's metadata rules (U+0000, int64,
    field names); the shared validation runs them through :meth:`MongoDBVector._metadata_problem`, before
    any I/O."""
    if isinstance(value, str) and "\x00" in value:  # text that is not Unicode never gets here (§3.6)
        return f"{path}: strings containing U+0000 are not stored (deviation nul-character-rejected)"
    if isinstance(value, int) and not isinstance(value, bool) and not in_int64(value):
        return f"{path}: the integer {value} is outside the signed 64-bit range BSON holds (int64-range)"
    return None


def _field_name_problem(key: str, path: str) -> str | None:
    """Why ``key`` (at ``path``) cannot be a BSON field name as this adapter stores metadata, or None."""
    if "\x00" in key:
        return f"{path} (key): keys containing U+0000 cannot be BSON field names"
    if key.startswith("$") or "." in key:
        return (
            f"{path} (key): MongoDB field names must not start with '$' or contain '.' "
            "(declared deviation mongodb-field-names); rename the key"
        )
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
        self.settings = MongoDBSettings.given(settings)
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
                self._keep_existing(name, int(existing["dimension"]), existing["metric"], dimension, metric)
                kind, metric = str(existing.get("type", "flat")), existing["metric"]
            collection = db[self._collection_name(name)]
            for key in metadata_indexes:
                segments = key.split(".")
                if not any(s.startswith("$") or not s for s in segments):
                    if self._ferretdb:
                        segments = [ferretdb_key(s) for s in segments]
                    await collection.create_index([(".".join([METADATA, *segments]), ASCENDING)])
            if mode == "atlas" and kind != "flat":
                definition = self._search_definition(dimension, metric, config)
                wait = self.settings.search_index_timeout
                await ensure_search_index(collection, definition, wait, self._not_queryable(collection))
        except PyMongoError as exc:
            raise self._wrap("CREATE_INDEX", exc) from exc

    def _search_definition(self, dimension: int, metric: Metric, config: IndexConfig) -> Document:
        """The definition of this store's Atlas search index (:func:`.atlas.search_definition`)."""
        return search_definition(dimension, metric, config, self.settings.filter_fields)

    def _not_queryable(self, collection: AsyncCollection[Document]) -> Callable[[str], Exception]:
        """The error of a search index still not queryable after ``search_index_timeout``."""

        def timed_out(status: str) -> Exception:
            message = (
                f"the Atlas search index {SEARCH_INDEX} of {collection.name} is not queryable after "
                f"{self.settings.search_index_timeout:.0f} s (status {status}); "
                "raise search_index_timeout or check the cluster's search nodes"
            )
            return self._error(VectorStoreError, "CREATE_INDEX", "TIMEOUT", message)

        return timed_out

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
            wait = self.settings.search_index_timeout
            await wait_queryable(collection, wait, self._not_queryable(collection))
            await wait_indexed(collection, index.dimension, self.settings.max_num_candidates, wait)
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

    def _metadata_problem(self, metadata: dict[str, Any], record_id: str | None = None) -> str | None:
        """What BSON and MongoDB's field names cannot hold (declared deviations nul-character-rejected,
        int64-range, mongodb-field-names). Run by the shared validation before any I/O, so ``Memory``
        refuses a message whose vector records break these rules before it stores it (docs/spec.md §3.6,
        §5.4); the write hooks below rely on it."""
        return first_problem(metadata, _bson_problem, _field_name_problem)

    async def _upsert(self, name: str, ids: list[str], vectors: Matrix, metadata: list[Metadata]) -> None:
        op = "UPSERT"
        as_float32 = vectors.astype(FLOAT32)  # every value fits: the shared validation refused others (§3.3)
        # U+0000, which FerretDB's text cannot hold, is escaped (docs/spec.md §3.5); surrogates never get
        # here (§3.3).
        ids = [escape_nul(rid) for rid in ids]
        try:
            index = await self._index(op, name)
            self._check_dimension(op, name, index.dimension, vectors.shape[1])
            collection = await self._collection(name)
            for start in range(0, len(ids), UPSERT_BATCH):
                batch = range(start, min(start + UPSERT_BATCH, len(ids)))
                docs = {
                    ids[i]: {
                        "_id": ids[i],
                        EMBEDDING: vector_bytes(as_float32[i]),
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
        async for doc in collection.find(flt.mql, projection, batch_size=STREAM_BATCH):
            if self._matches(flt, doc.get(METADATA)):
                ids.append(doc["_id"])
        return ids

    async def _update_by_id(
        self, name: str, id: str, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        await self._update(name, {"_id": escape_nul(id)}, vector, metadata)

    async def _update_by_filter(
        self, name: str, native_filter: Any, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        await self._update(name, self._filter(native_filter), vector, metadata)

    async def _update(
        self, name: str, where: Document | MongoFilter, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        op = "UPDATE_VECTOR"
        changes: Document = {}
        if vector is not None:
            changes[EMBEDDING] = vector_bytes(vector.astype(FLOAT32))
        if metadata is not None:
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
        ids = [escape_nul(i) for i in ids]
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
            given = self._count_option("num_candidates", given)
            return max(top_k, min(given, self.settings.max_num_candidates))
        wanted = max(100, top_k * self.settings.num_candidates_factor)
        return max(top_k, min(wanted, self.settings.max_num_candidates))

    async def _query(self, request: QueryRequest) -> list[QueryResult]:
        op = "QUERY"
        flt = self._filter(request.native_filter) if request.native_filter is not None else None
        query = None if request.vector is None else request.vector.astype(FLOAT32)
        try:
            index = await self._index(op, request.name)
            collection = await self._collection(request.name)
            if query is None:
                return await list_records(collection, request.top_k, flt, request.include_vector, self._read)
            self._check_dimension(op, request.name, index.dimension, len(query))
            if await self._search_mode() == "atlas" and index.kind != "flat":
                prefilter = None if flt is None else atlas_prefilter(flt.node, self._filter_fields)
                if (
                    flt is None or prefilter is not None
                ) and request.top_k <= self.settings.max_num_candidates:
                    pipeline = vector_search_pipeline(
                        query.tolist(),
                        request.top_k,
                        prefilter=prefilter,
                        num_candidates=self._num_candidates(request.top_k, request.options),
                        exact=bool(request.options.get("exact")),
                        include_vector=request.include_vector,
                    )
                    hits = await self._atlas_search(collection, index.metric, pipeline)
                    if len(hits) >= request.top_k:
                        return hits
            return await exact_search(
                collection,
                index.dimension,
                index.metric,
                query,
                request.top_k,
                flt,
                request.include_vector,
                self._read,
            )
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
                id=unescape_nul(row["_id"]),
                score=portable_score(metric, float(row["score"])),
                metadata=self._read(row.get(METADATA)),
                vector=read_vector(row[EMBEDDING]).tolist() if EMBEDDING in row else None,
            )
            for row in rows
        ]

    def _filter(self, native_filter: Any) -> MongoFilter:
        return self._native(native_filter, MongoFilter)
