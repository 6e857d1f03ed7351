"""``QdrantVector``: the ``MastraVector`` contract over Qdrant, in every mode (docs/spec.md §3).

The base class validates input and translates filters before any I/O; this class implements its hooks
over a :class:`~mastra_memory_qdrant.backend.QdrantBackend` — qdrant-client (a server, or the client's
local mode) or the embedded qdrant-edge engine:

* **Ids** (docs/spec.md §3.5): a canonical lowercase UUID of a version other than 5 is the point id as it
  is; any other id (a version-5 UUID too, so no id can name the point of the id it is the uuid5 of)
  becomes ``uuid5(MASTRA_ID_NAMESPACE, id)``. The original id is kept in the payload (``_mastra_id``)
  and every result carries it.
* **Payload**: the metadata verbatim, the original id, the norm of the written vector, and the filter
  document of :mod:`.layout` that makes every declared operator exact. Integers outside int64 are
  rejected (declared ``int64-range``), and so is metadata whose filter document would exceed 4 MiB
  (declared ``filter-document-size``: long keys deep in nested objects, or many levels of arrays of
  objects); both are checked with the shared validation, before any I/O
  (:meth:`QdrantVector._metadata_problem`).
* **Vectors** (docs/spec.md §3.2): Qdrant normalises the vectors of a cosine collection on write; a
  query with ``include_vector=True`` scales the unit vector back to the norm kept in the payload
  (``_mastra_norm``), so it returns what was written. Every vector write (upsert, ``update_vector``)
  records the norm; a metadata-only update carries the point's norm over into its new payload.
* **Writes**: upserts in batches of 256 points, each acknowledged once applied (``wait=True``); updates by
  filter collect the matching points with a scroll of 100 points per page, then replace their payloads
  and/or vectors page by page (docs/spec.md §3.8).
* **Indexes**: one collection (or shard) per index, HNSW with ``m``/``ef_construct`` from ``index_config``
  (``type="flat"`` builds no graph: exact search); keyword payload indexes on ``thread_id``,
  ``resource_id``, the keys of ``metadata_indexes`` and the facts list.
* **Metadata-only queries** (docs/spec.md §3.1): a scroll over the matching points, 100 per page, keeping
  the ``top_k`` smallest original ids (point ids are UUIDs, so the engine cannot order by the id); the
  vectors of those are read afterwards when ``include_vector`` asks for them. Exact, at the cost of
  reading every match.
* **Scores** (docs/spec.md §3.4): cosine and dot product as Qdrant returns them; a euclidean distance ``d``
  becomes ``1 / (1 + d)``. The HNSW search list ``ef`` is the query option ``ef``, else ``index_config.ef``,
  else ``min(1000, max(300, top_k, m·top_k))`` (``mastra_memory.vector.default_ef``).
"""

from __future__ import annotations

import heapq
import uuid
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar, Final

import numpy as np
from mastra_memory.capabilities import AdapterCapabilities, Metric
from mastra_memory.filters.numbers import integer_out_of_range
from mastra_memory.vector import DEFAULT_EF_CONSTRUCTION, DEFAULT_M
from mastra_memory.vector.base import MastraVector, Matrix, Metadata, QueryRequest, Vector
from mastra_memory.vector.records import IndexConfig, IndexStats, QueryResult, default_ef, native_record_id
from mastra_memory.vector.ties import past_ties

from .backend import Hit, IndexInfo, PointRecord, QdrantBackend, Search
from .capabilities import QDRANT_CAPABILITIES, UPSERT_BATCH
from .layout import (
    FACTS_KEY,
    FILTER_ROOT,
    MAX_FILTER_DOCUMENT_SIZE,
    RESERVED_ID,
    RESERVED_NORM,
    VALUES_PREFIX,
    build_payload,
    filter_document_size,
    metadata_of,
    path_code,
    restore_vector,
    vector_norm,
)
from .settings import QdrantSettings
from .translate import Condition, QdrantFilterTranslator, QFilter, as_filter

