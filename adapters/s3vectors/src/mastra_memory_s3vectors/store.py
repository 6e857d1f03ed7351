"""``S3VectorsVector``: the ``MastraVector`` contract over Amazon S3 Vectors (docs/spec.md §3).

The base class validates input and translates filters before any I/O; this class implements its hooks
with boto3's ``s3vectors`` client. boto3 is blocking: every call runs in a small thread pool of the store
(``max_workers``), with botocore's connect/read timeouts and bounded ``standard`` retries.

* **Indexes** (docs/spec.md §3.7): portable names become ``-`` separated (``memory_messages`` ->
  ``memory-messages``); ``index_prefix`` is put before them in the bucket and hidden from callers. An index
  is ``float32`` with metric ``cosine`` or ``euclidean`` (``dotproduct`` raises ``CapabilityError``) and
  records its non-filterable keys (``_mastra_meta`` plus ``non_filterable_metadata_keys``) at creation; a
  store configured with other keys refuses the index (``ConfigError``) instead of filtering wrongly.
  ``describe_index`` counts the vectors with ListVectors (O(n) requests of 1,000).
* **Records**: the record id is the vector key, verbatim. Metadata is stored as :mod:`.layout` says (a
  verbatim copy plus typed filterable keys) after the service's per-vector limits were checked — before
  any I/O, in the shared argument validation, so ``Memory`` refuses an unindexable message before it
  stores it. Vectors are sent as float32 (a component beyond float32's range is refused).
* **Writes** go in PutVectors/DeleteVectors calls of at most 500 vectors (and about 16 MiB); reads of
  vectors in GetVectors calls of 100.
* **Queries** ask for a few more than ``top_k`` (at most 100) so that ties at the cut-off are ordered by
  id; a filter folded to false is answered without a request. Scores (docs/spec.md §3.4): the service
  returns distances — cosine ``d = 1 − cos`` → ``1 − d``; euclidean (the L2 distance, verified on
  S3Mock) → ``1 / (1 + d)``. ``include_vector`` reads the vectors with GetVectors.
* **By filter**: QueryVectors cannot enumerate more than 100 matches, so ``update_vector(filter=…)`` and
  ``delete_vectors(filter=…)`` scan the index with ListVectors and decide each record with the reference
  evaluator on its verbatim metadata (exact, O(n); docs/spec.md §3.8). They are not atomic: a record
  written during the scan may be missed.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, ClassVar, Final, TypeVar, get_args

import numpy as np
import numpy.typing as npt
from mastra_memory.capabilities import AdapterCapabilities, Metric
from mastra_memory.errors import ConfigError, ValidationError
from mastra_memory.filters import matches
from mastra_memory.filters.ast import Node
from mastra_memory.filters.parse import parse
from mastra_memory.vector.base import MastraVector, Matrix, Metadata, QueryRequest, Vector
from mastra_memory.vector.records import IndexConfig, IndexStats, QueryResult
from mastra_memory.vector.ties import past_ties

from .capabilities import GET_BATCH, LIST_PAGE, MAX_TOP_K, S3VECTORS_CAPABILITIES, WRITE_BATCH
from .layout import META_KEY, budget_problem, decode, encode, list_problem
from .settings import S3VectorsSettings
from .translate import FALSE, TRUE, Native, S3VectorsFilterTranslator, render

__all__ = ["S3Filter", "S3VectorsVector"]

logger = logging.getLogger("mastra_memory_s3vectors")

T = TypeVar("T")
_NODE_TYPES: Final = get_args(Node)
#: S3 Vectors index names: 3–63 lowercase letters, digits, '-' and '.', starting and ending alphanumeric.
NATIVE_INDEX_NAME: Final = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
#: A PutVectors request may carry 20 MiB; batches are cut well below it.
_REQUEST_BYTES: Final = 16 * 1024 * 1024
_NOT_FOUND: Final = "NotFoundException"
_CONFLICT: Final = "ConflictException"


@dataclass(frozen=True, slots=True, eq=False)
class S3Filter:
    """A translated filter: the parsed ``node`` (the evaluator's input for scans) and its native tree."""

    node: Node
    native: Native

    def document(self) -> dict[str, Any] | None:
        """The QueryVectors ``filter`` (None for a filter that is always true)."""
        return None if self.native == TRUE else render(self.native)


@dataclass(frozen=True, slots=True)
class IndexInfo:
    dimension: int
    metric: Metric
    non_filterable: tuple[str, ...]


def _code(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, Mapping):
        error = response.get("Error")
        if isinstance(error, Mapping):
            return str(error.get("Code", ""))
    return ""


def _batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class S3VectorsVector(MastraVector):
    """Amazon S3 Vectors (see the module docstring); ``create_vector("s3vectors", bucket=...)``."""

    capabilities: ClassVar[AdapterCapabilities] = S3VECTORS_CAPABILITIES
    translator = S3VectorsFilterTranslator
    native_index_name_pattern: ClassVar[re.Pattern[str]] = NATIVE_INDEX_NAME

    def __init__(self, settings: S3VectorsSettings, client: Any = None) -> None:
        super().__init__()
        self.settings = settings
        self._skip = frozenset(settings.non_filterable_metadata_keys)
        self._client = client
        self._executor = ThreadPoolExecutor(settings.max_workers, thread_name_prefix="mastra-s3vectors")
        self._infos: dict[str, IndexInfo] = {}
        self._tuning_warned: set[str] = set()

    # --- the client -----------------------------------------------------------------------------

    @property
    def client(self) -> Any:
        """The boto3 ``s3vectors`` client (created on first use)."""
        if self._client is None:
            import boto3
            from botocore.config import Config

            s = self.settings
            session = boto3.session.Session(
                aws_access_key_id=s.aws_access_key_id.get_secret_value() if s.aws_access_key_id else None,
                aws_secret_access_key=(
                    s.aws_secret_access_key.get_secret_value() if s.aws_secret_access_key else None
                ),
                aws_session_token=s.aws_session_token.get_secret_value() if s.aws_session_token else None,
                region_name=s.region,
                profile_name=s.profile_name,
            )
            config = Config(
                connect_timeout=s.connect_timeout,
                read_timeout=s.read_timeout,
                retries={"max_attempts": s.max_attempts, "mode": "standard"},
                max_pool_connections=s.max_workers,
            )
            self._client = session.client("s3vectors", endpoint_url=s.endpoint_url, config=config)
        return self._client

    async def _run(self, method: str, **kwargs: Any) -> Any:
        """Call ``client.<method>(**kwargs)`` in the store's thread pool."""
        call: Callable[[], Any] = functools.partial(getattr(self.client, method), **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._executor, call)

    async def _index_call(self, method: str, name: str, **kwargs: Any) -> Any:
        """``client.<method>`` on index ``name``; a missing index (or bucket) is IndexNotFoundError."""
        try:
            return await self._run(method, **self._bucket(indexName=self._physical(name), **kwargs))
        except Exception as exc:
            if _code(exc) == _NOT_FOUND:
                self._infos.pop(name, None)
                self._forget_index(name)
                raise self._not_found("INDEX", name) from exc
            raise

    def _bucket(self, **kwargs: Any) -> dict[str, Any]:
        return {"vectorBucketName": self.settings.bucket, **kwargs}

    def _physical(self, name: str) -> str:
        return self.settings.index_prefix + name

    # --- names (docs/spec.md §3.7) --------------------------------------------------------------

    def to_native_index_name(self, name: str) -> str:
        """``memory_messages`` -> ``memory-messages`` (idempotent on native names)."""
        return name.replace("_", "-")

    def _native_name(self, operation: str, index_name: Any) -> str:
        name = super()._native_name(operation, index_name)
        physical = self._physical(name)
        if not NATIVE_INDEX_NAME.fullmatch(physical) or ".." in physical:
            raise self._error(
                ValidationError,
                operation,
                "INVALID_INDEX_NAME",
                f"invalid index name {index_name!r}: S3 Vectors index names (with index_prefix "
                f"{self.settings.index_prefix!r}) are 3–63 lowercase letters, digits, '-' and '.', starting "
                f"and ending with a letter or digit; got {physical!r}",
                index=index_name,
            )
        return name

    # --- filters --------------------------------------------------------------------------------

    def translate_filter(self, flt: Any) -> Any:
        """Validate and translate ``flt`` (before any I/O); ``None`` for match-all."""
        node = flt if isinstance(flt, _NODE_TYPES) else parse(flt)
        if node is None:
            return None
        native = S3VectorsFilterTranslator(self._skip).translate(node)
        return S3Filter(node, native)

    # --- argument checks (before any I/O) -------------------------------------------------------

    def _metadata_problem(self, metadata: dict[str, Any], record_id: str | None = None) -> str | None:
        """The service's per-vector limits (string-only lists, int64, 2 KB filterable, 40 KB, 50 keys).

        The shared validation calls this for every record of ``upsert`` and ``update_vector``, before
        any I/O; vector components beyond float32 are refused there too (docs/spec.md §3.3)."""
        return list_problem(metadata, self._skip) or budget_problem(encode(metadata, self._skip))

    # --- index information ----------------------------------------------------------------------

    def _wanted_non_filterable(self) -> tuple[str, ...]:
        return (META_KEY, *self.settings.non_filterable_metadata_keys)

    async def _read_info(self, name: str) -> IndexInfo | None:
        try:
            reply = await self._run("get_index", **self._bucket(indexName=self._physical(name)))
        except Exception as exc:
            if _code(exc) == _NOT_FOUND:
                return None
            raise
        index = reply["index"]
        config = index.get("metadataConfiguration") or {}
        metric = index.get("distanceMetric", "cosine")
        return IndexInfo(
            dimension=int(index["dimension"]),
            metric="euclidean" if metric == "euclidean" else "cosine",
            non_filterable=tuple(config.get("nonFilterableMetadataKeys") or ()),
        )

    def _check_keys(self, operation: str, name: str, info: IndexInfo) -> None:
        if set(info.non_filterable) != set(self._wanted_non_filterable()):
            raise self._error(
                ConfigError,
                operation,
                "NON_FILTERABLE_KEYS_MISMATCH",
                f"index {name!r} was created with non-filterable metadata keys "
                f"{sorted(info.non_filterable)}, "
                f"but this store is configured with {sorted(self._wanted_non_filterable())} "
                f"({META_KEY} plus non_filterable_metadata_keys); they are fixed at index creation — use the "
                "index's keys in the settings, or another index",
                index=name,
            )

    async def _info(self, operation: str, name: str) -> IndexInfo:
        info = self._infos.get(name)
        if info is None:
            info = await self._read_info(name)
            if info is None:
                raise self._not_found(operation, name)
            self._check_keys(operation, name, info)
            self._infos[name] = info
        return info

    async def _shape(self, operation: str, index: str) -> tuple[int, Metric]:
        # The base reads the shape through describe_index, which counts every vector here: GetIndex suffices.
        if index not in self._dimensions or index not in self._metrics:
            info = await self._call(operation, self._info(operation, index), index)
            self._dimensions[index] = info.dimension
            self._metrics[index] = info.metric
        return self._dimensions[index], self._metrics[index]

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
        tuning = {
            k: v for k, v in config.model_dump().items() if v is not None and k not in ("type", "metric")
        }
        if tuning and name not in self._tuning_warned:
            self._tuning_warned.add(name)
            logger.warning("s3vectors index %r: index tuning %s does not apply and is ignored", name, tuning)
        existing = await self._read_info(name)
        if existing is None:
            existing = await self._create(name, dimension, metric)
        self._keep_existing(name, existing.dimension, existing.metric, dimension, metric)
        self._check_keys("CREATE_INDEX", name, existing)
        self._infos[name] = existing

    async def _create(self, name: str, dimension: int, metric: Metric) -> IndexInfo:
        wanted = IndexInfo(dimension, metric, self._wanted_non_filterable())
        request = self._bucket(
            indexName=self._physical(name),
            dataType="float32",
            dimension=dimension,
            distanceMetric=metric,
            metadataConfiguration={"nonFilterableMetadataKeys": list(wanted.non_filterable)},
        )
        for attempt in range(2):
            try:
                await self._run("create_index", **request)
                return wanted
            except Exception as exc:
                code = _code(exc)
                if code == _CONFLICT:  # created meanwhile by someone else
                    info = await self._read_info(name)
                    if info is not None:
                        return info
                    raise
                if code == _NOT_FOUND and attempt == 0 and await self._bucket_missing():
                    if not self.settings.create_bucket:
                        raise self._error(
                            ConfigError,
                            "CREATE_INDEX",
                            "BUCKET_NOT_FOUND",
                            f"vector bucket {self.settings.bucket!r} does not exist; create it, or set "
                            "create_bucket=True",
                        ) from exc
                    await self._create_bucket()
                    continue
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _bucket_missing(self) -> bool:
        try:
            await self._run("get_vector_bucket", **self._bucket())
        except Exception as exc:
            if _code(exc) == _NOT_FOUND:
                return True
            raise
        return False

    async def _create_bucket(self) -> None:
        try:
            await self._run("create_vector_bucket", **self._bucket())
        except Exception as exc:
            if _code(exc) != _CONFLICT:
                raise

    def _records(
        self, ids: Sequence[str], vectors: npt.NDArray[np.float64], metadata: Sequence[Mapping[str, Any]]
    ) -> list[dict[str, Any]]:
        data = vectors.astype(np.float32).tolist()
        return [
            {"key": rid, "data": {"float32": data[i]}, "metadata": encode(metadata[i], self._skip)}
            for i, rid in enumerate(ids)
        ]

    async def _put(self, name: str, records: list[dict[str, Any]]) -> None:
        batch: list[dict[str, Any]] = []
        size = 0
        for record in records:
            # JSON of a float32 is at most ~16 characters; metadata at most 40 KB.
            weight = 18 * len(record["data"]["float32"]) + len(record["key"]) * 4 + 2 * 40 * 1024
            if batch and (len(batch) >= WRITE_BATCH or size + weight > _REQUEST_BYTES):
                await self._index_call("put_vectors", name, vectors=batch)
                batch, size = [], 0
            batch.append(record)
            size += weight
        if batch:
            await self._index_call("put_vectors", name, vectors=batch)

    async def _upsert(self, name: str, ids: list[str], vectors: Matrix, metadata: list[Metadata]) -> None:
        await self._info("UPSERT", name)
        await self._put(name, self._records(ids, vectors, metadata))

    def _score(self, metric: Metric, distance: float) -> float:
        if metric == "euclidean":
            return 1.0 / (1.0 + max(distance, 0.0))
        return 1.0 - distance

    async def _query(self, request: QueryRequest) -> list[QueryResult]:
        _, metric = await self._shape("QUERY", request.name)  # raises IndexNotFoundError for a missing index
        flt: S3Filter | None = request.native_filter
        if flt is not None and flt.native == FALSE:
            return []
        if request.vector is None:
            return await self._listing(request.name, flt, request.top_k, request.include_vector)
        document = flt.document() if flt is not None else None
        params: dict[str, Any] = dict(
            queryVector={"float32": request.vector.astype(np.float32).tolist()},
            returnMetadata=True,
            returnDistance=True,
        )
        if document is not None:
            params["filter"] = document
        # Ties at the cut-off are broken by id (docs/spec.md §3.1): past_ties asks for more while they tie.

        async def query(limit: int) -> list[dict[str, Any]]:
            reply = await self._index_call("query_vectors", request.name, topK=limit, **params)
            hits: list[dict[str, Any]] = reply.get("vectors", [])
            return hits

        hits = await past_ties(query, request.top_k, lambda hit: hit.get("distance"), MAX_TOP_K)
        vectors: dict[str, list[float]] = {}
        if request.include_vector and hits:
            vectors = await self._vectors(request.name, [h["key"] for h in hits])
        return [
            QueryResult(
                id=hit["key"],
                score=self._score(metric, float(hit.get("distance", 0.0))),
                metadata=decode(hit.get("metadata")),
                vector=vectors.get(hit["key"]),
            )
            for hit in hits
        ]

    async def _listing(
        self, name: str, flt: S3Filter | None, top_k: int, include_vector: bool
    ) -> list[QueryResult]:
        """The metadata-only query (docs/spec.md §3.1): the first ``top_k`` matches in id order, score 0.0.
        QueryVectors needs a vector, so ListVectors reads every record and the reference evaluator decides,
        as the emulated delete by filter does: exact, at the cost of a full listing."""
        if flt is None:
            rows = [(k, decode(stored)) for k, stored in await self._scan(name)]
        else:
            rows = await self._matching(name, flt)
        rows = sorted(rows, key=lambda row: row[0])[:top_k]
        vectors = await self._vectors(name, [k for k, _ in rows]) if include_vector and rows else {}
        return [QueryResult(id=k, score=0.0, metadata=meta, vector=vectors.get(k)) for k, meta in rows]

    async def _get(self, name: str, keys: Sequence[str]) -> list[dict[str, Any]]:
        """The stored vectors of ``keys`` (missing keys left out), read 100 keys per GetVectors call."""
        found: list[dict[str, Any]] = []
        for batch in _batches(list(keys), GET_BATCH):
            reply = await self._index_call(
                "get_vectors", name, keys=list(batch), returnData=True, returnMetadata=True
            )
            # S3Mock answers a missing key with {"key": ...} and no data.
            found.extend(v for v in reply.get("vectors", []) if v.get("data"))
        return found

    async def _vectors(self, name: str, keys: Sequence[str]) -> dict[str, list[float]]:
        return {v["key"]: [float(x) for x in v["data"]["float32"]] for v in await self._get(name, keys)}

    async def _listed(self, name: str, *, metadata: bool) -> AsyncIterator[list[dict[str, Any]]]:
        """The vectors of the index without their data, one ListVectors page (1,000) at a time."""
        token: str | None = None
        while True:
            request: dict[str, Any] = dict(maxResults=LIST_PAGE, returnData=False, returnMetadata=metadata)
            if token:
                request["nextToken"] = token
            reply = await self._index_call("list_vectors", name, **request)
            yield reply.get("vectors", [])
            token = reply.get("nextToken")
            if not token:
                return

    async def _scan(self, name: str) -> list[tuple[str, dict[str, Any]]]:
        """Every (key, stored metadata) of the index."""
        out: list[tuple[str, dict[str, Any]]] = []
        async for page in self._listed(name, metadata=True):
            out.extend((v["key"], v.get("metadata") or {}) for v in page)
        return out

    async def _matching(self, name: str, flt: S3Filter) -> list[tuple[str, dict[str, Any]]]:
        """(key, caller metadata) of every record the filter matches, decided by the reference evaluator."""
        if flt.native == FALSE:
            return []
        rows = [(k, decode(stored)) for k, stored in await self._scan(name)]
        return [(k, meta) for k, meta in rows if matches(flt.node, meta)]

    async def _list_indexes(self) -> list[str]:
        prefix = self.settings.index_prefix
        names: list[str] = []
        token: str | None = None
        while True:
            request = self._bucket(maxResults=500)
            if prefix:
                request["prefix"] = prefix
            if token:
                request["nextToken"] = token
            try:
                reply = await self._run("list_indexes", **request)
            except Exception as exc:
                if _code(exc) == _NOT_FOUND:  # no bucket: no index
                    return names
                raise
            names.extend(
                i["indexName"][len(prefix) :]
                for i in reply.get("indexes", [])
                if i["indexName"].startswith(prefix)
            )
            token = reply.get("nextToken")
            if not token:
                return names

    async def _describe_index(self, name: str) -> IndexStats:
        info = await self._read_info(name)
        if info is None:
            self._infos.pop(name, None)
            raise self._not_found("DESCRIBE_INDEX", name)
        count = 0
        async for page in self._listed(name, metadata=False):
            count += len(page)
        return IndexStats(dimension=info.dimension, count=count, metric=info.metric)

    async def _delete_index(self, name: str) -> None:
        self._infos.pop(name, None)
        try:
            await self._run("delete_index", **self._bucket(indexName=self._physical(name)))
        except Exception as exc:
            if _code(exc) != _NOT_FOUND:
                raise

    async def _update_by_id(
        self, name: str, id: str, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        await self._info("UPDATE_VECTOR", name)
        found = await self._get(name, [id])
        if not found:
            return
        old = found[0]
        data = vector.astype(np.float32).tolist() if vector is not None else list(old["data"]["float32"])
        meta = metadata if metadata is not None else decode(old.get("metadata"))
        await self._put(name, [{"key": id, "data": {"float32": data}, "metadata": encode(meta, self._skip)}])

    async def _update_by_filter(
        self, name: str, native_filter: Any, vector: Vector | None, metadata: Metadata | None
    ) -> None:
        await self._info("UPDATE_VECTOR", name)
        matched = await self._matching(name, native_filter)
        if not matched:
            return
        old: dict[str, list[float]] = {}
        if vector is None:
            old = await self._vectors(name, [k for k, _ in matched])
        new = vector.astype(np.float32).tolist() if vector is not None else None
        records = [
            {
                "key": k,
                "data": {"float32": new if new is not None else old[k]},
                "metadata": encode(metadata if metadata is not None else meta, self._skip),
            }
            for k, meta in matched
            if new is not None or k in old  # a record deleted during the scan stays deleted
        ]
        await self._put(name, records)

    async def _delete_by_ids(self, name: str, ids: list[str]) -> None:
        await self._info("DELETE_VECTORS", name)
        for batch in _batches(ids, WRITE_BATCH):
            await self._index_call("delete_vectors", name, keys=list(batch))

    async def _delete_by_filter(self, name: str, native_filter: Any) -> None:
        await self._info("DELETE_VECTORS", name)
        matched = await self._matching(name, native_filter)
        if matched:
            await self._delete_by_ids(name, [k for k, _ in matched])

    async def close(self) -> None:
        """Release the thread pool and the client's connections."""
        self._executor.shutdown(wait=False, cancel_futures=True)
        client, self._client = self._client, None
        if client is not None and hasattr(client, "close"):
            client.close()
