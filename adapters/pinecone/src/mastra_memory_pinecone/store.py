"""``PineconeVector``: the ``MastraVector`` contract over Pinecone serverless indexes (docs/spec.md §3).

Built on the official SDK's asyncio client (``pinecone.AsyncPinecone`` for the control plane, one
``AsyncIndex`` per index host), data-plane API version :data:`API_VERSION` (the SDK's pinned version).
The base class validates input and translates filters before any I/O; this class implements its hooks:

* **Records**: metadata is stored as :mod:`.layout` describes (flattened, with the reserved
  ``_mastra_shape`` list); ids Pinecone cannot take (non-ASCII, NUL), and ids of the form
  ``mastra-<uuid5>`` themselves, are stored as ``mastra-<uuid5>`` with the original in ``_mastra_id``.
  Every rule Pinecone enforces is checked before any I/O with a typed error: value types, 40 KB of
  metadata per record, int64, non-zero dense vectors.
* **Zero vectors** (euclidean and dotproduct indexes, docs/spec.md §3.3): Pinecone refuses an all-zero
  dense vector, so a record or query whose vector is zero at float32 is sent with its first component
  set to :data:`~.layout.ZERO_STANDIN` (2^-64) and read back as zeros; a zero query on a dotproduct
  index scores every record exactly 0.
* **Writes**: upserts in batches of 100 records and at most 2 MB per request; deletes and fetches in
  batches of 1,000 ids. Pinecone's ``update`` merges metadata, while docs/spec.md §3.1 replaces it, so an
  update by id re-upserts the record (its current vector read by ``fetch``); updates and deletes by filter
  first wait for this store's own writes, query the matching ids (``top_k`` 10,000), then work by id —
  an update matching 10,000 records or more raises ``CapabilityError`` before writing (docs/spec.md §3.8).
* **Freshness**: Pinecone is eventually consistent. Every write is remembered (id -> the record written,
  or deleted) until :meth:`wait_for_indexing` has seen it through ``fetch``; updates by id read the
  remembered record first, so this store reads its own writes (:mod:`.freshness`).
* **Scores** (docs/spec.md §3.4): cosine and dot product as Pinecone returns them; euclidean returns a
  squared distance ``s``, which becomes ``1 / (1 + √s)``. Ties at the ``top_k`` cut-off are ordered by id
  by asking for a few more results.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Iterator, Sequence
from hashlib import sha256
from typing import TYPE_CHECKING, Any, ClassVar, Final

import numpy as np
import numpy.typing as npt
from mastra_memory.capabilities import AdapterCapabilities, Metric
from mastra_memory.errors import CapabilityError, ValidationError, VectorStoreError
from mastra_memory.vector.base import MastraVector, Matrix, Metadata, QueryRequest, Vector
from mastra_memory.vector.records import IndexConfig, IndexStats, QueryResult
from mastra_memory.vector.ties import past_ties

from .capabilities import (
    FETCH_BATCH,
    MAX_METADATA_BYTES,
    MAX_REQUEST_BYTES,
    MAX_TOP_K,
    MAX_TOP_K_WITH_DATA,
    PINECONE_CAPABILITIES,
    UPSERT_BATCH,
)
from .freshness import PendingWrites, Written
from .layout import ZERO_STANDIN, decode, encode, metadata_problem, native_id
from .settings import PineconeSettings
from .translate import PineconeFilter, PineconeFilterTranslator, to_pinecone

if TYPE_CHECKING:
    from pinecone import AsyncIndex, AsyncPinecone

__all__ = ["API_VERSION", "NATIVE_INDEX_NAME", "PineconeVector", "native_index_name"]

logger = logging.getLogger("mastra_memory_pinecone")

#: The data-plane API version the SDK pins and this adapter was written against.
API_VERSION: Final = "2026-07"
#: Pinecone's index-name rule: lowercase alphanumerics and '-', not first or last, at most 45 characters.
NATIVE_INDEX_NAME: Final = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,43}[a-z0-9])?$")
_MAX_NAME: Final = 45
_QUERY_OPTIONS: Final = frozenset({"namespace"})
#: Characters of ids per fetch request (the ids travel in the URL).
_FETCH_URL_BUDGET: Final = 6_000


def native_index_name(name: str) -> str:
    """Pinecone's form of a portable name (docs/spec.md §3.7): ``_`` -> ``-``; a name that would be longer
    than 45 characters or end with ``-`` keeps a prefix and gains an 8-hex-digit hash of the whole name."""
    if NATIVE_INDEX_NAME.fullmatch(name):
        return name
    dashed = name.replace("_", "-")
    if len(dashed) <= _MAX_NAME and NATIVE_INDEX_NAME.fullmatch(dashed):
        return dashed
    digest = sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{dashed[: _MAX_NAME - 9].rstrip('-')}-{digest}"


def _batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _is_zero(vector: npt.NDArray[np.float64]) -> bool:
    return not bool(np.any(vector.astype(np.float32) != 0))


class PineconeVector(MastraVector):
    """Pinecone vector store (see the module docstring). Build it with ``create_vector("pinecone", ...)``."""

    capabilities: ClassVar[AdapterCapabilities] = PINECONE_CAPABILITIES
    translator = PineconeFilterTranslator
    query_options = _QUERY_OPTIONS
    create_options = frozenset({"cloud", "region", "deletion_protection", "tags"})
    native_index_name_pattern: ClassVar[re.Pattern[str]] = NATIVE_INDEX_NAME

    def __init__(self, settings: PineconeSettings) -> None:
        super().__init__()
        self.settings = settings
        self._hosts: dict[str, str] = dict(settings.index_hosts)
        self._clients: dict[int, tuple[AsyncPinecone, dict[str, AsyncIndex]]] = {}
        #: This store's writes that reads may not show yet (eventual consistency).
        self._pending = PendingWrites()
        self._warned: set[str] = set()

    @property
    def namespace(self) -> str:
        return self.settings.namespace

    def to_native_index_name(self, name: str) -> str:
        return native_index_name(name)

    def translate_filter(self, flt: Any) -> PineconeFilter | None:
        tree = super().translate_filter(flt)
        return None if tree is None else to_pinecone(tree)

    # --- clients --------------------------------------------------------------------------------

    def _control(self) -> tuple[AsyncPinecone, dict[str, AsyncIndex]]:
        """The control-plane client of the running event loop (httpx clients are bound to one loop)."""
        loop = id(asyncio.get_running_loop())
        found = self._clients.get(loop)
        if found is None:
            from pinecone import AsyncPinecone

            assert self.settings.api_key is not None
            client = AsyncPinecone(
                api_key=self.settings.api_key.get_secret_value(),
                host=self.settings.controller_host_url,
                timeout=self.settings.timeout,
                source_tag="mastra_memory",
            )
            found = (client, {})
            self._clients[loop] = found
        return found

    async def _data(self, operation: str, name: str) -> AsyncIndex:
        client, indexes = self._control()
        index = indexes.get(name)
        if index is None:
            host = self._hosts.get(name)
            if host is None:
                host = (await self._model(operation, name)).host or ""
                if not host:  # pragma: no cover - a ready index always has a host
                    raise VectorStoreError(
                        f"Pinecone reports no host for index {name!r}; retry once it is ready"
                    )
                self._hosts[name] = host
            index = await client.index(host=host)
            indexes[name] = index
        return index

    async def _model(self, operation: str, name: str) -> Any:
        from pinecone.errors import NotFoundError

        client, _ = self._control()
        try:
            model = await client.indexes.describe(name)
        except NotFoundError as exc:
            self._drop(name)
            raise self._not_found(operation, name) from exc
        if model.host:
            self._hosts[name] = model.host
        return model

    def _drop(self, name: str) -> None:
        self._hosts.pop(name, None)
        self._pending.forget(name)
        for _, indexes in self._clients.values():
            indexes.pop(name, None)

    @staticmethod
    def _shape_of(model: Any) -> tuple[int, Metric]:
        field = model.schema.fields.get("_values")
        dimension = getattr(field, "dimension", None)
        metric = str(getattr(field, "metric", "cosine")).lower()
        if not isinstance(dimension, int) or metric not in ("cosine", "euclidean", "dotproduct"):
            raise VectorStoreError(
                f"index {model.name!r} is not a dense vector index created with dimension and metric; "
                "mastra-memory reads and writes dense vector indexes only"
            )
        return dimension, metric  # type: ignore[return-value]

    # --- records --------------------------------------------------------------------------------

    def _metadata_problem(self, metadata: dict[str, Any], record_id: str | None = None) -> str | None:
        """Pinecone's metadata rules (declared deviations dotted-keys-rejected, string-list-only,
        int64-range, metadata-40kb), run by the shared validation before any I/O, so ``Memory`` refuses a
        message whose vector records break them before it stores it (docs/spec.md §3.6, §5.4)."""
        return metadata_problem(metadata, record_id, MAX_METADATA_BYTES)

    def _record(
        self,
        operation: str,
        rid: str,
        vector: npt.NDArray[np.float64],
        metadata: dict[str, Any],
        where: str,
        checked: bool = False,
    ) -> dict[str, Any]:
        """One Pinecone vector dict. ``checked``: the shared validation judged ``metadata`` with this id
        (:meth:`_metadata_problem`); otherwise it is judged here — an update learns the ids its filter
        matches only now — before any write of the call."""
        problem = None if checked else metadata_problem(metadata, rid, MAX_METADATA_BYTES)
        if problem is not None:
            raise self._error(ValidationError, operation, "INVALID_METADATA", f"{where}: {problem}")
        zero = _is_zero(vector)
        stored = encode(metadata, rid, zero)
        values = vector.astype(np.float32)
        if zero:
            values = np.zeros_like(values)
            values[0] = ZERO_STANDIN
        return {"id": native_id(rid), "values": [float(x) for x in values], "metadata": stored}

    async def _upsert_batch(self, index: AsyncIndex, name: str, batch: list[dict[str, Any]]) -> None:
        writes = self._pending.begin(
            name,
            [(r["id"], Written(np.asarray(r["values"], dtype=np.float32), r["metadata"])) for r in batch],
        )
        try:
            await index.upsert(vectors=batch, namespace=self.namespace)
        finally:
            self._pending.returned(writes)

    async def _send(self, operation: str, name: str, records: list[dict[str, Any]]) -> None:
        """Upsert in batches of at most 100 records and 2 MB."""
        index = await self._data(operation, name)
        batch: list[dict[str, Any]] = []
        size = 0
        for record in records:
            record_size = len(json.dumps(record, ensure_ascii=False).encode("utf-8")) + 1
            if batch and (len(batch) >= UPSERT_BATCH or size + record_size > MAX_REQUEST_BYTES - 4096):
                await self._upsert_batch(index, name, batch)
                batch, size = [], 0
            batch.append(record)
            size += record_size
        if batch:
            await self._upsert_batch(index, name, batch)

    async def _fetch(self, operation: str, name: str, ids: Sequence[str]) -> dict[str, tuple[Any, Any]]:
        """pinecone id -> (values, metadata) of the records Pinecone returns for ``ids``."""
        index = await self._data(operation, name)
        found: dict[str, tuple[Any, Any]] = {}
        chunk: list[str] = []
        length = 0
        for rid in [*ids, None]:
            if rid is None or len(chunk) >= FETCH_BATCH or length + len(rid) > _FETCH_URL_BUDGET:
                if chunk:
                    response = await index.fetch(ids=chunk, namespace=self.namespace)
                    for key, vec in response.vectors.items():
                        found[key] = (vec.values, vec.metadata)
                chunk, length = [], 0
            if rid is not None:
                chunk.append(rid)
                length += len(rid) + 5
        return found

    async def _current(self, operation: str, name: str, ids: Sequence[str]) -> dict[str, Written]:
        """The records as they are now: this store's own unseen writes first, Pinecone's ``fetch`` else."""
        out: dict[str, Written] = {}
        missing = []
        for rid in ids:
            pending, written = self._pending.latest(name, rid)
            if not pending:
                missing.append(rid)
            elif written is not None:
                out[rid] = written
        if missing:
            for rid, (values, metadata) in (await self._fetch(operation, name, missing)).items():
                out[rid] = Written(np.asarray(values, dtype=np.float32), dict(metadata or {}))
        return out

    async def _matching_ids(
        self, operation: str, name: str, flt: PineconeFilter, dimension: int
    ) -> list[str]:
        """The ids matching ``flt`` after this store's writes are visible (at most 10,000)."""
        await self._settle(operation, name)
        index = await self._data(operation, name)
        probe = [1.0] + [0.0] * (dimension - 1)
        response = await index.query(
            top_k=MAX_TOP_K, vector=probe, filter=flt.expression, namespace=self.namespace
        )
        return [m.id for m in response.matches]

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
        tuning = {k: v for k, v in config.model_dump(exclude={"type", "metric"}).items() if v is not None}
        if tuning and name not in self._warned:
            self._warned.add(name)
            logger.warning(
                "pinecone index %r: index_config %s ignored (Pinecone serverless tunes its own index)",
                name,
                sorted(tuning),
            )
        from pinecone.errors import ConflictError, NotFoundError

        client, _ = self._control()
        try:
            existing = await client.indexes.describe(name)
        except NotFoundError:
            existing = None
        if existing is None:
            deployment = {
                "deployment_type": "managed",
                "cloud": options.get("cloud", self.settings.cloud),
                "region": options.get("region", self.settings.region),
            }
            extra: dict[str, Any] = {}
            if "deletion_protection" in options:
                extra["deletion_protection"] = options["deletion_protection"]
            if "tags" in options:
                extra["tags"] = options["tags"]
            try:
                model = await client.indexes.create(
                    name=name,
                    dimension=dimension,
                    metric=metric,
                    deployment=deployment,
                    timeout=int(self.settings.create_timeout),
                    **extra,
                )
            except ConflictError:
                model = await self._model("CREATE_INDEX", name)
            else:
                if model.host:
                    self._hosts[name] = model.host
                self._pending.forget(name)
                return
            existing = model
        have_dimension, have_metric = self._shape_of(existing)
        if existing.host:
            self._hosts[name] = existing.host
        self._keep_existing(name, have_dimension, have_metric, dimension, metric)

    async def _upsert(self, name: str, ids: list[str], vectors: Matrix, metadata: list[Metadata]) -> None:
        records = [
            self._record("UPSERT", rid, vectors[i], metadata[i], f"metadata[{i}]", checked=True)
            for i, rid in enumerate(ids)
        ]
        await self._send("UPSERT", name, records)

    async def _query(self, request: QueryRequest) -> list[QueryResult]:
        namespace = request.options.get("namespace", self.namespace)
        if not isinstance(namespace, str):
            raise self._error(ValidationError, "QUERY", "INVALID_ARGS", "namespace must be a string")
        assert (
            request.vector is not None
        )  # metadata_only_query is not declared: the base class requires a vector
        flt: PineconeFilter | None = request.native_filter
        if flt is not None and flt.never:
            return []
        dimension, metric = await self._shape("QUERY", request.name)
        zero = _is_zero(request.vector)
        query = request.vector.astype(np.float32)
        if zero:
            query = np.zeros(dimension, dtype=np.float32)
            query[0] = ZERO_STANDIN
        # Every record scores exactly 0 for a zero query on a dotproduct index: the answer is the first top_k
        # ids, so all must be seen.
        every = zero and metric == "dotproduct"
        index = await self._data("QUERY", request.name)

        async def search(limit: int) -> Any:
            response = await index.query(
                top_k=limit,
                vector=[float(x) for x in query],
                filter=None if flt is None else flt.expression,
                include_metadata=True,
                include_values=request.include_vector,
                namespace=namespace,
            )
            return response.matches

        # Ties at the cut-off are broken by id (docs/spec.md §3.1): past_ties asks for more while they tie.
        first = MAX_TOP_K_WITH_DATA if every else None
        matches = await past_ties(
            search, request.top_k, lambda match: match.score, MAX_TOP_K_WITH_DATA, first
        )
        if every and len(matches) >= MAX_TOP_K_WITH_DATA:
            raise self._error(
                CapabilityError,
                "QUERY",
                "UNSUPPORTED",
                f"a zero query vector scores every record of the dotproduct index {request.name!r} 0, so the "
                f"answer is the first {request.top_k} ids of every match; Pinecone returns at most "
                f"{MAX_TOP_K_WITH_DATA:,} matches with metadata, and this filter matches more: narrow the "
                "filter or use a non-zero query vector",
            )
        results = []
        for match in matches:
            rid, meta, zero_record = decode(match.metadata, match.id)
            score = 0.0 if zero and metric == "dotproduct" else self._score(metric, float(match.score))
            values: list[float] | None = None
            if request.include_vector:
                values = [0.0] * dimension if zero_record else [float(x) for x in match.values]
            results.append(QueryResult(id=rid, score=score, metadata=meta, vector=values))
        return results

    @staticmethod
    def _score(metric: Metric, native: float) -> float:
        if metric == "euclidean":
            return 1.0 / (1.0 + float(np.sqrt(max(native, 0.0))))
        return native

    async def _list_indexes(self) -> list[str]:
        client, _ = self._control()
        return [model.name async for model in client.indexes.list()]

    async def _describe_index(self, name: str) -> IndexStats:
        model = await self._model("DESCRIBE_INDEX", name)
        dimension, metric = self._shape_of(model)
        index = await self._data("DESCRIBE_INDEX", name)
        stats = await index.describe_index_stats()
        summary = stats.namespaces.get(self.namespace)
        count = summary.vector_count if summary is not None else 0
        return IndexStats(dimension=dimension, count=count, metric=metric)

    async def _delete_index(self, name: str) -> None:
        from pinecone.errors import NotFoundError

        client, _indexes = self._control()
        self._drop(name)
        try:
            await client.indexes.delete(name, timeout=int(self.settings.create_timeout))
        except NotFoundError:
            return

    async def _update_by_id(
        self, name: str, id: str, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        await self._dimension("UPDATE_VECTOR", name)
        pid = native_id(id)
        current = (await self._current("UPDATE_VECTOR", name, [pid])).get(pid)
        if current is None:
            return  # a missing id is a no-op (docs/spec.md §3.1)
        record = self._replacement(id, current, vector, metadata)
        await self._send("UPDATE_VECTOR", name, [record])

    def _replacement(
        self, rid: str, current: Written, vector: Vector | None, metadata: Metadata | None
    ) -> dict[str, Any]:
        _, old_metadata, old_zero = decode(current.metadata, native_id(rid))
        if vector is None:
            values = np.zeros(len(current.values)) if old_zero else current.values.astype(np.float64)
        else:
            values = vector
        return self._record(
            "UPDATE_VECTOR", rid, values, old_metadata if metadata is None else metadata, "metadata"
        )

    async def _update_by_filter(
        self, name: str, native_filter: Any, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        flt: PineconeFilter = native_filter
        dimension = await self._dimension("UPDATE_VECTOR", name)
        if flt.never:
            return
        ids = await self._matching_ids("UPDATE_VECTOR", name, flt, dimension)
        if len(ids) >= MAX_TOP_K:
            raise self._error(
                CapabilityError,
                "UPDATE_VECTOR",
                "UNSUPPORTED",
                f"the filter matches {MAX_TOP_K:,} records or more in {name!r}; Pinecone lists at most "
                f"{MAX_TOP_K:,} matches per query, so an exact update is not possible (nothing was changed): "
                "narrow the filter and update in parts",
            )
        current = await self._current("UPDATE_VECTOR", name, ids)
        records = []
        for pid, written in current.items():
            original, _, _ = decode(written.metadata, pid)
            records.append(self._replacement(original, written, vector, metadata))
        if records:
            await self._send("UPDATE_VECTOR", name, records)

    async def _delete_ids(self, operation: str, name: str, pids: Sequence[str]) -> None:
        index = await self._data(operation, name)
        for batch in _batches(list(pids), FETCH_BATCH):
            writes = self._pending.begin(name, [(pid, None) for pid in batch])
            try:
                await index.delete(ids=list(batch), namespace=self.namespace)
            finally:
                self._pending.returned(writes)

    async def _delete_by_ids(self, name: str, ids: list[str]) -> None:
        await self._delete_ids("DELETE_VECTORS", name, list(dict.fromkeys(native_id(i) for i in ids)))

    async def _delete_by_filter(self, name: str, native_filter: Any) -> None:
        flt: PineconeFilter = native_filter
        if flt.never:
            return
        dimension = await self._dimension("DELETE_VECTORS", name)
        while True:
            ids = await self._matching_ids("DELETE_VECTORS", name, flt, dimension)
            if ids:
                await self._delete_ids("DELETE_VECTORS", name, ids)
            if len(ids) < MAX_TOP_K:
                return

    # --- freshness ------------------------------------------------------------------------------

    async def _settle(self, operation: str, name: str) -> None:
        """Wait until every write this store made to ``name`` is visible (docs/spec.md §2.9)."""

        def timed_out(pending: int) -> Exception:
            return self._error(
                VectorStoreError,
                "WAIT_FOR_INDEXING",
                "TIMEOUT",
                f"{pending} writes to {name!r} were not visible after {self.settings.wait_timeout} s; "
                "Pinecone may be slow to index: retry, or raise wait_timeout",
                index=name,
            )

        await self._pending.settle(
            name, lambda ids: self._fetch(operation, name, ids), self.settings.wait_timeout, timed_out
        )

    async def wait_for_indexing(self, index_name: str) -> None:
        """Wait until every write this store made to the index is visible to reads.

        Pinecone is eventually consistent: a write is acknowledged before queries see it. This polls
        ``fetch`` for every id written or deleted through this store since the last wait until each shows
        the state written (``wait_timeout`` seconds at most, then ``VectorStoreError``).
        """
        op = "WAIT_FOR_INDEXING"
        name = self._native_name(op, index_name)
        await self._call(op, self._settle(op, name), name)

    async def close(self) -> None:
        """Close the clients this store opened on the running event loop."""
        try:
            loop = id(asyncio.get_running_loop())
        except RuntimeError:  # pragma: no cover - close() is a coroutine
            return
        found = self._clients.pop(loop, None)
        if found is None:
            return
        client, indexes = found
        for index in indexes.values():
            await index.close()
        await client.close()