__all__ = ["DEFAULT_KEYWORD_KEYS", "QdrantVector", "point_id"]

#: Metadata keys that always get a keyword payload index (Memory filters on them).
DEFAULT_KEYWORD_KEYS: Final = ("thread_id", "resource_id")
#: Points per scroll page of an update by filter (docs/spec.md §3.8).
SCROLL_PAGE: Final = 100
_QUERY_OPTIONS: Final = frozenset({"ef", "exact"})


def _canonical_uuid(record_id: str) -> bool:
    """Whether Qdrant takes ``record_id`` as a point id as it is (a canonical lowercase UUID)."""
    try:
        return str(uuid.UUID(record_id)) == record_id
    except ValueError:
        return False


def point_id(record_id: str) -> str:
    """The Qdrant point id of a record id (docs/spec.md §3.5): a canonical lowercase UUID of a version
    other than 5 as is, anything else (a version-5 UUID too, which could be another id's point) as uuid5."""
    return native_record_id(record_id, _canonical_uuid)


def _batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _keyword_field(key: str) -> str:
    """The payload field holding the values of a metadata key (a dotted key is a nested path)."""
    return f"{FILTER_ROOT}.{VALUES_PREFIX}{path_code(tuple(key.split('.')))}"


class QdrantVector(MastraVector):
    """Qdrant vector store (see the module docstring). Build it with ``create_vector("qdrant", ...)``."""

    capabilities: ClassVar[AdapterCapabilities] = QDRANT_CAPABILITIES
    translator = QdrantFilterTranslator
    query_options = _QUERY_OPTIONS

    def __init__(self, settings: QdrantSettings, backend: QdrantBackend | None = None) -> None:
        super().__init__()
        self.settings = settings
        self._backend = backend if backend is not None else self._make_backend(settings)
        self._infos: dict[str, IndexInfo] = {}
        # index_config.ef of create_index, per index (a query option; Qdrant keeps no default for it).
        self._ef: dict[str, int] = {}

    @staticmethod
    def _make_backend(settings: QdrantSettings) -> QdrantBackend:
        if settings.mode == "edge":
            try:
                from .edge import EdgeBackend
            except ImportError as exc:
                raise ImportError(
                    'the qdrant edge mode needs qdrant-edge-py: pip install "mastra-memory-qdrant[edge]"'
                ) from exc
            return EdgeBackend(settings)
        from .client import ClientBackend

        return ClientBackend(settings)

    @property
    def mode(self) -> str:
        """``server``, ``memory``, ``local`` or ``edge`` (see :class:`QdrantSettings`)."""
        return self.settings.mode

    # --- helpers --------------------------------------------------------------------------------

    async def _info(self, operation: str, name: str) -> IndexInfo:
        info = self._infos.get(name)
        if info is None:
            info = await self._backend.info(name)
            if info is None:
                raise self._not_found(operation, name)
            self._infos[name] = info
        return info

    def _metadata_problem(self, metadata: dict[str, Any], record_id: str | None = None) -> str | None:
        """Qdrant's own limits, checked by the shared validation before any I/O (declared deviations
        ``int64-range`` and ``filter-document-size``)."""
        bad = integer_out_of_range(metadata)
        if bad is not None:
            return (
                f"the integer at {bad} is outside the signed 64-bit range, which Qdrant cannot store "
                "exactly (declared deviation int64-range); store it as a string or a float"
            )
        size = filter_document_size(metadata)
        if size > MAX_FILTER_DOCUMENT_SIZE:
            return (
                f"its Qdrant filter document would hold more than {MAX_FILTER_DOCUMENT_SIZE:,} characters "
                "(it repeats every key's full path, and each level of arrays of objects doubles what lies "
                "below it; declared deviation filter-document-size); use shorter keys, nest fewer arrays "
                "of objects inside one another, or store the deep part as a JSON string"
            )
        return None

    @staticmethod
    def _stored_norm(payload: dict[str, Any]) -> float | None:
        norm = payload.get(RESERVED_NORM)
        return float(norm) if isinstance(norm, (int, float)) and not isinstance(norm, bool) else None

    @staticmethod
    def _filter(native_filter: Any) -> QFilter | None:
        if native_filter is None:
            return None
        condition: Condition = native_filter
        return as_filter(condition)

    def _score(self, metric: Metric, native: float) -> float:
        if metric == "euclidean":
            return 1.0 / (1.0 + max(native, 0.0))
        return native

    # --- hooks ----------------------------------------------------------------------------------

    async def _create_index(
        self,
        name: str,
        dimension: int,
        metric: Metric,
        config: IndexConfig,
        metadata_indexes: list[str],
        options: dict[str, Any],
    ) -> None:
        if config.ef is not None:
            self._ef[name] = config.ef
        keys = list(dict.fromkeys([*DEFAULT_KEYWORD_KEYS, *metadata_indexes]))
        fields = [*(_keyword_field(k) for k in keys), f"{FILTER_ROOT}.{FACTS_KEY}"]
        existing = await self._backend.info(name)
        if existing is None:
            flat = config.type == "flat"
            wanted = IndexInfo(
                dimension=dimension,
                metric=metric,
                m=0 if flat else (config.m or DEFAULT_M),
                ef_construct=config.ef_construction or DEFAULT_EF_CONSTRUCTION,
            )
            if await self._backend.create(name, wanted, fields if self._backend.payload_indexes else []):
                self._infos[name] = wanted
                return
            existing = await self._backend.info(name)
            if existing is None:  # pragma: no cover - deleted while being created
                raise self._not_found("CREATE_INDEX", name)
        self._infos[name] = existing
        self._keep_existing(name, existing.dimension, existing.metric, dimension, metric)
        if self._backend.payload_indexes:
            await self._backend.ensure_keyword_fields(name, fields)

    async def _upsert(self, name: str, ids: list[str], vectors: Matrix, metadata: list[Metadata]) -> None:
        norms = np.linalg.norm(vectors, axis=1).tolist()
        points = [
            PointRecord(point_id(rid), vectors[i].tolist(), build_payload(rid, metadata[i], norms[i]))
            for i, rid in enumerate(ids)
        ]
        for batch in _batches(points, UPSERT_BATCH):
            await self._backend.upsert(name, list(batch))
        await self._backend.after_upsert(name)

    async def _query(self, request: QueryRequest) -> list[QueryResult]:
        info = await self._info("QUERY", request.name)
        if request.vector is None:
            return await self._listing(
                request.name, info, request.top_k, self._filter(request.native_filter), request.include_vector
            )
        ef = request.options.get("ef", self._ef.get(request.name))
        if ef is None:
            ef = default_ef(request.top_k, info.m or DEFAULT_M)
        ef = self._count_option("ef", ef)
        exact = bool(request.options.get("exact", False)) or info.m == 0
        flt = self._filter(request.native_filter)
        query = request.vector.tolist()
        # Ties at the cut-off are broken by id (docs/spec.md §3.1): past_ties asks for more while they tie.

        async def search(limit: int) -> list[Hit]:
            return await self._backend.search(
                Search(request.name, query, limit, flt, request.include_vector, max(ef, limit), exact)
            )

        hits = await past_ties(search, request.top_k, lambda hit: hit.score)
        # Qdrant returns a cosine collection's vectors normalised; the stored vector is what was written.
        cosine = info.metric == "cosine"
        return [
            QueryResult(
                id=str(hit.payload.get(RESERVED_ID, hit.point_id)),
                score=self._score(info.metric, hit.score),
                metadata=metadata_of(hit.payload),
                vector=restore_vector(hit.vector, hit.payload)
                if cosine and hit.vector is not None
                else hit.vector,
            )
            for hit in hits
        ]

    async def _listing(
        self, name: str, info: IndexInfo, top_k: int, flt: QFilter | None, include_vector: bool
    ) -> list[QueryResult]:
        """The first ``top_k`` matches in id order, score 0.0 (the metadata-only query, docs/spec.md §3.1)."""
        first: list[tuple[str, str, dict[str, Any]]] = []  # (original id, point id, payload), at most top_k
        offset: Any = None
        while True:
            page, offset = await self._backend.scroll(name, flt, SCROLL_PAGE, offset)
            rows = [(str(payload.get(RESERVED_ID, pid)), pid, payload) for pid, payload in page]
            first = heapq.nsmallest(top_k, first + rows, key=lambda row: row[0])
            if offset is None or not page:
                break
        vectors = await self._backend.vectors(name, [pid for _, pid, _ in first]) if include_vector else {}
        results = []
        for rid, pid, payload in first:
            found = vectors.get(pid)
            vector = None
            if found is not None:
                vector = restore_vector(found[0], found[1]) if info.metric == "cosine" else found[0]
            results.append(QueryResult(id=rid, score=0.0, metadata=metadata_of(payload), vector=vector))
        return results

    async def _list_indexes(self) -> list[str]:
        return await self._backend.names()

    async def _describe_index(self, name: str) -> IndexStats:
        info = await self._backend.info(name)
        if info is None:
            self._infos.pop(name, None)
            raise self._not_found("DESCRIBE_INDEX", name)
        self._infos[name] = info
        return IndexStats(dimension=info.dimension, count=await self._backend.count(name), metric=info.metric)

    async def _delete_index(self, name: str) -> None:
        self._infos.pop(name, None)
        self._ef.pop(name, None)
        await self._backend.delete(name)

    async def _update_by_id(
        self, name: str, id: str, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        pid = point_id(id)
        found = await self._backend.existing(name, [pid])
        if pid not in found:
            return
        # The new vector's norm, else the point's own: a payload replacement must not lose it.
        norm = vector_norm(vector) if vector is not None else self._stored_norm(found[pid])
        if vector is not None:
            await self._backend.set_vectors(name, [(pid, vector.tolist(), {RESERVED_NORM: norm})])
        if metadata is not None:
            await self._backend.set_payloads(name, [(pid, build_payload(id, metadata, norm))])

    async def _update_by_filter(
        self, name: str, native_filter: Any, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        flt = self._filter(native_filter)
        # (point id, original id, norm of the vector the point will hold)
        matched: list[tuple[str, str, float | None]] = []
        new_norm = vector_norm(vector) if vector is not None else None
        offset: Any = None
        while True:
            page, offset = await self._backend.scroll(name, flt, SCROLL_PAGE, offset)
            matched.extend(
                (
                    pid,
                    str(payload.get(RESERVED_ID, pid)),
                    new_norm if vector is not None else self._stored_norm(payload),
                )
                for pid, payload in page
            )
            if offset is None or not page:
                break
        for page_items in _batches(matched, SCROLL_PAGE):
            if vector is not None:
                values = vector.tolist()
                await self._backend.set_vectors(
                    name, [(pid, values, {RESERVED_NORM: new_norm}) for pid, _, _ in page_items]
                )
            if metadata is not None:
                await self._backend.set_payloads(
                    name, [(pid, build_payload(rid, metadata, norm)) for pid, rid, norm in page_items]
                )

    async def _delete_by_ids(self, name: str, ids: list[str]) -> None:
        pids = list(dict.fromkeys(point_id(i) for i in ids))
        for batch in _batches(pids, UPSERT_BATCH):
            await self._backend.delete_points(name, list(batch))

    async def _delete_by_filter(self, name: str, native_filter: Any) -> None:
        flt = self._filter(native_filter)
        assert flt is not None  # the base class refuses an empty filter
        await self._backend.delete_matching(name, flt)

    # --- extras ---------------------------------------------------------------------------------

    async def optimize(self, index_name: str) -> None:
        """Build pending HNSW and payload indexes now (edge mode; a server optimises in the background)."""
        name = self._native_name("OPTIMIZE", index_name)
        await self._info("OPTIMIZE", name)
        await self._call("OPTIMIZE", self._backend.optimize(name), name)

    async def close(self) -> None:
        """Release the client or the engine's shards."""
        await self._backend.close()
